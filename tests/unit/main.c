/* One runner for every unit suite. Pick suites or cases with Check's variables:
 *   CK_RUN_SUITE=proc_maps CK_RUN_CASE=parse build/tests/unit/run */
#include <check.h>
#include <stdlib.h>

#include "../ck_scale.h"

#define SUITE(name) Suite *name##_suite(void);
#include "suites.def"
#undef SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	/* hermetic: no symbolization results from the user's cache (symcache.h), unless a
	 * test sets its own directory */
	setenv("PERCH_CACHE_DIR", "off", 0);
	ck_scale_timeouts(); /* before the suites set their limits */

#define SUITE(name) srunner_add_suite(sr, name##_suite());
#include "suites.def"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
