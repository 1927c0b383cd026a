# perch: plain GNU Makefile. `make` builds build/perch; `make check` installs what is missing,
# builds and runs every test; `make SAN=address,undefined check` does it under sanitizers.
ARCH ?= $(shell uname -m)
O ?= build
# hosts perch builds for (arch/i386 is a target backend only: 32-bit processes on x86_64)
ifeq ($(filter $(ARCH),x86_64 aarch64),)
  $(error perch does not build for $(ARCH): supported hosts are x86_64 and aarch64)
endif

CC ?= cc
CFLAGS ?= -O2 -g
PKGS := libunwind-ptrace libunwind-generic libelf capstone liblzma zlib libzstd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# capstone is dlopen()ed on first use (include/perch/symbols/disasm.h): compiled against, not linked
PKG_LIBS := $(shell pkg-config --libs $(filter-out capstone,$(PKGS)) 2>/dev/null)

P_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wno-unused-parameter -MMD -MP -Iinclude -I/usr/include/libdwarf -I/usr/include/libiberty \
	$(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS)
P_LDFLAGS := $(LDFLAGS)
P_LDLIBS := $(PKG_LIBS) -ldwarf -liberty -lreadline -lpthread -ldl -lm $(LDLIBS)

ifneq ($(SAN),)
  override O := $(O)-san
  P_CFLAGS += -fno-omit-frame-pointer -fsanitize=$(SAN) -fno-sanitize-recover=all
  P_LDFLAGS += -fsanitize=$(SAN)
endif
ifeq ($(DEVELOPER),1)
  P_CFLAGS += -Werror
endif

ifneq ($(V),1)
  Q := @
  msg = @printf '  %-8s %s\n' $(1) $(2);
endif

.DELETE_ON_ERROR:
.PHONY: all check check-unit check-e2e deps deps-build demo bench clean format golden targets

SRCS := $(wildcard src/*/*.c) $(wildcard arch/*.c arch/*/*.c)
LIB_SRCS := $(filter-out src/cli/main.c,$(SRCS))
OBJS := $(SRCS:%.c=$(O)/%.o)
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(O)/%.o)
E2E_SRCS := $(wildcard tests/e2e/*.c)
E2E_OBJS := $(E2E_SRCS:%.c=$(O)/%.o)

all: $(O)/perch

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$<)$(CC) $(P_CFLAGS) -c -o $@ $<

$(O)/perch: $(OBJS)
	$(call msg,LINK,$@)$(CC) $(P_LDFLAGS) -o $@ $^ $(P_LDLIBS)

# Unit and e2e suites: every tests/{unit,e2e}/check_*.c exports `Suite *NAME_suite(void)`;
# the list is generated so adding a suite touches no shared file.
$(O)/tests/%/suites.def: $(wildcard tests/*/check_*.c)
	@mkdir -p $(dir $@)
	$(Q)sed -n 's/^Suite \*\([a-z0-9_]*\)_suite(void)$$/SUITE(\1)/p' tests/$*/check_*.c /dev/null > $@.tmp
	$(Q)cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

$(O)/tests/unit/main.o: $(O)/tests/unit/suites.def
$(O)/tests/e2e/main.o: $(O)/tests/e2e/suites.def
$(O)/tests/unit/%.o $(O)/tests/e2e/%.o: P_CFLAGS += -I$(O)/tests/$(word 2,$(subst /, ,$*)) $(shell pkg-config --cflags check)
$(O)/tests/unit/main.o: P_CFLAGS += -I$(O)/tests/unit
$(O)/tests/e2e/main.o: P_CFLAGS += -I$(O)/tests/e2e

$(O)/tests/unit/run: $(UNIT_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)$(CC) $(P_LDFLAGS) -o $@ $^ $(P_LDLIBS) $(shell pkg-config --libs check)

$(O)/tests/e2e/run: $(E2E_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)$(CC) $(P_LDFLAGS) -o $@ $^ $(P_LDLIBS) $(shell pkg-config --libs check)

# Test targets (programs the e2e suites profile) have their own rules.
include tests/targets/targets.mk
# Further rule sets (cross builds, VM tests, benchmarks) live in mk/, one file each.
-include $(wildcard mk/*.mk)

# `make check` installs the test toolchain too; `make demo` only what building perch needs.
deps:
	$(Q)scripts/install-deps.sh all

deps-build:
	$(Q)scripts/install-deps.sh build

# mk/*.mk files add their own test steps to `make check` with CHECK_EXTRA += check-NAME.
check: deps
	$(Q)$(MAKE) --no-print-directory all targets $(O)/tests/unit/run $(O)/tests/e2e/run
	$(Q)$(MAKE) --no-print-directory check-unit check-e2e $(CHECK_EXTRA)

# Under the sanitizers each suite runs in a process of its own: LeakSanitizer checks each
# forked test as it exits, and in one runner for every suite those checks grew slower suite by
# suite (2026-11-27: 373 s for the 482 tests in one runner, 155 s suite by suite, 126 s with no
# leak check at all).
check-unit: $(O)/tests/unit/run
ifeq ($(SAN),)
	$(Q)cd $(CURDIR) && $(O)/tests/unit/run
else
	$(Q)cd $(CURDIR) && failed=; \
	for s in $$(sed -n 's/^SUITE(\(.*\))$$/\1/p' $(O)/tests/unit/suites.def); do \
		CK_RUN_SUITE=$$s $(O)/tests/unit/run || failed="$$failed $$s"; done; \
	if [ -n "$$failed" ]; then echo "unit suites failed:$$failed"; exit 1; fi; \
	echo "  UNIT     every suite passed, one process each"
endif

check-e2e: $(O)/perch $(O)/tests/e2e/run targets
	$(Q)cd $(CURDIR) && PERCH=$(CURDIR)/$(O)/perch TARGETS=$(CURDIR)/$(O)/targets \
		$(if $(SAN),PERCH_TEST_SANITIZED=1) $(O)/tests/e2e/run

demo: deps-build
	$(Q)$(MAKE) --no-print-directory demo-build
	$(Q)scripts/demo.sh $(O)

clean:
	rm -rf build build-san

-include $(OBJS:.o=.d) $(UNIT_OBJS:.o=.d) $(E2E_OBJS:.o=.d)
