// A defaulted type parameter (typename T = float): buffers of T have pointee float; a
// defaulted BLOCK used in launch expressions takes its default; a defaulted VEC may be tuned.
#include <aotc.h>

template <typename T = float, int BLOCK = 128, int VEC = 1>
AOTC_TUNE(VEC, 1, 2, 4)
AOTC_GRID(cdiv(n, BLOCK * VEC))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(src, n, in)
AOTC_BUFFER(dst, n, out)
AOTC_VALUE(scale, 0.5)
AOTC_SHAPES(n = pow2(4096, 1048576))
__global__ void scale_copy(int n, T scale, const T *src, T *dst) {}
