// A downstream program using aotc's emitted sgemm for sm90: it prints the
// variant the dispatch picks for a few shapes (no GPU needed) and, where there
// is a CUDA device, runs the launcher once and checks C against the CPU.
// Exit status: 0 when every check passed (a missing device is no failure).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "_aot_sgemm_cuda_sm90.h"

int main()
{
    static const int shapes[][3] = {{128, 128, 256}, {1024, 1024, 1024}, {4096, 4096, 4096}};
    int bad = 0;
    for (const auto &s : shapes) {
        int v = aot_sgemm_cuda_sm90_select(s[0], s[1], s[2]);
        const char *name = v >= 0 ? aot_sgemm_cuda_sm90_variant_name(v) : nullptr;
        std::printf("M=%d N=%d K=%d: variant %d %s\n", s[0], s[1], s[2], v, name ? name : "(none)");
        bad |= name == nullptr;
    }

    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("no CUDA device: the launcher was not run\n");
        return bad;
    }
    const int M = 256, N = 192, K = 320;
    std::vector<float> A(M * K), B(K * N), C(M * N, 1.0f), ref(M * N);
    for (int i = 0; i < M * K; i++) A[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; i++) B[i] = (float)(i % 5) - 2.0f;
    const float alpha = 1.0f, beta = 0.5f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += A[i * K + k] * B[k * N + j];
            ref[i * N + j] = alpha * acc + beta * C[i * N + j];
        }
    float *dA, *dB, *dC;
    cudaMalloc(&dA, A.size() * sizeof(float));
    cudaMalloc(&dB, B.size() * sizeof(float));
    cudaMalloc(&dC, C.size() * sizeof(float));
    cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dC, C.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaError_t e = aot_sgemm_cuda_sm90_launch(M, N, K, alpha, dA, dB, beta, dC, 0);
    if (e == cudaSuccess)
        e = cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        std::printf("launch failed: %s\n", cudaGetErrorString(e));
        return 1;
    }
    double worst = 0.0;
    for (int i = 0; i < M * N; i++) worst = std::fmax(worst, std::fabs(C[i] - ref[i]));
    std::printf("launched M=%d N=%d K=%d: largest difference from the CPU %g\n", M, N, K, worst);
    return bad || worst > 1e-3;
}
