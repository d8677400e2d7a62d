// Kernel Tuner's C backend calls one extern "C" function per timed run and
// takes the float it returns as that run's time (ms): the timing, and any
// cache eviction before it, are the harness's to do. Kernel Tuner prepends
// "#define BM 16" and so on; they are captured here and undefined, because
// BM, BN, BK and UNROLL are also the template's parameter names.
enum { KT_BM = BM, KT_BN = BN, KT_BK = BK, KT_UNROLL = UNROLL };
#undef BM
#undef BN
#undef BK
#undef UNROLL
#include <time.h>
#include <x86intrin.h>
#include "matmul_host.cpp"

// What aotc's default cold cache does on x86 ("evict"): every cache line of
// the buffers' data flushed from every level, then a fence. KT_EVICT=0: none.
static void evict(const void *p, long long bytes)
{
	for (long long i = 0; i < bytes + 63; i += 64) _mm_clflush((const char *)p + i);
}

extern "C" float matmul_kt(int M, int N, int K, const float *A, const float *B, float *C)
{
#if KT_EVICT
	evict(A, (long long)M * K * 4);
	evict(B, (long long)K * N * 4);
	evict(C, (long long)M * N * 4);
	_mm_mfence();
#endif
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	matmul_host<KT_BM, KT_BN, KT_BK, KT_UNROLL>(M, N, K, A, B, C);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (float)((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6);
}
