# Targets of the sampling-truth suites (issues 15, 36): they measure their own truth.
T_PROGS += duty sysbias syscpu

$(TARGETS_DIR)/syscpu: $(T_DIR)/syscpu_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)

$(TARGETS_DIR)/sysbias: $(T_DIR)/sysbias_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)

$(TARGETS_DIR)/duty: $(T_DIR)/duty_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)

# An ordinary C++ program built -O2 (check_shares.c compares perch with perf on it). No debug
# information: both tools then name code from the same ELF symbols, and the comparison is about
# sampling and unwinding (.eh_frame), not about two readers of inline DWARF.
T_PROGS += cppwork

$(TARGETS_DIR)/cppwork: $(T_DIR)/cppwork_main.cpp
	@mkdir -p $(dir $@)
	$(call msg,CXX,$@)$(CXX) $(filter-out -g,$(T_CXXFLAGS)) -O2 -o $@ $<
