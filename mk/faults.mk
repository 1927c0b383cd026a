# Fault injection (issue 9): tests/faults/check_*.c suites, run by `make check` through
# check-faults. They need a second perch, $(O)/perch-fault, built with -DPERCH_FAULT_INJECTION
# (PERCH_CRASH_AFTER_US makes it crash on purpose, see src/cli/main.c). The suites reuse the e2e
# harness (tests/e2e/harness.c), linked, not copied.
#   make check-faults                    all fault scenarios (about a minute and a half)
#   CK_RUN_SUITE=faults-kill make check-faults
#   make check-valgrind                  unit tests under valgrind (slow; not in `make check`)
FAULTS_SRCS := $(wildcard tests/faults/*.c)
FAULTS_OBJS := $(FAULTS_SRCS:%.c=$(O)/%.o)

$(O)/tests/faults/main.o: $(O)/tests/faults/suites.def
$(O)/tests/faults/%.o: P_CFLAGS += -I$(O)/tests/faults -Itests/e2e $(shell pkg-config --cflags check)

$(O)/tests/faults/run: $(FAULTS_OBJS) $(O)/tests/e2e/harness.o $(LIB_OBJS)
	$(call msg,LINK,$@)$(CC) $(P_LDFLAGS) -o $@ $^ $(P_LDLIBS) $(shell pkg-config --libs check)

$(O)/fault/main.o: src/cli/main.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(P_CFLAGS) -DPERCH_FAULT_INJECTION -c -o $@ $<

$(O)/perch-fault: $(O)/fault/main.o $(LIB_OBJS)
	$(call msg,LINK,$@)$(CC) $(P_LDFLAGS) -o $@ $^ $(P_LDLIBS)

CHECK_EXTRA += check-faults
.PHONY: check-faults check-valgrind

check-faults: $(O)/perch $(O)/perch-fault $(O)/tests/faults/run targets
	$(Q)cd $(CURDIR) && PERCH=$(CURDIR)/$(O)/perch PERCH_FAULT=$(CURDIR)/$(O)/perch-fault \
		TARGETS=$(CURDIR)/$(O)/targets $(O)/tests/faults/run

# Every unit test in one process (CK_FORK=no) under memcheck: no leak, no invalid access.
VALGRIND ?= valgrind
check-valgrind: $(O)/tests/unit/run
	$(Q)cd $(CURDIR) && CK_FORK=no CK_DEFAULT_TIMEOUT=600 $(VALGRIND) --leak-check=full \
		--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1 -q \
		$(O)/tests/unit/run

-include $(FAULTS_OBJS:.o=.d) $(O)/fault/main.d
