/* e2e: a library replaced on disk while the target has it mapped (its maps line then says
 * " (deleted)"), the way a background dexopt replaces an app's odex/vdex or an update its APK:
 * perch names its frames from the mapped file, or not at all, never from the new file at the
 * same path. The new file is the same library with its functions renamed (objcopy
 * --redefine-sym, DWARF stripped: same layout, so a perch that read it would name the samples
 * from it): no "impostor_" name may appear.
 * As root perch reads the mapped file through /proc/PID/map_files; without capabilities (as
 * under Android's run-as: here target and perch both run with an empty bounding set, so that
 * ptrace is still allowed) it cannot, and says so once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define SETPRIV "/usr/bin/setpriv"

static void copy(const char *from, const char *to)
{
	H_ASSERT(system(harness_fmt("cp '%s' '%s'", from, to)) == 0, "cannot copy %s", from);
}

/* Does /proc/@pid/maps have a line containing @a (and @b, when not NULL)? */
static int maps_have(pid_t pid, const char *a, const char *b)
{
	FILE *fp = fopen(harness_fmt("/proc/%d/maps", (int)pid), "r");
	char line[4096];
	int found = 0;

	while (fp && !found && fgets(line, sizeof(line), fp))
		found = strstr(line, a) && (!b || strstr(line, b));
	if (fp)
		fclose(fp);
	return found;
}

static void run_replaced(int capless)
{
	const char *dir = harness_tmpfile("bin"), *out = harness_tmpfile("replaced.folded");
	const char *lib = harness_fmt("%s/libplugin.so", dir);
	const char *const nocaps[] = {SETPRIV, "--bounding-set=-all", "--inh-caps=-all", "--"};
	const char *targv[8], *pargv[20];
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long all, hot, wrong = 0;
	size_t n = 0, k = 0;
	pid_t pid;

	H_ASSERT(system(harness_fmt("mkdir -p '%s'", dir)) == 0, "mkdir %s", dir);
	copy(harness_target("dlopen"), dir);
	copy(harness_target("libplugin.so"), dir);
	for (size_t i = 0; capless && i < 4; i++)
		targv[n++] = pargv[k++] = nocaps[i];
	targv[n++] = harness_fmt("%s/dlopen", dir);
	targv[n++] = "6";
	targv[n] = NULL;
	t = harness_spawn("target", targv);
	pid = harness_proc_wait_ready(t, 5);
	harness_proc_write(t, "go\n");
	for (double end = harness_now() + 5; !maps_have(pid, lib, NULL) && harness_now() < end;)
		harness_sleep(0.02);
	/* replaced the way package managers do it: a new file renamed over the old path */
	H_ASSERT(system(harness_fmt("objcopy --strip-debug --redefine-sym plugin_hot=impostor_hot "
				    "--redefine-sym plugin_now=impostor_now '%s' '%s/new.so'",
				    harness_target("libplugin.so"), dir)) == 0,
		 "objcopy failed");
	H_ASSERT(rename(harness_fmt("%s/new.so", dir), lib) == 0, "rename");
	H_ASSERT(maps_have(pid, lib, "(deleted)"), "%s is not mapped as deleted", lib);
	pargv[k++] = harness_perch();
	pargv[k++] = "record";
	pargv[k++] = "-F";
	pargv[k++] = "200";
	pargv[k++] = "-d";
	pargv[k++] = "1.5";
	pargv[k++] = "-o";
	pargv[k++] = out;
	pargv[k++] = "-p";
	pargv[k++] = harness_fmt("%d", (int)pid);
	pargv[k] = NULL;
	perch = harness_spawn("perch", pargv);
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	all = harness_folded_count(&f, NULL, harness_pred_any, NULL);
	hot = harness_folded_count(&f, NULL, harness_pred_has, "plugin_hot");
	for (size_t i = 0; i < f.nr; i++)
		for (size_t j = 0; j < f.lines[i].nr_frames; j++) {
			const char *fr = f.lines[i].frames[j];

			if (!strncmp(fr, "impostor_", 9)) {
				wrong += f.lines[i].count;
				harness_context_add("named from the new file: %s\n", fr);
			}
		}
	if (wrong || (!capless && hot * 2 < all))
		harness_folded_context(&f, NULL, 20);
	H_ASSERT(wrong == 0, "%lu samples named from the file that replaced the mapped one", wrong);
	if (capless) {
		H_ASSERT(hot == 0, "plugin_hot named without access to the mapped file");
		H_ASSERT(strstr(perch->err.buf, "libplugin.so was replaced on disk after process"),
			 "no warning about the replaced file");
	} else {
		H_ASSERT(hot >= 100 && hot * 2 >= all,
			 "%lu of %lu samples name plugin_hot (want >= 100 and >= 50%%)", hot, all);
	}
	harness_folded_release(&f);
	harness_proc_kill(t, SIGKILL);
}

START_TEST(replaced_as_root)
{
	run_replaced(0);
}
END_TEST

START_TEST(replaced_without_caps)
{
	run_replaced(1);
}
END_TEST

Suite *replaced_suite(void)
{
	Suite *s = suite_create("e2e-replaced");
	TCase *tc = tcase_create("replaced");

	harness_tcase_init(tc, 40);
	tcase_add_test(tc, replaced_as_root);
	if (geteuid() == 0 && access(SETPRIV, X_OK) == 0)
		tcase_add_test(tc, replaced_without_caps);
	else
		fprintf(stderr,
			"framework skip: e2e-replaced (without capabilities): needs root "
			"and %s\n",
			SETPRIV);
	suite_add_tcase(s, tc);
	return s;
}
