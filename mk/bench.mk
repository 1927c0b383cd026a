# `make bench` (issue 3): perch against perf, eu-stack and gdb on the same targets, every figure
# measured in one run; not part of `make check`. Table on stdout and in $(O)/bench/bench.txt,
# JSON in $(O)/bench/bench.json. The targets are built with frame pointers (perf -g needs them)
# and their own flags; the user's CFLAGS and SAN= do not apply to them.
BENCH_DIR := $(O)/bench
BENCH_BIN := $(BENCH_DIR)/bin
B_DIR := tests/bench
B_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -pthread \
	-Wall -Wextra -Wshadow $(if $(filter 1,$(DEVELOPER)),-Werror)
B_PROGS := bench-chain bench-split bench-idle bench-long bench-libs bench-syscall bench-duty \
	bench-waitstart bench-syscpu
B_NLIBS := 120
B_LIBS := $(foreach i,$(shell seq -f %03g 0 $$(($(B_NLIBS) - 1))),$(BENCH_BIN)/libbench$(i).so)
BENCH_ARGS ?=

$(BENCH_BIN)/bench-%: $(B_DIR)/%_main.c $(B_DIR)/chain.c $(B_DIR)/bench.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(B_CFLAGS) -o $@ $(filter %.c,$^) -ldl

# the e2e suites' truth-measuring targets (tests/targets/duty_main.c, sysbias_main.c), the same
# programs: wall-mode states and the system-call bias
$(BENCH_BIN)/bench-duty: tests/targets/duty_main.c \
		tests/targets/target_common.c tests/targets/target_common.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(B_CFLAGS) -Itests/targets -o $@ $(filter %.c,$^)

$(BENCH_BIN)/bench-syscall: tests/targets/sysbias_main.c \
		tests/targets/target_common.c tests/targets/target_common.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(B_CFLAGS) -Itests/targets -o $@ $(filter %.c,$^)

# servers (issue 36): the e2e cpumode suite's short-system-call truth target
$(BENCH_BIN)/bench-syscpu: tests/targets/syscpu_main.c \
		tests/targets/target_common.c tests/targets/target_common.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(B_CFLAGS) -Itests/targets -o $@ $(filter %.c,$^)

# --wait (issue 19): the e2e suite's start-up target
$(BENCH_BIN)/bench-waitstart: tests/targets/waitstart_main.c \
		tests/targets/target_common.c tests/targets/target_common.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(B_CFLAGS) -Itests/targets -o $@ $(filter %.c,$^)

$(BENCH_BIN)/libbench%.so: $(B_DIR)/lib_one.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(B_CFLAGS) -shared -fPIC -DBENCH_LIB_FN=bench_lib_$* -o $@ $<

# report page (issue 20): a 10-minute, 50-thread recording written through perch's own
# recording writer (tests/bench/report_gen.c), rendered and opened in headless Chromium
$(BENCH_BIN)/report-gen: $(O)/tests/bench/report_gen.o $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(call msg,LINK,$@)$(CC) $(P_LDFLAGS) -o $@ $^ $(P_LDLIBS)

bench-build: $(O)/perch $(addprefix $(BENCH_BIN)/,$(B_PROGS)) $(B_LIBS) $(BENCH_BIN)/report-gen \
		$(TARGETS_DIR)/eintr

bench: deps
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)python3 scripts/bench/bench.py --perch $(O)/perch --bin $(BENCH_BIN) \
		--out $(BENCH_DIR) $(BENCH_ARGS)

# `make bench-long` (issue 18): perch's memory over a real 10-minute recording of bench-long (50
# threads at 1000 Hz, streamed to a .perch): peak RSS, RSS at each minute and the growth per
# minute over the last 5 minutes. Not part of `make check` or CI. BENCH_LONG_SECS=120 gives a
# shorter run for development (the growth is then over its second half). BENCH_LONG_RING=10
# records with the flight recorder instead (--ring 10, a window saved every 30 s).
BENCH_LONG_SECS ?= 600
BENCH_LONG_RING ?= 0

bench-long: deps
	$(Q)$(MAKE) --no-print-directory $(O)/perch $(BENCH_BIN)/bench-long
	$(Q)python3 scripts/bench/bench.py --perch $(O)/perch --bin $(BENCH_BIN) \
		--out $(BENCH_DIR)/long --only memory --mem-seconds $(BENCH_LONG_SECS) \
		--mem-ring $(BENCH_LONG_RING) \
		--budget $$(($(BENCH_LONG_SECS) + 60)) $(BENCH_ARGS)

.PHONY: bench-build bench-long
