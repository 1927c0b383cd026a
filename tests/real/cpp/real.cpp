// The C++ oracle program: threads blocked with an exception in flight and inside templates.
//   catch:  oracle::catcher() -> oracle::thrower() throws; the catch handler calls
//           oracle::in_handler() -> read
//   dtor:   oracle::unwinder() -> oracle::thrower() throws; while the exception unwinds
//           unwinder's frame, oracle::Guard::~Guard() -> read
//   tmpl:   oracle::detail::Rec<3>::go() -> Rec<2> -> Rec<1> -> Rec<0>::go() -> a lambda through
//           std::function -> std::condition_variable::wait
//   main:   std::thread::join
// Prints "ready PID" when every thread is started; tests/real/oracle.py waits until all sleep.
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sys/prctl.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

namespace oracle {

int pipe_fd[2];
volatile int sink;
std::mutex mu;
std::condition_variable cv;

NOINLINE void block_read()
{
	char c;

	sink += (int)read(pipe_fd[0], &c, 1);
}

NOINLINE void thrower(int why)
{
	if (why + sink >= 0)
		throw std::runtime_error("oracle");
	sink++;
}

NOINLINE void in_handler(const std::exception &e)
{
	sink += e.what()[0];
	block_read();
	asm volatile("" ::: "memory");
}

NOINLINE void catcher()
{
	try {
		thrower(1);
	} catch (const std::exception &e) {
		in_handler(e);
	}
	asm volatile("" ::: "memory");
}

struct Guard {
	int id;
	NOINLINE ~Guard()
	{
		sink += id;
		block_read();
		asm volatile("" ::: "memory");
	}
};

NOINLINE void unwinder()
{
	Guard g{ 7 };

	thrower(2);
	sink++;
}

NOINLINE void dtor_thread()
{
	try {
		unwinder();
	} catch (...) {
		sink++;
	}
}

namespace detail {

template <int N> struct Rec {
	NOINLINE static void go(const std::function<void()> &leaf)
	{
		Rec<N - 1>::go(leaf);
		asm volatile("" ::: "memory");
	}
};

template <> struct Rec<0> {
	NOINLINE static void go(const std::function<void()> &leaf)
	{
		leaf();
		asm volatile("" ::: "memory");
	}
};

} // namespace detail

NOINLINE void wait_forever()
{
	std::unique_lock<std::mutex> lk(mu);
	cv.wait(lk, [] { return sink == -12345; });
}

NOINLINE void tmpl_thread()
{
	std::function<void()> leaf = [] { wait_forever(); };
	detail::Rec<3>::go(leaf);
}

} // namespace oracle

int main()
{
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (pipe(oracle::pipe_fd))
		return 1;
	std::vector<std::thread> ts;
	ts.emplace_back(oracle::catcher);
	ts.emplace_back(oracle::dtor_thread);
	ts.emplace_back(oracle::tmpl_thread);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (auto &t : ts)
		t.join();
	return 0;
}
