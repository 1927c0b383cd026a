/* What this perch is: its version, its build-id and the libraries it was built with, for
 * `perch --version` and bug reports. Owns nothing else. */
#ifndef PERCH_VERSION_H
#define PERCH_VERSION_H

#include <stddef.h>
#include <stdio.h>

/* The release, e.g. "0.1" (PERCH_VERSION in the Makefile; the .deb's upstream version). */
const char *version_string(void);

/* The GNU build-id of the running perch as lower-case hex in @buf (at least 2 * 20 + 1 bytes
 * for the usual SHA-1 id). 0, or -ENOENT when the binary was linked without one, -ENOSPC. */
int version_build_id(char *buf, size_t size);

/* Print the whole `perch --version` text: "perch VERSION", the build-id, the architecture,
 * then one line per library: the version it was compiled against and, where the library can
 * tell, the one loaded at run time when that differs. */
void version_print(FILE *f);

#endif
