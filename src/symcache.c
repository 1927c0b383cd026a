/* The on-disk symbolization cache; see include/perch/symcache.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/symcache.h"
#include "perch/xalloc.h"

#define SYMCACHE_HEADER "perch-symcache 1\n"
#define SYMCACHE_DIR "symbols-v1"

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
	/* "/symbols-v1/xx/" + the rest in hex + NUL */
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

static void parse_line(char *line, symcache_entry_fn *fn, void *arg)
{
	struct sym_frame f[SYM_MAX_INLINE];
	uint64_t vaddr, n, v;
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
	if (p) /* trailing fields */
		return;
	fn(arg, vaddr, f, (int)n);
}

int symcache_read(const char *path, symcache_entry_fn *fn, void *arg)
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
	if (got < strlen(SYMCACHE_HEADER) || memcmp(buf, SYMCACHE_HEADER, strlen(SYMCACHE_HEADER))) {
		free(buf);
		return -EINVAL;
	}
	/* only complete lines: a torn last one (a run still writing) is left out */
	for (p = buf + strlen(SYMCACHE_HEADER); (nl = memchr(p, '\n', got - (size_t)(p - buf)));
	     p = nl + 1) {
		*nl = '\0';
		if (nl - p < SYMCACHE_MAX_LINE && !memchr(p, '\0', (size_t)(nl - p)))
			parse_line(p, fn, arg);
	}
	free(buf);
	return 0;
}

static int clean_text(const char *s)
{
	return !s || !strpbrk(s, "\t\n\r");
}

int symcache_format(uint64_t vaddr, const struct sym_frame *f, int n, char **out, size_t *len,
		    size_t *cap)
{
	char line[SYMCACHE_MAX_LINE];
	int used;

	if (n <= 0 || n > SYM_MAX_INLINE)
		return -EINVAL;
	used = snprintf(line, sizeof(line), "%llx\t%d", (unsigned long long)vaddr, n);
	for (int i = 0; i < n && used > 0 && (size_t)used < sizeof(line); i++) {
		if (!clean_text(f[i].func) || !clean_text(f[i].file))
			return -EINVAL;
		used += snprintf(line + used, sizeof(line) - (size_t)used, "\t%s\t%s\t%u\t%d",
				 f[i].func ? f[i].func : "", f[i].file ? f[i].file : "", f[i].line,
				 f[i].inlined ? 1 : 0);
	}
	if (used < 0 || (size_t)used + 1 >= sizeof(line))
		return -EINVAL;
	line[used++] = '\n';
	ALLOC_GROW(*out, *len + (size_t)used + 1, *cap);
	memcpy(*out + *len, line, (size_t)used);
	*len += (size_t)used;
	(*out)[*len] = '\0';
	return 0;
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
