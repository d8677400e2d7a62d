// Alternatives on the host backend (AOTC_ALTERNATIVE): three functions for
// one job, out[r] = the sum of row r of inp (rows x cols), one dispatch.
//
// The answer is planted, as in axpy_types.cpp: rowsum makes its pass twice
// and has no setup; rowsum_setup makes one pass after a fixed 300 us setup
// (as a thread pool or a plan would cost). So rowsum wins where a pass is
// short (small shapes) and rowsum_setup where a pass outweighs the setup
// (2048 x 2048 and larger): tests/families/alternatives.sh checks that the
// dispatch chooses by shape. rowsum_twopass is a function of two passes
// (partial sums of column blocks into scratch, then their sum), measured and
// checked against the reference like every variant; its first pass is made
// four times, so that it wins nowhere and the plant stays plain.
#include <aotc.h>

#include <chrono>
#include <vector>

template <int UNROLL>
AOTC_TUNE(UNROLL, 1, 4)
AOTC_BUFFER(inp, rows * cols, in)
AOTC_BUFFER(out, rows, out)
AOTC_VALID_IF(cols % UNROLL == 0)
AOTC_SHAPES(rows = {16, 256, 2048}, cols = {64, 512, 2048})
AOTC_REFERENCE(rowsum_ref)
void rowsum(float *out, const float *inp, int rows, int cols)
{
    for (int rep = 0; rep < 2; ++rep)
        for (int r = 0; r < rows; ++r) {
            volatile float s = 0; // volatile: each repetition is done
            for (int c = 0; c < cols; c += UNROLL)
                for (int u = 0; u < UNROLL; ++u)
                    s = s + inp[(long)r * cols + c + u];
            out[r] = s;
        }
}

// No tunables: one variant, named rowsum_setup.
AOTC_ALTERNATIVE(rowsum)
void rowsum_setup(float *out, const float *__restrict inp, int rows, int cols)
{
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
    while (std::chrono::steady_clock::now() < until) {
    }
    for (int r = 0; r < rows; ++r) {
        volatile float s = 0;
        for (int c = 0; c < cols; ++c)
            s = s + inp[(long)r * cols + c];
        out[r] = s;
    }
}

template <int SPLIT>
AOTC_ALTERNATIVE(rowsum)
AOTC_TUNE(SPLIT, 2, 8)
AOTC_VALID_IF(cols % SPLIT == 0)
void rowsum_twopass(float *out, const float *inp, int rows, int cols)
{
    std::vector<float> part((size_t)rows * SPLIT);
    const int w = cols / SPLIT;
    for (int rep = 0; rep < 4; ++rep)
        for (int r = 0; r < rows; ++r) // pass 1: each column block's sum
            for (int b = 0; b < SPLIT; ++b) {
                volatile float s = 0;
                for (int c = b * w; c < (b + 1) * w; ++c)
                    s = s + inp[(long)r * cols + c];
                part[(size_t)r * SPLIT + b] = s;
            }
    for (int r = 0; r < rows; ++r) { // pass 2: the blocks' sum
        float s = 0;
        for (int b = 0; b < SPLIT; ++b)
            s += part[(size_t)r * SPLIT + b];
        out[r] = s;
    }
}

void rowsum_ref(float *out, const float *inp, int rows, int cols)
{
    for (int r = 0; r < rows; ++r) {
        double s = 0;
        for (int c = 0; c < cols; ++c)
            s += inp[(long)r * cols + c];
        out[r] = (float)s;
    }
}
