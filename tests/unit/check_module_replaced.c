/* Unit tests for the check that a file opened by path is the one a process mapped
 * (modules_same_file): the inode and device of its /proc/PID/maps line against stat() of the
 * file. The device numbers differ on purpose on overlayfs and btrfs (stat() reports the
 * overlay's or the subvolume's anonymous device; maps the underlying one): there the inode
 * alone decides. Expected answers are our reading of those file systems' documented
 * behaviour; the live case is tests/e2e/check_replaced.c. */
#include <check.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "perch/symbols/module.h"

#define EXT4_MAGIC	0xef53UL
#define OVERLAYFS_MAGIC 0x794c7630UL
#define BTRFS_MAGIC	0x9123683eUL

static struct stat st_of(unsigned long ino, unsigned int maj, unsigned int min)
{
	struct stat st = {0};

	st.st_ino = ino;
	st.st_dev = makedev(maj, min);
	return st;
}

START_TEST(test_same_file)
{
	/* maps: "7f..-7f.. r-xp 00001000 fe:01 1314  /usr/lib/libfoo.so" */
	struct stat same = st_of(1314, 0xfe, 1), replaced = st_of(1399, 0xfe, 1);
	struct stat other_dev = st_of(1314, 0x08, 2), anon_dev = st_of(1314, 0, 51);

	ck_assert(modules_same_file(1314, 0xfe, 1, &same, EXT4_MAGIC));
	ck_assert(!modules_same_file(1314, 0xfe, 1, &replaced, EXT4_MAGIC));
	ck_assert(!modules_same_file(1314, 0xfe, 1, &other_dev, EXT4_MAGIC));
	/* overlayfs and btrfs: another device by design, the inode still decides */
	ck_assert(modules_same_file(1314, 0xfe, 1, &anon_dev, OVERLAYFS_MAGIC));
	ck_assert(modules_same_file(1314, 0xfe, 1, &anon_dev, BTRFS_MAGIC));
	ck_assert(!modules_same_file(1314, 0xfe, 1, &replaced, OVERLAYFS_MAGIC));
	ck_assert(!modules_same_file(1314, 0xfe, 1, &replaced, BTRFS_MAGIC));
}
END_TEST

Suite *module_replaced_suite(void)
{
	Suite *s = suite_create("module_replaced");
	TCase *tc = tcase_create("same_file");

	tcase_add_test(tc, test_same_file);
	suite_add_tcase(s, tc);
	return s;
}
