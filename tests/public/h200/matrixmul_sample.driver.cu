// run-on-h200.sh's driver for tests/frontend/matrixmul_sample.cu, NVIDIA's
// matrixMul sample (driver.h says what it checks, times and prints). Shapes
// on stdin: "wA wB hA" per line (multiples of 32). Fixed configurations: the
// sample's launch, MatrixMulCUDA<block_size> on dim3 threads(block_size,
// block_size), grid(wB / block_size, hA / block_size), with its default
// block_size = 32 and its other branch, 16 (the annotated file keeps the
// kernel, not the sample's main()). Reference: MatrixMulNaive (its
// AOTC_REFERENCE). Tolerance: aotc's default for float, 1e-5.
#include "_aot_MatrixMulCUDA_cuda_sm90.cu"

#include "driver.h"

template <int BS> static void sample_launch(float *C, float *A, float *B, long wA, long wB, long hA)
{
    dim3 threads(BS, BS), grid(wB / threads.x, hA / threads.y);
    MatrixMulCUDA<BS><<<grid, threads>>>(C, A, B, (int)wA, (int)wB);
}

int main()
{
    Bench bench;
    Checker check;
    const double tol = 1e-5;
    int failed = 0;
    long wA, wB, hA;
    while (scanf("%ld %ld %ld", &wA, &wB, &hA) == 3) {
        float *A, *B, *C, *ref;
        CK(cudaMalloc(&A, hA * wA * sizeof(float)));
        CK(cudaMalloc(&B, wA * wB * sizeof(float)));
        CK(cudaMalloc(&C, hA * wB * sizeof(float)));
        CK(cudaMalloc(&ref, hA * wB * sizeof(float)));
        fill(A, hA * wA, 1);
        fill(B, wA * wB, 2);
        poison(ref, hA * wB);
        MatrixMulNaive<<<dim3(ceil_div_l(wB, 16), ceil_div_l(hA, 16)), dim3(16, 16)>>>(
            ref, A, B, (int)wA, (int)wB);
        CK(cudaGetLastError());

        auto aot = [&] {
            return aot_MatrixMulCUDA_cuda_sm90_launch(C, A, B, (int)wA, (int)wB, hA, 0);
        };
        poison(C, hA * wB);
        cudaError_t launched = aot();
        double aot_err = launched == cudaSuccess ? check.rel_err(C, ref, hA * wB) : INFINITY;
        double aot_ms = launched == cudaSuccess ? bench.median_ms(aot) : NAN;

        Fixed fixed;
        auto add = [&](const char *label, auto run) {
            poison(C, hA * wB);
            run();
            CK(cudaGetLastError());
            double err = check.rel_err(C, ref, hA * wB);
            fixed.add(label, bench.median_ms(run), err);
        };
        add("b32", [&] { sample_launch<32>(C, A, B, wA, wB, hA); });
        add("b16", [&] { sample_launch<16>(C, A, B, wA, wB, hA); });

        int v = aot_MatrixMulCUDA_cuda_sm90_select(wA, wB, hA);
        char shape[96];
        snprintf(shape, sizeof shape, "wA=%ld wB=%ld hA=%ld", wA, wB, hA);
        failed += !result("MatrixMulCUDA", shape,
                          v >= 0 ? aot_MatrixMulCUDA_cuda_sm90_variant_name(v) : "none", launched,
                          aot_ms, fixed, aot_err, tol);
        for (float *p : {A, B, C, ref})
            CK(cudaFree(p));
    }
    return failed ? 1 : 0;
}
