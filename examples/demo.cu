// demo.cu: a program that uses kernels tuned by aotc, the way a user would.
//
// It includes only the emitted headers and links the emitted dispatch (.c) and
// launchers (.cu); the tuned kernels themselves are never named here.  For
// each shape it
//   - asks the dispatch which variant it picks (select + variant_name),
//   - checks the launcher's output against a reference written in this file
//     (normwise relative error ||out - ref|| / ||ref||, the measure aotc uses),
//   - times the launcher with CUDA events (median of 20 after warm-up, the L2
//     flushed before each run), the way aotc timed every variant.
// Then it measures the host-side cost of the launcher against a bare <<<>>>
// launch with the same grid and block, and the cost of select() alone.
//
// Output: human-readable headers and one machine-readable line per result,
//   RESULT kernel=sgemm M=.. N=.. K=.. v=.. variant="sgemm<...>" ms=.. err=.. ok=1 PASS
//   RESULT kernel=softmax rows=.. cols=.. v=.. variant="softmax<...>" ms=.. err=.. ok=1 PASS
//   OVERHEAD ... / SELECT ...
// which compare.py turns into a table against the held-out database.
//
// Exit status: 0 if every check passed, 1 if a check failed, 2 if CUDA failed
// (no device, an API error).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "_aot_sgemm_cuda_sm90.h"
#include "_aot_softmax_cuda_sm90.h"

#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "demo: %s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, \
                         #call, cudaGetErrorName(e_), cudaGetErrorString(e_));            \
            std::exit(2);                                                                 \
        }                                                                                 \
    } while (0)

// The values the sgemm template was tuned and checked with (its AOTC_VALUE).
static const float kAlpha = 1.0f, kBeta = 0.5f;
// aotc's default float tolerance; softmax.cu states the same (AOTC_TOLERANCE).
static const double kTol = 1e-5;
static const int kReps = 20, kWarmup = 3;

// ---------------------------------------------------------------- device helpers

__device__ __forceinline__ uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// p[i] uniform in [lo, hi), a fixed function of (seed, i).
__global__ void fill_uniform(float *p, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = splitmix64(seed * 0x100000001b3ull + i);
        const float u = (float)(r >> 40) * (1.0f / 16777216.0f);   // [0, 1)
        p[i] = lo + (hi - lo) * u;
    }
}

// acc[0] += sum (out - ref)^2, acc[1] += sum ref^2, in double.  A NaN or
// infinity in out makes acc[0] non-finite, so the check fails.
__global__ void diff_norms(const float *out, const float *ref, size_t n, double *acc)
{
    double d2 = 0.0, r2 = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const double o = out[i], r = ref[i];
        d2 += (o - r) * (o - r);
        r2 += r * r;
    }
    for (int off = 16; off > 0; off /= 2) {
        d2 += __shfl_xor_sync(0xffffffffu, d2, off);
        r2 += __shfl_xor_sync(0xffffffffu, r2, off);
    }
    __shared__ double sd[32], sr[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { sd[warp] = d2; sr[warp] = r2; }
    __syncthreads();
    if (threadIdx.x == 0) {
        double a = 0.0, b = 0.0;
        for (int w = 0; w < (int)(blockDim.x / 32); ++w) { a += sd[w]; b += sr[w]; }
        atomicAdd(&acc[0], a);
        atomicAdd(&acc[1], b);
    }
}

// Reference SGEMM: one thread per element of C, float accumulation in k order
// (the order the tiled kernel uses), C = alpha * A * B + beta * C.
__global__ void ref_sgemm(int M, int N, int K, float alpha, const float *A, const float *B,
                          float beta, float *C)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = alpha * acc + beta * C[(size_t)row * N + col];
}

// Reference softmax: one block of 256 threads per row, max and sum reduced in
// shared memory, the sum in double, expf (not __expf).
__global__ void ref_softmax(int rows, int cols, const float *x, float *y)
{
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float *xr = x + (size_t)row * cols;
    float *yr = y + (size_t)row * cols;
    __shared__ float smax[256];
    __shared__ double ssum[256];
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    smax[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + s]);
        __syncthreads();
    }
    m = smax[0];
    double sum = 0.0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += (double)expf(xr[c] - m);
    ssum[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) ssum[threadIdx.x] += ssum[threadIdx.x + s];
        __syncthreads();
    }
    const float inv = (float)(1.0 / ssum[0]);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
}

// A kernel with the softmax signature, for the bare-launch comparison (its
// body does not matter to the host-side cost of a launch).
__global__ void bare_kernel(int rows, int cols, const float *x, float *y)
{
    const size_t n = (size_t)rows * cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = x[i];
}

// ---------------------------------------------------------------- host helpers

struct Ctx {
    cudaStream_t stream;
    void *flush;          // 2x the L2 size, cleared before each timed run
    size_t flush_bytes;
    double *acc;          // device, 2 doubles, for diff_norms
    cudaEvent_t ev[2 * kReps];
    int sms;
};

static void fill(Ctx &c, float *p, size_t n, uint64_t seed, float lo, float hi)
{
    if (n == 0) return;
    fill_uniform<<<c.sms * 8, 256, 0, c.stream>>>(p, n, seed, lo, hi);
    CK(cudaGetLastError());
}

// ||out - ref|| / ||ref|| (plain ||out - ref|| if ref is all zero); NaN stays NaN.
static double rel_error(Ctx &c, const float *out, const float *ref, size_t n)
{
    double h[2];
    CK(cudaMemsetAsync(c.acc, 0, 2 * sizeof(double), c.stream));
    diff_norms<<<c.sms * 4, 256, 0, c.stream>>>(out, ref, n, c.acc);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(h, c.acc, sizeof h, cudaMemcpyDeviceToHost, c.stream));
    CK(cudaStreamSynchronize(c.stream));
    return h[1] > 0.0 ? std::sqrt(h[0]) / std::sqrt(h[1]) : std::sqrt(h[0]);
}

// Median device time in ms of launch(), run kReps times after kWarmup, each run
// preceded by prepare() and an L2 flush (both outside the timed region).
// launch() returns a cudaError_t, which is checked on every run.
template <class Prepare, class Launch>
static double time_median_ms(Ctx &c, Prepare prepare, Launch launch, const char *what)
{
    for (int i = 0; i < kWarmup; ++i) {
        prepare();
        cudaError_t e = launch();
        if (e != cudaSuccess) {
            std::fprintf(stderr, "demo: %s: launch failed: %s\n", what, cudaGetErrorString(e));
            std::exit(2);
        }
    }
    for (int i = 0; i < kReps; ++i) {
        prepare();
        CK(cudaMemsetAsync(c.flush, i & 0xff, c.flush_bytes, c.stream));
        CK(cudaEventRecord(c.ev[2 * i], c.stream));
        cudaError_t e = launch();
        if (e != cudaSuccess) {
            std::fprintf(stderr, "demo: %s: launch failed: %s\n", what, cudaGetErrorString(e));
            std::exit(2);
        }
        CK(cudaEventRecord(c.ev[2 * i + 1], c.stream));
    }
    CK(cudaStreamSynchronize(c.stream));
    std::vector<float> t(kReps);
    for (int i = 0; i < kReps; ++i) CK(cudaEventElapsedTime(&t[i], c.ev[2 * i], c.ev[2 * i + 1]));
    std::sort(t.begin(), t.end());
    return 0.5 * ((double)t[kReps / 2 - 1] + (double)t[kReps / 2]);
}

static double now_ns()
{
    return (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// ---------------------------------------------------------------- the two kernels

struct GemmShape { int M, N, K; bool heldout; };
struct SoftmaxShape { int rows, cols; bool heldout; };

// Returns true if the check passed.
static bool run_sgemm(Ctx &c, const GemmShape &s, uint64_t seed)
{
    const int M = s.M, N = s.N, K = s.K;
    const int v = aot_sgemm_cuda_sm90_select(M, N, K);
    const char *name = v >= 0 ? aot_sgemm_cuda_sm90_variant_name(v) : "none";
    const size_t nA = (size_t)M * K, nB = (size_t)K * N, nC = (size_t)M * N;
    float *A, *B, *C0, *C, *R;
    CK(cudaMalloc(&A, std::max<size_t>(nA, 1) * sizeof(float)));
    CK(cudaMalloc(&B, std::max<size_t>(nB, 1) * sizeof(float)));
    CK(cudaMalloc(&C0, std::max<size_t>(nC, 1) * sizeof(float)));
    CK(cudaMalloc(&C, std::max<size_t>(nC, 1) * sizeof(float)));
    CK(cudaMalloc(&R, std::max<size_t>(nC, 1) * sizeof(float)));
    fill(c, A, nA, seed * 3 + 0, -1.0f, 1.0f);
    fill(c, B, nB, seed * 3 + 1, -1.0f, 1.0f);
    fill(c, C0, nC, seed * 3 + 2, -1.0f, 1.0f);   // beta != 0: C's contents matter

    // Reference.
    CK(cudaMemcpyAsync(R, C0, nC * sizeof(float), cudaMemcpyDeviceToDevice, c.stream));
    ref_sgemm<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, c.stream>>>(M, N, K, kAlpha, A, B,
                                                                                kBeta, R);
    CK(cudaGetLastError());

    // The launcher, checked.
    bool ok = false;
    double err = NAN, ms = NAN;
    CK(cudaMemcpyAsync(C, C0, nC * sizeof(float), cudaMemcpyDeviceToDevice, c.stream));
    cudaError_t e = aot_sgemm_cuda_sm90_launch(M, N, K, kAlpha, A, B, kBeta, C, c.stream);
    if (e != cudaSuccess) {
        std::printf("FAIL sgemm M=%d N=%d K=%d: aot_sgemm_cuda_sm90_launch returned %s (select %d)\n",
                    M, N, K, cudaGetErrorName(e), v);
    } else {
        CK(cudaStreamSynchronize(c.stream));
        err = rel_error(c, C, R, nC);
        ok = err <= kTol;
        ms = time_median_ms(
            c,
            [&] { CK(cudaMemcpyAsync(C, C0, nC * sizeof(float), cudaMemcpyDeviceToDevice, c.stream)); },
            [&] { return aot_sgemm_cuda_sm90_launch(M, N, K, kAlpha, A, B, kBeta, C, c.stream); },
            "sgemm");
    }
    std::printf("RESULT kernel=sgemm M=%d N=%d K=%d heldout=%d v=%d variant=\"%s\" ms=%.6f err=%.3e ok=%d %s\n",
                M, N, K, s.heldout ? 1 : 0, v, name, ms, err, ok ? 1 : 0, ok ? "PASS" : "FAIL");
    std::fflush(stdout);
    CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C0)); CK(cudaFree(C)); CK(cudaFree(R));
    return ok;
}

static bool run_softmax(Ctx &c, const SoftmaxShape &s, uint64_t seed)
{
    const int rows = s.rows, cols = s.cols;
    const int v = aot_softmax_cuda_sm90_select(rows, cols);
    const char *name = v >= 0 ? aot_softmax_cuda_sm90_variant_name(v) : "none";
    const size_t n = (size_t)rows * cols;
    float *x, *y, *r;
    CK(cudaMalloc(&x, std::max<size_t>(n, 1) * sizeof(float)));
    CK(cudaMalloc(&y, std::max<size_t>(n, 1) * sizeof(float)));
    CK(cudaMalloc(&r, std::max<size_t>(n, 1) * sizeof(float)));
    fill(c, x, n, seed, -8.0f, 8.0f);
    ref_softmax<<<rows, 256, 0, c.stream>>>(rows, cols, x, r);
    CK(cudaGetLastError());

    bool ok = false;
    double err = NAN, ms = NAN;
    CK(cudaMemsetAsync(y, 0xff, n * sizeof(float), c.stream));   // NaN: unwritten elements fail
    cudaError_t e = aot_softmax_cuda_sm90_launch(rows, cols, x, y, c.stream);
    if (e != cudaSuccess) {
        std::printf("FAIL softmax rows=%d cols=%d: aot_softmax_cuda_sm90_launch returned %s (select %d)\n",
                    rows, cols, cudaGetErrorName(e), v);
    } else {
        CK(cudaStreamSynchronize(c.stream));
        err = rel_error(c, y, r, n);
        ok = err <= kTol;
        ms = time_median_ms(
            c, [] {}, [&] { return aot_softmax_cuda_sm90_launch(rows, cols, x, y, c.stream); }, "softmax");
    }
    std::printf("RESULT kernel=softmax rows=%d cols=%d heldout=%d v=%d variant=\"%s\" ms=%.6f err=%.3e ok=%d %s\n",
                rows, cols, s.heldout ? 1 : 0, v, name, ms, err, ok ? 1 : 0, ok ? "PASS" : "FAIL");
    std::fflush(stdout);
    CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(r));
    return ok;
}

// ---------------------------------------------------------------- host-side costs

// Host cost per call of the launcher against a bare launch of a kernel with the
// same grid and block, on a tiny softmax.  Two figures for each:
//   enqueue: host time of the calls alone, in batches of 500 with a
//            synchronize (not timed) between batches, so the launch queue never
//            fills and the GPU's pace does not leak in;
//   stream:  10000 calls back to back plus one cudaStreamSynchronize, host
//            wall time (this one includes the GPU's pace if it is the slower).
// Both loops check every return code (the bare loop calls cudaGetLastError
// after each launch, as the launcher does).  Returns false on a failure.
static bool launch_overhead(Ctx &c)
{
    const int rows = 1, cols = 128, calls = 10000, batch = 500, rounds = 5;
    const int v = aot_softmax_cuda_sm90_select(rows, cols);
    uint32_t g[3], b[3], smem;
    if (v < 0 || aot_softmax_cuda_sm90_launch_dims(v, rows, cols, g, b, &smem) != 0) {
        std::printf("FAIL overhead: no variant for softmax rows=%d cols=%d (select %d)\n", rows, cols, v);
        return false;
    }
    const dim3 grid(g[0], g[1], g[2]), block(b[0], b[1], b[2]);
    float *x, *y;
    CK(cudaMalloc(&x, (size_t)rows * cols * sizeof(float)));
    CK(cudaMalloc(&y, (size_t)rows * cols * sizeof(float)));
    fill(c, x, (size_t)rows * cols, 7, -8.0f, 8.0f);
    auto launcher = [&] { return aot_softmax_cuda_sm90_launch(rows, cols, x, y, c.stream); };
    auto bare = [&] {
        bare_kernel<<<grid, block, smem, c.stream>>>(rows, cols, x, y);
        return cudaGetLastError();
    };
    // Warm-up: module loading, first-launch costs.
    for (int i = 0; i < 200; ++i) { CK(launcher()); CK(bare()); }
    CK(cudaStreamSynchronize(c.stream));

    auto enqueue_ns = [&](auto f) {
        double t = 0;
        for (int done = 0; done < calls; done += batch) {
            const double t0 = now_ns();
            for (int i = 0; i < batch; ++i) CK(f());
            t += now_ns() - t0;
            CK(cudaStreamSynchronize(c.stream));
        }
        return t / calls;
    };
    auto stream_ns = [&](auto f) {
        const double t0 = now_ns();
        for (int i = 0; i < calls; ++i) CK(f());
        CK(cudaStreamSynchronize(c.stream));
        return (now_ns() - t0) / calls;
    };
    std::vector<double> le, be, ls, bs;
    for (int r = 0; r < rounds; ++r) {   // interleaved, median of the rounds
        le.push_back(enqueue_ns(launcher));
        be.push_back(enqueue_ns(bare));
        ls.push_back(stream_ns(launcher));
        bs.push_back(stream_ns(bare));
    }
    auto med = [](std::vector<double> a) { std::sort(a.begin(), a.end()); return a[a.size() / 2]; };
    std::printf("\nHost-side cost per call, softmax rows=%d cols=%d -> %s, grid (%u,%u,%u) block (%u,%u,%u) smem %u\n",
                rows, cols, aot_softmax_cuda_sm90_variant_name(v), g[0], g[1], g[2], b[0], b[1], b[2], smem);
    std::printf("OVERHEAD mode=enqueue calls=%d launcher_ns=%.1f bare_ns=%.1f diff_ns=%.1f\n", calls,
                med(le), med(be), med(le) - med(be));
    std::printf("OVERHEAD mode=stream calls=%d launcher_ns=%.1f bare_ns=%.1f diff_ns=%.1f\n", calls,
                med(ls), med(bs), med(ls) - med(bs));
    CK(cudaFree(x)); CK(cudaFree(y));
    return true;
}

static volatile int g_sink;

// ns per select() call, 10^6 calls cycling through the given shapes.
static void select_cost(const std::vector<GemmShape> &gs, const std::vector<SoftmaxShape> &ss)
{
    const int calls = 1000000;
    int acc = 0;
    double t0 = now_ns();
    for (int i = 0; i < calls; ++i) {
        const GemmShape &s = gs[i % gs.size()];
        acc += aot_sgemm_cuda_sm90_select(s.M, s.N, s.K);
    }
    const double sg = (now_ns() - t0) / calls;
    t0 = now_ns();
    for (int i = 0; i < calls; ++i) {
        const SoftmaxShape &s = ss[i % ss.size()];
        acc += aot_softmax_cuda_sm90_select(s.rows, s.cols);
    }
    const double sm = (now_ns() - t0) / calls;
    g_sink = acc;
    std::printf("SELECT kernel=sgemm calls=%d ns=%.2f\n", calls, sg);
    std::printf("SELECT kernel=softmax calls=%d ns=%.2f\n", calls, sm);
}

// ---------------------------------------------------------------- main

int main()
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        std::fprintf(stderr,
                     "demo: no CUDA device available (cudaGetDeviceCount: %s, %s).\n"
                     "demo: this program runs the emitted sm_90 kernels and needs an NVIDIA GPU of compute "
                     "capability 9.0 (H100/H200).\n",
                     e == cudaSuccess ? "0 devices" : cudaGetErrorName(e),
                     e == cudaSuccess ? "none found" : cudaGetErrorString(e));
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) {
        std::fprintf(stderr, "demo: device 0 is %s (compute capability %d.%d); the variants were built and tuned for sm_90\n",
                     prop.name, prop.major, prop.minor);
        return 2;
    }
    CK(cudaSetDevice(0));
    int drv = 0, rtv = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rtv));

    Ctx c;
    CK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    c.sms = prop.multiProcessorCount;
    c.flush_bytes = 2 * (size_t)std::max(prop.l2CacheSize, 1 << 20);
    CK(cudaMalloc(&c.flush, c.flush_bytes));
    CK(cudaMalloc(&c.acc, 2 * sizeof(double)));
    for (auto &ev : c.ev) CK(cudaEventCreate(&ev));

    std::printf("demo: %s, %d SMs, L2 %d MiB, driver %d, runtime %d\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize >> 20, drv, rtv);
    std::printf("demo: sgemm dispatches %d variants, softmax %d; tolerance %.0e; times: median of %d CUDA-event runs "
                "after %d warm-up, L2 flushed (%zu MiB memset) before each\n",
                aot_sgemm_cuda_sm90_num_variants(), aot_softmax_cuda_sm90_num_variants(), kTol, kReps, kWarmup,
                c.flush_bytes >> 20);

    // Held-out shapes (templates/*.heldout.json: never seen in tuning; the
    // committed templates/eval/ databases timed every variant on them), then a
    // few edge shapes of our own.
    std::vector<GemmShape> gemm;
    const int gm[] = {384, 1536, 3072}, gn[] = {384, 1536, 3072}, gk[] = {512, 2048};
    for (int m : gm)
        for (int n : gn)
            for (int k : gk) gemm.push_back({m, n, k, true});
    gemm.push_back({1000, 1000, 1000, true});
    gemm.push_back({999, 777, 555, true});
    gemm.push_back({2000, 1000, 300, false});
    gemm.push_back({17, 33, 7, false});
    gemm.push_back({1, 1, 1, false});

    std::vector<SoftmaxShape> soft;
    const int sr[] = {2048, 8192, 32768}, sc[] = {192, 768, 999, 3072, 12288};
    for (int r : sr)
        for (int col : sc) soft.push_back({r, col, true});
    soft.push_back({3000, 1000, false});
    soft.push_back({65536, 100, false});
    soft.push_back({5, 7, false});
    soft.push_back({1, 1, false});

    int failed = 0;
    std::printf("\n== sgemm: C = %g * A * B + %g * C (row-major, A MxK, B KxN)\n", kAlpha, kBeta);
    for (size_t i = 0; i < gemm.size(); ++i) failed += !run_sgemm(c, gemm[i], 1000 + i);
    std::printf("\n== softmax: row softmax of a rows x cols matrix\n");
    for (size_t i = 0; i < soft.size(); ++i) failed += !run_softmax(c, soft[i], 2000 + i);

    failed += !launch_overhead(c);
    std::printf("\nselect() alone, 10^6 calls cycling through the shapes above\n");
    select_cost(gemm, soft);

    for (auto &ev : c.ev) CK(cudaEventDestroy(ev));
    CK(cudaFree(c.flush));
    CK(cudaFree(c.acc));
    CK(cudaStreamDestroy(c.stream));
    if (failed) {
        std::printf("\ndemo: %d check(s) FAILED\n", failed);
        return 1;
    }
    std::printf("\ndemo: all checks passed\n");
    return 0;
}
