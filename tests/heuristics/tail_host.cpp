// A vectorised scale that forgets its tail: VEC > 1 handles the first
// n / VEC * VEC elements and leaves the rest unwritten, with no
// AOTC_VALID_IF to say so. The per-iteration volatile stores make larger
// VEC faster, so without the learnt validity the dispatch would pick VEC=8
// on every shape, tail or no tail.
#include <aotc.h>

static volatile int sink;

template <int VEC>
AOTC_TUNE(VEC, 1, 2, 4, 8)
AOTC_BUFFER(y, n, out)
AOTC_BUFFER(x, n, in)
AOTC_SHAPES(n = {1000, 1001, 1002, 1004, 2048, 3000, 4096, 4099, 12000, 16384, 65536, 65537})
AOTC_REFERENCE(scale_ref)
void scale(float *y, const float *x, int n)
{
    for (int i = 0; i + VEC <= n; i += VEC) {
        for (int j = 0; j < VEC; j++)
            y[i + j] = 2.0f * x[i + j];
        for (int w = 0; w < 16; w++)
            sink = i;
    }
}

void scale_ref(float *y, const float *x, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = 2.0f * x[i];
}
