// The tutorial kernel as a downstream user builds it: one translation unit
// that includes the emitted launcher (which includes sgemm_tutorial.cu by
// its file name), linked with the emitted C dispatch and cuBLAS. For each
// shape "M N K" on stdin it checks the aotc launcher and the tutorial's own
// fixed configuration (sgemm_2d<128, 128, 8, 8, 8>, what its main() runs)
// against cuBLAS, and times all three: CUDA events around each launch,
// median of 20 after 3 warm-ups, the L2 flushed before each.
//
//   RESULT M=.. N=.. K=.. variant="..." aot_ms=.. fixed_ms=.. cublas_ms=.. aot_err=.. fixed_err=..
//
// Last, the launch-limit case (docs/spec.md §8): M = 8388608, N = K = 64, where a
// variant with BM <= 64 needs grid.y > 65535: the launcher must either run a
// variant that fits (and be right) or return cudaErrorInvalidValue.
// Exit status: 0 when every check passed, 1 when one failed, 2 on CUDA errors.
#include "_aot_sgemm_2d_cuda_sm90.cu"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#define CK(call)                                                                           \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "driver: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
                    cudaGetErrorString(e_));                                               \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

static const float kAlpha = 1.0f, kBeta = 0.5f; // as the kernel was tuned (AOTC_VALUE)
static const double kTol = 1e-5;

__global__ void fill(float *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u ^ seed;
        x ^= x >> 15; x *= 2246822519u; x ^= x >> 13;
        p[i] = (float)(x & 0xffff) / 32768.0f - 1.0f;
    }
}

static double rel_err(const std::vector<float> &out, const std::vector<float> &ref)
{
    double d = 0, r = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        double e = (double)out[i] - ref[i];
        if (!std::isfinite(out[i]))
            return INFINITY;
        d += e * e;
        r += (double)ref[i] * ref[i];
    }
    return std::sqrt(d / (r > 0 ? r : 1));
}

struct Bench {
    cudaEvent_t a, b;
    float *flush;
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
        std::vector<float> t;
        for (int i = 0; i < 23; ++i) {
            CK(cudaMemsetAsync(flush, i, flush_bytes));
            CK(cudaEventRecord(a));
            launch();
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (i >= 3)
                t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        return (t[9] + t[10]) / 2;
    }
};

int main()
{
    Bench bench;
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "driver: cublasCreate failed\n");
        return 2;
    }
    int failed = 0;
    long M, N, K;
    while (scanf("%ld %ld %ld", &M, &N, &K) == 3) {
        float *A, *B, *C0, *C;
        CK(cudaMalloc(&A, M * K * 4));
        CK(cudaMalloc(&B, K * N * 4));
        CK(cudaMalloc(&C0, M * N * 4));
        CK(cudaMalloc(&C, M * N * 4));
        fill<<<1024, 256>>>(A, M * K, 1);
        fill<<<1024, 256>>>(B, K * N, 2);
        fill<<<1024, 256>>>(C0, M * N, 3);
        std::vector<float> ref(M * N), out(M * N);
        auto reset = [&] { CK(cudaMemcpy(C, C0, M * N * 4, cudaMemcpyDeviceToDevice)); };
        // Row-major C = A B is column-major C^T = B^T A^T.
        auto cublas = [&] {
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &kAlpha, B, (int)N,
                        A, (int)K, &kBeta, C, (int)N);
        };
        auto aot = [&] {
            return aot_sgemm_2d_cuda_sm90_launch((int)M, (int)N, (int)K, kAlpha, A, B, kBeta, C, 0);
        };
        auto fixed = [&] {
            sgemm_2d<128, 128, 8, 8, 8><<<dim3(CEIL_DIV(N, 128), CEIL_DIV(M, 128)), NUM_THREADS>>>(
                (int)M, (int)N, (int)K, kAlpha, A, B, kBeta, C);
        };
        reset();
        cublas();
        CK(cudaMemcpy(ref.data(), C, M * N * 4, cudaMemcpyDeviceToHost));
        reset();
        CK(aot());
        CK(cudaMemcpy(out.data(), C, M * N * 4, cudaMemcpyDeviceToHost));
        double aot_err = rel_err(out, ref);
        reset();
        fixed();
        CK(cudaGetLastError());
        CK(cudaMemcpy(out.data(), C, M * N * 4, cudaMemcpyDeviceToHost));
        double fixed_err = rel_err(out, ref);
        double aot_ms = bench.median_ms([&] { aot(); });
        double fixed_ms = bench.median_ms(fixed);
        double cublas_ms = bench.median_ms(cublas);
        int v = aot_sgemm_2d_cuda_sm90_select(M, N, K);
        bool ok = aot_err <= kTol && fixed_err <= kTol;
        failed += !ok;
        printf("RESULT M=%ld N=%ld K=%ld variant=\"%s\" aot_ms=%.5f fixed_ms=%.5f cublas_ms=%.5f "
               "aot_err=%.2e fixed_err=%.2e %s\n",
               M, N, K, v >= 0 ? aot_sgemm_2d_cuda_sm90_variant_name(v) : "none", aot_ms,
               fixed_ms, cublas_ms, aot_err, fixed_err, ok ? "PASS" : "FAIL");
        fflush(stdout);
        CK(cudaFree(A));
        CK(cudaFree(B));
        CK(cudaFree(C0));
        CK(cudaFree(C));
    }

    // The launch limit: grid.y = cdiv(M, BM) exceeds 65535 for BM <= 64.
    {
        const long M = 8388608, N = 64, K = 64;
        float *A, *B, *C;
        CK(cudaMalloc(&A, M * K * 4));
        CK(cudaMalloc(&B, K * N * 4));
        CK(cudaMalloc(&C, M * N * 4));
        fill<<<1024, 256>>>(A, M * K, 4);
        fill<<<1024, 256>>>(B, K * N, 5);
        CK(cudaMemset(C, 0, M * N * 4));
        int v = aot_sgemm_2d_cuda_sm90_select(M, N, K);
        cudaError_t e = aot_sgemm_2d_cuda_sm90_launch((int)M, (int)N, (int)K, kAlpha, A, B, 0.0f,
                                                      C, 0);
        cudaError_t sync = cudaDeviceSynchronize();
        bool ok;
        if (e == cudaSuccess && sync == cudaSuccess) {
            std::vector<float> out(M * N), ref(M * N);
            CK(cudaMemcpy(out.data(), C, M * N * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemset(C, 0, M * N * 4));
            const float zero = 0.0f;
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &kAlpha, B, (int)N, A,
                        (int)K, &zero, C, (int)N);
            CK(cudaMemcpy(ref.data(), C, M * N * 4, cudaMemcpyDeviceToHost));
            double err = rel_err(out, ref);
            ok = err <= kTol;
            printf("LIMIT M=%ld N=%ld K=%ld variant=\"%s\" launched, err=%.2e %s\n", M, N, K,
                   v >= 0 ? aot_sgemm_2d_cuda_sm90_variant_name(v) : "none", err,
                   ok ? "PASS" : "FAIL");
        } else {
            ok = v < 0 && e == cudaErrorInvalidValue && sync == cudaSuccess;
            printf("LIMIT M=%ld N=%ld K=%ld select=%d launch=%s sync=%s %s\n", M, N, K, v,
                   cudaGetErrorName(e), cudaGetErrorName(sync), ok ? "PASS" : "FAIL");
        }
        failed += !ok;
    }
    cublasDestroy(h);
    return failed ? 1 : 0;
}
