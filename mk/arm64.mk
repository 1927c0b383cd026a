# Static builds and the aarch64 tier (docs/design/arm64-qemu.md): `make static` (x86_64, static),
# `make ARCH=aarch64` / `make arm64-build` (aarch64 cross build, static), `make check-arm64-unit`
# (unit suites under qemu-aarch64), `make check-arm64-e2e` (perch under a real arm64 kernel in
# qemu-system-aarch64) and `make check-arm64` (both). Nothing :arm64 is installed with apt: the
# arm64 -dev packages are unpacked into a sysroot under build/ by scripts/arm64-sysroot.sh.
HOST_ARCH := $(shell uname -m)
ARM64_DIR ?= build/arm64
ARM64_O ?= build/aarch64
STATIC_O ?= build/static
ARM64_SYSROOT := $(abspath $(ARM64_DIR))/sysroot
ARM64_STAMP := $(ARM64_DIR)/sysroot/.stamp
ARM64_CC := aarch64-linux-gnu-gcc --sysroot=$(ARM64_SYSROOT)
ARM64_CPU ?= max,pauth-impdef=on
ARM64_SMP ?= 2
ARM64_TIMEOUT ?= 300
ARM64_TARGETS := $(ARM64_O)/targets

.PHONY: static arm64-build arm64-sysroot arm64-targets check-arm64 check-arm64-unit \
	check-arm64-e2e

# Static link: pkg-config knows no static dependency chains for these, so the line is explicit
# (order matters: users before what they use). The same libraries exist as .a in Debian 12's
# -dev packages for amd64 and arm64; libunwind-generic is libunwind-<arch>.a.
PERCH_STATIC_LDFLAGS := -static -Wl,--eh-frame-hdr
PERCH_STATIC_LDLIBS := -ldwarf -lunwind-ptrace -lunwind-generic -lunwind -lelf -lcapstone \
	-liberty -lreadline -ltinfo -lzstd -llzma -lz -lm -lrt -lpthread -ldl

ifeq ($(ARCH),aarch64)
ifneq ($(HOST_ARCH),aarch64)
  PERCH_CROSS := 1
  PERCH_STATIC := 1
endif
endif

ifeq ($(PERCH_CROSS),1)
  # Everything from the sysroot: headers the Makefile takes from /usr/include move there, and
  # the host's multiarch include directory (from the host's pkg-config) goes away.
  CC := $(ARM64_CC)
  P_CFLAGS := $(patsubst -I/usr/%,-I$(ARM64_SYSROOT)/usr/%, \
	$(filter-out -I/usr/include/$(HOST_ARCH)-linux-gnu,$(P_CFLAGS)))
  ifneq ($(origin O),command line)
    # `make ARCH=aarch64`: objects go to $(ARM64_O), never into the native build directory
    .DEFAULT_GOAL := arm64-build
    ifneq ($(filter-out arm64-build check-arm64 check-arm64-unit check-arm64-e2e arm64-targets \
		arm64-sysroot clean,$(MAKECMDGOALS)),)
      $(error cross build: use `make ARCH=aarch64 O=$(ARM64_O) ...` or `make arm64-build`)
    endif
  endif
endif

ifeq ($(PERCH_STATIC),1)
  # a static perch cannot dlopen() capstone: it links it (include/perch/symbols/disasm.h); nor isa-l,
  # of which Debian ships no static library: zlib inflates (include/perch/symbols/inflate.h)
  P_CFLAGS += -DPERCH_CAPSTONE_LINKED -DPERCH_NO_ISAL
  P_LDFLAGS += $(PERCH_STATIC_LDFLAGS)
  # (glibc warns that getpwnam & co., pulled in by readline, need NSS libraries at run time:
  # harmless, perch looks up no users)
  P_LDLIBS := $(PERCH_STATIC_LDLIBS) $(LDLIBS)
endif

# ---- x86_64 (host) static build ----
static:
	$(Q)$(MAKE) --no-print-directory O=$(STATIC_O) PERCH_STATIC=1 $(STATIC_O)/perch
	$(Q)file $(STATIC_O)/perch | grep -q 'statically linked' || \
		{ file $(STATIC_O)/perch; echo "static: $(STATIC_O)/perch is not static" >&2; exit 1; }
	$(Q)$(STATIC_O)/perch --version

# ---- aarch64: sysroot, cross build ----
$(ARM64_STAMP): scripts/arm64-sysroot.sh
	$(Q)scripts/arm64-sysroot.sh $(ARM64_DIR)
	$(Q)touch $@

arm64-sysroot: $(ARM64_STAMP)

arm64-build: $(ARM64_STAMP)
	$(Q)$(MAKE) --no-print-directory ARCH=aarch64 O=$(ARM64_O) $(ARM64_O)/perch
	$(Q)file $(ARM64_O)/perch | grep -q 'ARM aarch64.*statically linked' || \
		{ file $(ARM64_O)/perch; echo "arm64-build: not a static aarch64 binary" >&2; exit 1; }
	$(Q)qemu-aarch64 $(ARM64_O)/perch --version

check-arm64-unit: $(ARM64_STAMP)
	$(Q)$(MAKE) --no-print-directory ARCH=aarch64 O=$(ARM64_O) $(ARM64_O)/tests/unit/run
	$(Q)cd $(CURDIR) && qemu-aarch64 $(ARM64_O)/tests/unit/run

# ---- aarch64 e2e targets: copies of tests/targets/ programs (+ tests/arm64/*.c), static ----
# (the own-rule copies are defined only outside the inner cross make, whose targets.mk
# writes to the same directory)
ifneq ($(O),$(ARM64_O))
A_T := tests/targets
A_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g -Wall -Wextra
A_LDFLAGS := -static -Wl,--eh-frame-hdr
A_FP := -O0 -fno-omit-frame-pointer -fno-optimize-sibling-calls
A_HDRS := $(wildcard $(A_T)/*.h)
A_CHAIN := $(addprefix $(A_T)/,chain_main.c chain_f0.c chain_f1.c chain_f2.c chain_f3.c \
	chain_spin.c target_common.c)
A_PROGS := chain-fp chain-o2 chain-pac chain-nohdr chain-dyn threads4 dump leaf-cfi leaf-nocfi \
	vdso dlopen libplugin.so fakeart libart.so fakeart-interp.dex regset

# arm64_target NAME SOURCES CFLAGS [LDFLAGS, default: static with .eh_frame_hdr]
define arm64_target
$(ARM64_TARGETS)/$(1): $(2) $(A_HDRS) $(ARM64_STAMP)
	@mkdir -p $$(dir $$@)
	$$(call msg,CC,$$@)$(ARM64_CC) $(A_CFLAGS) $(3) $(or $(4),$(A_LDFLAGS)) -o $$@ $(2) -lpthread
endef
$(eval $(call arm64_target,chain-fp,$(A_CHAIN),$(A_FP)))
$(eval $(call arm64_target,chain-o2,$(A_CHAIN),-O2 -fomit-frame-pointer))
$(eval $(call arm64_target,chain-pac,$(A_CHAIN),$(A_FP) -mbranch-protection=standard))
# static without .eh_frame_hdr (gcc does not pass --eh-frame-hdr with -static) and without frame
# pointers: only .eh_frame itself can unwind it
$(eval $(call arm64_target,chain-nohdr,$(A_CHAIN),-O2 -fomit-frame-pointer,-static))
# dynamic PIE: ld.so and libc.so.6 from the sysroot go into the initramfs
$(eval $(call arm64_target,chain-dyn,$(A_CHAIN),-O2 -fomit-frame-pointer,-pie))
# dlopen (dynamic PIE) loads libplugin.so from its own directory (/t) after perch attached; the
# same flags as tests/targets/targets.mk
$(eval $(call arm64_target,dlopen,$(A_T)/dlopen_main.c $(A_T)/target_common.c, \
	-O1 -fno-omit-frame-pointer,-pie))
$(eval $(call arm64_target,libplugin.so,$(A_T)/plugin.c,-O1 -fPIC,-shared))
$(eval $(call arm64_target,threads4,$(addprefix $(A_T)/,threads4_main.c threads4_burn.c \
	target_common.c),-O1 -fno-omit-frame-pointer))
$(eval $(call arm64_target,dump,$(addprefix $(A_T)/,dump_main.c dump_wait.c target_common.c), \
	$(A_FP)))
# leaf: main -> leaf_outer -> leaf_middle -> leaf_spin, leaf_spin has no frame record
A_LEAF := -O2 -fno-omit-frame-pointer -momit-leaf-frame-pointer -fno-optimize-sibling-calls
$(eval $(call arm64_target,leaf-cfi,tests/arm64/leaf.c $(A_T)/target_common.c,$(A_LEAF)))
$(eval $(call arm64_target,leaf-nocfi,tests/arm64/leaf.c $(A_T)/target_common.c,$(A_LEAF) \
	-fno-asynchronous-unwind-tables -fno-unwind-tables))
# vdso: most samples inside the kernel's vDSO (signed return addresses on a CPU with PAC)
$(eval $(call arm64_target,vdso,tests/arm64/vdso.c $(A_T)/target_common.c, \
	-O2 -fno-omit-frame-pointer -fno-optimize-sibling-calls))

# regset: the size of a thread's register set as the kernel answers it (e2e.sh checks 72 bytes
# for the 32-bit ARM program fixtures/arch/arm32-ready, prebuilt, copied to /t below)
$(eval $(call arm64_target,regset,tests/arm64/regset.c,-O1))

# fakeart (tests/targets/fakeart.mk): a dynamic PIE, like dlopen, with its "libart.so" next to
# it in /t (the name is what perch looks for; found through an $ORIGIN rpath) and the dex file
# it runs. liblzma (its compressed symfiles) is linked statically: the VM has only ld.so, libc
# and libm.
A_FAKEART := $(A_T)/fakeart_main.c $(A_T)/target_common.c src/art/dex.c src/base/log.c src/base/xalloc.c
$(ARM64_TARGETS)/libart.so: $(A_T)/fakeart_libart.c $(A_T)/fakeart.h $(ARM64_STAMP)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(ARM64_CC) $(A_CFLAGS) -O1 -fPIC -shared -Wl,-soname,libart.so -o $@ $<
$(ARM64_TARGETS)/fakeart: $(A_FAKEART) $(A_HDRS) include/perch/art/dex.h \
		$(ARM64_TARGETS)/libart.so
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(ARM64_CC) $(A_CFLAGS) $(A_FP) -Iinclude -pie -o $@ $(A_FAKEART) \
		-L$(ARM64_TARGETS) -l:libart.so -Wl,-rpath,'$$ORIGIN' -Wl,-Bstatic -llzma \
		-Wl,-Bdynamic -lpthread
$(ARM64_TARGETS)/fakeart-interp.dex: fixtures/art/Interp.smali
	@mkdir -p $(dir $@)
	$(call msg,SMALI,$@)smali a -o $@ $<
# data files the VM's checks read, copied to /t as they are (e2e.sh takes the expected Java
# lines from the smali source of fakeart's dex file)
A_DATA := fixtures/art/Interp.smali fixtures/arch/arm32-ready

arm64-targets: $(addprefix $(ARM64_TARGETS)/,$(A_PROGS))

# ---- aarch64 VM ----
check-arm64-e2e: arm64-build arm64-targets
	$(Q)tests/arm64/mkinitramfs.sh $(ARM64_DIR)/initramfs.cpio.gz $(ARM64_SYSROOT) \
		tests/arm64/init.sh tests/arm64/e2e.sh $(ARM64_O)/perch \
		$(addprefix $(ARM64_TARGETS)/,$(A_PROGS)) $(A_DATA)
	$(Q)CPU=$(ARM64_CPU) SMP=$(ARM64_SMP) TIMEOUT=$(ARM64_TIMEOUT) LOG=$(ARM64_DIR)/serial.log \
		tests/arm64/run-vm.sh $(ARM64_DIR)/boot/vmlinuz-* $(ARM64_DIR)/initramfs.cpio.gz
endif

# one after the other (both recurse into $(ARM64_O)), and the VM runs even when a unit test fails
check-arm64:
	$(Q)st=0; $(MAKE) --no-print-directory check-arm64-unit || st=1; \
	$(MAKE) --no-print-directory check-arm64-e2e || st=1; exit $$st
