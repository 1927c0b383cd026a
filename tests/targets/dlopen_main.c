/* dlopen target: `dlopen SECONDS`. Prints "ready", waits for a line on stdin (or SIGUSR1), only
 * then dlopen()s libplugin.so from its own directory and spins in plugin_hot() for SECONDS.
 * The test attaches perch before sending the line, so the library is mapped under perch. */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "target_common.h"

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

int main(int argc, char **argv)
{
	double seconds = target_arg(argc, argv, 1, 1.5);
	struct sigaction sa = {.sa_handler = on_usr1};
	char exe[PATH_MAX], lib[PATH_MAX + 32], c;
	unsigned long (*hot)(double);
	ssize_t n;
	void *h;

	target_allow_ptrace();
	sigaction(SIGUSR1, &sa, NULL); /* no SA_RESTART: read() returns EINTR */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	exe[n] = '\0';
	snprintf(lib, sizeof(lib), "%s/libplugin.so", dirname(exe));
	target_ready();
	while (!got_usr1) {
		n = read(0, &c, 1);
		if (n > 0 && c == '\n')
			break;
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&hot = dlsym(h, "plugin_hot");
	if (!hot) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	printf("plugin %lu\n", hot(seconds));
	return 0;
}
