// tests/codegen/rocm/axpy.cu's kernel checked against a plain host function instead of a
// reference kernel (docs/annotations.md, "A host reference"), for the HIP stand-in
// (hip-stand-in.sh): the stand-in runs axpy's variants by their mangled names, as for
// axpy.cu, and the worker calls axpy_host itself, so a variant is right only when it
// agrees with the host code. AXPY_HOST_BREAK (read by the host function, so that the test
// needs no second file and no recompile) breaks the reference on purpose: "wrong" adds 1 to
// y[7], so that every variant disagrees with it; "past" also writes y[n]; "crash" faults.
#include <aotc.h>
#include <cstdlib>
#include <cstring>

void axpy_host(int n, float a, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] += a * x[i];
	const char *how = std::getenv("AXPY_HOST_BREAK");
	if (how && !std::strcmp(how, "wrong") && n > 7)
		y[7] += 1;
	if (how && !std::strcmp(how, "past"))
		y[n] = 0;
	if (how && !std::strcmp(how, "crash"))
		*(volatile int *)nullptr = 0;
}

template <int BS, int PER>
AOTC_TUNE(BS, 64, 128, 256, 512)
AOTC_TUNE(PER, 1, 2, 4)
AOTC_REQUIRE(BS * PER <= 1024)
AOTC_VALID_IF(n % PER == 0)
AOTC_GRID(cdiv(n, BS * PER))
AOTC_BLOCK(BS)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 0.5)
AOTC_SHAPES(n = pow2(1024, 67108864))
AOTC_REFERENCE(axpy_host)
__global__ void axpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)
{
	int i = blockIdx.x * (BS * PER) + threadIdx.x;
#pragma unroll
	for (int j = 0; j < PER; j++, i += BS)
		if (i < n)
			y[i] += a * x[i];
}
