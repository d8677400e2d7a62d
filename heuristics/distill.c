/* The cost model distilled into the tree (issue 10): a model of each
 * contender's time fitted on the measured shapes predicts it on dense
 * shapes spread over (and a little beyond) the measured range, and the
 * tree learns from those predictions with the measured shapes. */
#include "heuristic_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The variants worth modelling: among the H_CONTEND_RANK fastest, or
 * within H_CONTEND of the fastest, on some training shape. A variant that
 * is neither anywhere measured is unlikely to win in between, and
 * predicting every variant on every dense shape is most of the work. */
#define H_CONTEND_RANK 3
#define H_CONTEND 1.1

static int contenders(const hmatrix *m, const int *train, int n, int *out)
{
	bool *in = xcalloc((size_t)m->nvariants + 1, 1);
	for (int i = 0; i < n; i++) {
		int s = train[i];
		for (int v = 0; v < m->nvariants; v++) {
			double l = h_lsd(m, s, v);
			if (l > log(H_CONTEND) && !isfinite(h_time(m, s, v)))
				continue;
			int faster = 0;
			for (int u = 0; u < m->nvariants && faster < H_CONTEND_RANK; u++)
				faster += h_lsd(m, s, u) < l || (h_lsd(m, s, u) == l && u < v);
			in[v] |= l <= log(H_CONTEND) || faster < H_CONTEND_RANK;
		}
	}
	int k = 0;
	for (int v = 0; v < m->nvariants; v++)
		if (in[v])
			out[k++] = v;
	free(in);
	return k;
}

/* Dense shapes over the training shapes' range widened by 1.25 on each
 * side, per argument a Latin hypercube in log space (every stratum once);
 * alignment as shapes come: half of the values rounded to a multiple of 16,
 * a quarter to a multiple of 4, an eighth to even, an eighth left as drawn. */
static void dense_rows(const hmatrix *m, const int *train, int n, int count, uint64_t seed, int64_t *rows)
{
	int d = m->nargs;
	int *perm = xmalloc((size_t)count * sizeof *perm + 1);
	for (int a = 0; a < d; a++) {
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		for (int i = 0; i < n; i++) {
			int64_t x = m->rows[(size_t)train[i] * d + a];
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		double llo = log(lo > 1 ? (double)lo / 1.25 : 1), lhi = log(hi > 1 ? (double)hi * 1.25 : 1);
		for (int i = 0; i < count; i++)
			perm[i] = i;
		for (int i = count - 1; i > 0; i--) {
			int j = (int)(h_mix(&seed) % (uint64_t)(i + 1));
			int t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (int i = 0; i < count; i++) {
			double u = (perm[i] + h_unit(&seed)) / count;
			double x = exp(llo + (lhi - llo) * u);
			double r = h_unit(&seed);
			double q = r < 0.5 ? 16 : r < 0.75 ? 4 : r < 0.875 ? 2 : 1;
			x = round(x / q) * q;
			/* within int64_t, and at most the measured maximum where that
			 * is near its edge */
			double top = (double)hi > 4e18 ? (double)hi : 4e18;
			int64_t v = x >= top ? hi : x < 1 ? 1 : (int64_t)x;
			if (lo <= 0 && hi <= 0)
				v = lo; /* a constant, non-positive argument stays as measured */
			rows[(size_t)i * d + a] = v;
		}
	}
	free(perm);
}

/* The cost model (cost_model) of log time, in three parts fitted one after the other,
 * each to what the ones before leave:
 *  1. per contender a ridge regression on the features m->cost_linear
 *     marks (log sizes, blocks, waves, padding: what log time is close to
 *     linear in);
 *  2. one boosted-tree model over every cost feature and every contender
 *     (alignment, tunables, regimes: what variants share);
 *  3. per contender a kernel ridge regression over the linear features
 *     (standardised), which makes the model pass through the measurements
 *     and move smoothly between them, so that a winner changes where the
 *     times cross rather than at a tree's bin edge.
 * On the H200 off-grid held-out sets, 1+2 gave the dispatch 1.038 (sgemm)
 * and 1.066 (softmax), 1+3 1.059 and 1.076, 1+2+3 1.031 and 1.070; only
 * with 3 do the known-answer tests (a breakpoint between two grid points)
 * pass. */
#define H_MAX_LINEAR 64
/* Kernel exp(-d^2 / (2 w^2)), d in standard deviations; ridge on its diagonal. */
#define H_KERNEL_WIDTH 0.5
#define H_KERNEL_RIDGE 0.01

static double kern(const cost_model *cm, const double *p, const double *q)
{
	double d = 0;
	for (int i = 0; i < cm->nlin; i++) {
		double t = p[i] - q[i];
		d += t * t;
	}
	double e = d / (2 * H_KERNEL_WIDTH * H_KERNEL_WIDTH);
	return e > 40 ? 0 : exp(-e); /* below 5e-18: nothing */
}

static double cm_linear(const cost_model *cm, const double *x, int j)
{
	const double *w = cm->w + (size_t)j * (cm->nlin + 1);
	double y = w[0];
	for (int i = 0; i < cm->nlin; i++)
		y += w[1 + i] * x[cm->lin[i]];
	return y;
}

static double cm_smooth(const cost_model *cm, const double *x, int j)
{
	if (!cm->kn[j])
		return 0;
	double q[H_MAX_LINEAR];
	for (int i = 0; i < cm->nlin; i++)
		q[i] = x[cm->lin[i]] / cm->kscale[i];
	double y = 0;
	for (int k = cm->koff[j]; k < cm->koff[j] + cm->kn[j]; k++)
		y += cm->alpha[k] * kern(cm, cm->kpts + (size_t)k * cm->nlin, q);
	return y;
}

double cm_predict(const cost_model *cm, const double *x, int j)
{
	if (cm->is_forest)
		return forest_predict(&cm->fr, x);
	return cm_linear(cm, x, j) + gbm_predict(&cm->g, x) + cm_smooth(cm, x, j);
}

/* Part 3 for contender j on its rows at[0..k) (residuals y). */
static void fit_smooth(cost_model *cm, const double *x, int nc, const double *y, const int *at, int k,
                       int j, int *off, double *ka)
{
	int nl = cm->nlin;
	cm->koff[j] = *off;
	for (int a = 0; a < k; a++) {
		for (int i = 0; i < nl; i++)
			cm->kpts[(size_t)(*off + a) * nl + i] = x[(size_t)at[a] * nc + cm->lin[i]] / cm->kscale[i];
		cm->alpha[*off + a] = y[at[a]];
	}
	for (int a = 0; a < k; a++)
		for (int b = 0; b <= a; b++)
			ka[(size_t)a * k + b] = kern(cm, cm->kpts + (size_t)(*off + a) * nl, cm->kpts + (size_t)(*off + b) * nl) +
			                        (a == b ? H_KERNEL_RIDGE : 0);
	if (k > 0 && spd_solve(ka, cm->alpha + *off, k)) {
		cm->kn[j] = k;
		*off += k;
	}
}

/* The rows both cost models learn from: every contender (cm->cv) that ran
 * at every training shape, its cost features into *x ([row * ncost]), its
 * log time or log slowdown into *y, its contender index into *var.
 * Returns the number of rows; the arrays are the caller's. */
static int contender_rows(const cost_model *cm, const hmatrix *m, const int *train, int n, bool slowdown,
                          double **x, double **y, int **var)
{
	int nc = m->ncost, ncv = cm->ncv;
	*x = xmalloc((size_t)n * ncv * nc * sizeof **x + 1);
	*y = xmalloc((size_t)n * ncv * sizeof **y + 1);
	*var = xmalloc((size_t)n * ncv * sizeof **var + 1);
	double *row = xmalloc((size_t)ncv * nc * sizeof *row + 1);
	int nrows = 0;
	for (int i = 0; i < n; i++) {
		int s = train[i];
		m->cost_row(m->valid_ctx, m->rows + (size_t)s * m->nargs, cm->cv, ncv, row);
		for (int j = 0; j < ncv; j++) {
			if (!isfinite(h_time(m, s, cm->cv[j])))
				continue;
			memcpy(*x + (size_t)nrows * nc, row + (size_t)j * nc, (size_t)nc * sizeof **x);
			(*var)[nrows] = j;
			(*y)[nrows++] = slowdown ? h_lsd(m, s, cm->cv[j]) : log(h_time(m, s, cm->cv[j]));
		}
	}
	free(row);
	return nrows;
}

void cm_fit(cost_model *cm, const hmatrix *m, const int *train, int n)
{
	memset(cm, 0, sizeof *cm);
	int nc = m->ncost;
	cm->cv = xmalloc((size_t)m->nvariants * sizeof *cm->cv + 1);
	cm->ncv = contenders(m, train, n, cm->cv);
	cm->lin = xmalloc((size_t)nc * sizeof *cm->lin + 1);
	for (int i = 0; i < nc && cm->nlin < H_MAX_LINEAR; i++)
		if (m->cost_linear && m->cost_linear[i])
			cm->lin[cm->nlin++] = i;
	int ncv = cm->ncv, L = cm->nlin + 1;
	double *x, *y;
	int *var;
	int nrows = contender_rows(cm, m, train, n, false, &x, &y, &var);
	/* each contender's rows */
	int *first = xcalloc((size_t)ncv + 2, sizeof *first), *at = xmalloc((size_t)nrows * sizeof *at + 1);
	for (int r = 0; r < nrows; r++)
		first[var[r] + 1]++;
	for (int j = 0; j < ncv; j++)
		first[j + 1] += first[j];
	{
		int *fill = xmalloc(((size_t)ncv + 1) * sizeof *fill);
		memcpy(fill, first, (size_t)ncv * sizeof *fill);
		for (int r = 0; r < nrows; r++)
			at[fill[var[r]]++] = r;
		free(fill);
	}
	/* 1: linear */
	cm->w = xcalloc((size_t)ncv * L + 1, sizeof *cm->w);
	double *lx = xmalloc((size_t)n * L * sizeof *lx + 1), *ly = xmalloc((size_t)n * sizeof *ly + 1);
	for (int j = 0; j < ncv; j++) {
		int k = 0;
		for (int a = first[j]; a < first[j + 1]; a++, k++) {
			lx[(size_t)k * L] = 1;
			for (int i = 0; i < cm->nlin; i++)
				lx[(size_t)k * L + 1 + i] = x[(size_t)at[a] * nc + cm->lin[i]];
			ly[k] = y[at[a]];
		}
		if (k > 0)
			ridge_fit(lx, ly, k, L, 0.1, true, cm->w + (size_t)j * L);
	}
	free(lx);
	free(ly);
	for (int r = 0; r < nrows; r++)
		y[r] -= cm_linear(cm, x + (size_t)r * nc, var[r]);
	/* 2: trees */
	gbm_params gp;
	gbm_params_default(&gp);
	gbm_fit(&cm->g, x, y, nrows, nc, &gp);
	for (int r = 0; r < nrows; r++)
		y[r] -= gbm_predict(&cm->g, x + (size_t)r * nc);
	/* 3: smooth */
	cm->kscale = xmalloc((size_t)cm->nlin * sizeof *cm->kscale + 1);
	for (int i = 0; i < cm->nlin; i++) {
		double mean = 0, v2 = 0;
		for (int r = 0; r < nrows; r++)
			mean += x[(size_t)r * nc + cm->lin[i]];
		mean /= nrows ? nrows : 1;
		for (int r = 0; r < nrows; r++) {
			double d = x[(size_t)r * nc + cm->lin[i]] - mean;
			v2 += d * d;
		}
		cm->kscale[i] = nrows && v2 > 0 ? sqrt(v2 / nrows) : 1;
	}
	cm->koff = xcalloc((size_t)ncv + 1, sizeof *cm->koff);
	cm->kn = xcalloc((size_t)ncv + 1, sizeof *cm->kn);
	cm->kpts = xmalloc((size_t)nrows * cm->nlin * sizeof *cm->kpts + 1);
	cm->alpha = xmalloc((size_t)nrows * sizeof *cm->alpha + 1);
	double *ka = xmalloc((size_t)n * n * sizeof *ka + 1);
	for (int j = 0, off = 0; j < ncv; j++)
		fit_smooth(cm, x, nc, y, at + first[j], first[j + 1] - first[j], j, &off, ka);
	free(ka);
	free(first);
	free(at);
	free(x);
	free(y);
	free(var);
}

/* The second cost model: extremely randomised trees (heuristics/forest.h)
 * over every contender's cost features at once, fitted to the log
 * slowdown (not the log time: what varies between variants at a shape is
 * what the trees should spend their splits on, not the shape's size). */
static void cm_fit_forest(cost_model *cm, const hmatrix *m, const int *train, int n, uint64_t seed)
{
	memset(cm, 0, sizeof *cm);
	cm->is_forest = true;
	int nc = m->ncost;
	cm->cv = xmalloc((size_t)m->nvariants * sizeof *cm->cv + 1);
	cm->ncv = contenders(m, train, n, cm->cv);
	double *x, *y;
	int *var;
	int nrows = contender_rows(cm, m, train, n, true, &x, &y, &var);
	forest_params fp;
	forest_params_default(&fp);
	fp.seed = seed;
	forest_fit(&cm->fr, x, y, nrows, nc, &fp);
	free(x);
	free(y);
	free(var);
}

void cm_finish(cost_model *cm)
{
	free(cm->cv);
	free(cm->lin);
	free(cm->w);
	free(cm->kscale);
	free(cm->koff);
	free(cm->kn);
	free(cm->kpts);
	free(cm->alpha);
	gbm_finish(&cm->g);
	forest_finish(&cm->fr);
	memset(cm, 0, sizeof *cm);
}

/* With weights: each dense shape weighs what the nearest measured
 * training shape (in log shape space) does, so that the predicted shapes
 * around a hot shape matter as it does; the measured ones keep theirs.
 * Scaled to mean 1. */
static void dense_weights(hmatrix *dm, const hmatrix *m, const int *train, int n, int nd)
{
	int d = m->nargs;
	dm->weight = xmalloc(((size_t)nd + (size_t)n) * sizeof *dm->weight + 1);
	for (int i = 0; i < nd; i++) {
		const int64_t *r = dm->rows + (size_t)i * d;
		double best = INFINITY, w = 1;
		for (int j = 0; j < n; j++) {
			const int64_t *q = m->rows + (size_t)train[j] * d;
			double dist = 0;
			for (int a = 0; a < d; a++) {
				double x = h_squash((double)r[a]) - h_squash((double)q[a]);
				dist += x * x;
			}
			if (dist < best) {
				best = dist;
				w = h_weight(m, train[j]);
			}
		}
		dm->weight[i] = w;
	}
	for (int j = 0; j < n; j++)
		dm->weight[nd + j] = h_weight(m, train[j]);
	h_normalise_weights(dm->weight, nd + n);
}

void distill_matrix(dense_set *ds, const hmatrix *m, const int *train, int n, int nd, uint64_t seed,
                    bool use_forest)
{
	cost_model *cm = &ds->cm;
	if (use_forest)
		cm_fit_forest(cm, m, train, n, seed);
	else
		cm_fit(cm, m, train, n);
	int nc = m->ncost, ncv = cm->ncv;
	double *row = xmalloc((size_t)ncv * nc * sizeof *row + 1);
	int total = nd + n;
	hmatrix *dm = &ds->dm;
	hmatrix_init(dm, total, m->nvariants, m->nfeatures);
	dm->nargs = m->nargs;
	dm->rows = xmalloc((size_t)total * m->nargs * sizeof *dm->rows + 1);
	dense_rows(m, train, n, nd, seed, dm->rows);
	for (int i = 0; i < nd; i++) {
		const int64_t *r = dm->rows + (size_t)i * m->nargs;
		m->row_info(m->valid_ctx, r, &dm->feat[(size_t)i * m->nfeatures], &dm->valid[(size_t)i * m->nvariants]);
		m->cost_row(m->valid_ctx, r, cm->cv, ncv, row);
		for (int j = 0; j < ncv; j++)
			if (h_valid(dm, i, cm->cv[j]))
				dm->time[(size_t)i * m->nvariants + cm->cv[j]] = exp(cm_predict(cm, row + (size_t)j * nc, j));
	}
	for (int i = 0; i < n; i++) {
		int s = train[i], t = nd + i;
		memcpy(dm->rows + (size_t)t * m->nargs, m->rows + (size_t)s * m->nargs, (size_t)m->nargs * sizeof *dm->rows);
		memcpy(&dm->feat[(size_t)t * m->nfeatures], &m->feat[(size_t)s * m->nfeatures], (size_t)m->nfeatures * sizeof *dm->feat);
		memcpy(&dm->valid[(size_t)t * m->nvariants], &m->valid[(size_t)s * m->nvariants], (size_t)m->nvariants * sizeof *dm->valid);
		memcpy(&dm->time[(size_t)t * m->nvariants], &m->time[(size_t)s * m->nvariants], (size_t)m->nvariants * sizeof *dm->time);
	}
	free(row);
	if (m->weight)
		dense_weights(dm, m, train, n, nd);
	hmatrix_update_oracle(dm);
	ds->shapes = xmalloc((size_t)total * sizeof *ds->shapes + 1);
	ds->n = 0;
	for (int s = 0; s < total; s++)
		if (isfinite(dm->oracle[s]))
			ds->shapes[ds->n++] = s;
}

void dense_finish(dense_set *ds)
{
	hmatrix_finish(&ds->dm);
	free(ds->shapes);
	cm_finish(&ds->cm);
}
