// The program launcher-env-hostile.sh runs: the emitted host launchers of
// matmul_host and mm_two (a renamed copy, compiled apart, so that the two
// launchers share the launcher environment's process-wide state across
// translation units).
//   hostile [two]            matmul_host on 32^3 and 64^3 (and mm_two on
//                            32^3); prints each launch's status
//   hostile shapes N [--pause]
//                            matmul_host on N distinct shapes that compute
//                            nothing (M = 0), half of them after a 2.1 s
//                            pause with --pause (a merge falls due); prints
//                            the longest launch in ms
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "_aot_matmul_host_host.h"
#include "_aot_mm_two_host.h"

int main(int argc, char **argv)
{
	if (argc > 2 && !std::strcmp(argv[1], "shapes")) {
		long n = std::atol(argv[2]);
		bool pause = argc > 3 && !std::strcmp(argv[3], "--pause");
		float none[1] = {0}; // M = 0: nothing is read or written
		using clk = std::chrono::steady_clock;
		double longest = 0;
		for (long i = 0; i < n; i++) {
			if (pause && i == n / 2)
				std::this_thread::sleep_for(std::chrono::milliseconds(2100));
			clk::time_point t = clk::now();
			aot_matmul_host_host_launch(0, 1 + (int)(i % 1000), 1 + (int)(i / 1000), none, none, none);
			double ms = std::chrono::duration<double, std::milli>(clk::now() - t).count();
			longest = ms > longest ? ms : longest;
		}
		std::printf("longest launch %.0f ms\n", longest);
		return 0;
	}
	for (int size = 32; size <= 64; size *= 2) {
		std::vector<float> A((size_t)size * size, 1), B(A), C(A.size());
		int st = aot_matmul_host_host_launch(size, size, size, A.data(), B.data(), C.data());
		std::printf("matmul_host %d: %d\n", size, st);
	}
	if (argc > 1 && !std::strcmp(argv[1], "two")) {
		std::vector<float> A(32 * 32, 1), B(A), C(A.size());
		std::printf("mm_two 32: %d\n", aot_mm_two_host_launch(32, 32, 32, A.data(), B.data(), C.data()));
	}
	return 0;
}
