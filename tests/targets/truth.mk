# Targets of the sampling-truth suites (issue 15): they measure their own truth.
T_PROGS += duty

$(TARGETS_DIR)/duty: $(T_DIR)/duty_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)
