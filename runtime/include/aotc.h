/*
 * aotc.h - annotation macros for aotc, the ahead-of-time autotuning compiler.
 *
 * Include this in a kernel source and annotate a kernel template (between the
 * template head and the declaration) or a non-template __global__ function
 * (in front of it).  The full language is described in docs/annotations.md.
 *
 *   AOTC_TUNE(P, v1, v2, ...)    tunable P takes these values
 *   AOTC_REQUIRE(expr)           constraint over tunables; failing configs are never built
 *   AOTC_VALID_IF(expr)          constraint over tunables and shapes; checked before running
 *   AOTC_GRID(x [, y [, z]])     grid dimensions (expressions over tunables and int params)
 *   AOTC_BLOCK(x [, y [, z]])    block dimensions
 *   AOTC_SMEM(expr)              dynamic shared memory in bytes (default 0)
 *   AOTC_BUFFER(P, count, role [, init])  pointer P: element count, in/out/inout, init
 *   AOTC_VALUE(P, expr)          value of a non-shape parameter during tuning
 *   AOTC_SHAPES(name = gen, ...) default tuning space: pow2(lo, hi), range(lo, hi, step), {a, ...}
 *   AOTC_FEATURES(expr, ...)     what the dispatch tree may split on
 *   AOTC_REFERENCE(fn)           kernel whose output is the truth
 *   AOTC_EXTERN(fn [, lib, ...]) a library routine measured beside the variants;
 *                                libs are linked with it (cublas: -lcublas)
 *   AOTC_TOLERANCE(tol)          accepted relative error per output buffer
 *   AOTC_METRIC(unit, count)     what one launch does (unit FLOP or B), for throughput
 *   AOTC_TYPES(T, t1, t2, ...)   type parameter T is a dispatch key: one dispatch per type
 *   AOTC_ALTERNATIVE(primary)    this function competes with kernel primary in its
 *                                dispatch, with its own TUNE/REQUIRE/VALID_IF/GRID/BLOCK/SMEM
 *
 * When __AOTC__ is defined (the aotc frontend defines it) each macro becomes
 * __attribute__((annotate("aotc.<kind>:" "<arguments>"))); otherwise it
 * expands to nothing, so the same file compiles unchanged with nvcc, hipcc,
 * clang, gcc.  The arguments are stringified through a helper, so macros in
 * them are expanded first (AOTC_TUNE(BM, 64, WIDE) with -DWIDE=128); the
 * frontend reads the source text instead wherever it holds the same tokens,
 * for exact positions in diagnostics.
 *
 * Valid C (C99 and later) and C++; needs no other header.
 */
#ifndef AOTC_H
#define AOTC_H

#define AOTC_VERSION_MAJOR 0
#define AOTC_VERSION_MINOR 1

#ifdef __AOTC__

#define AOTC__STRING(...) #__VA_ARGS__
#define AOTC__ANNOTATE(kind, ...) __attribute__((annotate(kind AOTC__STRING(__VA_ARGS__))))

#define AOTC_TUNE(...)      AOTC__ANNOTATE("aotc.tune:", __VA_ARGS__)
#define AOTC_REQUIRE(...)   AOTC__ANNOTATE("aotc.require:", __VA_ARGS__)
#define AOTC_VALID_IF(...)  AOTC__ANNOTATE("aotc.valid_if:", __VA_ARGS__)
#define AOTC_GRID(...)      AOTC__ANNOTATE("aotc.grid:", __VA_ARGS__)
#define AOTC_BLOCK(...)     AOTC__ANNOTATE("aotc.block:", __VA_ARGS__)
#define AOTC_SMEM(...)      AOTC__ANNOTATE("aotc.smem:", __VA_ARGS__)
#define AOTC_BUFFER(...)    AOTC__ANNOTATE("aotc.buffer:", __VA_ARGS__)
#define AOTC_VALUE(...)     AOTC__ANNOTATE("aotc.value:", __VA_ARGS__)
#define AOTC_SHAPES(...)    AOTC__ANNOTATE("aotc.shapes:", __VA_ARGS__)
#define AOTC_FEATURES(...)  AOTC__ANNOTATE("aotc.features:", __VA_ARGS__)
#define AOTC_REFERENCE(...) AOTC__ANNOTATE("aotc.reference:", __VA_ARGS__)
#define AOTC_EXTERN(...)    AOTC__ANNOTATE("aotc.extern:", __VA_ARGS__)
#define AOTC_TOLERANCE(...) AOTC__ANNOTATE("aotc.tolerance:", __VA_ARGS__)
#define AOTC_METRIC(...)    AOTC__ANNOTATE("aotc.metric:", __VA_ARGS__)
#define AOTC_TYPES(...)     AOTC__ANNOTATE("aotc.types:", __VA_ARGS__)
#define AOTC_ALTERNATIVE(...) AOTC__ANNOTATE("aotc.alternative:", __VA_ARGS__)

#else /* !__AOTC__ */

#define AOTC_TUNE(...)
#define AOTC_REQUIRE(...)
#define AOTC_VALID_IF(...)
#define AOTC_GRID(...)
#define AOTC_BLOCK(...)
#define AOTC_SMEM(...)
#define AOTC_BUFFER(...)
#define AOTC_VALUE(...)
#define AOTC_SHAPES(...)
#define AOTC_FEATURES(...)
#define AOTC_REFERENCE(...)
#define AOTC_EXTERN(...)
#define AOTC_TOLERANCE(...)
#define AOTC_METRIC(...)
#define AOTC_TYPES(...)
#define AOTC_ALTERNATIVE(...)

#endif /* __AOTC__ */

#endif /* AOTC_H */
