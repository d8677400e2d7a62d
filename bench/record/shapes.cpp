// Launches the emitted matmul_host launcher on SHAPES distinct shapes, each
// CALLS times, with M = 0 so that a launch computes nothing and the time is
// the launcher's (AOTC_RECORD counting and merging). Half way it sleeps
// 2.1 s, so that the first launch after the pause finds a merge due (the
// launcher merges at most every 2 s) with half the shapes counted. Prints
// the seconds the launches took (the pause not included) and the longest
// single launch in ms: bench/record-shapes.sh.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "_aot_matmul_host_host.h"

int main(int argc, char **argv)
{
	long shapes = argc > 1 ? std::atol(argv[1]) : 100000;
	long calls = argc > 2 ? std::atol(argv[2]) : 1;
	static float A[1], B[1], C[1]; // M = 0: none is read or written
	using clk = std::chrono::steady_clock;
	double longest = 0;
	double sec = 0;
	for (int half = 0; half < 2; half++) {
		if (half)
			std::this_thread::sleep_for(std::chrono::milliseconds(2100));
		clk::time_point t0 = clk::now();
		for (long c = 0; c < calls; c++)
			for (long i = half * shapes / 2; i < (half + 1) * shapes / 2; i++) {
				clk::time_point s = clk::now();
				aot_matmul_host_host_launch(0, 1 + (int)(i % 1000), 1 + (int)(i / 1000), A, B, C);
				double ms = std::chrono::duration<double, std::milli>(clk::now() - s).count();
				if (ms > longest)
					longest = ms;
			}
		sec += std::chrono::duration<double>(clk::now() - t0).count();
	}
	std::printf("%.3f %.1f\n", sec, longest);
	return 0;
}
