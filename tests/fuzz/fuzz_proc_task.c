/* Fuzz the /proc/PID/{stat,status} parsers (src/proc/proc-task.c). */
#include "fuzz.h"
#include "perch/proc/proc-task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	struct proc_stat st;
	struct proc_status ss;

	if (proc_stat_parse(text, &st) == 0)
		FUZZ_CHECK(memchr(st.comm, '\0', sizeof(st.comm)));
	if (proc_status_parse(text, &ss) == 0)
		FUZZ_CHECK(memchr(ss.name, '\0', sizeof(ss.name)));
	free(text);
	return 0;
}
