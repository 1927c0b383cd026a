# APK-embedded library (e2e-apk): libapk.so, stripped the Android way, stored uncompressed and page-aligned in test.apk
# (zip -0, then zipalign -p from Debian's zipalign package), mapped out of the zip by apkload.
# test.apk.offset holds the entry's data offset, from Python's zipfile (not perch's zip.c).
T_PROGS += apkload test.apk

$(TARGETS_DIR)/apkload: $(T_DIR)/apkload_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -o $@ $(filter %.c,$^) $(T_LIBS)

# Stripped as Android strips its libraries: the static functions are named only by MiniDebugInfo.
$(TARGETS_DIR)/apk/lib/x86_64/libapk.so: $(T_DIR)/apklib.c scripts/android-strip.sh
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -fPIC -shared -nostdlib \
		-Wl,-e,apk_entry -o $@.full $<
	$(Q)scripts/android-strip.sh $@.full $@
	$(Q)! readelf -S $@ | grep -q '\.symtab' && readelf -S $@ | grep -q '\.gnu_debugdata'

$(TARGETS_DIR)/test.apk: $(TARGETS_DIR)/apk/lib/x86_64/libapk.so
	$(call msg,ZIP,$@)rm -f $@.tmp $@ && (cd $(TARGETS_DIR)/apk && printf 'perch test\n' > \
		assets.txt && zip -q -X -0 ../test.apk.tmp assets.txt lib/x86_64/libapk.so) && \
		zipalign -p -f 4 $@.tmp $@ && rm -f $@.tmp
	$(Q)python3 -c 'import sys, zipfile, struct; p = sys.argv[1]; \
		i = zipfile.ZipFile(p).getinfo("lib/x86_64/libapk.so"); \
		h = open(p, "rb").read()[i.header_offset:i.header_offset + 30]; \
		n, e = struct.unpack("<HH", h[26:30]); print(i.header_offset + 30 + n + e)' $@ > $@.offset
