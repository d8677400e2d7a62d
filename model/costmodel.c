#include "costmodel.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void gbm_params_default(gbm_params *p)
{
	p->rounds = 150;
	p->max_depth = 3;
	p->min_leaf = 8;
	p->rate = 0.12;
	p->lambda = 1.0;
	p->bins = 64;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Bin edges of one feature: at most bins - 1 values, each the midpoint
 * between two neighbouring distinct values at a quantile of the column, so
 * that a value between two training values goes where it is nearer. */
static int make_edges(const double *col, int n, int bins, double *edges)
{
	double *s = xmalloc((size_t)n * sizeof *s + 1);
	memcpy(s, col, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_double);
	int distinct = 0;
	for (int i = 0; i < n; i++)
		distinct += i == 0 || s[i] != s[i - 1];
	int ne = 0;
	if (distinct <= bins) {
		for (int i = 1; i < n; i++)
			if (s[i] != s[i - 1])
				edges[ne++] = s[i - 1] + (s[i] - s[i - 1]) / 2;
	} else {
		for (int k = 1; k < bins; k++) {
			int i = (int)((int64_t)n * k / bins);
			/* the next distinct value above s[i] */
			int j = i;
			while (j < n && s[j] == s[i])
				j++;
			if (j >= n)
				break;
			double e = s[i] + (s[j] - s[i]) / 2;
			if (ne == 0 || e > edges[ne - 1])
				edges[ne++] = e;
		}
	}
	free(s);
	return ne;
}

/* The bin of x: how many edges lie below it. */
static int bin_of(const double *edges, int ne, double x)
{
	int lo = 0, hi = ne;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (x > edges[mid])
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

typedef struct fit_state {
	gbm *g;
	const gbm_params *p;
	int n, nf;
	const uint8_t *code;   /* [i * nf + f] */
	const double *edges;   /* [f * bins + b] */
	const int *nedges;
	double *resid;         /* y - prediction so far */
	double *hsum;          /* [f * bins + b] */
	int *hcount;
	size_t cap;
} fit_state;

static int new_node(fit_state *st)
{
	gbm *g = st->g;
	if ((size_t)g->nnodes == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 256;
		g->nodes = xrealloc(g->nodes, st->cap * sizeof *g->nodes);
	}
	g->nodes[g->nnodes] = (gbm_node){-1, 0, -1, -1, 0};
	return g->nnodes++;
}

static void grow(fit_state *st, int node, int *rows, int n, int depth)
{
	const gbm_params *p = st->p;
	int nf = st->nf, B = p->bins;
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += st->resid[rows[i]];
	int best_f = -1, best_b = -1;
	double best_gain = 1e-12;
	if (depth < p->max_depth && n >= 2 * p->min_leaf) {
		memset(st->hsum, 0, (size_t)nf * B * sizeof *st->hsum);
		memset(st->hcount, 0, (size_t)nf * B * sizeof *st->hcount);
		for (int i = 0; i < n; i++) {
			const uint8_t *c = st->code + (size_t)rows[i] * nf;
			double r = st->resid[rows[i]];
			for (int f = 0; f < nf; f++) {
				st->hsum[f * B + c[f]] += r;
				st->hcount[f * B + c[f]]++;
			}
		}
		double parent = sum * sum / (n + p->lambda);
		for (int f = 0; f < nf; f++) {
			double sl = 0;
			int nl = 0;
			for (int b = 0; b < st->nedges[f]; b++) {
				sl += st->hsum[f * B + b];
				nl += st->hcount[f * B + b];
				int nr = n - nl;
				if (nl < p->min_leaf)
					continue;
				if (nr < p->min_leaf)
					break;
				double sr = sum - sl;
				double gain = sl * sl / (nl + p->lambda) + sr * sr / (nr + p->lambda) - parent;
				if (gain > best_gain) {
					best_gain = gain;
					best_f = f;
					best_b = b;
				}
			}
		}
	}
	if (best_f < 0) {
		double v = p->rate * sum / (n + p->lambda);
		st->g->nodes[node].value = v;
		for (int i = 0; i < n; i++)
			st->resid[rows[i]] -= v;
		return;
	}
	/* partition: bin <= best_b to the left, stably */
	int *tmp = xmalloc((size_t)n * sizeof *tmp + 1);
	int nl = 0, k = 0;
	for (int i = 0; i < n; i++)
		if (st->code[(size_t)rows[i] * nf + best_f] <= best_b)
			rows[nl++] = rows[i];
		else
			tmp[k++] = rows[i];
	memcpy(rows + nl, tmp, (size_t)k * sizeof *tmp);
	free(tmp);
	int l = new_node(st), r = new_node(st);
	gbm_node *nd = &st->g->nodes[node];
	nd->feature = best_f;
	nd->threshold = st->edges[best_f * B + best_b];
	nd->left = l;
	nd->right = r;
	grow(st, l, rows, nl, depth + 1);
	grow(st, r, rows + nl, n - nl, depth + 1);
}

void gbm_fit(gbm *g, const double *x, const double *y, int n, int nf, const gbm_params *p)
{
	memset(g, 0, sizeof *g);
	g->nfeatures = nf;
	int B = p->bins < 2 ? 2 : p->bins > 255 ? 255 : p->bins;
	gbm_params pp = *p;
	pp.bins = B;
	if (n <= 0)
		return;
	double *edges = xmalloc((size_t)nf * B * sizeof *edges + 1);
	int *nedges = xcalloc((size_t)nf + 1, sizeof *nedges);
	double *col = xmalloc((size_t)n * sizeof *col + 1);
	uint8_t *code = xmalloc((size_t)n * nf + 1);
	for (int f = 0; f < nf; f++) {
		for (int i = 0; i < n; i++)
			col[i] = x[(size_t)i * nf + f];
		nedges[f] = make_edges(col, n, B, edges + (size_t)f * B);
		for (int i = 0; i < n; i++)
			code[(size_t)i * nf + f] = (uint8_t)bin_of(edges + (size_t)f * B, nedges[f], col[i]);
	}
	free(col);
	double mean = 0;
	for (int i = 0; i < n; i++)
		mean += y[i];
	g->base = mean / n;
	fit_state st = {g, &pp, n, nf, code, edges, nedges, NULL, NULL, NULL, 0};
	st.resid = xmalloc((size_t)n * sizeof *st.resid);
	for (int i = 0; i < n; i++)
		st.resid[i] = y[i] - g->base;
	st.hsum = xmalloc((size_t)nf * B * sizeof *st.hsum + 1);
	st.hcount = xmalloc((size_t)nf * B * sizeof *st.hcount + 1);
	g->roots = xmalloc((size_t)(pp.rounds > 0 ? pp.rounds : 1) * sizeof *g->roots);
	int *rows = xmalloc((size_t)n * sizeof *rows);
	for (int t = 0; t < pp.rounds; t++) {
		for (int i = 0; i < n; i++)
			rows[i] = i;
		int root = new_node(&st);
		g->roots[g->ntrees++] = root;
		grow(&st, root, rows, n, 0);
	}
	free(rows);
	free(st.resid);
	free(st.hsum);
	free(st.hcount);
	free(code);
	free(edges);
	free(nedges);
}

double gbm_predict(const gbm *g, const double *x)
{
	double y = g->base;
	for (int t = 0; t < g->ntrees; t++) {
		const gbm_node *n = &g->nodes[g->roots[t]];
		while (n->feature >= 0)
			n = &g->nodes[x[n->feature] <= n->threshold ? n->left : n->right];
		y += n->value;
	}
	return y;
}

void gbm_finish(gbm *g)
{
	free(g->nodes);
	free(g->roots);
	memset(g, 0, sizeof *g);
}

bool spd_solve(double *a, double *b, int n)
{
	for (int p = 0; p < n; p++)
		for (int q = 0; q <= p; q++) {
			double sum = a[(size_t)p * n + q];
			for (int k = 0; k < q; k++)
				sum -= a[(size_t)p * n + k] * a[(size_t)q * n + k];
			if (p == q) {
				if (!(sum > 1e-300))
					return false;
				a[(size_t)p * n + p] = sqrt(sum);
			} else {
				a[(size_t)p * n + q] = sum / a[(size_t)q * n + q];
			}
		}
	for (int p = 0; p < n; p++) { /* l z = b */
		double sum = b[p];
		for (int k = 0; k < p; k++)
			sum -= a[(size_t)p * n + k] * b[k];
		b[p] = sum / a[(size_t)p * n + p];
	}
	for (int p = n - 1; p >= 0; p--) { /* l^T x = z */
		double sum = b[p];
		for (int k = p + 1; k < n; k++)
			sum -= a[(size_t)k * n + p] * b[k];
		b[p] = sum / a[(size_t)p * n + p];
	}
	return true;
}

void ridge_fit(const double *x, const double *y, int n, int nf, double lambda, bool intercept, double *w)
{
	double *a = xcalloc((size_t)nf * nf + 1, sizeof *a);
	for (int p = 0; p < nf; p++)
		w[p] = 0;
	for (int i = 0; i < n; i++) {
		const double *r = x + (size_t)i * nf;
		for (int p = 0; p < nf; p++) {
			w[p] += r[p] * y[i];
			for (int q = 0; q <= p; q++)
				a[p * nf + q] += r[p] * r[q];
		}
	}
	for (int p = 0; p < nf; p++)
		a[p * nf + p] += (intercept && p == 0 ? 1e-9 : lambda) + 1e-12;
	if (!spd_solve(a, w, nf))
		for (int p = 0; p < nf; p++)
			w[p] = 0;
	free(a);
}
