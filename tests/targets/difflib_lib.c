/* The difflib target's library (difflib_main.c), built as libdifflib.so.1.2 and .1.3. */
#define NOINLINE __attribute__((noinline))

volatile unsigned long difflib_lib_sink;

NOINLINE void lib_inner(void)
{
	for (long i = 0; i < 100000L; i++)
		difflib_lib_sink += (unsigned long)i * 13;
}

void lib_work(void)
{
	lib_inner();
}
