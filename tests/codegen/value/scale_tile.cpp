// A host kernel that takes its tile sizes as arguments, as public kernels
// take `int block_size`: TILE instantiates the template and is passed as
// `tile` too; CHUNK is a launch-only tunable (not a template parameter)
// that reaches the kernel only through AOTC_VALUE. A kernel given values
// that disagree with its variant writes NaN, so the check catches it.
#include <aotc.h>

template <int TILE>
AOTC_TUNE(TILE, 4, 16)
AOTC_TUNE(CHUNK, 64, 256)
AOTC_BUFFER(out, n, out)
AOTC_BUFFER(in, n, in)
AOTC_VALUE(tile, TILE)
AOTC_VALUE(chunk, CHUNK)
AOTC_VALUE(nchunks, cdiv(n, CHUNK))
AOTC_SHAPES(n = {100, 1000, 4096})
AOTC_REFERENCE(scale_ref)
void scale(float *out, const float *in, int n, int tile, int chunk, long nchunks)
{
    const bool agree = tile == TILE && chunk % TILE == 0 && nchunks * chunk >= n &&
                       (nchunks - 1) * chunk < n;
    for (long c = 0; c < nchunks; ++c)
        for (int i0 = (int)(c * chunk); i0 < (int)((c + 1) * chunk) && i0 < n; i0 += TILE)
            for (int i = i0; i < i0 + TILE && i < n; ++i)
                out[i] = agree ? 2.0f * in[i] : __builtin_nanf("");
}

// The reference takes the same parameters; its result does not depend on
// the per-variant ones (it gets the first configuration's values).
void scale_ref(float *out, const float *in, int n, int tile, int chunk, long nchunks)
{
    (void)tile, (void)chunk, (void)nchunks;
    for (int i = 0; i < n; ++i)
        out[i] = 2.0f * in[i];
}
