# `make format` applies .clang-format (Debian 12's clang-format 14) to the C sources, headers and
# tests; `make check-format` (part of `make check`) fails, naming the files, when one is not
# formatted so. Tables that read better aligned by hand are fenced with
# `/* clang-format off */` ... `/* clang-format on */`.
FORMAT_FILES = $(SRCS) $(wildcard arch/*.h include/perch/*.h include/perch/*/*.h src/*/*.h tests/*/*.c tests/*/*.h)

format:
	$(Q)clang-format -i $(FORMAT_FILES)

# (one clang-format per file, as many at a time as there are CPUs: 36 s one by one on CI's 2)
check-format:
	$(Q)bad=$$(printf '%s\n' $(FORMAT_FILES) | xargs -P "$$(nproc)" -I{} sh -c \
		'clang-format --dry-run --Werror "$$1" >/dev/null 2>&1 || echo "$$1"' sh {}); \
	if [ -n "$$bad" ]; then \
		echo "not formatted as .clang-format says (run make format):"; echo "$$bad"; exit 1; \
	fi; echo "  FORMAT   $(words $(FORMAT_FILES)) files formatted"

# the sources do not change with the build: the sanitizer run of make check leaves it out
CHECK_EXTRA += $(if $(SAN),,check-format)
.PHONY: check-format
