/* Scalars of every aotc_dtype in host memory: conversion to and from double,
 * filling from a seeded generator, comparing with a reference. Shared by the
 * host backend and the tuner, which fills buffers on the host. */
#ifndef AOTC_ELEMENTS_H
#define AOTC_ELEMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "ir.h"

double elem_get(const void *base, aotc_dtype t, size_t i);
void elem_set(void *base, aotc_dtype t, size_t i, double v);

/* IEEE binary16 and bfloat16 from float, rounding to nearest even. */
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);

/* Fills count scalars per init (INIT_DEFAULT: uniform(-1, 1) for floating
 * types, uniform(0, 16) for integers). The same seed gives the same bytes.
 * Integer uniform(lo, hi) draws whole numbers in [lo, hi]. */
void elem_fill(void *base, aotc_dtype t, size_t count, const buffer_init *init, uint64_t seed);

/* Byte poison for an output before a checked run: NaN for floating types,
 * 0xA5 for integers (an unwritten element then mismatches the reference). */
uint8_t elem_poison_byte(aotc_dtype t);

void elem_compare(const void *out, const void *ref, aotc_dtype t, size_t count, rt_compare *res);

/* ||out - ref|| / ||ref|| (||out - ref|| when ref is zero) from a compare. */
double elem_rel_error(const rt_compare *c);

/* docs/spec.md §2 defaults: f32 1e-5, f64 1e-12, f16 1e-2, bf16 2e-2, integers 0. */
double elem_default_tolerance(aotc_dtype t);

#endif
