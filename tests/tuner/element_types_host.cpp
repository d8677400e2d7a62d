// Element types on the host backend: integers of every width, double,
// _Float16 and CUDA's float4 (vector_types.h is plain C++), each behind a
// typedef or alias, filled and compared per component with its type's
// tolerance, against a reference. BROKEN = 1 gets only the .w component of
// float4 wrong, 2 only the last int8 element (by one), 3 the halves by 2.5 %
// (half's tolerance is 1 %): each must be `wrong`; 4 is off by 0.2 % in the
// halves only, within their tolerance: `ok`, like 0.
#include <aotc.h>
#include <cstdint>
#include <vector_types.h>

typedef _Float16 half_t;
using vec_t = float4;
typedef int8_t small_t;
typedef uint16_t ushort_t;
using wide_t = int64_t;
typedef double real_t;

void scale_ref(vec_t *v, half_t *h, small_t *s, ushort_t *u, wide_t *w, real_t *r, int n)
{
	for (int i = 0; i < n; i++) {
		v[i].x *= 2; v[i].y *= 2; v[i].z *= 2; v[i].w *= 2;
		h[i] = h[i] * (half_t)2;
		s[i] = (small_t)(s[i] / 2);
		u[i] = (ushort_t)(u[i] * 3);
		w[i] = w[i] * 5 - 7;
		r[i] = r[i] * 0.5;
	}
}

template <int UNROLL, int BROKEN>
AOTC_TUNE(UNROLL, 1, 4)
AOTC_TUNE(BROKEN, 0, 1, 2, 3, 4)
AOTC_BUFFER(v, n, inout)
AOTC_BUFFER(h, n, inout)
AOTC_BUFFER(s, n, inout)
AOTC_BUFFER(u, n, inout)
AOTC_BUFFER(w, n, inout)
AOTC_BUFFER(r, n, inout)
AOTC_SHAPES(n = {1000, 4096})
AOTC_REFERENCE(scale_ref)
void scale_all(vec_t *v, half_t *h, small_t *s, ushort_t *u, wide_t *w, real_t *r, int n)
{
	for (int i0 = 0; i0 < n; i0 += UNROLL)
		for (int i = i0; i < i0 + UNROLL && i < n; i++) {
			v[i].x *= 2; v[i].y *= 2; v[i].z *= 2;
			v[i].w = BROKEN == 1 ? v[i].w * 3 : v[i].w * 2;
			h[i] = h[i] * (half_t)(BROKEN == 3 ? 2.05f : BROKEN == 4 ? 2.004f : 2.0f);
			s[i] = (small_t)(s[i] / 2 - (BROKEN == 2 && i == n - 1));
			u[i] = (ushort_t)(u[i] * 3);
			w[i] = w[i] * 5 - 7;
			r[i] = r[i] * 0.5;
		}
}
