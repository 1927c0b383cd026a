/* e2e: `perch dump -p PID` against gdb's `thread apply all bt` on the dump target (main in
 * pthread_join, "sleeper" in dump_sleeper_wait -> nanosleep, "reader" in dump_reader_wait ->
 * read). The two run one after the other, never together.
 *
 * Comparison rule, per thread (TIDs and names must match first). Function names are normalised
 * by harness_func_normalize(): drop "@..." and "(...)", then strip "__GI_", "__libc_" and leading
 * '_' repeatedly (so gdb's "__GI___libc_read" and perch's "read" are both "read"); consecutive
 * equal names are merged (gdb prints an inlined frame and its caller under the same name). Each
 * backtrace is split into leaf frames (libc, before the target's code), the target's own frames
 * (module "dump" for perch; a file under tests/targets/ or "from .../dump" for gdb) and root
 * frames. Then: the own frames are equal (same names, same order, at least one, same source
 * file basename and line); the last leaf frame (the libc function the target called) is equal;
 * gdb's root frames are a prefix of perch's (gdb stops at main, perch goes on to _start). The
 * innermost libc frames are not compared: they depend on how each tool reads libc's inline
 * debug info. The prompt's `dump` (scripted mode, text and JSON) is held to the same rule: both
 * commands take their snapshot through src/record/dump.c. */
#include <ctype.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define GDB_PATH "/usr/bin/gdb"

struct bt_parts {
	const char *names[64];
	const struct harness_bt_frame *frames[64];
	int own[64];
	size_t nr;
	char store[64][256];
};

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int gdb_own(const struct harness_bt_frame *fr)
{
	return (fr->file && strstr(fr->file, "tests/targets/")) ||
	       (fr->module && !strcmp(fr->module, "dump"));
}

static int perch_own(const struct harness_bt_frame *fr)
{
	return fr->module && !strcmp(fr->module, "dump");
}

static void split(const struct harness_bt_thread *t, int (*own)(const struct harness_bt_frame *),
		  struct bt_parts *p)
{
	size_t i;

	p->nr = 0;
	for (i = 0; i < t->nr && p->nr < 64; i++) {
		const char *n =
		    harness_func_normalize(t->frames[i].func, p->store[p->nr], sizeof(p->store[0]));

		if (p->nr && !strcmp(p->names[p->nr - 1], n) &&
		    p->own[p->nr - 1] == own(&t->frames[i]))
			continue;
		p->names[p->nr] = n;
		p->frames[p->nr] = &t->frames[i];
		p->own[p->nr] = own(&t->frames[i]);
		p->nr++;
	}
}

static void describe(const char *who, const struct bt_parts *p)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < p->nr; i++)
		strbuf_addf(&sb, " %s%s", p->names[i], p->own[i] ? "*" : "");
	harness_context_add("  %s (normalised, * = target's own):%s", who, sb.buf);
	strbuf_release(&sb);
}

/* Index of the first own frame, or -1. */
static int first_own(const struct bt_parts *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		if (p->own[i])
			return (int)i;
	return -1;
}

static void compare_thread(const struct harness_bt_thread *pt, const struct harness_bt_thread *gt)
{
	static struct bt_parts pp, gp;
	int pf, gf;
	size_t pe, ge, i;

	split(pt, perch_own, &pp);
	split(gt, gdb_own, &gp);
	harness_context_add("thread %d \"%s\":", (int)pt->tid, pt->name);
	describe("perch", &pp);
	describe("gdb  ", &gp);
	pf = first_own(&pp);
	gf = first_own(&gp);
	H_ASSERT(pf > 0 && gf > 0,
		 "thread %d: no libc frame above the target's frames (perch "
		 "%d, gdb %d)",
		 (int)pt->tid, pf, gf);
	for (pe = (size_t)pf; pe < pp.nr && pp.own[pe]; pe++)
		;
	for (ge = (size_t)gf; ge < gp.nr && gp.own[ge]; ge++)
		;
	H_ASSERT(pe - (size_t)pf == ge - (size_t)gf && pe > (size_t)pf,
		 "thread %d: perch shows %zu frames of the target, gdb %zu", (int)pt->tid,
		 pe - (size_t)pf, ge - (size_t)gf);
	for (i = 0; i < pe - (size_t)pf; i++) {
		const struct harness_bt_frame *pfr = pp.frames[(size_t)pf + i];
		const struct harness_bt_frame *gfr = gp.frames[(size_t)gf + i];

		H_ASSERT(!strcmp(pp.names[(size_t)pf + i], gp.names[(size_t)gf + i]),
			 "thread %d: target frame %zu is %s in perch, %s in gdb", (int)pt->tid, i,
			 pp.names[(size_t)pf + i], gp.names[(size_t)gf + i]);
		/* Same source line: perch may print the path joined with DW_AT_comp_dir. */
		H_ASSERT(pfr->file && gfr->file && pfr->line == gfr->line &&
			     !strcmp(base(pfr->file), base(gfr->file)),
			 "thread %d: %s is at %s:%d says perch, %s:%d says gdb", (int)pt->tid,
			 pp.names[(size_t)pf + i], pfr->file ? pfr->file : "?", pfr->line,
			 gfr->file ? gfr->file : "?", gfr->line);
	}
	H_ASSERT(!strcmp(pp.names[pf - 1], gp.names[gf - 1]),
		 "thread %d: the target calls %s says perch, %s says gdb", (int)pt->tid,
		 pp.names[pf - 1], gp.names[gf - 1]);
	H_ASSERT(gp.nr - ge <= pp.nr - pe, "thread %d: gdb shows more root frames than perch",
		 (int)pt->tid);
	for (i = 0; i < gp.nr - ge; i++)
		H_ASSERT(!strcmp(pp.names[pe + i], gp.names[ge + i]),
			 "thread %d: root frame %zu is %s in perch, %s in gdb", (int)pt->tid, i,
			 pp.names[pe + i], gp.names[ge + i]);
}

/* gdb's `thread apply all bt` of @pid against perch's dump @pbt, thread by thread. */
static void compare_with_gdb(pid_t pid, const struct harness_bt *pbt)
{
	struct harness_proc *gdb;
	struct harness_bt gbt;

	gdb = harness_spawn("gdb",
			    HARNESS_ARGV(GDB_PATH, "-nx", "-batch", "-p", harness_fmt("%d", pid),
					 "-ex", "thread apply all bt"));
	H_ASSERT(harness_proc_wait(gdb, 30) == 0, "gdb did not finish within 30 s");
	H_ASSERT(harness_wait_traced(pid, 0, 2) == 0, "target still traced after gdb");
	harness_bt_parse_gdb(&gbt, gdb->out.buf);
	H_ASSERT(gbt.nr == 3, "gdb shows %zu threads, want 3", gbt.nr);

	for (size_t i = 0; i < pbt->nr; i++) {
		const struct harness_bt_thread *pt = &pbt->threads[i];
		const struct harness_bt_thread *gt = harness_bt_find(&gbt, pt->tid);

		H_ASSERT(gt != NULL, "gdb does not show thread %d", (int)pt->tid);
		H_ASSERT(!strcmp(pt->name, gt->name), "thread %d is \"%s\" in perch, \"%s\" in gdb",
			 (int)pt->tid, pt->name, gt->name);
		compare_thread(pt, gt);
	}
	harness_bt_release(&gbt);
}

/* Wait until every task of @pid sleeps (S): the threads are blocked where we expect. */
static void wait_all_sleeping(pid_t pid, int nr_tasks)
{
	double end = harness_now() + 3;
	char states[64];
	int n;

	for (;;) {
		n = harness_task_states(pid, states, sizeof(states));
		if (n == nr_tasks && strspn(states, "S") == (size_t)n)
			return;
		H_ASSERT(harness_now() < end, "dump target: task states \"%s\", want %d x 'S'",
			 states, nr_tasks);
		harness_sleep(0.01);
	}
}

/* The dump target, its three threads blocked where they should be (gdb checked for first). */
static pid_t start_dump_target(struct harness_proc **t)
{
	pid_t pid;

	H_ASSERT(access(GDB_PATH, X_OK) == 0, "%s is missing (scripts/install-deps.sh installs it)",
		 GDB_PATH);
	*t = harness_spawn("target", HARNESS_ARGV(harness_target("dump"), "12"));
	pid = harness_proc_wait_ready(*t, 5);
	wait_all_sleeping(pid, 3);
	return pid;
}

START_TEST(dump_vs_gdb)
{
	struct harness_proc *t, *perch;
	struct harness_bt pbt;
	char states[64];
	size_t i;
	pid_t pid;

	pid = start_dump_target(&t);

	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch dump did not finish within 10 s");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch dump exited with %d",
		 harness_proc_exit_code(perch));
	H_ASSERT(harness_wait_traced(pid, 0, 1) == 0, "target still traced after perch dump");
	H_ASSERT(harness_task_states(pid, states, sizeof(states)) == 3 && strspn(states, "S") == 3,
		 "after perch dump the task states are \"%s\"", states);

	harness_bt_parse_perch(&pbt, perch->out.buf);
	if (pbt.nr_bad)
		harness_context_add("lines of perch dump not understood:\n%s", pbt.bad.buf);
	H_ASSERT(pbt.nr_bad == 0, "%zu lines of perch dump do not follow the format", pbt.nr_bad);
	H_ASSERT(pbt.pid == pid && pbt.comm && !strcmp(pbt.comm, "dump"),
		 "perch dump header is PID %d (%s), want PID %d (dump)", (int)pbt.pid,
		 pbt.comm ? pbt.comm : "?", (int)pid);
	H_ASSERT(pbt.nr == 3, "perch dump shows %zu threads, want 3", pbt.nr);
	for (i = 0; i < pbt.nr; i++) {
		H_ASSERT(i == 0 || pbt.threads[i - 1].tid < pbt.threads[i].tid,
			 "perch dump threads are not in ascending TID order");
		H_ASSERT(pbt.threads[i].state == 'S', "thread %d state '%c', want 'S'",
			 (int)pbt.threads[i].tid, pbt.threads[i].state);
		H_ASSERT(pbt.threads[i].nr >= 3, "thread %d has only %zu frames",
			 (int)pbt.threads[i].tid, pbt.threads[i].nr);
	}
	H_ASSERT(pbt.threads[0].tid == pid && !strcmp(pbt.threads[0].name, "dump"),
		 "first thread is %d \"%s\", want the main thread %d \"dump\"",
		 (int)pbt.threads[0].tid, pbt.threads[0].name, (int)pid);

	compare_with_gdb(pid, &pbt);
	harness_bt_release(&pbt);
}
END_TEST

/* The prompt's `dump` (scripted text mode: attach, dump, detach) against gdb the same way,
 * and its JSON form: every thread with frames, the target left running, untraced. */
START_TEST(repl_dump_vs_gdb)
{
	struct harness_proc *t;
	struct harness_bt pbt;
	struct strbuf text = STRBUF_INIT;
	const char *out, *line, *nl;
	char states[64];
	pid_t pid;
	FILE *f;
	int code;

	pid = start_dump_target(&t);
	f = fopen(harness_tmpfile("dump.txt"), "w");
	H_ASSERT(f, "cannot write the script");
	fprintf(f, "attach %d\ndump\ndetach\n", (int)pid);
	fclose(f);

	out = harness_sh(
	    harness_fmt("'%s' -x '%s' --json", harness_perch(), harness_tmpfile("dump.txt")), &code,
	    30);
	H_ASSERT(code == 0, "perch -x (dump, JSON) exited %d", code);
	H_ASSERT(strstr(out, "\"cmd\":\"dump\",\"ok\":true") &&
		     strstr(out, "\"name\":\"sleeper\",\"state\":\"S\",\"frames\":[{\"func\":") &&
		     strstr(out, "\"name\":\"reader\",\"state\":\"S\",\"frames\":[{\"func\":") &&
		     strstr(out, "\"func\":\"dump_reader_wait\",\"module\":\"dump\""),
		 "the JSON dump does not show the three threads' frames");
	H_ASSERT(harness_wait_traced(pid, 0, 1) == 0,
		 "target still traced after the prompt's dump");

	/* the text form, as perch dump's lines (scripted mode indents them by two) */
	out = harness_sh(harness_fmt("'%s' -x '%s'", harness_perch(), harness_tmpfile("dump.txt")),
			 &code, 30);
	H_ASSERT(code == 0, "perch -x (dump) exited %d", code);
	strbuf_addf(&text, "PID %d (dump)\n", (int)pid);
	for (line = out; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		if (!strncmp(line, "  TID ", 6) || !strncmp(line, "  #", 3))
			strbuf_addf(&text, "%.*s\n", (int)(nl - line - 2), line + 2);
		if (!*nl)
			break;
	}
	H_ASSERT(harness_wait_traced(pid, 0, 1) == 0,
		 "target still traced after the prompt's dump");
	H_ASSERT(harness_task_states(pid, states, sizeof(states)) == 3 && strspn(states, "S") == 3,
		 "after the prompt's dump the task states are \"%s\"", states);
	harness_bt_parse_perch(&pbt, text.buf);
	H_ASSERT(pbt.nr_bad == 0 && pbt.nr == 3, "the prompt's dump: %zu threads, %zu bad lines",
		 pbt.nr, pbt.nr_bad);
	compare_with_gdb(pid, &pbt);
	harness_bt_release(&pbt);
	strbuf_release(&text);
}
END_TEST

/* The exact layout of the contract:
 *   PID 1234 (comm)
 *   TID 1234 "name" (S)
 *       [sleep clock_nanosleep]            (why a sleeping thread waits, when known)
 *   #0  0x00007f3a2b4c5d6e clock_nanosleep (libc.so.6)
 *   #1  0x000055d0c3a01234 f3 (chain) at chain_f3.c:12 [inlined]
 *   #2  0x00007f3a2b4c5e6f do_futex_wait (libc.so.6) at sem_waitcommon.c:111 (tail call)
 *       [stopped early: no CFI for libc.so] (how a stack ended short of its root, if it did)
 *   (a blank line between threads) */
START_TEST(dump_format)
{
	static const char *const patterns[] = {
	    "^PID [1-9][0-9]* \\(dump\\)$",
	    "^TID [1-9][0-9]* \"[^\"]*\" \\([A-Za-z]\\)$",
	    "^#[0-9]+  0x[0-9a-f]{16} [^ ].* \\([^()]+\\)( at [^ ]+:[0-9]+)?( \\[inlined\\])?"
	    "( \\(tail call\\))?$",
	    "^    \\[(lock|io|sleep|poll|binder|wait other:) .+\\]$",
	    "^    \\[(stopped early: .+|truncated at [0-9]+ frames)\\]$",
	};
	regex_t re[5];
	struct harness_proc *t, *perch;
	const char *s, *nl;
	int want_frame = 0, threads = 0, lineno = 0;
	size_t i;
	pid_t pid;

	for (i = 0; i < 5; i++)
		H_ASSERT(regcomp(&re[i], patterns[i], REG_EXTENDED | REG_NOSUB) == 0,
			 "bad pattern %zu", i);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("dump"), "12"));
	pid = harness_proc_wait_ready(t, 5);
	wait_all_sleeping(pid, 3);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch dump did not finish within 10 s");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch dump exited with %d",
		 harness_proc_exit_code(perch));
	for (s = perch->out.buf; (nl = strchr(s, '\n')); s = nl + 1) {
		char *line = strndup(s, (size_t)(nl - s));
		int ok;

		lineno++;
		if (lineno == 1) {
			ok = !regexec(&re[0], line, 0, NULL, 0);
		} else if (!*line) {
			ok = want_frame > 0; /* a blank line ends a thread */
			want_frame = -1;
		} else if (!strncmp(line, "TID ", 4)) {
			ok = want_frame <= 0 && !regexec(&re[1], line, 0, NULL, 0);
			want_frame = 0;
			threads++;
		} else if (!strncmp(line, "    [", 5) && want_frame == 0) {
			ok = !regexec(&re[3], line, 0, NULL, 0);
		} else if (!strncmp(line, "    [", 5)) {
			ok = want_frame > 0 && !regexec(&re[4], line, 0, NULL, 0);
		} else {
			ok = want_frame >= 0 && !regexec(&re[2], line, 0, NULL, 0) &&
			     strtol(line + 1, NULL, 10) == want_frame;
			want_frame++;
		}
		if (!ok)
			harness_context_add("offending line %d: \"%s\"", lineno, line);
		free(line);
		H_ASSERT(ok, "line %d of perch dump breaks the format (see context)", lineno);
	}
	H_ASSERT(*s == '\0', "perch dump's output does not end with a newline");
	H_ASSERT(threads == 3, "perch dump printed %d threads, want 3", threads);
	for (i = 0; i < 5; i++)
		regfree(&re[i]);
}
END_TEST

/* Text of a dump with the addresses and the state letters taken out (the same blocked threads
 * dumped twice: what is left must not change). */
static char *names_only(const char *out)
{
	char *copy = strdup(out), *d = copy;

	for (const char *p = out; *p; p++) {
		if (p[0] == '0' && p[1] == 'x') {
			p += 2;
			while (isxdigit((unsigned char)p[1]))
				p++;
			continue;
		}
		if (p[0] == '(' && p[1] && p[2] == ')' && p > out && p[-1] == ' ' &&
		    isupper((unsigned char)p[1])) {
			p += 2;
			continue;
		}
		*d++ = *p;
	}
	*d = '\0';
	return copy;
}

/* With a symbolization cache (symcache.h), the first dump fills it and the second one names
 * the same frames from it: file:line and inlined frames included. */
START_TEST(dump_cache)
{
	struct harness_proc *t, *perch[2];
	char *text[2];
	pid_t pid;

	setenv("PERCH_CACHE_DIR", harness_tmpfile("cache"), 1);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("dump"), "12"));
	pid = harness_proc_wait_ready(t, 5);
	wait_all_sleeping(pid, 3);
	for (int i = 0; i < 2; i++) {
		perch[i] = harness_spawn(
		    "perch", HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", pid)));
		H_ASSERT(harness_proc_wait(perch[i], 10) == 0, "perch dump did not finish");
		H_ASSERT(harness_proc_exit_code(perch[i]) == 0, "perch dump exited with %d",
			 harness_proc_exit_code(perch[i]));
		text[i] = names_only(perch[i]->out.buf);
	}
	H_ASSERT(access(harness_fmt("%s/symbols-v2", harness_tmpfile("cache")), F_OK) == 0,
		 "no cache directory after a dump");
	H_ASSERT(strstr(text[0], " at ") != NULL, "the first dump has no file:line");
	if (strcmp(text[0], text[1]))
		harness_context_add("first:\n%s\nsecond (cached):\n%s", text[0], text[1]);
	H_ASSERT(!strcmp(text[0], text[1]), "the cached dump names frames differently");
	free(text[0]);
	free(text[1]);
}
END_TEST

Suite *dump_suite(void)
{
	Suite *s = suite_create("e2e-dump");
	TCase *tc = tcase_create("dump");

	harness_tcase_init(tc, 45);
	tcase_add_test(tc, dump_vs_gdb);
	tcase_add_test(tc, repl_dump_vs_gdb);
	tcase_add_test(tc, dump_format);
	tcase_add_test(tc, dump_cache);
	suite_add_tcase(s, tc);
	return s;
}
