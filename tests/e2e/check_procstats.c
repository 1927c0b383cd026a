/* e2e: CPU and memory timelines and stalls during `perch record` (read back from the Chrome
 * trace's counters and slices, and from the summary), the flight recorder and chunks (--ring
 * with its triggers, --chunk), `perch stat` and `perch mem`, on the procstats target whose
 * behaviour is known: a 50% duty-cycle thread, a 200 MB allocation, a main thread that blocks
 * 500 ms every 2 s. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MIB (1024.0 * 1024.0)

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	struct strbuf sb = STRBUF_INIT;
	ssize_t n;

	H_ASSERT(f != NULL, "cannot open %s", path);
	while ((n = getline(&buf, &len, f)) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	free(buf);
	fclose(f);
	return strbuf_detach(&sb, NULL);
}

/* Values of the Chrome counter @name, in file (= time) order; their number. */
static size_t chrome_counter(const char *text, const char *name, double *v, size_t max)
{
	const char *key = harness_fmt("{\"ph\": \"C\", \"name\": \"%s\", ", name), *s = text;
	size_t n = 0;

	while ((s = strstr(s, key)) && n < max) {
		const char *val = strstr(s, "\"value\": ");

		if (!val)
			break;
		v[n++] = strtod(val + 9, NULL);
		s = val;
	}
	return n;
}

/* The name of the first counter starting with @prefix, or NULL (harness-owned). */
/* The name of the first counter that starts with @prefix and has @part in its name (the
 * order of the tracks is not part of the format). */
static const char *chrome_counter_named(const char *text, const char *prefix, const char *part)
{
	const char *key = harness_fmt("{\"ph\": \"C\", \"name\": \"%s", prefix);
	const char *s, *end;

	for (s = strstr(text, key); s; s = strstr(end, key)) {
		s += strlen("{\"ph\": \"C\", \"name\": \"");
		end = strchr(s, '"');
		if (!end)
			return NULL;
		if (memmem(s, (size_t)(end - s), part, strlen(part)))
			return harness_fmt("%.*s", (int)(end - s), s);
	}
	return NULL;
}

struct e2e_stall {
	double dur_ms;
	int cut, thread;
	char kind[16];
	char reason[128];
};

/* The stall slices of a Chrome trace (one event per line). */
static size_t chrome_stalls(const char *text, struct e2e_stall *v, size_t max)
{
	const char *s = text;
	size_t n = 0;

	while ((s = strstr(s, "\"cat\": \"stall\"")) && n < max) {
		const char *eol = strchr(s, '\n'), *d = strstr(s, "\"dur\": "),
			   *k = strstr(s, "\"kind\": \""), *t = strstr(s, "\"thread\": "),
			   *r = strstr(s, "\"reason\": \"");

		if (!eol)
			eol = s + strlen(s);
		H_ASSERT(d && k && t && r && d < eol && k < eol && t < eol && r < eol,
			 "malformed stall slice: %.*s", (int)(eol - s), s);
		v[n].dur_ms = strtod(d + 7, NULL) / 1000.0;
		sscanf(k + 9, "%15[^\"]", v[n].kind);
		v[n].thread = atoi(t + 10);
		v[n].cut = !strncmp(strstr(s, "\"cut\": ") + 7, "true", 4);
		sscanf(r + 11, "%127[^\"]", v[n].reason);
		n++;
		s = eol;
	}
	return n;
}

static int strcmp_ptr(const char **a, const char **b)
{
	return strcmp(*a, *b);
}

static double mean(const double *v, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / (double)n : -1;
}

static struct harness_proc *start_target(const char *mode, const char *seconds, pid_t *pid)
{
	struct harness_proc *t =
	    harness_spawn("target", HARNESS_ARGV(harness_target("procstats"), mode, seconds));

	*pid = harness_proc_wait_ready(t, 10);
	return t;
}

/* What /proc says: the CPU % of one core thread @name of @pid used over its whole life (the
 * duty thread keeps itself at 50% of that when it can get the CPU), or -1. */
static double lifetime_cpu(pid_t pid, const char *name)
{
	DIR *d = opendir(harness_fmt("/proc/%d/task", (int)pid));
	struct dirent *de;
	double up = 0, clk = (double)sysconf(_SC_CLK_TCK), pct = -1;
	FILE *f = fopen("/proc/uptime", "r");

	if (!d || !f || fscanf(f, "%lf", &up) != 1)
		goto out;
	while ((de = readdir(d))) {
		char comm[64] = "", buf[1024], *p;
		unsigned long long ut, st, start;
		FILE *c = fopen(harness_fmt("/proc/%d/task/%s/comm", (int)pid, de->d_name), "r");

		if (!c)
			continue;
		if (fgets(comm, sizeof(comm), c))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(c);
		if (strcmp(comm, name))
			continue;
		c = fopen(harness_fmt("/proc/%d/task/%s/stat", (int)pid, de->d_name), "r");
		if (!c)
			continue;
		p = fgets(buf, sizeof(buf), c) ? strrchr(buf, ')') : NULL;
		fclose(c);
		/* after "comm)": state, then fields 4..; utime is 14, stime 15, starttime 22 */
		if (p &&
		    sscanf(p + 2,
			   "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu %*s %*s "
			   "%*s %*s %*s %*s %llu",
			   &ut, &st, &start) == 3 &&
		    up > (double)start / clk)
			pct = 100.0 * (double)(ut + st) / clk / (up - (double)start / clk);
	}
out:
	if (d)
		closedir(d);
	if (f)
		fclose(f);
	return pct;
}

/* perch's figure @got for the duty thread against /proc's @truth: within 15 points always;
 * within 40-60% (the bound) unless the machine was so busy that the thread itself
 * could not get 40-60% of a CPU (then that is said, visibly). */
static void check_duty(const char *what, double got, double truth)
{
	H_ASSERT(truth >= 0, "cannot read the duty thread's CPU time from /proc");
	H_ASSERT(fabs(got - truth) <= 15, "%s: %.1f%%, /proc says the thread used %.1f%%", what,
		 got, truth);
	if (truth >= 40 && truth <= 60)
		H_ASSERT(got >= 40 && got <= 60, "%s: %.1f%% (want 40-60%%)", what, got);
	else
		fprintf(stderr,
			"note: %s: the machine is overloaded, the 50%% duty thread got only "
			"%.1f%% of a CPU; perch said %.1f%% (40-60%% not checked)\n",
			what, truth, got);
}

/* The CPU% column of thread @name in the summary's thread table, or -1. */
static double summary_thread_cpu(const char *err, const char *name)
{
	const char *s = strstr(err, "threads by CPU");
	const char *key = harness_fmt("  %s ", name);

	s = s ? strstr(s, key) : NULL;
	return s ? strtod(s + strlen(key), NULL) : -1;
}

START_TEST(duty_cycle_cpu)
{
	pid_t pid;
	struct harness_proc *t = start_target("duty", "20", &pid), *perch;
	const char *out = harness_tmpfile("duty.trace.json");
	const char *thread_counter;
	double cpu[200], thr[200], summary, truth;
	size_t n;
	char *text;

	(void)t;
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						harness_fmt("%d", (int)pid), "-d", "4", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited %d",
		 harness_proc_exit_code(perch));
	text = read_text(out);
	/* the process: the duty thread, the main thread sleeps */
	n = chrome_counter(text, "cpu_usage", cpu, 200);
	H_ASSERT(n >= 25, "%zu cpu_usage points in 4 s at 100 ms (want >= 25)", n);
	truth = lifetime_cpu(pid, "duty");
	check_duty("process cpu_usage", mean(cpu, n), truth);
	/* the thread's own track (a step counter: a point where the value changes) */
	thread_counter = chrome_counter_named(text, "thread_cpu_usage.", ".duty");
	H_ASSERT(thread_counter && strstr(thread_counter, ".duty"),
		 "no thread_cpu_usage counter of the duty thread");
	n = chrome_counter(text, thread_counter, thr, 200);
	H_ASSERT(n >= 2, "%zu points of %s", n, thread_counter);
	H_ASSERT(chrome_counter(text, "system_cpu_usage", cpu, 200) >= 25, "no system CPU track");
	/* the summary's average over the whole recording */
	summary = summary_thread_cpu(perch->err.buf, "duty");
	check_duty("the summary's duty thread", summary, truth);
	H_ASSERT(strstr(perch->err.buf, "CPU: process avg "), "no CPU line in the summary");
	free(text);
}
END_TEST

START_TEST(allocation_shows_in_memory)
{
	pid_t pid;
	struct harness_proc *t = start_target("alloc", "20", &pid), *perch;
	const char *out = harness_tmpfile("alloc.trace.json");
	double rss[100], native[100], rmax = 0, nmax = 0;
	size_t nr, nn;
	char *text;

	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d", (int)pid), "-d", "3",
						    "--mem-interval", "200", "-o", out));
	/* let perch take its first readings, then allocate */
	harness_sleep(1.0);
	harness_proc_write(t, "go\n");
	H_ASSERT(harness_proc_wait_line(t, "allocated", 10), "the target did not allocate");
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited %d",
		 harness_proc_exit_code(perch));
	text = read_text(out);
	nr = chrome_counter(text, "rss_bytes", rss, 100);
	nn = chrome_counter(text, "native_heap_bytes", native, 100);
	H_ASSERT(nr >= 8 && nn >= 8, "%zu rss and %zu native heap points in 3 s at 200 ms", nr, nn);
	for (size_t i = 0; i < nr; i++)
		rmax = rss[i] > rmax ? rss[i] : rmax;
	for (size_t i = 0; i < nn; i++)
		nmax = native[i] > nmax ? native[i] : nmax;
	H_ASSERT(rmax - rss[0] >= 190 * MIB, "RSS rose by %.1f MiB (want >= 190)",
		 (rmax - rss[0]) / MIB);
	H_ASSERT(nmax - native[0] >= 190 * MIB, "native heap rose by %.1f MiB (want >= 190)",
		 (nmax - native[0]) / MIB);
	H_ASSERT(chrome_counter(text, "pss_bytes", rss, 100) >= 8 &&
		     chrome_counter(text, "uss_bytes", rss, 100) >= 8,
		 "no PSS or USS track");
	H_ASSERT(strstr(perch->err.buf, "  Native Heap "), "no Native Heap row in the summary");
	free(text);
}
END_TEST

/* The stalls of procstats' main thread in @mode: blocked 500 ms every 2 s, busy between
 * ("stall") or awake every 10 ms between ("stall-ticks": off-CPU at nearly every tick, and
 * not a stall: its switch-in count moves between the ticks). Every whole off-CPU stall is
 * one of the 500 ms blocks, whose length the target's own nanosleep sets. */
static void main_thread_stalls_in(const char *mode)
{
	pid_t pid;
	struct harness_proc *perch;
	const char *out = harness_tmpfile("stall.trace.json");
	struct e2e_stall v[64];
	size_t n, good = 0;
	char *text;

	/* no .perch: the samples, timelines and stalls go through an unlinked temporary
	 * recording in $TMPDIR (streamed once a second), which must leave nothing there */
	char *tmpdir = strdup(harness_tmpfile("tmpdir-XXXXXX"));
	DIR *d;
	struct dirent *de;

	H_ASSERT(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
	setenv("TMPDIR", tmpdir, 1);
	start_target(mode, "20", &pid);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						harness_fmt("%d", (int)pid), "-d", "6", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited %d",
		 harness_proc_exit_code(perch));
	d = opendir(tmpdir);
	H_ASSERT(d, "opendir %s", tmpdir);
	while ((de = readdir(d)))
		H_ASSERT(!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."),
			 "perch left %s in its TMPDIR", de->d_name);
	closedir(d);
	free(tmpdir);
	text = read_text(out);
	n = chrome_stalls(text, v, 64);
	for (size_t i = 0; i < n; i++) {
		harness_context_add("stall: %s %.1f ms cut %d thread %d %s\n", v[i].kind,
				    v[i].dur_ms, v[i].cut, v[i].thread, v[i].reason);
		H_ASSERT(v[i].thread == pid, "a stall of thread %d, not the main thread",
			 v[i].thread);
		if (strcmp(v[i].kind, "off-cpu") || v[i].cut)
			continue;
		/* every whole off-CPU stall is one of the 500 ms blocks */
		H_ASSERT(v[i].dur_ms >= 425 && v[i].dur_ms <= 575,
			 "an off-CPU stall of %.1f ms (want 500 ms +-15%%)", v[i].dur_ms);
		H_ASSERT(!strncmp(v[i].reason, "[sleep ", 7), "stall reason '%s'", v[i].reason);
		good++;
	}
	/* blocks start at 0, 2, 4 s after ready: at least those at 2 and 4 s are whole */
	H_ASSERT(good >= 2, "%zu whole off-CPU stalls in 6 s (want >= 2)", good);
	H_ASSERT(strstr(perch->err.buf, harness_fmt("stalls of thread %d", (int)pid)),
		 "no stall line in the summary");
	H_ASSERT(strstr(perch->err.buf, "off-cpu [sleep "), "the summary shows no sleep stall");
	free(text);
}
START_TEST(main_thread_stalls)
{
	main_thread_stalls_in("stall");
}
END_TEST

/* (before perch looked at the thread's progress: the 1.5 s of 10-ms wakeups and the block
 * after them read as one off-CPU stall of up to 2 s) */
START_TEST(main_thread_ticks_no_stall)
{
	main_thread_stalls_in("stall-ticks");
}
END_TEST

/* ---- windows: --ring with triggers, --chunk ---- */

/* The files of directory @dir whose names contain @part and end in @end, sorted; how many
 * (names harness-owned). */
static size_t files_like(const char *dir, const char *part, const char *end, const char **v,
			 size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0, le = strlen(end);

	H_ASSERT(d, "opendir %s", dir);
	while ((de = readdir(d)) && n < max) {
		size_t l = strlen(de->d_name);

		if (strstr(de->d_name, part) && l > le && !strcmp(de->d_name + l - le, end))
			v[n++] = harness_fmt("%s/%s", dir, de->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), (int (*)(const void *, const void *))strcmp_ptr);
	return n;
}

/* Seconds from the first Chrome slice of the samples to the end of the last. */
static double chrome_span_s(const char *text)
{
	const char *s = text;
	double lo = 1e300, hi = -1e300;

	while ((s = strstr(s, "{\"ph\": \"X\", \"name\": "))) {
		const char *eol = strchr(s, '\n'), *ts = strstr(s, "\"ts\": "),
			   *dur = strstr(s, "\"dur\": "), *stall = strstr(s, "\"cat\": \"stall\"");

		if (!eol)
			break;
		if (ts && dur && dur < eol && !(stall && stall < eol)) {
			double t = strtod(ts + 6, NULL), d = strtod(dur + 7, NULL);

			lo = t < lo ? t : lo;
			hi = t + d > hi ? t + d : hi;
		}
		s = eol;
	}
	return hi > lo ? (hi - lo) / 1e6 : 0;
}

static char *window_dir(void)
{
	char *dir = strdup(harness_tmpfile("windows-XXXXXX"));

	H_ASSERT(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	return dir;
}

/* The target runs on after perch, neither traced nor stopped. */
static void assert_untouched(pid_t pid)
{
	char states[64];

	H_ASSERT(harness_wait_traced(pid, 0, 5) == 0, "target %d still traced", (int)pid);
	H_ASSERT(harness_task_states(pid, states, sizeof(states)) > 0 && !strpbrk(states, "tT"),
		 "target %d left stopped (%s)", (int)pid, states);
}

/* --ring 3 --trigger stall:300 --trigger-max 3 on a main thread that blocks 500 ms every 2 s
 * (the target's own nanosleep; 4 or 5 blocks in 9 s): three windows saved, each holding at most
 * the 3 s before its trigger plus the stall and a second after, with a dump of every thread
 * at the trigger; the off-CPU ones hold a whole 500 ms stall and their dump shows the block
 * (on a loaded machine a main thread waiting for a CPU in one stack for 300 ms is a stall too:
 * such a window is checked for its bounds only); the later stalls counted, not saved; at the
 * end the -o files hold the last 3 s, with the CPU readings of those seconds. */
START_TEST(ring_stall_trigger)
{
	pid_t pid;
	char *dir = window_dir();
	const char *files[16], *dumps[16], *folded[16];
	struct harness_proc *perch;
	size_t n, nd, nf, off = 0;

	start_target("stall", "30", &pid);
	perch = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", (int)pid),
				  "-d", "9", "--ring", "3", "--trigger", "stall:300",
				  "--trigger-max", "3", "-o", harness_fmt("%s/r.trace.json", dir),
				  "-o", harness_fmt("%s/r.folded", dir)));
	H_ASSERT(harness_proc_wait(perch, 40) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited %d",
		 harness_proc_exit_code(perch));
	assert_untouched(pid);
	n = files_like(dir, "-stall", ".trace.json", files, 16);
	nd = files_like(dir, "-stall", "-threads.txt", dumps, 16);
	nf = files_like(dir, "-stall", ".folded", folded, 16);
	H_ASSERT(n == 3 && nd == 3 && nf == 3,
		 "%zu stall windows, %zu dumps, %zu folded (want 3 each: --trigger-max 3)", n, nd,
		 nf);
	H_ASSERT(strstr(perch->err.buf, "3 windows saved on triggers") &&
		     !strstr(perch->err.buf, "(0 more after --trigger-max)"),
		 "the summary does not say 3 saved and more ignored");
	for (size_t i = 0; i < n; i++) {
		char *text = read_text(files[i]), *dump = read_text(dumps[i]);
		struct e2e_stall v[16];
		size_t ns = chrome_stalls(text, v, 16), whole = 0;
		double span = chrome_span_s(text);
		struct harness_folded f;

		harness_context_add("window %s: span %.2f s, %zu stalls\n%s\n", files[i], span, ns,
				    dump);
		/* 3 s before the trigger (300 ms into the stall), the rest of the stall, 1 s */
		H_ASSERT(span > 0.3 && span <= 3 + 0.3 + 1.5, "window of %.2f s", span);
		H_ASSERT(strstr(dump, harness_fmt("thread %d (procstats)", (int)pid)),
			 "the dump does not show the main thread");
		H_ASSERT(harness_folded_load(&f, folded[i]) == 0 && f.total > 0 && !f.nr_bad,
			 "%s: not a valid folded file", folded[i]);
		if (strstr(dump, "had been off-cpu")) {
			/* a block under way when perch attached is cut: shorter, never longer */
			for (size_t k = 0; k < ns; k++)
				whole += !strcmp(v[k].kind, "off-cpu") && v[k].dur_ms <= 575 &&
					 (v[k].cut || v[k].dur_ms >= 425) &&
					 !strncmp(v[k].reason, "[sleep ", 7);
			H_ASSERT(whole >= 1, "no 500 ms sleep stall in the window %s", files[i]);
			H_ASSERT(strstr(dump, "state S") && strstr(dump, "block_500ms") &&
				     strstr(dump, "[sleep "),
				 "the dump does not show the main thread blocked in block_500ms");
			H_ASSERT(harness_folded_count(&f, NULL, harness_pred_has, "block_500ms") >
				     0,
				 "no sample in block_500ms in %s", folded[i]);
			off++;
		}
		harness_folded_release(&f);
		free(text);
		free(dump);
	}
	H_ASSERT(off >= 2, "%zu of the 3 windows are of off-CPU stalls (the 500 ms blocks)", off);
	{
		char *text = read_text(harness_fmt("%s/r.trace.json", dir));
		double span = chrome_span_s(text), cpu[256];
		size_t nc = chrome_counter(text, "cpu_usage", cpu, 256);

		H_ASSERT(span > 2 && span <= 3.3, "the last window spans %.2f s (want 3)", span);
		/* the CPU timeline of the window's time: a reading every 100 ms */
		H_ASSERT(nc >= 20 && nc <= 40, "%zu cpu_usage points in a 3 s window", nc);
		free(text);
	}
	free(dir);
}
END_TEST

/* --trigger signal:USR2 saves the last 2 s at once; Ctrl-C ends the run with the last 2 s in
 * -o; the target runs on. */
START_TEST(ring_signal_trigger)
{
	pid_t pid;
	char *dir = window_dir();
	const char *files[8];
	struct harness_proc *perch;
	struct harness_folded f;
	double t0;
	size_t n = 0;

	start_target("stall", "30", &pid);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "-v", "-p",
					   harness_fmt("%d", (int)pid), "--ring", "2", "--trigger",
					   "signal:USR2", "-o", harness_fmt("%s/s.folded", dir)));
	harness_wait_sampling(perch);
	harness_sleep(2.5);
	harness_proc_kill(perch, SIGUSR2);
	for (t0 = harness_now(); harness_now() - t0 < 10 && !n; harness_sleep(0.1))
		n = files_like(dir, "-signal", ".folded", files, 8);
	H_ASSERT(n == 1, "%zu windows after SIGUSR2 (want 1)", n);
	H_ASSERT(files_like(dir, "-signal", "-threads.txt", files + 1, 7) == 1,
		 "no dump of every thread with the signal's window");
	H_ASSERT(harness_folded_load(&f, files[0]) == 0 && !f.nr_bad, "bad %s", files[0]);
	/* one thread at 100 Hz: 2 s of samples, not the whole run */
	/* (fewer when perch fell far behind on a loaded machine; never the whole run) */
	H_ASSERT(f.total >= 60 && f.total <= 230, "%lu samples in a 2 s window", f.total);
	harness_folded_release(&f);
	harness_proc_kill(perch, SIGINT);
	H_ASSERT(harness_proc_wait(perch, 20) == 0 && harness_proc_exit_code(perch) == 0,
		 "perch after Ctrl-C: exit %d", harness_proc_exit_code(perch));
	H_ASSERT(harness_folded_load(&f, harness_fmt("%s/s.folded", dir)) == 0 && !f.nr_bad &&
		     f.total >= 60 && f.total <= 230,
		 "Ctrl-C: the last 2 s hold %lu samples", f.total);
	harness_folded_release(&f);
	assert_untouched(pid);
	free(dir);
}
END_TEST

/* Can @dir hold an unnamed file (O_TMPFILE)? Not every file system can (overlayfs before
 * Linux 6.6). */
static int tmpfile_works(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* --chunk 1: consecutive files whose samples add up to the summary's exactly (each sample in
 * one chunk), every .perch chunk a recording perch reads whole; a run killed with SIGKILL
 * leaves only whole chunks (and no temporary file where O_TMPFILE works). */
START_TEST(chunks)
{
	pid_t pid;
	char *dir = window_dir();
	const char *files[32];
	struct harness_proc *perch;
	unsigned long sum = 0;
	size_t n;

	start_target("stall", "30", &pid);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						harness_fmt("%d", (int)pid), "-d", "3.5", "--chunk",
						"1", "-o", harness_fmt("%s/c.folded", dir), "-o",
						harness_fmt("%s/c.perch", dir)));
	H_ASSERT(harness_proc_wait(perch, 30) == 0 && harness_proc_exit_code(perch) == 0,
		 "perch --chunk: exit %d", harness_proc_exit_code(perch));
	n = files_like(dir, "c.0", ".folded", files, 32);
	H_ASSERT(n >= 3 && n <= 5, "%zu chunks of 1 s in 3.5 s", n);
	for (size_t i = 0; i < n; i++) {
		struct harness_folded f;
		struct harness_proc *rep;

		H_ASSERT(!strcmp(files[i], harness_fmt("%s/c.%04zu.folded", dir, i)),
			 "chunk %zu is %s", i, files[i]);
		H_ASSERT(harness_folded_load(&f, files[i]) == 0 && !f.nr_bad && f.total,
			 "bad chunk %s", files[i]);
		sum += f.total;
		harness_folded_release(&f);
		rep = harness_spawn("report", HARNESS_ARGV(harness_perch(), "report",
							   harness_fmt("%s/c.%04zu.perch", dir, i),
							   "-o", "-"));
		H_ASSERT(harness_proc_wait(rep, 20) == 0 && harness_proc_exit_code(rep) == 0 &&
			     !strstr(rep->err.buf, "cut short"),
			 "perch report of chunk %zu: exit %d %s", i, harness_proc_exit_code(rep),
			 rep->err.buf);
	}
	H_ASSERT((long)sum == harness_summary_samples(perch->err.buf),
		 "the chunks hold %lu samples, the summary says %ld", sum,
		 harness_summary_samples(perch->err.buf));

	/* killed between chunks: what is there is whole */
	free(dir);
	dir = window_dir();
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d", (int)pid), "--chunk", "0.5",
						    "-o", harness_fmt("%s/k.perch", dir)));
	harness_sleep(2.5);
	harness_proc_kill(perch, SIGKILL);
	harness_proc_wait(perch, 10);
	n = files_like(dir, "k.", "", files, 32);
	H_ASSERT(n >= 2, "%zu files after 2.5 s of 0.5 s chunks", n);
	for (size_t i = 0, tmp = 0; i < n; i++) {
		struct harness_proc *rep;

		/* killed in the middle of writing one: never a torn chunk under the chunk's name.
		 * Written to an unnamed file (O_TMPFILE), it leaves nothing; on a file system
		 * without O_TMPFILE, its named temporary stays (and with one, the few
		 * microseconds between naming and renaming it are the only window) */
		if (strstr(files[i], ".tmp.")) {
			H_ASSERT(!tmp++ && !tmpfile_works(dir), "a temporary file was left: %s",
				 files[i]);
			continue;
		}
		rep = harness_spawn("report",
				    HARNESS_ARGV(harness_perch(), "report", files[i], "-o", "-"));
		H_ASSERT(harness_proc_wait(rep, 20) == 0 && harness_proc_exit_code(rep) == 0 &&
			     !strstr(rep->err.buf, "cut short"),
			 "chunk %s of a killed run: exit %d %s", files[i],
			 harness_proc_exit_code(rep), rep->err.buf);
	}
	assert_untouched(pid);
	free(dir);
}
END_TEST

START_TEST(stat_table)
{
	pid_t pid;
	struct harness_proc *perch;
	const char *s;
	double sum = 0;
	int tables = 0, rows = 0;

	start_target("duty", "20", &pid);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "stat", "-p",
					   harness_fmt("%d", (int)pid), "-i", "500", "-d", "3"));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch stat did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch stat exited %d",
		 harness_proc_exit_code(perch));
	harness_context_add("%s", perch->out.buf);
	for (s = perch->out.buf;
	     (s = strstr(s, harness_fmt("perch stat: %d (procstats)", (int)pid))); s++)
		tables++;
	H_ASSERT(tables >= 5 && tables <= 6, "%d tables in 3 s at 500 ms", tables);
	H_ASSERT(strstr(perch->out.buf, "memory: RSS "), "no memory line");
	/* the duty thread's row: "  TID  duty  S  CPU% ..."; the first second is left out of
	 * the average (the thread has just started: on a busy machine it starts behind) */
	for (s = perch->out.buf; (s = strstr(s, " duty ")); s++) {
		char state;
		double cpu;

		if (sscanf(s, " duty %c %lf", &state, &cpu) == 2) {
			H_ASSERT(strchr("RS", state), "duty thread in state %c", state);
			if (++rows > 2)
				sum += cpu;
		}
	}
	H_ASSERT(rows == tables, "%d rows of the duty thread in %d tables", rows, tables);
	sum /= rows - 2;
	check_duty("perch stat", sum, lifetime_cpu(pid, "duty"));
}
END_TEST

START_TEST(mem_breakdown)
{
	pid_t pid;
	struct harness_proc *p;
	char *golden;

	start_target("duty", "20", &pid);
	p = harness_spawn("perch",
			  HARNESS_ARGV(harness_perch(), "mem", "-p", harness_fmt("%d", (int)pid)));
	H_ASSERT(harness_proc_wait(p, 20) == 0 && harness_proc_exit_code(p) == 0,
		 "perch mem -p failed");
	harness_context_add("%s", p->out.buf);
	H_ASSERT(strstr(p->out.buf, "(linux rules, "), "not read with the Linux rules");
	H_ASSERT(strstr(p->out.buf, "  Native Heap ") && strstr(p->out.buf, "TOTAL PSS:") &&
		     strstr(p->out.buf, "     Stack "),
		 "rows missing from perch mem");
	p = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "mem", "-p",
						harness_fmt("%d", (int)pid), "--json"));
	H_ASSERT(harness_proc_wait(p, 20) == 0 && harness_proc_exit_code(p) == 0,
		 "perch mem -p --json failed");
	H_ASSERT(p->out.buf[0] == '{' && strstr(p->out.buf, "\"native_heap\""),
		 "perch mem --json: %s", p->out.buf);
	/* a saved smaps file gives exactly the unit suite's golden table */
	p = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "mem", "--smaps",
						"fixtures/smaps/small/smaps", "--json"));
	H_ASSERT(harness_proc_wait(p, 20) == 0 && harness_proc_exit_code(p) == 0,
		 "perch mem --smaps failed");
	golden = read_text("fixtures/golden/meminfo/small.json");
	H_ASSERT(!strcmp(p->out.buf, golden),
		 "perch mem --smaps --json differs from "
		 "fixtures/golden/meminfo/small.json:\n%s",
		 p->out.buf);
	free(golden);
	p = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "mem", "--smaps",
						"fixtures/android-meminfo/launcher/smaps",
						"--rules", "android-10"));
	H_ASSERT(harness_proc_wait(p, 20) == 0 && harness_proc_exit_code(p) == 0,
		 "perch mem --smaps --rules failed");
	golden = read_text("fixtures/golden/meminfo/android-launcher.txt");
	H_ASSERT(!strcmp(p->out.buf, golden), "perch mem --rules android-10 differs");
	free(golden);
	/* errors */
	p = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "mem", "--smaps", harness_tmpfile("missing")));
	H_ASSERT(harness_proc_wait(p, 20) == 0 && harness_proc_exit_code(p) == HARNESS_EXIT_FATAL,
		 "a missing smaps file: exit %d", harness_proc_exit_code(p));
	H_ASSERT(strstr(p->err.buf, "cannot read "), "no message: %s", p->err.buf);
	p = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "mem"));
	H_ASSERT(harness_proc_wait(p, 20) == 0 && harness_proc_exit_code(p) == HARNESS_EXIT_USAGE,
		 "perch mem without a source: exit %d", harness_proc_exit_code(p));
	p = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "stat", "-p", "2147483646"));
	H_ASSERT(harness_proc_wait(p, 20) == 0 && harness_proc_exit_code(p) == HARNESS_EXIT_FATAL,
		 "perch stat of no process: exit %d", harness_proc_exit_code(p));
}
END_TEST

/* --trigger stall:300 on a main thread awake every 10 ms between 500 ms blocks: every
 * off-CPU trigger is a block (the dump at the trigger shows block_500ms), never the 10-ms
 * sleeps, which once triggered as soon as 300 ms of them had passed. */
START_TEST(ring_ticks_trigger)
{
	pid_t pid;
	char *dir = window_dir();
	const char *dumps[16];
	struct harness_proc *perch;
	size_t nd, off = 0;

	start_target("stall-ticks", "30", &pid);
	perch = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "record", "-p", harness_fmt("%d", (int)pid),
				  "-d", "7", "--ring", "2", "--trigger", "stall:300",
				  "--trigger-max", "10", "-o", harness_fmt("%s/t.folded", dir)));
	H_ASSERT(harness_proc_wait(perch, 40) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch exited %d",
		 harness_proc_exit_code(perch));
	assert_untouched(pid);
	nd = files_like(dir, "-stall", "-threads.txt", dumps, 16);
	for (size_t i = 0; i < nd; i++) {
		char *dump = read_text(dumps[i]);

		harness_context_add("dump %s:\n%s\n", dumps[i], dump);
		if (strstr(dump, "had been off-cpu")) {
			H_ASSERT(strstr(dump, "block_500ms") && !strstr(dump, "tick_10ms"),
				 "an off-CPU trigger outside the 500 ms blocks: %s", dumps[i]);
			off++;
		}
		free(dump);
	}
	/* blocks at 0, 2, 4, 6 s after ready (the first may be under way at the attach) */
	H_ASSERT(off >= 2 && off <= 4, "%zu off-CPU triggers in 7 s (want the 2-4 blocks)", off);
	free(dir);
}
END_TEST

Suite *procstats_suite(void)
{
	Suite *s = suite_create("e2e-procstats");
	TCase *tc = tcase_create("record");

	harness_tcase_init(tc, 40);
	tcase_add_test(tc, duty_cycle_cpu);
	tcase_add_test(tc, allocation_shows_in_memory);
	tcase_add_test(tc, main_thread_stalls);
	tcase_add_test(tc, main_thread_ticks_no_stall);
	suite_add_tcase(s, tc);
	tc = tcase_create("windows");
	harness_tcase_init(tc, 60);
	tcase_add_test(tc, ring_stall_trigger);
	tcase_add_test(tc, ring_ticks_trigger);
	tcase_add_test(tc, ring_signal_trigger);
	tcase_add_test(tc, chunks);
	suite_add_tcase(s, tc);
	tc = tcase_create("commands");
	harness_tcase_init(tc, 30);
	tcase_add_test(tc, stat_table);
	tcase_add_test(tc, mem_breakdown);
	suite_add_tcase(s, tc);
	return s;
}
