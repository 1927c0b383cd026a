# 32-bit x86 (i386) test targets, built with gcc -m32 (gcc-12-multilib, libc6-dev-i386): the
# known call chain with frame pointers at -O0 and without them at -O2 (unwound by perch's own
# CFI), and the wait-reasons program. Used by tests/e2e/check_i386.c on x86_64 hosts only.
T_PROGS += $(if $(filter x86_64,$(ARCH)),chain32-fp chain32-o2 waits32)

T32_CC := $(CC) -m32
# The multiarch include directory of -m32 (i386-linux-gnu) has no asm/: the kernel's x86 uapi
# headers are bi-arch, so they serve both. gcc-multilib's /usr/include/asm link does the same,
# but that package conflicts with gcc-aarch64-linux-gnu (the arm64 tier's cross compiler).
T32_INC := $(TARGETS_DIR)/i386-include
T32_CFLAGS := $(T_CFLAGS) -idirafter $(T32_INC)
# chain_spin.c seeds its xorshift with a 64-bit constant: a 32-bit long keeps its low half
T32_CHAIN_FLAGS := -Wno-overflow
# (this file is read before targets.mk defines CHAIN_SRCS)
T32_CHAIN_SRCS := $(addprefix $(T_DIR)/,chain_main.c chain_f0.c chain_f1.c chain_f2.c chain_f3.c \
	chain_spin.c) $(T_COMMON)

$(T32_INC)/asm:
	@mkdir -p $(dir $@)
	$(Q)ln -sfn /usr/include/x86_64-linux-gnu/asm $@

$(TARGETS_DIR)/chain32-fp: $(T32_CHAIN_SRCS) $(T_HDRS) | $(T32_INC)/asm
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(T32_CC) $(T32_CFLAGS) $(T32_CHAIN_FLAGS) $(T_FP) -o $@ \
		$(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/chain32-o2: $(T32_CHAIN_SRCS) $(T_HDRS) | $(T32_INC)/asm
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(T32_CC) $(T32_CFLAGS) $(T32_CHAIN_FLAGS) -O2 -fomit-frame-pointer \
		-fasynchronous-unwind-tables -o $@ $(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/waits32: $(T_DIR)/waits_main.c $(T_COMMON) $(T_HDRS) | $(T32_INC)/asm
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(T32_CC) $(T32_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ \
		$(filter %.c,$^) $(T_LIBS)
