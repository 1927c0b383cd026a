/* Unit tests for the timeline arithmetic and its profile counters: readings built from the
 * real /proc captures in fixtures/cpustat and fixtures/smaps, or synthetic ones where the
 * expected percentages are worked out by hand; the Chrome and Sentry writers must show the
 * counters the timeline stores. No live /proc. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/out/writers.h"
#include "perch/proc/cpustat.h"
#include "perch/proc/meminfo.h"
#include "perch/proc/proc-smaps.h"
#include "perch/proc/timeline.h"
#include "perch/profile/profile.h"
#include "perch/profile/recording.h"
#include "testutil.h"

#define SEC 1000000000ULL

static void load_task(const char *rel, struct proc_stat *ps)
{
	char *text = testutil_fixture_text(rel, NULL);

	ck_assert_int_eq(proc_stat_parse(text, ps), 0);
	free(text);
}

static struct timeline *new_timeline(unsigned int ncpus)
{
	struct timeline_opts o = {.pid = 1211,
				  .cpu_interval_ms = 100,
				  .mem_interval_ms = 1000,
				  .clk_tck = 100,
				  .ncpus = ncpus};

	return timeline_new(&o);
}

/* The busy loop of fixtures/cpustat (118 ticks in 2.008 s, pinned to one CPU, while the host
 * was busy). */
START_TEST(test_fixture_busy_loop)
{
	struct timeline *tl = new_timeline(2);
	struct timeline_reading a = {0}, b = {0};
	struct timeline_cpu_figures cf;
	struct cpustat sa, sb;
	char *wall = testutil_fixture_text("cpustat/wall_ns", NULL);
	char *pa = testutil_fixture_path("cpustat/stat-a"),
	     *pb = testutil_fixture_path("cpustat/stat-b");
	double want = 100.0 * 118 / 200.8316448;

	ck_assert_int_eq(cpustat_load_file(pa, &sa), 0);
	ck_assert_int_eq(cpustat_load_file(pb, &sb), 0);
	a.time_ns = 5 * SEC;
	b.time_ns = a.time_ns + strtoull(wall, NULL, 10);
	load_task("cpustat/task-a", &a.proc);
	load_task("cpustat/task-b", &b.proc);
	a.sys = sa.all;
	b.sys = sb.all;
	a.has_sys = b.has_sys = 1;
	/* the single-threaded shell: its only task is itself */
	a.tasks = &a.proc;
	b.tasks = &b.proc;
	a.nr_tasks = b.nr_tasks = 1;
	timeline_add_cpu(tl, &a);
	timeline_cpu_figures(tl, &cf);
	ck_assert_uint_eq(cf.points, 0); /* one reading: no interval yet */
	timeline_add_cpu(tl, &b);
	timeline_cpu_figures(tl, &cf);
	ck_assert_uint_eq(cf.points, 1);
	ck_assert_double_eq_tol(cf.avg, want, 0.01);
	ck_assert_double_eq_tol(cf.peak, want, 0.01);
	ck_assert_double_eq_tol(cf.avg_all, want / 2, 0.01);
	ck_assert_double_eq_tol(cf.sys_avg, 100, 0.01); /* no idle time in the capture */
	ck_assert_double_eq_tol(timeline_thread_cpu(tl, 1211), want, 0.01);
	ck_assert_double_eq(timeline_thread_cpu(tl, 42), -1);
	cpustat_release(&sa);
	cpustat_release(&sb);
	free(pa);
	free(pb);
	free(wall);
	timeline_free(tl);
}
END_TEST

/* A synthetic process of three threads over three readings one second apart (100 ticks/s):
 * 1000 main: 0 then 0 ticks; 1001 "work er": 50 then 80 (50%, 80%); 1002: 0, then a new
 * thread with the same tid (other starttime) appears. */
static void make_reading(struct timeline_reading *r, int i)
{
	static const uint64_t work[] = {10, 60, 140};
	struct proc_stat *t;

	memset(r, 0, sizeof(*r));
	r->time_ns = (uint64_t)(10 + i) * SEC;
	r->proc = (struct proc_stat){
	    .pid = 1000, .state = 'S', .starttime = 5, .utime = work[i] + 3, .stime = 2};
	snprintf(r->proc.comm, sizeof(r->proc.comm), "app");
	r->tasks = t = xcalloc(3, sizeof(*t));
	r->nr_tasks = 3;
	t[0] = (struct proc_stat){.pid = 1000, .state = 'S', .starttime = 5, .utime = 3};
	t[1] = (struct proc_stat){.pid = 1001, .state = 'R', .starttime = 6, .utime = work[i]};
	t[2] = (struct proc_stat){.pid = 1002, .state = 'S', .starttime = i < 2 ? 7 : 9};
	snprintf(t[0].comm, sizeof(t[0].comm), "app");
	snprintf(t[1].comm, sizeof(t[1].comm), "work er");
	snprintf(t[2].comm, sizeof(t[2].comm), "idle");
}

static struct timeline *synthetic(void)
{
	struct timeline *tl = new_timeline(4);

	for (int i = 0; i < 3; i++) {
		struct timeline_reading r;

		make_reading(&r, i);
		timeline_add_cpu(tl, &r);
		timeline_reading_release(&r);
	}
	return tl;
}

START_TEST(test_synthetic_threads)
{
	struct timeline *tl = synthetic();
	struct timeline_cpu_figures cf;

	timeline_cpu_figures(tl, &cf);
	ck_assert_uint_eq(cf.points, 2);
	ck_assert_double_eq_tol(cf.avg, 65, 1e-9);
	ck_assert_double_eq_tol(cf.peak, 80, 1e-9);
	ck_assert_double_eq_tol(cf.avg_all, 65.0 / 4, 1e-9);
	ck_assert(isnan(cf.sys_avg)); /* no /proc/stat in these readings */
	ck_assert_double_eq_tol(timeline_thread_cpu(tl, 1001), 65, 1e-9);
	ck_assert_double_eq_tol(timeline_thread_cpu(tl, 1000), 0, 1e-9);
	/* the reused tid started over at the last reading: nothing to average yet */
	ck_assert_double_eq(timeline_thread_cpu(tl, 1002), -1);
	timeline_free(tl);
}
END_TEST

/* A reading without its task list (the process was exiting while it was read) still gives the
 * process's CPU; the next full reading starts its threads over. Under UBSan this once was a
 * memcpy from NULL. */
START_TEST(test_reading_without_tasks)
{
	struct timeline *tl = new_timeline(4);
	struct timeline_reading r;
	struct timeline_cpu_figures cf;

	make_reading(&r, 0);
	timeline_add_cpu(tl, &r);
	timeline_reading_release(&r);
	make_reading(&r, 1);
	free(r.tasks);
	r.tasks = NULL;
	r.nr_tasks = 0;
	timeline_add_cpu(tl, &r);
	make_reading(&r, 2);
	timeline_add_cpu(tl, &r);
	timeline_reading_release(&r);
	timeline_cpu_figures(tl, &cf);
	ck_assert_uint_eq(cf.points, 2);
	ck_assert_double_eq_tol(cf.peak, 80, 1e-9);
	timeline_free(tl);
}
END_TEST

START_TEST(test_store_counters)
{
	struct timeline *tl = synthetic();
	struct profile *p = profile_new();
	const char *list;

	profile_set_meta(p, "counters", "earlier");
	timeline_store(tl, p);
	list = profile_meta(p, "counters");
	ck_assert_ptr_nonnull(list);
	/* what was there stays; threads that never ran have no counter; names sanitized */
	ck_assert_str_eq(list,
			 "earlier cpu_usage cpu_usage_all_cores thread_cpu_usage.1001.work_er");
	ck_assert_str_eq(profile_meta(p, "counter:cpu_usage"),
			 "10000000000=50.00 11000000000=80.00");
	ck_assert_str_eq(profile_meta(p, "counter:cpu_usage_all_cores"),
			 "10000000000=12.50 11000000000=20.00");
	ck_assert_str_eq(profile_meta(p, "counter:thread_cpu_usage.1001.work_er"),
			 "10000000000=50.00 11000000000=80.00");
	ck_assert_ptr_null(profile_meta(p, "counter:system_cpu_usage"));
	ck_assert_str_eq(profile_meta(p, "cpu_interval_ms"), "100");
	profile_free(p);
	timeline_free(tl);
}
END_TEST

static struct proc_smaps *fixture_smaps(const char *rel)
{
	char *path = testutil_fixture_path("%s", rel);
	struct proc_smaps *s = proc_smaps_load_file(path);

	ck_assert_msg(s, "cannot load %s", path);
	free(path);
	return s;
}

/* Add the memory reading of the real capture fixtures/@dir (smaps and smaps_rollup) at @t. */
static void add_capture(struct timeline *tl, const char *dir, uint64_t t)
{
	char *rel = xasprintf("%s/smaps", dir);
	char *rpath = testutil_fixture_path("%s/smaps_rollup", dir);
	struct proc_smaps *s = fixture_smaps(rel);
	struct proc_smaps_rollup ro;
	struct timeline_mem m;
	struct meminfo mi;

	ck_assert_int_eq(proc_smaps_rollup_load_file(rpath, &ro), 0);
	meminfo_compute(s, MEMINFO_RULES_AUTO, &mi);
	timeline_mem_from(&ro.u, s, &mi, t, &m);
	timeline_add_mem(tl, &m);
	proc_smaps_free(s);
	free(rel);
	free(rpath);
}

/* Two memory readings of real captures: small, then malloc50 (50 MB malloc'ed and touched). */
static struct timeline *with_memory(void)
{
	struct timeline *tl = new_timeline(2);

	add_capture(tl, "smaps/small", 20 * SEC);
	add_capture(tl, "smaps/malloc50", 21 * SEC);
	return tl;
}

START_TEST(test_memory)
{
	struct timeline *tl = with_memory();
	struct profile *p = profile_new();
	const struct timeline_mem *m;
	struct timeline_mem alone;
	struct proc_smaps *s = fixture_smaps("smaps/malloc50/smaps");
	size_t n;

	m = timeline_mem_points(tl, &n);
	ck_assert_uint_eq(n, 2);
	/* malloc50's rollup: Rss 52684 kB, Pss 51405, Private_Dirty 51316, Swap 0 */
	ck_assert_uint_eq(m[1].rss, 52684ULL * 1024);
	ck_assert_uint_eq(m[1].pss, 51405ULL * 1024);
	ck_assert_uint_eq(m[1].uss, 51316ULL * 1024);
	ck_assert_uint_eq(m[1].swap, 0);
	/* its App Summary (fixtures/golden/meminfo/malloc50.txt): Native Heap 51224, Code 80 */
	ck_assert_int_eq(m[1].has_summary, 1);
	ck_assert_uint_eq(m[1].cat[1], 51224ULL * 1024);
	ck_assert_uint_eq(m[1].cat[2], 80ULL * 1024);
	ck_assert_uint_gt(m[1].cat[1], m[0].cat[1] + 50ULL * 1000 * 1000);
	/* without a rollup: the smaps totals, no categories */
	timeline_mem_from(NULL, s, NULL, 7, &alone);
	ck_assert_uint_eq(alone.rss, s->total.rss * 1024);
	ck_assert_int_eq(alone.has_summary, 0);
	proc_smaps_free(s);

	timeline_store(tl, p);
	ck_assert_str_eq(profile_meta(p, "counters"),
			 "rss_bytes pss_bytes uss_bytes swap_bytes native_heap_bytes code_bytes "
			 "stack_bytes system_bytes");
	/* categories that stayed 0 (Java heap, graphics, private other) have no counter */
	ck_assert_ptr_null(profile_meta(p, "counter:java_heap_bytes"));
	ck_assert_str_eq(profile_meta(p, "counter:native_heap_bytes"),
			 "20000000000=20480 21000000000=52453376");
	profile_free(p);
	timeline_free(tl);
}
END_TEST

/* The writers pick the stored counters up: Chrome "C" events, Sentry measurements. */
START_TEST(test_writers_show_counters)
{
	struct timeline *tl = with_memory();
	struct timeline *cpu = synthetic();
	struct profile *p = profile_new();
	char *chrome, *sentry;

	profile_set_meta(p, "pid", "1000");
	profile_set_meta(p, "start_time_ns", "1700000000000000000");
	profile_thread(p, 1000, "app");
	timeline_store(cpu, p);
	timeline_store(tl, p);
	chrome = testutil_render(out_chrome_write, p, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(chrome,
				     "{\"ph\": \"C\", \"name\": \"cpu_usage\", \"pid\": 1000, "
				     "\"ts\": 0.000, \"args\": {\"value\": 50}}"));
	ck_assert_ptr_nonnull(strstr(chrome, "\"name\": \"native_heap_bytes\""));
	ck_assert_ptr_nonnull(strstr(chrome, "\"name\": \"thread_cpu_usage.1001.work_er\""));
	sentry = testutil_render(out_sentry_write, p, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(sentry, "\"cpu_usage\": {\"unit\": \"percent\""));
	ck_assert_ptr_nonnull(strstr(sentry, "\"memory_footprint\": {\"unit\": \"byte\""));
	ck_assert_ptr_nonnull(strstr(sentry, "\"memory_native_footprint\": {\"unit\": \"byte\""));
	ck_assert_ptr_nonnull(strstr(sentry, "\"value\": 52453376"));
	free(chrome);
	free(sentry);
	profile_free(p);
	timeline_free(tl);
	timeline_free(cpu);
}
END_TEST

static void drain_to(void *arg, const char *key, const char *text)
{
	recording_meta_add(arg, key, text);
}

/* Readings and memory points into @tl, drained into @w after each reading when @w is set. */
static void feed(struct timeline *tl, struct recording_writer *w, struct profile *p)
{
	static const char *const cases[] = {"smaps/small", "smaps/malloc50"};

	for (int i = 0; i < 3; i++) {
		struct timeline_reading r;

		make_reading(&r, i);
		timeline_add_cpu(tl, &r);
		timeline_reading_release(&r);
		if (i < 2)
			add_capture(tl, cases[i], (uint64_t)(10 + i) * SEC);
		if (w) {
			timeline_drain(tl, drain_to, w);
			ck_assert_int_eq(recording_flush(w, p), 0);
		}
	}
}

/* A timeline streamed to a recording piece by piece (TIMELINE_POINTS_DRAIN) reads back with
 * the very meta a timeline kept whole gives: every counter, the list, its order. */
START_TEST(test_drain_same_as_kept)
{
	struct timeline_opts o = {.pid = 1211,
				  .cpu_interval_ms = 100,
				  .mem_interval_ms = 1000,
				  .clk_tck = 100,
				  .ncpus = 4};
	struct timeline *kept = timeline_new(&o), *drained;
	struct profile *a = profile_new(), *b = profile_new(), *back = NULL;
	char dir[] = "/tmp/perch-tl-XXXXXX";
	struct recording_info info;
	struct recording_writer *w;
	const char *key, *value;
	char *path;
	size_t n = 0;

	o.points = TIMELINE_POINTS_DRAIN;
	drained = timeline_new(&o);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	path = xasprintf("%s/t.perch", dir);
	w = recording_create(path);
	ck_assert_ptr_nonnull(w);
	feed(kept, NULL, a);
	timeline_store(kept, a);
	feed(drained, w, b);
	/* nothing is kept once drained: the points are in the file */
	timeline_drain(drained, drain_to, w);
	timeline_store(drained, b);
	ck_assert_ptr_null(profile_meta(b, "counter:cpu_usage"));
	ck_assert_int_eq(recording_close(w, b), 0);
	ck_assert_int_eq(recording_read(path, &back, &info), 0);
	ck_assert_int_eq(info.complete, 1);
	for (size_t i = 0; (key = profile_meta_at(a, i, &value)); i++, n++)
		ck_assert_msg(profile_meta(back, key) && !strcmp(profile_meta(back, key), value),
			      "%s: kept '%s', streamed '%s'", key, value,
			      profile_meta(back, key) ? profile_meta(back, key) : "(none)");
	ck_assert_uint_eq(n, profile_nr_meta(back));
	ck_assert_ptr_nonnull(strstr(profile_meta(back, "counters"), "thread_cpu_usage.1001"));
	ck_assert_ptr_nonnull(strstr(profile_meta(back, "counters"), "native_heap_bytes"));
	unlink(path);
	rmdir(dir);
	free(path);
	profile_free(a);
	profile_free(b);
	profile_free(back);
	timeline_free(kept);
	timeline_free(drained);
}
END_TEST

/* TIMELINE_POINTS_NONE keeps no point, only the summary's figures. */
START_TEST(test_points_none)
{
	struct timeline_opts o = {.pid = 1211,
				  .cpu_interval_ms = 100,
				  .mem_interval_ms = 1000,
				  .clk_tck = 100,
				  .ncpus = 4,
				  .points = TIMELINE_POINTS_NONE};
	struct timeline *tl = timeline_new(&o);
	struct timeline_cpu_figures cf;
	struct profile *p = profile_new();

	feed(tl, NULL, p);
	timeline_cpu_figures(tl, &cf);
	ck_assert_uint_eq(cf.points, 2);
	ck_assert_double_eq_tol(cf.avg, 65, 1e-9);
	timeline_store(tl, p);
	ck_assert_ptr_null(profile_meta(p, "counters"));
	ck_assert_ptr_null(profile_meta(p, "counter:cpu_usage"));
	ck_assert_str_eq(profile_meta(p, "cpu_interval_ms"), "100");
	profile_free(p);
	timeline_free(tl);
}
END_TEST

static char *summary_of(const struct timeline *tl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	timeline_print_summary(tl, "perch: ", 10, f);
	fclose(f);
	return buf;
}

START_TEST(test_summary)
{
	struct timeline *tl = synthetic();
	char *text;

	for (int i = 0; i < 30; i++)
		timeline_note_state(tl, 1001, 'R', 1);
	for (int i = 0; i < 10; i++)
		timeline_note_state(tl, 1001, 'S', 1);
	timeline_note_state(tl, 1000, 'D', 3);
	timeline_note_state(tl, 1000, 't', 1);
	timeline_note_state(tl, 1005, 'S', 1); /* sampled, never in a CPU reading */
	text = summary_of(tl);
	ck_assert_msg(strstr(text, "CPU: process avg 65.0%, peak 80.0% of one core (avg 16.2% of 4 "
				   "cores) (2 readings every 100 ms)"),
		      "%s", text);
	/* by CPU: the worker first; states as shares of the thread's samples */
	/* 't' (a stopped tracee) is shown as T, stopped: the column a user expects */
	ck_assert_msg(strstr(text,
			     "perch:        1001  work er            65.0   75.0   25.0    0.0"
			     "    0.0    0.0\n"
			     "perch:        1000  app                 0.0    0.0    0.0   75.0"
			     "   25.0    0.0\n"
			     "perch:        1002  idle                  -      -      -      -"
			     "      -      -\n"
			     "perch:        1005                        -    0.0  100.0    0.0"
			     "    0.0    0.0\n"),
		      "%s", text);
	free(text);
	timeline_free(tl);

	tl = with_memory();
	text = summary_of(tl);
	ck_assert_msg(strstr(text, "  RSS                   1.2       51.4       51.4\n"), "%s",
		      text);
	ck_assert_msg(strstr(text, "  Native Heap           0.0       50.0       50.0\n"), "%s",
		      text);
	/* categories that stayed empty are left out */
	ck_assert_msg(!strstr(text, "Java Heap"), "%s", text);
	free(text);
	timeline_free(tl);
}
END_TEST

START_TEST(test_smaps_every)
{
	/* cheap reads: every reading, whatever the interval */
	ck_assert_uint_eq(timeline_smaps_every(0, 1000), 1);
	ck_assert_uint_eq(timeline_smaps_every(600000, 1000), 1);
	ck_assert_uint_eq(timeline_smaps_every(5000000, 100), 1);
	/* 20 ms at 1 s: 0.5% of a CPU is 5 ms a second, so one read in 4; at 200 ms one in 20 */
	ck_assert_uint_eq(timeline_smaps_every(20000000, 1000), 4);
	ck_assert_uint_eq(timeline_smaps_every(20000001, 1000), 5);
	ck_assert_uint_eq(timeline_smaps_every(20000000, 200), 20);
	/* 270 ms (20000 mappings) at 1 s: one in 54; slower still: at most one in 60 */
	ck_assert_uint_eq(timeline_smaps_every(270000000, 1000), 54);
	ck_assert_uint_eq(timeline_smaps_every(2000000000, 1000), 60);
	ck_assert_uint_eq(timeline_smaps_every(20000000, 0), 1);
}
END_TEST

Suite *timeline_suite(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("cpu");

	tcase_add_test(tc, test_fixture_busy_loop);
	tcase_add_test(tc, test_synthetic_threads);
	tcase_add_test(tc, test_reading_without_tasks);
	tcase_add_test(tc, test_store_counters);
	suite_add_tcase(s, tc);
	tc = tcase_create("memory");
	tcase_add_test(tc, test_memory);
	tcase_add_test(tc, test_smaps_every);
	tcase_add_test(tc, test_writers_show_counters);
	tcase_add_test(tc, test_summary);
	tcase_add_test(tc, test_drain_same_as_kept);
	tcase_add_test(tc, test_points_none);
	suite_add_tcase(s, tc);
	return s;
}
