// SGEMM with warp tiling: C = alpha * A * B + beta * C, all row-major, A is
// M x K, B is K x N, C is M x N. The kernel of the public "how to optimize a
// CUDA matmul" series that adds a warp level between the block and the
// thread (its kernel 10), with every edge handled so that any M, N, K work,
// and nine tunables: a search space of 2000-odd configurations, for the
// model-guided search (docs/cli.md, --search).
//
// Tiling.  A block of THREADS = (BM / WM) * (BN / WN) * 32 threads computes a
// BM x BN tile of C; each warp a WM x WN tile of it, walked as WMITER x WNITER
// subtiles of WSUBM x WSUBN (WMITER = WM * WN / (32 * TM * TN * WNITER)); in
// each subtile a thread owns a TM x TN register tile, so a thread accumulates
// (WMITER * TM) x (WNITER * TN) values and reuses each loaded fragment across
// the subtiles. K is walked in slabs of BK staged in shared memory: A
// transposed (pitch BM + 4: no bank conflicts on the transposed store, rows
// 16-byte aligned), B as is.
//
// Global loads are VEC floats wide (float4 for VEC = 4; needs K % 4 == 0 and
// N % 4 == 0, and 16-byte aligned buffers, as cudaMalloc gives); out-of-range
// rows and columns are zero-filled on load and not stored, so VEC = 1
// variants take any shape.
#include <aotc.h>

namespace warptile_detail {

template <int VEC>
__device__ __forceinline__ void load_vec(float (&r)[VEC], const float *__restrict__ p)
{
    if constexpr (VEC == 4) {
        const float4 v = *reinterpret_cast<const float4 *>(p);
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i) r[i] = p[i];
    }
}

// N consecutive floats of shared memory (16-byte aligned when N % 4 == 0).
template <int N>
__device__ __forceinline__ void load_frag(float *r, const float *s)
{
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int i = 0; i < N; i += 4) {
            const float4 v = *reinterpret_cast<const float4 *>(s + i);
            r[i] = v.x; r[i + 1] = v.y; r[i + 2] = v.z; r[i + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i) r[i] = s[i];
    }
}

} // namespace warptile_detail

// Constraints (each one the kernel's index arithmetic needs):
//  - the warps tile the block, at most 1024 threads;
//  - a warp's tile splits into whole subtiles of 32 threads' register tiles;
//  - each thread loads a whole number of VEC-vectors of both slabs;
//  - the padded slabs fit in 48 KiB of static shared memory;
//  - VEC divides BK, BN and TN (vector loads and the float4 epilogue).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int WNITER, int VEC>
AOTC_TUNE(BM, 64, 128, 256)
AOTC_TUNE(BN, 64, 128, 256)
AOTC_TUNE(BK, 8, 16)
AOTC_TUNE(WM, 32, 64, 128)
AOTC_TUNE(WN, 32, 64, 128)
AOTC_TUNE(TM, 4, 8)
AOTC_TUNE(TN, 4, 8)
AOTC_TUNE(WNITER, 1, 2, 4)
AOTC_TUNE(VEC, 1, 4)
AOTC_REQUIRE(BM % WM == 0 && BN % WN == 0)
AOTC_REQUIRE((BM / WM) * (BN / WN) * 32 <= 1024)
AOTC_REQUIRE((WM * WN) % (32 * TM * TN * WNITER) == 0)
AOTC_REQUIRE(WN % WNITER == 0 && (WN / WNITER) % TN == 0)
AOTC_REQUIRE((WM / ((WM * WN) / (32 * TM * TN * WNITER))) % TM == 0)
AOTC_REQUIRE(WM % ((WM * WN) / (32 * TM * TN * WNITER)) == 0)
AOTC_REQUIRE((BM * BK / VEC) % ((BM / WM) * (BN / WN) * 32) == 0)
AOTC_REQUIRE((BK * BN / VEC) % ((BM / WM) * (BN / WN) * 32) == 0)
AOTC_REQUIRE((BK * (BM + 4) + BK * BN) * 4 <= 48 * 1024)
AOTC_REQUIRE(BK % VEC == 0 && BN % VEC == 0 && TN % VEC == 0)
AOTC_VALID_IF(VEC == 1 || (K % 4 == 0 && N % 4 == 0))
AOTC_GRID(cdiv(N, BN), cdiv(M, BM))
AOTC_BLOCK((BM / WM) * (BN / WN) * 32)
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, inout)
AOTC_VALUE(alpha, 1)
AOTC_VALUE(beta, 0.5)
AOTC_SHAPES(M = {320, 1000, 2000}, N = {384, 1800}, K = {512, 1024})
AOTC_REFERENCE(sgemm_warptile_naive)
AOTC_METRIC(FLOP, 2 * M * N * K)
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
sgemm_warptile(int M, int N, int K, float alpha, const float *__restrict__ A,
               const float *__restrict__ B, float beta, float *__restrict__ C)
{
    using namespace warptile_detail;
    constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
    constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
    constexpr int LDA = BM + 4;
    constexpr int A_LOADS = BM * BK / VEC / THREADS, B_LOADS = BK * BN / VEC / THREADS;
    static_assert(WMITER >= 1 && WMITER * WSUBM == WM && WNITER * WSUBN == WN, "warp subtiles");
    static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "a subtile is one register tile per lane");
    static_assert(A_LOADS * VEC * THREADS == BM * BK && B_LOADS * VEC * THREADS == BK * BN,
                  "slab loads must divide evenly");

    alignas(16) __shared__ float As[BK * LDA];  // As[k * LDA + m]
    alignas(16) __shared__ float Bs[BK * BN];   // Bs[k * BN + n]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wrow = warp / (BN / WN), wcol = warp % (BN / WN);
    const int trow = lane / (WSUBN / TN), tcol = lane % (WSUBN / TN);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    A += (size_t)m0 * K;
    B += n0;
    C += (size_t)m0 * N + n0;
    const int mrem = M - m0, nrem = N - n0;

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int u = tid + l * THREADS;
            const int row = u / (BK / VEC), col = (u % (BK / VEC)) * VEC;
            float r[VEC];
            if (row < mrem && k0 + col < K) {
                load_vec<VEC>(r, A + (size_t)row * K + k0 + col);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v) r[v] = 0.0f;
            }
#pragma unroll
            for (int v = 0; v < VEC; ++v) As[(col + v) * LDA + row] = r[v];
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int u = tid + l * THREADS;
            const int row = u / (BN / VEC), col = (u % (BN / VEC)) * VEC;
            float r[VEC];
            if (k0 + row < K && col < nrem) {
                load_vec<VEC>(r, B + (size_t)(k0 + row) * N + col);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v) r[v] = 0.0f;
            }
#pragma unroll
            for (int v = 0; v < VEC; ++v) Bs[row * BN + col + v] = r[v];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[WMITER * TM], b[WNITER * TN];
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm)
                load_frag<TM>(a + wm * TM, &As[k * LDA + wrow * WM + wm * WSUBM + trow * TM]);
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
                load_frag<TN>(b + wn * TN, &Bs[k * BN + wcol * WN + wn * WSUBN + tcol * TN]);
#pragma unroll
            for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                for (int j = 0; j < WNITER * TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

    // Epilogue.  beta == 0 does not read C. With VEC == 4, N % 4 == 0 and
    // every column offset is a multiple of 4, so a float4 whose first column
    // is in bounds is entirely in bounds.
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = wrow * WM + wm * WSUBM + trow * TM + i;
            if (row >= mrem) continue;
            float *crow = C + (size_t)row * N;
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN; j += VEC) {
                    const int col = wcol * WN + wn * WSUBN + tcol * TN + j;
                    if (col >= nrem) continue;
                    const float *r = &acc[wm * TM + i][wn * TN + j];
                    if constexpr (VEC == 4) {
                        float4 *p = reinterpret_cast<float4 *>(crow + col);
                        float4 out = make_float4(alpha * r[0], alpha * r[1], alpha * r[2], alpha * r[3]);
                        if (beta != 0.0f) {
                            const float4 c = *p;
                            out.x += beta * c.x; out.y += beta * c.y;
                            out.z += beta * c.z; out.w += beta * c.w;
                        }
                        *p = out;
                    } else {
                        float out = alpha * r[0];
                        if (beta != 0.0f) out += beta * crow[col];
                        crow[col] = out;
                    }
                }
        }
}

// Reference: one thread per element of C, the same epilogue.
AOTC_GRID(cdiv(N, 16), cdiv(M, 16))
AOTC_BLOCK(16, 16)
__global__ void sgemm_warptile_naive(int M, int N, int K, float alpha, const float *A,
                                     const float *B, float beta, float *C)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    float out = alpha * acc;
    if (beta != 0.0f) out += beta * C[(size_t)row * N + col];
    C[(size_t)row * N + col] = out;
}
