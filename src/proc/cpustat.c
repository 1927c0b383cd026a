/* /proc/stat "cpu" lines and the CPU-usage arithmetic between two readings (system, per CPU,
 * per process or thread). No clocks are read here: callers pass the elapsed time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perch/base/textscan.h"
#include "perch/base/xalloc.h"
#include "perch/proc/cpustat.h"

/* Longest cpu line: "cpuNNNN" + 10 numbers of 20 digits, with margin. */
#define CPUSTAT_LINE_MAX 512

/* The numbers after "cpu" / "cpuN": at least 4 (user nice system idle), at most 10. */
static int parse_times(const char *p, const char *eol, struct cpustat_times *t)
{
	uint64_t *f[] = {&t->user, &t->nice,	&t->system, &t->idle,  &t->iowait,
			 &t->irq,  &t->softirq, &t->steal,  &t->guest, &t->guest_nice};
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	while (p < eol) {
		if (!textscan_skip_spaces(&p, eol))
			return -EINVAL;
		if (p == eol)
			break; /* trailing spaces */
		if (n == ARRAY_SIZE(f) || textscan_u64(&p, eol, f[n]))
			return -EINVAL;
		n++;
	}
	return n >= 4 ? 0 : -EINVAL;
}

int cpustat_parse(const char *text, struct cpustat *out)
{
	const char *pos = text, *line, *eol;
	size_t alloc = 0;
	int have_all = 0;

	memset(out, 0, sizeof(*out));
	while ((line = textscan_line(&pos, &eol))) {
		struct cpustat_times t;
		const char *p = line;
		uint64_t id;

		if (textscan_expect(&p, eol, "cpu"))
			continue; /* intr, ctxt, btime, processes, ... */
		if (eol - line > CPUSTAT_LINE_MAX) {
			out->bad_lines++;
			continue;
		}
		if (*p == ' ') {
			if (have_all || parse_times(p, eol, &t)) {
				out->bad_lines++;
				continue;
			}
			out->all = t;
			have_all = 1;
			continue;
		}
		if (textscan_u64(&p, eol, &id) || id >= CPUSTAT_MAX_CPUS ||
		    parse_times(p, eol, &t) || out->nr_cpus >= CPUSTAT_MAX_CPUS ||
		    (out->nr_cpus && (uint64_t)out->cpus[out->nr_cpus - 1].id >= id)) {
			out->bad_lines++;
			continue;
		}
		ALLOC_GROW(out->cpus, out->nr_cpus + 1, alloc);
		out->cpus[out->nr_cpus].id = (int)id;
		out->cpus[out->nr_cpus].t = t;
		out->nr_cpus++;
	}
	if (!have_all) {
		cpustat_release(out);
		return -EINVAL;
	}
	return 0;
}

int cpustat_load_file(const char *path, struct cpustat *out)
{
	char *text;
	int ret;

	memset(out, 0, sizeof(*out));
	text = proc_read_file(path, NULL);
	if (!text)
		return -errno;
	ret = cpustat_parse(text, out);
	free(text);
	return ret;
}

int cpustat_load(struct cpustat *out)
{
	return cpustat_load_file("/proc/stat", out);
}

void cpustat_release(struct cpustat *st)
{
	free(st->cpus);
	st->cpus = NULL;
	st->nr_cpus = 0;
}

const struct cpustat_cpu *cpustat_find(const struct cpustat *st, int id)
{
	size_t lo = 0, hi = st->nr_cpus;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->cpus[mid].id == id)
			return &st->cpus[mid];
		if (st->cpus[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

int cpustat_usage(const struct cpustat_times *a, const struct cpustat_times *b,
		  struct cpustat_usage *out)
{
	uint64_t d[8] = {
	    delta(a->user, b->user),	   delta(a->nice, b->nice),	delta(a->system, b->system),
	    delta(a->idle, b->idle),	   delta(a->iowait, b->iowait), delta(a->irq, b->irq),
	    delta(a->softirq, b->softirq), delta(a->steal, b->steal),
	};
	double *pct[8];
	uint64_t total = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	pct[0] = &out->user;
	pct[1] = &out->nice;
	pct[2] = &out->system;
	pct[3] = &out->idle;
	pct[4] = &out->iowait;
	pct[5] = &out->irq;
	pct[6] = &out->softirq;
	pct[7] = &out->steal;
	for (i = 0; i < ARRAY_SIZE(d); i++)
		total = total > UINT64_MAX - d[i] ? UINT64_MAX : total + d[i];
	if (!total)
		return -EAGAIN;
	out->ticks = total;
	for (i = 0; i < ARRAY_SIZE(d); i++)
		*pct[i] = 100.0 * (double)d[i] / (double)total;
	out->busy = 100.0 * (double)(total - d[3] - d[4]) / (double)total;
	return 0;
}

int cpustat_task_usage(const struct proc_stat *a, const struct proc_stat *b, uint64_t wall_ns,
		       long clk_tck, unsigned int ncpus, struct cpustat_task_usage *out)
{
	double ticks_elapsed;
	uint64_t du, ds;

	memset(out, 0, sizeof(*out));
	if (!wall_ns || clk_tck <= 0 || !ncpus)
		return -EINVAL;
	if (a->pid != b->pid || a->starttime != b->starttime)
		return -ESRCH;
	if (b->utime < a->utime || b->stime < a->stime)
		return -ERANGE;
	du = b->utime - a->utime;
	ds = b->stime - a->stime;
	out->ticks = du + ds; /* clock_t counts: no overflow in practice, and only a statistic */
	ticks_elapsed = (double)wall_ns * (double)clk_tck / 1e9;
	out->user = 100.0 * (double)du / ticks_elapsed;
	out->system = 100.0 * (double)ds / ticks_elapsed;
	out->one_core = out->user + out->system;
	out->all_cores = out->one_core / ncpus;
	return 0;
}

long cpustat_clk_tck(void)
{
	long t = sysconf(_SC_CLK_TCK);

	return t > 0 ? t : 100;
}

unsigned int cpustat_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}
