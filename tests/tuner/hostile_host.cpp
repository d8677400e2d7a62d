// Host kernels that attack the measurement itself (issue 28), for
// tests/tuner/hostile.sh. hostile<MODE, GOOD> copies x into y; GOOD 1 and 2
// are correct whatever MODE is (innocents, which the test's --seed places
// right after the hostile ones so that blame is tested); with GOOD 0:
//   0 correct
//   1 forks once; the child returns like the parent, into the worker's code
//   2 starts a thread that, once the calls have stopped, writes into y and
//     then crashes
//   3 sets alarm(1) on every call
//   4 changes the working directory to /
//   5 installs a SIGSEGV handler that exits quietly
//   6 copies one element too many (y[n] = x[n]: a guard into a guard)
//   7 writes into its const input, in bounds
//   8 is wrong on 30% of its calls (a fixed-seed generator)
//   9 forks once; the child writes a fake "ok" reply on every descriptor
// big<U> is a plain copy without a reference whose largest shape needs more
// memory than the test allows (AOTC_HOST_MEMORY_LIMIT).
#include <aotc.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

static std::atomic<long> calls;

static void crash_later(float *y, int n)
{
	// Wait until the calls have stopped for a second (the variant's
	// measurement is over), then spoil what a later variant writes into the
	// same buffer, and crash.
	long seen = -1;
	int idle = 0;
	while (idle < 500) {
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
		long now = calls.load();
		idle = now == seen ? idle + 1 : 0;
		seen = now;
	}
	for (int t = 0; t < 100; t++) {
		for (int i = 0; i < n; i++)
			reinterpret_cast<volatile float *>(y)[i] = 1e30f;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	*reinterpret_cast<volatile int *>(std::uintptr_t(8)) = 1;
}

static void quiet_exit(int) { _exit(0); }

template <int MODE, int GOOD>
AOTC_TUNE(MODE, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
AOTC_TUNE(GOOD, 0, 1, 2)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {64, 101, 1000})
AOTC_REFERENCE(copy_ref)
void hostile(int n, const float *x, float *y)
{
	static bool once;
	static unsigned rng = 12345;
	calls++;
	for (int i = 0; i < n; i++)
		y[i] = x[i];
	if (GOOD)
		return;
	bool first = !once;
	once = true;
	if (MODE == 1 && first)
		fork();
	if (MODE == 2 && first)
		std::thread(crash_later, y, n).detach();
	if (MODE == 3)
		alarm(1);
	if (MODE == 4 && first)
		(void)!chdir("/");
	if (MODE == 5 && first)
		std::signal(SIGSEGV, quiet_exit);
	if (MODE == 6)
		y[n] = x[n];
	if (MODE == 7)
		const_cast<float *>(x)[n / 2] = 0.5f;
	if (MODE == 8) {
		rng = rng * 1103515245u + 12345u;
		if ((rng >> 16) % 10 < 3)
			y[n / 3] += 1;
	}
	if (MODE == 9 && first && fork() == 0) {
		static const char fake[] = "{\"status\":\"ok\",\"samples\":[1e-6,1e-6,1e-6],\"error\":0}\n";
		for (int fd = 0; fd < 1024; fd++)
			(void)!write(fd, fake, sizeof fake - 1);
		_exit(0);
	}
}

void copy_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = x[i];
}

template <int U>
AOTC_TUNE(U, 1, 2)
AOTC_BUFFER(a, n, in)
AOTC_BUFFER(b, n, out)
AOTC_SHAPES(n = {4000000, 1000})
void big(int n, const float *a, float *b)
{
	for (int i = 0; i < n; i++)
		b[i] = a[i];
}
