# The waitstart target (tests/e2e/check_wait.c, `make bench`'s --wait rows): a process to be
# caught as it starts by `perch record --wait`: known startup work, an Android-style rename,
# an optional not-dumpable phase.
T_PROGS += waitstart

$(TARGETS_DIR)/waitstart: $(T_DIR)/waitstart_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)
