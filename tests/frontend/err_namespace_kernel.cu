// A tuned kernel inside a namespace: its instantiations would be named
// unqualified. Expect 1 error at the kernel's name. The helper in the same
// namespace without annotations is fine.
#include <aotc.h>

namespace lib {
__device__ float twice(float x) { return 2 * x; }

template <int B>
AOTC_TUNE(B, 128, 256)
AOTC_GRID(cdiv(n, B))
AOTC_BLOCK(B)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = {1024})
__global__ void scale(int n, float *x) {}
} // namespace lib
