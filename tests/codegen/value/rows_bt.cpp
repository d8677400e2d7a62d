// An llm.c-style host kernel: it takes the row count N = B * T, while the
// shapes (and the launcher) are in B and T, launcher-only shape arguments
// that the kernel never sees.
#include <aotc.h>

template <int UNROLL>
AOTC_TUNE(UNROLL, 1, 4)
AOTC_VALID_IF(C % UNROLL == 0)
AOTC_BUFFER(out, B * T * C, out)
AOTC_BUFFER(inp, B * T * C, in)
AOTC_VALUE(N, B * T)
AOTC_SHAPES(B = {1, 4}, T = {3, 64}, C = {16, 50, 64})
AOTC_REFERENCE(rows_ref)
void rows(float *out, const float *inp, int N, int C)
{
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < C; j += UNROLL)
            for (int u = 0; u < UNROLL; ++u)
                out[i * C + j + u] = inp[i * C + j + u] * (float)(j + u + 1);
}

void rows_ref(float *out, const float *inp, int N, int C)
{
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < C; ++j)
            out[i * C + j] = inp[i * C + j] * (float)(j + 1);
}
