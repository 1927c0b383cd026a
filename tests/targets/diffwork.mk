# The diff suites' targets (tests/e2e/check_diff.c, check_diffpair.c): one program built twice
# under the same file name, the second build with step_b() eight times longer; the same two
# builds under different file names (diff-named/app and diff-named/app-slow), as CI artifacts
# and versioned builds are; and a program whose library's file name carries its version
# (libdifflib.so.1.2, .1.3) with numbered pool threads.
T_PROGS += diff-base/diffwork diff-slow/diffwork diff-named/app diff-named/app-slow \
	diff-lib/difflib diff-lib/libdifflib.so.1.2 diff-lib/libdifflib.so.1.3

$(TARGETS_DIR)/diff-base/diffwork $(TARGETS_DIR)/diff-named/app: $(T_DIR)/diffwork_main.c \
		$(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/diff-slow/diffwork $(TARGETS_DIR)/diff-named/app-slow: $(T_DIR)/diffwork_main.c \
		$(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -DDIFFWORK_B_UNITS=8 -o $@ $(filter %.c,$^) \
		$(T_LIBS)

$(TARGETS_DIR)/diff-lib/difflib: $(T_DIR)/difflib_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS) -ldl

$(TARGETS_DIR)/diff-lib/libdifflib.so.%: $(T_DIR)/difflib_lib.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -shared -fPIC -Wl,-soname,libdifflib.so.1 \
		-o $@ $<
