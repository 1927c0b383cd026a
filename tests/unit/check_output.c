/* Unit tests for the writers (folded, top) on a synthetic profile, against golden files in
 * fixtures/golden/, and for atomic output files.
 *
 * Golden files: run with PERCH_UPDATE_GOLDEN=1 to (re)write them instead of comparing, e.g.
 *   PERCH_UPDATE_GOLDEN=1 CK_RUN_SUITE=output build/tests/unit/run
 * then review the diff like code. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/out/output.h"
#include "perch/proc/proc-task.h"
#include "perch/profile/profile.h"
#include "testutil.h"

/* The synthetic profile, built in code so the expected output is known by construction.
 * Stacks are leaf first; "S1 x70" means 70 samples. */
static struct profile *build_profile(void)
{
	struct profile *p = profile_new();
	uint32_t demo = profile_intern_str(p, "/usr/bin/demo");
	uint32_t libc = profile_intern_str(p, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t jit = profile_intern_str(p, "/memfd:jit-cache");
	uint32_t compute_c = profile_intern_str(p, "/src/demo/compute.c");
	struct profile_frame f;
	struct profile_frame inl[2];
	uint32_t l_start, l_libc, l_main, l_ca, l_cb, l_cc, l_memcpy, l_worker, l_read, l_weird;
	uint32_t l_digits, l_jit, l_interp, l_noname, l_noframes, l_rec1, l_rec2;
	uint32_t t1, t2, t3, t4;
	int i;

#define FRAME(name_, file_, line_, module_, kind_)                                                 \
	(memset(&f, 0, sizeof(f)), f.name = profile_intern_str(p, name_),                          \
	 f.file = profile_intern_str(p, file_), f.line = line_, f.module = module_,                \
	 f.kind = kind_, &f)
#define LOC(module_, addr_, frame_) profile_intern_location(p, module_, addr_, frame_, 1)
#define STACK(...)                                                                                 \
	({                                                                                         \
		uint32_t s_[] = {__VA_ARGS__};                                                     \
		profile_intern_stack(p, s_, ARRAY_SIZE(s_));                                       \
	})
#define SAMPLES(thread_, stack_, n_)                                                               \
	for (i = 0; i < (n_); i++)                                                                 \
	profile_add_sample(p, thread_, stack_, 0, 'R')

	l_start = LOC(demo, 0x1040, FRAME("_start", "", 0, demo, PROFILE_FRAME_NATIVE));
	l_libc =
	    LOC(libc, 0x27200,
		FRAME("__libc_start_main", "../csu/libc-start.c", 360, libc, PROFILE_FRAME_NATIVE));
	l_main =
	    LOC(demo, 0x1150, FRAME("main", "/src/demo/main.c", 20, demo, PROFILE_FRAME_NATIVE));
	/* compute with helper() inlined into it: innermost first */
	memset(inl, 0, sizeof(inl));
	inl[0].name = profile_intern_str(p, "helper");
	inl[0].file = profile_intern_str(p, "/src/demo/util.h");
	inl[0].line = 5;
	inl[0].module = demo;
	inl[0].inlined = 1;
	inl[1].name = profile_intern_str(p, "compute");
	inl[1].file = compute_c;
	inl[1].line = 30;
	inl[1].module = demo;
	l_ca = profile_intern_location(p, demo, 0x1200, inl, 2);
	/* two addresses on the same line of compute: print the same text, merged */
	l_cb = LOC(demo, 0x1210,
		   FRAME("compute", "/src/demo/compute.c", 31, demo, PROFILE_FRAME_NATIVE));
	l_cc = LOC(demo, 0x1214,
		   FRAME("compute", "/src/demo/compute.c", 31, demo, PROFILE_FRAME_NATIVE));
	l_memcpy = LOC(libc, 0x9a000, FRAME("memcpy", "", 0, libc, PROFILE_FRAME_NATIVE));
	l_worker = LOC(demo, 0x1300,
		       FRAME("worker", "/src/demo/worker.c", 12, demo, PROFILE_FRAME_NATIVE));
	l_read =
	    LOC(0, 0xffffffff81000000ULL, FRAME("__x64_sys_read", "", 0, 0, PROFILE_FRAME_KERNEL));
	l_weird =
	    LOC(demo, 0x1400, FRAME("odd;name\nwith\rcontrol", "", 0, demo, PROFILE_FRAME_NATIVE));
	l_digits = LOC(demo, 0x1500,
		       FRAME("operator new 12", "/src/demo/new.cc", 7, demo, PROFILE_FRAME_NATIVE));
	l_jit = LOC(jit, 0x9debc100,
		    FRAME("com.example.Foo.bar(int)", "Foo.java", 88, jit, PROFILE_FRAME_JIT));
	l_interp =
	    LOC(0, 0x7000, FRAME("com.example.Foo.baz()", "Foo.java", 91, 0, PROFILE_FRAME_INTERP));
	l_noname = LOC(demo, 0x1600, FRAME("", "", 0, demo, PROFILE_FRAME_NATIVE));
	l_noframes = profile_intern_location(p, libc, 0x1234, NULL, 0);
	l_rec1 =
	    LOC(demo, 0x1700, FRAME("recurse", "/src/demo/rec.c", 3, demo, PROFILE_FRAME_NATIVE));
	l_rec2 =
	    LOC(demo, 0x1710, FRAME("recurse", "/src/demo/rec.c", 4, demo, PROFILE_FRAME_NATIVE));

	t1 = profile_thread(p, 1234, "perch demo");
	t2 = profile_thread(p, 1240, "worker;1");
	t3 = profile_thread(p, 1250, "gc");
	t4 = profile_thread(p, 1260, "");

	SAMPLES(t1, STACK(l_ca, l_main, l_libc, l_start), 70);
	SAMPLES(t1, STACK(l_memcpy, l_ca, l_main, l_libc, l_start), 10);
	SAMPLES(t1, STACK(l_cb, l_main, l_libc, l_start), 5);
	SAMPLES(t1, STACK(l_cc, l_main, l_libc, l_start), 3);
	SAMPLES(t1, STACK(l_noname, l_main), 1);
	SAMPLES(t1, STACK(l_rec1, l_rec2, l_rec1, l_main, l_libc, l_start), 7);
	SAMPLES(t2, STACK(l_read, l_worker), 15);
	SAMPLES(t2, STACK(l_noframes, l_worker), 5);
	SAMPLES(t2, STACK(l_digits, l_weird, l_main), 2);
	SAMPLES(t3, STACK(l_interp, l_jit, l_worker), 4);
	SAMPLES(t3, profile_intern_stack(p, NULL, 0), 6);
	SAMPLES(t4, STACK(l_ca, l_main, l_libc, l_start), 1);
#undef FRAME
#undef LOC
#undef STACK
#undef SAMPLES
	return p;
}

#define DEMO_TOTAL 129

/* The folded grammar of docs/design/formats.md 1.6, line by line, plus sortedness and the total. */
static void check_folded_rules(const char *text, uint64_t total)
{
	regex_t re;
	char *copy = xstrdup(text), *line, *save = NULL, *prev = NULL;
	uint64_t sum = 0;

	ck_assert_int_eq(regcomp(&re, "^[^;]+(;[^;]+)+ [1-9][0-9]*$", REG_EXTENDED | REG_NOSUB), 0);
	ck_assert(text[0] && text[strlen(text) - 1] == '\n');
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *q;

		ck_assert_msg(!regexec(&re, line, 0, NULL, 0), "bad folded line: %s", line);
		ck_assert_ptr_null(strstr(line, ";;"));
		ck_assert_ptr_null(strchr(line, '\r'));
		/* the stack text must not itself end in " <digits>" */
		for (q = sp; q > line && q[-1] >= '0' && q[-1] <= '9'; q--)
			;
		ck_assert_msg(q == sp || q == line || q[-1] != ' ', "ambiguous count: %s", line);
		sum += strtoull(sp + 1, NULL, 10);
		*sp = '\0';
		if (prev)
			ck_assert_msg(strcmp(prev, line) < 0, "not sorted or not merged: %s", line);
		prev = line;
	}
	ck_assert_uint_eq(sum, total);
	regfree(&re);
	free(copy);
}

START_TEST(test_folded_golden)
{
	struct profile *p = build_profile();
	struct output_opts o = {0};
	char *text;

	ck_assert_uint_eq(profile_total_samples(p), DEMO_TOTAL);
	text = testutil_render(out_folded_write, p, &o, NULL);
	check_folded_rules(text, DEMO_TOTAL);
	/* the rules that matter most, spelled out besides the golden file */
	ck_assert_ptr_nonnull(strstr(text, "\nperch_demo-1234;_start;__libc_start_main;main;"
					   "compute;helper 70\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nperch_demo-1234;_start;__libc_start_main;main;"
					   "compute 8\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nworker_1-1240;worker;__x64_sys_read_[k] 15\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nworker_1-1240;worker;[libc.so.6+0x1234] 5\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nworker_1-1240;main;odd_name_with_control;"
					   "operator new 12_ 2\n"));
	/* JIT "_[j]", interpreted "_[0]" (docs/design/formats.md 1.4) */
	ck_assert_ptr_nonnull(strstr(text, "gc-1250;worker;com.example.Foo.bar(int)_[j];"
					   "com.example.Foo.baz()_[0] 4\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ngc-1250;[no stack] 6\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nperch_demo-1234;main;[unknown] 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "[unknown]-1260;_start;"));
	testutil_check_golden("folded/demo.folded", text, strlen(text));
	free(text);
	profile_free(p);
}
END_TEST

START_TEST(test_folded_lines_golden)
{
	struct profile *p = build_profile();
	struct output_opts o = {.lines = 1};
	char *text = testutil_render(out_folded_write, p, &o, NULL);

	check_folded_rules(text, DEMO_TOTAL);
	/* inlined helper is its own frame, file basenames only, merged line-31 addresses */
	ck_assert_ptr_nonnull(strstr(text, ";main (main.c:20);compute (compute.c:30);"
					   "helper (util.h:5) 70\n"));
	ck_assert_ptr_nonnull(strstr(text, ";main (main.c:20);compute (compute.c:31) 8\n"));
	ck_assert_ptr_nonnull(strstr(text, ";__libc_start_main (libc-start.c:360);"));
	ck_assert_ptr_nonnull(strstr(text, "com.example.Foo.bar(int) (Foo.java:88)_[j];"));
	/* frames without a file get no location */
	ck_assert_ptr_nonnull(strstr(text, "perch_demo-1234;_start;"));
	testutil_check_golden("folded/demo-lines.folded", text, strlen(text));
	free(text);
	profile_free(p);
}
END_TEST

START_TEST(test_folded_empty)
{
	struct profile *p = profile_new();
	char *text = testutil_render(out_folded_write, p, NULL, NULL);

	ck_assert_str_eq(text, "");
	free(text);
	profile_free(p);
}
END_TEST

/* Names that are only dangerous characters, a thread that only has spaces. */
START_TEST(test_folded_cleaning)
{
	struct profile *p = profile_new();
	struct profile_frame f = {0};
	uint32_t loc[2], t;
	char *text;

	f.name = profile_intern_str(p, ";");
	loc[1] = profile_intern_location(p, 0, 1, &f, 1);
	f.name = profile_intern_str(p, "x 1 2");
	loc[0] = profile_intern_location(p, 0, 2, &f, 1);
	t = profile_thread(p, 7, "a b\tc");
	profile_add_sample(p, t, profile_intern_stack(p, loc, 2), 0, 0);
	f.name = profile_intern_str(p, "12");
	loc[0] = profile_intern_location(p, 0, 3, &f, 1); /* digits, but no space before */
	profile_add_sample(p, t, profile_intern_stack(p, loc, 2), 0, 0);
	text = testutil_render(out_folded_write, p, NULL, NULL);
	ck_assert_str_eq(text, "a_b_c-7;_;12 1\n"
			       "a_b_c-7;_;x 1 2_ 1\n");
	check_folded_rules(text, 2);
	free(text);
	profile_free(p);
}
END_TEST

START_TEST(test_top_golden)
{
	struct profile *p = build_profile();
	struct output_opts o = {0};
	char *text = testutil_render(out_top_write, p, &o, NULL);

	ck_assert_ptr_nonnull(strstr(text, "total samples: 129\n"));
	/* helper: leaf of 70 + 1 samples; 71/129 = 55.0% */
	ck_assert_ptr_nonnull(strstr(text, "   55.0    62.8        71        81  helper (demo)\n"));
	/* recursion counted once per sample in total: 7 samples, 3 recurse frames */
	ck_assert_ptr_nonnull(
	    strstr(text, "    5.4     5.4         7         7  recurse (demo)\n"));
	ck_assert_ptr_nonnull(strstr(text, "    4.7     4.7         6         6  [no stack]\n"));
	ck_assert_ptr_nonnull(strstr(text, "  [unknown] (libc.so.6)\n"));
	testutil_check_golden("top/demo.txt", text, strlen(text));
	free(text);

	o.top = 3;
	text = testutil_render(out_top_write, p, &o, NULL);
	testutil_check_golden("top/demo-top3.txt", text, strlen(text));
	free(text);
	profile_free(p);
}
END_TEST

START_TEST(test_top_empty)
{
	struct profile *p = profile_new();
	char *text = testutil_render(out_top_write, p, NULL, NULL);

	ck_assert_str_eq(text, "total samples: 0\n");
	free(text);
	profile_free(p);
}
END_TEST

/* A write error reaches the caller as -errno. */
START_TEST(test_write_error)
{
	struct profile *p = build_profile();
	FILE *f = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(out_folded_write(p, NULL, f), -ENOSPC);
	fclose(f);
	f = fopen("/dev/full", "w");
	ck_assert_int_eq(out_top_write(p, NULL, f), -ENOSPC);
	fclose(f);
	profile_free(p);
}
END_TEST

/* atomic output */

static int exists(const char *path)
{
	struct stat sb;

	return !lstat(path, &sb);
}

/* Nothing but @keep is left in the temporary directory (no "*.tmp.*"). */
static int nr_entries(const char *dir)
{
	char *cmd = xasprintf("ls -A '%s' | wc -l", dir);
	FILE *f = popen(cmd, "r");
	int n = -1;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &n), 1);
	pclose(f);
	free(cmd);
	return n;
}

START_TEST(test_atomic_commit)
{
	char *path = testutil_tmp_path("out.folded"), *tmp, *text;
	struct output_file of;
	struct stat sb;
	mode_t mask;

	ck_assert_int_eq(output_open(&of, path), 0);
	tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	ck_assert_str_eq(of.tmp, tmp);
	/* nothing visible before the commit: an unnamed file (O_TMPFILE), or the named
	 * temporary where the file system has no O_TMPFILE */
	ck_assert_int_eq(exists(tmp), !of.anon);
	ck_assert_int_eq(nr_entries(testutil_tmp), !of.anon);
	ck_assert(!exists(path));
	fputs("a;b 1\n", of.f);
	ck_assert_int_eq(output_commit(&of), 0);
	ck_assert_ptr_null(of.f);
	ck_assert(!exists(tmp));
	text = proc_read_file(path, NULL);
	ck_assert_str_eq(text, "a;b 1\n");
	free(text);
	mask = umask(0);
	umask(mask);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0644 & ~mask);

	/* replacing an existing file */
	ck_assert_int_eq(output_open(&of, path), 0);
	fputs("new 2\n", of.f);
	text = proc_read_file(path, NULL);
	ck_assert_str_eq(text, "a;b 1\n"); /* the old content until the commit */
	free(text);
	ck_assert_int_eq(output_commit(&of), 0);
	text = proc_read_file(path, NULL);
	ck_assert_str_eq(text, "new 2\n");
	free(text);
	ck_assert_int_eq(nr_entries(testutil_tmp), 1);
	free(tmp);
	free(path);
}
END_TEST

START_TEST(test_atomic_abort)
{
	char *path = testutil_tmp_path("out.txt");
	struct output_file of;

	ck_assert_int_eq(output_open(&of, path), 0);
	fputs("partial", of.f);
	output_abort(&of);
	ck_assert_ptr_null(of.f);
	ck_assert(!exists(path));
	ck_assert_int_eq(nr_entries(testutil_tmp), 0);
	output_abort(&of); /* twice is harmless */
	free(path);
}
END_TEST

/* output_check() answers as output_open() would, and creates nothing. */
START_TEST(test_check_before_open)
{
	char *ok = testutil_tmp_path("later.folded"), *dir = testutil_tmp_path("sub");
	char *missing = testutil_tmp_path("no-such-dir/x.folded");
	struct output_file of;

	ck_assert_int_eq(output_check("-"), 0);
	ck_assert_int_eq(output_check("/dev/null"), 0);
	ck_assert_int_eq(output_check(ok), 0);
	ck_assert_int_eq(output_check(missing), -ENOENT);
	ck_assert_int_eq(output_open(&of, missing), -ENOENT);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(output_check(dir), -EISDIR);
	ck_assert_int_eq(output_check("x.folded"), 0); /* no directory part: "." (the cwd) */
	ck_assert_int_eq(nr_entries(testutil_tmp), 1); /* only "sub": no file was made */
	free(ok);
	free(dir);
	free(missing);
}
END_TEST

/* An existing directory is refused at open: no temporary, the directory is untouched. */
START_TEST(test_atomic_rename_fails)
{
	char *path = testutil_tmp_path("busy"), *inner = testutil_tmp_path("busy/keep");
	struct output_file of;
	FILE *f;
	int ret;

	ck_assert_int_eq(mkdir(path, 0755), 0);
	f = fopen(inner, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ret = output_open(&of, path);
	ck_assert_int_eq(ret, -EISDIR);
	ck_assert(exists(inner));
	ck_assert_int_eq(nr_entries(testutil_tmp), 1); /* only busy/, no temporary */
	free(inner);
	free(path);
}
END_TEST

/* A device is written in place, never replaced by a renamed file (-o /dev/null). */
START_TEST(test_device_in_place)
{
	struct output_file of;
	struct stat st;

	ck_assert_int_eq(output_open(&of, "/dev/null"), 0);
	ck_assert_ptr_null(of.tmp);
	fputs("data\n", of.f);
	ck_assert_int_eq(output_commit(&of), 0);
	ck_assert_int_eq(stat("/dev/null", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
	ck_assert_int_eq(output_open(&of, "/dev/null"), 0);
	output_abort(&of);
	ck_assert_int_eq(stat("/dev/null", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
	ck_assert_int_eq(output_open(&of, "/dev/full"), 0);
	fputs("data\n", of.f);
	ck_assert_int_eq(output_commit(&of), -ENOSPC);
	ck_assert_int_eq(stat("/dev/full", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
}
END_TEST

/* A write error (file size limit) is found at commit: error, no final file, no temporary. */
START_TEST(test_atomic_write_fails)
{
	char *path = testutil_tmp_path("big");
	struct rlimit old, small = {1024, 1024};
	void (*old_handler)(int);
	struct output_file of;
	char line[100];
	int i, ret;

	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	old_handler = signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of a signal */
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	ck_assert_int_eq(output_open(&of, path), 0);
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	for (i = 0; i < 200; i++)
		fprintf(of.f, "%s\n", line);
	ret = output_commit(&of);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, old_handler);
	ck_assert_int_eq(ret, -EFBIG);
	ck_assert(!exists(path));
	ck_assert_int_eq(nr_entries(testutil_tmp), 0);
	free(path);
}
END_TEST

START_TEST(test_atomic_open_fails)
{
	char *path = testutil_tmp_path("no/such/dir/out"), *stale, link[32];
	struct output_file of;
	int ret;

	ck_assert_int_eq(output_open(&of, path), -ENOENT);
	ck_assert_ptr_null(of.f);
	ck_assert_ptr_null(of.tmp);
	free(path);

	/* a file already at the temporary name is never followed or reused: the unnamed file
	 * gets the next free name; a named temporary is refused (O_EXCL) */
	path = testutil_tmp_path("out");
	stale = xasprintf("%s.tmp.%d", path, (int)getpid());
	ck_assert_int_eq(symlink("/dev/null", stale), 0);
	ret = output_open(&of, path);
	if (ret == 0) {
		char *text;

		ck_assert(of.anon);
		fputs("fresh\n", of.f);
		ck_assert_int_eq(output_commit(&of), 0);
		text = proc_read_file(path, NULL);
		ck_assert_str_eq(text, "fresh\n");
		free(text);
		ck_assert_int_eq(nr_entries(testutil_tmp), 2); /* out and the stale link */
	} else {
		ck_assert_int_eq(ret, -EEXIST);
		ck_assert(!exists(path));
	}
	ck_assert(exists(stale));
	ck_assert_int_eq(readlink(stale, link, sizeof(link) - 1), 9);
	free(stale);
	free(path);
}
END_TEST

/* A symbolic link is followed: the file it names is replaced atomically (the temporary
 * beside it), the link stays a link; a dangling link creates its target. */
START_TEST(test_link_followed)
{
	char *runs = testutil_tmp_path("runs"), *target = testutil_tmp_path("runs/a.folded");
	char *link = testutil_tmp_path("latest.folded"), *text, buf[64];
	struct output_file of;
	struct stat st;
	ssize_t n;

	ck_assert_int_eq(mkdir(runs, 0755), 0);
	testutil_write_file(target, "old 1\n", 6);
	ck_assert_int_eq(symlink("runs/a.folded", link), 0);
	ck_assert_int_eq(output_check(link), 0);
	ck_assert_int_eq(output_open(&of, link), 0);
	ck_assert_str_eq(of.path, target);
	fputs("new 2\n", of.f);
	ck_assert_int_eq(output_commit(&of), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	n = readlink(link, buf, sizeof(buf) - 1);
	ck_assert_int_eq(n, 13);
	text = proc_read_file(target, NULL);
	ck_assert_str_eq(text, "new 2\n");
	free(text);
	ck_assert_int_eq(nr_entries(runs), 1); /* no temporary left beside the target */

	/* a dangling link: its target is created, the link kept */
	ck_assert_int_eq(unlink(target), 0);
	ck_assert_int_eq(output_open(&of, link), 0);
	fputs("fresh 3\n", of.f);
	ck_assert_int_eq(output_commit(&of), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	text = proc_read_file(target, NULL);
	ck_assert_str_eq(text, "fresh 3\n");
	free(text);
	free(runs);
	free(target);
	free(link);
}
END_TEST

/* A link to a directory is refused; a loop of links is ELOOP; a read-only file perch may not
 * write is not replaced by a rename. */
START_TEST(test_link_refused)
{
	char *dir = testutil_tmp_path("d"), *link = testutil_tmp_path("to-d");
	char *a = testutil_tmp_path("a"), *b = testutil_tmp_path("b");
	char *ro = testutil_tmp_path("ro.folded"), *text;
	struct output_file of;

	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(symlink("d", link), 0);
	ck_assert_int_eq(output_check(link), -EISDIR);
	ck_assert_int_eq(output_open(&of, link), -EISDIR);
	ck_assert_int_eq(symlink("b", a), 0);
	ck_assert_int_eq(symlink("a", b), 0);
	ck_assert_int_eq(output_open(&of, a), -ELOOP);
	if (geteuid() != 0) { /* root may write anything */
		testutil_write_file(ro, "keep 1\n", 7);
		ck_assert_int_eq(chmod(ro, 0444), 0);
		ck_assert_int_eq(output_check(ro), -EACCES);
		ck_assert_int_eq(output_open(&of, ro), -EACCES);
		text = proc_read_file(ro, NULL);
		ck_assert_str_eq(text, "keep 1\n");
		free(text);
	}
	ck_assert_int_eq(nr_entries(testutil_tmp), 4 + (geteuid() != 0));
	free(dir);
	free(link);
	free(a);
	free(b);
	free(ro);
}
END_TEST

/* -o /dev/stdout with stdout redirected to a file (`> out.folded`): written through perch's
 * own descriptor, at the shell's offset; /dev/stdout stays the system's link. */
START_TEST(test_dev_stdout_file)
{
	char *path = testutil_tmp_path("redirected"), *text, buf[64];
	struct output_file of;
	struct stat st;
	int fd, saved;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "before\n", 7), 7);
	fflush(stdout);
	saved = dup(1);
	ck_assert_int_eq(dup2(fd, 1), 1);
	close(fd);
	ck_assert_int_eq(output_check("/dev/stdout"), 0);
	ck_assert_int_eq(output_open(&of, "/dev/stdout"), 0);
	ck_assert_ptr_null(of.tmp);
	fputs("a;b 1\n", of.f);
	ck_assert_int_eq(output_commit(&of), 0);
	ck_assert_int_eq(output_open(&of, "/dev/fd/1"), 0);
	fputs("c 2\n", of.f);
	ck_assert_int_eq(output_commit(&of), 0);
	dup2(saved, 1);
	close(saved);
	text = proc_read_file(path, NULL);
	ck_assert_str_eq(text, "before\na;b 1\nc 2\n");
	free(text);
	ck_assert_int_eq(lstat("/dev/stdout", &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_gt(readlink("/dev/stdout", buf, sizeof(buf)), 0);
	ck_assert_int_eq(nr_entries(testutil_tmp), 1);
	free(path);
}
END_TEST

/* A FIFO with a reader is written in place; the FIFO stays a FIFO. */
START_TEST(test_fifo_in_place)
{
	char *fifo = testutil_tmp_path("pipe"), *link = testutil_tmp_path("to-pipe");
	char buf[64] = {0};
	struct output_file of;
	struct stat st;
	size_t got = 0;
	int fd;

	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink("pipe", link), 0);
	fd = open(fifo, O_RDONLY | O_NONBLOCK); /* the reader: open for writing does not block */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(output_check(link), 0);
	ck_assert_int_eq(output_open(&of, link), 0);
	ck_assert_ptr_null(of.tmp);
	fputs("x;y 3\n", of.f);
	ck_assert_int_eq(output_commit(&of), 0);
	while (got < 6) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);

		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	close(fd);
	ck_assert_str_eq(buf, "x;y 3\n");
	ck_assert_int_eq(stat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(nr_entries(testutil_tmp), 2);
	free(fifo);
	free(link);
}
END_TEST

/* What output_open() saw may change before the commit: a link or directory put at the
 * path meanwhile is never renamed over. */
START_TEST(test_commit_never_over_link)
{
	char *path = testutil_tmp_path("out.folded"), *other = testutil_tmp_path("other");
	struct output_file of;
	struct stat st;

	ck_assert_int_eq(output_open(&of, path), 0);
	fputs("a 1\n", of.f);
	ck_assert_int_eq(symlink("other", path), 0);
	ck_assert_int_eq(output_commit(&of), -EEXIST);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(nr_entries(testutil_tmp), 1); /* the link; no temporary */
	free(path);
	free(other);
}
END_TEST

/* A link someone else planted in a sticky world-writable directory (/tmp) is not followed,
 * as the kernel's fs.protected_symlinks rules for open(); perch's own link there is. */
START_TEST(test_link_planted)
{
	char *dir = testutil_tmp_path("shared"), *link = testutil_tmp_path("shared/out.folded");
	char *victim = testutil_tmp_path("victim"), *text;
	struct output_file of;

	ck_assert_int_eq(mkdir(dir, 0777), 0);
	ck_assert_int_eq(chmod(dir, 01777), 0);
	testutil_write_file(victim, "precious\n", 9);
	ck_assert_int_eq(symlink(victim, link), 0);
	if (lchown(link, 65534, 65534) < 0 || geteuid() == 65534) {
		/* (not root: no link of another user to make; our own is followed) */
		ck_assert_int_eq(output_check(link), 0);
	} else {
		ck_assert_int_eq(output_check(link), -EACCES);
		ck_assert_int_eq(output_open(&of, link), -EACCES);
		text = proc_read_file(victim, NULL);
		ck_assert_str_eq(text, "precious\n");
		free(text);
		ck_assert_int_eq(lchown(link, geteuid(), getegid()), 0);
		ck_assert_int_eq(output_open(&of, link), 0); /* perch's own link: followed */
		output_abort(&of);
	}
	free(dir);
	free(link);
	free(victim);
}
END_TEST

START_TEST(test_atomic_stdout)
{
	struct output_file of;

	ck_assert_int_eq(output_open(&of, "-"), 0);
	ck_assert_ptr_eq(of.f, stdout);
	ck_assert_ptr_null(of.tmp);
	ck_assert_int_eq(output_commit(&of), 0);
	ck_assert_ptr_null(of.f);
	ck_assert_int_eq(output_commit(&of), -EBADF); /* nothing open any more */
}
END_TEST

Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("folded");

	tcase_add_test(tc, test_folded_golden);
	tcase_add_test(tc, test_folded_lines_golden);
	tcase_add_test(tc, test_folded_empty);
	tcase_add_test(tc, test_folded_cleaning);
	tcase_add_test(tc, test_write_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("top");
	tcase_add_test(tc, test_top_golden);
	tcase_add_test(tc, test_top_empty);
	suite_add_tcase(s, tc);

	tc = tcase_create("atomic");
	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_atomic_commit);
	tcase_add_test(tc, test_atomic_abort);
	tcase_add_test(tc, test_atomic_rename_fails);
	tcase_add_test(tc, test_check_before_open);
	tcase_add_test(tc, test_device_in_place);
	tcase_add_test(tc, test_atomic_write_fails);
	tcase_add_test(tc, test_atomic_open_fails);
	tcase_add_test(tc, test_atomic_stdout);
	tcase_add_test(tc, test_link_followed);
	tcase_add_test(tc, test_link_refused);
	tcase_add_test(tc, test_dev_stdout_file);
	tcase_add_test(tc, test_fifo_in_place);
	tcase_add_test(tc, test_commit_never_over_link);
	tcase_add_test(tc, test_link_planted);
	suite_add_tcase(s, tc);
	return s;
}
