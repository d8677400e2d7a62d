// The CPU twin of common.h, as a project that checks its kernels on the host
// keeps one: a float/double `floatX` switch, an alias for the accumulator,
// host checks, and a helper that only g++ takes (an initialised
// variable-length array: clang refuses it, aotc never reads it).
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#if defined(ENABLE_FP64)
typedef double floatX;
#else
typedef float floatX;
#endif
using acc_t = floatX;

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

inline void report_threads(int n)
{
	int counts[n] = {0};
	for (int i = 0; i < n; i++)
		counts[i] += i;
	printf("%d threads, last %d\n", n, counts[n - 1]);
}

inline void check_finite(const floatX *x, int n)
{
	for (int i = 0; i < n; i++)
		if (!std::isfinite(x[i])) {
			printf("non-finite at %d\n", i);
			exit(1);
		}
}
