// cpp target: `cpp SECONDS`. Three threads burn CPU in a template member function
// (Worker<int>::run), a lambda called through std::function and an always_inline function
// (ns::hot_inline) inlined into a noinline caller (ns::inline_caller).
#include <cstdio>
#include <functional>
#include <pthread.h>

#include "cpp_hot.h"
#include "target_common.h"

static volatile unsigned long cpp_sink;
static pthread_barrier_t start_barrier;

namespace ns
{

__attribute__((noinline)) unsigned long inline_caller(double seconds)
{
	double end = target_now() + seconds;
	unsigned long x = 7;

	do {
		x = hot_inline(x); // HOT_INLINE_CALL: the call line perch must give the caller
		cpp_sink += x & 1;
	} while (target_now() < end);
	return x;
}

} // namespace ns

template <typename T> struct Worker {
	T acc;
	__attribute__((noinline)) T run(double seconds);
};

template <typename T> T Worker<T>::run(double seconds)
{
	double end = target_now() + seconds;

	do {
		for (int i = 0; i < 100000; i++)
			acc = static_cast<T>(static_cast<unsigned>(acc) * 31u +
					     static_cast<unsigned>(i));
		cpp_sink += static_cast<unsigned long>(acc);
	} while (target_now() < end);
	return acc;
}

__attribute__((noinline)) unsigned long run_lambda(double seconds)
{
	unsigned long x = 3;
	std::function<void(int)> fn = [&x](int n) __attribute__((noinline))
	{
		for (int i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	};
	double end = target_now() + seconds;

	do {
		fn(100000);
		cpp_sink += x & 1;
	} while (target_now() < end);
	return x;
}

struct job {
	const char *name;
	double seconds;
};

static void *thread_main(void *arg)
{
	job *j = static_cast<job *>(arg);

	pthread_setname_np(pthread_self(), j->name);
	pthread_barrier_wait(&start_barrier);
	if (j->name[0] == 't') {
		Worker<int> w = {1};
		cpp_sink += static_cast<unsigned long>(w.run(j->seconds));
	} else if (j->name[0] == 'l') {
		cpp_sink += run_lambda(j->seconds);
	} else {
		cpp_sink += ns::inline_caller(j->seconds);
	}
	return nullptr;
}

int main(int argc, char **argv)
{
	double seconds = target_arg(argc, argv, 1, 2.0);
	job jobs[] = {{"tmpl", seconds}, {"lambda", seconds}, {"inline", seconds}};
	pthread_t threads[3];

	target_allow_ptrace();
	pthread_barrier_init(&start_barrier, nullptr, 4);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&threads[i], nullptr, thread_main, &jobs[i]))
			return 1;
	pthread_barrier_wait(&start_barrier);
	target_ready();
	for (int i = 0; i < 3; i++)
		pthread_join(threads[i], nullptr);
	std::printf("done %lu\n", static_cast<unsigned long>(cpp_sink & 1));
	return 0;
}
