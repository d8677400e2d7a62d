// Names of the file that are not integer constants, each an error at its use with a note
// at its definition. Expect 7 errors: a float constant (SCALE), a pointer constant (NAME),
// a variable that is not const (g_count), a const without a constant value (RUNTIME),
// a function-like macro (SQ), a name two namespaces define (VEC, ambiguous; no note), and
// a macro with a floating value (HALF: not a constant, so the annotation gets the
// preprocessor's expansion, whose literal is the error).
#include <aotc.h>

int runtime_value();

const float SCALE = 0.5f;
const char *const NAME = "k";
int g_count = 4;
const int RUNTIME = runtime_value();
#define SQ(x) ((x) * (x))
#define HALF 0.5
namespace a {
const int VEC = 4;
}
namespace b {
const int VEC = 8;
}

template <int BM>
AOTC_TUNE(BM, 32, 64)
AOTC_REQUIRE(BM > SCALE)
AOTC_REQUIRE(BM != NAME)
AOTC_GRID(cdiv(n, BM * g_count))
AOTC_BLOCK(BM + RUNTIME)
AOTC_SMEM(SQ)
AOTC_BUFFER(x, n * HALF, inout)
AOTC_VALID_IF(n % VEC == 0)
AOTC_SHAPES(n = pow2(1024, 4096))
__global__ void k(int n, float *x) {}
