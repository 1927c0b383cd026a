/* regset PID: attach to PID (PTRACE_SEIZE + INTERRUPT), print the size of its register set as
 * the kernel answers PTRACE_GETREGSET NT_PRSTATUS for a 1 KiB buffer ("regset 272" for an
 * aarch64 thread, "regset 72" for a 32-bit ARM one), detach. What perch_arch_regset_class()
 * decides from; tests/arm64/e2e.sh checks the kernel's answer. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	unsigned char buf[1024];
	struct iovec iov = {buf, sizeof(buf)};
	pid_t pid = argc == 2 ? atoi(argv[1]) : 0;
	int st, ret = 0;

	if (pid <= 0) {
		fprintf(stderr, "usage: regset PID\n");
		return 64;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0 || ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 ||
	    waitpid(pid, &st, __WALL) != pid) {
		perror("regset: attach");
		return 1;
	}
	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) < 0) {
		perror("regset: PTRACE_GETREGSET");
		ret = 1;
	} else {
		printf("regset %zu\n", iov.iov_len);
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return ret;
}
