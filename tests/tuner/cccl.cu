// A kernel on CUDA 13's CCCL headers (include/cccl: cooperative groups'
// reductions, libcu++, CUB), which nvcc finds on its own: the frontend,
// NVRTC and nvcc must all find them too. One BLOCK: a variant on each of
// cooperative groups and CUB (compiling these headers is slow).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/warp/warp_reduce.cuh>
#include <cuda/std/type_traits>

#include <aotc.h>

namespace cg = cooperative_groups;

template <int BLOCK, bool USE_CUB>
AOTC_TUNE(BLOCK, 128)
AOTC_TUNE(USE_CUB, false, true)
AOTC_GRID(cdiv(n, BLOCK))
AOTC_BLOCK(BLOCK)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, cdiv(n, 32), out)
AOTC_SHAPES(n = {1024, 4096})
__global__ void warp_sums(int n, const float *x, float *y)
{
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    const float v = i < n ? x[i] : 0.0f;
    float s;
    if constexpr (USE_CUB) {
        using reduce = cub::WarpReduce<float>;
        __shared__ typename reduce::TempStorage tmp[BLOCK / 32];
        s = reduce(tmp[threadIdx.x / 32]).Sum(v);
    } else {
        auto warp = cg::tiled_partition<32>(cg::this_thread_block());
        s = cg::reduce(warp, v, cg::plus<float>());
    }
    static_assert(cuda::std::is_same_v<decltype(s), float>, "a float sum");
    if (i < n && threadIdx.x % 32 == 0)
        y[i / 32] = s;
}
