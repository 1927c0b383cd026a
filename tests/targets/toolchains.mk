# Toolchain targets (e2e-toolchains): the same program built by each linker, page size and
# unwind-table layout real binaries come with; deeprec (a 3000-frame stack); a Go program.
TC_VARIANTS := bfd gold lld lld16k lld64k lld-exec zstd zdebug mdi nocfi
T_PROGS += $(addprefix tc-,$(TC_VARIANTS)) deeprec tc-go

TC_SRCS := $(T_DIR)/toolchain_main.c $(T_COMMON)
# own frames, kept only by the CFI: the variants without frame pointers can only be walked with it
TC_NOFP := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
TC_NOEH := $(TC_NOFP) -fno-asynchronous-unwind-tables -fno-unwind-tables
tc_flags_bfd := $(TC_NOFP)
tc_flags_gold := $(TC_NOFP) -fuse-ld=gold
tc_flags_lld := $(TC_NOFP) -fuse-ld=lld
tc_flags_lld16k := $(TC_NOFP) -fuse-ld=lld -Wl,-z,max-page-size=16384
tc_flags_lld64k := $(TC_NOFP) -fuse-ld=lld -Wl,-z,max-page-size=65536
tc_flags_lld-exec := $(TC_NOFP) -fuse-ld=lld -no-pie -fno-PIE
# .debug_frame only, stored compressed by ld (zstd) or objcopy (the GNU .zdebug form)
tc_flags_zstd := $(TC_NOEH) -Wl,--compress-debug-sections=zstd
tc_flags_zdebug := $(TC_NOEH)
tc_post_zdebug = objcopy --compress-debug-sections=zlib-gnu $@
# .debug_frame only inside MiniDebugInfo (.gnu_debugdata), stripped as Android strips
tc_flags_mdi := $(TC_NOEH)
tc_post_mdi = mv $@ $@.full && scripts/android-strip.sh $@.full $@ && rm -f $@.full
# frame pointers and no CFI at all (.debug_frame removed too)
tc_flags_nocfi := -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls \
	-fno-asynchronous-unwind-tables -fno-unwind-tables
tc_post_nocfi = objcopy -R .debug_frame $@

$(TARGETS_DIR)/tc-%: $(TC_SRCS) $(T_HDRS) tests/targets/toolchains.mk scripts/android-strip.sh
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(tc_flags_$*) -o $@ $(TC_SRCS) $(T_LIBS)
	$(Q)$(if $(tc_post_$*),$(tc_post_$*))

$(TARGETS_DIR)/deeprec: $(T_DIR)/deeprec_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)

# go build's cache stays in the build tree
$(TARGETS_DIR)/tc-go: $(T_DIR)/toolchain_go.go
	@mkdir -p $(dir $@)
	$(call msg,GO,$@)cd $(T_DIR) && GOCACHE=$(abspath $(TARGETS_DIR))/go-cache GO111MODULE=off \
		GOPATH=$(abspath $(TARGETS_DIR))/go-path go build -o $(abspath $@) toolchain_go.go
