// Host (CPU) kernel for `aotc --arch host`: C = A * B, row-major, A is M x K,
// B is K x N, C is M x N.
//
// Cache blocking: the iteration space is cut into BM x BK x BN blocks; the
// BK x BN block of B is reused across the BM rows of A that touch it, so the
// working set (BM*BK + BK*BN floats) should stay in the private caches.
// Within a block the loop order is i, k, j: the innermost loop streams a row
// of B and a row of C with unit stride (vectorisable), unrolled by UNROLL.
// The unrolled loop has no remainder, hence AOTC_VALID_IF(N % UNROLL == 0);
// block edges in M, N, K are handled by clamping, so any size works.
#include <aotc.h>

template <int BM, int BN, int BK, int UNROLL>
AOTC_TUNE(BM, 16, 64)
AOTC_TUNE(BN, 32, 128, 256)
AOTC_TUNE(BK, 32, 128)
AOTC_TUNE(UNROLL, 1, 4, 8)
AOTC_REQUIRE(BN % UNROLL == 0)
AOTC_REQUIRE((BM * BK + BK * BN) * 4 <= 128 * 1024)
AOTC_VALID_IF(N % UNROLL == 0)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, out)
AOTC_SHAPES(M = pow2(32, 256), N = {32, 100, 128, 256}, K = {32, 100, 256})
AOTC_REFERENCE(matmul_host_naive)
AOTC_METRIC(FLOP, 2 * M * N * K)
void matmul_host(int M, int N, int K, const float *__restrict A,
                 const float *__restrict B, float *__restrict C)
{
    static_assert(BN % UNROLL == 0, "a full block of N must be whole unrolled steps");
    for (long long i = 0; i < (long long)M * N; ++i) C[i] = 0.0f;
    for (int i0 = 0; i0 < M; i0 += BM) {
        const int i1 = i0 + BM < M ? i0 + BM : M;
        for (int k0 = 0; k0 < K; k0 += BK) {
            const int k1 = k0 + BK < K ? k0 + BK : K;
            for (int j0 = 0; j0 < N; j0 += BN) {
                // j1 - j0 is BN or N - j0, both multiples of UNROLL.
                const int j1 = j0 + BN < N ? j0 + BN : N;
                for (int i = i0; i < i1; ++i) {
                    float *__restrict c = C + (long long)i * N;
                    for (int k = k0; k < k1; ++k) {
                        const float a = A[(long long)i * K + k];
                        const float *__restrict b = B + (long long)k * N;
                        for (int j = j0; j < j1; j += UNROLL)
                            for (int u = 0; u < UNROLL; ++u) c[j + u] += a * b[j + u];
                    }
                }
            }
        }
    }
}

// Reference: the textbook triple loop.
void matmul_host_naive(int M, int N, int K, const float *A, const float *B, float *C)
{
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += A[(long long)i * K + k] * B[(long long)k * N + j];
            C[(long long)i * N + j] = acc;
        }
}
