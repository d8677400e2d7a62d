// What the five drivers of run-on-h200.sh share. Each driver is one
// translation unit that includes the emitted launcher (which includes the
// kernel file, its main() renamed), so it can call the file's own kernels
// and host launch code beside aotc's launcher. For each shape on stdin it
// runs the file's reference kernel (its AOTC_REFERENCE, at that kernel's
// AOTC_GRID and AOTC_BLOCK), checks the launcher and every fixed
// configuration against it, times them all and prints one line:
//
//   RESULT kernel=K <shape> variant="..." aot_ms=.. fixed_<label>_ms=.. ... aot_err=.. fixed_err=.. ok=1 fixed_ok=1
//
// ok: the launcher returned cudaSuccess and its outputs are within the
// kernel's tolerance (its AOTC_TOLERANCE, else aotc's default) of the
// reference's, as the normwise relative error aotc's tuner checks
// (||out - ref|| / ||ref||, a NaN or Inf where the reference is finite
// failing); fixed_ok: the same for every fixed configuration (fixed_err is
// the largest). Outputs are poisoned (NaN bytes) before every checked
// launch, so an element left unwritten fails.
//
// Timing: CUDA events around each launch, the L2 flushed before each
// (writing a buffer of twice its size, as aotc's tuner does), after 2
// untimed warm-up launches; 20 timed launches, or fewer (at least 5) once
// they add up to 100 ms; the median.
//
// Exit status: 0 when every check passed, 1 when one failed, 2 on a CUDA
// error (the line names the call).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CK(call)                                                                           \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "driver: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
                    cudaGetErrorString(e_));                                               \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

static inline __device__ float drv_to_float_d(float x) { return x; }
static inline __device__ float drv_to_float_d(__nv_bfloat16 x) { return __bfloat162float(x); }
static inline __device__ void drv_store(float *p, float x) { *p = x; }
static inline __device__ void drv_store(__nv_bfloat16 *p, float x) { *p = __float2bfloat16(x); }

// Uniform values in [-1, 1), a hash of the index and seed (as aotc fills
// inputs: uniform in [-1, 1]).
template <class T> __global__ void drv_fill(T *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) * 40503u ^ seed;
        x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
        drv_store(p + i, (float)(x & 0xffffff) / 8388608.0f - 1.0f);
    }
}

template <class T> static void fill(T *p, size_t n, uint32_t seed)
{
    drv_fill<<<1024, 256>>>(p, n, seed);
    CK(cudaGetLastError());
}

static inline long ceil_div_l(long a, long b) { return (a + b - 1) / b; }

// NaN bytes, as aotc poisons outputs (0xff.. is a NaN in float and bf16).
template <class T> static void poison(T *p, size_t n) { CK(cudaMemset(p, 0xff, n * sizeof(T))); }

// acc[0] += sum (out - ref)^2, acc[1] += sum ref^2 over the finite
// outputs; *bad counts outputs that are NaN or Inf where ref is finite.
template <class T>
__global__ void drv_diff(const T *out, const T *ref, size_t n, double *acc,
                         unsigned long long *bad)
{
    double d = 0, r = 0;
    unsigned long long b = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double o = drv_to_float_d(out[i]), f = drv_to_float_d(ref[i]);
        if (!isfinite(o)) {
            b += isfinite(f);
            continue;
        }
        d += (o - f) * (o - f);
        r += f * f;
    }
    for (int s = 16; s > 0; s /= 2) {
        d += __shfl_down_sync(0xffffffffu, d, s);
        r += __shfl_down_sync(0xffffffffu, r, s);
        b += __shfl_down_sync(0xffffffffu, b, s);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&acc[0], d);
        atomicAdd(&acc[1], r);
        atomicAdd(bad, b);
    }
}

struct Checker {
    double *acc;
    unsigned long long *bad;
    Checker()
    {
        CK(cudaMalloc(&acc, 2 * sizeof(double)));
        CK(cudaMalloc(&bad, sizeof(unsigned long long)));
    }
    // The normwise relative error of out against ref; INFINITY when an
    // output is NaN or Inf where the reference is finite.
    template <class T> double rel_err(const T *out, const T *ref, size_t n)
    {
        CK(cudaMemset(acc, 0, 2 * sizeof(double)));
        CK(cudaMemset(bad, 0, sizeof(unsigned long long)));
        drv_diff<<<1024, 256>>>(out, ref, n, acc, bad);
        CK(cudaGetLastError());
        double h[2];
        unsigned long long b;
        CK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&b, bad, sizeof b, cudaMemcpyDeviceToHost));
        if (b)
            return INFINITY;
        return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
    }
};

struct Bench {
    cudaEvent_t a, b;
    char *flush;
    size_t flush_bytes;
    Bench()
    {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        int l2 = 0;
        CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
        flush_bytes = 2 * (size_t)l2;
        CK(cudaMalloc(&flush, flush_bytes));
    }
    template <class F> double median_ms(F launch)
    {
        for (int i = 0; i < 2; ++i)
            launch();
        CK(cudaGetLastError());
        std::vector<float> t;
        double sum = 0;
        while (t.size() < 20 && (t.size() < 5 || sum < 100.0)) {
            CK(cudaMemsetAsync(flush, (int)t.size(), flush_bytes));
            CK(cudaEventRecord(a));
            launch();
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            t.push_back(ms);
            sum += ms;
        }
        CK(cudaGetLastError());
        std::sort(t.begin(), t.end());
        size_t n = t.size();
        return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    }
};

// The fixed configurations' results, for the RESULT line.
struct Fixed {
    std::string fields;
    double worst_err = 0;
    void add(const char *label, double ms, double err)
    {
        char buf[96];
        snprintf(buf, sizeof buf, " fixed_%s_ms=%.5f", label, ms);
        fields += buf;
        if (!std::isnan(worst_err) && !(err <= worst_err)) // a NaN stays the worst
            worst_err = err;
    }
};

// One RESULT line; returns whether both checks passed.
static bool result(const char *kernel, const char *shape, const char *variant, cudaError_t launched,
                   double aot_ms, const Fixed &fixed, double aot_err, double tol)
{
    bool ok = launched == cudaSuccess && aot_err <= tol;
    bool fixed_ok = fixed.worst_err <= tol;
    printf("RESULT kernel=%s %s variant=\"%s\" aot_ms=%.5f%s aot_err=%.2e fixed_err=%.2e "
           "launch=%s ok=%d fixed_ok=%d\n",
           kernel, shape, variant, aot_ms, fixed.fields.c_str(), aot_err, fixed.worst_err,
           cudaGetErrorName(launched), ok, fixed_ok);
    fflush(stdout);
    return ok && fixed_ok;
}
