# libFuzzer harnesses (issue 9): every tests/fuzz/fuzz_NAME.c defines LLVMFuzzerTestOneInput and
# is linked with perch's library sources, all built with clang and ASan + UBSan in their own
# directory ($(O)-fuzz). Seed corpora are fixtures/fuzz/NAME/ (read only: new inputs go to
# $(O)-fuzz/corpus/NAME). Not part of `make check`:
#   make fuzz-smoke                 each harness for FUZZ_SMOKE_TIME (10) seconds, fails on a find
#   make fuzz FUZZ_TIME=300         each harness for FUZZ_TIME seconds, FUZZ_JOBS (nproc) at a time
#   make fuzz-NAME FUZZ_TIME=300    one harness
#   make fuzz FUZZ_NOBUILD=1        run the harnesses already built (no rebuild)
# A finding leaves crash-*/leak-*/timeout-* in $(O)-fuzz/findings/NAME and fails the target.
FUZZ_CC ?= clang-14
FUZZ_O := $(O)-fuzz
FUZZ_TIME ?= 300
FUZZ_SMOKE_TIME ?= 10
FUZZ_ARGS ?=
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The library objects get fuzzer coverage instrumentation only; the harness links the runtime.
# clang's warnings differ from gcc's: -Werror stays a gcc (DEVELOPER=1) thing.
FUZZ_CFLAGS := $(filter-out -Werror -O2 -O0 -O1 -O3,$(P_CFLAGS)) -O1 -g $(FUZZ_SAN) \
	-Wno-unknown-warning-option
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
FUZZ_BINS := $(addprefix $(FUZZ_O)/fuzz_,$(FUZZ_NAMES))
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_O)/%.o)

.PHONY: fuzz fuzz-all fuzz-build fuzz-smoke $(addprefix fuzz-,$(FUZZ_NAMES))

$(FUZZ_O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call msg,FUZZCC,$<)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_O)/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(call msg,FUZZCC,$<)$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer -c -o $@ $<

# An archive: a harness pulls in only the modules it uses (and what they use).
$(FUZZ_O)/libperch.a: $(FUZZ_LIB_OBJS)
	$(call msg,AR,$@)rm -f $@ && ar rcs $@ $^

$(FUZZ_O)/fuzz_%: $(FUZZ_O)/tests/fuzz/fuzz_%.o $(FUZZ_O)/libperch.a
	$(call msg,LINK,$@)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $(P_LDFLAGS) -o $@ $^ \
		$(P_LDLIBS)

# the objects are not intermediate files: keep them between runs
.SECONDARY: $(FUZZ_LIB_OBJS) $(FUZZ_NAMES:%=$(FUZZ_O)/tests/fuzz/fuzz_%.o)

fuzz-build: $(FUZZ_BINS)

# One harness for FUZZ_TIME seconds: a working corpus in $(FUZZ_O)/corpus/NAME (kept between
# runs) plus the seeds in fixtures/fuzz/NAME (crash-* files kept there are replayed too),
# ASan's leak check on, the log in $(FUZZ_O)/NAME.log.
# FUZZ_NOBUILD=1: run the binaries as they are (a long run while the tree is being edited).
$(addprefix fuzz-,$(FUZZ_NAMES)): fuzz-%: $(if $(FUZZ_NOBUILD),,$(FUZZ_O)/fuzz_%)
	@mkdir -p $(FUZZ_O)/corpus/$* $(FUZZ_O)/findings/$*
	@printf '  %-8s %s (%s s)\n' FUZZ $* $(FUZZ_TIME)
	$(Q)cd $(FUZZ_O)/findings/$* && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(CURDIR)/$(FUZZ_O)/fuzz_$* -max_total_time=$(FUZZ_TIME) -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 $(FUZZ_ARGS) $(CURDIR)/$(FUZZ_O)/corpus/$* \
		$(CURDIR)/fixtures/fuzz/$* > $(CURDIR)/$(FUZZ_O)/$*.log 2>&1 || \
		{ grep -A 40 '^==[0-9]*==\|runtime error\|invariant broken\|ERROR: libFuzzer' \
			$(CURDIR)/$(FUZZ_O)/$*.log | head -n 60; \
		  echo "fuzz: $* found a problem: input in $(FUZZ_O)/findings/$*, log $(FUZZ_O)/$*.log"; \
		  exit 1; }
	@grep -h '^stat::number_of_executed_units\|^stat::average_exec_per_sec' $(FUZZ_O)/$*.log | \
		sed 's/^stat::/    /'
	@grep -h 'DONE' $(FUZZ_O)/$*.log | sed 's/^/    /'

# Every harness, FUZZ_JOBS at a time (one per CPU: a harness is one process); all run even
# when one finds something, each one's lines printed together when it ends.
FUZZ_JOBS ?= $(shell nproc)
fuzz-all: $(if $(FUZZ_NOBUILD),,fuzz-build)
	$(Q)$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) -k -j$(FUZZ_JOBS) \
		--output-sync=target FUZZ_TIME=$(FUZZ_TIME) $(addprefix fuzz-,$(FUZZ_NAMES)) || \
		{ echo "fuzz: findings (see above)"; exit 1; }

# deps first: clang-14 and libclang-rt-14-dev come from scripts/install-deps.sh
fuzz: deps
	$(Q)$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) fuzz-all

fuzz-smoke: deps
	$(Q)$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) fuzz-all \
		FUZZ_TIME=$(FUZZ_SMOKE_TIME)

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_NAMES:%=$(FUZZ_O)/tests/fuzz/fuzz_%.d)
