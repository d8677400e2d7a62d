#include "elements.h"

#include <math.h>
#include <string.h>

uint16_t float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t absx = x & 0x7fffffffu;
	if (absx > 0x7f800000u)                   /* NaN: keep it quiet */
		return (uint16_t)(sign | 0x7e00u);
	if (absx >= 0x477ff000u)                  /* rounds to >= 65520: inf */
		return (uint16_t)(sign | 0x7c00u);
	if (absx < 0x38800000u) {                 /* subnormal or zero in half */
		float a;
		memcpy(&a, &absx, 4);
		/* 2^-24 is the smallest half subnormal; rint rounds to even. */
		return (uint16_t)(sign | (uint32_t)rintf(a * 16777216.0f));
	}
	uint32_t mant = absx & 0x7fffffu;
	uint32_t exp = (absx >> 23) - 127 + 15;
	uint32_t h = (exp << 10) | (mant >> 13);
	uint32_t rest = mant & 0x1fffu;
	if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
	uint32_t x;
	if (exp == 0) {
		float f = ldexpf((float)mant, -24);
		return sign ? -f : f;
	}
	if (exp == 31)
		x = sign | 0x7f800000u | (mant << 13);
	else
		x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
	float f;
	memcpy(&f, &x, 4);
	return f;
}

uint16_t float_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u);
	x += 0x7fffu + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

float bf16_to_float(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

double elem_get(const void *base, aotc_dtype t, size_t i)
{
	const unsigned char *p = base;
	switch (t) {
	case DT_BOOL: return p[i] != 0;
	case DT_I8: return ((const int8_t *)base)[i];
	case DT_U8: return p[i];
	case DT_I16: return ((const int16_t *)base)[i];
	case DT_U16: return ((const uint16_t *)base)[i];
	case DT_I32: return ((const int32_t *)base)[i];
	case DT_U32: return ((const uint32_t *)base)[i];
	case DT_I64: return (double)((const int64_t *)base)[i];
	case DT_U64: return (double)((const uint64_t *)base)[i];
	case DT_F16: return half_to_float(((const uint16_t *)base)[i]);
	case DT_BF16: return bf16_to_float(((const uint16_t *)base)[i]);
	case DT_F32: return ((const float *)base)[i];
	case DT_F64: return ((const double *)base)[i];
	case DT_OTHER: break;
	}
	die("elem_get: no such type");
}

void elem_set(void *base, aotc_dtype t, size_t i, double v)
{
	switch (t) {
	case DT_BOOL: ((uint8_t *)base)[i] = v != 0; return;
	case DT_I8: ((int8_t *)base)[i] = (int8_t)v; return;
	case DT_U8: ((uint8_t *)base)[i] = (uint8_t)v; return;
	case DT_I16: ((int16_t *)base)[i] = (int16_t)v; return;
	case DT_U16: ((uint16_t *)base)[i] = (uint16_t)v; return;
	case DT_I32: ((int32_t *)base)[i] = (int32_t)v; return;
	case DT_U32: ((uint32_t *)base)[i] = (uint32_t)v; return;
	case DT_I64: ((int64_t *)base)[i] = (int64_t)v; return;
	case DT_U64: ((uint64_t *)base)[i] = (uint64_t)v; return;
	case DT_F16: ((uint16_t *)base)[i] = float_to_half((float)v); return;
	case DT_BF16: ((uint16_t *)base)[i] = float_to_bf16((float)v); return;
	case DT_F32: ((float *)base)[i] = (float)v; return;
	case DT_F64: ((double *)base)[i] = v; return;
	case DT_OTHER: break;
	}
	die("elem_set: no such type");
}

/* splitmix64: small, fast, and good enough to make inputs that are not
 * zeros and not a pattern a kernel could get right by accident. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void elem_fill(void *base, aotc_dtype t, size_t count, const buffer_init *init, uint64_t seed)
{
	bool integer = dtype_is_integer(t);
	double lo = integer ? 0 : -1, hi = integer ? 16 : 1;
	if (init->kind == INIT_UNIFORM) {
		lo = init->lo;
		hi = init->hi;
	}
	if (init->kind == INIT_ZERO || init->kind == INIT_CONST) {
		double v = init->kind == INIT_ZERO ? 0 : init->value;
		for (size_t i = 0; i < count; i++)
			elem_set(base, t, i, v);
		return;
	}
	uint64_t s = seed;
	if (integer) {
		double span = floor(hi) - ceil(lo) + 1;
		for (size_t i = 0; i < count; i++)
			elem_set(base, t, i, ceil(lo) + floor((double)(next(&s) >> 11) * 0x1p-53 * span));
		return;
	}
	double span = hi - lo;
	if (t == DT_F32) { /* the common case, without elem_set's switch */
		float *f = base;
		for (size_t i = 0; i < count; i++)
			f[i] = (float)(lo + span * ((double)(next(&s) >> 11) * 0x1p-53));
		return;
	}
	for (size_t i = 0; i < count; i++)
		elem_set(base, t, i, lo + span * ((double)(next(&s) >> 11) * 0x1p-53));
}

uint8_t elem_poison_byte(aotc_dtype t) { return dtype_is_floating(t) ? 0xff : 0xa5; }

void elem_compare(const void *out, const void *ref, aotc_dtype t, size_t count, rt_compare *res)
{
	memset(res, 0, sizeof *res);
	bool floating = dtype_is_floating(t);
	for (size_t i = 0; i < count; i++) {
		double o = elem_get(out, t, i), r = elem_get(ref, t, i);
		bool bad;
		if (floating) {
			bad = !isfinite(o) && isfinite(r);
			if (!bad && isfinite(o)) {
				res->diff_sq += (o - r) * (o - r);
				res->ref_sq += r * r;
			}
		} else {
			bad = o != r;
		}
		if (bad && res->bad++ == 0)
			res->first_bad = i;
	}
}

double elem_rel_error(const rt_compare *c)
{
	if (c->ref_sq == 0)
		return sqrt(c->diff_sq);
	return sqrt(c->diff_sq) / sqrt(c->ref_sq);
}

double elem_default_tolerance(aotc_dtype t)
{
	switch (t) {
	case DT_F32: return 1e-5;
	case DT_F64: return 1e-12;
	case DT_F16: return 1e-2;
	case DT_BF16: return 2e-2;
	default: return 0;
	}
}
