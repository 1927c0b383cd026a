# `make bench-diff` (issue 34): is `perch report --diff` with three recordings a side a gate
# that holds? The diffwork target (tests/targets/diffwork_main.c) built as it is and with
# step_b() made 10% slower (about 20% of the main thread), under two file names; a pool of runs
# of each is recorded, and random draws of three a side count the false positives (the same
# build on both sides) and the detections (the slower build as NEW). Not part of `make check`.
# BENCH_DIFF_ARGS: --runs N --trials N --seconds S --hz HZ (scripts/bench/diff_bench.py).
BENCH_DIFF_ARGS ?=
# (mk/bench.mk is read after this file: its BENCH_BIN is not set yet here)
BENCH_DIFF_BIN := $(O)/bench/bin

$(BENCH_DIFF_BIN)/diff-base/app: tests/targets/diffwork_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)

$(BENCH_DIFF_BIN)/diff-slow/app-slow10: tests/targets/diffwork_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -DDIFFWORK_B_PERCENT=110 -o $@ \
		$(filter %.c,$^) $(T_LIBS)

bench-diff: deps
	$(Q)$(MAKE) --no-print-directory $(O)/perch $(BENCH_DIFF_BIN)/diff-base/app \
		$(BENCH_DIFF_BIN)/diff-slow/app-slow10
	$(Q)python3 scripts/bench/diff_bench.py --perch $(O)/perch \
		--base $(BENCH_DIFF_BIN)/diff-base/app --slow $(BENCH_DIFF_BIN)/diff-slow/app-slow10 \
		--out $(O)/bench/diff $(BENCH_DIFF_ARGS)

.PHONY: bench-diff
