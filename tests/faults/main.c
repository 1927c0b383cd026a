/* One runner for the fault-injection suites (tests/faults/check_*.c). Needs PERCH,
 * PERCH_FAULT (the -DPERCH_FAULT_INJECTION build) and TARGETS, as `make check-faults` sets:
 *   CK_RUN_SUITE=faults-kill build/tests/faults/run */
#include <check.h>
#include <stdlib.h>

#define SUITE(name) Suite *name##_suite(void);
#include "suites.def"
#undef SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

#define SUITE(name) srunner_add_suite(sr, name##_suite());
#include "suites.def"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
