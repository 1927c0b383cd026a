# The diff suite's target (tests/e2e/check_diff.c): one program built twice under the same file
# name, the second build with step_b() eight times longer.
T_PROGS += diff-base/diffwork diff-slow/diffwork

$(TARGETS_DIR)/diff-base/diffwork: $(T_DIR)/diffwork_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/diff-slow/diffwork: $(T_DIR)/diffwork_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -DDIFFWORK_B_UNITS=8 -o $@ $(filter %.c,$^) \
		$(T_LIBS)
