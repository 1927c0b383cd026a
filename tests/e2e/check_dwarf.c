/* e2e: names of code no symbol names. The stripped target burns CPU in a static function of a
 * copy without .symtab (strip --strip-all); `nm` on the unstripped link says where that
 * function starts, and every sample in it must carry that one name, "stripped+0x<start>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The address of the first symbol of $TARGETS/@prog whose name starts with @prefix (nm). */
static unsigned long nm_addr(const char *prog, const char *prefix)
{
	const char *cmd = harness_fmt("nm '%s'", harness_target(prog));
	FILE *p = popen(cmd, "r");
	char line[512], type, name[400];
	unsigned long addr, found = 0;

	H_ASSERT(p != NULL, "cannot run %s", cmd);
	while (!found && fgets(line, sizeof(line), p))
		if (sscanf(line, "%lx %c %399s", &addr, &type, name) == 3 &&
		    !strncmp(name, prefix, strlen(prefix)))
			found = addr;
	pclose(p);
	H_ASSERT(found, "no %s* in %s", prefix, cmd);
	return found;
}

START_TEST(stripped_one_frame)
{
	const char *out = harness_tmpfile("stripped.folded");
	const char *want;
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long in_hot = 0, unnamed_leaves = 0, total = 0;
	char *leaves = NULL;
	size_t i;
	pid_t pid;

	want = harness_fmt("stripped+0x%lx", nm_addr("stripped.full", "hot_unnamed"));
	t = harness_spawn("target", HARNESS_ARGV(harness_target("stripped"), "4"));
	pid = harness_proc_wait_ready(t, 5);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-F", "200", "-d", "1.5",
						"-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not stop after -d 1.5");
	H_CHECK_RECORD(perch, 0, out, &f);
	for (i = 0; i < f.nr; i++) {
		const struct harness_folded_line *l = &f.lines[i];
		const char *leaf = l->frames[l->nr_frames - 1];

		if (l->tid != pid)
			continue;
		total += l->count;
		if (!strcmp(leaf, want))
			in_hot += l->count;
		else if (!strncmp(leaf, "stripped+0x", 11) &&
			 (!leaves || !strstr(leaves, harness_fmt(" %s ", leaf)))) {
			char *n = NULL;

			if (asprintf(&n, "%s %s ", leaves ? leaves : " ", leaf) < 0)
				abort();
			free(leaves);
			leaves = n;
			unnamed_leaves++;
		}
	}
	if (in_hot * 10 < total * 9 || unnamed_leaves > 2)
		harness_folded_context(&f, NULL, 40);
	H_ASSERT(total >= 100, "only %lu samples of the target", total);
	/* the rest: the loop in main, the clock read */
	H_ASSERT(in_hot * 10 >= total * 9, "%lu of %lu samples in %s, want >= 90%%", in_hot, total,
		 want);
	H_ASSERT(unnamed_leaves <= 2, "%lu other unnamed leaves:%s", unnamed_leaves,
		 leaves ? leaves : "");
	free(leaves);
	harness_folded_release(&f);
}
END_TEST

Suite *dwarf_suite(void)
{
	Suite *s = suite_create("e2e-dwarf");
	TCase *tc = tcase_create("names");

	harness_tcase_init(tc, 30);
	tcase_add_test(tc, stripped_one_frame);
	suite_add_tcase(s, tc);
	return s;
}
