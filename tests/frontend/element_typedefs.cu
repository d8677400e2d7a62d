// Element types through typedefs, `using` aliases and CUDA's own typedefs
// (half, nv_bfloat16), chains of them, and the vector types; each buffer's
// dtype and lanes come from the type underneath, and the IR keeps that
// type's name (elem_canon) for headers read without this file.
#include <aotc.h>
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

typedef __nv_bfloat16 floatX;
typedef floatX activation_t;          // a chain of two
using weight_t = nv_bfloat16;         // CUDA's typedef, through `using`
using scale_t = half;
typedef float4 vec4_t;
using pair_t = __half2;
using bpair_t = __nv_bfloat162;
typedef int32_t index_t;
typedef unsigned char byte_t;
typedef double acc_t;
using i4 = int4;

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(a, n, inout)
AOTC_BUFFER(b, n, in)
AOTC_BUFFER(c, n, in)
AOTC_BUFFER(d, n, in)
AOTC_BUFFER(e, n, in)
AOTC_BUFFER(f, n, in)
AOTC_BUFFER(g, n, in)
AOTC_BUFFER(h, n, in)
AOTC_BUFFER(i, n, in)
AOTC_BUFFER(j, n, in)
AOTC_BUFFER(l, n, in)
AOTC_SHAPES(n = {1024})
__global__ void types(activation_t *a, const weight_t *b, const scale_t *c, const vec4_t *d,
                      const pair_t *e, const bpair_t *f, const index_t *g, const byte_t *h,
                      const acc_t *i, const i4 *j, const floatX *__restrict__ l, index_t n);
