# `make format` applies .clang-format (Debian 12's clang-format 14) to the C sources, headers and
# tests; `make check-format` (part of `make check`) fails, naming the files, when one is not
# formatted so. Tables that read better aligned by hand are fenced with
# `/* clang-format off */` ... `/* clang-format on */`.
FORMAT_FILES = $(SRCS) $(wildcard arch/*.h include/perch/*.h tests/*/*.c tests/*/*.h)

format:
	$(Q)clang-format -i $(FORMAT_FILES)

check-format:
	$(Q)bad=$$(for f in $(FORMAT_FILES); do \
		clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then \
		echo "not formatted as .clang-format says (run make format):"; echo "$$bad"; exit 1; \
	fi; echo "  FORMAT   $(words $(FORMAT_FILES)) files formatted"

CHECK_EXTRA += check-format
.PHONY: check-format
