# The real Android runtime for the e2e-realart suite (tests/e2e/check_realart.c): Debian's
# android-libart 11.0.0+r48 (libart.so.0, installed by scripts/install-deps.sh) started by
# tests/realart/launcher.c on a stub boot class path that tests/realart/gen-core.py writes from
# three files of the ART 11 sources. Those come from Debian's orig tarball, fetched once from
# the mirror apt uses, checked against its sha256 and cached in $(RA_CACHE). Built with `make
# targets` (so by `make check`); needs the network the first time only.
RA_DIR := $(TARGETS_DIR)/realart
RA_ARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
RA_ANDROID := /usr/lib/$(RA_ARCH)/android
RA_TARBALL := android-platform-art_11.0.0+r48.orig.tar.xz
RA_SHA256 := be2b422133c21f9b2686eb6d455348f22637d665515b9ad56610edb056931e5f
# the tarball and its three files are shared by the normal and the sanitizer build
RA_CACHE := $(patsubst %-san,%,$(O))/realart-src
RA_SRC := $(RA_CACHE)/art-src
RA_SRC_FILES := runtime/native runtime/intrinsics_list.h runtime/well_known_classes.cc
RA_APP := $(wildcard tests/realart/app/*.smali)
RA_JNI := $(addprefix $(RA_DIR)/lib/,libicu_jni.so libjavacore.so libopenjdk.so)
RA_OUT := $(addprefix $(RA_DIR)/,realart-launcher core.dex app.dex core.jar app.jar) $(RA_JNI)

.PHONY: realart
targets: realart
realart: $(RA_OUT)

$(RA_CACHE)/$(RA_TARBALL):
	@mkdir -p $(dir $@)
	$(call msg,FETCH,$@)python3 tests/realart/fetch-src.py $(RA_TARBALL) $(RA_SHA256) $@

$(RA_SRC)/.stamp: $(RA_CACHE)/$(RA_TARBALL)
	$(Q)rm -rf $(RA_SRC) && mkdir -p $(RA_SRC)
	$(Q)tar -xJf $< -C $(RA_SRC) --strip-components=1 \
		$(addprefix android-platform-art-11.0.0+r48/,$(RA_SRC_FILES))
	$(Q)touch $@

$(RA_DIR)/core.dex: tests/realart/gen-core.py $(RA_SRC)/.stamp
	$(Q)rm -rf $(RA_DIR)/core-smali
	$(call msg,GEN,$(RA_DIR)/core-smali)python3 $< $(RA_SRC) $(RA_DIR)/core-smali
	$(call msg,SMALI,$@)smali assemble -a 26 -o $@ $(RA_DIR)/core-smali && test -s $@

$(RA_DIR)/app.dex: $(RA_APP)
	@mkdir -p $(dir $@)
	$(call msg,SMALI,$@)smali assemble -a 26 -o $@ $^ && test -s $@

# the same dex files as jars: ART then extracts classes.dex into anonymous memory
$(RA_DIR)/%.jar: $(RA_DIR)/%.dex
	$(Q)rm -rf $@.d && mkdir -p $@.d && cp $< $@.d/classes.dex
	$(call msg,ZIP,$@)rm -f $@ && cd $@.d && zip -q -X ../$(notdir $@) classes.dex
	$(Q)rm -rf $@.d

# jni.h is Android's own (android-libnativehelper-dev). libsigchain first (signal chaining),
# then libart and the libraries it needs but does not name (it has no DT_NEEDED for them): libbase, liblog, libziparchive, libbacktrace,
# libnativebridge, libnativeloader, liblz4, zlib
$(RA_DIR)/realart-launcher: tests/realart/launcher.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -o $@ $< -I/usr/include/android/nativehelper \
		-L$(RA_ANDROID) -Wl,-rpath,$(RA_ANDROID) -Wl,--no-as-needed \
		-l:libsigchain.so.0 -l:libart.so.0 -l:libbase.so.0 -l:liblog.so.0 \
		-l:libziparchive.so.0 -l:libbacktrace.so.0 -l:libnativebridge.so.0 \
		-l:libnativeloader.so.0 -l:liblz4.so.1 -lz -lstdc++ -lpthread -ldl

$(RA_DIR)/lib/%.so: tests/realart/jni-stub.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(T_CFLAGS) -O1 -shared -fPIC -o $@ $<

# ---- the same in the arm64 VM (mk/arm64.mk, tests/arm64/e2e.sh section 9) ----
# Debian's arm64 android-libart and its libraries come from the arm64 sysroot
# (scripts/arm64-sysroot.sh); the launcher is cross-built against them, and everything it
# loads goes into the VM's /t (LD_LIBRARY_PATH=/t there). The dex files are the host's (dex is
# the same on every architecture); the expected lines come from the host's dexdump of app.dex.
ifneq ($(O),$(ARM64_O))
ifdef ARM64_TARGETS
RA_A64 := $(ARM64_TARGETS)/realart
RA_A64_LIB := $(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu
RA_A64_ANDROID := libsigchain.so.0 libart.so.0 libbase.so.0 liblog.so.0 libziparchive.so.0 \
	libbacktrace.so.0 libnativebridge.so.0 libnativeloader.so.0
RA_A64_FILES := $(addprefix $(RA_A64)/,realart-launcher libicu_jni.so libjavacore.so \
	libopenjdk.so libnativebridge.so app.dexdump) $(RA_DIR)/core.dex $(RA_DIR)/app.dex \
	$(addprefix $(RA_A64_LIB)/android/,$(RA_A64_ANDROID)) \
	$(addprefix $(RA_A64_LIB)/,liblz4.so.1 libstdc++.so.6) \
	$(addprefix $(ARM64_SYSROOT)/lib/aarch64-linux-gnu/,libz.so.1 libgcc_s.so.1) \
	$(ARM64_SYSROOT)/usr/lib/p7zip/7z.so

.PHONY: realart-arm64
realart-arm64: $(RA_A64_FILES)
check-arm64-e2e: realart-arm64
A_DATA += $(RA_A64_FILES)

$(RA_A64)/realart-launcher: tests/realart/launcher.c $(ARM64_STAMP)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(ARM64_CC) $(T_CFLAGS) -O1 -o $@ $< -I/usr/include/android/nativehelper \
		-L$(RA_A64_LIB)/android -L$(RA_A64_LIB) -Wl,-rpath-link,$(RA_A64_LIB)/android \
		-Wl,-rpath-link,$(RA_A64_LIB) -Wl,-rpath-link,$(ARM64_SYSROOT)/usr/lib/p7zip \
		-Wl,--no-as-needed $(addprefix -l:,$(RA_A64_ANDROID)) -l:liblz4.so.1 -l:libz.so.1 \
		-lpthread -ldl

$(RA_A64)/lib%.so: tests/realart/jni-stub.c $(ARM64_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(ARM64_CC) $(T_CFLAGS) -O1 -shared -fPIC -o $@ $<

# libnativeloader.so.0 needs it by this name
$(RA_A64)/libnativebridge.so: $(ARM64_STAMP)
	@mkdir -p $(dir $@)
	$(Q)cp $(RA_A64_LIB)/android/libnativebridge.so.0 $@

$(RA_A64)/app.dexdump: $(RA_DIR)/app.dex
	@mkdir -p $(dir $@)
	$(call msg,DEXDUMP,$@)dexdump -d $< > $@.tmp && mv $@.tmp $@
endif
endif
