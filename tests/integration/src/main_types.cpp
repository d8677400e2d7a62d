// A downstream program of one kernel tuned per type (AOTC_TYPES: axpy for
// float and double, aotc_add_kernel ... TYPES f32 f64): one name,
// aot_axpy_host_launch, and the buffers' type picks the dispatch.
#include <cstdio>
#include <vector>

#include "_aot_axpy_f32_host.h"
#include "_aot_axpy_f64_host.h"

int main()
{
    const int n = 1000;
    std::vector<float> x(n), y(n, 1.0f);
    std::vector<double> xd(n), yd(n, 1.0);
    for (int i = 0; i < n; ++i) {
        x[i] = float(i);
        xd[i] = 0.5 * i;
    }
    if (aot_axpy_host_launch(n, 0.5f, x.data(), y.data()) != 0 ||
        aot_axpy_host_launch(n, 0.5, xd.data(), yd.data()) != 0) {
        std::printf("no variant ran\n");
        return 1;
    }
    for (int i = 0; i < n; ++i)
        if (y[i] != 1.0f + 0.5f * float(i) || yd[i] != 1.0 + 0.25 * i) {
            std::printf("wrong at %d: %g %g\n", i, double(y[i]), yd[i]);
            return 1;
        }
    std::printf("float: %s\ndouble: %s\n", aot_axpy_f32_host_variant_name(aot_axpy_f32_host_select(n)),
                aot_axpy_f64_host_variant_name(aot_axpy_f64_host_select(n)));
    return 0;
}
