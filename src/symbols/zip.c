/* Zip central directory walk for stored entries (APK-embedded libraries).
 * Layout: APPNOTE.TXT 4.3 (end of central directory, ZIP64 locator and record, central file
 * header, local file header, ZIP64 extended information extra field). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perch/base/log.h"
#include "perch/symbols/zip.h"

#define EOCD_SIG	0x06054b50u
#define EOCD_SIZE	22u
#define ZIP64_LOC_SIG	0x07064b50u
#define ZIP64_LOC_SIZE	20u
#define ZIP64_EOCD_SIG	0x06064b50u
#define ZIP64_EOCD_SIZE 56u
#define CDH_SIG		0x02014b50u
#define CDH_SIZE	46u
#define LFH_SIG		0x04034b50u
#define LFH_SIZE	30u
#define ZIP64_EXTRA_ID	0x0001u
#define ZIP_MAX_COMMENT 0xffffu

static int in_file(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The central directory: where it is and how many entries it claims. */
static int find_directory(const uint8_t *p, size_t size, uint64_t *cd_off, uint64_t *cd_size,
			  uint64_t *count)
{
	size_t lowest = size > EOCD_SIZE + ZIP_MAX_COMMENT ? size - EOCD_SIZE - ZIP_MAX_COMMENT : 0;
	size_t eocd;
	uint64_t loc;

	if (size < EOCD_SIZE)
		return -EINVAL;
	/* the end record is the last thing in the file but for a comment of up to 64 KiB */
	for (eocd = size - EOCD_SIZE;; eocd--) {
		if (le32(p + eocd) == EOCD_SIG && eocd + EOCD_SIZE + le16(p + eocd + 20) <= size)
			break;
		if (eocd == lowest)
			return -EINVAL;
	}
	*count = le16(p + eocd + 10);
	*cd_size = le32(p + eocd + 12);
	*cd_off = le32(p + eocd + 16);
	if (*count == 0xffff || *cd_size == 0xffffffff || *cd_off == 0xffffffff) {
		if (eocd < ZIP64_LOC_SIZE || le32(p + eocd - ZIP64_LOC_SIZE) != ZIP64_LOC_SIG)
			return -EINVAL;
		loc = le64(p + eocd - ZIP64_LOC_SIZE + 8);
		if (!in_file(size, loc, ZIP64_EOCD_SIZE) || le32(p + loc) != ZIP64_EOCD_SIG)
			return -EINVAL;
		*count = le64(p + loc + 32);
		*cd_size = le64(p + loc + 40);
		*cd_off = le64(p + loc + 48);
	}
	if (!in_file(size, *cd_off, *cd_size))
		return -EINVAL;
	return 0;
}

/* Apply the ZIP64 extra field: each 0xffffffff field of the header is replaced, in order, by
 * the next u64 of the field. */
static void apply_zip64(const uint8_t *extra, size_t len, uint64_t *usize, uint64_t *csize,
			uint64_t *lho)
{
	uint64_t *fields[3] = {usize, csize, lho};
	size_t pos = 0;

	while (pos + 4 <= len) {
		uint16_t id = le16(extra + pos), dlen = le16(extra + pos + 2);
		size_t at = pos + 4;

		if (dlen > len - at)
			return;
		if (id == ZIP64_EXTRA_ID) {
			for (int i = 0; i < 3; i++) {
				if (*fields[i] != 0xffffffff)
					continue;
				if (at + 8 > pos + 4 + dlen)
					return;
				*fields[i] = le64(extra + at);
				at += 8;
			}
			return;
		}
		pos = at + dlen;
	}
}

int zip_find_stored(const uint8_t *p, size_t size, uint64_t offset, struct zip_entry *out)
{
	uint64_t cd_off, cd_size, count, pos, end, seen = 0;
	int ret = find_directory(p, size, &cd_off, &cd_size, &count);

	if (ret < 0)
		return ret;
	end = cd_off + cd_size;
	for (pos = cd_off; count-- && pos + CDH_SIZE <= end;) {
		const uint8_t *h = p + pos;
		uint16_t method = le16(h + 10), nlen = le16(h + 28), xlen = le16(h + 30);
		uint64_t csize = le32(h + 20), usize = le32(h + 24), lho = le32(h + 42), data;
		uint64_t next = pos + CDH_SIZE + nlen + xlen + le16(h + 32);

		if (le32(h) != CDH_SIG || next > end)
			return -EINVAL;
		if (++seen > ZIP_MAX_ENTRIES)
			break;
		pos = next;
		apply_zip64(h + CDH_SIZE + nlen, xlen, &usize, &csize, &lho);
		/* stored, not encrypted; sizes from the directory (the local header may hold 0
		 * when a data descriptor follows) */
		if (method != 0 || (le16(h + 8) & 1) || csize != usize)
			continue;
		if (!in_file(size, lho, LFH_SIZE) || le32(p + lho) != LFH_SIG)
			continue;
		data = lho + LFH_SIZE + le16(p + lho + 26) + le16(p + lho + 28);
		if (!in_file(size, data, usize) || offset < data || offset - data >= usize)
			continue;
		for (size_t i = 0; i < sizeof(out->name) - 1; i++) {
			uint8_t ch = i < nlen ? h[CDH_SIZE + i] : 0;

			out->name[i] = (char)(ch && (ch < 0x20 || ch == 0x7f) ? '?' : ch);
			if (!ch)
				break;
		}
		out->name[sizeof(out->name) - 1] = '\0';
		out->data_offset = data;
		out->size = usize;
		return 0;
	}
	return -ENOENT;
}

int zip_find_stored_file(const char *path, uint64_t offset, struct zip_entry *out)
{
	struct stat st;
	void *map;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ret = -errno;
	close(fd);
	if (map == MAP_FAILED)
		return ret;
	ret = zip_find_stored(map, (size_t)st.st_size, offset, out);
	munmap(map, (size_t)st.st_size);
	if (ret < 0)
		log_debug("zip: %s: no stored entry at offset %#llx (%s)", path,
			  (unsigned long long)offset, strerror(-ret));
	return ret;
}
