// run-on-h200.sh's driver for tests/frontend/llmc_block_size.cu, an
// llm.c-style row max (driver.h says what it checks, times and prints).
// Shapes on stdin: "B T C" per line. Fixed configurations: the file keeps
// the kernel and its reference, not a main(); llm.c's dev/cuda files launch
// such a kernel as kernel<<<N, block_size, block_size * sizeof(float)>>>(...,
// block_size) for each block size of their main(), {32, 64, 128, 256, 512,
// 1024}, and so does this. Reference: rowmax_ref (its AOTC_REFERENCE).
// Tolerance: aotc's default for float, 1e-5 (a maximum is exact).
#include "_aot_rowmax_kernel_cuda_sm90.cu"

#include "driver.h"

int main()
{
    Bench bench;
    Checker check;
    const double tol = 1e-5;
    const int block_sizes[] = {32, 64, 128, 256, 512, 1024};
    int failed = 0;
    long B, T, C;
    while (scanf("%ld %ld %ld", &B, &T, &C) == 3) {
        const long N = B * T;
        float *inp, *out, *ref;
        CK(cudaMalloc(&inp, N * C * sizeof(float)));
        CK(cudaMalloc(&out, N * sizeof(float)));
        CK(cudaMalloc(&ref, N * sizeof(float)));
        fill(inp, N * C, 1);
        poison(ref, N);
        rowmax_ref<<<ceil_div_l(N, 128), 128>>>(ref, inp, (int)N, (int)C, 0);
        CK(cudaGetLastError());

        auto aot = [&] {
            return aot_rowmax_kernel_cuda_sm90_launch(out, inp, (int)N, (int)C, B, T, 0);
        };
        poison(out, N);
        cudaError_t launched = aot();
        double aot_err = launched == cudaSuccess ? check.rel_err(out, ref, N) : INFINITY;
        double aot_ms = launched == cudaSuccess ? bench.median_ms(aot) : NAN;

        Fixed fixed;
        for (int bs : block_sizes) {
            auto run = [&] {
                rowmax_kernel<<<N, bs, bs * sizeof(float)>>>(out, inp, (int)N, (int)C, bs);
            };
            poison(out, N);
            run();
            CK(cudaGetLastError());
            double err = check.rel_err(out, ref, N);
            char label[16];
            snprintf(label, sizeof label, "bs%d", bs);
            fixed.add(label, bench.median_ms(run), err);
        }
        int v = aot_rowmax_kernel_cuda_sm90_select(C, B, T);
        char shape[96];
        snprintf(shape, sizeof shape, "B=%ld T=%ld C=%ld", B, T, C);
        failed += !result("rowmax_kernel", shape,
                          v >= 0 ? aot_rowmax_kernel_cuda_sm90_variant_name(v) : "none", launched,
                          aot_ms, fixed, aot_err, tol);
        CK(cudaFree(inp));
        CK(cudaFree(out));
        CK(cudaFree(ref));
    }
    return failed ? 1 : 0;
}
