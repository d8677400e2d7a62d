// SGEMM, 2-D block tiling: C = alpha * A * B + beta * C, all row-major,
// A is M x K, B is K x N, C is M x N (the "how to optimize a CUDA matmul" form).
//
// Tiling scheme.  Each block computes a BM x BN tile of C with
// THREADS = BM*BN / (TM*TN) threads; each thread owns a TM x TN register tile
// (rows tr*TM.., columns tc*TN.., both contiguous).  The K dimension is walked
// in slabs of BK: the block stages the BM x BK slab of A (transposed, so a
// thread's TM values of one k are contiguous and load as one vector) and the
// BK x BN slab of B in shared memory, then every thread does TM*TN FMAs per k
// from registers.  While a slab is being consumed the next one is already in
// flight from global memory into registers (register prefetch), so global
// latency overlaps the FMAs with the usual two barriers per slab.
//
// Global loads are VEC floats wide (float4 for VEC == 4; needs K % 4 == 0,
// N % 4 == 0 and 16-byte aligned A, B, C - cudaMalloc'ed buffers are).  Every
// edge (M, N and K not multiples of the tile) is handled with bounds checks and
// zero fill, so VEC == 1 variants accept any shape.
//
// The A slab is stored with a row pitch of BM + 4 floats: the transposed store
// otherwise puts all k of one row in the same bank (BM is a multiple of 32);
// +4 keeps rows 16-byte aligned for the vector reads.
#include <aotc.h>

namespace sgemm_detail {

// VEC consecutive floats from global memory (p aligned to VEC floats).
template <int VEC>
__device__ __forceinline__ void load_vec(float (&r)[VEC], const float *__restrict__ p)
{
    if constexpr (VEC == 4) {
        const float4 v = *reinterpret_cast<const float4 *>(p);
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    } else if constexpr (VEC == 2) {
        const float2 v = *reinterpret_cast<const float2 *>(p);
        r[0] = v.x; r[1] = v.y;
    } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i) r[i] = p[i];
    }
}

template <int VEC>
__device__ __forceinline__ void store_vec(float *p, const float (&r)[VEC])
{
    if constexpr (VEC == 4) {
        *reinterpret_cast<float4 *>(p) = make_float4(r[0], r[1], r[2], r[3]);
    } else if constexpr (VEC == 2) {
        *reinterpret_cast<float2 *>(p) = make_float2(r[0], r[1]);
    } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i) p[i] = r[i];
    }
}

// N consecutive floats from shared memory into registers, widest vectors the
// alignment allows (offsets are multiples of N, slabs are 16-byte aligned).
template <int N>
__device__ __forceinline__ void load_frag(float (&r)[N], const float *s)
{
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int i = 0; i < N; i += 4) {
            const float4 v = *reinterpret_cast<const float4 *>(s + i);
            r[i] = v.x; r[i + 1] = v.y; r[i + 2] = v.z; r[i + 3] = v.w;
        }
    } else if constexpr (N % 2 == 0) {
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            const float2 v = *reinterpret_cast<const float2 *>(s + i);
            r[i] = v.x; r[i + 1] = v.y;
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i) r[i] = s[i];
    }
}

} // namespace sgemm_detail

// cuBLAS competes with the template (AOTC_EXTERN below): the tuner measures
// and checks it like a variant, and the dispatch calls it for the shapes where
// it wins (deep, thin products such as 512 x 512 x 8192). Host code, so
// NVRTC, which compiles the variants, does not see it; nvcc builds the
// tuner's caller of it and the emitted launcher (link with -lcublas). AMD
// GPUs (hipcc) have no cuBLAS: there the file is the template alone, and the
// tuner leaves this CUDA routine out.
#if !defined(__CUDACC_RTC__) && !defined(__HIP_PLATFORM_AMD__)
#include <cublas_v2.h>

cudaError_t sgemm_cublas(int M, int N, int K, float alpha, const float *A, const float *B,
                         float beta, float *C, cudaStream_t stream)
{
    // A handle belongs to the device current when it was made, and is not for
    // two threads at once: one per thread and device, made on first use.
    constexpr int MAX_DEVICES = 64;
    thread_local cublasHandle_t handles[MAX_DEVICES] = {};
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    if (dev < 0 || dev >= MAX_DEVICES)
        return cudaErrorInvalidDevice;
    if (!handles[dev] && cublasCreate(&handles[dev]) != CUBLAS_STATUS_SUCCESS) {
        handles[dev] = nullptr;
        return cudaErrorInitializationError;
    }
    if (cublasSetStream(handles[dev], stream) != CUBLAS_STATUS_SUCCESS)
        return cudaErrorInvalidResourceHandle;
    // Row-major C = alpha A B + beta C is column-major C' = alpha B' A' + beta C'.
    cublasStatus_t s = cublasSgemm(handles[dev], CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
                                   B, N, A, K, &beta, C, N);
    if (s == CUBLAS_STATUS_INVALID_VALUE)
        return cudaErrorInvalidValue;
    if (s != CUBLAS_STATUS_SUCCESS)
        return cudaErrorLaunchFailure;
    return cudaGetLastError();
}
#endif

// Constraints:
//  - threads per block in [32, 1024];
//  - each thread loads a whole number of VEC-vectors of both slabs (no
//    partial last round in the cooperative loads);
//  - the padded slabs fit in 48 KiB of static shared memory;
//  - TM, TN divide BM, BN and VEC divides BK, BN, TN (true for these lists, stated
//    so that edited lists stay correct).
template <int BM, int BN, int BK, int TM, int TN, int VEC>
AOTC_TUNE(BM, 32, 64, 128, 256)
AOTC_TUNE(BN, 32, 64, 128, 256)
AOTC_TUNE(BK, 8, 16, 32)
AOTC_TUNE(TM, 2, 4, 8)
AOTC_TUNE(TN, 4, 8)
AOTC_TUNE(VEC, 1, 4)
AOTC_REQUIRE((BM * BN) / (TM * TN) >= 32 && (BM * BN) / (TM * TN) <= 1024)
AOTC_REQUIRE((BM * BK / VEC) % ((BM * BN) / (TM * TN)) == 0)
AOTC_REQUIRE((BK * BN / VEC) % ((BM * BN) / (TM * TN)) == 0)
AOTC_REQUIRE((BK * (BM + 4) + BK * BN) * 4 <= 48 * 1024)
AOTC_REQUIRE(BM % TM == 0 && BN % TN == 0 && BK % VEC == 0 && BN % VEC == 0 && TN % VEC == 0)
AOTC_VALID_IF(VEC == 1 || (K % 4 == 0 && N % 4 == 0))
AOTC_GRID(cdiv(N, BN), cdiv(M, BM))
AOTC_BLOCK((BM * BN) / (TM * TN))
AOTC_BUFFER(A, M * K, in)
AOTC_BUFFER(B, K * N, in)
AOTC_BUFFER(C, M * N, inout)
AOTC_VALUE(alpha, 1)
AOTC_VALUE(beta, 0.5)
AOTC_SHAPES(M = geom(100, 4000, 5), N = geom(124, 5000, 5), K = geom(160, 4000, 4))
AOTC_REFERENCE(sgemm_naive)
AOTC_EXTERN(sgemm_cublas, cublas)
// The matrix product's multiply-adds; split-K and cuBLAS share it.
AOTC_METRIC(FLOP, 2 * M * N * K)
__global__ void __launch_bounds__((BM * BN) / (TM * TN))
sgemm(int M, int N, int K, float alpha, const float *__restrict__ A,
      const float *__restrict__ B, float beta, float *__restrict__ C)
{
    using namespace sgemm_detail;
    constexpr int THREADS = (BM * BN) / (TM * TN);
    constexpr int LDA = BM + 4;                          // padded pitch of As
    constexpr int A_LOADS = BM * BK / VEC / THREADS;     // vectors per thread
    constexpr int B_LOADS = BK * BN / VEC / THREADS;
    static_assert(A_LOADS * VEC * THREADS == BM * BK, "A slab load must divide evenly");
    static_assert(B_LOADS * VEC * THREADS == BK * BN, "B slab load must divide evenly");
    static_assert(BM % TM == 0 && BN % TN == 0 && TN % VEC == 0, "tiles must divide evenly");

    alignas(16) __shared__ float As[BK * LDA];  // As[k * LDA + m]
    alignas(16) __shared__ float Bs[BK * BN];   // Bs[k * BN + n]

    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN);   // register tile row
    const int tc = tid % (BN / TN);   // register tile column
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // Block-relative base pointers (64-bit offsets; intra-tile offsets fit in int).
    A += (size_t)m0 * K;
    B += n0;
    C += (size_t)m0 * N + n0;
    const int mrem = M - m0;   // rows of this tile inside C
    const int nrem = N - n0;   // columns of this tile inside C

    // Cooperative load mapping: vector u covers VEC consecutive elements of a
    // slab row; consecutive threads take consecutive vectors (coalesced).
    float ra[A_LOADS][VEC];
    float rb[B_LOADS][VEC];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int u = tid + l * THREADS;
            const int row = u / (BK / VEC), col = (u % (BK / VEC)) * VEC;
            if (row < mrem && k0 + col < K) {
                load_vec<VEC>(ra[l], A + row * K + k0 + col);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v) ra[l][v] = 0.0f;
            }
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int u = tid + l * THREADS;
            const int row = u / (BN / VEC), col = (u % (BN / VEC)) * VEC;
            if (k0 + row < K && col < nrem) {
                load_vec<VEC>(rb[l], B + (size_t)(k0 + row) * N + col);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v) rb[l][v] = 0.0f;
            }
        }
    };
    auto stage = [&]() {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int u = tid + l * THREADS;
            const int row = u / (BK / VEC), col = (u % (BK / VEC)) * VEC;
#pragma unroll
            for (int v = 0; v < VEC; ++v) As[(col + v) * LDA + row] = ra[l][v];
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int u = tid + l * THREADS;
            const int row = u / (BN / VEC), col = (u % (BN / VEC)) * VEC;
            store_vec<VEC>(&Bs[row * BN + col], rb[l]);
        }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    fetch(0);
    for (int k0 = 0; k0 < K; k0 += BK) {
        stage();
        __syncthreads();
        if (k0 + BK < K) fetch(k0 + BK);   // next slab in flight during the FMAs

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
            load_frag<TM>(a, &As[k * LDA + tr * TM]);
            load_frag<TN>(b, &Bs[k * BN + tc * TN]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();   // everyone is done reading before the next stage()
    }

    // Epilogue.  beta == 0 does not read C (BLAS semantics: C may be garbage).
    // With VEC == 4, N % 4 == 0 and col % 4 == 0, so a float4 whose first
    // column is in bounds is entirely in bounds.
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = tr * TM + i;
        if (row >= mrem) break;
        float *crow = C + (size_t)row * N + tc * TN;
        const int ncols = nrem - tc * TN;   // columns of this thread inside C
        if constexpr (VEC == 4) {
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                if (j >= ncols) break;
                float4 *p = reinterpret_cast<float4 *>(crow + j);
                float4 out = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1],
                                         alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
                if (beta != 0.0f) {
                    const float4 c = *p;
                    out.x += beta * c.x; out.y += beta * c.y;
                    out.z += beta * c.z; out.w += beta * c.w;
                }
                *p = out;
            }
        } else {
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                if (j >= ncols) break;
                float out = alpha * acc[i][j];
                if (beta != 0.0f) out += beta * crow[j];
                crow[j] = out;
            }
        }
    }
}

// Reference: one thread per element of C, the same k order as the tiled
// kernel, same epilogue.
AOTC_GRID(cdiv(N, 16), cdiv(M, 16))
AOTC_BLOCK(16, 16)
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A,
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

// Split-K (AOTC_ALTERNATIVE of sgemm): for deep, thin products (512 x 512 x
// 8192) the tiled kernel has too few tiles of C to fill the GPU, and each
// walks all of K alone. sgemm_splitk cuts K into SPLIT slices: one launch
// computes each slice's partial product of every TILE x TILE tile of C
// (SPLIT times the blocks) into scratch, a second sums the slices into C
// with alpha and beta. A tuned host launcher: host code (two launches,
// scratch from cudaMallocAsync on the stream), so, like the cuBLAS routine,
// NVRTC does not see it and nvcc builds it; CUDA only.
#if !defined(__CUDACC_RTC__) && !defined(__HIP_PLATFORM_AMD__)
namespace sgemm_detail {

// W[z] = A[:, z-th K slice] * B[z-th K slice, :]; TILE x TILE of it a block,
// 4 x 4 a thread, K in steps of 16 through shared memory.
template <int TILE>
__global__ void __launch_bounds__(TILE * TILE / 16)
splitk_partial(int M, int N, int K, int kchunk, const float *__restrict__ A, const float *__restrict__ B,
               float *__restrict__ W)
{
    constexpr int BK = 16, T = TILE / 4, THREADS = T * T;
    __shared__ float As[BK][TILE + 1];   // As[k][m], padded against bank conflicts
    __shared__ float Bs[BK][TILE];       // Bs[k][n]
    const int tid = threadIdx.x, tr = tid / T, tc = tid % T;
    const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
    const int kbeg = blockIdx.z * kchunk, kend = min(K, kbeg + kchunk);
    float acc[4][4] = {};
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        for (int u = tid; u < TILE * BK; u += THREADS) {
            const int m = u / BK, k = u % BK;   // along K: coalesced rows of A
            As[k][m] = m0 + m < M && k0 + k < kend ? A[(size_t)(m0 + m) * K + k0 + k] : 0.0f;
            const int kk = u / TILE, n = u % TILE;
            Bs[kk][n] = k0 + kk < kend && n0 + n < N ? B[(size_t)(k0 + kk) * N + n0 + n] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a[i] = As[k][tr * 4 + i];
                b[i] = Bs[k][tc * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    float *w = W + (size_t)blockIdx.z * M * N;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int row = m0 + tr * 4 + i, col = n0 + tc * 4 + j;
            if (row < M && col < N) w[(size_t)row * N + col] = acc[i][j];
        }
}

// C = alpha * (W[0] + ... + W[split - 1]) + beta * C, the slices in order.
__global__ void splitk_reduce(int M, int N, int split, float alpha, const float *__restrict__ W, float beta,
                              float *__restrict__ C)
{
    const size_t total = (size_t)M * N;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int z = 0; z < split; ++z) s += W[z * total + i];
        float out = alpha * s;
        if (beta != 0.0f) out += beta * C[i];
        C[i] = out;
    }
}

} // namespace sgemm_detail

template <int SPLIT, int TILE>
AOTC_ALTERNATIVE(sgemm)
AOTC_TUNE(SPLIT, 2, 4, 8, 16)
AOTC_TUNE(TILE, 32, 64)
AOTC_VALID_IF(K >= 64 * SPLIT)
cudaError_t sgemm_splitk(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C,
                         cudaStream_t stream)
{
    using namespace sgemm_detail;
    float *w = nullptr;
    cudaError_t e = cudaMallocAsync(&w, sizeof(float) * SPLIT * (size_t)M * N, stream);
    if (e != cudaSuccess)
        return e;
    const int kchunk = (K + SPLIT - 1) / SPLIT;
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE, SPLIT);
    splitk_partial<TILE><<<grid, TILE * TILE / 16, 0, stream>>>(M, N, K, kchunk, A, B, w);
    const size_t total = (size_t)M * N, blocks = (total + 255) / 256;
    splitk_reduce<<<blocks < 4096 ? (unsigned)blocks : 4096u, 256, 0, stream>>>(M, N, SPLIT, alpha, w, beta, C);
    e = cudaGetLastError();
    const cudaError_t f = cudaFreeAsync(w, stream);
    return e != cudaSuccess ? e : f;
}
#endif
