/* The cost of an emitted select() on this CPU, in ns per call, next to an
 * empty call of the same signature.
 *
 * Built by bench/select.sh with one emitted dispatch file:
 *   gcc -O2 -std=c99 -DSELECT=aot_sgemm_cuda_sm90_select -DNARGS=3 \
 *       bench/select.c DIR/_aot_sgemm_cuda_sm90.c -o select-sgemm
 *   ./select-sgemm 128:4096 128:4096 256:4096
 * One LO:HI argument per shape argument: the tuning range.  Three shape sets,
 * 4096 shapes each, cycled through for CALLS calls (default 10^7):
 *   range   log-uniform in [LO, HI] (the tuning range, mostly off the grid);
 *   odd     odd values, log-uniform in [1, 2*HI] (off every alignment);
 *   fixed   one shape, the middle of the range (branches predicted);
 *   chained the range set, but each call's shape index depends on the previous
 *           result, so calls cannot overlap (latency, not throughput).
 * The empty function is called through a volatile function pointer, so it is
 * neither inlined nor removed; select() sits in another translation unit and
 * is called directly, as the emitted launcher calls it.  Each figure is the
 * median of 5 interleaved rounds.  Prints figures, asserts nothing.
 */
#define _POSIX_C_SOURCE 199309L
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef SELECT
#error "build with -DSELECT=aot_<kernel>_<backend>_<arch>_select -DNARGS=n"
#endif
#ifndef NARGS
#error "build with -DNARGS=<number of shape arguments>"
#endif
#if NARGS < 1 || NARGS > 4
#error "NARGS must be 1..4"
#endif

#define NSHAPES 4096
#define STR2(x) #x
#define STR(x) STR2(x)
#define ROUNDS 5

#if NARGS == 1
#define PARAMS int64_t a
#define ARGS(s) (s)[0]
#elif NARGS == 2
#define PARAMS int64_t a, int64_t b
#define ARGS(s) (s)[0], (s)[1]
#elif NARGS == 3
#define PARAMS int64_t a, int64_t b, int64_t c
#define ARGS(s) (s)[0], (s)[1], (s)[2]
#else
#define PARAMS int64_t a, int64_t b, int64_t c, int64_t d
#define ARGS(s) (s)[0], (s)[1], (s)[2], (s)[3]
#endif

int SELECT(PARAMS);

static __attribute__((noinline)) int empty(PARAMS)
{
#if NARGS >= 1
	(void)a;
#endif
#if NARGS >= 2
	(void)b;
#endif
#if NARGS >= 3
	(void)c;
#endif
#if NARGS >= 4
	(void)d;
#endif
	return 0;
}

static int (*volatile empty_ptr)(PARAMS) = empty;
static volatile int sink;

static uint64_t rng = 0x853c49e6748fea9bull;
static uint64_t next_u64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* log-uniform integer in [lo, hi] */
static int64_t log_uniform(int64_t lo, int64_t hi)
{
	double u = (double)(next_u64() >> 11) * (1.0 / 9007199254740992.0);
	double v = exp(log((double)lo) + u * (log((double)hi) - log((double)lo)));
	int64_t r = (int64_t)(v + 0.5);
	return r < lo ? lo : r > hi ? hi : r;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t shapes[3][NSHAPES][NARGS];

static double run_select(int set, long calls, long *invalid)
{
	int acc = 0;
	long bad = 0;
	double t0 = now_s();
	for (long i = 0; i < calls; i++) {
		int v = SELECT(ARGS(shapes[set][i & (NSHAPES - 1)]));
		acc += v;
		bad += v < 0;
	}
	double t = now_s() - t0;
	sink = acc;
	*invalid = bad;
	return t * 1e9 / (double)calls;
}

/* The same, but each call's shape depends on the previous result, so calls
 * cannot overlap: latency rather than throughput. */
static double run_select_chained(int set, long calls)
{
	unsigned idx = 0;
	double t0 = now_s();
	for (long i = 0; i < calls; i++) {
		int v = SELECT(ARGS(shapes[set][idx]));
		idx = (idx * 5u + 1u + (unsigned)v) & (NSHAPES - 1);
	}
	double t = now_s() - t0;
	sink = (int)idx;
	return t * 1e9 / (double)calls;
}

static double run_empty_chained(int set, long calls)
{
	unsigned idx = 0;
	double t0 = now_s();
	for (long i = 0; i < calls; i++) {
		int v = empty_ptr(ARGS(shapes[set][idx]));
		idx = (idx * 5u + 1u + (unsigned)v) & (NSHAPES - 1);
	}
	double t = now_s() - t0;
	sink = (int)idx;
	return t * 1e9 / (double)calls;
}

static double run_empty(int set, long calls)
{
	int acc = 0;
	double t0 = now_s();
	for (long i = 0; i < calls; i++)
		acc += empty_ptr(ARGS(shapes[set][i & (NSHAPES - 1)]));
	double t = now_s() - t0;
	sink = acc;
	return t * 1e9 / (double)calls;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof *v, cmp_double);
	return v[ROUNDS / 2];
}

int main(int argc, char **argv)
{
	int64_t lo[NARGS], hi[NARGS];
	long calls = 10000000;
	if (argc < NARGS + 1) {
		fprintf(stderr, "usage: %s LO:HI x%d [CALLS]\n", argv[0], NARGS);
		return 2;
	}
	for (int j = 0; j < NARGS; j++)
		if (sscanf(argv[1 + j], "%" SCNd64 ":%" SCNd64, &lo[j], &hi[j]) != 2 || lo[j] < 1 || hi[j] < lo[j]) {
			fprintf(stderr, "select: bad range '%s' (LO:HI, 1 <= LO <= HI)\n", argv[1 + j]);
			return 2;
		}
	if (argc > NARGS + 1)
		calls = atol(argv[NARGS + 1]);
	if (calls < 1)
		calls = 1;

	for (int i = 0; i < NSHAPES; i++)
		for (int j = 0; j < NARGS; j++) {
			shapes[0][i][j] = log_uniform(lo[j], hi[j]);
			shapes[1][i][j] = log_uniform(1, 2 * hi[j]) | 1;
			shapes[2][i][j] = (int64_t)(sqrt((double)lo[j] * (double)hi[j]) + 0.5);
		}

	static const char *const set_name[3] = {"range", "odd", "fixed"};
	double sel[3][ROUNDS], emp[3][ROUNDS], csel[ROUNDS], cemp[ROUNDS];
	long invalid[3] = {0, 0, 0};
	for (int set = 0; set < 3; set++) /* warm-up */
		run_select(set, calls / 10 + 1, &invalid[set]), run_empty(set, calls / 10 + 1);
	for (int r = 0; r < ROUNDS; r++) {
		for (int set = 0; set < 3; set++) {
			sel[set][r] = run_select(set, calls, &invalid[set]);
			emp[set][r] = run_empty(set, calls);
		}
		csel[r] = run_select_chained(0, calls);
		cemp[r] = run_empty_chained(0, calls);
	}
	for (int set = 0; set < 3; set++) {
		double s = median(sel[set]), e = median(emp[set]);
		printf("%s %s calls=%ld ns_select=%.2f ns_empty=%.2f ratio=%.2f invalid=%ld\n", STR(SELECT), set_name[set],
		       calls, s, e, s / e, invalid[set]);
	}
	double s = median(csel), e = median(cemp);
	printf("%s chained calls=%ld ns_select=%.2f ns_empty=%.2f ratio=%.2f invalid=%ld\n", STR(SELECT), calls, s, e,
	       s / e, invalid[0]);
	return 0;
}
