/* e2e: perch on the real Android runtime: Debian's android-libart 11.0.0+r48 (libart.so.0, a
 * stripped host build of Android 11's ART) started by tests/realart/launcher.c on a generated
 * stub core (mk/realart.mk), running the programs of tests/realart/app/ in each interpreter:
 *   nterp   (the default),
 *   mterp   (-Xint),
 *   switch  (-Xint -Xmethod-trace: instrumentation forbids mterp, ART 11 mterp.cc:146),
 * with the boot class path as plain dex files (mapped from the file) and as jars (ART extracts
 * classes.dex into anonymous memory).
 *
 * What is expected comes from outside perch: the call structure is the programs' own (Deep:
 * main -> run -> down x 7 -> a monitor another thread holds, or -> spin; Split: a() then b(),
 * b() three times the loop), and every line from dexdump (Debian's, an AOSP tool) of app.dex:
 * the line of the instruction a frame is at (an invoke for callers, monitor-enter or the spin
 * loop for the leaf). Native frames are compared with gdb's `thread apply all bt`, frame by frame
 * (program counters), with perch showing the runtime's frames (--show-art-frames). Without that
 * option, no frame of the runtime may sit next to a Java frame. */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define GDB_PATH   "/usr/bin/gdb"
#define DEEP_DEPTH 6 /* Deep.main calls run(6, mode): down(6) ... down(0) */

enum interp { NTERP, MTERP, SWITCH };
static const char *const interp_names[] = {"nterp", "mterp", "switch"};

/* ---- dexdump of app.dex: methods, their instructions and line tables ---- */

struct dd_insn {
	unsigned addr; /* code units */
	char text[160];
};

struct dd_method {
	char name[128]; /* "perch.realart.Deep.down" */
	char type[64];	/* "(II)V" */
	char file[64];	/* "Deep.java" */
	struct dd_insn insns[64];
	size_t nr_insns;
	unsigned pos_addr[32], pos_line[32];
	size_t nr_pos;
};

static struct dd_method dd[16];
static size_t nr_dd;

static const char *ra(const char *name)
{
	return harness_target(harness_fmt("realart/%s", name));
}

/* Parse `dexdump -d app.dex`: "|[0002f8] perch.realart.Deep.<init>:()V" starts a method,
 * "|0004: invoke-static ..." is an instruction, "0x0002 line=31" a position and
 * "source_file_idx : 1 (Deep.java)" closes a class. */
static void dexdump_load(void)
{
	struct harness_proc *p;
	const char *s, *nl;
	size_t class_first = 0;

	if (nr_dd)
		return;
	p = harness_spawn("dexdump", HARNESS_ARGV("/usr/bin/dexdump", "-d", ra("app.dex")));
	H_ASSERT(harness_proc_wait(p, 30) == 0 && harness_proc_exit_code(p) == 0,
		 "dexdump -d app.dex failed");
	for (s = p->out.buf; s && *s; s = nl ? nl + 1 : NULL) {
		char line[512], *bar;
		size_t len;
		unsigned a, l;

		nl = strchr(s, '\n');
		len = nl ? (size_t)(nl - s) : strlen(s);
		snprintf(line, sizeof(line), "%.*s", (int)(len < 511 ? len : 511), s);
		bar = strchr(line, '|');
		if (bar && bar[1] == '[' && nr_dd < 16) {
			struct dd_method *m = &dd[nr_dd++];
			char *sp = strchr(bar, ' '), *colon = sp ? strrchr(sp, ':') : NULL;

			memset(m, 0, sizeof(*m));
			if (sp && colon) {
				snprintf(m->name, sizeof(m->name), "%.*s", (int)(colon - sp - 1),
					 sp + 1);
				snprintf(m->type, sizeof(m->type), "%s", colon + 1);
			}
		} else if (bar && nr_dd && sscanf(bar + 1, "%x:", &a) == 1 &&
			   dd[nr_dd - 1].nr_insns < 64) {
			struct dd_insn *in = &dd[nr_dd - 1].insns[dd[nr_dd - 1].nr_insns++];

			in->addr = a;
			snprintf(in->text, sizeof(in->text), "%s", strchr(bar, ':') + 2);
		} else if (nr_dd && sscanf(line, " 0x%x line=%u", &a, &l) == 2 &&
			   dd[nr_dd - 1].nr_pos < 32) {
			struct dd_method *m = &dd[nr_dd - 1];

			m->pos_addr[m->nr_pos] = a;
			m->pos_line[m->nr_pos++] = l;
		} else if (strstr(line, "source_file_idx") && strchr(line, '(')) {
			char *o = strchr(line, '('), *c = strchr(o, ')');

			for (; class_first < nr_dd; class_first++)
				snprintf(dd[class_first].file, sizeof(dd[0].file), "%.*s",
					 c ? (int)(c - o - 1) : 0, o + 1);
		}
	}
	H_ASSERT(nr_dd >= 6, "dexdump showed %zu methods of app.dex", nr_dd);
}

static const struct dd_method *dd_method(const char *name)
{
	for (size_t i = 0; i < nr_dd; i++)
		if (!strcmp(dd[i].name, name))
			return &dd[i];
	harness_fail(__FILE__, __LINE__, "dd_method", "dexdump has no method %s", name);
	return NULL;
}

/* The line of the first instruction of @m whose text contains @what (dexdump's positions: the
 * last row at or before its address). */
static unsigned dd_line(const struct dd_method *m, const char *what)
{
	unsigned line = 0;

	for (size_t i = 0; i < m->nr_insns; i++) {
		if (!strstr(m->insns[i].text, what))
			continue;
		for (size_t k = 0; k < m->nr_pos && m->pos_addr[k] <= m->insns[i].addr; k++)
			line = m->pos_line[k];
		return line;
	}
	harness_fail(__FILE__, __LINE__, "dd_line", "no '%s' in %s", what, m->name);
	return 0;
}

/* "perch.realart.Deep.down(int, int)": Java notation of the method's parameters. */
static const char *dd_pretty(const struct dd_method *m)
{
	static const char *const prim[] = {"Zboolean", "Bbyte", "Cchar",  "Sshort",
					   "Iint",     "Jlong", "Ffloat", "Ddouble"};
	struct strbuf sb = STRBUF_INIT;
	const char *t = m->type + 1;
	const char *out;

	strbuf_addf(&sb, "%s(", m->name);
	for (int n = 0; *t && *t != ')'; n++) {
		int dims = 0;

		while (*t == '[')
			dims++, t++;
		if (n)
			strbuf_addf(&sb, ", ");
		if (*t == 'L') {
			const char *e = strchr(t, ';');

			for (const char *c = t + 1; c < e; c++)
				strbuf_addf(&sb, "%c", *c == '/' ? '.' : *c);
			t = e + 1;
		} else {
			for (size_t i = 0; i < 8; i++)
				if (prim[i][0] == *t)
					strbuf_addf(&sb, "%s", prim[i] + 1);
			t++;
		}
		while (dims--)
			strbuf_addf(&sb, "[]");
	}
	strbuf_addf(&sb, ")");
	out = harness_fmt("%s", sb.buf);
	strbuf_release(&sb);
	return out;
}

/* ---- the runtime ---- */

/* Skip the suite visibly when the fixture was not built (make targets builds it). */
static int realart_built(void)
{
	const char *targets = getenv("TARGETS");
	char a[4096], b[4096];

	if (!targets)
		return 1; /* harness_setup() fails each test with the reason */
	/* (no harness_fmt here: the suite is built before the harness keeps its strings) */
	snprintf(a, sizeof(a), "%s/realart/core.dex", targets);
	snprintf(b, sizeof(b), "%s/realart/app.jar", targets);
	return access(a, R_OK) == 0 && access(b, R_OK) == 0;
}

static struct harness_proc *start(const char *cls, int arg, enum interp it, int jar)
{
	const char *dir = harness_tmpdir(), *ext = jar ? "jar" : "dex";
	static const char *const sub[] = {"root", "data", "art", "i18n", "tz"};
	static const char *const var[] = {"ANDROID_ROOT", "ANDROID_DATA", "ANDROID_ART_ROOT",
					  "ANDROID_I18N_ROOT", "ANDROID_TZDATA_ROOT"};
	const char *argv[16];
	int n = 0;

	for (size_t i = 0; i < 5; i++) {
		const char *d = harness_fmt("%s/%s", dir, sub[i]);

		mkdir(d, 0700);
		setenv(var[i], d, 1);
	}
	setenv("LD_LIBRARY_PATH", ra("lib"), 1);
	argv[n++] = ra("realart-launcher");
	argv[n++] =
	    harness_fmt("%s:%s", ra(harness_fmt("core.%s", ext)), ra(harness_fmt("app.%s", ext)));
	argv[n++] = cls;
	argv[n++] = harness_fmt("%d", arg);
	argv[n++] = harness_fmt("-Ximage:%s/none.art", dir);
	argv[n++] = "-Xnoimage-dex2oat";
	argv[n++] = "-Xusejit:false";
	if (it != NTERP)
		argv[n++] = "-Xint";
	if (it == SWITCH) {
		argv[n++] = "-Xmethod-trace";
		argv[n++] = harness_fmt("-Xmethod-trace-file:%s/trace.bin", dir);
	}
	argv[n] = NULL;
	return harness_spawn("realart", argv);
}

static char main_state(pid_t pid)
{
	char buf[512], *p;
	FILE *f;

	snprintf(buf, sizeof(buf), "/proc/%d/task/%d/stat", (int)pid, (int)pid);
	f = fopen(buf, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] && p[2] ? p[2] : '?';
}

/* Wait until the main thread sleeps (in the monitor) for a tenth of a second. */
static void wait_blocked(pid_t pid)
{
	double end = harness_now() + 10;
	int still = 0;

	while (still < 5) {
		H_ASSERT(harness_now() < end, "the main thread did not block (state %c)",
			 main_state(pid));
		still = main_state(pid) == 'S' ? still + 1 : 0;
		harness_sleep(0.02);
	}
}

/* ---- dump ---- */

struct java_frame {
	const char *name; /* pretty name with parameters */
	const char *file;
	unsigned line;
};

/* Deep blocked in the monitor, leaf first: down(0) at monitor-enter, down(1..6) at their call
 * of down, run at its call of down, main at its call of run. */
static size_t deep_blocked_frames(struct java_frame *f)
{
	const struct dd_method *down = dd_method("perch.realart.Deep.down");
	const struct dd_method *run = dd_method("perch.realart.Deep.run");
	const struct dd_method *mn = dd_method("perch.realart.Deep.main");
	size_t n = 0;

	f[n++] = (struct java_frame){dd_pretty(down), down->file, dd_line(down, "monitor-enter")};
	for (int i = 0; i < DEEP_DEPTH; i++)
		f[n++] = (struct java_frame){dd_pretty(down), down->file,
					     dd_line(down, "invoke-static {v0, v2}")};
	f[n++] = (struct java_frame){dd_pretty(run), run->file, dd_line(run, "Deep;.down:")};
	f[n++] = (struct java_frame){dd_pretty(mn), mn->file, dd_line(mn, "Deep;.run:")};
	return n;
}

/* The main thread's Java frames are @want, one after the other; the frame after them is the
 * launcher's main() when the runtime's frames are hidden. */
static void check_java_frames(const struct harness_bt_thread *t, const struct java_frame *want,
			      size_t nwant, int hidden)
{
	size_t first = 0;

	while (first < t->nr && strcmp(t->frames[first].module, "[dex]"))
		first++;
	for (size_t i = 0; i < t->nr; i++)
		harness_context_add("  #%zu %s (%s) %s:%d\n", i, t->frames[i].func,
				    t->frames[i].module, t->frames[i].file ? t->frames[i].file : "",
				    t->frames[i].line);
	H_ASSERT(first < t->nr, "no Java frame in the main thread");
	for (size_t i = 0, k = first; i < nwant; i++) {
		const struct harness_bt_frame *fr;

		if (!hidden) /* the runtime's frames sit between them */
			while (k < t->nr && strcmp(t->frames[k].module, "[dex]"))
				k++;
		H_ASSERT(k < t->nr, "only %zu of %zu Java frames", i, nwant);
		fr = &t->frames[k++];
		H_ASSERT(!strcmp(fr->module, "[dex]") && !strcmp(fr->func, want[i].name),
			 "Java frame %zu is %s (%s), want %s", i, fr->func, fr->module,
			 want[i].name);
		H_ASSERT(fr->file && !strcmp(fr->file, want[i].file) &&
			     fr->line == (int)want[i].line,
			 "%s is at %s:%d, dexdump says %s:%u", fr->func, fr->file ? fr->file : "?",
			 fr->line, want[i].file, want[i].line);
		if (hidden && i + 1 == nwant)
			H_ASSERT(k < t->nr && !strcmp(t->frames[k].func, "main") &&
				     !strcmp(t->frames[k].module, "realart-launcher"),
				 "the frame after the Java frames is %s, not the launcher's main",
				 k < t->nr ? t->frames[k].func : "(none)");
	}
	if (hidden)
		for (size_t i = first > 0 ? first - 1 : 0; i < t->nr; i++)
			H_ASSERT(!strstr(t->frames[i].func, "libart.so"),
				 "frame %zu (%s) is an unnamed runtime frame among the Java frames",
				 i, t->frames[i].func);
}

/* perch's native frames (--show-art-frames) against gdb's, thread by thread: the program
 * counters of gdb's frames (consecutive equal ones merged: inlined frames) are those of
 * perch's, which may go on past main to _start. */
static void compare_with_gdb(const struct harness_bt *pbt, const struct harness_bt *gbt)
{
	H_ASSERT(gbt->nr == pbt->nr, "gdb shows %zu threads, perch %zu", gbt->nr, pbt->nr);
	for (size_t i = 0; i < gbt->nr; i++) {
		const struct harness_bt_thread *g = &gbt->threads[i];
		const struct harness_bt_thread *t = harness_bt_find(pbt, g->tid);
		uint64_t pp[512], gp[512];
		size_t np = 0, ng = 0;

		H_ASSERT(t, "perch has no thread %d", (int)g->tid);
		for (size_t k = 0; k < t->nr && np < 512; k++)
			if (strcmp(t->frames[k].module, "[dex]") &&
			    (!np || pp[np - 1] != t->frames[k].pc))
				pp[np++] = t->frames[k].pc;
		for (size_t k = 0; k < g->nr && ng < 512; k++)
			if (!ng || gp[ng - 1] != g->frames[k].pc)
				gp[ng++] = g->frames[k].pc;
		harness_context_add("thread %d: perch %zu native frames, gdb %zu\n", (int)g->tid,
				    np, ng);
		H_ASSERT(ng >= 3 && ng <= np, "thread %d: gdb %zu frames, perch %zu", (int)g->tid,
			 ng, np);
		for (size_t k = 0; k < ng; k++)
			H_ASSERT(pp[k] == gp[k], "thread %d frame %zu: perch 0x%llx, gdb 0x%llx",
				 (int)g->tid, k, (unsigned long long)pp[k],
				 (unsigned long long)gp[k]);
	}
}

static void run_dump(enum interp it, int jar)
{
	struct java_frame want[16];
	size_t nwant;
	struct harness_proc *t, *perch, *all, *gdb;
	struct harness_bt pbt, abt, gbt;
	pid_t pid;

	H_ASSERT(access(GDB_PATH, X_OK) == 0, "%s is missing", GDB_PATH);
	dexdump_load();
	nwant = deep_blocked_frames(want);
	t = start("perch/realart/Deep", 0, it, jar);
	pid = harness_proc_wait_ready(t, 30);
	wait_blocked(pid);

	perch = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "dump", "-p", harness_fmt("%d", (int)pid)));
	H_ASSERT(harness_proc_wait(perch, 30) == 0 && harness_proc_exit_code(perch) == 0,
		 "perch dump failed");
	all = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "dump", "--show-art-frames",
						  "-p", harness_fmt("%d", (int)pid)));
	H_ASSERT(harness_proc_wait(all, 30) == 0 && harness_proc_exit_code(all) == 0,
		 "perch dump --show-art-frames failed");
	gdb = harness_spawn("gdb", HARNESS_ARGV(GDB_PATH, "-batch", "-nx", "-p",
						harness_fmt("%d", (int)pid), "-ex",
						"set print frame-info location-and-address", "-ex",
						"thread apply all bt"));
	H_ASSERT(harness_proc_wait(gdb, 120) == 0, "gdb did not finish");

	harness_bt_parse_perch(&pbt, perch->out.buf);
	harness_bt_parse_perch(&abt, all->out.buf);
	harness_bt_parse_gdb(&gbt, gdb->out.buf);
	H_ASSERT(pbt.nr_bad == 0 && abt.nr_bad == 0, "perch dump lines not understood");
	H_ASSERT(harness_bt_find(&pbt, pid) && harness_bt_find(&abt, pid), "no main thread");
	harness_context_add("%s %s, default:\n", interp_names[it], jar ? "jar" : "dex");
	check_java_frames(harness_bt_find(&pbt, pid), want, nwant, 1);
	harness_context_reset();
	harness_context_add("%s %s, --show-art-frames:\n", interp_names[it], jar ? "jar" : "dex");
	check_java_frames(harness_bt_find(&abt, pid), want, nwant, 0);
	harness_context_reset();
	compare_with_gdb(&abt, &gbt);
	harness_bt_release(&pbt);
	harness_bt_release(&abt);
	harness_bt_release(&gbt);
	harness_proc_kill(t, SIGKILL);
}

/* ---- record ---- */

static int is_java(const char *frame)
{
	return !strncmp(frame, "perch.realart.", 14);
}

/* @frame is @want: "name (file:line)" from --lines (aggregated outputs name a Java method
 * without its signature, as simpleperf does; only `perch dump` shows it), with the folded writer's
 * suffix for interpreted frames, "_[0]" */
static int frame_eq(const char *frame, const struct java_frame *want)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s (%s:%u)_[0]", want->name, want->file, want->line);
	return !strcmp(frame, buf);
}

/* Record @cls (mode @arg) for @secs and load the main thread's folded lines. */
static void record(const char *cls, int arg, enum interp it, int jar, double secs,
		   struct harness_folded *f, pid_t *pid)
{
	const char *out = harness_tmpfile("realart.folded");
	struct harness_proc *t, *perch;

	t = start(cls, arg, it, jar);
	*pid = harness_proc_wait_ready(t, 30);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d", (int)*pid), "-F", "500", "-d",
						    harness_fmt("%g", secs), "--lines", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 60) == 0, "perch record did not finish");
	H_CHECK_RECORD(perch, 0, out, f);
	harness_proc_kill(t, SIGKILL);
}

/* No frame named "libart.so.0+0x..." next to a Java frame. */
static void check_no_runtime_next_to_java(const struct harness_folded *f)
{
	for (size_t i = 0; i < f->nr; i++) {
		const struct harness_folded_line *l = &f->lines[i];

		for (size_t k = 0; k < l->nr_frames; k++) {
			int next = (k > 0 && is_java(l->frames[k - 1])) ||
				   (k + 1 < l->nr_frames && is_java(l->frames[k + 1]));

			H_ASSERT(!next || !strstr(l->frames[k], "libart.so"),
				 "unnamed runtime frame %s next to a Java frame", l->frames[k]);
		}
	}
}

static void run_record_deep(enum interp it, int jar)
{
	const struct dd_method *down, *run, *mn, *spin;
	struct java_frame want[16]; /* root first, as folded lines are */
	unsigned long main_samples = 0, exact = 0, loop = 0;
	struct harness_folded f;
	size_t n = 0;
	pid_t pid;

	dexdump_load();
	down = dd_method("perch.realart.Deep.down");
	run = dd_method("perch.realart.Deep.run");
	mn = dd_method("perch.realart.Deep.main");
	spin = dd_method("perch.realart.Deep.spin");
	want[n++] = (struct java_frame){mn->name, mn->file, dd_line(mn, "Deep;.run:")};
	want[n++] = (struct java_frame){run->name, run->file, dd_line(run, "Deep;.down:")};
	for (int i = 0; i < DEEP_DEPTH; i++)
		want[n++] = (struct java_frame){down->name, down->file,
						dd_line(down, "invoke-static {v0, v2}")};
	want[n++] = (struct java_frame){down->name, down->file, dd_line(down, "Deep;.spin:")};
	/* the loop: every instruction from if-ge to goto is on one line */
	want[n++] = (struct java_frame){spin->name, spin->file, dd_line(spin, "goto")};

	record("perch/realart/Deep", 1, it, jar, 3, &f, &pid);
	for (size_t i = 0; i < f.nr; i++) {
		const struct harness_folded_line *l = &f.lines[i];
		size_t first = 0;

		if (l->tid != pid)
			continue;
		main_samples += l->count;
		while (first < l->nr_frames && !is_java(l->frames[first]))
			first++;
		/* the Java frames, then what spin() calls (under method tracing, its exit event
		 * reads the thread's CPU clock): spin at any of its lines */
		if (first + n <= l->nr_frames &&
		    (first + n == l->nr_frames || !is_java(l->frames[first + n]))) {
			size_t k = 0;

			while (k + 1 < n && frame_eq(l->frames[first + k], &want[k]))
				k++;
			if (k + 1 == n &&
			    !strncmp(l->frames[first + k], want[k].name, strlen(want[k].name)) &&
			    first > 0 && harness_frame_is(l->frames[first - 1], "main")) {
				exact += l->count;
				loop += frame_eq(l->frames[first + k], &want[k]) ? l->count : 0;
			}
		}
	}
	harness_context_add("%s %s: main thread %lu samples, %lu with the whole Java stack, %lu of "
			    "them in spin's loop\n",
			    interp_names[it], jar ? "jar" : "dex", main_samples, exact, loop);
	if (exact * 10 < main_samples * 8)
		harness_folded_context(&f, "main", 12);
	H_ASSERT(main_samples >= 100, "only %lu samples of the main thread", main_samples);
	H_ASSERT(exact * 10 >= main_samples * 8,
		 "only %lu of %lu samples have main > run > down x %d > spin at their lines", exact,
		 main_samples, DEEP_DEPTH + 1);
	/* the loop is nearly all of spin's time; on a loaded machine a thread waits longest
	 * where it enters the kernel (the exit event's clock read), so only half is asked */
	H_ASSERT(loop * 2 >= exact, "only %lu of %lu samples in spin() at its loop's line", loop,
		 exact);
	check_no_runtime_next_to_java(&f);
	harness_folded_release(&f);
}

/* More runnable threads than CPUs over the last minute (other work on the machine)? */
static int machine_busy(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double load = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!f)
		return 1;
	if (fscanf(f, "%lf", &load) != 1)
		load = 1e9;
	fclose(f);
	return load > (double)(cpus > 0 ? cpus : 1);
}

static void run_record_split(enum interp it)
{
	const struct dd_method *mn, *a, *b;
	unsigned long main_samples = 0, in_a = 0, in_b = 0, loops = 0;
	struct java_frame ca, cb, la, lb;
	struct harness_folded f;
	pid_t pid;

	dexdump_load();
	mn = dd_method("perch.realart.Split.main");
	a = dd_method("perch.realart.Split.a");
	b = dd_method("perch.realart.Split.b");
	ca = (struct java_frame){mn->name, mn->file, dd_line(mn, "Split;.a:")};
	cb = (struct java_frame){mn->name, mn->file, dd_line(mn, "Split;.b:")};
	la = (struct java_frame){a->name, a->file, dd_line(a, "goto")};
	lb = (struct java_frame){b->name, b->file, dd_line(b, "goto")};

	record("perch/realart/Split", 0, it, 0, 3, &f, &pid);
	for (size_t i = 0; i < f.nr; i++) {
		const struct harness_folded_line *l = &f.lines[i];
		size_t k = 0;

		if (l->tid != pid)
			continue;
		main_samples += l->count;
		/* the leaf-most Java frame, and its caller */
		for (size_t j = 0; j < l->nr_frames; j++)
			if (is_java(l->frames[j]))
				k = j;
		if (k < 1)
			continue;
		if (frame_eq(l->frames[k - 1], &ca) &&
		    !strncmp(l->frames[k], la.name, strlen(la.name))) {
			in_a += l->count;
			loops += frame_eq(l->frames[k], &la) ? l->count : 0;
		}
		if (frame_eq(l->frames[k - 1], &cb) &&
		    !strncmp(l->frames[k], lb.name, strlen(lb.name))) {
			in_b += l->count;
			loops += frame_eq(l->frames[k], &lb) ? l->count : 0;
		}
	}
	harness_context_add("%s: main thread %lu samples: a %lu, b %lu, %lu of them in the loops\n",
			    interp_names[it], main_samples, in_a, in_b, loops);
	if ((in_a + in_b) * 10 < main_samples * 8)
		harness_folded_context(&f, "main", 12);
	H_ASSERT(main_samples >= 100, "only %lu samples of the main thread", main_samples);
	H_ASSERT((in_a + in_b) * 10 >= main_samples * 8, "only %lu of %lu samples in a() or b()",
		 in_a + in_b, main_samples);
	H_ASSERT(loops * 10 >= (in_a + in_b) * 8, "only %lu of %lu samples at the loops' line",
		 loops, in_a + in_b);
	/* b() runs three times the loop of a(): 75% of the time. Wall-clock samples of a thread
	 * that other processes keep off the CPU all land where it waits, so on a machine with
	 * more runnable threads than CPUs the share is not judged (measured there: 48% to 96%) */
	H_ASSERT(in_a * 100 >= (in_a + in_b) * 3 && in_b * 100 >= (in_a + in_b) * 3,
		 "a() has %lu and b() %lu samples: both should have some", in_a, in_b);
	if (machine_busy())
		printf("e2e-realart: %s: b() share %lu%% not judged: load average above the CPU "
		       "count\n",
		       interp_names[it], in_b * 100 / (in_a + in_b));
	else
		H_ASSERT(in_b * 100 >= (in_a + in_b) * 60 && in_b * 100 <= (in_a + in_b) * 90,
			 "b() has %lu of %lu samples, want about three quarters", in_b,
			 in_a + in_b);
	check_no_runtime_next_to_java(&f);
	harness_folded_release(&f);
}

START_TEST(dump_nterp_dex)
{
	run_dump(NTERP, 0);
}
END_TEST
START_TEST(dump_nterp_jar)
{
	run_dump(NTERP, 1);
}
END_TEST
START_TEST(dump_mterp_dex)
{
	run_dump(MTERP, 0);
}
END_TEST
START_TEST(dump_mterp_jar)
{
	run_dump(MTERP, 1);
}
END_TEST
START_TEST(dump_switch_dex)
{
	run_dump(SWITCH, 0);
}
END_TEST
START_TEST(dump_switch_jar)
{
	run_dump(SWITCH, 1);
}
END_TEST
START_TEST(record_deep_nterp_dex)
{
	run_record_deep(NTERP, 0);
}
END_TEST
START_TEST(record_deep_nterp_jar)
{
	run_record_deep(NTERP, 1);
}
END_TEST
START_TEST(record_deep_mterp_dex)
{
	run_record_deep(MTERP, 0);
}
END_TEST
START_TEST(record_deep_mterp_jar)
{
	run_record_deep(MTERP, 1);
}
END_TEST
START_TEST(record_deep_switch_dex)
{
	run_record_deep(SWITCH, 0);
}
END_TEST
START_TEST(record_deep_switch_jar)
{
	run_record_deep(SWITCH, 1);
}
END_TEST
START_TEST(record_split_nterp)
{
	run_record_split(NTERP);
}
END_TEST
START_TEST(record_split_mterp)
{
	run_record_split(MTERP);
}
END_TEST
START_TEST(record_split_switch)
{
	run_record_split(SWITCH);
}
END_TEST

Suite *e2e_realart_suite(void)
{
	Suite *s = suite_create("e2e-realart");
	TCase *tc;

	if (!realart_built()) {
		printf(
		    "framework skip: e2e-realart: the real-ART fixture is not built (make targets "
		    "builds it into $TARGETS/realart)\n");
		return s;
	}
	tc = tcase_create("dump");
	harness_tcase_init(tc, 90);
	tcase_add_test(tc, dump_nterp_dex);
	tcase_add_test(tc, dump_nterp_jar);
	tcase_add_test(tc, dump_mterp_dex);
	tcase_add_test(tc, dump_mterp_jar);
	tcase_add_test(tc, dump_switch_dex);
	tcase_add_test(tc, dump_switch_jar);
	suite_add_tcase(s, tc);
	tc = tcase_create("record");
	harness_tcase_init(tc, 90);
	tcase_add_test(tc, record_deep_nterp_dex);
	tcase_add_test(tc, record_deep_nterp_jar);
	tcase_add_test(tc, record_deep_mterp_dex);
	tcase_add_test(tc, record_deep_mterp_jar);
	tcase_add_test(tc, record_deep_switch_dex);
	tcase_add_test(tc, record_deep_switch_jar);
	tcase_add_test(tc, record_split_nterp);
	tcase_add_test(tc, record_split_mterp);
	tcase_add_test(tc, record_split_switch);
	suite_add_tcase(s, tc);
	return s;
}
