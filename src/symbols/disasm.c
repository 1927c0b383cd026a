/* capstone loaded on first use: see include/perch/symbols/disasm.h. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "perch/symbols/disasm.h"

#define STR_(x)		#x
#define STR(x)		STR_(x)
#define CAPSTONE_SONAME "libcapstone.so." STR(CS_API_MAJOR)

static struct disasm_lib lib;
static const char *lib_why = "capstone was not loaded";
static int lib_ok;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

#ifdef PERCH_CAPSTONE_LINKED
static void load(void)
{
	lib = (struct disasm_lib){cs_open, cs_disasm, cs_free, cs_close, cs_version};
	lib_ok = 1;
}
#else
/* dlsym() into a function pointer: POSIX guarantees the conversion, ISO C does not say */
#define SYM(h, field, name) (*(void **)(&lib.field) = dlsym((h), (name))) != NULL

static void load(void)
{
	/* RTLD_LOCAL: capstone's symbols stay out of the global namespace */
	void *h = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		lib_why = dlerror();
		return;
	}
	if (!(SYM(h, open, "cs_open") && SYM(h, disasm, "cs_disasm") && SYM(h, free, "cs_free") &&
	      SYM(h, close, "cs_close") && SYM(h, version, "cs_version"))) {
		lib_why = CAPSTONE_SONAME " lacks a function perch needs";
		dlclose(h);
		return;
	}
	lib_ok = 1; /* kept loaded until exit */
}
#endif

const struct disasm_lib *disasm_lib(const char **why)
{
	pthread_once(&lib_once, load);
	if (!lib_ok && why)
		*why = lib_why;
	return lib_ok ? &lib : NULL;
}
