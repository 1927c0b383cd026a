# The idlewake target (tests/e2e/check_idle.c): a thread that never runs and one that sleeps
# long at two alternating places with short bursts between, each measuring its own truth.
T_PROGS += idlewake

$(TARGETS_DIR)/idlewake: $(T_DIR)/idlewake_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)
