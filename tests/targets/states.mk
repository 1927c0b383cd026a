# The states target (tests/e2e/check_states.c, tests/e2e/check_children.c): a process whose
# main thread exits while others run, a vfork parent in uninterruptible sleep with its child
# waiting to exec, 2000 idle threads, and a forker that forks, execs and vforks on command.
T_PROGS += states

$(TARGETS_DIR)/states: $(T_DIR)/states_main.c $(T_DIR)/states_wait.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)
