# The crowd target (tests/e2e/check_crowd.c): thousands of named threads blocked in three
# known places, for `perch dump` and record at scale.
T_PROGS += crowd

$(TARGETS_DIR)/crowd: $(T_DIR)/crowd_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)
