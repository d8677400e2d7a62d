// Calls the emitted nop launcher CALLS times on SHAPES distinct shapes in
// turn, and the kernel directly as many times; prints ns per call of each.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "_aot_nop_host.h"
#include "nop.cpp"

int main(int argc, char **argv)
{
	long calls = argc > 1 ? std::atol(argv[1]) : 10000000;
	int shapes = argc > 2 ? std::atoi(argv[2]) : 1;
	float x[64] = {1}, y[64];
	using clk = std::chrono::steady_clock;
	aot_nop_host_launch(1, x, y); // the environment is read at the first call
	auto t0 = clk::now();
	for (long i = 0; i < calls; i++)
		aot_nop_host_launch(1 + (int)(i % shapes), x, y);
	auto t1 = clk::now();
	for (long i = 0; i < calls; i++) {
		nop<1>(1 + (int)(i % shapes), x, y);
		asm volatile("" ::: "memory");
	}
	auto t2 = clk::now();
	double l = std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)calls;
	double d = std::chrono::duration<double, std::nano>(t2 - t1).count() / (double)calls;
	std::printf("%.2f %.2f\n", l, d);
	return 0;
}
