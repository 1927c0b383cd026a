/* Unit tests for how perch tells what kind of process it attaches to (arch/arch.c), on recorded
 * inputs (fixtures/arch/README): the auxiliary vector of a 64-bit x86_64 process, of a 64-bit
 * arm64 one and of a 32-bit ARM process on an arm64 kernel, and the register-set sizes the
 * kernel answered for each. A 32-bit ARM app on arm64 must be recognised as 32-bit even when
 * /proc/PID/exe cannot be opened, and its registers never read as 64-bit ones. */
#include <check.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/arch.h"
#include "testutil.h"

static uint8_t *auxv(const char *name, size_t *len)
{
	char *path = testutil_fixture_path("arch/%s", name);
	uint8_t *b = testutil_read_file(path, len);

	free(path);
	return b;
}

START_TEST(test_auxv_class)
{
	static const struct {
		const char *file;
		int cls;
	} cases[] = {
	    {"auxv.x86_64", ELFCLASS64},
	    {"auxv.aarch64", ELFCLASS64},
	    {"auxv.arm32-on-aarch64", ELFCLASS32},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		uint8_t *b = auxv(cases[i].file, &len);

		ck_assert_msg(perch_arch_auxv_class(b, len) == cases[i].cls, "%s", cases[i].file);
		/* cut short (a vector without its AT_NULL) or shifted: no answer */
		ck_assert_int_eq(perch_arch_auxv_class(b, len / 2), 0);
		ck_assert_int_eq(perch_arch_auxv_class(b + 4, len - 4), 0);
		/* garbage after the end: no answer */
		b[len - 1] = 0x5a;
		ck_assert_int_eq(perch_arch_auxv_class(b, len), 0);
		free(b);
	}
	ck_assert_int_eq(perch_arch_auxv_class(NULL, 0), 0);
	ck_assert_int_eq(perch_arch_auxv_class((const uint8_t *)"\0\0\0\0\0\0\0\0", 8), 0);
}
END_TEST

START_TEST(test_regset_class)
{
	char *path = testutil_fixture_path("arch/regset-sizes");
	FILE *f = fopen(path, "r");
	char host[16], proc[16];
	unsigned int bytes;
	int n = 0;

	ck_assert_ptr_nonnull(f);
	while (fscanf(f, "%15s %15s %u", host, proc, &bytes) == 3) {
		unsigned int machine = !strcmp(host, "x86_64") ? EM_X86_64 : EM_AARCH64;
		int want = strstr(proc, "64") ? ELFCLASS64 : ELFCLASS32;

		ck_assert_msg(perch_arch_regset_class(machine, bytes) == want, "%s on %s: %u", proc,
			      host, bytes);
		n++;
	}
	fclose(f);
	free(path);
	ck_assert_int_eq(n, 3);
	/* i386 on x86_64: 17 x 4 bytes (not recorded: this kernel runs no 32-bit x86) */
	ck_assert_int_eq(perch_arch_regset_class(EM_X86_64, 68), ELFCLASS32);
	/* any other size, or the other host's: not a layout perch reads */
	ck_assert_int_eq(perch_arch_regset_class(EM_AARCH64, 216), 0);
	ck_assert_int_eq(perch_arch_regset_class(EM_X86_64, 272), 0);
	ck_assert_int_eq(perch_arch_regset_class(EM_AARCH64, 0), 0);
	ck_assert_int_eq(perch_arch_regset_class(EM_ARM, 72), 0);
}
END_TEST

Suite *arch_tracee_suite(void)
{
	Suite *s = suite_create("arch_tracee");
	TCase *tc = tcase_create("decide");

	tcase_add_test(tc, test_auxv_class);
	tcase_add_test(tc, test_regset_class);
	suite_add_tcase(s, tc);
	return s;
}
