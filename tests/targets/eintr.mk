# The eintr target (tests/e2e/check_eintr.c, issue 38): threads blocked in the calls a ptrace
# stop makes fail with EINTR, counting their EINTRs. Built like the e2e targets (frame
# pointers, -O0): perch must read their stacks from /proc, without a stop, whatever the code.
T_PROGS += eintr

$(TARGETS_DIR)/eintr: $(T_DIR)/eintr_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)
