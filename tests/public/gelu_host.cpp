// GELU on the CPU in the style of gelu_forward.cu's host side: the shared
// host header (floatX through a typedef, acc_t through `using`), <omp.h>,
// a naive reference and a blocked kernel unrolled by a template parameter,
// and a main() that g++ builds and clang does not parse (report_threads).
// Only the AOTC_ lines were added.
#include <aotc.h>
#include <omp.h>
#include "common_host.h"

#define GELU_SCALING_FACTOR 0.7978845608028654f

static inline floatX gelu(floatX x)
{
	acc_t cube = (acc_t)0.044715 * x * x * x;
	return (floatX)(0.5 * x * (1.0 + std::tanh(GELU_SCALING_FACTOR * (x + cube))));
}

void gelu_forward_cpu(floatX *out, const floatX *inp, int N)
{
	for (int i = 0; i < N; i++)
		out[i] = gelu(inp[i]);
}

template <int UNROLL, int CHUNK>
AOTC_TUNE(UNROLL, 1, 4, 8)
AOTC_TUNE(CHUNK, 256, 4096)
AOTC_BUFFER(out, N, out)
AOTC_BUFFER(inp, N, in)
AOTC_SHAPES(N = {1000, 65536, 1048576})
AOTC_REFERENCE(gelu_forward_cpu)
void gelu_forward(floatX *out, const floatX *inp, int N)
{
#pragma omp parallel for schedule(static)
	for (int c = 0; c < N; c += CHUNK) {
		int end = c + CHUNK < N ? c + CHUNK : N;
		int i = c;
		for (; i + UNROLL <= end; i += UNROLL)
			for (int u = 0; u < UNROLL; u++)
				out[i + u] = gelu(inp[i + u]);
		for (; i < end; i++)
			out[i] = gelu(inp[i]);
	}
}

int main()
{
	int N = 1 << 20;
	floatX *inp = (floatX *)malloc(N * sizeof(floatX)), *out = (floatX *)malloc(N * sizeof(floatX));
	for (int i = 0; i < N; i++)
		inp[i] = (floatX)(i % 200 - 100) / 50;
	gelu_forward<4, 4096>(out, inp, N);
	check_finite(out, N);
	report_threads(omp_get_max_threads());
	free(inp);
	free(out);
	return 0;
}
