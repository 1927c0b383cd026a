# Installing perch (issue 17): `make install` / `make uninstall` with PREFIX and DESTDIR, the
# man pages (docs/man/*.md, converted by go-md2man at install time: plain `make` does not need
# it), the bash completion, scripts/perch-adb; `make deb` builds a Debian package from the tree
# with dpkg-buildpackage (debian/). `make check` runs check-docs (man pages against --help,
# completion, --version) and check-install (an install into a scratch DESTDIR, run from there,
# uninstalled); check-deb (the .deb built, its dependencies resolved by apt, unpacked and run)
# and check-deb-install (the same, then installed with apt, run and purged) are CI's.
#   make install PREFIX=/usr DESTDIR=/tmp/root     stage an install
#   make install-android                           + the static device builds perch-adb pushes
#   make deb                                       $(O)/deb/perch_VERSION_ARCH.deb
#   make check-deb                                 the .deb built, unpacked and run
#   make check-deb-install                         (CI, root) + installs it with apt, runs it
#                                                  from /usr/bin, purges it again
PERCH_VERSION := 0.1

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
PERCH_LIBDIR ?= $(PREFIX)/lib/perch
INSTALL ?= install
GO_MD2MAN ?= go-md2man

MAN_SRCS := $(wildcard docs/man/*.[1-8].md)
MAN_PAGES := $(patsubst docs/man/%.md,$(O)/man/%,$(MAN_SRCS))
COMPLETION := completion/perch.bash

.PHONY: man install install-android uninstall deb check-docs check-install check-deb \
	check-deb-install

# The release is defined here once: src/cli/version.c prints it, debian/changelog must agree
# (check-docs compares them).
$(O)/src/cli/version.o: P_CFLAGS += -DPERCH_VERSION='"$(PERCH_VERSION)"'
$(O)/src/cli/version.o: mk/install.mk

# ---- man pages: Markdown (go-md2man's dialect) -> man(7), the version in the header ----
$(O)/man/%: docs/man/%.md scripts/md2man.sh mk/install.mk
	@mkdir -p $(dir $@)
	$(call msg,MAN,$@)GO_MD2MAN=$(GO_MD2MAN) scripts/md2man.sh $(PERCH_VERSION) $< $@

man: $(MAN_PAGES)

# ---- install / uninstall ----
install: $(O)/perch $(MAN_PAGES)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 755 $(O)/perch $(DESTDIR)$(BINDIR)/perch
	$(INSTALL) -m 755 scripts/perch-adb $(DESTDIR)$(BINDIR)/perch-adb
	$(INSTALL) -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/perch
	ln -sf perch $(DESTDIR)$(BASHCOMPDIR)/perch-adb

# The static builds perch-adb pushes to a device, where it looks for them when installed
# (PERCH_LIBDIR/ABI/perch): arm64-v8a from `make ARCH=aarch64`, x86_64 from `make static`.
install-android: install
	$(Q)$(MAKE) --no-print-directory arm64-build static
	$(INSTALL) -d $(DESTDIR)$(PERCH_LIBDIR)/arm64-v8a $(DESTDIR)$(PERCH_LIBDIR)/x86_64
	$(INSTALL) -m 755 $(ARM64_O)/perch $(DESTDIR)$(PERCH_LIBDIR)/arm64-v8a/perch
	$(INSTALL) -m 755 $(STATIC_O)/perch $(DESTDIR)$(PERCH_LIBDIR)/x86_64/perch

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/perch $(DESTDIR)$(BINDIR)/perch-adb
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_PAGES)))
	rm -f $(DESTDIR)$(BASHCOMPDIR)/perch $(DESTDIR)$(BASHCOMPDIR)/perch-adb
	rm -f $(DESTDIR)$(PERCH_LIBDIR)/arm64-v8a/perch $(DESTDIR)$(PERCH_LIBDIR)/x86_64/perch
	-rmdir $(DESTDIR)$(PERCH_LIBDIR)/arm64-v8a $(DESTDIR)$(PERCH_LIBDIR)/x86_64 \
		$(DESTDIR)$(PERCH_LIBDIR) 2>/dev/null

# ---- Debian package ----
# Built from a copy of the tree as it is (tracked and untracked files, not ignored ones) under
# $(O)/deb, so that dpkg-buildpackage writes its results there and never next to the checkout.
DEB_DIR := $(O)/deb
DEB_ARCH = $(shell dpkg --print-architecture)
DEB_FILE = $(DEB_DIR)/perch_$(PERCH_VERSION)_$(DEB_ARCH).deb

deb: deps
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/perch-$(PERCH_VERSION)
	$(Q)git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar -c --null -T - -f - | tar -x -C $(DEB_DIR)/perch-$(PERCH_VERSION)
	$(call msg,DEB,$(DEB_FILE))cd $(DEB_DIR)/perch-$(PERCH_VERSION) && \
		dpkg-buildpackage -b -us -uc -j2 > ../build.log 2>&1 || \
		{ tail -30 ../build.log >&2; echo "deb: dpkg-buildpackage failed, see $(DEB_DIR)/build.log" >&2; exit 1; }
	$(Q)test -f $(DEB_FILE) && echo "  $(DEB_FILE)"

# ---- tests ----
# (check-deb builds the package, about as long as a build of perch: CI runs it, with a real
# install, as check-deb-install; `make check` does not)
# (check-docs compares texts the sanitizer build prints alike: its make check leaves it out)
CHECK_EXTRA += $(if $(SAN),,check-docs) check-install

check-docs: $(O)/perch $(MAN_PAGES) targets
	$(Q)PERCH=$(CURDIR)/$(O)/perch MANDIR=$(CURDIR)/$(O)/man PERCH_VERSION=$(PERCH_VERSION) \
		TARGETS=$(CURDIR)/$(O)/targets python3 tests/docs/check_docs.py

check-install: $(O)/perch $(MAN_PAGES) targets
	$(Q)MAKE="$(MAKE)" O=$(O) TARGETS=$(CURDIR)/$(O)/targets tests/docs/check-install.sh

check-deb: targets
	$(Q)$(MAKE) --no-print-directory deb
	$(Q)TARGETS=$(CURDIR)/$(O)/targets tests/docs/check-deb.sh $(DEB_FILE)

check-deb-install: targets
	$(Q)$(MAKE) --no-print-directory deb
	$(Q)TARGETS=$(CURDIR)/$(O)/targets tests/docs/check-deb.sh --install $(DEB_FILE)
