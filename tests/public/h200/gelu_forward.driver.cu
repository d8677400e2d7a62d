// run-on-h200.sh's driver for tests/public/gelu_forward.cu (driver.h says
// what it checks, times and prints). Shapes on stdin: "N" per line.
// Fixed configurations: the file's own host launcher gelu_forward2() at each
// block size its main() runs, {32, 64, 128, 256, 512, 1024}. Reference:
// gelu_forward_kernel1 (its AOTC_REFERENCE). Tolerance: aotc's default for
// float, 1e-5.
#include "_aot_gelu_forward_kernel2_cuda_sm90.cu"

#include "driver.h"

int main()
{
    Bench bench;
    Checker check;
    const double tol = 1e-5;
    const int block_sizes[] = {32, 64, 128, 256, 512, 1024};
    int failed = 0;
    long N;
    while (scanf("%ld", &N) == 1) {
        floatX *inp, *out, *ref;
        CK(cudaMalloc(&inp, N * sizeof(floatX)));
        CK(cudaMalloc(&out, N * sizeof(floatX)));
        CK(cudaMalloc(&ref, N * sizeof(floatX)));
        fill(inp, N, 1);
        poison(ref, N);
        gelu_forward_kernel1<<<ceil_div_l(N, 128), 128>>>(ref, inp, (int)N);
        CK(cudaGetLastError());

        auto aot = [&] { return aot_gelu_forward_kernel2_cuda_sm90_launch(out, inp, (int)N, 0); };
        poison(out, N);
        cudaError_t launched = aot();
        double aot_err = launched == cudaSuccess ? check.rel_err(out, ref, N) : INFINITY;
        double aot_ms = launched == cudaSuccess ? bench.median_ms(aot) : NAN;

        Fixed fixed;
        for (int bs : block_sizes) {
            auto run = [&] { gelu_forward2(out, inp, (int)N, bs); };
            poison(out, N);
            run();
            double err = check.rel_err(out, ref, N);
            char label[16];
            snprintf(label, sizeof label, "bs%d", bs);
            fixed.add(label, bench.median_ms(run), err);
        }
        int v = aot_gelu_forward_kernel2_cuda_sm90_select(N);
        char shape[64];
        snprintf(shape, sizeof shape, "N=%ld", N);
        failed += !result("gelu_forward_kernel2", shape,
                          v >= 0 ? aot_gelu_forward_kernel2_cuda_sm90_variant_name(v) : "none",
                          launched, aot_ms, fixed, aot_err, tol);
        CK(cudaFree(inp));
        CK(cudaFree(out));
        CK(cudaFree(ref));
    }
    return failed ? 1 : 0;
}
