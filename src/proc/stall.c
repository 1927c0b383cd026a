/* Stall detection on one thread's samples (see stall.h): two runs are tracked at once, the
 * current off-CPU run and the current same-stack run; a run that ends longer than the
 * threshold becomes a stall. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/proc/stall.h"
#include "perch/profile/profile.h"

/* A stretch of samples on one stack inside an off-CPU run. */
struct stretch {
	uint32_t stack;
	uint64_t key;
	size_t n;
	char reason[STALL_REASON_MAX];
};

struct stall_detector {
	struct stall_opts o;
	char *name;
	pid_t tid;

	int started; /* a sample was fed since the last finish */
	uint64_t first_t, last_t;

	struct {
		int active;
		uint64_t start;
		int cut;
		struct stretch cur, best;
	} off;
	struct {
		int active;
		uint64_t start, key;
		uint32_t stack;
		size_t n, running;
		int cut;
	} same;

	struct stall *v; /* found and not drained yet, in time order */
	size_t nr, alloc;
	size_t total, off_cpu;		     /* found, drained or not */
	struct stall longest[STALL_LONGEST]; /* the longest found, longest first */
	size_t nr_longest;
};

struct stall_detector *stall_new(const struct stall_opts *o)
{
	struct stall_detector *d = xcalloc(1, sizeof(*d));

	d->o = *o;
	d->name = o->name ? xstrdup(o->name) : NULL;
	d->o.name = d->name;
	d->tid = o->tid;
	if (!d->o.period_ns)
		d->o.period_ns = 10000000;
	return d;
}

void stall_free(struct stall_detector *d)
{
	if (!d)
		return;
	free(d->name);
	free(d->v);
	free(d);
}

pid_t stall_watched(const struct stall_detector *d)
{
	return d->tid;
}

const char *stall_kind_name(enum stall_kind k)
{
	return k == STALL_RUNNING ? "running" : "off-cpu";
}

/* Copy @s into @dst without control characters (a path in a wait frame is the target's). */
static void copy_reason(char *dst, const char *s)
{
	size_t i;

	for (i = 0; s && s[i] && i < STALL_REASON_MAX - 1; i++)
		dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	dst[i] = '\0';
}

static int cmp_longest(const void *a, const void *b);

/* Keep @s among the STALL_LONGEST longest (cmp_longest order). */
static void keep_longest(struct stall_detector *d, const struct stall *s)
{
	size_t i = d->nr_longest;

	if (i == STALL_LONGEST) {
		if (cmp_longest(s, &d->longest[i - 1]) >= 0)
			return;
		i--;
	} else {
		d->nr_longest++;
	}
	for (; i > 0 && cmp_longest(s, &d->longest[i - 1]) < 0; i--)
		d->longest[i] = d->longest[i - 1];
	d->longest[i] = *s;
}

static void emit(struct stall_detector *d, enum stall_kind kind, uint64_t start, uint64_t end,
		 uint32_t stack, const char *reason, int cut)
{
	struct stall *s;

	if (end < start || end - start < d->o.threshold_ns)
		return;
	ALLOC_GROW(d->v, d->nr + 1, d->alloc);
	s = &d->v[d->nr++];
	memset(s, 0, sizeof(*s));
	s->start_ns = start;
	s->duration_ns = end - start;
	s->tid = d->tid;
	s->stack = stack;
	s->kind = kind;
	s->cut = cut;
	copy_reason(s->reason, reason);
	d->total++;
	d->off_cpu += kind == STALL_OFF_CPU;
	keep_longest(d, s);
	/* keep time order: a running stall closes after an off-CPU one that began later */
	for (size_t i = d->nr - 1; i > 0 && d->v[i - 1].start_ns > d->v[i].start_ns; i--) {
		struct stall tmp = d->v[i - 1];

		d->v[i - 1] = d->v[i];
		d->v[i] = tmp;
	}
}

static void off_close(struct stall_detector *d, uint64_t end, int cut)
{
	struct stretch *b = &d->off.best;

	if (!d->off.active)
		return;
	if (d->off.cur.n > b->n)
		*b = d->off.cur;
	emit(d, STALL_OFF_CPU, d->off.start, end, b->stack, b->reason, d->off.cut || cut);
	d->off.active = 0;
}

static void same_close(struct stall_detector *d, uint64_t end, int cut)
{
	if (!d->same.active)
		return;
	if (2 * d->same.running > d->same.n)
		emit(d, STALL_RUNNING, d->same.start, end, d->same.stack, "running",
		     d->same.cut || cut);
	d->same.active = 0;
}

static void off_open(struct stall_detector *d, uint64_t t, int cut)
{
	memset(&d->off, 0, sizeof(d->off));
	d->off.active = 1;
	d->off.start = t;
	d->off.cut = cut;
	d->off.cur.stack = d->off.best.stack = STALL_NO_STACK;
}

/* One more off-CPU sample on @stack (STALL_NO_STACK for a cpu-mode gap). */
static void off_add(struct stall_detector *d, uint32_t stack, uint64_t key, const char *reason,
		    char state)
{
	struct stretch *c = &d->off.cur;

	if (!c->n || c->key != key || c->stack != stack) {
		if (c->n > d->off.best.n)
			d->off.best = *c;
		c->stack = stack;
		c->key = key;
		c->n = 0;
		if (reason && *reason)
			copy_reason(c->reason, reason);
		else if (stack == STALL_NO_STACK)
			copy_reason(c->reason, "not running");
		else
			snprintf(c->reason, sizeof(c->reason), "state %c", state);
	}
	c->n++;
}

static int is_off(char state)
{
	return state && state != 'R';
}

void stall_feed(struct stall_detector *d, pid_t tid, const char *comm, const struct stall_sample *s)
{
	uint64_t t = s->time_ns;
	int first;

	if (!d->tid && d->name && comm && !strcmp(comm, d->name))
		d->tid = tid;
	if (!d->tid || tid != d->tid)
		return;
	if (d->started && t < d->last_t)
		return;
	first = !d->started;
	if (first) {
		d->started = 1;
		d->first_t = t;
	}
	/* cpu mode: the thread was not running between the two samples */
	if (!first && d->o.cpu_mode && t - d->last_t > 2 * d->o.period_ns) {
		uint64_t gap = d->last_t + d->o.period_ns;

		same_close(d, gap, 0);
		if (!d->off.active)
			off_open(d, gap, 0);
		off_add(d, STALL_NO_STACK, 0, NULL, 0);
	}
	if (is_off(s->state) && s->ran == 1)
		off_close(d, t, 0); /* it ran in between: a new off-CPU run from here */
	if (is_off(s->state)) {
		if (!d->off.active)
			off_open(d, t, first);
		off_add(d, s->stack, s->key, s->reason, s->state);
	} else {
		off_close(d, t, 0);
	}
	if (d->same.active && d->same.key != s->key)
		same_close(d, t, 0);
	if (!d->same.active) {
		memset(&d->same, 0, sizeof(d->same));
		d->same.active = 1;
		d->same.start = t;
		d->same.key = s->key;
		d->same.stack = s->stack;
		d->same.cut = first;
	}
	d->same.n++;
	if (!is_off(s->state))
		d->same.running++;
	d->last_t = t;
}

int stall_ongoing(const struct stall_detector *d, uint64_t *start_ns, enum stall_kind *kind)
{
	int off = d->off.active, same = d->same.active && 2 * d->same.running > d->same.n;

	if (!off && !same)
		return 0;
	if (off && (!same || d->off.start <= d->same.start)) {
		*start_ns = d->off.start;
		if (kind)
			*kind = STALL_OFF_CPU;
	} else {
		*start_ns = d->same.start;
		if (kind)
			*kind = STALL_RUNNING;
	}
	return 1;
}

void stall_finish(struct stall_detector *d, uint64_t end_ns)
{
	uint64_t end;

	if (!d->started)
		return;
	end = d->last_t + d->o.period_ns;
	if (d->o.cpu_mode && end_ns > d->last_t + 2 * d->o.period_ns) {
		/* the thread stopped running before the end */
		same_close(d, end, 0);
		if (!d->off.active)
			off_open(d, end, 0);
		off_add(d, STALL_NO_STACK, 0, NULL, 0);
		end = end_ns;
	}
	off_close(d, end, 1);
	same_close(d, end, 1);
	d->started = 0;
}

const struct stall *stall_list(const struct stall_detector *d, size_t *n)
{
	*n = d->nr;
	return d->v;
}

size_t stall_count(const struct stall_detector *d, size_t *off_cpu)
{
	if (off_cpu)
		*off_cpu = d->off_cpu;
	return d->total;
}

const struct stall *stall_longest(const struct stall_detector *d, size_t *n)
{
	*n = d->nr_longest;
	return d->longest;
}

void stall_drain(struct stall_detector *d, stall_drain_fn *fn, void *arg)
{
	/* a stall found later starts no earlier than the runs still open, or than the last
	 * sample: the ones before that keep their place in time order */
	uint64_t bound = d->started ? d->last_t : UINT64_MAX;
	size_t k = 0;

	if (d->started && d->off.active && d->off.start < bound)
		bound = d->off.start;
	if (d->started && d->same.active && d->same.start < bound)
		bound = d->same.start;
	while (k < d->nr && d->v[k].start_ns <= bound)
		k++;
	if (!k)
		return;
	if (fn) {
		char *text = stall_meta_format(d->v, k);

		fn(arg, text);
		free(text);
	}
	memmove(d->v, d->v + k, (d->nr - k) * sizeof(*d->v));
	d->nr -= k;
}

static uint64_t mix(uint64_t h, uint32_t w)
{
	h ^= w;
	return h * 1099511628211ULL;
}

uint64_t stall_stack_key(const struct profile *p, uint32_t stack)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a over 32-bit words */
	size_t n, nf;
	const uint32_t *locs = profile_stack(p, stack, &n);

	for (size_t i = 0; locs && i < n; i++) {
		const uint32_t *fr = profile_location_frames(p, locs[i], &nf);

		if (!nf)
			h = mix(mix(h, 0), locs[i]);
		for (size_t j = 0; j < nf; j++) {
			const struct profile_frame *f = profile_frame(p, fr[j]);

			/* a named frame by its name; otherwise by its location */
			if (f && f->name)
				h = mix(mix(h, f->name), 0);
			else
				h = mix(mix(h, 0), locs[i]);
		}
	}
	return h;
}

const char *stall_stack_reason(const struct profile *p, uint32_t stack)
{
	size_t n, nf;
	const uint32_t *locs = profile_stack(p, stack, &n);
	const uint32_t *fr;
	const struct profile_frame *f;

	if (!locs || !n)
		return NULL;
	fr = profile_location_frames(p, locs[0], &nf);
	if (!fr || !nf)
		return NULL;
	f = profile_frame(p, fr[0]);
	if (!f || f->kind != PROFILE_FRAME_PSEUDO)
		return NULL;
	return profile_str(p, f->name);
}

void stall_feed_stack(struct stall_detector *d, const struct profile *p, pid_t tid,
		      const char *comm, uint64_t time_ns, char state, int ran, uint32_t stack)
{
	struct stall_sample s = {.time_ns = time_ns, .state = state, .stack = stack, .ran = ran};

	if (!d->tid && !(d->name && comm && !strcmp(comm, d->name)))
		return;
	if (d->tid && tid != d->tid)
		return;
	s.key = stall_stack_key(p, stack);
	s.reason = stall_stack_reason(p, stack);
	stall_feed(d, tid, comm, &s);
}

char *stall_meta_format(const struct stall *v, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	char reason[STALL_REASON_MAX];

	for (size_t i = 0; i < n; i++) {
		strbuf_addf(&sb, "%" PRIu64 " %" PRIu64 " %d ", v[i].start_ns, v[i].duration_ns,
			    (int)v[i].tid);
		if (v[i].stack == STALL_NO_STACK)
			strbuf_addch(&sb, '-');
		else
			strbuf_addf(&sb, "%" PRIu32, v[i].stack);
		copy_reason(reason, v[i].reason);
		strbuf_addf(&sb, " %s %d %s\n", stall_kind_name(v[i].kind), v[i].cut ? 1 : 0,
			    reason);
	}
	return strbuf_detach(&sb, NULL);
}

/* A decimal at *@s followed by one space; advances @s. 0 or -EINVAL. */
static int take_u64(const char **s, uint64_t *out)
{
	char *end;

	if (**s < '0' || **s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(*s, &end, 10);
	if (errno || *end != ' ')
		return -EINVAL;
	*s = end + 1;
	return 0;
}

static int parse_line(const char *s, size_t len, struct stall *out)
{
	char *line = xstrndup(s, len);
	const char *p = line;
	uint64_t tid, stack = STALL_NO_STACK;
	int ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (take_u64(&p, &out->start_ns) || take_u64(&p, &out->duration_ns) || take_u64(&p, &tid) ||
	    tid > INT32_MAX)
		goto out;
	if (!strncmp(p, "- ", 2))
		p += 2;
	else if (take_u64(&p, &stack) || stack >= STALL_NO_STACK)
		goto out;
	if (!strncmp(p, "off-cpu ", 8)) {
		out->kind = STALL_OFF_CPU;
		p += 8;
	} else if (!strncmp(p, "running ", 8)) {
		out->kind = STALL_RUNNING;
		p += 8;
	} else {
		goto out;
	}
	if ((p[0] != '0' && p[0] != '1') || (p[1] != ' ' && p[1]))
		goto out;
	out->cut = p[0] == '1';
	p += p[1] ? 2 : 1;
	out->tid = (pid_t)tid;
	out->stack = (uint32_t)stack;
	copy_reason(out->reason, p);
	ret = 0;
out:
	free(line);
	return ret;
}

size_t stall_meta_parse(const char *text, struct stall **v)
{
	size_t nr = 0, alloc = 0;

	*v = NULL;
	while (text && *text) {
		size_t len = strcspn(text, "\n");
		struct stall s;

		if (len && parse_line(text, len, &s) == 0) {
			ALLOC_GROW(*v, nr + 1, alloc);
			(*v)[nr++] = s;
		}
		text += len;
		if (*text)
			text++;
	}
	return nr;
}

static int cmp_longest(const void *a, const void *b)
{
	const struct stall *x = a, *y = b;

	if (x->duration_ns != y->duration_ns)
		return x->duration_ns > y->duration_ns ? -1 : 1;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* "main <- work <- nanosleep": the stack from the first non-pseudo frame, at most 6 names. */
static void add_stack(struct strbuf *sb, const struct profile *p, uint32_t stack)
{
	size_t n, nf, shown = 0;
	const uint32_t *locs = p && stack != STALL_NO_STACK ? profile_stack(p, stack, &n) : NULL;

	for (size_t i = 0; locs && i < n && shown < 6; i++) {
		const uint32_t *fr = profile_location_frames(p, locs[i], &nf);

		for (size_t j = 0; j < nf && shown < 6; j++) {
			const struct profile_frame *f = profile_frame(p, fr[j]);
			const char *name = f ? profile_str(p, f->name) : NULL;

			if (!f || f->kind == PROFILE_FRAME_PSEUDO || !name || !*name)
				continue;
			strbuf_addstr(sb, shown ? " <- " : " in ");
			strbuf_addstr(sb, name);
			shown++;
		}
	}
}

void stall_print_longest(const struct stall *v, size_t n, size_t max, const struct profile *p,
			 uint64_t base_ns, const char *prefix, FILE *f)
{
	struct stall *sorted;
	struct strbuf sb = STRBUF_INIT;

	if (!n)
		return;
	sorted = xmalloc(n * sizeof(*sorted));
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_longest);
	for (size_t i = 0; i < n && i < max; i++) {
		const struct stall *s = &sorted[i];

		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s%8.1f ms%s at +%.3f s  %-7s %s", prefix,
			    (double)s->duration_ns / 1e6, s->cut ? "+" : " ",
			    s->start_ns >= base_ns ? (double)(s->start_ns - base_ns) / 1e9 : 0.0,
			    stall_kind_name(s->kind), s->reason);
		add_stack(&sb, p, s->stack);
		fprintf(f, "%s\n", sb.buf);
	}
	strbuf_release(&sb);
	free(sorted);
}
