// AOTC_METRIC on the CPU (tests/tuner/metric-host.sh): throughput in the
// AUTOTUNE table and in aotc report.
#include <aotc.h>

// scale: y = 2 x, 8 bytes moved per element; the count uses only the shape,
// so the alternative's and the routine's throughput are known too.
template <int UNROLL>
AOTC_TUNE(UNROLL, 1, 4)
AOTC_VALID_IF(n % UNROLL == 0)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {4096, 65536, 262144})
AOTC_METRIC(B, 2 * 4 * n)
AOTC_REFERENCE(scale_ref)
AOTC_EXTERN(scale_lib)
void scale(int n, const float *x, float *y)
{
    for (int i = 0; i < n; i += UNROLL)
        for (int u = 0; u < UNROLL; ++u) y[i + u] = 2.0f * x[i + u];
}

AOTC_ALTERNATIVE(scale)
void scale_flat(int n, const float *x, float *y)
{
    for (int i = 0; i < n; ++i) y[i] = x[i] + x[i];
}

void scale_lib(int n, const float *x, float *y)
{
    for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

void scale_ref(int n, const float *x, float *y)
{
    for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

// reps: the same work REPS times over, so the count names the tunable; the
// alternative (one pass, REPS times faster) has no REPS, so its throughput
// is unknown: "-".
template <int REPS>
AOTC_TUNE(REPS, 16, 32)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {65536, 262144})
AOTC_METRIC(FLOP, n * REPS)
AOTC_REFERENCE(scale_ref)
void reps(int n, const float *x, float *y)
{
    for (int r = 0; r < REPS; ++r) {
        for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
        __asm__ volatile("" ::: "memory");
    }
}

AOTC_ALTERNATIVE(reps)
void reps_once(int n, const float *x, float *y)
{
    for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
