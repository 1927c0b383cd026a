# `make golden`: rewrite the golden files in fixtures/golden/ from the current writers (unit
# suites: then run again to check them; the e2e script suite compares after writing); review
# the diff (git status / git diff fixtures/golden) like code. A suite that fails is shown.
# The suites are found, not listed: every unit suite that calls testutil_check_golden() and every
# e2e suite that reads PERCH_UPDATE_GOLDEN. The recording suite is left out on purpose: with
# PERCH_UPDATE_GOLDEN=1 it also rewrites fixtures/recording/demo-v1.perch, the stored version-1
# file that proves old recordings still read (rewrite it only when the format version changes).
GOLDEN_UNIT := $(filter-out recording,$(shell grep -l testutil_check_golden tests/unit/check_*.c | \
	xargs sed -n 's/.*suite_create("\([^"]*\)").*/\1/p'))
GOLDEN_E2E := $(shell grep -l PERCH_UPDATE_GOLDEN tests/e2e/check_*.c | \
	xargs sed -n 's/.*suite_create("\([^"]*\)").*/\1/p')
GOLDEN_E2E_ENV = PERCH=$(CURDIR)/$(O)/perch TARGETS=$(CURDIR)/$(O)/targets

golden: $(O)/perch $(O)/tests/unit/run $(O)/tests/e2e/run targets
	$(Q)st=0; \
	for s in $(GOLDEN_UNIT); do \
		echo "  GOLDEN   $$s"; \
		PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=$$s $(O)/tests/unit/run >/dev/null 2>&1; \
		out=$$(CK_RUN_SUITE=$$s $(O)/tests/unit/run 2>&1) || { echo "$$out"; st=1; }; \
		echo "$$out" | tail -n 1; \
	done; \
	for s in $(GOLDEN_E2E); do \
		echo "  GOLDEN   $$s"; \
		out=$$(PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=$$s $(GOLDEN_E2E_ENV) \
			$(O)/tests/e2e/run 2>&1) || { echo "$$out"; st=1; }; \
		echo "$$out" | tail -n 1; \
	done; \
	git status --short -- fixtures/golden; \
	exit $$st
