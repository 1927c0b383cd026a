# The frames target (tests/e2e/check_frames.c): a UI thread drawing on a vsync timer with slow
# and frozen frames on purpose, logging its own frame timings.
T_PROGS += frames

$(TARGETS_DIR)/frames: $(T_DIR)/frames_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)
