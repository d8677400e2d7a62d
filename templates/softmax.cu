// Row softmax: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)), row-major
// rows x cols.  Memory-bound, so the aim is two streaming passes over x (the
// second mostly from L2) and one over y.
//
// Scheme.  A block of BLOCK threads handles ROWS consecutive rows with
// TPR = BLOCK / ROWS threads per row (a power of two).  Pass 1 is an "online"
// softmax: each thread keeps a running (max m, sum s of exp(x - m)) over
// VEC-wide vector loads, rescaling s when m grows, so max and sum need one
// read of x instead of two.  The per-thread pairs are merged with warp shuffles
// (xor butterflies stay inside aligned groups of TPR lanes when TPR < 32) and,
// when a row spans several warps, through shared memory: one pair per warp,
// then a second shuffle round.  Pass 2 writes exp(x - m) / s.
//
// All threads reach every shuffle and barrier (rows past the end just do no
// loads), so full masks and __syncthreads are safe.  Vector loads need
// cols % VEC == 0 (row starts stay VEC-aligned) and VEC-aligned x, y.
#include <aotc.h>

// -FLT_MAX, spelled out so that no header is needed (NVRTC has none).  Used
// instead of -inf as the identity of the max, so exp(m_old - m_new) is never
// exp(-inf - -inf) = NaN.
#define SOFTMAX_NEG_MAX (-3.402823466e+38f)

namespace softmax_detail {

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
__device__ __forceinline__ void store_vec(float *__restrict__ p, const float (&r)[VEC])
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

// Merge two (max, sum) pairs.
__device__ __forceinline__ void combine(float &m, float &s, float m2, float s2)
{
    const float mn = fmaxf(m, m2);
    s = s * __expf(m - mn) + s2 * __expf(m2 - mn);
    m = mn;
}

// v from the lane whose index differs from this one's by the bits in off.
// AMD GPUs (hipcc) run 64-lane wavefronts and HIP's shuffle takes no mask
// (HIP 6.2's _sync forms want a 64-bit one, HIP 5 has none); an offset below
// 32 never leaves an aligned group of 32 lanes, so the 32-lane "warps" of
// this file work as written there too.
__device__ __forceinline__ float shfl_xor(float v, int off)
{
#if defined(__HIP_PLATFORM_AMD__)
    return __shfl_xor(v, off);
#else
    return __shfl_xor_sync(0xffffffffu, v, off);
#endif
}

// Butterfly over lanes that differ in bits below WIDTH (a power of two <= 32):
// afterwards every lane of each aligned WIDTH-group holds the group's pair.
template <int WIDTH>
__device__ __forceinline__ void warp_combine(float &m, float &s)
{
#pragma unroll
    for (int off = WIDTH / 2; off > 0; off /= 2) {
        const float m2 = shfl_xor(m, off);
        const float s2 = shfl_xor(s, off);
        combine(m, s, m2, s2);
    }
}

} // namespace softmax_detail

template <int BLOCK, int VEC, int ROWS>
AOTC_TUNE(BLOCK, 64, 128, 256, 512, 1024)
AOTC_TUNE(VEC, 1, 2, 4)
AOTC_TUNE(ROWS, 1, 2, 4, 8, 16, 32)
AOTC_REQUIRE(BLOCK % 32 == 0 && BLOCK % ROWS == 0)
AOTC_REQUIRE(BLOCK / ROWS >= 8 && ((BLOCK / ROWS) & (BLOCK / ROWS - 1)) == 0)
AOTC_VALID_IF(cols % VEC == 0)
AOTC_GRID(cdiv(rows, ROWS))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, rows * cols, in)
AOTC_BUFFER(y, rows * cols, out)
AOTC_SHAPES(rows = geom(700, 80000, 5), cols = geom(96, 17400, 9))
AOTC_TOLERANCE(1e-5)
AOTC_REFERENCE(softmax_naive)
// The least traffic a softmax needs: x read once, y written once (floats).
AOTC_METRIC(B, 2 * 4 * rows * cols)
__global__ void __launch_bounds__(BLOCK)
softmax(int rows, int cols, const float *__restrict__ x, float *__restrict__ y)
{
    using namespace softmax_detail;
    constexpr int TPR = BLOCK / ROWS;          // threads per row
    static_assert(BLOCK % 32 == 0 && BLOCK % ROWS == 0 && (TPR & (TPR - 1)) == 0,
                  "BLOCK / ROWS must be a power of two and BLOCK whole warps");

    const int g = threadIdx.x / TPR;           // row within the block
    const int lane = threadIdx.x % TPR;        // thread within the row
    const int row = blockIdx.x * ROWS + g;
    const int nvec = row < rows ? cols / VEC : 0;
    const float *__restrict__ xr = x + (size_t)row * cols;
    float *__restrict__ yr = y + (size_t)row * cols;

    // Pass 1: running (max, sum) per thread, strided by TPR vectors so that
    // consecutive threads read consecutive vectors (coalesced).
    float m = SOFTMAX_NEG_MAX, s = 0.0f;
    for (int i = lane; i < nvec; i += TPR) {
        float v[VEC];
        load_vec<VEC>(v, xr + i * VEC);
        float vm = v[0];
#pragma unroll
        for (int k = 1; k < VEC; ++k) vm = fmaxf(vm, v[k]);
        const float mn = fmaxf(m, vm);
        float e = 0.0f;
#pragma unroll
        for (int k = 0; k < VEC; ++k) e += __expf(v[k] - mn);
        s = s * __expf(m - mn) + e;
        m = mn;
    }

    warp_combine<(TPR < 32 ? TPR : 32)>(m, s);
    if constexpr (TPR > 32) {
        // A row spans TPR / 32 warps: one pair per warp through shared memory,
        // then every warp of the row merges its row's pairs (padded with the
        // identity to a full warp, so all lanes end with the result).
        constexpr int RW = TPR / 32;           // warps per row
        __shared__ float sm[BLOCK / 32], ss[BLOCK / 32];
        const int warp = threadIdx.x / 32, wl = threadIdx.x % 32;
        if (wl == 0) { sm[warp] = m; ss[warp] = s; }
        __syncthreads();
        m = wl < RW ? sm[g * RW + wl] : SOFTMAX_NEG_MAX;
        s = wl < RW ? ss[g * RW + wl] : 0.0f;
        warp_combine<32>(m, s);
    }

    // Pass 2 (s >= 1 for every real row: the max element contributes exp(0)).
    const float inv = 1.0f / s;
    for (int i = lane; i < nvec; i += TPR) {
        float v[VEC];
        load_vec<VEC>(v, xr + i * VEC);
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[k] = __expf(v[k] - m) * inv;
        store_vec<VEC>(yr + i * VEC, v);
    }
}

// Reference: one thread per row, three plain passes, the sum in double.
AOTC_GRID(cdiv(rows, 128))
AOTC_BLOCK(128)
__global__ void softmax_naive(int rows, int cols, const float *x, float *y)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float *xr = x + (size_t)row * cols;
    float *yr = y + (size_t)row * cols;
    float m = xr[0];
    for (int c = 1; c < cols; ++c) m = fmaxf(m, xr[c]);
    double s = 0.0;
    for (int c = 0; c < cols; ++c) s += (double)expf(xr[c] - m);
    const float inv = (float)(1.0 / s);
    for (int c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) * inv;
}
