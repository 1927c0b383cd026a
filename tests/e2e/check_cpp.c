/* e2e: C++ names (template member, lambda through std::function) and an always_inline function
 * shown as its own frame with its file:line (cpp target, -O2 -g). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define CPP_HOT_SOURCE	"tests/targets/cpp_hot.h"
#define CPP_MAIN_SOURCE "tests/targets/cpp_main.cpp"

/* Number of the first line of @path holding @marker, 0 if none. */
static int marker_line(const char *path, const char *marker)
{
	FILE *fp = fopen(path, "r");
	char buf[512];
	int n = 0;

	H_ASSERT(fp != NULL, "cannot open %s (the e2e runner runs from the source tree)", path);
	while (fgets(buf, sizeof(buf), fp)) {
		n++;
		if (strstr(buf, marker)) {
			fclose(fp);
			return n;
		}
	}
	fclose(fp);
	return 0;
}

/* Lines strictly between the HOT_INLINE_BEGIN and HOT_INLINE_END markers of cpp_hot.h, and
 * the line of cpp_main.cpp that calls hot_inline (marked HOT_INLINE_CALL). */
static void hot_inline_lines(int *first, int *last, int *call)
{
	*first = marker_line(CPP_HOT_SOURCE, "HOT_INLINE_BEGIN") + 1;
	*last = marker_line(CPP_HOT_SOURCE, "HOT_INLINE_END") - 1;
	*call = marker_line(CPP_MAIN_SOURCE, "HOT_INLINE_CALL");
	H_ASSERT(*first > 1 && *last >= *first && *call > 0,
		 "no HOT_INLINE_BEGIN/END markers in %s or HOT_INLINE_CALL in %s", CPP_HOT_SOURCE,
		 CPP_MAIN_SOURCE);
}

/* "name (path/file:LINE)" -> 1 when path ends in @file and FIRST <= LINE <= LAST. */
static int frame_at(const char *frame, const char *file, int first, int last)
{
	const char *open = strstr(frame, " (");
	const char *colon, *close;
	size_t flen = strlen(file);
	long line;

	/* Demangled names hold " (" themselves, e.g. "operator()(int) const": use the last. */
	while (open && strstr(open + 2, " ("))
		open = strstr(open + 2, " (");
	if (!open)
		return 0;
	colon = strrchr(open, ':');
	close = strrchr(open, ')');
	if (!colon || !close || close < colon || (size_t)(colon - (open + 2)) < flen)
		return 0;
	if (strncmp(colon - flen, file, flen) ||
	    (colon - flen != open + 2 && *(colon - flen - 1) != '/'))
		return 0;
	line = strtol(colon + 1, NULL, 10);
	return line >= first && line <= last;
}

struct inline_stats {
	unsigned long all, own_frame, right_line, right_call;
	int first, last, call;
};

static void inline_count(const struct harness_folded *f, struct inline_stats *st)
{
	size_t i;

	for (i = 0; i < f->nr; i++) {
		const struct harness_folded_line *l = &f->lines[i];
		int k;

		if (strcmp(l->thread, "inline"))
			continue;
		st->all += l->count;
		k = harness_line_find(l, "ns::inline_caller");
		if (k < 0 || (size_t)k + 1 >= l->nr_frames ||
		    !harness_frame_is(l->frames[k + 1], "ns::hot_inline"))
			continue;
		st->own_frame += l->count;
		if (frame_at(l->frames[k + 1], "cpp_hot.h", st->first, st->last))
			st->right_line += l->count;
		if (frame_at(l->frames[k], "cpp_main.cpp", st->call, st->call))
			st->right_call += l->count;
	}
}

static int has_lambda(const struct harness_folded_line *l, const void *unused)
{
	size_t i;

	(void)unused;
	for (i = 0; i < l->nr_frames; i++)
		if (!strncmp(l->frames[i], "run_lambda(double)::{lambda(int)#1}::operator()",
			     strlen("run_lambda(double)::{lambda(int)#1}::operator()")))
			return 1;
	return 0;
}

START_TEST(cpp_names_and_inline)
{
	const char *out = harness_tmpfile("cpp.folded");
	struct inline_stats st = {0};
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long all, n;
	pid_t pid;

	hot_inline_lines(&st.first, &st.last, &st.call);
	t = harness_spawn("target", HARNESS_ARGV(harness_target("cpp"), "4"));
	pid = harness_proc_wait_ready(t, 5);
	perch = harness_spawn("perch",
			      HARNESS_ARGV(harness_perch(), "record", "--lines", "-F", "300", "-d",
					   "2", "-o", out, "-p", harness_fmt("%d", pid)));
	H_ASSERT(harness_proc_wait(perch, 10) == 0, "perch did not stop after -d 2");
	H_CHECK_RECORD(perch, 0, out, &f);

	all = harness_folded_count(&f, "tmpl", harness_pred_any, NULL);
	n = harness_folded_count(&f, "tmpl", harness_pred_has, "Worker<int>::run");
	if (n * 100 < all * 80 || all < 100)
		harness_folded_context(&f, "tmpl", 20);
	H_ASSERT(all >= 100 && n * 100 >= all * 80,
		 "%lu of %lu samples of thread tmpl name Worker<int>::run (want >= 80%%)", n, all);

	all = harness_folded_count(&f, "lambda", harness_pred_any, NULL);
	n = harness_folded_count(&f, "lambda", has_lambda, NULL);
	if (n * 100 < all * 80 || all < 100)
		harness_folded_context(&f, "lambda", 20);
	H_ASSERT(all >= 100 && n * 100 >= all * 80,
		 "%lu of %lu samples of thread lambda name "
		 "run_lambda(double)::{lambda(int)#1}::operator() (want >= 80%%)",
		 n, all);

	inline_count(&f, &st);
	if (st.own_frame * 100 < st.all * 60 || st.right_line * 100 < st.own_frame * 90 ||
	    st.right_call * 100 < st.own_frame * 90)
		harness_folded_context(&f, "inline", 20);
	H_ASSERT(st.all >= 100 && st.own_frame * 100 >= st.all * 60,
		 "%lu of %lu samples of thread inline have ns::hot_inline as its own frame right "
		 "after ns::inline_caller (want >= 60%%)",
		 st.own_frame, st.all);
	H_ASSERT(st.right_line * 100 >= st.own_frame * 90,
		 "only %lu of %lu ns::hot_inline frames point into cpp_hot.h lines %d-%d (want "
		 ">= 90%%)",
		 st.right_line, st.own_frame, st.first, st.last);
	/* The caller's location is the call site (DW_AT_call_file/line), not its own line table. */
	H_ASSERT(st.right_call * 100 >= st.own_frame * 90,
		 "only %lu of %lu ns::inline_caller frames above ns::hot_inline point to the call "
		 "at cpp_main.cpp:%d (want >= 90%%)",
		 st.right_call, st.own_frame, st.call);
	harness_folded_release(&f);
}
END_TEST

Suite *cpp_suite(void)
{
	Suite *s = suite_create("e2e-cpp");
	TCase *tc = tcase_create("names");

	harness_tcase_init(tc, 20);
	tcase_add_test(tc, cpp_names_and_inline);
	suite_add_tcase(s, tc);
	return s;
}
