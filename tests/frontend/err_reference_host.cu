// Host references that cannot be: each is an error at the AOTC_REFERENCE (or, for launch
// geometry given to one, at each such annotation) with a note at the function. Expect 8 errors:
// a template, one inside a namespace, a parameter of another type, one parameter fewer, one
// that returns a value, a __device__ function, and the AOTC_GRID and AOTC_BLOCK of one.
#include <aotc.h>

template <typename T>
void ref_template(int n, const T *x, T *y) {}
namespace refs {
void ref_namespaced(int n, const float *x, float *y) {}
}
void ref_double(int n, const double *x, float *y) {}
void ref_short(int n, const float *x) {}
int ref_returns(int n, const float *x, float *y) { return 0; }
__device__ void ref_device(int n, const float *x, float *y) {}
AOTC_GRID(cdiv(n, 256))
AOTC_BLOCK(256)
void ref_launched(int n, const float *x, float *y) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(ref_template)
__global__ void k_template(int n, const float *x, float *y) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(ref_namespaced)
__global__ void k_namespaced(int n, const float *x, float *y) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(ref_double)
__global__ void k_double(int n, const float *x, float *y) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(ref_short)
__global__ void k_short(int n, const float *x, float *y) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(ref_returns)
__global__ void k_returns(int n, const float *x, float *y) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(ref_device)
__global__ void k_device(int n, const float *x, float *y) {}

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = pow2(1024, 4096))
AOTC_REFERENCE(ref_launched)
__global__ void k_launched(int n, const float *x, float *y) {}
