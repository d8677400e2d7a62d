// A 294-configuration host space for bench/estimate/estimate.py: a tiled
// transpose, tiles of 1 to 64 each way and an inner unroll of 1 to 8 (7 x 7
// x 6), every configuration valid and right, their times apart by the
// tiles' fit in the caches.
#include <stddef.h>

#include <aotc.h>

template <int TI, int TJ, int U>
AOTC_TUNE(TI, 1, 2, 4, 8, 16, 32, 64)
AOTC_TUNE(TJ, 1, 2, 4, 8, 16, 32, 64)
AOTC_TUNE(U, 1, 2, 3, 4, 6, 8)
AOTC_BUFFER(a, M * N, in)
AOTC_BUFFER(b, M * N, out)
AOTC_SHAPES(M = {256, 1000, 2048}, N = {256, 1024})
AOTC_REFERENCE(transpose_ref)
void transpose(int M, int N, const float *a, float *b)
{
	for (int i0 = 0; i0 < M; i0 += TI)
		for (int j0 = 0; j0 < N; j0 += TJ)
			for (int i = i0; i < i0 + TI && i < M; i++) {
				int j = j0, end = j0 + TJ < N ? j0 + TJ : N;
				for (; j + U <= end; j += U)
					for (int u = 0; u < U; u++)
						b[(size_t)(j + u) * M + i] = a[(size_t)i * N + j + u];
				for (; j < end; j++)
					b[(size_t)j * M + i] = a[(size_t)i * N + j];
			}
}

void transpose_ref(int M, int N, const float *a, float *b)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			b[(size_t)j * M + i] = a[(size_t)i * N + j];
}
