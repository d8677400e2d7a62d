// Enumerators as constants: a plain enum's members by their own name (or E::X), a scoped
// enum's as E::X, an enum inside a namespace as ns::E::X, E::X or X (plain).
#include <aotc.h>

enum { WARP = 32 };
enum Tile { TILE_SMALL = 64, TILE_LARGE = 128 };
enum class Dir : int { Row = 0, Col = 1 };
namespace cfg {
enum Stages { STAGES = 3 };
enum class Vec { Wide = 4 };
} // namespace cfg

template <int BM, int LAYOUT>
AOTC_TUNE(BM, TILE_SMALL, Tile::TILE_LARGE)
AOTC_TUNE(LAYOUT, Dir::Row, Dir::Col)
AOTC_REQUIRE(BM % (WARP * cfg::Vec::Wide) == 0 || LAYOUT == Dir::Col)
AOTC_GRID(cdiv(n, BM * STAGES))
AOTC_BLOCK(BM / Vec::Wide)
AOTC_BUFFER(x, n, inout)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
