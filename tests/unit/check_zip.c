/* Unit tests for the zip reader: archives written by Python's zipfile (stored, deflated and
 * ZIP64 entries, a comment), whose entry offsets Python reports; hostile copies. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/perfmap.h"
#include "perch/symbols/zip.h"
#include "testutil.h"

/* Writes @path and prints "name data_offset size" per stored entry. */
static const char make_zip[] =
    "import sys, zipfile, struct\n"
    "p = sys.argv[1]\n"
    "with zipfile.ZipFile(p, 'w') as z:\n"
    "    z.writestr(zipfile.ZipInfo('lib/a.so'), b'A' * 5000)\n"
    "    z.writestr('res/b.txt', b'b' * 9000, compress_type=zipfile.ZIP_DEFLATED)\n"
    "    with z.open('lib/c.so', 'w', force_zip64=True) as f:\n"
    "        f.write(b'C' * 3000)\n"
    "    z.comment = b'perch test comment'\n"
    "data = open(p, 'rb').read()\n"
    "for i in zipfile.ZipFile(p).infolist():\n"
    "    if i.compress_type: continue\n"
    "    n, e = struct.unpack('<HH', data[i.header_offset + 26:i.header_offset + 30])\n"
    "    print(i.filename, i.header_offset + 30 + n + e, i.file_size)\n";

START_TEST(test_python_zip)
{
	char *script, *zip, *cmd, *out, *save = NULL;
	struct zip_entry ze;
	uint8_t *data;
	size_t size;
	int st, entries = 0;

	if (!testutil_have_tool("python3"))
		return;
	script = testutil_tmp_file("mk.py", make_zip, strlen(make_zip));
	zip = testutil_tmp_path("t.apk");
	cmd = xasprintf("python3 %s %s", script, zip);
	out = testutil_run(cmd, &st);
	ck_assert_msg(st == 0, "%s", out);
	data = testutil_read_file(zip, &size);
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long off, len;

		ck_assert_int_eq(sscanf(l, "%63s %llu %llu", name, &off, &len), 3);
		ck_assert_int_eq(zip_find_stored(data, size, off, &ze), 0);
		ck_assert_str_eq(ze.name, name);
		ck_assert_uint_eq(ze.data_offset, off);
		ck_assert_uint_eq(ze.size, len);
		ck_assert_int_eq(zip_find_stored(data, size, off + len - 1, &ze), 0);
		ck_assert_str_eq(ze.name, name);
		ck_assert_int_eq(zip_find_stored_file(zip, off + 1, &ze), 0);
		ck_assert_str_eq(ze.name, name);
		entries++;
	}
	ck_assert_int_eq(entries, 2); /* a.so and the ZIP64 c.so; b.txt is deflated */
	ck_assert_int_eq(zip_find_stored(data, size, 0, &ze), -ENOENT); /* a local header */
	ck_assert_int_eq(zip_find_stored(data, size, size + 10, &ze), -ENOENT);
	/* hostile: every truncation (the end record goes first), then byte flips */
	for (size_t len = 0; len < size; len += 3)
		ck_assert_int_ne(zip_find_stored(data, len, 100, &ze), 0);
	for (uint32_t seed = 1, i = 0; i < 2000; i++) {
		uint8_t *copy = xmalloc(size);

		memcpy(copy, data, size);
		seed = seed * 1103515245u + 12345u;
		copy[(seed >> 8) % size] ^= (uint8_t)(seed >> 3);
		zip_find_stored(copy, size, (seed >> 4) % size, &ze);
		free(copy);
	}
	ck_assert_int_eq(zip_find_stored_file("/nonexistent/x.apk", 0, &ze), -ENOENT);
	free(data);
	free(out);
	free(cmd);
	free(zip);
	free(script);
}
END_TEST

/* perf map text as JIT runtimes write it. */
START_TEST(test_perfmap)
{
	static const char text[] = "7f0000001000 100 JS:*hot /a.js:1:2\n"
				   "0x7f0000001080 0x20 inner\n"
				   "zzz 10 bad start\n"
				   "7f0000002000 0 zero size\n"
				   "7f0000003000 10\n"
				   "ffffffffffffffff 10 wraps\n"
				   "7f0000001000 100 JS:*hot-recompiled\r\n"
				   "7f0000004000 10 unterminated";
	struct perfmap *pm = perfmap_new_empty();
	const struct perfmap_sym *s;
	size_t used = perfmap_add_text(pm, text, strlen(text));

	ck_assert_uint_eq(used, strlen(text) - strlen("7f0000004000 10 unterminated"));
	s = perfmap_find(pm, 0x7f0000001010);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "JS:*hot-recompiled"); /* the newer line wins */
	s = perfmap_find(pm, 0x7f0000001090);
	ck_assert_str_eq(s->name, "JS:*hot-recompiled");
	ck_assert_ptr_null(perfmap_find(pm, 0x7f0000001100)); /* one past the end */
	ck_assert_ptr_null(perfmap_find(pm, 0x7f0000002000));
	ck_assert_ptr_null(perfmap_find(pm, 0x7f0000003000));
	ck_assert_ptr_null(perfmap_find(pm, 0x7f0000004000));
	used = perfmap_add_text(pm, "7f0000005000 8 late\n", 20);
	ck_assert_str_eq(perfmap_find(pm, 0x7f0000005007)->name, "late");
	perfmap_free(pm);
}
END_TEST

/* A pc seen at some time is named by the lines that may have been written by then: a line read
 * only after a read made at or after that time was written later (the JIT reused the memory). */
START_TEST(test_perfmap_time)
{
	static const char first[] = "7f0000001000 100 JS:~old\n";
	static const char second[] = "7f0000001000 80 JS:*new\n7f0000009000 10 later\n";
	struct perfmap *pm = perfmap_new_empty();

	perfmap_add_text_at(pm, first, strlen(first), 100);
	perfmap_add_text_at(pm, second, strlen(second), 200);
	/* seen before the first read: that read may hold it, the second came after */
	ck_assert_str_eq(perfmap_find_at(pm, 0x7f0000001010, 50)->name, "JS:~old");
	ck_assert_str_eq(perfmap_find_at(pm, 0x7f0000001010, 100)->name, "JS:~old");
	/* between the reads: the second read may hold lines written before it */
	ck_assert_str_eq(perfmap_find_at(pm, 0x7f0000001010, 150)->name, "JS:*new");
	ck_assert_str_eq(perfmap_find_at(pm, 0x7f0000001010, 250)->name, "JS:*new");
	ck_assert_str_eq(perfmap_find(pm, 0x7f0000001010)->name, "JS:*new");
	/* the old line still names what the new one does not cover */
	ck_assert_str_eq(perfmap_find_at(pm, 0x7f0000001090, 250)->name, "JS:~old");
	ck_assert_ptr_null(perfmap_find_at(pm, 0x7f0000009000, 100));
	ck_assert_str_eq(perfmap_find_at(pm, 0x7f0000009000, 101)->name, "later");
	perfmap_free(pm);
}
END_TEST

Suite *zip_suite(void)
{
	Suite *s = suite_create("zip");
	TCase *tc = tcase_create("zip");

	tcase_add_checked_fixture(tc, testutil_tmp_setup, testutil_tmp_teardown);
	tcase_add_test(tc, test_python_zip);
	tcase_add_test(tc, test_perfmap);
	tcase_add_test(tc, test_perfmap_time);
	suite_add_tcase(s, tc);
	return s;
}
