/* e2e: perch on fakeart (tests/targets/fakeart_main.c), a process that publishes ART's JIT and
 * dex debugger interfaces from a library named libart.so and keeps adding and removing JIT
 * entries while it runs Java code; and on fakeart32, the same program built for i386 (a 32-bit
 * app: 32-bit layouts, ELF32 symfiles, i386 code). Every sample of its worker thread is checked:
 *   - the JIT frame above spin<K> is either unnamed or named <Class>.m<K> with the same K
 *     (never a wrong name, whatever the JIT manager does meanwhile);
 *   - named stacks have the Java frames in place: jit_call below the JIT frame (only the JIT
 *     symfile's CFI finds it), then Interp.inner at its first line (switch interpreter), after
 *     fakeart_switch_interp, and Interp.outer at its current line (nterp) after fakeart_nterp;
 *     those two frames of the runtime library are there with --show-art-frames, and hidden by
 *     default (as simpleperf hides them: nothing else of the stack changes).
 * The expected lines come from the smali source of the dex file (fixtures/art/Interp.smali). */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "harness.h"

/* The @nth (0-based) ".line N" of method @method in fixtures/art/Interp.smali, or -1. */
static int smali_line(const char *method, int nth)
{
	FILE *fp = fopen("fixtures/art/Interp.smali", "r");
	char buf[256];
	int in = 0, line = -1;

	if (!fp)
		return -1;
	while (fgets(buf, sizeof(buf), fp)) {
		const char *s = buf;

		while (isspace((unsigned char)*s))
			s++;
		if (!strncmp(s, ".method ", 8))
			in = strstr(s, harness_fmt(" %s(", method)) != NULL;
		else if (!strncmp(s, ".end method", 11))
			in = 0;
		else if (in && !strncmp(s, ".line ", 6) && nth-- == 0) {
			line = atoi(s + 6);
			break;
		}
	}
	fclose(fp);
	return line;
}

/* @frame is @want, or @want with a frame-kind suffix of the folded writer ("_[0]", "_[j]"), or
 * @want followed by " (file:line)" (harness_frame_is). */
static int frame_matches(const char *frame, const char *want)
{
	size_t n = strlen(want);

	if (harness_frame_is(frame, want))
		return 1;
	return !strncmp(frame, want, n) && frame[n] == '_' && frame[n + 1] == '[' &&
	       strchr(frame + n, ']') && !strchr(frame + n, ';');
}

/* @l holds @seq as consecutive frames (kind suffixes allowed). */
static int has_seq(const struct harness_folded_line *l, const char *const *seq, size_t n)
{
	for (size_t i = 0; i + n <= l->nr_frames; i++) {
		size_t k = 0;

		while (k < n && frame_matches(l->frames[i + k], seq[k]))
			k++;
		if (k == n)
			return 1;
	}
	return 0;
}

struct art_counts {
	unsigned long worker, spin, named, unnamed, wrong, ordered;
	unsigned long kinds[3]; /* Jit, Packed, Compressed */
};

static const char *const classes[] = {"Jit", "Packed", "Compressed"};
static const char *const prefixes[] = {"com.example.fakeart.Jit.m", "com.example.fakeart.Packed.m",
				       "com.example.fakeart.Compressed.m"};

static void check_line(const struct harness_folded_line *l, const char *const *seq, size_t nseq,
		       struct art_counts *c)
{
	const char *leaf, *jit;
	int k, j = -1, cls = -1;

	if (harness_line_find(l, "worker") < 0)
		return;
	c->worker += l->count;
	leaf = l->frames[l->nr_frames - 1];
	if (l->nr_frames < 2 || strncmp(leaf, "spin", 4) || !isdigit((unsigned char)leaf[4]))
		return;
	c->spin += l->count;
	k = leaf[4] - '0';
	jit = l->frames[l->nr_frames - 2];
	for (int i = 0; i < 3; i++) {
		const char *pre = prefixes[i];

		if (!strncmp(jit, pre, strlen(pre))) {
			cls = i;
			j = jit[strlen(pre)] - '0';
		}
	}
	if (cls < 0) {
		c->unnamed += l->count;
		return;
	}
	if (j != k || !strstr(jit, "_[j]")) {
		c->wrong += l->count;
		harness_context_add("wrong JIT name: %s above %s\n", jit, leaf);
		return;
	}
	c->named += l->count;
	c->kinds[cls] += l->count;
	if (has_seq(l, seq, nseq))
		c->ordered += l->count;
}

/* A frame of fakeart's runtime library next to a Java frame in @l (its count, or 0); such
 * stacks go to the failure context. */
static unsigned long runtime_between_java(const struct harness_folded_line *l)
{
	for (size_t i = 0; i < l->nr_frames; i++) {
		int java_next =
		    (i > 0 && !strncmp(l->frames[i - 1], "com.example.", 12)) ||
		    (i + 1 < l->nr_frames && !strncmp(l->frames[i + 1], "com.example.", 12));

		if (java_next && (harness_frame_is(l->frames[i], "fakeart_nterp") ||
				  harness_frame_is(l->frames[i], "fakeart_switch_interp"))) {
			harness_context_add(
			    "runtime frame %s next to a Java frame, stack of %zu frames "
			    "(count %lu)\n",
			    l->frames[i], l->nr_frames, l->count);
			return l->count;
		}
	}
	return 0;
}

static void run_fakeart_dex(const char *prog, const char *layout, int strict, const char *dex,
			    int art_frames)
{
	const char *out =
	    harness_tmpfile(harness_fmt("art-%s-%s-%s-%d.folded", prog, layout, dex, art_frames));
	int inner = smali_line("inner", 0), outer = smali_line("outer", 1);
	struct harness_proc *t, *perch;
	struct harness_folded f;
	struct art_counts c = {0};
	unsigned long between = 0;
	pid_t pid;

	H_ASSERT(inner > 0 && outer > 0, "no .line directives in fixtures/art/Interp.smali");
	/* root first, as folded lines are: worker down to jit_call */
	const char *seq[] = {
	    "worker",
	    harness_fmt("com.example.fakeart.Interp.outer (Interp.java:%d)", outer),
	    "fakeart_nterp",
	    "outer_body",
	    harness_fmt("com.example.fakeart.Interp.inner (Interp.java:%d)", inner),
	    "fakeart_switch_interp",
	    "inner_body",
	    "jit_call",
	};
	const char *hidden[] = {seq[0], seq[1], seq[3], seq[4], seq[6], seq[7]};

	t = harness_spawn(prog, HARNESS_ARGV(harness_target(prog), layout, harness_target(dex)));
	pid = harness_proc_wait_ready(t, 10);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d", (int)pid), "-F", "1000", "-d",
						    "4", "--lines", "-o", out,
						    art_frames ? "--show-art-frames" : "--lines"));
	H_ASSERT(harness_proc_wait(perch, 60) == 0, "perch did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	for (size_t i = 0; i < f.nr; i++) {
		if (art_frames)
			check_line(&f.lines[i], seq, sizeof(seq) / sizeof(seq[0]), &c);
		else
			check_line(&f.lines[i], hidden, sizeof(hidden) / sizeof(hidden[0]), &c);
		if (!art_frames)
			between += runtime_between_java(&f.lines[i]);
	}
	H_ASSERT(between == 0, "%lu stacks with a runtime frame next to a Java frame", between);
	harness_context_add("%s %s: worker %lu, in spin %lu: named %lu (Jit %lu, Packed %lu, "
			    "Compressed %lu), unnamed %lu, wrong %lu, Java frames in order %lu\n",
			    prog, layout, c.worker, c.spin, c.named, c.kinds[0], c.kinds[1],
			    c.kinds[2], c.unnamed, c.wrong, c.ordered);
	if (c.ordered * 10 < c.named * 9)
		harness_folded_context(&f, NULL, 12);
	/* at 1000 Hz for 4 s the worker gets thousands of samples even on a loaded machine */
	H_ASSERT(c.spin >= 500, "too few samples of the worker in spin<K>: %lu", c.spin);
	if (strict)
		H_ASSERT(c.wrong == 0, "%lu samples with a wrong JIT name", c.wrong);
	H_ASSERT(c.named * 2 >= c.spin, "only %lu of %lu JIT frames named", c.named, c.spin);
	for (int i = 0; i < 3; i++)
		H_ASSERT(c.kinds[i] > 0, "no sample named by a %s symfile", classes[i]);
	H_ASSERT(c.ordered * 10 >= c.named * 9,
		 "only %lu of %lu named stacks have the Java frames in order", c.ordered, c.named);
	/* every stack through the JIT and interpreter frames goes on to the thread's root (whose
	 * libc frames fakeart32 cannot name: the CFI's outermost frame counts) */
	H_ASSERT(harness_summary_unwound(perch->err.buf) >= 90,
		 "only %.1f%% of the stacks unwound to the root",
		 harness_summary_unwound(perch->err.buf));
	harness_folded_release(&f);
	harness_proc_kill(t, SIGKILL);
}

static void run_fakeart(const char *prog, const char *layout, int strict, int art_frames)
{
	run_fakeart_dex(prog, layout, strict, "fakeart-interp.dex", art_frames);
}

START_TEST(art_android2)
{
	run_fakeart("fakeart", "android2", 1, 1);
}
END_TEST

/* The same without --show-art-frames: the runtime's frames between Java frames are gone. */
START_TEST(art_android2_hidden)
{
	run_fakeart("fakeart", "android2", 1, 0);
}
END_TEST

START_TEST(art_android1)
{
	run_fakeart("fakeart", "android1", 1, 1);
}
END_TEST

/* The GDB JIT interface has no timestamps and no seqlocks: an entry recycled at the same place
 * is indistinguishable for a moment (see src/art/art-jit.c), so names are checked, not their
 * freedom from races. */
START_TEST(art_gdb)
{
	run_fakeart("fakeart", "gdb", 0, 1);
}
END_TEST

/* Interp.dex as the second of two compact dex files sharing one data section (a vdex), each
 * registered with its header's file_size as Android 10/11 did: the interpreted frames' dex
 * pcs lie outside every entry, in the shared section, and are still named. */
START_TEST(art_android2_vdex)
{
	run_fakeart_dex("fakeart", "android2", 1, "fakeart-interp.vdex", 1);
}
END_TEST

/* Interp.dex as the second dex of a dex 041 container, each dex registered on its own (ART
 * 15): offsets count from the container's start. */
START_TEST(art_android2_container)
{
	run_fakeart_dex("fakeart", "android2", 1, "fakeart-interp-041.dex", 1);
}
END_TEST

/* The same checks on a 32-bit app (perch picks the layouts from libart.so's ELF class). */
START_TEST(art_android2_32)
{
	run_fakeart("fakeart32", "android2", 1, 1);
}
END_TEST

START_TEST(art_android1_32)
{
	run_fakeart("fakeart32", "android1", 1, 1);
}
END_TEST

START_TEST(art_gdb_32)
{
	run_fakeart("fakeart32", "gdb", 0, 1);
}
END_TEST

Suite *e2e_art_suite(void)
{
	Suite *s = suite_create("e2e-art");
	TCase *tc = tcase_create("fakeart");
	struct utsname u;

	harness_tcase_init(tc, 90);
	tcase_add_test(tc, art_android2);
	tcase_add_test(tc, art_android2_hidden);
	tcase_add_test(tc, art_android1);
	tcase_add_test(tc, art_gdb);
	tcase_add_test(tc, art_android2_vdex);
	tcase_add_test(tc, art_android2_container);
	/* fakeart32 is built on x86_64 hosts only (tests/targets/fakeart32.mk) */
	if (uname(&u) == 0 && !strcmp(u.machine, "x86_64") &&
	    harness_can_exec_target("fakeart32", "e2e-art (fakeart32)")) {
		tcase_add_test(tc, art_android2_32);
		tcase_add_test(tc, art_android1_32);
		tcase_add_test(tc, art_gdb_32);
	}
	suite_add_tcase(s, tc);
	return s;
}
