/* e2e for debug information and names:
 * - code no symbol names: the stripped target burns CPU in a static function of a copy without
 *   .symtab (strip --strip-all); `nm` on the unstripped link says where that function starts,
 *   and every sample in it must carry that one name, "[stripped+0x<start>]";
 * - tail-call frames: the tailcall target (fixtures/elf/tailcall/tail.c, -O2) waits in
 *   sem_wait() at the end of chains of tail calls; `perch dump` must show every frame gdb shows
 *   down to main, in gdb's order, with "(tail call)" exactly on the frames gdb's Python API
 *   calls TAILCALL_FRAME (with libc6-dbg that includes glibc's own: sem_wait ->
 *   __new_sem_wait_slow64 -> do_futex_wait ...). Names are compared after
 *   harness_func_normalize(). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "harness.h"

#define GDB_PATH "/usr/bin/gdb"

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

	want = harness_fmt("[stripped+0x%lx]", nm_addr("stripped.full", "hot_unnamed"));
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
		else if (!strncmp(leaf, "[stripped+0x", 12) &&
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

/* gdb's frames of @pid's main thread, innermost first, down to main: "F <tail> <name>". */
static const char gdb_frames_py[] =
    "import gdb\n"
    "f = gdb.newest_frame()\n"
    "while f is not None:\n"
    "    print('F %d %s' % (1 if f.type() == gdb.TAILCALL_FRAME else 0, f.name()))\n"
    "    if f.name() == 'main':\n"
    "        break\n"
    "    f = f.older()\n";

static void tail_vs_gdb(const char *variant)
{
	const char *py = harness_tmpfile("frames.py");
	struct harness_proc *t, *perch, *gdb;
	struct harness_bt pbt;
	char pn[256], gn[256], line[512];
	const char *s, *nl;
	size_t i = 0, tails = 0;
	FILE *f;
	pid_t pid;

	f = fopen(py, "w");
	H_ASSERT(f && fputs(gdb_frames_py, f) >= 0 && fclose(f) == 0, "cannot write %s", py);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("tailcall"), variant, "block"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch dump did not finish within 20 s");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch dump exited with %d",
		 harness_proc_exit_code(perch));
	harness_bt_parse_perch(&pbt, perch->out.buf);
	H_ASSERT(pbt.nr_bad == 0 && pbt.nr == 1,
		 "perch dump: %zu threads, %zu lines not understood", pbt.nr, pbt.nr_bad);
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0, "target still traced after perch dump");
	gdb = harness_spawn(
	    "gdb", HARNESS_ARGV(GDB_PATH, "-nx", "-batch", "-p", harness_fmt("%d", pid), "-x", py));
	H_ASSERT(harness_proc_wait(gdb, 60) == 0, "gdb did not finish within 60 s");
	harness_context_add("perch dump:\n%s\ngdb:\n%s", perch->out.buf, gdb->out.buf);
	for (s = gdb->out.buf; s && *s; s = nl ? nl + 1 : NULL) {
		const struct harness_bt_frame *pf;
		int tail;

		nl = strchr(s, '\n');
		snprintf(line, sizeof(line), "%.*s", (int)(nl ? (size_t)(nl - s) : strlen(s)), s);
		if (sscanf(line, "F %d %255s", &tail, gn) != 2)
			continue;
		H_ASSERT(i < pbt.threads[0].nr, "%s: perch has %zu frames, gdb more", variant,
			 pbt.threads[0].nr);
		pf = &pbt.threads[0].frames[i];
		harness_func_normalize(pf->func, pn, sizeof(pn));
		harness_func_normalize(gn, line, sizeof(line));
		H_ASSERT(!strcmp(pn, line), "%s: frame %zu is %s in perch, %s in gdb", variant, i,
			 pf->func, gn);
		H_ASSERT(pf->tailcall == tail, "%s: frame %zu (%s) is %sa tail-call frame in perch",
			 variant, i, gn, pf->tailcall ? "" : "not ");
		tails += (size_t)tail;
		i++;
		if (!strcmp(gn, "main"))
			break;
	}
	H_ASSERT(i >= 3 && !strcmp(gn, "main"), "%s: gdb's frames did not reach main", variant);
	/* this module's own tail calls show whatever libc's debug files say */
	if (!strcmp(variant, "chain"))
		H_ASSERT(tails >= 3, "chain: only %zu tail-call frames", tails);
	harness_bt_release(&pbt);
	harness_proc_kill(t, SIGKILL);
}

START_TEST(tailcall_vs_gdb)
{
	static const char *const variants[] = {"chain", "common", "ambiguous", "count"};

	H_ASSERT(access(GDB_PATH, X_OK) == 0, "%s is missing (scripts/install-deps.sh installs it)",
		 GDB_PATH);
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		harness_context_reset();
		tail_vs_gdb(variants[v]);
	}
}
END_TEST

Suite *dwarf_suite(void)
{
	Suite *s = suite_create("e2e-dwarf");
	TCase *tc = tcase_create("names");

	harness_tcase_init(tc, 30);
	tcase_add_test(tc, stripped_one_frame);
	suite_add_tcase(s, tc);

	tc = tcase_create("tailcall");
	harness_tcase_init(tc, 240);
	tcase_add_test(tc, tailcall_vs_gdb);
	suite_add_tcase(s, tc);
	return s;
}
