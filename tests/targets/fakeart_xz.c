/* fakeart32-xz: the xz compressor of fakeart32 (fakeart_main.c built for i386). The build host
 * has liblzma for itself only, not for i386, so fakeart32 starts this host program and sends it
 * the packed symfiles to compress into the .gnu_debugdata form (sf_compress, the same code the
 * 64-bit fakeart runs in-process).
 *
 * On stdin, requests: five native u64 (inner length, is_64, machine, lo, hi), then the inner
 * file; on stdout, answers: a u64 length (0 when liblzma failed) and the outer file. Exits at
 * the end of its input, i.e. when fakeart32 exits or is killed. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* only sf_compress (and what it calls) of the header-only writer is used here */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "fakeart_symfile.h"

#define MAX_INNER (1 << 20)

int main(void)
{
	struct sf_buf inner = {0}, outer = {0};
	uint64_t hdr[5], len;

	while (sf_pipe_io(0, hdr, sizeof(hdr), 0) == 0) {
		if (hdr[0] > MAX_INNER) {
			fprintf(stderr, "fakeart32-xz: bad request (%llu bytes)\n",
				(unsigned long long)hdr[0]);
			return 1;
		}
		inner.len = 0;
		sf_put(&inner, NULL, (size_t)hdr[0]);
		if (sf_pipe_io(0, inner.p, inner.len, 0) < 0)
			break;
		outer.len = 0;
		if (sf_compress(&outer, &inner, hdr[3], hdr[4], (int)hdr[1], (unsigned int)hdr[2]))
			len = 0;
		else
			len = outer.len;
		if (sf_pipe_io(1, &len, sizeof(len), 1) < 0 ||
		    sf_pipe_io(1, outer.p, (size_t)len, 1) < 0)
			break;
	}
	free(inner.p);
	free(outer.p);
	return 0;
}
