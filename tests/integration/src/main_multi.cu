// A downstream program using aotc's linked sgemm dispatch (sm80 and sm90): it
// prints which architecture a device of each compute capability gets and
// checks the linked select() against that architecture's own; where there is
// a CUDA device it runs the linked launcher once.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "aot_sgemm.h"
#include "_aot_sgemm_cuda_sm80.h"
#include "_aot_sgemm_cuda_sm90.h"

int main()
{
    static const struct { int cc; const char *arch; } want[] = {
        {75, "sm80"}, {80, "sm80"}, {86, "sm80"}, {90, "sm90"}, {100, "sm90"}};
    int bad = 0;
    for (const auto &w : want) {
        const char *arch = aot_sgemm_cuda_arch_name(w.cc);
        int v = aot_sgemm_cuda_select(w.cc, 1024, 1024, 1024);
        int own = std::strcmp(arch, "sm80") ? aot_sgemm_cuda_sm90_select(1024, 1024, 1024)
                                            : aot_sgemm_cuda_sm80_select(1024, 1024, 1024);
        const char *name = v >= 0 ? aot_sgemm_cuda_variant_name(w.cc, v) : nullptr;
        std::printf("cc %d: %s, M=N=K=1024: variant %d %s\n", w.cc, arch, v, name ? name : "(none)");
        bad |= std::strcmp(arch, w.arch) != 0 || v != own || name == nullptr;
    }

    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("no CUDA device: the launcher was not run\n");
        return bad;
    }
    const int M = 128, N = 128, K = 256;
    float *dA, *dB, *dC;
    cudaMalloc(&dA, M * K * sizeof(float));
    cudaMalloc(&dB, K * N * sizeof(float));
    cudaMalloc(&dC, M * N * sizeof(float));
    cudaMemset(dA, 0, M * K * sizeof(float));
    cudaMemset(dB, 0, K * N * sizeof(float));
    cudaError_t e = aot_sgemm_cuda_launch(M, N, K, 1.0f, dA, dB, 0.0f, dC, 0);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    std::printf("linked launcher: %s\n", cudaGetErrorString(e));
    return bad || e != cudaSuccess;
}
