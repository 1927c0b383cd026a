/* e2e: Java thread states and monitors on the real Android runtime (Debian's android-libart
 * 11.0.0+r48, the fixture of check_realart.c), against ART's own thread dump.
 *
 * tests/realart/app/States.smali starts threads in each state (a monitor the launcher's
 * "holder" thread holds, Object.wait, Thread.sleep, a class initialization that never ends and
 * a thread waiting for it, a native method, a spinning thread) and they stay put. perch dump
 * --format anr reads their states, monitors and Java frames from outside; then SIGQUIT makes
 * the runtime print its own dump of the same threads (the oracle: the runtime, not perch), and
 * the two are compared thread by thread: name, ART's thread id, state, the lock line (object
 * class, verb, owner thread) and the Java frames with their lines.
 *
 * Known differences, allowed and named here: ART prints the object by identity hash code,
 * perch by address (ART's own form when it cannot take the hash); the spinning thread is
 * "Suspended" in ART's dump (the dump suspends it) and "Runnable" in perch's; the Signal
 * Catcher is dumping (Runnable) in ART's. Every Java frame is compared, the native methods
 * ("(Native method)") and the method whose call started a class initialization (below
 * <clinit>, and in mterp atop the thread waiting for it) included.
 *
 * The switch interpreter (ART 11 reaches it only under method tracing, -Xint -Xmethod-trace)
 * is compared with ART's dump of the same program in mterp: under tracing ART's own SIGQUIT
 * dump aborts the runtime (states_switch says why). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

enum interp { NTERP, MTERP, SWITCH };
static const char *const interp_names[] = {"nterp", "mterp", "switch"};

#define MAX_THREADS 32
#define MAX_LINES   48

struct dthread {
	char head[160]; /* "\"name\" prio=5 tid=N State", without "daemon"/"(still ...)" */
	char name[64];
	unsigned tid;
	char state[48];
	char lock[200]; /* the lock line, the object replaced by <obj>, "" none */
	char frames[MAX_LINES][160];
	size_t nr_frames;
};

struct dump {
	struct dthread t[MAX_THREADS];
	size_t nr;
};

static const char *ra(const char *name)
{
	return harness_target(harness_fmt("realart/%s", name));
}

static int realart_built(void)
{
	const char *targets = getenv("TARGETS");
	char a[4096];

	if (!targets)
		return 1;
	snprintf(a, sizeof(a), "%s/realart/app.jar", targets);
	return access(a, R_OK) == 0;
}

/* The runtime's environment: empty directories and the stub JNI libraries. */
static void start_env(void)
{
	const char *dir = harness_tmpdir();
	static const char *const sub[] = {"root", "data", "art", "i18n", "tz"};
	static const char *const var[] = {"ANDROID_ROOT", "ANDROID_DATA", "ANDROID_ART_ROOT",
					  "ANDROID_I18N_ROOT", "ANDROID_TZDATA_ROOT"};

	for (size_t i = 0; i < 5; i++) {
		const char *d = harness_fmt("%s/%s", dir, sub[i]);

		mkdir(d, 0700);
		setenv(var[i], d, 1);
	}
	setenv("LD_LIBRARY_PATH", ra("lib"), 1);
}

static struct harness_proc *start(enum interp it, int jar)
{
	const char *dir = harness_tmpdir(), *ext = jar ? "jar" : "dex";
	const char *argv[16];
	int n = 0;

	start_env();
	argv[n++] = ra("realart-launcher");
	argv[n++] =
	    harness_fmt("%s:%s", ra(harness_fmt("core.%s", ext)), ra(harness_fmt("app.%s", ext)));
	argv[n++] = "perch/realart/States";
	argv[n++] = "0";
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

/* "<0x05ee21b9>" or "<@addr=0x12c80048>" -> "<obj>" */
static void norm_object(const char *in, char *out, size_t size)
{
	const char *lt = strchr(in, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (!lt || !gt || (strncmp(lt, "<0x", 3) && strncmp(lt, "<@addr=0x", 9)))
		snprintf(out, size, "%s", in);
	else
		snprintf(out, size, "%.*s<obj>%s", (int)(lt - in), in, gt + 1);
}

static void parse_head(struct dthread *t, const char *line)
{
	const char *q = strchr(line + 1, '"'), *tid = strstr(line, " tid=");
	char rest[64] = "";

	snprintf(t->name, sizeof(t->name), "%.*s", q ? (int)(q - line - 1) : 0, line + 1);
	if (tid && sscanf(tid, " tid=%u %63s", &t->tid, rest) >= 1)
		snprintf(t->state, sizeof(t->state), "%s", rest);
	snprintf(t->head, sizeof(t->head), "%s", line);
}

/* Parse a thread dump (ART's or perch's; ART's log prefix "... palette_fake.cc:57] " cut off).
 * The frame below a <clinit> is dropped when @art. */
static void parse_dump(const char *text, struct dump *d, int art)
{
	const char *s, *nl;
	struct dthread *t = NULL;

	memset(d, 0, sizeof(*d));
	for (s = text; s && *s; s = nl ? nl + 1 : NULL) {
		char line[160];
		const char *l, *cut;
		size_t len;

		nl = strchr(s, '\n');
		len = nl ? (size_t)(nl - s) : strlen(s);
		snprintf(line, sizeof(line), "%.*s", (int)(len < 159 ? len : 159), s);
		cut = strstr(line, "] ");
		l = art && cut && strstr(line, "palette_fake") ? cut + 2 : line;
		if (l[0] == '"' && strstr(l, " tid=") && d->nr < MAX_THREADS) {
			t = &d->t[d->nr++];
			parse_head(t, l);
		} else if (t && !strncmp(l, "  - ", 4)) {
			norm_object(l + 4, t->lock, sizeof(t->lock));
		} else if (t && !strncmp(l, "  at ", 5) && t->nr_frames < MAX_LINES) {
			snprintf(t->frames[t->nr_frames++], sizeof(t->frames[0]), "%s", l + 5);
		} else if (t && !strncmp(l, "  ... repeated", 14) && t->nr_frames < MAX_LINES) {
			snprintf(t->frames[t->nr_frames++], sizeof(t->frames[0]), "%s", l + 2);
		} else if (!strncmp(l, "----- end", 9)) {
			t = NULL;
		}
	}
}

/* "held by thread 5" -> "held by \"holder\"": the owner by name (ART's ids depend on the order
 * the threads attached, which differs from run to run) */
static void owners_by_name(struct dump *d)
{
	for (size_t i = 0; i < d->nr; i++) {
		char *held = strstr(d->t[i].lock, " held by thread ");
		unsigned id = held ? (unsigned)atoi(held + 16) : 0;

		for (size_t k = 0; held && k < d->nr; k++)
			if (d->t[k].tid == id)
				snprintf(held, sizeof(d->t[i].lock) - (size_t)(held - d->t[i].lock),
					 " held by \"%s\"", d->t[k].name);
	}
}

static const struct dthread *find_thread(const struct dump *d, const char *name)
{
	for (size_t i = 0; i < d->nr; i++)
		if (!strcmp(d->t[i].name, name))
			return &d->t[i];
	return NULL;
}

/* Every line of ART's dump after @from, once it holds its "----- end PID -----". */
static const char *art_dump(struct harness_proc *t, pid_t pid, size_t from)
{
	double end = harness_now() + 20;
	const char *mark = harness_fmt("----- end %d -----", (int)pid);

	kill(pid, SIGQUIT);
	while (harness_now() < end) {
		harness_proc_pump(t, 0.2);
		if (t->err.len > from && strstr(t->err.buf + from, mark))
			return t->err.buf + from;
	}
	H_ASSERT(0, "the runtime printed no thread dump within 20 s of SIGQUIT");
	return NULL;
}

/* perch's state for a thread ART shows as @art_state: equal, but for the two the dump itself
 * changes (the thread it suspends, the thread that dumps). */
static int same_state(const char *name, const char *art_state, const char *perch_state)
{
	if (!strcmp(art_state, perch_state))
		return 1;
	if (!strcmp(art_state, "Suspended") && !strcmp(perch_state, "Runnable"))
		return 1;
	return !strcmp(name, "Signal Catcher");
}

/* Thread by thread (ART's ids too when @ids); returns how many Java frames were compared. */
static size_t compare(const struct dump *art, const struct dump *perch, int ids)
{
	size_t frames = 0;

	H_ASSERT(art->nr >= 12, "ART's dump shows %zu threads", art->nr);
	H_ASSERT(perch->nr == art->nr, "perch shows %zu threads, ART %zu", perch->nr, art->nr);
	for (size_t i = 0; i < art->nr; i++) {
		const struct dthread *a = &art->t[i], *p = find_thread(perch, a->name);

		H_ASSERT(p, "perch has no thread \"%s\"", a->name);
		H_ASSERT(!ids || p->tid == a->tid, "\"%s\": perch says tid=%u, ART tid=%u", a->name,
			 p->tid, a->tid);
		H_ASSERT(same_state(a->name, a->state, p->state), "\"%s\": perch says %s, ART %s",
			 a->name, p->state, a->state);
		H_ASSERT(!strcmp(a->lock, p->lock), "\"%s\": perch's lock line '%s', ART's '%s'",
			 a->name, p->lock, a->lock);
		H_ASSERT(p->nr_frames == a->nr_frames,
			 "\"%s\": perch shows %zu Java frames, ART %zu", a->name, p->nr_frames,
			 a->nr_frames);
		for (size_t k = 0; k < p->nr_frames; k++) {
			/* the running thread's leaf moves between perch's moment and ART's: its
			 * method must be the same, its line may not */
			size_t len = strcspn(a->frames[k], "(");

			if (k == 0 && !strcmp(a->name, "running"))
				H_ASSERT(!strncmp(a->frames[k], p->frames[k], len + 1),
					 "\"%s\" frame 0: perch '%s', ART '%s'", a->name,
					 p->frames[k], a->frames[k]);
			else
				H_ASSERT(!strcmp(a->frames[k], p->frames[k]),
					 "\"%s\" frame %zu: perch '%s', ART '%s'", a->name, k,
					 p->frames[k], a->frames[k]);
		}
		frames += p->nr_frames;
	}
	return frames;
}

/* Every named thread of the program is where it stays: ART says so in perch's dump. */
static int settled(const struct dump *perch)
{
	static const char *const want[][2] = {
	    {"blocked", "Blocked"}, {"waiting", "Waiting"},  {"sleeping", "Sleeping"},
	    {"clinit", "Native"},   {"initwait", "Waiting"}, {"native", "Native"},
	    {"main", "Native"},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct dthread *t = find_thread(perch, want[i][0]);

		if (!t || strcmp(t->state, want[i][1]) || !t->nr_frames)
			return 0;
	}
	return 1;
}

static const char *perch_anr(pid_t pid)
{
	struct harness_proc *p =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "dump", "--format", "anr", "-p",
						harness_fmt("%d", (int)pid)));

	H_ASSERT(harness_proc_wait(p, 60) == 0 && harness_proc_exit_code(p) == 0,
		 "perch dump --format anr failed");
	return p->out.buf;
}

static void run_states(enum interp it, int jar)
{
	struct harness_proc *t = start(it, jar);
	pid_t pid = harness_proc_wait_ready(t, 30);
	static struct dump art, perch;
	const char *text;
	double end = harness_now() + 15;
	size_t frames;
	int tries = 0;

	/* the threads reach their states after the ready line: wait until perch sees them */
	do {
		harness_sleep(0.2);
		text = perch_anr(pid);
		parse_dump(text, &perch, 0);
	} while (!settled(&perch) && harness_now() < end && ++tries < 8);
	harness_context_add("perch dump --format anr:\n%s\n", text);
	H_ASSERT(settled(&perch), "the threads did not reach their states in perch's dump");
	text = art_dump(t, pid, t->err.len);
	harness_context_add("ART's dump:\n%s\n", text);
	parse_dump(text, &art, 1);
	frames = compare(&art, &perch, 1);
	printf("e2e-realart-states: %s %s: %zu threads, %zu Java frames equal to ART's dump\n",
	       interp_names[it], jar ? "jar" : "dex", art.nr, frames);
	harness_proc_kill(t, SIGKILL);
}

/* ---- perch record: ART's reasons as the wait frames of Java samples ---- */

/* The wait frame perch should give thread @a of ART's dump, @art all of it, @f perch's record
 * (kernel tids by thread name): "" for a thread that keeps the kernel's reason. */
static const char *want_reason(const struct dthread *a, const struct dump *art,
			       const struct harness_folded *f)
{
	const char *cls = strstr(a->lock, "(a "), *held = strstr(a->lock, "held by thread ");
	char type[128] = "";

	if (cls)
		snprintf(type, sizeof(type), "%.*s", (int)(strcspn(cls + 3, ")")), cls + 3);
	if (!strcmp(a->state, "Sleeping"))
		return "[java sleeping]";
	if (!strcmp(a->state, "Waiting"))
		return harness_fmt("[java waiting on %s]", type);
	if (strcmp(a->state, "Blocked"))
		return "";
	H_ASSERT(held, "\"%s\" is Blocked with no holder in ART's dump", a->name);
	for (size_t i = 0; i < art->nr; i++)
		if (art->t[i].tid == (unsigned)atoi(held + 15))
			for (size_t k = 0; k < f->nr; k++)
				if (!strcmp(f->lines[k].thread, art->t[i].name))
					return harness_fmt("[java blocked on %s held by tid %d]",
							   type, (int)f->lines[k].tid);
	H_ASSERT(0, "no thread of ART's id %d in the recording", atoi(held + 15));
	return NULL;
}

START_TEST(record_reasons)
{
	struct harness_proc *t = start(NTERP, 0), *perch;
	pid_t pid = harness_proc_wait_ready(t, 30);
	const char *out = harness_tmpfile("states.folded"), *text;
	static struct dump art, pd;
	struct harness_folded f;
	int tries = 0;

	do {
		harness_sleep(0.2);
		parse_dump(perch_anr(pid), &pd, 0);
	} while (!settled(&pd) && ++tries < 8);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						    harness_fmt("%d", (int)pid), "-F", "200", "-d",
						    "1", "-o", out));
	H_ASSERT(harness_proc_wait(perch, 60) == 0, "perch record did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	text = art_dump(t, pid, t->err.len);
	harness_context_add("ART's dump:\n%s\n", text);
	parse_dump(text, &art, 1);
	for (size_t i = 0; i < art.nr; i++) {
		const struct dthread *a = &art.t[i];
		const char *want = want_reason(a, &art, &f);
		unsigned long all = 0, right = 0;

		for (size_t k = 0; k < f.nr; k++) {
			const struct harness_folded_line *l = &f.lines[k];
			const char *leaf = l->nr_frames ? l->frames[l->nr_frames - 1] : "";

			if (strcmp(l->thread, a->name))
				continue;
			all += l->count;
			right += *want			      ? !strcmp(leaf, want) * l->count
				 : strncmp(leaf, "[java ", 6) ? l->count
							      : 0;
		}
		harness_context_add("\"%s\" (%s): %lu of %lu samples end in '%s'\n", a->name,
				    a->state, right, all, *want ? want : "a kernel reason");
		if (!strcmp(a->name, "Signal Catcher") || !strcmp(a->name, "running") ||
		    strlen(a->name) > 15)
			continue; /* ART's dump changes their states; the kernel cuts long names */
		H_ASSERT(all >= 50, "\"%s\": only %lu samples", a->name, all);
		H_ASSERT(right * 10 >= all * 9, "\"%s\": %lu of %lu samples end in '%s'", a->name,
			 right, all, *want ? want : "a kernel reason");
	}
	harness_folded_release(&f);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

/* ---- a deep recursion in the switch interpreter: every Java frame right or marked ---- */

#define RECUR_DEPTH 44

/* The line dexdump gives to the first instruction of method @method ("perch.realart.Recur.down")
 * whose text holds @what: its position table's last row at or before it. */
static unsigned dexdump_line(const char *method, const char *what)
{
	struct harness_proc *p =
	    harness_spawn("dexdump", HARNESS_ARGV("/usr/bin/dexdump", "-d", ra("app.dex")));
	const char *m, *insn, *pos;
	unsigned addr = 0, a, l, line = 0;

	H_ASSERT(harness_proc_wait(p, 30) == 0 && harness_proc_exit_code(p) == 0,
		 "dexdump -d app.dex failed");
	m = strstr(p->out.buf, harness_fmt("] %s:", method));
	H_ASSERT(m, "dexdump has no method %s", method);
	insn = strstr(m, what);
	H_ASSERT(insn && insn[-1] != '\n', "no '%s' in %s", what, method);
	while (insn > m && insn[-1] != '|')
		insn--;
	H_ASSERT(sscanf(insn, "%x:", &addr) == 1, "no address for '%s'", what);
	pos = strstr(m, "positions");
	H_ASSERT(pos, "no positions for %s", method);
	for (pos = strchr(pos, '\n'); pos && sscanf(pos + 1, " 0x%x line=%u", &a, &l) == 2;
	     pos = strchr(pos + 1, '\n'))
		if (a <= addr)
			line = l;
	H_ASSERT(line, "no line for '%s' of %s", what, method);
	return line;
}

/* Record Recur(44) in the switch interpreter with @stack_size bytes of stack per sample; the
 * main thread's samples whose Java frames are all there: *@marked get how many frames were
 * ":?" over all of them. Every frame must be at dexdump's line or marked. */
static unsigned long record_recur(const char *stack_size, unsigned long *marked)
{
	const char *dir = harness_tmpdir(), *out = harness_tmpfile("recur.folded");
	const char *down_at = harness_fmt("perch.realart.Recur.down (Recur.java:%u)_[0]",
					  dexdump_line("perch.realart.Recur.down", "Recur;.down:"));
	const char *main_at = harness_fmt("perch.realart.Recur.main (Recur.java:%u)_[0]",
					  dexdump_line("perch.realart.Recur.main", "Recur;.down:"));
	const char *bottom_at =
	    harness_fmt("perch.realart.Recur.down (Recur.java:%u)_[0]",
			dexdump_line("perch.realart.Recur.down", "Deep;.spin:"));
	const char *argv[16];
	struct harness_proc *t, *perch;
	struct harness_folded f;
	unsigned long whole = 0;
	int n = 0;
	pid_t pid;

	start_env();
	argv[n++] = ra("realart-launcher");
	argv[n++] = harness_fmt("%s:%s", ra("core.dex"), ra("app.dex"));
	argv[n++] = "perch/realart/Recur";
	argv[n++] = harness_fmt("%d", RECUR_DEPTH);
	argv[n++] = harness_fmt("-Ximage:%s/none.art", dir);
	argv[n++] = "-Xnoimage-dex2oat";
	argv[n++] = "-Xusejit:false";
	argv[n++] = "-Xint";
	argv[n++] = "-Xmethod-trace";
	argv[n++] = harness_fmt("-Xmethod-trace-file:%s/trace.bin", dir);
	argv[n] = NULL;
	t = harness_spawn("realart", argv);
	pid = harness_proc_wait_ready(t, 30);
	perch =
	    harness_spawn("perch", HARNESS_ARGV(harness_perch(), "record", "-p",
						harness_fmt("%d", (int)pid), "-F", "200", "-d", "2",
						"--lines", "--stack-size", stack_size, "-o", out));
	H_ASSERT(harness_proc_wait(perch, 60) == 0, "perch record did not finish");
	H_CHECK_RECORD(perch, 0, out, &f);
	*marked = 0;
	for (size_t i = 0; i < f.nr; i++) {
		const struct harness_folded_line *l = &f.lines[i];
		size_t first = 0, k;

		if (l->tid != pid)
			continue;
		while (first < l->nr_frames &&
		       strncmp(l->frames[first], "perch.realart.Recur.", 20))
			first++;
		if (first + RECUR_DEPTH + 2 > l->nr_frames)
			continue; /* a sample in transit, or cut */
		H_ASSERT(
		    !strcmp(l->frames[first], main_at) ||
			!strcmp(l->frames[first], "perch.realart.Recur.main (Recur.java:?)_[0]"),
		    "main is at %s, dexdump says %s", l->frames[first], main_at);
		*marked += strstr(l->frames[first], ":?") ? l->count : 0;
		for (k = first + 1; k <= first + RECUR_DEPTH; k++) {
			H_ASSERT(!strcmp(l->frames[k], down_at) ||
				     !strcmp(l->frames[k],
					     "perch.realart.Recur.down (Recur.java:?)_[0]"),
				 "frame %zu is %s, want %s or its line marked", k - first,
				 l->frames[k], down_at);
			*marked += strstr(l->frames[k], ":?") ? l->count : 0;
		}
		H_ASSERT(!strcmp(l->frames[k], bottom_at), "the bottom frame is %s, want %s",
			 l->frames[k], bottom_at);
		whole += l->count;
	}
	harness_folded_release(&f);
	harness_proc_kill(t, SIGKILL);
	return whole;
}

START_TEST(recur_switch)
{
	unsigned long marked_small, marked_big, small, big;

	small = record_recur("32768", &marked_small);
	big = record_recur("1048576", &marked_big);
	printf("e2e-realart-states: switch, %d-deep recursion: %lu whole samples with 32 KiB of "
	       "stack (%lu frames marked :?), %lu with 1 MiB (%lu marked)\n",
	       RECUR_DEPTH, small, marked_small, big, marked_big);
	H_ASSERT(small >= 50 && big >= 50, "only %lu and %lu samples with the whole recursion",
		 small, big);
	/* the case is exercised: 32 KiB do not reach main; 1 MiB reaches every frame */
	H_ASSERT(marked_small > 0, "no frame marked with a 32 KiB copy: the test misses its case");
	H_ASSERT(marked_big == 0, "%lu frames marked with a 1 MiB copy", marked_big);
}
END_TEST

/* The switch interpreter: ART reaches it only under method tracing, and there its own SIGQUIT
 * dump aborts the runtime (OatQuickMethodHeader::GetCodeSize's check, from DumpNativeStack).
 * The oracle is then ART's dump of the same program in mterp, the other interpreter of
 * ShadowFrames (threads by name, owners by name: the ids follow the order threads attach). */
START_TEST(states_switch)
{
	static struct dump art, perch;
	struct harness_proc *t = start(MTERP, 0);
	pid_t pid = harness_proc_wait_ready(t, 30);
	const char *text;
	size_t frames;
	int tries = 0;

	do {
		harness_sleep(0.2);
		parse_dump(perch_anr(pid), &perch, 0);
	} while (!settled(&perch) && ++tries < 8);
	text = art_dump(t, pid, t->err.len);
	harness_context_add("ART's dump (mterp):\n%s\n", text);
	parse_dump(text, &art, 1);
	harness_proc_kill(t, SIGKILL);
	t = start(SWITCH, 0);
	pid = harness_proc_wait_ready(t, 30);
	tries = 0;
	do {
		harness_sleep(0.2);
		text = perch_anr(pid);
		parse_dump(text, &perch, 0);
	} while (!settled(&perch) && ++tries < 8);
	harness_context_add("perch dump --format anr (switch, method tracing):\n%s\n", text);
	owners_by_name(&art);
	owners_by_name(&perch);
	frames = compare(&art, &perch, 0);
	printf("e2e-realart-states: switch (method tracing): %zu threads, %zu Java frames equal to "
	       "ART's dump in mterp\n",
	       art.nr, frames);
	harness_proc_kill(t, SIGKILL);
}
END_TEST

START_TEST(states_nterp_dex)
{
	run_states(NTERP, 0);
}
END_TEST
START_TEST(states_nterp_jar)
{
	run_states(NTERP, 1);
}
END_TEST
START_TEST(states_mterp_dex)
{
	run_states(MTERP, 0);
}
END_TEST
START_TEST(states_mterp_jar)
{
	run_states(MTERP, 1);
}
END_TEST

Suite *e2e_realart_states_suite(void)
{
	Suite *s = suite_create("e2e-realart-states");
	TCase *tc;

	if (!realart_built()) {
		printf(
		    "framework skip: e2e-realart-states: the real-ART fixture is not built (make "
		    "targets builds it into $TARGETS/realart)\n");
		return s;
	}
	tc = tcase_create("states");
	harness_tcase_init(tc, 120);
	tcase_add_test(tc, states_nterp_dex);
	tcase_add_test(tc, states_nterp_jar);
	tcase_add_test(tc, states_mterp_dex);
	tcase_add_test(tc, states_mterp_jar);
	tcase_add_test(tc, states_switch);
	suite_add_tcase(s, tc);
	tc = tcase_create("record");
	harness_tcase_init(tc, 120);
	tcase_add_test(tc, record_reasons);
	suite_add_tcase(s, tc);
	tc = tcase_create("recur");
	harness_tcase_init(tc, 120);
	tcase_add_test(tc, recur_switch);
	suite_add_tcase(s, tc);
	return s;
}
