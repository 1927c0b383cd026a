# The oracle suite (issue 14): perch dump against gdb (and eu-stack), frame by frame, on
# programs built here with gcc/clang, GNU ld/lld/gold, Go and Rust, and on Debian's python3,
# perl, bash, sqlite3, node and chromium. tests/real/oracle.py builds, runs and compares;
# the log and each case's dumps go to $(O)/real/. tests/real/test_compare.py (the comparison's
# own unit tests: normalisations, and that wrong stacks fail) runs first.
#   make check-real                          every case (a few minutes)
#   make check-real REAL_ONLY='gcc-lld-*,go' some cases (comma-separated globs)
#   make check-real REAL_V=1                 every thread's differences, passing ones too
#   PERCH=/path/to/perch tests/real/oracle.py --out /tmp/x    against another perch build
# The programs are built once for the normal and the sanitizer run (build/ and build-san/).
REAL_PROGRAMS ?= $(patsubst %-san,%,$(O))/real-programs
# Under SAN a few cases (one per toolchain family): the sanitizers check perch's memory use on
# real binaries; the frame-by-frame comparison itself is the normal build's.
REAL_SAN_CASES := gcc-lld-O2,clang-bfd-O2,g++-bfd-O2,go,rust-O2,python3
REAL_ONLY ?= $(if $(SAN),$(REAL_SAN_CASES))
CHECK_EXTRA += check-real
.PHONY: check-real

check-real: $(O)/perch
	$(Q)cd $(CURDIR) && python3 tests/real/test_compare.py -q
	$(Q)cd $(CURDIR) && python3 tests/real/oracle.py --perch $(O)/perch --out $(O)/real \
		--programs $(REAL_PROGRAMS) $(if $(REAL_ONLY),--only '$(REAL_ONLY)') $(if $(REAL_V),-v)
