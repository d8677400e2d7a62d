// A host kernel tuned per data type (AOTC_TYPES): y = a * x + y for float
// and for double. MODE is a planted, known answer: MODE 0 repeats its work
// 8 times on doubles, MODE 1 on floats, so the float dispatch must choose
// MODE 0 and the double dispatch MODE 1 (tests/families/types-host.sh).
#include <aotc.h>

template <class T, int MODE, int UNROLL>
AOTC_TYPES(T, float, double)
AOTC_TUNE(MODE, 0, 1)
AOTC_TUNE(UNROLL, 1, 4)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, inout)
AOTC_VALUE(a, 0.5)
AOTC_VALID_IF(n % UNROLL == 0)
AOTC_SHAPES(n = {4096, 65536, 262144})
AOTC_REFERENCE(axpy_ref)
void axpy(int n, T a, const T *__restrict x, T *__restrict y)
{
    const bool slow = MODE == 0 ? sizeof(T) == 8 : sizeof(T) == 4;
    const int reps = slow ? 8 : 1;
    for (int r = 0; r < reps; ++r) {
        // The result is the same for every rep: y is read from t, not updated.
        for (int i = 0; i < n; i += UNROLL)
            for (int u = 0; u < UNROLL; ++u) {
                volatile T t = a * x[i + u];
                if (r == reps - 1)
                    y[i + u] += t;
            }
    }
}

template <class T>
void axpy_ref(int n, T a, const T *x, T *y)
{
    for (int i = 0; i < n; ++i)
        y[i] += a * x[i];
}
