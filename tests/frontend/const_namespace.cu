// Constants inside namespaces: an unqualified name finds the one constant of that name
// in any namespace; the qualified name (no spaces around '::') works too and is needed
// when two namespaces define the same name. Anonymous namespaces add nothing to the name.
#include <aotc.h>

namespace cfg {
constexpr int TILE = 64;
namespace sm90 {
constexpr int THREADS = 128;
}
} // namespace cfg

namespace a {
static const int VEC = 4;
}
namespace b {
static const int VEC = 8;
}

namespace {
const int UNROLL = 2;
}

template <int BM>
AOTC_TUNE(BM, cfg::TILE, 2 * TILE)
AOTC_REQUIRE(BM % (a::VEC * b::VEC) == 0)
AOTC_GRID(cdiv(n, BM * UNROLL))
AOTC_BLOCK(cfg::sm90::THREADS)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(sm90::THREADS, 4096))
__global__ void k(int n, float *x) {}
