#include "heuristic.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costmodel.h"
#include "forest.h"
#include "dispatch.h"

/* ---- Matrix -------------------------------------------------------------- */

void hmatrix_init(hmatrix *m, int nshapes, int nvariants, int nfeatures)
{
	memset(m, 0, sizeof *m);
	m->nshapes = nshapes;
	m->nvariants = nvariants;
	m->nfeatures = nfeatures;
	size_t cells = (size_t)nshapes * (size_t)nvariants;
	m->variant_names = xcalloc((size_t)nvariants + 1, sizeof *m->variant_names);
	m->feature_names = xcalloc((size_t)nfeatures + 1, sizeof *m->feature_names);
	m->shape_labels = xcalloc((size_t)nshapes + 1, sizeof *m->shape_labels);
	m->time = xmalloc((cells + 1) * sizeof *m->time);
	m->valid = xmalloc((cells + 1) * sizeof *m->valid);
	for (size_t i = 0; i < cells; i++) {
		m->time[i] = INFINITY;
		m->valid[i] = true;
	}
	m->feat = xcalloc((size_t)nshapes * (size_t)nfeatures + 1, sizeof *m->feat);
	m->oracle = xmalloc(((size_t)nshapes + 1) * sizeof *m->oracle);
}

void hmatrix_finish(hmatrix *m)
{
	for (int i = 0; i < m->nvariants; i++)
		free(m->variant_names[i]);
	for (int i = 0; i < m->nfeatures; i++)
		free(m->feature_names[i]);
	for (int i = 0; i < m->nshapes; i++)
		free(m->shape_labels[i]);
	free(m->variant_names);
	free(m->feature_names);
	free(m->shape_labels);
	free(m->time);
	free(m->valid);
	free(m->feat);
	free(m->oracle);
	free(m->rows);
	free(m->lsd);
	free(m->failed);
	free(m->weight);
	free(m->order);
	memset(m, 0, sizeof *m);
}

static void sort_features(hmatrix *m);

void hmatrix_update_oracle(hmatrix *m)
{
	for (int s = 0; s < m->nshapes; s++) {
		double best = INFINITY;
		for (int v = 0; v < m->nvariants; v++)
			if (h_valid(m, s, v) && h_time(m, s, v) < best)
				best = h_time(m, s, v);
		m->oracle[s] = best;
	}
	free(m->lsd);
	m->lsd = xmalloc((size_t)m->nshapes * (size_t)m->nvariants * sizeof *m->lsd + 1);
	for (int s = 0; s < m->nshapes; s++)
		for (int v = 0; v < m->nvariants; v++)
			m->lsd[(size_t)s * m->nvariants + v] = log(h_slowdown(m, s, v));
	sort_features(m);
}

double h_slowdown(const hmatrix *m, int s, int v)
{
	if (v >= 0 && m->failed && m->failed[(size_t)s * m->nvariants + v])
		return H_FAIL_SLOWDOWN;
	if (v < 0 || !h_valid(m, s, v) || !isfinite(h_time(m, s, v)) || !isfinite(m->oracle[s]))
		return H_MISS_SLOWDOWN;
	double r = h_time(m, s, v) / m->oracle[s];
	return r < H_MISS_SLOWDOWN ? r : H_MISS_SLOWDOWN;
}

/* Log slowdowns, from the table hmatrix_update_oracle made: the
 * cross-validation asks for each of them hundreds of times. */
static double lsd(const hmatrix *m, int s, int v)
{
	if (m->lsd && v >= 0)
		return m->lsd[(size_t)s * m->nvariants + v];
	return log(h_slowdown(m, s, v));
}

/* What the subset, the trees and the single variant minimise: the log
 * slowdown weighted by the shape's weight. */
static double wlsd(const hmatrix *m, int s, int v) { return h_weight(m, s) * lsd(m, s, v); }

static double weight_sum(const hmatrix *m, const int *shapes, int n)
{
	double w = 0;
	for (int i = 0; i < n; i++)
		w += h_weight(m, shapes[i]);
	return w;
}

void h_normalise_weights(double *w, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += w[i];
	for (int i = 0; sum > 0 && i < n; i++)
		w[i] *= n / sum;
}

/* ---- Subset ---------------------------------------------------------------- */

int h_select_subset(const hmatrix *m, const int *shapes, int nshapes, int max_variants,
                    double goal, int *out)
{
	if (nshapes == 0 || m->nvariants == 0)
		return 0;
	double *best = xmalloc((size_t)nshapes * sizeof *best);
	bool *taken = xcalloc((size_t)m->nvariants, sizeof *taken);
	for (int i = 0; i < nshapes; i++)
		best[i] = h_weight(m, shapes[i]) * log(H_MISS_SLOWDOWN);
	double wsum = weight_sum(m, shapes, nshapes);
	double current = wsum * log(H_MISS_SLOWDOWN);
	/* a variant that ran on none of the shapes improves nothing (most of a
	 * dense matrix's variants, which only the contenders have times in) */
	for (int v = 0; v < m->nvariants; v++) {
		bool ran = false;
		for (int i = 0; i < nshapes && !ran; i++)
			ran = isfinite(h_time(m, shapes[i], v));
		taken[v] = !ran;
	}
	int n = 0;
	while (n < max_variants) {
		int pick = -1;
		double pick_score = current;
		for (int v = 0; v < m->nvariants; v++) {
			if (taken[v])
				continue;
			double score = 0;
			for (int i = 0; i < nshapes; i++) {
				double l = wlsd(m, shapes[i], v);
				score += l < best[i] ? l : best[i];
			}
			if (score < pick_score - 1e-12) {
				pick = v;
				pick_score = score;
			}
		}
		if (pick < 0)
			break; /* nothing improves the subset */
		taken[pick] = true;
		out[n++] = pick;
		for (int i = 0; i < nshapes; i++) {
			double l = wlsd(m, shapes[i], pick);
			if (l < best[i])
				best[i] = l;
		}
		current = pick_score;
		if (exp(current / wsum) <= goal)
			break;
	}
	free(best);
	free(taken);
	return n;
}

/* Probe k of shape s: the shape (k = 0), or one argument one up or one
 * down. */
static void make_probe(const hmatrix *m, int s, int k, int64_t *p)
{
	memcpy(p, m->rows + (size_t)s * m->nargs, (size_t)m->nargs * sizeof *p);
	int64_t *x = k > 0 ? &p[(k - 1) / 2] : NULL;
	if (x && k % 2 && *x < INT64_MAX) /* one up, one down: within int64_t */
		(*x)++;
	else if (x && !(k % 2) && *x > INT64_MIN)
		(*x)--;
}

/* Validity at every probe of every shape of probe_m, computed once by
 * h_build ([(s * per + k) * nvariants + v]): cross-validation covers the
 * same shapes again and again. */
static const hmatrix *probe_m;
static bool *probe_valid;

int h_cover(const hmatrix *m, const int *shapes, int nshapes, int *subset, int *n)
{
	if (!m->valid_at || !m->rows || m->nargs == 0)
		return 0;
	/* Probes: each shape, and each with one argument one up or one down
	 * (where that stays in int64_t: at INT64_MAX the probe is the shape). */
	int per = 1 + 2 * m->nargs;
	int nprobes = nshapes * per;
	int64_t *probes = xmalloc((size_t)nprobes * (size_t)m->nargs * sizeof *probes + 1);
	for (int i = 0; i < nshapes; i++)
		for (int k = 0; k < per; k++)
			make_probe(m, shapes[i], k, probes + ((size_t)i * per + k) * m->nargs);
	/* valid[p][v] */
	bool *valid = xmalloc((size_t)nprobes * (size_t)m->nvariants + 1);
	bool *any = xcalloc((size_t)nprobes + 1, 1);
	for (int p = 0; p < nprobes; p++)
		for (int v = 0; v < m->nvariants; v++) {
			bool ok = m == probe_m
				? probe_valid[((size_t)shapes[p / per] * per + (size_t)(p % per)) * m->nvariants + v]
				: m->valid_at(m->valid_ctx, probes + (size_t)p * m->nargs, v);
			valid[(size_t)p * m->nvariants + v] = ok;
			any[p] |= ok;
		}
	bool *in = xcalloc((size_t)m->nvariants + 1, 1);
	for (int i = 0; i < *n; i++)
		in[subset[i]] = true;
	int added = 0;
	for (;;) {
		bool *covered = xcalloc((size_t)nprobes + 1, 1);
		int open = 0;
		for (int p = 0; p < nprobes; p++) {
			for (int i = 0; i < *n && !covered[p]; i++)
				covered[p] = valid[(size_t)p * m->nvariants + subset[i]];
			open += any[p] && !covered[p];
		}
		if (open == 0) {
			free(covered);
			break;
		}
		int pick = -1, pick_count = 0;
		double pick_cost = INFINITY;
		for (int v = 0; v < m->nvariants; v++) {
			if (in[v])
				continue;
			int count = 0;
			for (int p = 0; p < nprobes; p++)
				count += any[p] && !covered[p] && valid[(size_t)p * m->nvariants + v];
			if (count == 0 || count < pick_count)
				continue;
			double cost = 0;
			for (int i = 0; i < nshapes; i++)
				cost += wlsd(m, shapes[i], v);
			if (count > pick_count || cost < pick_cost) {
				pick = v;
				pick_count = count;
				pick_cost = cost;
			}
		}
		free(covered);
		if (pick < 0)
			break;
		in[pick] = true;
		subset[(*n)++] = pick;
		added++;
	}
	free(probes);
	free(valid);
	free(any);
	free(in);
	return added;
}

/* ---- Tree ------------------------------------------------------------------- */

static int add_node(htree *t)
{
	if ((size_t)t->nnodes == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->nodes = xrealloc(t->nodes, t->cap * sizeof *t->nodes);
	}
	memset(&t->nodes[t->nnodes], 0, sizeof *t->nodes);
	t->nodes[t->nnodes].feature = -1;
	return t->nnodes++;
}

/* Alignment classes: shapes where the same subset variants are valid (an
 * AOTC_VALID_IF like K % 4 == 0 splits the shapes into such classes). A
 * leaf serves every class with its own best variant (see make_leaf), so
 * the cost of a set of shapes is, per class, the cheapest variant valid in
 * it. */
/* sort_by_feature's marks, per matrix shape: each fit has its own, folds
 * fitting trees on one matrix from several threads. */
typedef struct sort_scratch {
	unsigned *mark;
	unsigned stamp;
} sort_scratch;

typedef struct fit_ctx {
	const hmatrix *m;
	const int *subset;
	int nsubset;
	const htree_params *p;
	htree *t;
	int *cls;               /* per matrix shape (those fitted on) */
	int ncls;
	bool *cls_valid;        /* [c * nsubset + i] */
	struct sort_scratch *ss;
} fit_ctx;

typedef struct ranked {
	int v;
	double cost;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->v - y->v;
}

static void find_classes(fit_ctx *c, const int *shapes, int n)
{
	const hmatrix *m = c->m;
	int V = c->nsubset;
	c->cls = xcalloc((size_t)m->nshapes + 1, sizeof *c->cls);
	c->cls_valid = xmalloc((size_t)V + 1);
	size_t cap = 1;
	c->ncls = 0;
	for (int j = 0; j < n; j++) {
		int s = shapes[j], k = 0;
		for (; k < c->ncls; k++) {
			int i = 0;
			while (i < V && c->cls_valid[(size_t)k * V + i] == h_valid(m, s, c->subset[i]))
				i++;
			if (i == V)
				break;
		}
		if (k == c->ncls) {
			if ((size_t)c->ncls == cap) {
				cap *= 2;
				c->cls_valid = xrealloc(c->cls_valid, cap * (size_t)V + 1);
			}
			for (int i = 0; i < V; i++)
				c->cls_valid[(size_t)k * V + i] = h_valid(m, s, c->subset[i]);
			c->ncls++;
		}
		c->cls[s] = k;
	}
}

/* Cost of a set of shapes given sum[k * V + i] (variant i's summed
 * weighted log slowdown over the set's shapes of class k) and count[k]
 * (their summed weight): per class the cheapest valid variant; a class
 * with none is charged as missed. */
static double class_cost(const fit_ctx *c, const double *sum, const double *count)
{
	int V = c->nsubset;
	double total = 0;
	for (int k = 0; k < c->ncls; k++) {
		if (count[k] <= 0)
			continue;
		double best = count[k] * log(H_MISS_SLOWDOWN);
		for (int i = 0; i < V; i++)
			if (c->cls_valid[(size_t)k * V + i] && sum[(size_t)k * V + i] < best)
				best = sum[(size_t)k * V + i];
		total += best;
	}
	return total;
}

/* The leaf's ordered fallback list (the first valid variant wins): each
 * alignment class's cheapest valid variant comes before every other
 * variant valid in that class, where the classes allow it (otherwise the
 * variant serving more shapes goes first); then the rest of the subset by
 * mean log slowdown over the shapes where each is valid, for classes no
 * training shape had. */
static void make_leaf(fit_ctx *c, int node, const int *shapes, int n)
{
	const hmatrix *m = c->m;
	int V = c->nsubset, K = c->ncls;
	double *sum = xcalloc((size_t)K * V + 1, sizeof *sum);
	double *count = xcalloc((size_t)K + 1, sizeof *count); /* weights */
	for (int j = 0; j < n; j++) {
		int k = c->cls[shapes[j]];
		count[k] += h_weight(m, shapes[j]);
		for (int i = 0; i < V; i++)
			sum[(size_t)k * V + i] += wlsd(m, shapes[j], c->subset[i]);
	}
	int *best = xmalloc((size_t)K * sizeof *best + 1);
	for (int k = 0; k < K; k++) {
		best[k] = -1;
		for (int i = 0; i < V; i++)
			if (c->cls_valid[(size_t)k * V + i] &&
			    (best[k] < 0 || sum[(size_t)k * V + i] < sum[(size_t)k * V + best[k]]))
				best[k] = i;
	}
	hnode *nd = &c->t->nodes[node];
	nd->feature = -1;
	nd->order = xmalloc((size_t)V * sizeof *nd->order + 1);
	nd->norder = 0;
	bool *placed = xcalloc((size_t)V + 1, 1), *served = xcalloc((size_t)K + 1, 1);
	for (;;) {
		/* among the open classes' best variants: one that takes no open
		 * class whose best is another, serving most shapes */
		int pick = -1;
		double pick_shapes = -1;
		bool pick_clean = false;
		for (int k = 0; k < K; k++) {
			int b = best[k];
			if (served[k] || count[k] <= 0 || b < 0 || placed[b])
				continue;
			bool clean = true;
			double takes = 0;
			for (int q = 0; q < K; q++)
				if (!served[q] && count[q] > 0 && c->cls_valid[(size_t)q * V + b]) {
					takes += count[q];
					clean &= best[q] == b;
				}
			if ((clean && !pick_clean) || (clean == pick_clean && takes > pick_shapes)) {
				pick = b;
				pick_shapes = takes;
				pick_clean = clean;
			}
		}
		if (pick < 0)
			break;
		placed[pick] = true;
		nd->order[nd->norder++] = c->subset[pick];
		for (int q = 0; q < K; q++)
			served[q] |= c->cls_valid[(size_t)q * V + pick];
	}
	ranked *r = xmalloc((size_t)V * sizeof *r + 1);
	int nr = 0;
	for (int i = 0; i < V; i++) {
		if (placed[i])
			continue;
		double tot = 0, valid = 0;
		for (int k = 0; k < K; k++)
			if (c->cls_valid[(size_t)k * V + i]) {
				tot += sum[(size_t)k * V + i];
				valid += count[k];
			}
		r[nr++] = (ranked){c->subset[i], valid > 0 ? tot / valid : 2 * log(H_MISS_SLOWDOWN) + (n ? 0 : i)};
	}
	qsort(r, (size_t)nr, sizeof *r, cmp_ranked);
	for (int i = 0; i < nr; i++)
		nd->order[nd->norder++] = r[i].v;
	nd->cost = 0;
	for (int j = 0; j < n; j++) {
		int v = -1;
		for (int i = 0; i < nd->norder && v < 0; i++)
			if (h_valid(m, shapes[j], nd->order[i]))
				v = nd->order[i];
		nd->cost += wlsd(m, shapes[j], v);
	}
	free(r);
	free(placed);
	free(served);
	free(best);
	free(sum);
	free(count);
}

static _Thread_local const hmatrix *sort_m; /* qsort context: the heuristic runs folds on threads */
static _Thread_local int sort_f;

static int cmp_by_feature(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	double fx = h_feat(sort_m, x, sort_f), fy = h_feat(sort_m, y, sort_f);
	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x - y;
}

static void sort_features(hmatrix *m)
{
	free(m->order);
	m->order = xmalloc((size_t)m->nfeatures * (size_t)m->nshapes * sizeof *m->order + 1);
	for (int f = 0; f < m->nfeatures; f++) {
		int *ot = m->order + (size_t)f * m->nshapes;
		for (int s = 0; s < m->nshapes; s++)
			ot[s] = s;
		sort_m = m;
		sort_f = f;
		qsort(ot, (size_t)m->nshapes, sizeof *ot, cmp_by_feature);
	}
}

/* A node holding a fair share of the shapes takes its sorted list from the
 * matrix's order in one pass instead of sorting (the same list, the order
 * being total). */
static void sort_by_feature(const hmatrix *m, sort_scratch *ss, int *sorted, const int *shapes, int n, int f)
{
	if (m->order && (double)n * log2((double)n + 1) * 4 > m->nshapes) {
		if (!ss->mark)
			ss->mark = xcalloc((size_t)m->nshapes + 1, sizeof *ss->mark);
		if (++ss->stamp == 0) {
			memset(ss->mark, 0, (size_t)m->nshapes * sizeof *ss->mark);
			ss->stamp = 1;
		}
		for (int i = 0; i < n; i++)
			ss->mark[shapes[i]] = ss->stamp;
		const int *o = m->order + (size_t)f * m->nshapes;
		int k = 0;
		for (int i = 0; i < m->nshapes; i++)
			if (ss->mark[o[i]] == ss->stamp)
				sorted[k++] = o[i];
		return;
	}
	memcpy(sorted, shapes, (size_t)n * sizeof *sorted);
	sort_m = m;
	sort_f = f;
	qsort(sorted, (size_t)n, sizeof *sorted, cmp_by_feature);
}

/* An integer threshold t with a <= t < b: the geometric middle for
 * positive values (shape features are mostly sizes), else the middle. */
static double threshold_between(double a, double b)
{
	double t = a > 0 ? floor(sqrt(a * b)) : floor((a + b) / 2);
	if (t < a)
		t = a;
	if (t >= b)
		t = b - 1;
	return t;
}

static void grow(fit_ctx *c, int node, int *shapes, int n, int depth)
{
	const hmatrix *m = c->m;
	c->t->nodes[node].nshapes = n;
	int V = c->nsubset, K = c->ncls;
	if (depth >= c->p->max_depth || n < 2 * c->p->min_leaf || n < 2 || V < 2) {
		make_leaf(c, node, shapes, n);
		return;
	}
	/* per class and variant: the node's summed cost, and prefix sums in
	 * each feature's order */
	size_t cells = (size_t)K * V;
	double *total = xcalloc(cells + 1, sizeof *total), *prefix = xmalloc((cells + 1) * sizeof *prefix);
	double *rest = xmalloc((cells + 1) * sizeof *rest);
	/* class weights: all, left of the cut, right of it */
	double *count = xcalloc((size_t)K + 1, sizeof *count), *lcount = xmalloc(((size_t)K + 1) * sizeof *lcount);
	double *rcount = xmalloc(((size_t)K + 1) * sizeof *rcount);
	for (int j = 0; j < n; j++) {
		int k = c->cls[shapes[j]];
		count[k] += h_weight(m, shapes[j]);
		for (int i = 0; i < V; i++)
			total[(size_t)k * V + i] += wlsd(m, shapes[j], c->subset[i]);
	}
	double parent = class_cost(c, total, count);
	int *sorted = xmalloc((size_t)n * sizeof *sorted);
	int best_f = -1, best_pos = -1;
	/* An absolute floor: a split must save what min_gain is worth on a
	 * minimum leaf, wherever it is. A floor relative to the node (its
	 * geomean lowered by min_gain) refused real local wins near the root:
	 * 16 of 2,100 shapes 1.37x faster cannot lower all of them by 0.5%. */
	double best_cost = parent - (c->p->min_leaf > 1 ? c->p->min_leaf : 1) * log(c->p->min_gain), best_t = 0;
	for (int f = 0; f < m->nfeatures; f++) {
		sort_by_feature(m, c->ss, sorted, shapes, n, f);
		memset(prefix, 0, cells * sizeof *prefix);
		memset(lcount, 0, (size_t)K * sizeof *lcount);
		for (int pos = 1; pos < n; pos++) {
			int s = sorted[pos - 1], k = c->cls[s];
			lcount[k] += h_weight(m, s);
			for (int i = 0; i < V; i++)
				prefix[(size_t)k * V + i] += wlsd(m, s, c->subset[i]);
			double a = h_feat(m, s, f), b = h_feat(m, sorted[pos], f);
			if (a == b || pos < c->p->min_leaf || n - pos < c->p->min_leaf)
				continue;
			for (size_t x = 0; x < cells; x++)
				rest[x] = total[x] - prefix[x];
			for (int q = 0; q < K; q++)
				rcount[q] = count[q] - lcount[q];
			double cost = class_cost(c, prefix, lcount) + class_cost(c, rest, rcount);
			/* strictly better, so the first feature and position win ties */
			if (cost < best_cost - 1e-12) {
				best_cost = cost;
				best_f = f;
				best_pos = pos;
				best_t = threshold_between(a, b);
			}
		}
	}
	free(total);
	free(prefix);
	free(rest);
	free(count);
	free(lcount);
	free(rcount);
	if (best_f < 0) {
		free(sorted);
		make_leaf(c, node, shapes, n);
		return;
	}
	/* an inner node keeps the order it would have as a leaf: the tree cut
	 * at a smaller depth (cross-validation of tree sizes) uses it */
	make_leaf(c, node, shapes, n);
	sort_by_feature(m, c->ss, sorted, shapes, n, best_f);
	int l = add_node(c->t), r = add_node(c->t);
	hnode *nd = &c->t->nodes[node];
	nd->feature = best_f;
	nd->threshold = best_t;
	nd->left = l;
	nd->right = r;
	nd->cost = best_cost;
	grow(c, l, sorted, best_pos, depth + 1);
	grow(c, r, sorted + best_pos, n - best_pos, depth + 1);
	free(sorted);
}

void htree_fit(htree *t, const hmatrix *m, const int *shapes, int nshapes, const int *subset,
               int nsubset, const htree_params *p)
{
	memset(t, 0, sizeof *t);
	t->max_depth = p->max_depth;
	t->min_leaf = p->min_leaf;
	sort_scratch ss = {0};
	fit_ctx c = {m, subset, nsubset, p, t, NULL, 0, NULL, &ss};
	find_classes(&c, shapes, nshapes);
	int *work = xmalloc((size_t)nshapes * sizeof *work + 1);
	memcpy(work, shapes, (size_t)nshapes * sizeof *work);
	int root = add_node(t);
	grow(&c, root, work, nshapes, 0);
	free(work);
	free(c.cls);
	free(c.cls_valid);
	free(ss.mark);
}

void htree_finish(htree *t)
{
	for (int i = 0; i < t->nnodes; i++)
		free(t->nodes[i].order);
	free(t->nodes);
	memset(t, 0, sizeof *t);
}

/* The choice of t cut at depth: its nodes at that depth taken as leaves. */
static int choose_cut(const htree *t, const double *feat, const bool *valid, int depth)
{
	if (!t->nnodes)
		return -1;
	const hnode *n = &t->nodes[0];
	for (int d = 0; n->feature >= 0 && d < depth; d++)
		n = &t->nodes[feat[n->feature] <= n->threshold ? n->left : n->right];
	for (int i = 0; i < n->norder; i++)
		if (valid[n->order[i]])
			return n->order[i];
	return -1;
}

int htree_choose(const htree *t, const double *feat, const bool *valid)
{
	return choose_cut(t, feat, valid, INT_MAX);
}

static int depth_of(const htree *t, int i)
{
	const hnode *n = &t->nodes[i];
	if (n->feature < 0)
		return 0;
	int l = depth_of(t, n->left), r = depth_of(t, n->right);
	return 1 + (l > r ? l : r);
}

int htree_depth(const htree *t) { return t->nnodes ? depth_of(t, 0) : 0; }

int htree_leaves(const htree *t)
{
	int n = 0;
	for (int i = 0; i < t->nnodes; i++)
		n += t->nodes[i].feature < 0;
	return n;
}

static void print_node(strbuf *sb, const htree *t, const hmatrix *m, int i, int indent)
{
	const hnode *n = &t->nodes[i];
	if (n->feature < 0) {
		strbuf_printf(sb, "%*s-> %s   [%d shapes]\n", indent, "", n->norder ? m->variant_names[n->order[0]] : "-1",
		              n->nshapes);
		if (n->norder > 1) {
			/* the fallbacks, wrapped under the leaf */
			strbuf_printf(sb, "%*selse", indent + 3, "");
			size_t col = (size_t)indent + 7;
			strbuf item;
			strbuf_init(&item);
			for (int k = 1; k < n->norder; k++) {
				item.len = 0;
				strbuf_printf(&item, "%s%s", m->variant_names[n->order[k]], k + 1 < n->norder ? "," : "");
				strbuf_put_wrapped(sb, &col, item.data, indent + 7, H_TEXT_WIDTH);
			}
			strbuf_finish(&item);
			strbuf_putc(sb, '\n');
		}
		return;
	}
	strbuf_printf(sb, "%*sif (%s <= %.0f)\n", indent, "", m->feature_names[n->feature], n->threshold);
	print_node(sb, t, m, n->left, indent + 2);
	strbuf_printf(sb, "%*selse\n", indent, "");
	print_node(sb, t, m, n->right, indent + 2);
}

void htree_print(strbuf *sb, const htree *t, const hmatrix *m)
{
	if (t->nnodes)
		print_node(sb, t, m, 0, 2);
}

/* ---- Selectors ------------------------------------------------------------- */

void hoptions_default(hoptions *o)
{
	o->max_variants = 16;
	o->goal = 1.0;
	o->folds = 5;
	o->seed = 1;
	o->min_gain = 1.005;
	o->distill = true;
}

/* The best single variant over shapes, with all variants as its fallback
 * order (cheapest first). */
static int single_fit(const hmatrix *m, const int *shapes, int n, int *order)
{
	ranked *r = xmalloc((size_t)m->nvariants * sizeof *r + 1);
	for (int v = 0; v < m->nvariants; v++) {
		r[v].v = v;
		r[v].cost = 0;
		for (int j = 0; j < n; j++)
			r[v].cost += wlsd(m, shapes[j], v);
	}
	qsort(r, (size_t)m->nvariants, sizeof *r, cmp_ranked);
	for (int v = 0; v < m->nvariants; v++)
		order[v] = r[v].v;
	int best = m->nvariants ? r[0].v : -1;
	free(r);
	return best;
}

static int first_valid(const bool *valid, const int *order, int n)
{
	for (int i = 0; i < n; i++)
		if (valid[order[i]])
			return order[i];
	return -1;
}

static double squash(double x) { return x >= 0 ? log2(1 + x) : -log2(1 - x); }

/* A k-d tree over the training shapes in squashed, standardised feature
 * space (the features with a positive scale), so that a nearest-neighbour
 * query costs about log n instead of n: with a linear scan, report on
 * 300,000 shapes was quadratic. It gives exactly the scan's answer: the
 * distance is summed the same way, a subtree is skipped only when the
 * splitting plane alone is farther than the best so far, and ties go to the
 * first training position. */
typedef struct nn_node {
	int lo, hi;           /* range of perm; a leaf when left < 0 */
	int dim, left, right;
	double split;         /* points in left are <= split, in right >= */
} nn_node;

typedef struct nn_index {
	int nf;               /* active features */
	double *scale;        /* nf */
	double *q;            /* squashed values, [training position * nf + active feature] */
	int *perm;            /* training positions in tree order */
	nn_node *nodes;
	int nnodes;
} nn_index;

enum { NN_LEAF = 8 };

static _Thread_local const nn_index *sort_ix;
static _Thread_local int sort_dim;

static int cmp_by_dim(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	double fx = sort_ix->q[(size_t)x * sort_ix->nf + sort_dim];
	double fy = sort_ix->q[(size_t)y * sort_ix->nf + sort_dim];
	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x - y;
}

static int nn_grow(nn_index *ix, int lo, int hi)
{
	int id = ix->nnodes++;
	ix->nodes[id] = (nn_node){lo, hi, 0, -1, -1, 0};
	if (hi - lo <= NN_LEAF)
		return id;
	/* Split the widest dimension at the median. */
	double widest = -1;
	for (int f = 0; f < ix->nf; f++) {
		double a = INFINITY, b = -INFINITY;
		for (int i = lo; i < hi; i++) {
			double v = ix->q[(size_t)ix->perm[i] * ix->nf + f];
			a = v < a ? v : a;
			b = v > b ? v : b;
		}
		if (b - a > widest) {
			widest = b - a;
			ix->nodes[id].dim = f;
		}
	}
	if (widest <= 0)
		return id; /* all the same point */
	sort_ix = ix;
	sort_dim = ix->nodes[id].dim;
	qsort(ix->perm + lo, (size_t)(hi - lo), sizeof *ix->perm, cmp_by_dim);
	int mid = lo + (hi - lo) / 2;
	ix->nodes[id].split = ix->q[(size_t)ix->perm[mid] * ix->nf + ix->nodes[id].dim];
	int l = nn_grow(ix, lo, mid);
	int r = nn_grow(ix, mid, hi);
	ix->nodes[id].left = l;
	ix->nodes[id].right = r;
	return id;
}

/* NULL (the scan is used) when a scale is not a finite number. */
static nn_index *nn_build(const hmatrix *m, const int *train, int n, const double *scale)
{
	nn_index *ix = xcalloc(1, sizeof *ix);
	ix->scale = xmalloc((size_t)m->nfeatures * sizeof *ix->scale + 1);
	int *active = xmalloc((size_t)m->nfeatures * sizeof *active + 1);
	for (int f = 0; f < m->nfeatures; f++) {
		if (scale[f] <= 0)
			continue;
		if (!isfinite(scale[f])) {
			free(active);
			free(ix->scale);
			free(ix);
			return NULL;
		}
		ix->scale[ix->nf] = scale[f];
		active[ix->nf++] = f;
	}
	ix->q = xmalloc((size_t)n * (size_t)ix->nf * sizeof *ix->q + 1);
	ix->perm = xmalloc((size_t)n * sizeof *ix->perm + 1);
	for (int j = 0; j < n; j++) {
		ix->perm[j] = j;
		for (int f = 0; f < ix->nf; f++)
			ix->q[(size_t)j * ix->nf + f] = squash(h_feat(m, train[j], active[f]));
	}
	free(active);
	ix->nodes = xmalloc((4 * (size_t)n / NN_LEAF + 4) * sizeof *ix->nodes);
	nn_grow(ix, 0, n);
	return ix;
}

static void nn_destroy(nn_index *ix)
{
	if (!ix)
		return;
	free(ix->scale);
	free(ix->q);
	free(ix->perm);
	free(ix->nodes);
	free(ix);
}

static void nn_search(const nn_index *ix, int id, const double *qs, double *bd, int *bj)
{
	const nn_node *nd = &ix->nodes[id];
	if (nd->left < 0) {
		for (int i = nd->lo; i < nd->hi; i++) {
			int j = ix->perm[i];
			const double *p = ix->q + (size_t)j * ix->nf;
			double d = 0;
			for (int f = 0; f < ix->nf; f++) {
				double x = (qs[f] - p[f]) / ix->scale[f];
				d += x * x;
			}
			if (d < *bd || (d == *bd && *bj >= 0 && j < *bj)) {
				*bd = d;
				*bj = j;
			}
		}
		return;
	}
	double x = (qs[nd->dim] - nd->split) / ix->scale[nd->dim];
	bool left = qs[nd->dim] < nd->split;
	nn_search(ix, left ? nd->left : nd->right, qs, bd, bj);
	if (x * x <= *bd)
		nn_search(ix, left ? nd->right : nd->left, qs, bd, bj);
}

/* Nearest training shape in squashed, standardised feature space (through
 * ix when there is one); its variants by time, the first valid at s. */
static int nearest_choose(const hmatrix *m, const int *train, int n, const double *scale,
                          const nn_index *ix, const double *feat, const bool *valid)
{
	int best = -1;
	double bd = INFINITY;
	if (ix && n > 0) {
		double *qs = xmalloc((size_t)ix->nf * sizeof *qs + 1);
		for (int f = 0, a = 0; f < m->nfeatures; f++)
			if (scale[f] > 0)
				qs[a++] = squash(feat[f]);
		int j = -1;
		nn_search(ix, 0, qs, &bd, &j);
		free(qs);
		best = j >= 0 ? train[j] : -1;
	}
	for (int j = 0; j < n && !ix; j++) {
		double d = 0;
		for (int f = 0; f < m->nfeatures; f++) {
			if (scale[f] <= 0)
				continue;
			double x = (squash(feat[f]) - squash(h_feat(m, train[j], f))) / scale[f];
			d += x * x;
		}
		if (d < bd) {
			bd = d;
			best = train[j];
		}
	}
	if (best < 0)
		return -1;
	/* The neighbour's variants, fastest first: the first valid here. */
	int pick = -1;
	double pt = INFINITY;
	for (int v = 0; v < m->nvariants; v++)
		if (valid[v] && h_time(m, best, v) < pt) {
			pt = h_time(m, best, v);
			pick = v;
		}
	if (pick < 0)
		for (int v = 0; v < m->nvariants && pick < 0; v++)
			if (valid[v])
				pick = v;
	return pick;
}

static void nearest_scale(const hmatrix *m, const int *train, int n, double *scale)
{
	for (int f = 0; f < m->nfeatures; f++) {
		double mean = 0, var = 0;
		for (int j = 0; j < n; j++)
			mean += squash(h_feat(m, train[j], f));
		mean /= n ? n : 1;
		for (int j = 0; j < n; j++) {
			double d = squash(h_feat(m, train[j], f)) - mean;
			var += d * d;
		}
		scale[f] = n ? sqrt(var / n) : 0;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

hstats h_stats(double *sd, int n)
{
	hstats st = {1, 1, 1, 0, 0, n};
	double sum = 0;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (sd[i] >= H_FAIL_SLOWDOWN) {
			st.failed++;
			continue;
		}
		if (sd[i] >= H_MISS_SLOWDOWN) {
			st.misses++;
			continue;
		}
		sum += log(sd[i]);
		sd[k++] = sd[i];
	}
	if (k == 0)
		return st;
	qsort(sd, (size_t)k, sizeof *sd, cmp_double);
	st.geomean = exp(sum / k);
	int at = (int)ceil(0.9 * k) - 1;
	st.p90 = sd[at < 0 ? 0 : at];
	st.worst = sd[k - 1];
	return st;
}

double h_wgeomean(const double *sd, const double *w, int n)
{
	double sum = 0, wsum = 0;
	for (int i = 0; i < n; i++)
		if (sd[i] < H_MISS_SLOWDOWN) {
			sum += w[i] * log(sd[i]);
			wsum += w[i];
		}
	return wsum > 0 ? exp(sum / wsum) : 1;
}

/* ---- Helion's heuristic, as the baseline to beat ----------------------- */

/* Greedy cover: the variant within 10% of the oracle on most uncovered
 * shapes, until all are covered or max variants are taken. */
static int helion_subset(const hmatrix *m, const int *shapes, int n, int max, int *out)
{
	bool *covered = xcalloc((size_t)n + 1, sizeof *covered);
	bool *taken = xcalloc((size_t)m->nvariants + 1, sizeof *taken);
	int k = 0;
	while (k < max) {
		int pick = -1, pick_count = 0;
		for (int v = 0; v < m->nvariants; v++) {
			if (taken[v])
				continue;
			int count = 0;
			for (int i = 0; i < n; i++)
				count += !covered[i] && h_slowdown(m, shapes[i], v) <= 1.1;
			if (count > pick_count) {
				pick = v;
				pick_count = count;
			}
		}
		if (pick < 0)
			break;
		taken[pick] = true;
		out[k++] = pick;
		for (int i = 0; i < n; i++)
			covered[i] |= h_slowdown(m, shapes[i], pick) <= 1.1;
	}
	free(covered);
	free(taken);
	return k;
}

static double entropy(const int *counts, int k, int n)
{
	double e = 0;
	for (int i = 0; i < k; i++)
		if (counts[i])
			e -= (double)counts[i] / n * log2((double)counts[i] / n);
	return e;
}

/* Classification tree on the best-in-subset label, entropy splits to depth
 * 6, leaves by majority (then the rest by count, as a validity fallback). */
static void helion_grow(htree *t, int node, const hmatrix *m, sort_scratch *ss, int *shapes, int n,
                        const int *label, const int *subset, int k, int depth)
{
	int *counts = xcalloc((size_t)k + 1, sizeof *counts);
	for (int i = 0; i < n; i++)
		counts[label[shapes[i]]]++;
	double parent = entropy(counts, k, n);
	int best_f = -1, best_pos = -1;
	double best_e = parent - 1e-12, best_t = 0;
	int *sorted = xmalloc((size_t)n * sizeof *sorted + 1);
	int *lc = xmalloc((size_t)k * sizeof *lc + 1), *rc = xmalloc((size_t)k * sizeof *rc + 1);
	for (int f = 0; f < m->nfeatures && depth < 6 && parent > 0; f++) {
		sort_by_feature(m, ss, sorted, shapes, n, f);
		memset(lc, 0, (size_t)k * sizeof *lc);
		memcpy(rc, counts, (size_t)k * sizeof *rc);
		for (int pos = 1; pos < n; pos++) {
			lc[label[sorted[pos - 1]]]++;
			rc[label[sorted[pos - 1]]]--;
			double a = h_feat(m, sorted[pos - 1], f), b = h_feat(m, sorted[pos], f);
			if (a == b)
				continue;
			double e = (pos * entropy(lc, k, pos) + (n - pos) * entropy(rc, k, n - pos)) / n;
			if (e < best_e) {
				best_e = e;
				best_f = f;
				best_pos = pos;
				best_t = threshold_between(a, b);
			}
		}
	}
	hnode *nd = &t->nodes[node];
	nd->nshapes = n;
	if (best_f < 0) {
		ranked *r = xmalloc((size_t)k * sizeof *r + 1);
		for (int i = 0; i < k; i++)
			r[i] = (ranked){subset[i], -counts[i]};
		qsort(r, (size_t)k, sizeof *r, cmp_ranked);
		nd->order = xmalloc((size_t)k * sizeof *nd->order + 1);
		nd->norder = k;
		for (int i = 0; i < k; i++)
			nd->order[i] = r[i].v;
		free(r);
	} else {
		sort_by_feature(m, ss, sorted, shapes, n, best_f);
		int l = add_node(t), rr = add_node(t);
		nd = &t->nodes[node];
		nd->feature = best_f;
		nd->threshold = best_t;
		nd->left = l;
		nd->right = rr;
		helion_grow(t, l, m, ss, sorted, best_pos, label, subset, k, depth + 1);
		helion_grow(t, rr, m, ss, sorted + best_pos, n - best_pos, label, subset, k, depth + 1);
	}
	free(counts);
	free(sorted);
	free(lc);
	free(rc);
}

static void helion_fit(htree *t, const hmatrix *m, const int *shapes, int n, int max)
{
	memset(t, 0, sizeof *t);
	int *subset = xmalloc((size_t)max * sizeof *subset + 1);
	int k = helion_subset(m, shapes, n, max, subset);
	int *label = xcalloc((size_t)m->nshapes + 1, sizeof *label);
	for (int i = 0; i < n; i++) {
		int s = shapes[i], best = 0;
		for (int j = 1; j < k; j++)
			if (h_time(m, s, subset[j]) < h_time(m, s, subset[best]))
				best = j;
		label[s] = best;
	}
	int *work = xmalloc((size_t)n * sizeof *work + 1);
	memcpy(work, shapes, (size_t)n * sizeof *work);
	add_node(t);
	sort_scratch ss = {0};
	if (k > 0)
		helion_grow(t, 0, m, &ss, work, n, label, subset, k, 0);
	free(ss.mark);
	free(work);
	free(label);
	free(subset);
}

/* ---- The cost model, distilled into the tree ------------------------------ */

/* splitmix64: folds, dense shapes */
static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unit(uint64_t *x) { return (double)(mix(x) >> 11) * 0x1.0p-53; }

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
			double l = lsd(m, s, v);
			if (l > log(H_CONTEND) && !isfinite(h_time(m, s, v)))
				continue;
			int faster = 0;
			for (int u = 0; u < m->nvariants && faster < H_CONTEND_RANK; u++)
				faster += lsd(m, s, u) < l || (lsd(m, s, u) == l && u < v);
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
			int j = (int)(mix(&seed) % (uint64_t)(i + 1));
			int t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (int i = 0; i < count; i++) {
			double u = (perm[i] + unit(&seed)) / count;
			double x = exp(llo + (lhi - llo) * u);
			double r = unit(&seed);
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

/* The cost model of log time, in three parts fitted one after the other,
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
typedef struct cost_model {
	int *cv, ncv;           /* the variants it predicts */
	int nlin, *lin;         /* linear features (cost_row indices), at most H_MAX_LINEAR */
	double *w;              /* [j * (nlin + 1)]: intercept, weights */
	gbm g;
	double *kscale;         /* nlin: each linear feature's standard deviation */
	int *koff, *kn;         /* contender j's points: [koff[j], koff[j] + kn[j]) */
	double *kpts, *alpha;   /* [point * nlin] scaled features; their weights */
	bool is_forest;         /* instead of the three parts: a forest of log slowdown */
	forest fr;
} cost_model;

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

static double cm_predict(const cost_model *cm, const double *x, int j)
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
			(*y)[nrows++] = slowdown ? lsd(m, s, cm->cv[j]) : log(h_time(m, s, cm->cv[j]));
		}
	}
	free(row);
	return nrows;
}

static void cm_fit(cost_model *cm, const hmatrix *m, const int *train, int n)
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

static void cm_finish(cost_model *cm)
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

/* The matrix the distilled tree learns from: the measured training shapes
 * with their measured times, and H_DENSE_SHAPES dense shapes where every
 * contender valid there has the cost model's predicted time (the others
 * none). Shapes where nothing is valid are left out of *shapes. */
typedef struct dense_set {
	hmatrix dm;
	int *shapes;
	int n;
	cost_model cm;
} dense_set;

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
				double x = squash((double)r[a]) - squash((double)q[a]);
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

static void distill_matrix(dense_set *ds, const hmatrix *m, const int *train, int n, int nd, uint64_t seed,
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

static void dense_finish(dense_set *ds)
{
	hmatrix_finish(&ds->dm);
	free(ds->shapes);
	cm_finish(&ds->cm);
}

/* ---- Models of every selector -------------------------------------------- */

struct hmodel {
	int *subset;            /* the measured tree's */
	int nsubset, ncover;
	htree measured;
	htree helion;
	int *single_order;
	double *scale;
	nn_index *nn;
	int *train;
	int ntrain;
	cost_model cost;        /* the final cost model (distilled only) */
};

typedef struct hmodel model;

/* The baselines (single variant, nearest neighbour, Helion-style tree);
 * the measured tree and the cost model are fitted by fit_candidate. */
static void model_fit(model *md, const hmatrix *m, const int *train, int n, const hoptions *o)
{
	md->single_order = xmalloc((size_t)m->nvariants * sizeof *md->single_order + 1);
	single_fit(m, train, n, md->single_order);
	md->scale = xmalloc((size_t)m->nfeatures * sizeof *md->scale + 1);
	nearest_scale(m, train, n, md->scale);
	md->nn = nn_build(m, train, n, md->scale);
	helion_fit(&md->helion, m, train, n, o->max_variants);
	md->train = xmalloc((size_t)n * sizeof *md->train + 1);
	memcpy(md->train, train, (size_t)n * sizeof *md->train);
	md->ntrain = n;
}

static void model_finish(model *md)
{
	free(md->subset);
	htree_finish(&md->measured);
	htree_finish(&md->helion);
	free(md->single_order);
	free(md->scale);
	nn_destroy(md->nn);
	free(md->train);
	cm_finish(&md->cost);
}

/* tree: the dispatch tree (SEL_TREE). */
static int model_choose(const model *md, const htree *tree, const hmatrix *m, hselector sel,
                        const double *feat, const bool *valid)
{
	switch (sel) {
	case SEL_SINGLE:
		return first_valid(valid, md->single_order, m->nvariants);
	case SEL_NEAREST:
		return nearest_choose(m, md->train, md->ntrain, md->scale, md->nn, feat, valid);
	case SEL_HELION:
		return htree_choose(&md->helion, feat, valid);
	case SEL_MEASURED:
		return htree_choose(&md->measured, feat, valid);
	default:
		return htree_choose(tree, feat, valid);
	}
}

static const double *feat_of(const hmatrix *m, int s) { return &m->feat[(size_t)s * m->nfeatures]; }
static const bool *valid_of(const hmatrix *m, int s) { return &m->valid[(size_t)s * m->nvariants]; }

int h_choose(const hresult *r, const hmatrix *m, hselector sel, const double *feat, const bool *valid)
{
	if (!r->model)
		return -1;
	return model_choose(r->model, &r->tree, m, sel, feat, valid);
}

int h_predict_best(const hresult *r, const hmatrix *m, const int64_t *row, const bool *valid)
{
	const model *md = r->model;
	if (!md || !md->cost.ncv)
		return -1;
	const cost_model *cm = &md->cost;
	double *x = xmalloc((size_t)cm->ncv * m->ncost * sizeof *x + 1);
	m->cost_row(m->valid_ctx, row, cm->cv, cm->ncv, x);
	int best = -1;
	double bp = INFINITY;
	for (int j = 0; j < cm->ncv; j++) {
		double p = cm_predict(cm, x + (size_t)j * m->ncost, j);
		if (valid[cm->cv[j]] && p < bp) {
			bp = p;
			best = cm->cv[j];
		}
	}
	free(x);
	return best;
}

/* ---- Cross-validation ---------------------------------------------------- */

/* Folds that fit the grid: held[f * n + i] says whether shapes[i] is held
 * out in fold f. A shape argument with at least H_LOVO_MIN_VALUES distinct
 * values gives folds that hold out every shape with one of its values
 * (with more than H_LOVO_GROUPS values, one of H_LOVO_GROUPS ranges of
 * consecutive values), so the held-out shapes have a value the model never
 * saw; but not its smallest or largest value (range): those folds measure
 * extrapolation, where every tree extends its edge leaf alike, and on the
 * H200 held-out sets (between and off the grid points) choosing with them
 * was worse (softmax between grid points 1.036 against 1.021). An
 * argument with fewer values gives none: holding out one of two values
 * leaves one to learn from, where no split on it can be learnt.
 * Without two such folds, a small set (at most H_LOSO_MAX shapes) is cross-
 * validated leaving one shape out, a larger one by k folds over a random
 * permutation. */
#define H_LOVO_GROUPS 6
#define H_LOVO_MIN_VALUES 4
#define H_LOSO_MAX 48

typedef struct folds {
	int k, n;
	unsigned char *held;
	int npairs;             /* sum of the folds' held-out shapes */
	hfolds by;
} folds;

const char *h_folds_text(hfolds by)
{
	switch (by) {
	case H_FOLDS_VALUE:
		return "each fold holds out one value (or range of values) of one shape argument";
	case H_FOLDS_SHAPE:
		return "each fold holds out one shape";
	default:
		return "folds over random shapes";
	}
}

const char *h_kind_name(hkind k)
{
	static const char *const names[H_NKINDS] = {"measured", "model", "forest"};
	return names[k];
}

const char *h_model_text(hkind k) { return k == H_KIND_FOREST ? "a randomised-tree forest" : "a cost model"; }

const char *h_folds_name(hfolds by) { return by == H_FOLDS_VALUE ? "value" : by == H_FOLDS_SHAPE ? "shape" : "random"; }

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void add_fold(folds *F, const unsigned char *held)
{
	int c = 0;
	for (int i = 0; i < F->n; i++)
		c += held[i];
	if (c == 0 || c == F->n)
		return;
	F->held = xrealloc(F->held, ((size_t)F->k + 1) * F->n + 1);
	memcpy(F->held + (size_t)F->k * F->n, held, (size_t)F->n);
	F->k++;
	F->npairs += c;
}

static void make_folds(folds *F, const hmatrix *m, const int *shapes, int n, int k, const int *rank)
{
	memset(F, 0, sizeof *F);
	F->n = n;
	unsigned char *held = xmalloc((size_t)n + 1);
	int64_t *vals = xmalloc((size_t)n * sizeof *vals + 1);
	for (int a = 0; m->rows && a < m->nargs; a++) {
		for (int i = 0; i < n; i++)
			vals[i] = m->rows[(size_t)shapes[i] * m->nargs + a];
		qsort(vals, (size_t)n, sizeof *vals, cmp_i64);
		int nd = 0;
		for (int i = 0; i < n; i++)
			if (i == 0 || vals[i] != vals[i - 1])
				vals[nd++] = vals[i];
		if (nd < H_LOVO_MIN_VALUES)
			continue;
		int ng = nd <= H_LOVO_GROUPS ? nd : H_LOVO_GROUPS;
		for (int g = 1; g < ng - 1; g++) {
			for (int i = 0; i < n; i++) {
				int64_t x = m->rows[(size_t)shapes[i] * m->nargs + a];
				int lo = 0, hi = nd - 1;
				while (lo < hi) { /* x's rank among the distinct values */
					int mid = (lo + hi) / 2;
					if (vals[mid] < x)
						lo = mid + 1;
					else
						hi = mid;
				}
				held[i] = (int)((int64_t)lo * ng / nd) == g;
			}
			add_fold(F, held);
		}
	}
	F->by = H_FOLDS_VALUE;
	if (F->k < 2) {
		free(F->held);
		F->held = NULL;
		F->k = F->npairs = 0;
		F->by = n <= H_LOSO_MAX ? H_FOLDS_SHAPE : H_FOLDS_RANDOM;
		int nf = F->by == H_FOLDS_SHAPE ? n : k;
		for (int f = 0; f < nf && n > 1; f++) {
			for (int i = 0; i < n; i++)
				held[i] = F->by == H_FOLDS_SHAPE ? i == f : rank[i] % k == f;
			add_fold(F, held);
		}
	}
	free(held);
	free(vals);
}

/* ---- Candidate dispatches --------------------------------------------------- */

/* A candidate is one way to learn the dispatch from training shapes: the
 * tree learnt from the measured shapes, or distilled from a cost model's
 * predictions on dense shapes (with the measured ones): the three-part
 * model above or the forest (heuristics/forest.h); over the first
 * var_counts[] variants of the greedy order on those shapes (completed for
 * coverage); of a depth and a minimum leaf. Every candidate is measured on
 * the same folds, and the one with the lowest held-out cost is fitted on
 * every shape: how many variants, how deep a tree and which model to trust
 * are all chosen by what held-out shapes say, not by a goal checked on
 * predictions. Within a kind, candidates are listed simplest first (fewer
 * variants, shallower, larger leaves) and the simplest within 0.1% of the
 * best is taken; the three-part model comes before the forest, and the
 * measured tree must beat the best distilled one by 0.1% (h_build). A
 * distilled tree counts its leaves in fractions of the dense shapes. */
static const int var_counts[] = {1, 2, 4, 8, 16, 32};
static const int size_depths[] = {0, 1, 2, 3, 4, 5, 6, 8};
static const int size_leaves[] = {8, 4, 2, 1};
static const int dense_leaf_div[] = {25, 100, 400};
#define NVARC ((int)(sizeof var_counts / sizeof *var_counts))
#define NDEPTHS ((int)(sizeof size_depths / sizeof *size_depths))
#define NLEAVES ((int)(sizeof size_leaves / sizeof *size_leaves))
#define NDENSE_LEAVES ((int)(sizeof dense_leaf_div / sizeof *dense_leaf_div))

/* How many variant counts are tried: those below max_variants, and
 * max_variants. */
static int nvar_sizes(const hoptions *o)
{
	int k = 0;
	while (k < NVARC && var_counts[k] < o->max_variants)
		k++;
	return k + 1;
}

static int var_count(const hoptions *o, int vi)
{
	return vi < NVARC && var_counts[vi] < o->max_variants ? var_counts[vi] : o->max_variants;
}

/* depth 8 only for trees learnt from dense shapes */
static int ndepths(hkind k) { return k != H_KIND_MEASURED ? NDEPTHS : NDEPTHS - 1; }
static int nleaves(hkind k) { return k != H_KIND_MEASURED ? NDENSE_LEAVES : NLEAVES; }
static int ntrees(hkind k) { return ndepths(k) * nleaves(k); }

typedef struct candidate {
	hkind kind;
	int nvar;
	int depth_i, leaf_i;
} candidate;

/* Candidates of a kind come one block after the other: the first index
 * of kind k's block, and how many there are (without a cost model, only
 * the measured kind). */
static int kind_first(const hoptions *o, hkind k)
{
	int c = 0;
	for (int i = 0; i < (int)k; i++)
		c += nvar_sizes(o) * ntrees((hkind)i);
	return c;
}

static int ncandidates(const hoptions *o, bool model_possible)
{
	return kind_first(o, model_possible ? H_NKINDS : H_KIND_MODEL);
}

static candidate candidate_at(const hoptions *o, int c)
{
	candidate x = {0};
	while (x.kind + 1 < H_NKINDS && c >= kind_first(o, x.kind + 1))
		x.kind++;
	c -= kind_first(o, x.kind);
	int nt = ntrees(x.kind), nl = nleaves(x.kind);
	x.nvar = var_count(o, c / nt);
	x.depth_i = c % nt / nl;
	x.leaf_i = c % nl;
	return x;
}

static htree_params tree_params(const candidate *x, int ndense, double min_gain)
{
	int leaf = x->kind != H_KIND_MEASURED ? ndense / dense_leaf_div[x->leaf_i] : size_leaves[x->leaf_i];
	return (htree_params){size_depths[x->depth_i], leaf < 1 ? 1 : leaf, min_gain};
}

/* The greedy order of up to o->max_variants variants over shapes of fm
 * (stopping at o->goal); the subset of its first nvar is then completed
 * for coverage of the measured training shapes. */
static int *greedy_order(const hmatrix *fm, const int *fs, int fn, const hoptions *o, int *n)
{
	int *order = xmalloc(((size_t)o->max_variants + 1) * sizeof *order);
	*n = h_select_subset(fm, fs, fn, o->max_variants, o->goal, order);
	return order;
}

static int *prefix_subset(const int *order, int norder, int nvar, const hmatrix *m, const int *train, int nt,
                          int *nsub, int *ncover)
{
	int *sub = xmalloc(((size_t)norder + (size_t)m->nvariants) * sizeof *sub + 1);
	*nsub = nvar < norder ? nvar : norder;
	memcpy(sub, order, (size_t)*nsub * sizeof *sub);
	*ncover = h_cover(m, train, nt, sub, nsub);
	return sub;
}

/* Held-out slowdowns of every candidate, fold by fold:
 * sd[candidate * npairs + pair]. */
typedef struct cv_job {
	const hmatrix *m;
	const int *shapes;
	int n;
	const folds *F;
	const hoptions *o;
	int nkinds;             /* the kinds of candidates (1: measured only) */
	float *sd;
	const int *pair0;       /* per fold: its first pair */
	int next;               /* the next task to take (under lock) */
	pthread_mutex_t lock;
} cv_job;

/* The candidates of one kind for fold f. */
static void cv_fold(cv_job *j, int f, hkind kind, int *train)
{
	const hmatrix *m = j->m;
	const int *shapes = j->shapes;
	int n = j->n;
	const hoptions *o = j->o;
	const unsigned char *held = j->F->held + (size_t)f * n;
	int nt = 0;
	for (int i = 0; i < n; i++)
		if (!held[i])
			train[nt++] = shapes[i];
	dense_set ds = {0};
	const hmatrix *fm = m;
	const int *fs = train;
	int fn = nt;
	if (kind != H_KIND_MEASURED) {
		distill_matrix(&ds, m, train, nt, H_DENSE_SHAPES / 4, o->seed + (uint64_t)f, kind == H_KIND_FOREST);
		fm = &ds.dm;
		fs = ds.shapes;
		fn = ds.n;
	}
	int norder;
	int *order = greedy_order(fm, fs, fn, o, &norder);
	int first = kind_first(o, kind), nl = nleaves(kind), nt_ = ntrees(kind);
	for (int vi = 0; vi < nvar_sizes(o); vi++) {
		int nsub, ncov;
		int *sub = prefix_subset(order, norder, var_count(o, vi), m, train, nt, &nsub, &ncov);
		/* Greedy growth makes a tree's first levels those of any deeper
		 * one grown alike: one tree per leaf size, cut at every depth. */
		for (int li = 0; li < nl; li++) {
			candidate x = {kind, var_count(o, vi), ndepths(kind) - 1, li};
			htree_params p = tree_params(&x, fn, o->min_gain);
			htree t;
			htree_fit(&t, fm, fs, fn, sub, nsub, &p);
			for (int di = 0; di < ndepths(kind); di++) {
				size_t c = (size_t)first + (size_t)vi * nt_ + (size_t)di * nl + li;
				for (int i = 0, pair = j->pair0[f]; i < n; i++)
					if (held[i])
						j->sd[c * j->F->npairs + pair++] = (float)h_slowdown(
							m, shapes[i], choose_cut(&t, feat_of(m, shapes[i]), valid_of(m, shapes[i]),
							                         size_depths[di]));
			}
			htree_finish(&t);
		}
		free(sub);
	}
	free(order);
	if (kind != H_KIND_MEASURED)
		dense_finish(&ds);
}

/* Tasks: every fold's candidates of every kind, the slowest kinds first. */
static void *cv_worker(void *arg)
{
	cv_job *j = arg;
	int *train = xmalloc((size_t)j->n * sizeof *train + 1);
	int tasks = j->F->k * j->nkinds;
	for (;;) {
		pthread_mutex_lock(&j->lock);
		int t = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (t >= tasks)
			break;
		cv_fold(j, t % j->F->k, (hkind)(j->nkinds - 1 - t / j->F->k), train);
	}
	free(train);
	return NULL;
}

/* Folds run on as many threads as there are cores (each fold fits its own
 * cost model and dense matrix and fits its trees on its own copy of the
 * matrix's sort scratch); the result does not depend on them. */
#define H_MAX_THREADS 16

static void cv_candidates(const hmatrix *m, const int *shapes, int n, const folds *F, const hoptions *o,
                          bool dense, float *sd)
{
	int *pair0 = xmalloc(((size_t)F->k + 1) * sizeof *pair0);
	for (int f = 0, p = 0; f < F->k; f++) {
		pair0[f] = p;
		for (int i = 0; i < n; i++)
			p += F->held[(size_t)f * n + i];
	}
	cv_job j = {m, shapes, n, F, o, dense ? H_NKINDS : 1, sd, pair0, 0, PTHREAD_MUTEX_INITIALIZER};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int tasks = F->k * j.nkinds;
	int nt = cpus < 1 ? 1 : cpus > H_MAX_THREADS ? H_MAX_THREADS : (int)cpus;
	if (nt > tasks)
		nt = tasks;
	pthread_t th[H_MAX_THREADS];
	int started = 0;
	for (int t = 1; t < nt; t++)
		started += pthread_create(&th[started], NULL, cv_worker, &j) == 0;
	cv_worker(&j); /* this thread too; if no thread started, all of it */
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	pthread_mutex_destroy(&j.lock);
	free(pair0);
}

/* The first candidate in [lo, hi) (the simplest) whose held-out cost is
 * within 0.1% of the lowest (pw: each pair's weight, or NULL), and that
 * cost's geomean. */
static int best_candidate(const float *sd, int lo, int hi, int npairs, const double *pw, double *geomean)
{
	double wsum = 0, best_score = INFINITY;
	for (int i = 0; i < npairs; i++)
		wsum += pw ? pw[i] : 1.0;
	double *score = xmalloc(((size_t)(hi - lo) + 1) * sizeof *score);
	for (int z = lo; z < hi; z++) {
		double sum = 0;
		for (int i = 0; i < npairs; i++)
			sum += (pw ? pw[i] : 1.0) * log(sd[(size_t)z * npairs + i]);
		score[z - lo] = sum;
		best_score = sum < best_score ? sum : best_score;
	}
	/* the simplest within 0.1% of the best */
	int best = lo;
	while (best + 1 < hi && score[best - lo] > best_score + wsum * log(1.001))
		best++;
	*geomean = npairs ? exp(score[best - lo] / wsum) : 1;
	free(score);
	return best;
}

/* Held-out slowdowns of the single variant, nearest neighbour and the
 * Helion-style tree: sd[sel][pair]. */
static void cv_baselines(const hmatrix *m, const int *shapes, int n, const folds *F, const hoptions *o,
                         double *sd[SEL_COUNT])
{
	int *train = xmalloc((size_t)n * sizeof *train + 1);
	for (int f = 0, pair = 0; f < F->k; f++) {
		const unsigned char *held = F->held + (size_t)f * n;
		int nt = 0;
		for (int i = 0; i < n; i++)
			if (!held[i])
				train[nt++] = shapes[i];
		model md = {0};
		model_fit(&md, m, train, nt, o);
		for (int i = 0; i < n; i++) {
			if (!held[i])
				continue;
			for (int sel = SEL_SINGLE; sel <= SEL_HELION; sel++)
				sd[sel][pair] = h_slowdown(m, shapes[i], model_choose(&md, NULL, m, (hselector)sel,
				                                                       feat_of(m, shapes[i]), valid_of(m, shapes[i])));
			pair++;
		}
		model_finish(&md);
	}
	free(train);
}

/* Fits candidate x on training shapes train[0..n) of m into tree, subset
 * and coverage count (the subset allocated). With a cost model (dense
 * possible), *cm gets the one fitted on them (ownership passes; else
 * zeroed); *ndense the dense shapes a distilled tree learnt from. */
static void fit_candidate(const candidate *x, const hmatrix *m, const int *train, int n, const hoptions *o,
                          bool model_possible, htree *tree, int **subset, int *nsubset, int *ncover,
                          cost_model *cm, int *ndense)
{
	dense_set ds = {0};
	const hmatrix *fm = m;
	const int *fs = train;
	int fn = n;
	*ndense = 0;
	memset(cm, 0, sizeof *cm);
	if (x->kind != H_KIND_MEASURED) {
		distill_matrix(&ds, m, train, n, H_DENSE_SHAPES, o->seed, x->kind == H_KIND_FOREST);
		fm = &ds.dm;
		fs = ds.shapes;
		fn = ds.n;
		*ndense = ds.n - n;
	} else if (model_possible) {
		cm_fit(cm, m, train, n);
	}
	int norder;
	int *order = greedy_order(fm, fs, fn, o, &norder);
	*subset = prefix_subset(order, norder, x->nvar, m, train, n, nsubset, ncover);
	free(order);
	htree_params p = tree_params(x, fn, o->min_gain);
	htree_fit(tree, fm, fs, fn, *subset, *nsubset, &p);
	if (x->kind != H_KIND_MEASURED) {
		*cm = ds.cm;
		ds.cm = (cost_model){0};
		dense_finish(&ds);
	}
}

/* ---- Building it all ------------------------------------------------------ */

const char *const h_selector_names[SEL_COUNT] = {"best single variant", "nearest neighbour",
                                                 "Helion-style tree", "tree, measured only",
                                                 "aotc decision tree"};

void h_build(hresult *r, const hmatrix *m, const hoptions *o)
{
	memset(r, 0, sizeof *r);
	if (m->valid_at && m->rows && m->nargs > 0) {
		int per = 1 + 2 * m->nargs;
		int64_t *p = xmalloc((size_t)m->nargs * sizeof *p);
		probe_valid = xmalloc((size_t)m->nshapes * (size_t)per * (size_t)m->nvariants + 1);
		for (int s = 0; s < m->nshapes; s++)
			for (int k = 0; k < per; k++) {
				make_probe(m, s, k, p);
				for (int v = 0; v < m->nvariants; v++)
					probe_valid[((size_t)s * per + (size_t)k) * m->nvariants + v] =
						m->valid_at(m->valid_ctx, p, v);
			}
		free(p);
		probe_m = m;
	}
	/* Shapes where nothing ran teach nothing: reported, then left out. */
	int *shapes = xmalloc((size_t)m->nshapes * sizeof *shapes + 1);
	int n = 0;
	for (int s = 0; s < m->nshapes; s++) {
		if (isfinite(m->oracle[s]))
			shapes[n++] = s;
		else
			r->uncovered++;
	}
	/* Beyond H_CV_SHAPES shapes, the candidate and the held-out figures
	 * come from cross-validation over H_CV_SHAPES of them drawn by the
	 * seed (in shape order); only the final models see every shape. */
	int *perm = xmalloc((size_t)n * sizeof *perm + 1);
	for (int i = 0; i < n; i++)
		perm[i] = i;
	uint64_t seed = o->seed;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(mix(&seed) % (uint64_t)(i + 1));
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	int ncv = n > H_CV_SHAPES ? H_CV_SHAPES : n;
	int *cv_shapes = xmalloc((size_t)ncv * sizeof *cv_shapes + 1), *rank = xmalloc((size_t)ncv * sizeof *rank + 1);
	{
		int *rk = xmalloc((size_t)n * sizeof *rk + 1);
		for (int i = 0; i < n; i++)
			rk[perm[i]] = i;
		for (int i = 0, c = 0; i < n; i++)
			if (rk[i] < ncv) {
				rank[c] = rk[i];
				cv_shapes[c++] = shapes[i];
			}
		free(rk);
	}
	free(perm);
	r->cv_shapes = ncv;
	int k = o->folds < 2 ? 2 : o->folds;
	if (k > ncv)
		k = ncv > 1 ? ncv : 1;
	folds F;
	make_folds(&F, m, cv_shapes, ncv, ncv > 1 ? k : 0, rank);
	free(rank);
	r->folds = F.k;
	r->fold_by = F.by;
	bool model_possible = o->distill && m->row_info && m->cost_row && m->ncost > 0 && m->rows && m->nargs > 0 &&
	                      n >= 2 && n < H_DENSE_SHAPES;

	/* Every candidate's held-out slowdowns; the best measured one is
	 * SEL_MEASURED, the best of all the dispatch (SEL_TREE). */
	double *sd[SEL_COUNT];
	for (int i = 0; i < SEL_COUNT; i++)
		sd[i] = xmalloc(((size_t)F.npairs > (size_t)n ? (size_t)F.npairs : (size_t)n) * sizeof *sd[i] + 1);
	/* Each held-out pair's weight, in the pairs' order (fold, then shape). */
	double *pw = NULL;
	r->weighted = m->weight != NULL;
	if (m->weight) {
		pw = xmalloc((size_t)F.npairs * sizeof *pw + 1);
		for (int f = 0, pair = 0; f < F.k; f++)
			for (int i = 0; i < ncv; i++)
				if (F.held[(size_t)f * ncv + i])
					pw[pair++] = m->weight[cv_shapes[i]];
	}
	int nmeasured = kind_first(o, H_KIND_MODEL), ncand = ncandidates(o, model_possible);
	int zm = 0, zt = 0;
	double gm = 1, gt = 1;
	if (F.k > 0) {
		float *csd = xmalloc((size_t)ncand * F.npairs * sizeof *csd + 1);
		cv_candidates(m, cv_shapes, ncv, &F, o, model_possible, csd);
		for (int kk = (model_possible ? H_NKINDS : 1) - 1; kk >= 0; kk--) {
			zm = best_candidate(csd, kind_first(o, (hkind)kk), kind_first(o, (hkind)(kk + 1)), F.npairs, pw,
			                    &r->kind_cv[kk]);
			r->kind_nvar[kk] = candidate_at(o, zm).nvar;
		}
		gm = r->kind_cv[H_KIND_MEASURED]; /* zm: the last, the measured kind's */
		zt = zm;
		gt = gm;
		if (model_possible) {
			/* the measured tree must beat the distilled one by 0.1%: where
			 * the folds cannot tell them apart (no held-out shape falls
			 * between two measured ones), the cost model's interpolation
			 * is the better guess (tests/unit/test_heuristic.c,
			 * test_breakpoint) */
			double gd;
			int zd = best_candidate(csd, nmeasured, ncand, F.npairs, pw, &gd);
			if (!(gm < gd / 1.001)) {
				zt = zd;
				gt = gd;
			}
		}
		for (int i = 0; i < F.npairs; i++) {
			sd[SEL_MEASURED][i] = csd[(size_t)zm * F.npairs + i];
			sd[SEL_TREE][i] = csd[(size_t)zt * F.npairs + i];
		}
		free(csd);
		cv_baselines(m, cv_shapes, ncv, &F, o, sd);
	}
	r->cv_geomean = gt;
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		/* weighted first: h_stats reorders sd */
		double w = pw ? h_wgeomean(sd[sel], pw, F.npairs) : 0;
		r->heldout[sel] = h_stats(sd[sel], F.npairs);
		r->heldout_w[sel] = pw ? w : r->heldout[sel].geomean;
	}
	free(pw);
	free(F.held);
	free(cv_shapes);

	/* The final models, on every shape, and their training figures. */
	model *md = xcalloc(1, sizeof *md);
	model_fit(md, m, shapes, n, o);
	candidate xm = candidate_at(o, zm), xt = candidate_at(o, zt);
	{
		int nsub, ncov, nd;
		cost_model cm;
		fit_candidate(&xm, m, shapes, n, o, false, &md->measured, &md->subset, &nsub, &ncov, &cm, &nd);
		md->nsubset = nsub;
		md->ncover = ncov;
	}
	fit_candidate(&xt, m, shapes, n, o, model_possible, &r->tree, &r->subset, &r->nsubset, &r->ncover, &md->cost,
	              &r->dense_shapes);
	r->distilled = xt.kind != H_KIND_MEASURED;
	r->kind = xt.kind;
	r->nvar = xt.nvar;
	r->model = md;
	double *tw = NULL; /* the training shapes' weights */
	if (m->weight) {
		tw = xmalloc((size_t)n * sizeof *tw + 1);
		for (int i = 0; i < n; i++)
			tw[i] = m->weight[shapes[i]];
	}
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		for (int i = 0; i < n; i++)
			sd[sel][i] = h_slowdown(m, shapes[i], h_choose(r, m, (hselector)sel, feat_of(m, shapes[i]),
			                                                valid_of(m, shapes[i])));
		double w = tw ? h_wgeomean(sd[sel], tw, n) : 0; /* before h_stats reorders sd */
		r->train[sel] = h_stats(sd[sel], n);
		r->train_w[sel] = tw ? w : r->train[sel].geomean;
	}
	free(tw);
	r->single_order = xmalloc((size_t)m->nvariants * sizeof *r->single_order + 1);
	memcpy(r->single_order, md->single_order, (size_t)m->nvariants * sizeof *r->single_order);
	r->single = m->nvariants ? md->single_order[0] : -1;
	for (int i = 0; i < SEL_COUNT; i++)
		free(sd[i]);
	free(shapes);
	probe_m = NULL;
	free(probe_valid);
	probe_valid = NULL;
}

void hresult_finish(hresult *r)
{
	free(r->subset);
	htree_finish(&r->tree);
	free(r->single_order);
	if (r->model) {
		model_finish(r->model);
		free(r->model);
	}
	memset(r, 0, sizeof *r);
}

void h_print_report(strbuf *sb, const hresult *r, const hmatrix *m, const hstats *eval, int neval,
                    const struct dispatch *dp)
{
	int covered = m->nshapes - r->uncovered;
	strbuf_printf(sb, "%d shapes (%d where no variant ran), %d variants; %d chosen for the dispatch",
	              m->nshapes, r->uncovered, m->nvariants, r->nsubset);
	if (r->ncover)
		strbuf_printf(sb, " (%d of them so that every shape near the measured ones has a valid variant)",
		              r->ncover);
	strbuf_putc(sb, '\n');
	if (r->distilled)
		strbuf_printf(sb, "tree learnt from %s's predictions on %d shapes spread over the\n"
		              "  measured range and from the measured shapes\n", h_model_text(r->kind), r->dense_shapes);
	else if (!m->row_info)
		strbuf_puts(sb, "tree learnt from the measured shapes only (no kernel source: no cost model)\n");
	strbuf_printf(sb, "tree: depth %d, %d leaves (max depth %d, min leaf %d) over the first %d variants of the\n"
	              "  greedy order; all three and the kind of tree chosen by %d-fold cross-validation over %d shapes",
	              htree_depth(&r->tree), htree_leaves(&r->tree), r->tree.max_depth, r->tree.min_leaf, r->nvar,
	              r->folds, r->cv_shapes);
	if (r->cv_shapes < covered)
		strbuf_printf(sb, " drawn from the %d, the held-out figures too", covered);
	strbuf_printf(sb, ";\n  %s\n", h_folds_text(r->fold_by));
	if (r->kind_cv[1] > 0)
		strbuf_printf(sb, "cross-validated geomean of the best tree of each kind: from the measured shapes %.3f\n"
		              "  (%d variants), distilled from the cost model %.3f (%d), from the forest %.3f (%d): %s chosen\n",
		              r->kind_cv[0], r->kind_nvar[0], r->kind_cv[1], r->kind_nvar[1], r->kind_cv[2], r->kind_nvar[2],
		              h_kind_name(r->kind));
	strbuf_putc(sb, '\n');
	strbuf_printf(sb, "%-22s %-28s %-34s", "slowdown vs oracle", "training shapes",
	              r->fold_by == H_FOLDS_VALUE ? "held-out (leave one value out)"
	              : r->fold_by == H_FOLDS_SHAPE ? "held-out (leave one shape out)" : "held-out (cross-validated)");
	if (neval > 0)
		strbuf_printf(sb, "measured held-out (aotc eval, %d shapes)", neval);
	strbuf_printf(sb, "\n%-22s %8s %8s %8s   %8s %8s %8s %-7s", "selector", "geomean", "p90", "worst",
	              "geomean", "p90", "worst", "misses");
	if (neval > 0)
		strbuf_printf(sb, "   %8s %8s %8s %s", "geomean", "p90", "worst", "misses");
	strbuf_putc(sb, '\n');
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		if (sel == SEL_MEASURED && !r->distilled)
			continue; /* the same tree as the last line */
		const hstats *t = &r->train[sel], *h = &r->heldout[sel];
		strbuf_printf(sb, "%-22s %8.3f %8.3f %8.3f   %8.3f %8.3f %8.3f %d/%d", h_selector_names[sel],
		              t->geomean, t->p90, t->worst, h->geomean, h->p90, h->worst, t->misses, h->misses);
		if (neval > 0)
			strbuf_printf(sb, "%*s   %8.3f %8.3f %8.3f %d", 4, "", eval[sel].geomean, eval[sel].p90,
			              eval[sel].worst, eval[sel].misses);
		/* a dispatched failure is never left out silently */
		if (t->failed || h->failed || (neval > 0 && eval[sel].failed)) {
			strbuf_printf(sb, "  FAILED: %d training, %d held-out", t->failed, h->failed);
			if (neval > 0)
				strbuf_printf(sb, ", %d eval", eval[sel].failed);
			strbuf_puts(sb, " shapes");
		}
		strbuf_putc(sb, '\n');
	}
	if (r->weighted) {
		strbuf_puts(sb, "\nweighted by each shape's recorded calls (AOTC_RECORD; a shape without a count\n"
		                "  weighs one call), what the dispatch was fitted to minimise:\n");
		strbuf_printf(sb, "%-22s %8s   %8s\n", "selector", "training", "held-out");
		for (int sel = 0; sel < SEL_COUNT; sel++)
			if (sel != SEL_MEASURED || r->distilled)
				strbuf_printf(sb, "%-22s %8.3f   %8.3f\n", h_selector_names[sel], r->train_w[sel],
				              r->heldout_w[sel]);
	}
	strbuf_printf(sb, "\nbest single variant: %s\nchosen variants:", r->single >= 0 ? m->variant_names[r->single] : "none");
	size_t col = strlen("chosen variants:");
	strbuf item;
	strbuf_init(&item);
	for (int i = 0; i < r->nsubset; i++) {
		item.len = 0;
		strbuf_printf(&item, "%s%s", m->variant_names[r->subset[i]], i + 1 < r->nsubset ? "," : "");
		strbuf_put_wrapped(sb, &col, item.data, 2, H_TEXT_WIDTH);
	}
	if (dp) {
		const char *head = "\nselect() can return:";
		strbuf_puts(sb, head);
		col = strlen(head) - 1;
		for (int i = 0; i < dp->nvariants; i++) {
			item.len = 0;
			strbuf_printf(&item, "%s%s", dp->variants[i].name, i + 1 < dp->nvariants ? "," : "");
			strbuf_put_wrapped(sb, &col, item.data, 2, H_TEXT_WIDTH);
		}
	}
	strbuf_finish(&item);
	strbuf_puts(sb, "\n\ntree:\n");
	if (dp)
		dispatch_print(sb, dp);
	else
		htree_print(sb, &r->tree, m);
}
