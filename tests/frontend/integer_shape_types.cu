// Shape arguments of types int64_t, size_t, unsigned, long long and uint32_t.
#include <aotc.h>
#include <cstddef>
#include <cstdint>

template <int BLOCK>
AOTC_TUNE(BLOCK, 128, 256)
AOTC_GRID(cdiv(rows, BLOCK), cols)
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, rows * cols, in)
AOTC_BUFFER(y, rows * cols, out)
AOTC_VALUE(stride, cols)
AOTC_VALUE(offset, 0)
AOTC_SHAPES(rows = pow2(64, 65536), cols = {1, 7, 64}, batch = {1, 2}, k = {8}, m = {3})
__global__ void wide(int64_t rows, size_t cols, unsigned batch, long long k, uint32_t m,
                     const float *x, float *y, ptrdiff_t stride, unsigned long offset) {}
