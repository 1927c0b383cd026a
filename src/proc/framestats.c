/* Android framestats (include/perch/proc/framestats.h): the PROFILEDATA blocks of `dumpsys gfxinfo
 * PKG framestats` parsed by column name, repeated polls merged, frames classified slow or
 * frozen, and the summary of the main thread's stacks during slow frames. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/strbuf.h"
#include "perch/base/textscan.h"
#include "perch/base/xalloc.h"
#include "perch/proc/framestats.h"
#include "perch/proc/stall.h"
#include "perch/profile/profile.h"

#define MARKER	      "---PROFILEDATA---"
#define MIN_PERIOD_NS 4000000ULL /* 250 Hz: smaller IntendedVsync gaps are not a vsync period */
#define MAX_FILE      (256u << 20)

enum col { COL_FLAGS, COL_INTENDED, COL_VSYNC, COL_COMPLETED, COL_INTERVAL, COL_NR };

static const char *const col_names[COL_NR] = {
    [COL_FLAGS] = "Flags",
    [COL_INTENDED] = "IntendedVsync",
    [COL_VSYNC] = "Vsync",
    [COL_COMPLETED] = "FrameCompleted",
    [COL_INTERVAL] = "FrameInterval", /* optional: Android 13+ */
};

void framestats_init(struct framestats *fs)
{
	memset(fs, 0, sizeof(*fs));
}

void framestats_release(struct framestats *fs)
{
	free(fs->v);
	free(fs->fv);
	framestats_init(fs);
}

static int cmp_frame(const void *a, const void *b)
{
	const struct framestats_frame *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* Sort and drop repeats (the same frame seen by two polls keeps its first budget). */
static void sort_unique(struct framestats_frame *v, size_t *n)
{
	size_t i, k = 0;

	if (*n < 2)
		return;
	qsort(v, *n, sizeof(*v), cmp_frame);
	for (i = 1; i < *n; i++)
		if (cmp_frame(&v[i], &v[k]))
			v[++k] = v[i];
	*n = k + 1;
}

/* The @i-th comma-separated field of [@s, @end): *@f, *@fe. -ENOENT when there are fewer. */
static int field(const char *s, const char *end, int i, const char **f, const char **fe)
{
	for (; i > 0; i--) {
		const char *c = memchr(s, ',', (size_t)(end - s));

		if (!c)
			return -ENOENT;
		s = c + 1;
	}
	*f = s;
	*fe = memchr(s, ',', (size_t)(end - s));
	if (!*fe)
		*fe = end;
	return 0;
}

/* Map the header line's names to columns; -EINVAL naming the first required one missing. */
static int parse_header(struct framestats *fs, const char *s, const char *end, int idx[COL_NR],
			unsigned int lineno)
{
	int i = 0;

	for (int c = 0; c < COL_NR; c++)
		idx[c] = -1;
	while (s < end) {
		const char *fe = memchr(s, ',', (size_t)(end - s));
		size_t len;

		if (!fe)
			fe = end;
		len = (size_t)(fe - s);
		for (int c = 0; c < COL_NR; c++)
			if (idx[c] < 0 && strlen(col_names[c]) == len &&
			    !memcmp(s, col_names[c], len))
				idx[c] = i;
		i++;
		s = fe < end ? fe + 1 : end;
	}
	for (int c = 0; c < COL_INTERVAL; c++)
		if (idx[c] < 0) {
			snprintf(
			    fs->error, sizeof(fs->error),
			    "framestats block at line %u has no %s column (header: the line after "
			    "---PROFILEDATA---)",
			    lineno, col_names[c]);
			return -EINVAL;
		}
	return 0;
}

/* One data row into @out; 1 when kept, 2 when left out for its Flags, 0 when left out as
 * incomplete (counted), -EINVAL when malformed. */
static int parse_row(struct framestats *fs, const char *s, const char *end, const int idx[COL_NR],
		     unsigned int lineno, struct framestats_frame *out)
{
	uint64_t v[COL_NR] = {0};

	for (int c = 0; c < COL_NR; c++) {
		const char *f, *fe;

		if (idx[c] < 0)
			continue;
		if (field(s, end, idx[c], &f, &fe) < 0 || textscan_u64(&f, fe, &v[c]) < 0 ||
		    f != fe) {
			if (c == COL_INTERVAL)
				continue;
			snprintf(fs->error, sizeof(fs->error),
				 "framestats line %u: no number in column %s", lineno,
				 col_names[c]);
			return -EINVAL;
		}
	}
	if (v[COL_FLAGS]) {
		/* kept apart, to count each left-out frame once however often it is polled */
		*out = (struct framestats_frame){v[COL_INTENDED], v[COL_COMPLETED], 0};
		return 2;
	}
	if (!v[COL_INTENDED] || v[COL_COMPLETED] <= v[COL_INTENDED]) {
		fs->incomplete++;
		return 0;
	}
	*out = (struct framestats_frame){v[COL_INTENDED], v[COL_COMPLETED], v[COL_INTERVAL]};
	return 1;
}

/* A block's rows are in @blk; merge them into @fs, counting a gap when a full ring does not
 * reach back to the newest frame seen before. */
static void merge_block(struct framestats *fs, struct framestats_frame *blk, size_t n, size_t rows)
{
	uint64_t newest = fs->n ? fs->v[fs->n - 1].start_ns : 0, oldest = UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (blk[i].start_ns < oldest)
			oldest = blk[i].start_ns;
	fs->blocks++;
	if (fs->n && rows >= FRAMESTATS_RING && n && oldest > newest)
		fs->gaps++;
	ALLOC_GROW(fs->v, fs->n + n, fs->alloc);
	memcpy(fs->v + fs->n, blk, n * sizeof(*blk));
	fs->n += n;
	sort_unique(fs->v, &fs->n);
}

int framestats_parse(struct framestats *fs, const char *text)
{
	const char *pos = text, *line, *eol;
	struct framestats_frame *blk = NULL;
	size_t n = 0, alloc = 0, rows = 0;
	int idx[COL_NR], state = 0; /* 0 outside, 1 header next, 2 rows */
	unsigned int lineno = 0, found = 0;
	int ret = 0;

	fs->error[0] = 0;
	while ((line = textscan_line(&pos, &eol))) {
		lineno++;
		while (eol > line && (eol[-1] == '\r' || eol[-1] == ' ' || eol[-1] == '\t'))
			eol--;
		while (line < eol && (*line == ' ' || *line == '\t'))
			line++;
		if ((size_t)(eol - line) == strlen(MARKER) &&
		    !memcmp(line, MARKER, strlen(MARKER))) {
			if (state == 2)
				merge_block(fs, blk, n, rows);
			state = state ? 0 : 1;
			n = rows = 0;
			found += state == 1;
			continue;
		}
		if (!state || line == eol)
			continue;
		if (state == 1) {
			ret = parse_header(fs, line, eol, idx, lineno);
			if (ret < 0)
				goto out;
			state = 2;
			continue;
		}
		ALLOC_GROW(blk, n + 1, alloc);
		ret = parse_row(fs, line, eol, idx, lineno, &blk[n]);
		if (ret < 0)
			goto out;
		if (ret == 2) {
			ALLOC_GROW(fs->fv, fs->flagged + 1, fs->falloc);
			fs->fv[fs->flagged++] = blk[n];
			sort_unique(fs->fv, &fs->flagged);
		}
		n += ret == 1;
		rows++;
		ret = 0;
	}
	if (state == 2) /* a dump cut short: keep its rows */
		merge_block(fs, blk, n, rows);
	if (!found) {
		snprintf(fs->error, sizeof(fs->error),
			 "no ---PROFILEDATA--- block (is it the output of 'dumpsys gfxinfo PKG "
			 "framestats'?)");
		ret = -ENOENT;
	}
out:
	free(blk);
	return ret;
}

int framestats_load(struct framestats *fs, const char *path)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t got;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(fs->error, sizeof(fs->error), "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0 && sb.len < MAX_FILE)
		strbuf_add(&sb, buf, got);
	ret = ferror(f) ? -EIO : sb.len >= MAX_FILE ? -EFBIG : 0;
	fclose(f);
	if (ret < 0) {
		snprintf(fs->error, sizeof(fs->error), "cannot read %s: %s", path, strerror(-ret));
	} else {
		strbuf_addch(&sb, 0); /* the text has no NUL inside: stop at the first */
		ret = framestats_parse(fs, sb.buf);
	}
	strbuf_release(&sb);
	return ret;
}

void framestats_fill_budget(struct framestats *fs, uint64_t period_ns)
{
	uint64_t est = UINT64_MAX;

	for (size_t i = 1; !period_ns && i < fs->n; i++) {
		uint64_t d = fs->v[i].start_ns - fs->v[i - 1].start_ns;

		if (d >= MIN_PERIOD_NS && d < est)
			est = d;
	}
	if (!period_ns)
		period_ns = est != UINT64_MAX ? est : FRAMESTATS_DEFAULT_PERIOD_NS;
	for (size_t i = 0; i < fs->n; i++)
		if (!fs->v[i].budget_ns)
			fs->v[i].budget_ns = period_ns;
}

enum framestats_class framestats_classify(const struct framestats_frame *f)
{
	uint64_t d = f->end_ns - f->start_ns;

	if (d > FRAMESTATS_FROZEN_NS)
		return FRAMESTATS_FROZEN;
	if (f->budget_ns && d > f->budget_ns)
		return FRAMESTATS_SLOW;
	return FRAMESTATS_OK;
}

char *framestats_meta_format(const struct framestats_frame *v, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", v[i].start_ns,
			    v[i].end_ns, v[i].budget_ns);
	return strbuf_detach(&sb, NULL);
}

size_t framestats_meta_parse(const char *text, struct framestats_frame **v)
{
	const char *pos = text ? text : "", *line, *eol;
	size_t n = 0, alloc = 0;

	*v = NULL;
	while ((line = textscan_line(&pos, &eol))) {
		struct framestats_frame f;
		const char *s = line;

		if (textscan_u64(&s, eol, &f.start_ns) < 0 || !textscan_skip_spaces(&s, eol) ||
		    textscan_u64(&s, eol, &f.end_ns) < 0 || !textscan_skip_spaces(&s, eol) ||
		    textscan_u64(&s, eol, &f.budget_ns) < 0 || s != eol || f.end_ns <= f.start_ns)
			continue;
		ALLOC_GROW(*v, n + 1, alloc);
		(*v)[n++] = f;
	}
	sort_unique(*v, &n);
	if (!n) {
		free(*v);
		*v = NULL;
	}
	return n;
}

/* Keep the frames that overlap the kept samples' time span (all when none are kept). */
static size_t clip_to_samples(const struct profile *p, struct framestats_frame *v, size_t n)
{
	size_t ns, k = 0;
	const struct profile_sample *s = profile_samples(p, &ns);
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < ns; i++) {
		lo = s[i].time_ns < lo ? s[i].time_ns : lo;
		hi = s[i].time_ns > hi ? s[i].time_ns : hi;
	}
	if (!ns)
		return n;
	for (size_t i = 0; i < n; i++)
		if (v[i].end_ns > lo && v[i].start_ns <= hi)
			v[k++] = v[i];
	return k;
}

void framestats_store(const struct framestats *fs, struct profile *p)
{
	struct framestats_frame *old, *all;
	size_t n_old = framestats_meta_parse(profile_meta(p, "frames"), &old), n;
	uint64_t slow = 0, frozen = 0;
	char *text, counts[160];

	all = xmalloc((n_old + fs->n + 1) * sizeof(*all));
	if (n_old)
		memcpy(all, old, n_old * sizeof(*all));
	if (fs->n)
		memcpy(all + n_old, fs->v, fs->n * sizeof(*all));
	n = n_old + fs->n;
	sort_unique(all, &n);
	n = clip_to_samples(p, all, n);
	for (size_t i = 0; i < n; i++) {
		enum framestats_class c = framestats_classify(&all[i]);

		slow += c == FRAMESTATS_SLOW;
		frozen += c == FRAMESTATS_FROZEN;
	}
	text = framestats_meta_format(all, n);
	profile_set_meta(p, "frames", text);
	snprintf(counts, sizeof(counts), "%zu %" PRIu64 " %" PRIu64 " %zu %" PRIu64, n, slow,
		 frozen, fs->flagged, fs->gaps);
	profile_set_meta(p, "frame_counts", counts);
	free(text);
	free(all);
	free(old);
}

/* The main thread's index in @p: tid = meta "pid", else the first thread; -1 when none. */
static long main_thread(const struct profile *p)
{
	uint64_t pid = profile_meta_u64(p, "pid");
	size_t n = profile_nr_threads(p);

	for (size_t i = 0; i < n; i++)
		if (pid && (uint64_t)profile_thread_get(p, (uint32_t)i)->tid == pid)
			return (long)i;
	return n ? 0 : -1;
}

/* " in leaf <- caller <- ...": at most 8 named frames, pseudo frames (wait reasons) kept. */
static void add_stack(struct strbuf *sb, const struct profile *p, uint32_t stack)
{
	size_t n, nf, shown = 0;
	const uint32_t *locs = profile_stack(p, stack, &n);

	for (size_t i = 0; locs && i < n && shown < 8; i++) {
		const uint32_t *fr = profile_location_frames(p, locs[i], &nf);

		for (size_t j = 0; fr && j < nf && shown < 8; j++) {
			const struct profile_frame *f = profile_frame(p, fr[j]);
			const char *name = f ? profile_str(p, f->name) : NULL;

			if (!name || !*name)
				continue;
			strbuf_addstr(sb, shown ? " <- " : " in ");
			strbuf_addstr(sb, name);
			shown++;
		}
	}
	if (!shown)
		strbuf_addstr(sb, " (no stack)");
}

struct stack_count {
	uint32_t stack; /* the first stack seen of the group */
	uint64_t key;	/* stall_stack_key(): the same functions root to leaf */
	uint64_t n;
};

static int cmp_count(const void *a, const void *b)
{
	const struct stack_count *x = a, *y = b;

	if (x->n != y->n)
		return (x->n < y->n) - (x->n > y->n);
	return (x->stack > y->stack) - (x->stack < y->stack);
}

/* The main thread's samples in [f->start_ns, f->end_ns), its 3 most frequent stacks (by
 * function, whatever the PCs inside them). */
static void print_frame_stacks(const struct profile *p, long thread,
			       const struct framestats_frame *f, const char *prefix, FILE *out)
{
	size_t ns, nc = 0, alloc = 0;
	const struct profile_sample *s = profile_samples(p, &ns);
	struct stack_count *c = NULL;
	struct strbuf sb = STRBUF_INIT;
	uint64_t total = 0;

	for (size_t i = 0; thread >= 0 && i < ns; i++) {
		uint64_t key;
		size_t k;

		if (s[i].thread != (uint32_t)thread || s[i].time_ns < f->start_ns ||
		    s[i].time_ns >= f->end_ns)
			continue;
		total += s[i].weight;
		key = stall_stack_key(p, s[i].stack);
		for (k = 0; k < nc && c[k].key != key; k++)
			;
		if (k == nc) {
			ALLOC_GROW(c, nc + 1, alloc);
			c[nc++] = (struct stack_count){s[i].stack, key, 0};
		}
		c[k].n += s[i].weight;
	}
	if (!total)
		fprintf(out, "%s      no sample of the main thread in this frame\n", prefix);
	if (nc)
		qsort(c, nc, sizeof(*c), cmp_count);
	for (size_t k = 0; k < nc && k < 3; k++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s      %3" PRIu64 " of %" PRIu64 " samples", prefix, c[k].n,
			    total);
		add_stack(&sb, p, c[k].stack);
		fprintf(out, "%s\n", sb.buf);
	}
	strbuf_release(&sb);
	free(c);
}

static int cmp_longest(const void *a, const void *b)
{
	const struct framestats_frame *x = a, *y = b;
	uint64_t dx = x->end_ns - x->start_ns, dy = y->end_ns - y->start_ns;

	if (dx != dy)
		return (dx < dy) - (dx > dy);
	return cmp_frame(a, b);
}

void framestats_print_summary(const struct profile *p, size_t max, uint64_t base_ns,
			      const char *prefix, FILE *f)
{
	struct framestats_frame *v, *bad;
	size_t n = framestats_meta_parse(profile_meta(p, "frames"), &v), nb = 0;
	long thread = main_thread(p);
	unsigned long long flagged = 0, gaps = 0;
	const char *counts = profile_meta(p, "frame_counts");
	uint64_t frozen = 0;

	if (!n)
		return;
	if (counts)
		sscanf(counts, "%*u %*u %*u %llu %llu", &flagged, &gaps);
	bad = xmalloc(n * sizeof(*bad));
	for (size_t i = 0; i < n; i++)
		if (framestats_classify(&v[i]) != FRAMESTATS_OK) {
			frozen += framestats_classify(&v[i]) == FRAMESTATS_FROZEN;
			bad[nb++] = v[i];
		}
	fprintf(f,
		"%sframes: %zu (%" PRIu64 " slow over the %.1f ms frame budget, %" PRIu64
		" frozen over %llu ms)%s\n",
		prefix, n, nb - frozen, (double)v[0].budget_ns / 1e6, frozen,
		FRAMESTATS_FROZEN_NS / 1000000ULL,
		nb ? ", the slowest with the main thread's stacks:" : "");
	if (flagged || gaps)
		fprintf(f,
			"%s  (%llu frames with non-zero Flags left out; %llu polls may have "
			"missed frames)\n",
			prefix, flagged, gaps);
	qsort(bad, nb, sizeof(*bad), cmp_longest);
	for (size_t i = 0; i < nb && i < max; i++) {
		fprintf(f, "%s  %8.1f ms at +%.3f s  %s\n", prefix,
			(double)(bad[i].end_ns - bad[i].start_ns) / 1e6,
			bad[i].start_ns >= base_ns ? (double)(bad[i].start_ns - base_ns) / 1e9
						   : 0.0,
			framestats_classify(&bad[i]) == FRAMESTATS_FROZEN ? "frozen" : "slow");
		print_frame_stacks(p, thread, &bad[i], prefix, f);
	}
	free(bad);
	free(v);
}
