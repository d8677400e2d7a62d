// run-on-h200.sh's driver for tests/public/rmsnorm_cub.cu (driver.h says
// what it checks, times and prints). Shapes on stdin: "rows cols" per line.
// Fixed configuration: what the file's main() launches, rmsnorm_cub<256>
// with one block of 256 threads per row. Reference: rmsnorm_naive (its
// AOTC_REFERENCE). Tolerance: the file's AOTC_TOLERANCE, 2e-2 (bfloat16).
#include "_aot_rmsnorm_cub_cuda_sm90.cu"

#include "driver.h"

int main()
{
    Bench bench;
    Checker check;
    const double tol = 2e-2;
    int failed = 0;
    long rows, cols;
    while (scanf("%ld %ld", &rows, &cols) == 2) {
        const size_t n = (size_t)rows * cols;
        nv_bfloat16 *in, *out, *ref;
        weight_t *weight;
        CK(cudaMalloc(&in, n * sizeof(nv_bfloat16)));
        CK(cudaMalloc(&out, n * sizeof(nv_bfloat16)));
        CK(cudaMalloc(&ref, n * sizeof(nv_bfloat16)));
        CK(cudaMalloc(&weight, cols * sizeof(weight_t)));
        fill(in, n, 1);
        fill(weight, cols, 2);
        poison(ref, n);
        rmsnorm_naive<<<rows, 256>>>(ref, in, weight, (int)rows, (int)cols);
        CK(cudaGetLastError());

        auto aot = [&] {
            return aot_rmsnorm_cub_cuda_sm90_launch(out, in, weight, (int)rows, (int)cols, 0);
        };
        poison(out, n);
        cudaError_t launched = aot();
        double aot_err = launched == cudaSuccess ? check.rel_err(out, ref, n) : INFINITY;
        double aot_ms = launched == cudaSuccess ? bench.median_ms(aot) : NAN;

        Fixed fixed;
        auto run = [&] { rmsnorm_cub<256><<<rows, 256>>>(out, in, weight, (int)rows, (int)cols); };
        poison(out, n);
        run();
        CK(cudaGetLastError());
        double err = check.rel_err(out, ref, n);
        fixed.add("t256", bench.median_ms(run), err);

        int v = aot_rmsnorm_cub_cuda_sm90_select(rows, cols);
        char shape[64];
        snprintf(shape, sizeof shape, "rows=%ld cols=%ld", rows, cols);
        failed += !result("rmsnorm_cub", shape,
                          v >= 0 ? aot_rmsnorm_cub_cuda_sm90_variant_name(v) : "none", launched,
                          aot_ms, fixed, aot_err, tol);
        CK(cudaFree(in));
        CK(cudaFree(out));
        CK(cudaFree(ref));
        CK(cudaFree(weight));
    }
    return failed ? 1 : 0;
}
