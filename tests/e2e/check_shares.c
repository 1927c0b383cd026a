/* Shares against perf (issue 15): real CPU-bound programs are recorded by
 *   perch record -F 500 --mode cpu -o X.folded -- CMD
 *   perf record -e cpu-clock -F 500 --call-graph dwarf -- CMD     (node: -g, frame pointers)
 * and perf's answer is the reference: perf samples from a timer interrupt on the program's own
 * CPU, so it has none of the biases of stopping a thread from outside. For each program, every
 * one of perf's five top self functions (the innermost user-space frame: perf's kernel frames
 * are dropped, as perch sees the system call's user side) must be among perch's ten and within
 * SHARES_POINTS of perf's share, plus the sampling noise of both estimates (SHARES_Z standard
 * errors of the difference of two binomial shares, from the sample counts); the mean number of
 * user frames per sample must agree within SHARES_DEPTH (against perf -g, only the frames a
 * frame-pointer unwind can reach are counted: see fp_visible_depth()). Each tool records each
 * program twice (alternating) and the samples are pooled. perf must be able to run: this suite
 * fails, and says why, where it cannot (install linux-perf; perf_event_paranoid <= 2 or
 * CAP_PERFMON).
 *
 * Function names are compared after normalizing both sides the same way: a trailing C++
 * parameter list and qualifiers are cut (perf prints none), perch's "_[j]"-style folded markers
 * are dropped, and unnamed code (perf's "[unknown]" in a DSO, perch's "[module+0xADDR]") is one
 * bucket per module, "[unknown] (module)": Debian's xz, python3 and sqlite3 libraries keep only
 * their exported symbols, so much of their time is unnamed for both tools.
 *
 * The rank condition is only applied to functions with at least SHARES_RANK_MIN% of perf's
 * samples (a top-5 function of perf can have a handful of samples when one function dominates),
 * and a function counts as in perch's top 10 when its share is within the noise of the tenth. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"

#define SHARES_HZ	   "500"
#define SHARES_RUNS	   2
#define SHARES_TOP_PERF	   5
#define SHARES_TOP_PERCH   10
#define SHARES_POINTS	   3.0	/* the goal, in percentage points */
#define SHARES_Z	   2.0	/* standard errors of sampling noise allowed on top */
#define SHARES_DEPTH	   0.10 /* mean stack depth: relative difference allowed */
#define SHARES_MIN_SAMPLES 1000 /* per tool, pooled: fewer means the machine starved the run */
#define SHARES_RANK_MIN	   1.0	/* percent: rank condition only above this share */
#define SHARES_PERF	   "/usr/bin/perf"
#define SHARES_NAME_MAX	   4096 /* C++ template names run past 1000 bytes */

/* Self samples per function, and the frame count, of one tool's pooled runs. */
struct tally {
	struct fn {
		char *name;
		double n;
	} * fns;
	size_t nr, alloc;
	double samples, frames;
};

static void tally_add(struct tally *t, const char *name, double n, double frames)
{
	size_t i;

	for (i = 0; i < t->nr && strcmp(t->fns[i].name, name); i++)
		;
	if (i == t->nr) {
		ALLOC_GROW(t->fns, t->nr + 1, t->alloc);
		t->fns[t->nr++] = (struct fn){xstrdup(name), 0};
	}
	t->fns[i].n += n;
	t->samples += n;
	t->frames += n * frames;
}

static void tally_release(struct tally *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->fns[i].name);
	free(t->fns);
	memset(t, 0, sizeof(*t));
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

static double tally_share(const struct tally *t, const char *name)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->fns[i].name, name))
			return t->samples ? 100.0 * t->fns[i].n / t->samples : 0;
	return 0;
}

/* 1 when @name is among the first @top functions of @t (sorted), or its share is within
 * SHARES_Z standard errors of the last of them (the order of near-equal shares is noise). */
static int tally_in_top(const struct tally *t, const char *name, size_t top)
{
	double last, mine, se;

	for (size_t i = 0; i < t->nr && i < top; i++)
		if (!strcmp(t->fns[i].name, name))
			return 1;
	if (t->nr < top)
		return 0;
	last = t->fns[top - 1].n / t->samples;
	mine = tally_share(t, name) / 100;
	se = sqrt((last + mine) / t->samples); /* the difference of two shares of one sample */
	return mine >= last - SHARES_Z * se;
}

/* "[unknown] (BASENAME)" for unnamed code in @module (a path, or NULL). */
static void unknown_in(const char *module, size_t len, char *out, size_t size)
{
	const char *b = module;

	for (size_t i = 0; module && i < len; i++)
		if (module[i] == '/')
			b = module + i + 1;
	if (!module || b >= module + len)
		snprintf(out, size, "[unknown]");
	else
		snprintf(out, size, "[unknown] (%.*s)", (int)(module + len - b), b);
}

/* A demangled template function carries its return type ("void std::sort<...>"), which perf
 * leaves out: keep what follows the last space outside <> and (), unless it is "operator X". */
static void strip_return_type(char *s, size_t n)
{
	int depth = 0;
	size_t cut = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<' || s[i] == '(')
			depth++;
		else if ((s[i] == '>' || s[i] == ')') && depth > 0)
			depth--;
		else if (s[i] == ' ' && !depth && !(i >= 8 && !strncmp(s + i - 8, "operator", 8)))
			cut = i + 1;
	}
	if (cut && cut < n)
		memmove(s, s + cut, n - cut + 1);
}

/* The comparison key of a frame name (see the top comment). */
static void norm_name(const char *in, size_t len, char *out, size_t size)
{
	static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
	size_t n = len < size - 1 ? len : size - 1, k;
	int again = 1;

	memcpy(out, in, n);
	out[n] = 0;
	/* perch's folded markers for managed code */
	if (n >= 4 && out[n - 4] == '_' && out[n - 3] == '[' && out[n - 1] == ']')
		out[n -= 4] = 0;
	while (n && isspace((unsigned char)out[n - 1]))
		out[--n] = 0;
	/* unnamed: "[unknown]", "0x7f...", perch's "[libfoo.so+0x1a2b]" */
	if (n > 2 && out[0] == '[' && out[n - 1] == ']' && strstr(out, "+0x")) {
		memmove(out, out + 1, n - 2);
		out[n -= 2] = 0;
	}
	k = n;
	while (k && isxdigit((unsigned char)out[k - 1]))
		k--;
	if (!n || !strcmp(out, "[unknown]") || !strncmp(out, "0x", 2)) {
		snprintf(out, size, "[unknown]");
		return;
	}
	if (k >= 3 && k < n && out[k - 1] == 'x' && out[k - 2] == '0' && out[k - 3] == '+') {
		char mod[SHARES_NAME_MAX];

		snprintf(mod, sizeof(mod), "%.*s", (int)(k - 3), out);
		unknown_in(mod, strlen(mod), out, size);
		return;
	}
	/* GCC's clone suffixes: "f(int) [clone .constprop.0]" -> "f(int)" */
	for (char *c; (c = strstr(out, " [clone ")) != NULL;)
		*c = 0;
	n = strlen(out);
	/* a trailing parameter list and its qualifiers: "f(int) const" -> "f" */
	while (again) {
		again = 0;
		for (size_t q = 0; q < sizeof(quals) / sizeof(quals[0]); q++) {
			size_t ql = strlen(quals[q]);

			if (n > ql && !strcmp(out + n - ql, quals[q])) {
				out[n -= ql] = 0;
				again = 1;
			}
		}
	}
	if (n && out[n - 1] == ')') {
		int depth = 0;

		for (k = n; k-- > 0;) {
			depth += out[k] == ')' ? 1 : out[k] == '(' ? -1 : 0;
			if (!depth)
				break;
		}
		/* keep "operator()" itself */
		if (depth == 0 && k > 0 &&
		    !(k >= 8 && !strncmp(out + k - 8, "operator", 8) && k + 2 == n))
			out[n = k] = 0;
	}
	strip_return_type(out, n);
}

/* node --perf-basic-prof leaves /tmp/perf-PID.map behind: remove the one of @pid once that
 * process is gone (it is then nobody else's). */
static void remove_perf_map(pid_t pid)
{
	if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
		unlink(harness_fmt("/tmp/perf-%d.map", (int)pid));
}

/* `perf script -F comm,tid,ip,sym,dso`: a "comm tid" line, then one "\tIP SYM (DSO)" line per
 * frame, innermost first (DSO "inlined" for an inline frame), then a blank line. */
static void parse_perf_script(const char *text, struct tally *t, size_t *nr_kernel_only)
{
	char leaf[SHARES_NAME_MAX] = "";
	int in_sample = 0, user_frames = 0;
	const char *s = text;

	for (;;) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (!len || !e) {
			if (in_sample) {
				if (user_frames)
					tally_add(t, leaf, 1, user_frames);
				else
					(*nr_kernel_only)++;
			}
			in_sample = 0;
			if (!e)
				break;
		} else if (s[0] != '\t' && s[0] != ' ') {
			in_sample = 1;
			user_frames = 0;
			if (!strncmp(s, "node ", 5))
				remove_perf_map((pid_t)atoi(s + 5));
		} else if (in_sample) {
			const char *p = s, *end = s + len, *dso, *sym;

			while (p < end && isspace((unsigned char)*p))
				p++;
			while (p < end && isxdigit((unsigned char)*p))
				p++;
			sym = p + 1;
			for (dso = end; dso > sym && !(dso[0] == '(' && dso[-1] == ' '); dso--)
				;
			if (sym < end && dso > sym && strncmp(dso, "([kernel", 8)) {
				if (!user_frames) {
					norm_name(sym, (size_t)(dso - 1 - sym), leaf, sizeof(leaf));
					if (!strcmp(leaf, "[unknown]") && end[-1] == ')')
						unknown_in(dso + 1, (size_t)(end - 1 - dso - 1),
							   leaf, sizeof(leaf));
				}
				user_frames++;
			}
		}
		s = e + 1;
	}
}

/* The frames of @l that perf's frame-pointer unwind can see. It stops at glibc's
 * __libc_start_call_main and start_thread, whose callers (__libc_start_main, _start, clone3)
 * keep no frame pointer; perch's CFI unwind goes on to them, as gdb does. */
static double fp_visible_depth(const struct harness_folded_line *l)
{
	for (size_t j = 0; j < l->nr_frames; j++) /* root first */
		if (harness_frame_is(l->frames[j], "__libc_start_call_main") ||
		    harness_frame_is(l->frames[j], "start_thread"))
			return (double)(l->nr_frames - j);
	return (double)l->nr_frames;
}

static void parse_folded(const char *path, struct tally *t, int perf_fp)
{
	struct harness_folded f = {0};
	char leaf[SHARES_NAME_MAX];

	H_ASSERT(harness_folded_load(&f, path) == 0, "cannot read %s", path);
	for (size_t i = 0; i < f.nr; i++)
		if (!strcmp(f.lines[i].thread, "node"))
			remove_perf_map(f.lines[i].tid);
	for (size_t i = 0; i < f.nr; i++) {
		const struct harness_folded_line *l = &f.lines[i];
		const char *name = l->nr_frames ? l->frames[l->nr_frames - 1] : "[none]";

		norm_name(name, strlen(name), leaf, sizeof(leaf));
		tally_add(t, leaf, (double)l->count,
			  perf_fp ? fp_visible_depth(l) : (double)l->nr_frames);
	}
	harness_folded_release(&f);
}

/* Fail, saying why, when perf cannot record here. */
static void require_perf(void)
{
	const char *data = harness_tmpfile("probe.perf.data");
	struct harness_proc *p;

	H_ASSERT(access(SHARES_PERF, X_OK) == 0,
		 "perf is not installed (%s): the shares are compared with perf's; install "
		 "linux-perf (scripts/install-deps.sh does)",
		 SHARES_PERF);
	p = harness_spawn("perf", HARNESS_ARGV(SHARES_PERF, "record", "-q", "-e", "cpu-clock", "-F",
					       SHARES_HZ, "-o", data, "--", "/bin/true"));
	H_ASSERT(harness_proc_wait(p, 60) == 0, "perf record of /bin/true did not finish");
	H_ASSERT(harness_proc_exit_code(p) == 0,
		 "perf cannot record here (exit %d): the shares are compared with perf's. Allow "
		 "perf_event_open (kernel.perf_event_paranoid <= 2, or CAP_PERFMON) and make sure "
		 "linux-perf matches the kernel",
		 harness_proc_exit_code(p));
	unlink(data);
}

/* A program to compare on: argv of the workload (absolute path first), perf's unwinder. */
struct workload {
	const char *name;
	const char *const *argv;
	int perf_fp; /* perf -g (frame pointers: JIT code has no CFI) instead of dwarf */
};

static void run_perch(const struct workload *w, int run, struct tally *t)
{
	const char *out = harness_tmpfile(harness_fmt("%s-%d.folded", w->name, run));
	const char *argv[32];
	size_t n = 0;
	struct harness_proc *p;

	argv[n++] = harness_perch();
	argv[n++] = "record";
	argv[n++] = "-F";
	argv[n++] = SHARES_HZ;
	argv[n++] = "--mode";
	argv[n++] = "cpu";
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n++] = "--";
	for (size_t i = 0; w->argv[i] && n < 31; i++)
		argv[n++] = w->argv[i];
	argv[n] = NULL;
	p = harness_spawn("perch", argv);
	H_ASSERT(harness_proc_wait(p, 300) == 0, "perch record of %s did not finish", w->name);
	H_ASSERT(harness_proc_exit_code(p) == 0, "perch record of %s exited %d", w->name,
		 harness_proc_exit_code(p));
	parse_folded(out, t, w->perf_fp);
	unlink(out);
}

static void run_perf(const struct workload *w, int run, struct tally *t, size_t *kernel_only)
{
	const char *data = harness_tmpfile(harness_fmt("%s-%d.perf.data", w->name, run));
	const char *argv[40];
	size_t n = 0;
	struct harness_proc *p;

	argv[n++] = SHARES_PERF;
	argv[n++] = "record";
	argv[n++] = "-q";
	argv[n++] = "-e";
	argv[n++] = "cpu-clock";
	argv[n++] = "-F";
	argv[n++] = SHARES_HZ;
	if (w->perf_fp) {
		argv[n++] = "-g";
	} else {
		argv[n++] = "--call-graph";
		argv[n++] =
		    "dwarf,16384"; /* perch copies 32 KiB; perf's default 8 KiB cuts stacks */
	}
	argv[n++] = "-o";
	argv[n++] = data;
	argv[n++] = "--";
	for (size_t i = 0; w->argv[i] && n < 39; i++)
		argv[n++] = w->argv[i];
	argv[n] = NULL;
	p = harness_spawn("perf", argv);
	H_ASSERT(harness_proc_wait(p, 300) == 0, "perf record of %s did not finish", w->name);
	H_ASSERT(harness_proc_exit_code(p) == 0, "perf record of %s exited %d", w->name,
		 harness_proc_exit_code(p));
	p = harness_spawn("perf script", HARNESS_ARGV(SHARES_PERF, "script", "-i", data, "-F",
						      "comm,tid,ip,sym,dso"));
	H_ASSERT(harness_proc_wait(p, 600) == 0, "perf script of %s did not finish", w->name);
	H_ASSERT(harness_proc_exit_code(p) == 0, "perf script of %s exited %d", w->name,
		 harness_proc_exit_code(p));
	parse_perf_script(p->out.buf ? p->out.buf : "", t, kernel_only);
	strbuf_release(&p->out); /* can be megabytes */
	unlink(data);
}

/* Record @w with both tools, then compare; the figures go to the test log either way. 0 when
 * they agree, else -1 with the reason in @why. */
static int compare_once(const struct workload *w, struct strbuf *why)
{
	struct tally perf = {0}, perch = {0};
	size_t kernel_only = 0, i;
	struct strbuf report = STRBUF_INIT;
	double dperf, dperch;
	int bad = 0;

	require_perf();
	for (int run = 0; run < SHARES_RUNS; run++) {
		run_perch(w, run, &perch);
		run_perf(w, run, &perf, &kernel_only);
	}
	qsort(perf.fns, perf.nr, sizeof(*perf.fns), cmp_fn);
	qsort(perch.fns, perch.nr, sizeof(*perch.fns), cmp_fn);
	dperf = perf.samples ? perf.frames / perf.samples : 0;
	dperch = perch.samples ? perch.frames / perch.samples : 0;
	strbuf_addf(&report,
		    "%s: perf %.0f samples (%zu more in the kernel only, left out), mean depth "
		    "%.1f; perch %.0f samples, mean depth %.1f\n",
		    w->name, perf.samples, kernel_only, dperf, perch.samples, dperch);
	for (i = 0; i < perf.nr && i < SHARES_TOP_PERF; i++) {
		const char *name = perf.fns[i].name;
		double a = tally_share(&perf, name), b = tally_share(&perch, name);
		double se = 100.0 * sqrt(a / 100 * (1 - a / 100) / perf.samples +
					 b / 100 * (1 - b / 100) / perch.samples);
		double allowed = SHARES_POINTS + SHARES_Z * se;
		int in_top = a < SHARES_RANK_MIN || tally_in_top(&perch, name, SHARES_TOP_PERCH);
		int ok = in_top && fabs(a - b) <= allowed;

		bad += !ok;
		strbuf_addf(&report,
			    "  %-60.60s perf %5.1f%%  perch %5.1f%%  (allowed +-%.1f)%s%s\n", name,
			    a, b, allowed, in_top ? "" : "  NOT IN PERCH'S TOP 10",
			    ok ? "" : "  <-- FAILS");
	}
	strbuf_addstr(&report, "  perch's top:");
	for (i = 0; i < perch.nr && i < SHARES_TOP_PERCH; i++)
		strbuf_addf(&report, " %.40s %.1f%%;", perch.fns[i].name,
			    100.0 * perch.fns[i].n / perch.samples);
	strbuf_addch(&report, '\n');
	fputs(report.buf, stderr);
	harness_context_add("%s", report.buf);
	H_ASSERT(perf.samples >= SHARES_MIN_SAMPLES && perch.samples >= SHARES_MIN_SAMPLES,
		 "%s: too few samples to compare (perf %.0f, perch %.0f; want %d each)", w->name,
		 perf.samples, perch.samples, SHARES_MIN_SAMPLES);
	if (bad)
		strbuf_addf(
		    why,
		    "%s: %d of perf's top %d self functions are not in perch's top %d within "
		    "their bound",
		    w->name, bad, SHARES_TOP_PERF, SHARES_TOP_PERCH);
	else if (fabs(dperch - dperf) > SHARES_DEPTH * dperf)
		strbuf_addf(why,
			    "%s: mean stack depth %.1f frames, perf's %.1f (want within %.0f%%)",
			    w->name, dperch, dperf, 100 * SHARES_DEPTH);
	strbuf_release(&report);
	tally_release(&perf);
	tally_release(&perch);
	return why->len ? -1 : 0;
}

/* compare_once(), judged twice: the programs' own profiles move by a few points from run to
 * run (python3's unnamed code 41.6-48.4% of perf's samples in one day's runs), more than the
 * sampling noise the bound allows for, so one failing comparison is logged and the programs
 * are recorded again; a second failure fails the test (a systematic error fails both). */
static void compare(const struct workload *w)
{
	struct strbuf why = STRBUF_INIT;

	if (compare_once(w, &why) == 0)
		return;
	fprintf(stderr, "shares: first run: %s; recording both again\n", why.buf);
	strbuf_reset(&why);
	harness_context_reset();
	H_ASSERT(compare_once(w, &why) == 0, "%s (second run; the first failed too)", why.buf);
	strbuf_release(&why);
}

/* ---- the programs ---- */

static const char python_code[] = "def primes(n):\n"
				  "    ps = []\n"
				  "    for i in range(2, n):\n"
				  "        for p in ps:\n"
				  "            if p * p > i:\n"
				  "                ps.append(i)\n"
				  "                break\n"
				  "            if i % p == 0:\n"
				  "                break\n"
				  "        else:\n"
				  "            ps.append(i)\n"
				  "    return ps\n"
				  "def words(n):\n"
				  "    d = {}\n"
				  "    for i in range(n):\n"
				  "        w = str(i * 7919 % 10007)\n"
				  "        d[w] = d.get(w, 0) + len(w)\n"
				  "    return sorted(d.items())\n"
				  "t = 0\n"
				  "for r in range(40):\n"
				  "    t += len(primes(40000)) + len(words(120000))\n"
				  "print(t)\n";

START_TEST(shares_python)
{
	const char *script = harness_tmpfile("work.py");
	FILE *f = fopen(script, "w");
	struct workload w = {"python3", HARNESS_ARGV("/usr/bin/python3", "-B", script), 0};

	H_ASSERT(f && fputs(python_code, f) >= 0 && fclose(f) == 0, "cannot write %s", script);
	setenv("PYTHONHASHSEED", "0", 1);
	compare(&w);
}
END_TEST

/* Text-like data for xz: words drawn from a fixed list by a fixed generator. */
static void write_words(const char *path, size_t bytes)
{
	static const char *const words[] = {
	    "the",    "profile", "sample", "thread", "stack", "kernel", "perch", "frame", "unwind",
	    "symbol", "of",	 "and",	   "a",	     "to",    "in",	"time",	 "share"};
	unsigned long long x = 0x2545f4914f6cdd1dULL;
	FILE *f = fopen(path, "w");
	size_t n = 0;

	H_ASSERT(f, "cannot write %s", path);
	while (n < bytes) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n += (size_t)fprintf(f, "%s%s%llu", words[x % 17], (x >> 8) % 11 ? " " : ".\n",
				     (x >> 20) % 3 ? (x >> 24) % 1000 : 0ULL);
	}
	H_ASSERT(fclose(f) == 0, "cannot write %s", path);
}

START_TEST(shares_xz)
{
	const char *data = harness_tmpfile("words.txt");
	struct workload w = {"xz", HARNESS_ARGV("/usr/bin/xz", "-9", "-T1", "-k", "-f", data), 0};

	write_words(data, 2 << 20);
	compare(&w);
}
END_TEST

static const char sqlite_make[] =
    "PRAGMA page_size=4096;\n"
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);\n"
    "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 250000)\n"
    "INSERT INTO t SELECT i, printf('%.80c%d', 'x', i*7919 % 100003), (i*2654435761) % 1000 "
    "FROM s;\n";

/* Full scans of a 25 MB table through a 256 KiB page cache: every page is a pread of the
 * (OS-cached) file, so the program mixes its own work with cheap system calls. */
static const char sqlite_queries[] =
    "SELECT count(*), sum(length(b)) FROM t WHERE c % 7 = 3;\n"
    "SELECT c, count(*) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;\n"
    "SELECT count(*) FROM t WHERE b LIKE '%99%';\n"
    "SELECT sum(a) FROM t WHERE c < 500;\n";

START_TEST(shares_sqlite)
{
	const char *db = harness_tmpfile("big.db"), *mk = harness_tmpfile("make.sql");
	const char *q = harness_tmpfile("queries.sql");
	struct workload w = {"sqlite3",
			     HARNESS_ARGV("/usr/bin/sqlite3", db, harness_fmt(".read %s", q)), 0};
	struct harness_proc *p;
	FILE *f = fopen(mk, "w");

	H_ASSERT(f && fputs(sqlite_make, f) >= 0 && fclose(f) == 0, "cannot write %s", mk);
	f = fopen(q, "w");
	H_ASSERT(f && fputs("PRAGMA cache_size=64;\n", f) >= 0, "cannot write %s", q);
	for (int i = 0; i < 12; i++)
		fputs(sqlite_queries, f);
	H_ASSERT(fclose(f) == 0, "cannot write %s", q);
	p = harness_spawn("sqlite3",
			  HARNESS_ARGV("/usr/bin/sqlite3", db, harness_fmt(".read %s", mk)));
	H_ASSERT(harness_proc_wait(p, 120) == 0 && harness_proc_exit_code(p) == 0,
		 "cannot create the database");
	compare(&w);
}
END_TEST

static const char node_code[] =
    "function hot(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * i) % 1000003;"
    " return s; }\n"
    "function strs(n) { const a = []; for (let i = 0; i < n; i++)"
    " a.push((i * 7919 % 10007).toString(36)); a.sort(); return a.length; }\n"
    "let t = 0; for (let r = 0; r < 8; r++) t += hot(4e6) + strs(1e5);\n"
    "console.log(t);\n";

START_TEST(shares_node)
{
	const char *script = harness_tmpfile("work.js");
	FILE *f = fopen(script, "w");
	/* --perf-basic-prof turns V8's log on: keep its isolate-*.log out of the work tree */
	struct workload w = {
	    "node",
	    HARNESS_ARGV("/usr/bin/node", "--perf-basic-prof", "--no-logfile-per-isolate",
			 harness_fmt("--logfile=%s", harness_tmpfile("v8.log")), script),
	    1};

	H_ASSERT(f && fputs(node_code, f) >= 0 && fclose(f) == 0, "cannot write %s", script);
	compare(&w);
}
END_TEST

START_TEST(shares_cpp)
{
	struct workload w = {"cppwork", HARNESS_ARGV(harness_target("cppwork"), "40"), 0};

	compare(&w);
}
END_TEST

Suite *shares_suite(void)
{
	Suite *s = suite_create("shares");
	TCase *tc;

	if (getenv("PERCH_TEST_SANITIZED")) {
		printf(
		    "framework skip: shares: a sanitizer build of perch is several times slower, "
		    "so its shares say nothing of perch's; make check without SAN compares them\n");
		return s;
	}
	tc = tcase_create("perf");
	harness_tcase_init(tc, 900);
	tcase_add_test(tc, shares_python);
	tcase_add_test(tc, shares_xz);
	tcase_add_test(tc, shares_sqlite);
	tcase_add_test(tc, shares_node);
	tcase_add_test(tc, shares_cpp);
	suite_add_tcase(s, tc);
	return s;
}
