/* The on-disk symbolization cache; see include/perch/symbols/symcache.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/symcache.h"

#define SYMCACHE_HEADER	   "perch-symcache 2\n"
#define SYMCACHE_DIR	   "symbols-v2"
#define SYMCACHE_MAX_CALLS 64 /* call sites of one line */
#define SYMCACHE_MAX_ADDRS 16 /* entries of one call site's target */

static int cache_root(char *buf, size_t size)
{
	const char *dir = getenv("PERCH_CACHE_DIR"), *xdg, *home;
	int n;

	if (dir && !strcmp(dir, "off"))
		return -ENOENT;
	if (dir && *dir)
		n = snprintf(buf, size, "%s", dir);
	else if ((xdg = getenv("XDG_CACHE_HOME")) && *xdg == '/')
		n = snprintf(buf, size, "%s/perch", xdg);
	else if ((home = getenv("HOME")) && *home == '/')
		n = snprintf(buf, size, "%s/.cache/perch", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int symcache_path(const uint8_t *id, size_t id_len, char *buf, size_t size)
{
	size_t len;
	int ret;

	if (!id_len || id_len > 64)
		return -ENOENT;
	ret = cache_root(buf, size);
	if (ret < 0)
		return ret;
	len = strlen(buf);
	/* "/symbols-v2/xx/" + the rest in hex + NUL */
	if (len + strlen(SYMCACHE_DIR) + 5 + 2 * id_len > size)
		return -ENAMETOOLONG;
	len += (size_t)sprintf(buf + len, "/" SYMCACHE_DIR "/%02x/", id[0]);
	for (size_t i = 1; i < id_len; i++)
		len += (size_t)sprintf(buf + len, "%02x", id[i]);
	if (id_len == 1)
		strcpy(buf + len, "_");
	return 0;
}

/* Split the next tab-separated field off *@p (modified in place); NULL at the end. */
static char *field(char **p)
{
	char *s = *p, *tab;

	if (!s)
		return NULL;
	tab = strchr(s, '\t');
	if (tab) {
		*tab = '\0';
		*p = tab + 1;
	} else {
		*p = NULL;
	}
	return s;
}

static int parse_u64(const char *s, int base, uint64_t max, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, base);
	return errno || *end || *v > max ? -1 : 0;
}

static int parse_entry(const char *s, uint64_t *entry)
{
	if (s && !strcmp(s, "-")) {
		*entry = 0;
		return 0;
	}
	return parse_u64(s, 16, UINT64_MAX, entry);
}

static void parse_frames(char *line, const struct symcache_ops *ops, void *arg)
{
	struct sym_frame f[SYM_MAX_INLINE];
	uint64_t vaddr, n, v, entry;
	char *p = line;

	if (parse_u64(field(&p), 16, UINT64_MAX, &vaddr) < 0 ||
	    parse_u64(field(&p), 10, SYM_MAX_INLINE, &n) < 0 || n == 0)
		return;
	for (uint64_t i = 0; i < n; i++) {
		char *func = field(&p), *file = field(&p), *line_s = field(&p), *inl = field(&p);

		if (!inl || parse_u64(line_s, 10, UINT32_MAX, &v) < 0)
			return;
		f[i].func = *func ? func : NULL;
		f[i].file = *file ? file : NULL;
		f[i].line = (unsigned int)v;
		if (strcmp(inl, "0") && strcmp(inl, "1"))
			return;
		f[i].inlined = inl[0] == '1';
	}
	if (parse_entry(field(&p), &entry) < 0 || p) /* no entry field, or trailing fields */
		return;
	if (ops->frames)
		ops->frames(arg, vaddr, f, (int)n, entry);
}

/* "PC TAIL KIND NAME NADDRS {ADDR}" into @c, its addresses into @addrs. 0 or -1. */
static int parse_call(char **p, struct debuginfo_call *c, uint64_t *addrs)
{
	uint64_t tail, kind, n;
	char *name;

	memset(c, 0, sizeof(*c));
	if (parse_u64(field(p), 16, UINT64_MAX, &c->pc) < 0 ||
	    parse_u64(field(p), 10, 1, &tail) < 0 ||
	    parse_u64(field(p), 10, DEBUGINFO_TARGET_NAME, &kind) < 0 || !(name = field(p)) ||
	    parse_u64(field(p), 10, SYMCACHE_MAX_ADDRS, &n) < 0)
		return -1;
	c->tail = (int)tail;
	c->kind = (int)kind;
	c->name = *name ? name : NULL;
	if ((kind == DEBUGINFO_TARGET_NAME) != (c->name != NULL) ||
	    (kind == DEBUGINFO_TARGET_ADDRS) != (n > 0))
		return -1;
	for (uint64_t i = 0; i < n; i++)
		if (parse_u64(field(p), 16, UINT64_MAX, &addrs[i]) < 0)
			return -1;
	c->addrs = n ? addrs : NULL;
	c->nr_addrs = (size_t)n;
	return 0;
}

static void parse_calls(char kind, char *line, const struct symcache_ops *ops, void *arg)
{
	struct debuginfo_call *calls;
	uint64_t key, n = 1, (*addrs)[SYMCACHE_MAX_ADDRS];
	char *p = line, *state;
	uint64_t i;

	if (parse_u64(field(&p), 16, UINT64_MAX, &key) < 0 || !(state = field(&p)))
		return;
	if (!strcmp(state, "-")) {
		if (!p && ops->calls)
			ops->calls(arg, kind, key, 0, NULL, 0);
		return;
	}
	if (parse_u64(state, 10, SYMCACHE_MAX_CALLS, &n) < 0 || (kind == 'S' && n != 1))
		return;
	calls = xcalloc(n ? n : 1, sizeof(*calls));
	addrs = xcalloc(n ? n : 1, sizeof(*addrs));
	for (i = 0; i < n && parse_call(&p, &calls[i], addrs[i]) == 0; i++)
		;
	if (i == n && !p && ops->calls)
		ops->calls(arg, kind, key, 1, calls, (size_t)n);
	free(calls);
	free(addrs);
}

static void parse_name(char *line, const struct symcache_ops *ops, void *arg)
{
	char *p = line, *name;
	uint64_t addr;

	if (parse_u64(field(&p), 16, UINT64_MAX, &addr) < 0 || !(name = field(&p)) || !*name || p)
		return;
	if (ops->name)
		ops->name(arg, name, addr);
}

static void parse_line(char *line, const struct symcache_ops *ops, void *arg)
{
	if ((line[0] == 'S' || line[0] == 'T') && line[1] == '\t')
		parse_calls(line[0], line + 2, ops, arg);
	else if (line[0] == 'N' && line[1] == '\t')
		parse_name(line + 2, ops, arg);
	else
		parse_frames(line, ops, arg);
}

int symcache_read(const char *path, const struct symcache_ops *ops, void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf, *p, *nl;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > SYMCACHE_MAX_BYTES) {
		close(fd);
		return -EFBIG;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (got < strlen(SYMCACHE_HEADER) ||
	    memcmp(buf, SYMCACHE_HEADER, strlen(SYMCACHE_HEADER))) {
		free(buf);
		return -EINVAL;
	}
	/* only complete lines: a torn last one (a run still writing) is left out */
	for (p = buf + strlen(SYMCACHE_HEADER); (nl = memchr(p, '\n', got - (size_t)(p - buf)));
	     p = nl + 1) {
		*nl = '\0';
		if (nl - p < SYMCACHE_MAX_LINE && !memchr(p, '\0', (size_t)(nl - p)))
			parse_line(p, ops, arg);
	}
	free(buf);
	return 0;
}

static int clean_text(const char *s)
{
	return !s || !strpbrk(s, "\t\n\r");
}

/* Append the finished line @line (@used bytes, without its newline) to @out. */
static int add_line(char *line, int used, char **out, size_t *len, size_t *cap)
{
	if (used < 0 || (size_t)used + 1 >= SYMCACHE_MAX_LINE)
		return -EINVAL;
	line[used++] = '\n';
	ALLOC_GROW(*out, *len + (size_t)used + 1, *cap);
	memcpy(*out + *len, line, (size_t)used);
	*len += (size_t)used;
	(*out)[*len] = '\0';
	return 0;
}

/* snprintf at @line + *@used, keeping *@used at SYMCACHE_MAX_LINE once it overflows. */
static void __attribute__((format(printf, 3, 4))) addf(char *line, int *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used < 0 || *used >= SYMCACHE_MAX_LINE)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line + *used, SYMCACHE_MAX_LINE - (size_t)*used, fmt, ap);
	va_end(ap);
	*used = n < 0 ? -1 : *used + n > SYMCACHE_MAX_LINE ? SYMCACHE_MAX_LINE : *used + n;
}

int symcache_format(uint64_t vaddr, const struct sym_frame *f, int n, uint64_t entry, char **out,
		    size_t *len, size_t *cap)
{
	char line[SYMCACHE_MAX_LINE];
	int used = 0;

	if (n <= 0 || n > SYM_MAX_INLINE)
		return -EINVAL;
	addf(line, &used, "%llx\t%d", (unsigned long long)vaddr, n);
	for (int i = 0; i < n; i++) {
		if (!clean_text(f[i].func) || !clean_text(f[i].file))
			return -EINVAL;
		addf(line, &used, "\t%s\t%s\t%u\t%d", f[i].func ? f[i].func : "",
		     f[i].file ? f[i].file : "", f[i].line, f[i].inlined ? 1 : 0);
	}
	if (entry)
		addf(line, &used, "\t%llx", (unsigned long long)entry);
	else
		addf(line, &used, "\t-");
	return add_line(line, used, out, len, cap);
}

int symcache_format_name(const char *name, uint64_t addr, char **out, size_t *len, size_t *cap)
{
	char line[SYMCACHE_MAX_LINE];
	int used = 0;

	if (!name || !*name || !clean_text(name))
		return -EINVAL;
	addf(line, &used, "N\t%llx\t%s", (unsigned long long)addr, name);
	return add_line(line, used, out, len, cap);
}

int symcache_format_calls(char kind, uint64_t key, int found, const struct debuginfo_call *c,
			  size_t n, char **out, size_t *len, size_t *cap)
{
	char line[SYMCACHE_MAX_LINE];
	int used = 0;

	if ((kind != 'S' && kind != 'T') || (kind == 'S' && found && n != 1) ||
	    n > SYMCACHE_MAX_CALLS)
		return -EINVAL;
	addf(line, &used, "%c\t%llx", kind, (unsigned long long)key);
	if (!found) {
		addf(line, &used, "\t-");
		return add_line(line, used, out, len, cap);
	}
	addf(line, &used, "\t%zu", n);
	for (size_t i = 0; i < n; i++) {
		if (!clean_text(c[i].name) || c[i].nr_addrs > SYMCACHE_MAX_ADDRS ||
		    (c[i].kind == DEBUGINFO_TARGET_NAME) != (c[i].name != NULL))
			return -EINVAL;
		addf(line, &used, "\t%llx\t%d\t%d\t%s\t%zu", (unsigned long long)c[i].pc,
		     c[i].tail ? 1 : 0, c[i].kind, c[i].name ? c[i].name : "", c[i].nr_addrs);
		for (size_t k = 0; k < c[i].nr_addrs; k++)
			addf(line, &used, "\t%llx", (unsigned long long)c[i].addrs[k]);
	}
	return add_line(line, used, out, len, cap);
}

/* mkdir -p of the directories above @path. */
static int make_parents(const char *path)
{
	char dir[4096];
	size_t len = strlen(path);

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len + 1);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

int symcache_append(const char *path, const char *lines, size_t len)
{
	struct stat st;
	int fd, ret = 0;

	if (!len)
		return 0;
	ret = make_parents(path);
	if (ret < 0)
		return ret;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size + len > SYMCACHE_MAX_BYTES) {
		close(fd);
		return -EFBIG;
	}
	/* the header goes in with the first lines, in one write: a reader never sees a file
	 * whose lines precede its header */
	if (st.st_size == 0) {
		size_t hl = strlen(SYMCACHE_HEADER);
		char *all = xmalloc(hl + len);

		memcpy(all, SYMCACHE_HEADER, hl);
		memcpy(all + hl, lines, len);
		if (write(fd, all, hl + len) != (ssize_t)(hl + len))
			ret = -EIO;
		free(all);
	} else if (write(fd, lines, len) != (ssize_t)len) {
		ret = -EIO;
	}
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}
