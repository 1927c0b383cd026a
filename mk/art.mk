# The descriptor locator against a real Android 11 libart.so (issue 7): Debian's android-libart
# package, downloaded and unpacked under the build directory (never installed), then the unit
# case art/libart run on it. `make check-libart` (part of `make check`); needs the network once.
ART_LIBART_DIR := $(O)/android-libart
ART_LIBART := $(ART_LIBART_DIR)/usr/lib/x86_64-linux-gnu/android/libart.so

.PHONY: fetch-libart check-libart
CHECK_EXTRA += check-libart

$(ART_LIBART):
	@mkdir -p $(ART_LIBART_DIR)/dl
	$(Q)apt-cache show android-libart >/dev/null 2>&1 || \
		{ echo "fetch-libart: android-libart is not in the apt archive (apt-get update?)" >&2; \
		  exit 1; }
	$(Q)cd $(ART_LIBART_DIR)/dl && apt-get download -q android-libart >/dev/null
	$(Q)dpkg-deb -x $(ART_LIBART_DIR)/dl/android-libart_*.deb $(ART_LIBART_DIR)
	$(Q)test -f $@ || { echo "fetch-libart: no libart.so in the package" >&2; exit 1; }

fetch-libart: $(ART_LIBART)

check-libart: $(ART_LIBART) $(O)/tests/unit/run
	$(Q)cd $(CURDIR) && PERCH_LIBART=$(ART_LIBART) CK_RUN_SUITE=art CK_RUN_CASE=libart \
		$(O)/tests/unit/run
