/* Zip archives (APKs): which stored entry holds a file offset. Android maps native libraries
 * straight out of an APK when they are stored uncompressed and page-aligned; a mapping of
 * base.apk at offset X then runs the ELF file that starts at that entry's data
 * (docs/design/android-art.md 5.2). Reads the central directory (ZIP64 too) and the local headers;
 * every offset and count is checked, the archive is hostile input. */
#ifndef PERCH_ZIP_H
#define PERCH_ZIP_H

#include <stddef.h>
#include <stdint.h>

#define ZIP_MAX_ENTRIES (1u << 20) /* central directory entries looked at */

struct zip_entry {
	char name[256];	      /* entry name ("lib/arm64-v8a/libfoo.so"), cut if longer */
	uint64_t data_offset; /* file offset of the entry's first data byte */
	uint64_t size;	      /* its size (stored: compressed = uncompressed) */
};

/* The stored (method 0) entry whose data [data_offset, data_offset + size) holds @offset, in
 * the zip image @data of @size bytes. 0; -ENOENT when no stored entry holds it; -EINVAL when
 * @data is not a well-formed zip (no end record, directory out of bounds, ...). */
int zip_find_stored(const uint8_t *data, size_t size, uint64_t offset, struct zip_entry *out);

/* The same for the file @path (mapped read-only for the look-up). -errno when it cannot be
 * opened or mapped. */
int zip_find_stored_file(const char *path, uint64_t offset, struct zip_entry *out);

#endif
