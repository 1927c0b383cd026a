/* bench-libs: dlopen()s -l N tiny libraries (libbenchNNN.so next to the executable, default
 * 120), then runs until killed (or -s SEC) through a call chain crossing the first -k K of
 * them (default all), so the first sample already needs every library's symbols. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

typedef uint64_t (*bench_lib_fn)(const void *tab, int i, int n, uint64_t x);

int main(int argc, char **argv)
{
	static bench_lib_fn tab[1000];
	char self[PATH_MAX], path[PATH_MAX + 64], name[32];
	int nlibs = 120, depth = -1;
	double secs = 120, end;
	ssize_t len;
	uint64_t x = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-l"))
			nlibs = (int)bench_num("-l", argv[++i]);
		else if (!strcmp(argv[i], "-k"))
			depth = (int)bench_num("-k", argv[++i]);
		else if (!strcmp(argv[i], "-s"))
			secs = bench_num("-s", argv[++i]);
		else {
			fprintf(stderr, "usage: bench-libs [-l LIBS] [-k DEPTH] [-s SEC]\n");
			return 64;
		}
	}
	if (nlibs < 1 || nlibs > 1000)
		return 64;
	if (depth < 1 || depth > nlibs)
		depth = nlibs;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		return 70;
	self[len] = '\0';
	if (strrchr(self, '/'))
		*strrchr(self, '/') = '\0';
	for (int i = 0; i < nlibs; i++) {
		void *h;

		snprintf(path, sizeof(path), "%s/libbench%03d.so", self, i);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "bench-libs: %s\n", dlerror());
			return 70;
		}
		snprintf(name, sizeof(name), "bench_lib_%03d", i);
		tab[i] = (bench_lib_fn)(uintptr_t)dlsym(h, name);
		if (!tab[i]) {
			fprintf(stderr, "bench-libs: no %s\n", name);
			return 70;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	end = bench_now() + secs;
	while (bench_now() < end)
		x = tab[0](tab, 0, depth, x);
	bench_sink = x;
	return 0;
}
