/* Java threads in a dump: the line perch dump adds under an ART thread, and the whole dump in
 * the layout of ART's own thread dump (`kill -3`, an ANR trace) for `perch dump --format anr`.
 * The states, monitors and names come from art-thread.c (ART's memory, read while the
 * threads are held stopped); the Java frames and lines are perch's own unwind. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "perch/art/art-thread.h"
#include "perch/base/strbuf.h"
#include "perch/record/dump.h"

/* ART's own repetition cut (thread.cc StackDumpVisitor::kMaxRepetition) */
#define ANR_MAX_REPETITION 3

void dump_java_text(const struct art_thread *jt, struct strbuf *sb)
{
	strbuf_reset(sb);
	strbuf_addf(sb, "java: \"%s\"%s tid=%u %s", jt->name, jt->daemon ? " daemon" : "",
		    jt->thin_id, art_thread_state_name(jt->state));
	if (jt->starting)
		strbuf_addstr(sb, " (still starting up)");
	strbuf_addstr(sb, ", ");
	if (!art_thread_lock_text(jt, sb)) {
		strbuf_setlen(sb, sb->len - 2);
		return;
	}
	if (jt->owner_tid)
		strbuf_addf(sb, " (tid %d)", (int)jt->owner_tid);
}

/* ART's "  - waiting to lock ..." line; 0 when the thread has none. */
static int lock_line(const struct art_thread *jt, struct strbuf *out)
{
	strbuf_addstr(out, "  - ");
	if (art_thread_lock_text(jt, out)) {
		strbuf_addstr(out, "\n");
		return 1;
	}
	strbuf_setlen(out, out->len - 4);
	return 0;
}

/* One state of a dumped thread, for the ANR layout's frame walk. */
struct anr_walk {
	const struct art_thread *jt;
	struct strbuf *out;
	size_t java; /* Java frames printed */
	char last_func[256];
	unsigned int last_line;
	size_t repeated;
};

#define NATIVE_SUFFIX " (Native method)"

static int is_java_frame(const struct dump_frame *f)
{
	return !strcmp(f->module, "[dex]") || !strcmp(f->module, "[jit]");
}

/* The length of @func without the resolver's " (Native method)", or 0 when it has none. */
static size_t native_name_len(const char *func)
{
	size_t n = strlen(func), k = strlen(NATIVE_SUFFIX);

	return n > k && !strcmp(func + n - k, NATIVE_SUFFIX) ? n - k : 0;
}

static void anr_flush_repeats(struct anr_walk *w)
{
	if (w->repeated >= ANR_MAX_REPETITION)
		strbuf_addf(w->out, "  ... repeated %zu times\n", w->repeated - ANR_MAX_REPETITION);
	w->repeated = 0;
}

static void anr_frame(void *arg, const struct dump_frame *f)
{
	struct anr_walk *w = arg;

	if (!is_java_frame(f))
		return;
	if (w->java && !strcmp(w->last_func, f->func) && w->last_line == f->line) {
		if (++w->repeated >= ANR_MAX_REPETITION)
			return;
	} else {
		anr_flush_repeats(w);
	}
	snprintf(w->last_func, sizeof(w->last_func), "%s", f->func);
	w->last_line = f->line;
	if (native_name_len(f->func))
		strbuf_addf(w->out, "  at %.*s(Native method)\n", (int)native_name_len(f->func),
			    f->func);
	else if (f->file && f->line)
		strbuf_addf(w->out, "  at %s(%s:%u)\n", f->func, f->file, f->line);
	else
		strbuf_addf(w->out, "  at %s(%s:?)\n", f->func, f->file ? f->file : "unavailable");
	if (!w->java++)
		lock_line(w->jt, w->out);
}

/* Java priority from the nice value, by Android's table (libartpalette kNiceValues: priority
 * 1 to 10 is nice 19, 16, 13, 10, 0, -2, -4, -5, -6, -8): ART prints the Java field, which
 * this matches for threads whose priority was set through it (or never set). */
static int java_priority(pid_t tid)
{
	static const int nice_of[10] = {19, 16, 13, 10, 0, -2, -4, -5, -6, -8};
	int nice, best = 1;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)tid);
	if (nice == -1 && errno)
		return 5;
	for (int p = 1; p <= 10; p++)
		if (nice <= nice_of[p - 1])
			best = p;
	return best;
}

void dump_anr_thread(struct profile *p, struct resolver *r, struct dump_thread *dt,
		     const struct art_thread *jt, struct strbuf *out)
{
	struct anr_walk w = {.jt = jt, .out = out};

	strbuf_addf(out, "\"%s\"%s prio=%d tid=%u %s%s\n", jt->name, jt->daemon ? " daemon" : "",
		    java_priority(dt->tid), jt->thin_id, art_thread_state_name(jt->state),
		    jt->starting ? " (still starting up)" : "");
	strbuf_addf(out, "  | sysTid=%d state=%c self=0x%llx\n", (int)dt->tid, dt->state,
		    (unsigned long long)jt->self);
	if (dt->taken)
		dump_frames(p, r, dt, anr_frame, &w);
	anr_flush_repeats(&w);
	if (!w.java) {
		if (lock_line(jt, out))
			strbuf_addstr(out, "  (the frames of this wait were not found)\n");
		strbuf_addstr(out, "  (no managed stack frames)\n");
	}
	strbuf_addstr(out, "\n");
}
