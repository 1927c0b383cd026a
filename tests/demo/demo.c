/* perch's bundled demo workload: a few named threads doing recognisably different work, so a
 * first profile has something to show. Runs for argv[1] seconds (default 4). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t hash_block(const uint8_t *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

__attribute__((noinline)) static void multiply(const double *a, const double *b, double *c, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;

			for (int k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
}

__attribute__((noinline)) static size_t count_words(const char *text)
{
	size_t words = 0;
	int in = 0;

	for (const char *s = text; *s; s++) {
		int letter = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z');

		words += letter && !in;
		in = letter;
	}
	return words;
}

static void *hasher(void *arg)
{
	uint8_t buf[4096];
	uint64_t h = 14695981039346656037ULL;

	memset(buf, 0x5a, sizeof(buf));
	while (!stop)
		h = hash_block(buf, sizeof(buf), h);
	sink = h;
	return arg;
}

static void *matrix(void *arg)
{
	enum { N = 64 };
	static double a[N * N], b[N * N], c[N * N];

	for (int i = 0; i < N * N; i++)
		a[i] = b[i] = (double)(i % 7);
	while (!stop)
		multiply(a, b, c, N);
	sink = (uint64_t)c[5];
	return arg;
}

static void *parser(void *arg)
{
	static char text[1 << 16];
	struct timespec pause = {0, 2000000};

	for (size_t i = 0; i + 1 < sizeof(text); i++)
		text[i] = (i % 6 == 5) ? ' ' : (char)('a' + i % 26);
	while (!stop) {
		for (int i = 0; i < 40; i++)
			sink += count_words(text);
		nanosleep(&pause, NULL); /* busy about half the time, waiting the rest */
	}
	return arg;
}

int main(int argc, char **argv)
{
	static void *(*const work[])(void *) = {hasher, matrix, parser};
	static const char *const names[] = {"hasher", "matrix", "parser"};
	double secs = argc > 1 ? atof(argv[1]) : 4, start;
	pthread_t t[3];

	for (int i = 0; i < 3; i++) {
		pthread_create(&t[i], NULL, work[i], NULL);
		pthread_setname_np(t[i], names[i]);
	}
	printf("perch-demo: pid %d, running %.0f s with threads hasher, matrix, parser\n", getpid(),
	       secs);
	fflush(stdout);
	start = now();
	while (now() - start < secs)
		usleep(10000);
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
