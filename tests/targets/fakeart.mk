# fakeart (tests/targets/fakeart_*.c): a stand-in ART process for the e2e-art suite. Its
# "libart.so" goes into its own directory (the name matters: perch looks for libart.so), the
# dex file it runs is assembled with smali from fixtures/art/Interp.smali, and it parses that
# file with perch's own dex.c (to find the dex pcs its interpreter trampolines report).
FAKEART_LIBDIR := $(TARGETS_DIR)/fakeart-lib
FAKEART_SRCS := $(T_DIR)/fakeart_main.c $(T_COMMON) src/art/dex.c src/base/log.c src/base/xalloc.c
FAKEART_HDRS := $(T_DIR)/fakeart.h $(T_DIR)/fakeart_symfile.h include/perch/art/dex.h $(T_HDRS)

T_PROGS += fakeart fakeart-lib/libart.so fakeart-interp.dex fakeart-interp.vdex \
	fakeart-interp-041.dex

$(FAKEART_LIBDIR)/libart.so: $(T_DIR)/fakeart_libart.c $(T_DIR)/fakeart.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -shared -fPIC -Wl,-soname,libart.so -o $@ $<

# -O0 with frame pointers: spin<K>, jit_call and the bodies keep their frames (the JIT code
# itself has none, on purpose)
$(TARGETS_DIR)/fakeart: $(FAKEART_SRCS) $(FAKEART_HDRS) $(FAKEART_LIBDIR)/libart.so
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -Iinclude -o $@ $(FAKEART_SRCS) \
		-L$(FAKEART_LIBDIR) -l:libart.so -Wl,-rpath,'$$ORIGIN/fakeart-lib' -llzma $(T_LIBS)

$(TARGETS_DIR)/fakeart-interp.dex: fixtures/art/Interp.smali
	@mkdir -p $(dir $@)
	$(call msg,SMALI,$@)smali a -o $@ $<

# the same dex after Hello.dex, as two compact dex files sharing one data section the way a
# vdex holds them (its strings partly in Hello's part), and as the second dex of a dex 041
# container (scripts/dex-convert.py)
$(TARGETS_DIR)/fakeart-interp.vdex: $(O)/dex/Hello.dex $(TARGETS_DIR)/fakeart-interp.dex \
		scripts/dex-convert.py
	$(call msg,GEN,$@)python3 scripts/dex-convert.py vdex 65536 $(O)/dex/Hello.dex \
		$(TARGETS_DIR)/fakeart-interp.dex $@

$(TARGETS_DIR)/fakeart-interp-041.dex: $(O)/dex/Hello.dex $(TARGETS_DIR)/fakeart-interp.dex \
		scripts/dex-convert.py
	$(call msg,GEN,$@)python3 scripts/dex-convert.py container $(O)/dex/Hello.dex \
		$(TARGETS_DIR)/fakeart-interp.dex $@
