# The report page (issue 20; src/out/out-html.c writes it): web/report.{html,css,js} and uPlot,
# pinned by web/package-lock.json and fetched by `npm ci` into $(O)/web only when the lock file
# changes (nothing from npm is kept in git), put together by web/embed.py into
# $(O)/gen/report-page.inc, which src/out/out-html.c includes: the page is compiled into perch, so
# nothing else is installed beside the binary.
#   make check-report-html   the page in headless Chromium (tests/report/, in `make check`)
WEB_O := $(O)/web
WEB_STAMP := $(WEB_O)/node_modules/.perch-stamp
REPORT_PAGE := $(O)/gen/report-page.inc

$(WEB_STAMP): web/package.json web/package-lock.json
	@mkdir -p $(WEB_O)
	@command -v npm >/dev/null || { echo "perch: npm is needed to fetch the report page's \
	uPlot (run scripts/install-deps.sh)" >&2; exit 1; }
	$(Q)cp web/package.json web/package-lock.json $(WEB_O)/
	$(call msg,NPM,ci $(WEB_O))cd $(WEB_O) && npm ci --no-audit --no-fund --ignore-scripts \
		--loglevel=error >/dev/null
	$(Q)touch $@

$(REPORT_PAGE): web/report.html web/report.css web/report.js web/embed.py $(WEB_STAMP)
	@mkdir -p $(dir $@)
	$(call msg,GEN,$@)python3 web/embed.py web/report.html $(WEB_O)/node_modules $@

$(O)/src/out/out-html.o: $(REPORT_PAGE)
$(O)/src/out/out-html.o: P_CFLAGS += -I$(O)/gen
ifdef FUZZ_O
$(FUZZ_O)/src/out/out-html.o: $(REPORT_PAGE)
$(FUZZ_O)/src/out/out-html.o: FUZZ_CFLAGS += -I$(O)/gen
endif

# The page as a person looks at it: a real recording of the waits target, opened in headless
# Chromium through the DevTools protocol (tests/report/cdp.py); screenshots in $(O)/report/.
CHECK_EXTRA += check-report-html
.PHONY: check-report-html
check-report-html: $(O)/perch $(TARGETS_DIR)/waits
	$(Q)python3 tests/report/check_report_html.py --perch $(O)/perch --targets $(TARGETS_DIR) \
		--out $(O)/report
