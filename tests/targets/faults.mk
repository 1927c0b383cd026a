# Targets of the fault-injection suites (tests/faults, issue 9). Frame pointers and -O1, like
# the e2e targets: the scenarios check the target's own results, not perch's stacks.
T_PROGS += faults-churn faults-storm faults-victim faults-exec faults-fork

$(TARGETS_DIR)/faults-%: $(T_DIR)/faults_%.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)
