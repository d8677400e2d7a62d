// run-on-h200.sh's driver for tests/public/layernorm_forward.cu (driver.h
// says what it checks, times and prints). Shapes on stdin: "B T C" per line.
// Fixed configurations: the file's own host launcher layernorm_forward3() at
// each block size its main() runs, {32, 64, 128, 256, 512, 1024}.
// Reference: layernorm_forward_kernel1 (its AOTC_REFERENCE); out, mean and
// rstd are all checked (the error is the largest of the three). Tolerance:
// the file's AOTC_TOLERANCE, 1e-4.
#include "_aot_layernorm_forward_kernel3_cuda_sm90.cu"

#include "driver.h"

int main()
{
    Bench bench;
    Checker check;
    const double tol = 1e-4;
    const int block_sizes[] = {32, 64, 128, 256, 512, 1024};
    int failed = 0;
    long B, T, C;
    while (scanf("%ld %ld %ld", &B, &T, &C) == 3) {
        const long N = B * T;
        floatX *inp, *weight, *bias, *out, *mean, *rstd, *ref, *ref_mean, *ref_rstd;
        CK(cudaMalloc(&inp, N * C * sizeof(floatX)));
        CK(cudaMalloc(&weight, C * sizeof(floatX)));
        CK(cudaMalloc(&bias, C * sizeof(floatX)));
        CK(cudaMalloc(&out, N * C * sizeof(floatX)));
        CK(cudaMalloc(&mean, N * sizeof(floatX)));
        CK(cudaMalloc(&rstd, N * sizeof(floatX)));
        CK(cudaMalloc(&ref, N * C * sizeof(floatX)));
        CK(cudaMalloc(&ref_mean, N * sizeof(floatX)));
        CK(cudaMalloc(&ref_rstd, N * sizeof(floatX)));
        fill(inp, N * C, 1);
        fill(weight, C, 2);
        fill(bias, C, 3);
        poison(ref, N * C);
        poison(ref_mean, N);
        poison(ref_rstd, N);
        layernorm_forward_kernel1<<<ceil_div_l(N, 256), 256>>>(ref, ref_mean, ref_rstd, inp, weight,
                                                              bias, (int)N, (int)C);
        CK(cudaGetLastError());
        auto checked = [&](auto run) {
            poison(out, N * C);
            poison(mean, N);
            poison(rstd, N);
            run();
            CK(cudaGetLastError());
            return std::max({check.rel_err(out, ref, N * C), check.rel_err(mean, ref_mean, N),
                             check.rel_err(rstd, ref_rstd, N)});
        };

        auto aot = [&] {
            return aot_layernorm_forward_kernel3_cuda_sm90_launch(out, mean, rstd, inp, weight, bias,
                                                                  (int)N, (int)C, B, T, 0);
        };
        cudaError_t launched = cudaSuccess;
        double aot_err = checked([&] { launched = aot(); });
        if (launched != cudaSuccess)
            aot_err = INFINITY;
        double aot_ms = launched == cudaSuccess ? bench.median_ms(aot) : NAN;

        Fixed fixed;
        for (int bs : block_sizes) {
            auto run = [&] {
                layernorm_forward3(out, mean, rstd, inp, weight, bias, (int)B, (int)T, (int)C, bs);
            };
            double err = checked(run);
            char label[16];
            snprintf(label, sizeof label, "bs%d", bs);
            fixed.add(label, bench.median_ms(run), err);
        }
        int v = aot_layernorm_forward_kernel3_cuda_sm90_select(C, B, T);
        char shape[96];
        snprintf(shape, sizeof shape, "B=%ld T=%ld C=%ld", B, T, C);
        failed += !result("layernorm_forward_kernel3", shape,
                          v >= 0 ? aot_layernorm_forward_kernel3_cuda_sm90_variant_name(v) : "none",
                          launched, aot_ms, fixed, aot_err, tol);
        for (floatX *p : {inp, weight, bias, out, mean, rstd, ref, ref_mean, ref_rstd})
            CK(cudaFree(p));
    }
    return failed ? 1 : 0;
}
