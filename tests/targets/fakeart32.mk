# fakeart32: fakeart (tests/targets/fakeart.mk) built for i386, a 32-bit ART app: its own 32-bit
# "libart.so" with the 32-bit descriptor and entry layouts, ELF32 EM_386 symfiles, i386 JIT code
# and interpreter trampolines; it runs the same dex file as fakeart. liblzma exists for the build
# host only, so fakeart32 has its compressed symfiles made by fakeart32-xz, a host program it
# starts next to itself (fakeart_xz.c). Built on x86_64 hosts only, with gcc -m32 and the kernel
# headers' asm/ link of tests/targets/i386.mk (gcc-12-multilib, libc6-dev-i386; not the
# gcc-multilib package, which conflicts with the arm64 cross compiler).
FAKEART32_LIBDIR := $(TARGETS_DIR)/fakeart32-lib
FAKEART32_SRCS := $(T_DIR)/fakeart_main.c $(T_COMMON) src/art/dex.c src/base/log.c src/base/xalloc.c
FAKEART32_HDRS := $(T_DIR)/fakeart.h $(T_DIR)/fakeart_symfile.h include/perch/art/dex.h $(T_HDRS)
FAKEART32_INC := $(TARGETS_DIR)/i386-include
FAKEART32_CC := $(CC) -m32 $(T_CFLAGS) -idirafter $(FAKEART32_INC)
FAKEART32_FAIL := echo "fakeart32: the -m32 build failed (it needs gcc-12-multilib and \
	libc6-dev-i386: scripts/install-deps.sh)" >&2; exit 1

T_PROGS += $(if $(filter x86_64,$(ARCH)),fakeart32 fakeart32-lib/libart.so fakeart32-xz)

$(FAKEART32_LIBDIR)/libart.so: $(T_DIR)/fakeart_libart.c $(T_DIR)/fakeart.h | $(FAKEART32_INC)/asm
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(FAKEART32_CC) -O1 -shared -fPIC -Wl,-soname,libart.so -o $@ $< || \
		{ $(FAKEART32_FAIL); }

# -O0 with frame pointers, as fakeart
$(TARGETS_DIR)/fakeart32: $(FAKEART32_SRCS) $(FAKEART32_HDRS) $(FAKEART32_LIBDIR)/libart.so \
		| $(FAKEART32_INC)/asm
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(FAKEART32_CC) $(T_FP) -Iinclude -o $@ $(FAKEART32_SRCS) \
		-L$(FAKEART32_LIBDIR) -l:libart.so -Wl,-rpath,'$$ORIGIN/fakeart32-lib' \
		$(T_LIBS) || { $(FAKEART32_FAIL); }

$(TARGETS_DIR)/fakeart32-xz: $(T_DIR)/fakeart_xz.c $(T_DIR)/fakeart_symfile.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -o $@ $< -llzma
