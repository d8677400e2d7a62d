#include "dispatch_check.h"

#include <stdlib.h>
#include <string.h>

#include "shapes.h"
#include "util.h"

/* The extremes: every combination of these where there are few (else each
 * argument through them, the others 1000). */
static const int64_t extreme[] = {INT64_MIN, INT64_MIN + 1, -(INT64_C(1) << 31) - 1, -(INT64_C(1) << 31), -1, 0,
                                  1, (INT64_C(1) << 31) - 1, INT64_C(1) << 31, INT64_C(1) << 32,
                                  (INT64_C(1) << 53) + 1, INT64_MAX};
enum { NRANDOM = 2000, NEXTREME = sizeof extreme / sizeof *extreme };

/* Shape s of the sequence: db's, then random ones (mostly in range, some
 * odd, some extreme), then the extremes (nx of them; product: every
 * combination). */
static void shape_at(const tune_db *db, long s, int nargs, bool product, uint64_t *seed, int64_t *row)
{
	if (s < db->nshapes) {
		memcpy(row, db->shapes + (size_t)s * nargs, (size_t)nargs * sizeof *row);
	} else if (s >= db->nshapes + NRANDOM) {
		long x = s - db->nshapes - NRANDOM;
		for (int a = 0; a < nargs; a++) {
			if (product) {
				row[a] = extreme[x % NEXTREME];
				x /= NEXTREME;
			} else {
				row[a] = x / NEXTREME == a ? extreme[x % NEXTREME] : 1000;
			}
		}
	} else {
		for (int a = 0; a < nargs; a++) {
			*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t x = *seed >> 20;
			switch (x % 8) {
			case 0: row[a] = (int64_t)(x % 3) - 1; break;
			case 1: row[a] = (int64_t)(x >> 4) * 1000003; break;
			default: row[a] = 1 + (int64_t)((x >> 4) % 8192); break;
			}
		}
	}
}

/* "dims v INTS -> ..." for each variant at the shape whose parameter values
 * are params (launch_dims takes every integer parameter: the shape
 * arguments, the values computed from them). */
static void write_dims(FILE *out, const dispatch *dp, const kernel *k, const int64_t *params)
{
	for (int i = 0; i < dp->nvariants; i++) {
		/* ... and the per-variant values, which launch_dims computes itself */
		const kernel *f = dispatch_function(k, &dp->variants[i]);
		int64_t own[k->nparams + 1];
		memcpy(own, params, (size_t)k->nparams * sizeof *own);
		eval_env le = {.tunables = dp->variants[i].values, .ntunables = f->ntunables,
		               .params = own, .nparams = k->nparams};
		int64_t dims[7];
		int which;
		/* a routine, a host launcher launches nothing itself */
		bool ok = dp->variants[i].routine < 0 && !f->host_launcher &&
		          ir_variant_params(f, dp->variants[i].values, own) == EVAL_OK &&
		          ir_launch_dims(&f->grid, &f->block, &f->smem, &le, dims, &which) == EVAL_OK &&
		          ir_dims_launchable(dims);
		fprintf(out, "dims %d", i);
		for (int j = 0; j < k->nparams; j++)
			if (ir_param_is_integer(&k->params[j]) && !ir_param_per_variant(k, j))
				fprintf(out, " %lld", (long long)params[j]);
		if (ok)
			fprintf(out, " -> %lld %lld %lld %lld %lld %lld %lld\n", (long long)dims[0],
			        (long long)dims[1], (long long)dims[2], (long long)dims[3],
			        (long long)dims[4], (long long)dims[5], (long long)dims[6]);
		else
			fprintf(out, " -> -1\n");
	}
}

void dispatch_check_write(FILE *out, const dispatch *dp, const kernel *k, const tune_db *db, long seed)
{
	int nargs = db->nshape_args;
	shape_set ss;
	shape_set_init(&ss, k);
	int64_t *row = xcalloc((size_t)nargs + 1, sizeof *row);
	int64_t *params = xcalloc((size_t)k->nparams + 1, sizeof *params);
	uint64_t rng = (uint64_t)seed * 0x9e3779b97f4a7c15ull + 1;
	long nx = 1;
	for (int a = 0; a < nargs && nx <= 5000; a++)
		nx *= NEXTREME;
	bool product = nx <= 5000;
	if (!product)
		nx = (long)nargs * NEXTREME;
	for (long s = 0; s < db->nshapes + NRANDOM + nx; s++) {
		shape_at(db, s, nargs, product, &rng, row);
		/* The dispatch as emitted: the same features and validity. */
		int e = dispatch_select(dp, k, row);
		fprintf(out, "select");
		for (int a = 0; a < nargs; a++)
			fprintf(out, " %lld", (long long)row[a]);
		fprintf(out, " -> %d\n", e);
		if (!k->is_global)
			continue;
		shape_param_values(k, &ss, row, params);
		write_dims(out, dp, k, params);
	}
	shape_set_finish(&ss);
	free(row);
	free(params);
}
