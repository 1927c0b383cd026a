/* Helpers shared by the unit suites (see testutil.h). Not a suite: it registers no tests. */
#include <sys/wait.h>
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perch/base/xalloc.h"
#include "testutil.h"

/* A golden-file mismatch shows at most this much of each differing line. */
#define GOLDEN_SHOW_MAX 240

char *testutil_tmp;

char *testutil_fixture_path(const char *fmt, ...)
{
	const char *dir = getenv("PERCH_FIXTURES");
	char *rel, *path;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&rel, fmt, ap);
	va_end(ap);
	ck_assert_int_ge(ret, 0);
	path = xasprintf("%s/%s", dir ? dir : "fixtures", rel);
	free(rel);
	return path;
}

/* The regular file @path in a buffer of its size + @extra bytes (zeroed); NULL with errno set
 * when it cannot be read. */
static uint8_t *read_whole(const char *path, size_t extra, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;
	size_t n;

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st)) {
		int err = errno;

		fclose(f);
		errno = err;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		fclose(f);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	n = (size_t)st.st_size;
	buf = xmalloc(n + extra > 0 ? n + extra : 1);
	if (fread(buf, 1, n, f) != n) {
		fclose(f);
		free(buf);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	memset(buf + n, 0, extra);
	*size = n;
	return buf;
}

char *testutil_fixture_text(const char *rel, size_t *len)
{
	char *path = testutil_fixture_path("%s", rel);
	size_t n;
	char *text = (char *)read_whole(path, 1, &n);

	ck_assert_msg(text, "cannot read %s (run the tests from the repository root)", path);
	free(path);
	if (len)
		*len = n;
	return text;
}

uint8_t *testutil_read_file(const char *path, size_t *size)
{
	uint8_t *buf = read_whole(path, 0, size);

	ck_assert_msg(buf, "cannot read %s: %s", path, strerror(errno));
	return buf;
}

void testutil_write_file(const char *path, const void *data, size_t size)
{
	char *dir = xstrdup(path), *p;
	FILE *f;

	/* mkdir -p of the parent */
	for (p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		ck_assert_msg(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s", dir);
		*p = '/';
	}
	free(dir);
	f = fopen(path, "wb");
	ck_assert_msg(f, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(data, 1, size, f), size);
	ck_assert_int_eq(fclose(f), 0);
}

/* Length of the line at @s, at most up to @end and GOLDEN_SHOW_MAX. */
static int line_len(const char *s, const char *end)
{
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	size_t n = (size_t)((nl ? nl : end) - s);

	return n > GOLDEN_SHOW_MAX ? GOLDEN_SHOW_MAX : (int)n;
}

void testutil_check_golden(const char *rel, const char *data, size_t len)
{
	const char *update = getenv("PERCH_UPDATE_GOLDEN");
	char *path = testutil_fixture_path("golden/%s", rel), *want;
	size_t wlen, i, line = 1, bol = 0;

	if (update && !strcmp(update, "1")) {
		testutil_write_file(path, data, len);
		free(path);
		return;
	}
	want = (char *)read_whole(path, 1, &wlen);
	ck_assert_msg(want, "cannot read %s (PERCH_UPDATE_GOLDEN=1 creates it)", path);
	for (i = 0; i < wlen && i < len && want[i] == data[i]; i++) {
		if (data[i] == '\n') {
			line++;
			bol = i + 1; /* show the whole differing line */
		}
	}
	ck_assert_msg(i == wlen && i == len,
		      "%s differs at byte %zu (line %zu): want %zu bytes, got %zu\n"
		      "--- want\n%.*s\n--- got\n%.*s",
		      path, i, line, wlen, len, line_len(want + bol, want + wlen), want + bol,
		      line_len(data + bol, data + len), data + bol);
	free(want);
	free(path);
}

void testutil_check_enospc(output_write_fn *writer, const struct profile *p)
{
	FILE *f = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(writer(p, NULL, f), -ENOSPC);
	fclose(f);
}

char *testutil_render(output_write_fn *writer, const struct profile *p, const struct output_opts *o,
		      size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(writer(p, o, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	if (len)
		*len = n;
	return buf;
}

char *testutil_tmpdir_new(void)
{
	char *dir = xstrdup("/tmp/perch-check-XXXXXX");

	ck_assert_msg(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	return dir;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void testutil_tmpdir_free(char *dir)
{
	if (!dir)
		return;
	ck_assert_msg(!nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), "cannot remove %s: %s", dir,
		      strerror(errno));
	free(dir);
}

void testutil_tmp_setup(void)
{
	testutil_tmp = testutil_tmpdir_new();
}

void testutil_tmp_teardown(void)
{
	testutil_tmpdir_free(testutil_tmp);
	testutil_tmp = NULL;
}

char *testutil_tmp_path(const char *rel)
{
	ck_assert_ptr_nonnull(testutil_tmp);
	return xasprintf("%s/%s", testutil_tmp, rel);
}

char *testutil_tmp_file(const char *rel, const void *data, size_t size)
{
	char *path = testutil_tmp_path(rel);

	testutil_write_file(path, data, size);
	return path;
}

int testutil_have_tool(const char *tool)
{
	char *cmd = xasprintf("command -v %s >/dev/null 2>&1", tool);
	int ok = system(cmd) == 0;

	free(cmd);
	if (!ok)
		fprintf(stderr,
			"SKIP: %s not installed, its check of the writer output did not run\n",
			tool);
	return ok;
}

/* Run @cmd (sh), its stdout+stderr into a string; *@status = its exit status. */
char *testutil_run(const char *cmd, int *status)
{
	char *full = xasprintf("(%s) 2>&1", cmd), *out = NULL;
	size_t n = 0, alloc = 0, got;
	FILE *f = popen(full, "r");
	int st;

	ck_assert_ptr_nonnull(f);
	do {
		ALLOC_GROW(out, n + 4097, alloc);
		got = fread(out + n, 1, 4096, f);
		n += got;
	} while (got);
	out[n] = '\0';
	st = pclose(f);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	free(full);
	return out;
}
