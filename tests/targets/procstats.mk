# The procstats target (tests/e2e/check_procstats.c): CPU duty cycle, a 200 MB allocation,
# periodic blocking of the main thread, many mappings.
T_PROGS += procstats

$(TARGETS_DIR)/procstats: $(T_DIR)/procstats_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)
