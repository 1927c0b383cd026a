/* zlib streams inflated by isa-l or zlib: see include/perch/symbols/inflate.h. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perch/base/xalloc.h"
#include "perch/symbols/inflate.h"

/* (a static build defines PERCH_NO_ISAL: it cannot dlopen() a library that needs libc.so) */
#if defined(__has_include) && !defined(PERCH_NO_ISAL)
#if __has_include(<isa-l/igzip_lib.h>)
#define PERCH_HAVE_ISAL 1
#endif
#endif

#ifdef PERCH_HAVE_ISAL
#include <dlfcn.h>
#include <isa-l/igzip_lib.h>

#define ISAL_SONAME "libisal.so.2"

static struct {
	void (*init)(struct inflate_state *state);
	int (*run)(struct inflate_state *state);
} isal;
#endif

static int isal_loaded, use_isal; /* loaded; and inflater_new()'s default */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
#ifdef PERCH_HAVE_ISAL
	const char *want = getenv("PERCH_INFLATE");
	void *h;

	/* RTLD_LOCAL: its symbols stay out of the global namespace; kept loaded until exit */
	h = dlopen(ISAL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	/* dlsym() into a function pointer: POSIX guarantees the conversion, ISO C does not say */
	*(void **)&isal.init = dlsym(h, "isal_inflate_init");
	*(void **)&isal.run = dlsym(h, "isal_inflate");
	if (!isal.init || !isal.run) {
		dlclose(h);
		return;
	}
	isal_loaded = 1;
	use_isal = !want || strcmp(want, "zlib");
#endif
}

struct inflater {
	int isal, done;
	z_stream zs;
#ifdef PERCH_HAVE_ISAL
	struct inflate_state is; /* 87 KB, most of it tables isa-l fills as it needs them */
#endif
};

struct inflater *inflater_new(enum inflate_backend backend)
{
	struct inflater *z;

	pthread_once(&load_once, load);
	if (backend == INFLATE_ISAL && !isal_loaded)
		return NULL;
	/* not cleared whole: isa-l's tables are written before they are read, and a page first
	 * touched costs a fault */
	z = xmalloc(sizeof(*z));
	memset(z, 0, offsetof(struct inflater, zs) + sizeof(z->zs));
	z->isal = backend == INFLATE_ISAL || (backend == INFLATE_DEFAULT && use_isal);
#ifdef PERCH_HAVE_ISAL
	if (z->isal) {
		isal.init(&z->is);
		z->is.crc_flag = ISAL_ZLIB; /* the zlib header and its Adler-32 checked */
		return z;
	}
#endif
	if (inflateInit(&z->zs) != Z_OK) {
		free(z);
		return NULL;
	}
	return z;
}

/* Both libraries count in 32 bits: feed and drain in pieces. */
static uint32_t piece(size_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* One call of a backend on @ai bytes of input and @ao of output; what it left of each goes to
 * @li and @lo. */
#ifdef PERCH_HAVE_ISAL
static int step_isal(struct inflater *z, const uint8_t *in, uint32_t ai, uint8_t *out, uint32_t ao,
		     uint32_t *li, uint32_t *lo)
{
	int ret;

	z->is.next_in = (uint8_t *)in;
	z->is.avail_in = ai;
	z->is.next_out = out;
	z->is.avail_out = ao;
	ret = isal.run(&z->is);
	*li = z->is.avail_in;
	*lo = z->is.avail_out;
	if (ret != ISAL_DECOMP_OK)
		return INFLATE_BAD;
	return z->is.block_state == ISAL_BLOCK_FINISH ? INFLATE_END : INFLATE_MORE;
}
#endif

static int step_zlib(struct inflater *z, const uint8_t *in, uint32_t ai, uint8_t *out, uint32_t ao,
		     uint32_t *li, uint32_t *lo)
{
	int ret;

	z->zs.next_in = (Bytef *)in;
	z->zs.avail_in = ai;
	z->zs.next_out = out;
	z->zs.avail_out = ao;
	ret = inflate(&z->zs, Z_NO_FLUSH);
	*li = z->zs.avail_in;
	*lo = z->zs.avail_out;
	if (ret == Z_STREAM_END)
		return INFLATE_END;
	/* (Z_BUF_ERROR: no progress possible, the input out or the output full) */
	return ret == Z_OK || ret == Z_BUF_ERROR ? INFLATE_MORE : INFLATE_BAD;
}

int inflater_run(struct inflater *z, const uint8_t **in, size_t *in_left, uint8_t **out,
		 size_t *out_left)
{
	if (z->done)
		return z->done;
	for (;;) {
		uint32_t ai = piece(*in_left), ao = piece(*out_left), li, lo;
		int ret;

#ifdef PERCH_HAVE_ISAL
		if (z->isal)
			ret = step_isal(z, *in, ai, *out, ao, &li, &lo);
		else
#endif
			ret = step_zlib(z, *in, ai, *out, ao, &li, &lo);
		*in += ai - li;
		*in_left -= ai - li;
		*out += ao - lo;
		*out_left -= ao - lo;
		if (ret != INFLATE_MORE) {
			z->done = ret;
			return ret;
		}
		/* on past a piece's end; stopped by the end of the input or of the output */
		if (!*in_left || !*out_left || (li == ai && lo == ao))
			return INFLATE_MORE;
	}
}

void inflater_free(struct inflater *z)
{
	if (!z)
		return;
	if (!z->isal)
		inflateEnd(&z->zs);
	free(z);
}

const char *inflater_backend(void)
{
	pthread_once(&load_once, load);
	return use_isal ? "isa-l" : "zlib";
}
