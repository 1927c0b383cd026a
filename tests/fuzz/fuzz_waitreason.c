/* Fuzz the wait-reason classifier (src/proc/waitreason.c): /proc/PID/task/TID/syscall text, the
 * wchan text and the fd path (all target-controlled) into a frame. Input layout:
 *   byte 0: machine (bit 0: aarch64, bit 1: i386), byte 1: state letter,
 *   then "syscall text" '\0' "wchan text" '\0' "fd path" */
#include <elf.h>
#include <errno.h>

#include "fuzz.h"
#include "perch/proc/waitreason.h"

struct fd_ctx {
	const char *path;
};

static int fake_fd_path(void *ctx, int fd, char *buf, size_t len)
{
	const struct fd_ctx *c = ctx;

	if (!c->path || fd < 0)
		return -EBADF;
	snprintf(buf, len, "%s", c->path);
	return 0;
}

/* The next '\0'-terminated part of [*p, end), or NULL when the input has run out. */
static const char *next_part(const char **p, const char *end)
{
	const char *s = *p;
	const char *nul;

	if (s >= end)
		return NULL;
	nul = memchr(s, '\0', (size_t)(end - s));
	*p = nul ? nul + 1 : end;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int machine;
	struct waitreason_syscall sc;
	struct waitreason wr;
	struct fd_ctx ctx;
	const char *p, *end, *syscall_text, *wchan;
	char *text, state;

	if (size < 2)
		return 0;
	machine = data[0] & 2 ? EM_386 : data[0] & 1 ? EM_AARCH64 : EM_X86_64;
	state = (char)data[1];
	/* one NUL-terminated copy: every part ends at a '\0' inside it */
	text = fuzz_str(data + 2, size - 2);
	p = text;
	end = text + size - 2;
	syscall_text = next_part(&p, end);
	wchan = next_part(&p, end);
	ctx.path = next_part(&p, end);

	if (syscall_text && waitreason_syscall_parse(syscall_text, &sc) == 0)
		FUZZ_CHECK(sc.what >= WAITREASON_SC_SYSCALL && sc.what <= WAITREASON_SC_RUNNING);
	waitreason_classify(machine, state, syscall_text, wchan, fake_fd_path, &ctx, &wr);
	FUZZ_CHECK(memchr(wr.frame, '\0', sizeof(wr.frame)));
	FUZZ_CHECK(memchr(wr.path, '\0', sizeof(wr.path)));
	FUZZ_CHECK(waitreason_kind_name(wr.kind) != NULL);
	if (wr.syscall)
		(void)strlen(wr.syscall);
	free(text);
	return 0;
}
