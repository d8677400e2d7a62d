#include "heuristic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	memset(m, 0, sizeof *m);
}

void hmatrix_update_oracle(hmatrix *m)
{
	for (int s = 0; s < m->nshapes; s++) {
		double best = INFINITY;
		for (int v = 0; v < m->nvariants; v++)
			if (h_valid(m, s, v) && h_time(m, s, v) < best)
				best = h_time(m, s, v);
		m->oracle[s] = best;
	}
}

double h_slowdown(const hmatrix *m, int s, int v)
{
	if (v < 0 || !h_valid(m, s, v) || !isfinite(h_time(m, s, v)) || !isfinite(m->oracle[s]))
		return H_MISS_SLOWDOWN;
	double r = h_time(m, s, v) / m->oracle[s];
	return r < H_MISS_SLOWDOWN ? r : H_MISS_SLOWDOWN;
}

/* Log slowdowns of lsd_m, computed once by h_build: its cross-validation
 * asks for each of them hundreds of times. */
static const hmatrix *lsd_m;
static double *lsd_table;

static double lsd(const hmatrix *m, int s, int v)
{
	if (m == lsd_m && v >= 0)
		return lsd_table[(size_t)s * m->nvariants + v];
	return log(h_slowdown(m, s, v));
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
		best[i] = log(H_MISS_SLOWDOWN);
	double current = nshapes * log(H_MISS_SLOWDOWN);
	int n = 0;
	while (n < max_variants) {
		int pick = -1;
		double pick_score = current;
		for (int v = 0; v < m->nvariants; v++) {
			if (taken[v])
				continue;
			double score = 0;
			for (int i = 0; i < nshapes; i++) {
				double l = lsd(m, shapes[i], v);
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
			double l = lsd(m, shapes[i], pick);
			if (l < best[i])
				best[i] = l;
		}
		current = pick_score;
		if (exp(current / nshapes) <= goal)
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
				cost += lsd(m, shapes[i], v);
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

typedef struct fit_ctx {
	const hmatrix *m;
	const int *subset;
	int nsubset;
	const htree_params *p;
	htree *t;
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

/* The leaf's ordered fallback list: every subset variant, by its mean log
 * slowdown over the leaf's shapes where its AOTC_VALID_IF holds (a variant
 * only ever runs where it is valid; elsewhere the next one takes over),
 * variants valid on none of them last. The first valid one is chosen. */
static void make_leaf(fit_ctx *c, int node, const int *shapes, int n)
{
	ranked *r = xmalloc((size_t)c->nsubset * sizeof *r + 1);
	for (int i = 0; i < c->nsubset; i++) {
		r[i].v = c->subset[i];
		double sum = 0;
		int valid = 0;
		for (int j = 0; j < n; j++)
			if (h_valid(c->m, shapes[j], r[i].v)) {
				sum += lsd(c->m, shapes[j], r[i].v);
				valid++;
			}
		r[i].cost = valid ? sum / valid : 2 * log(H_MISS_SLOWDOWN);
	}
	qsort(r, (size_t)c->nsubset, sizeof *r, cmp_ranked);
	hnode *nd = &c->t->nodes[node];
	nd->feature = -1;
	nd->order = xmalloc((size_t)c->nsubset * sizeof *nd->order + 1);
	nd->norder = c->nsubset;
	for (int i = 0; i < c->nsubset; i++)
		nd->order[i] = r[i].v;
	nd->cost = 0;
	for (int j = 0; j < n; j++) {
		int v = -1;
		for (int i = 0; i < nd->norder && v < 0; i++)
			if (h_valid(c->m, shapes[j], nd->order[i]))
				v = nd->order[i];
		nd->cost += lsd(c->m, shapes[j], v);
	}
	free(r);
}

static const hmatrix *sort_m;
static int sort_f;

static int cmp_by_feature(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	double fx = h_feat(sort_m, x, sort_f), fy = h_feat(sort_m, y, sort_f);
	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x - y;
}

/* Every feature's order over all the matrix's shapes, as cmp_by_feature
 * sorts them, computed once by h_build: a node holding a fair share of the
 * shapes takes its sorted list from it in one pass instead of sorting
 * (the same list, the order being total). */
static const hmatrix *order_m;
static int *order_tab;          /* [f * nshapes + i] */
static unsigned *order_mark;    /* per shape: order_stamp if in the node */
static unsigned order_stamp;

static void sort_by_feature(const hmatrix *m, int *sorted, const int *shapes, int n, int f)
{
	if (m == order_m && (double)n * log2((double)n + 1) * 4 > m->nshapes) {
		if (++order_stamp == 0) {
			memset(order_mark, 0, (size_t)m->nshapes * sizeof *order_mark);
			order_stamp = 1;
		}
		for (int i = 0; i < n; i++)
			order_mark[shapes[i]] = order_stamp;
		const int *o = order_tab + (size_t)f * m->nshapes;
		int k = 0;
		for (int i = 0; i < m->nshapes; i++)
			if (order_mark[o[i]] == order_stamp)
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
	int V = c->nsubset;
	if (depth >= c->p->max_depth || n < 2 * c->p->min_leaf || n < 2 || V < 2) {
		make_leaf(c, node, shapes, n);
		return;
	}
	/* cost[v] over the node, prefix sums in each feature's order */
	double *total = xcalloc((size_t)V, sizeof *total);
	for (int i = 0; i < V; i++)
		for (int j = 0; j < n; j++)
			total[i] += lsd(m, shapes[j], c->subset[i]);
	double parent = INFINITY;
	for (int i = 0; i < V; i++)
		if (total[i] < parent)
			parent = total[i];
	double *prefix = xmalloc((size_t)V * sizeof *prefix);
	int *sorted = xmalloc((size_t)n * sizeof *sorted);
	int best_f = -1, best_pos = -1;
	double best_cost = parent - n * log(c->p->min_gain), best_t = 0;
	for (int f = 0; f < m->nfeatures; f++) {
		sort_by_feature(m, sorted, shapes, n, f);
		memset(prefix, 0, (size_t)V * sizeof *prefix);
		for (int pos = 1; pos < n; pos++) {
			for (int i = 0; i < V; i++)
				prefix[i] += lsd(m, sorted[pos - 1], c->subset[i]);
			double a = h_feat(m, sorted[pos - 1], f), b = h_feat(m, sorted[pos], f);
			if (a == b || pos < c->p->min_leaf || n - pos < c->p->min_leaf)
				continue;
			double left = INFINITY, right = INFINITY;
			for (int i = 0; i < V; i++) {
				if (prefix[i] < left)
					left = prefix[i];
				if (total[i] - prefix[i] < right)
					right = total[i] - prefix[i];
			}
			/* strictly better, so the first feature and position win ties */
			if (left + right < best_cost - 1e-12) {
				best_cost = left + right;
				best_f = f;
				best_pos = pos;
				best_t = threshold_between(a, b);
			}
		}
	}
	if (best_f < 0) {
		free(total);
		free(prefix);
		free(sorted);
		make_leaf(c, node, shapes, n);
		return;
	}
	sort_by_feature(m, sorted, shapes, n, best_f);
	int l = add_node(c->t), r = add_node(c->t);
	hnode *nd = &c->t->nodes[node];
	nd->feature = best_f;
	nd->threshold = best_t;
	nd->left = l;
	nd->right = r;
	nd->cost = best_cost;
	grow(c, l, sorted, best_pos, depth + 1);
	grow(c, r, sorted + best_pos, n - best_pos, depth + 1);
	free(total);
	free(prefix);
	free(sorted);
}

void htree_fit(htree *t, const hmatrix *m, const int *shapes, int nshapes, const int *subset,
               int nsubset, const htree_params *p)
{
	memset(t, 0, sizeof *t);
	t->max_depth = p->max_depth;
	t->min_leaf = p->min_leaf;
	fit_ctx c = {m, subset, nsubset, p, t};
	int *work = xmalloc((size_t)nshapes * sizeof *work + 1);
	memcpy(work, shapes, (size_t)nshapes * sizeof *work);
	int root = add_node(t);
	grow(&c, root, work, nshapes, 0);
	free(work);
}

void htree_finish(htree *t)
{
	for (int i = 0; i < t->nnodes; i++)
		free(t->nodes[i].order);
	free(t->nodes);
	memset(t, 0, sizeof *t);
}

int htree_choose(const htree *t, const double *feat, const bool *valid)
{
	if (!t->nnodes)
		return -1;
	const hnode *n = &t->nodes[0];
	while (n->feature >= 0)
		n = &t->nodes[feat[n->feature] <= n->threshold ? n->left : n->right];
	for (int i = 0; i < n->norder; i++)
		if (valid[n->order[i]])
			return n->order[i];
	return -1;
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
		strbuf_printf(sb, "%*s-> %s", indent, "", n->norder ? m->variant_names[n->order[0]] : "-1");
		if (n->norder > 1) {
			strbuf_puts(sb, "   (else ");
			for (int k = 1; k < n->norder; k++)
				strbuf_printf(sb, "%s%s", k > 1 ? ", " : "", m->variant_names[n->order[k]]);
			strbuf_putc(sb, ')');
		}
		strbuf_printf(sb, "   [%d shapes]\n", n->nshapes);
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
	o->max_variants = 8;
	o->goal = 1.02;
	o->folds = 5;
	o->seed = 1;
	o->min_gain = 1.005;
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
			r[v].cost += lsd(m, shapes[j], v);
	}
	qsort(r, (size_t)m->nvariants, sizeof *r, cmp_ranked);
	for (int v = 0; v < m->nvariants; v++)
		order[v] = r[v].v;
	int best = m->nvariants ? r[0].v : -1;
	free(r);
	return best;
}

static int first_valid(const hmatrix *m, int s, const int *order, int n)
{
	for (int i = 0; i < n; i++)
		if (h_valid(m, s, order[i]))
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

static const nn_index *sort_ix;
static int sort_dim;

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
                          const nn_index *ix, int s)
{
	int best = -1;
	double bd = INFINITY;
	if (ix && n > 0) {
		double *qs = xmalloc((size_t)ix->nf * sizeof *qs + 1);
		for (int f = 0, a = 0; f < m->nfeatures; f++)
			if (scale[f] > 0)
				qs[a++] = squash(h_feat(m, s, f));
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
			double x = (squash(h_feat(m, s, f)) - squash(h_feat(m, train[j], f))) / scale[f];
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
		if (h_valid(m, s, v) && h_time(m, best, v) < pt) {
			pt = h_time(m, best, v);
			pick = v;
		}
	if (pick < 0)
		for (int v = 0; v < m->nvariants && pick < 0; v++)
			if (h_valid(m, s, v))
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
	hstats st = {1, 1, 1, 0, n};
	if (n == 0)
		return st;
	double sum = 0;
	for (int i = 0; i < n; i++) {
		sum += log(sd[i]);
		st.misses += sd[i] >= H_MISS_SLOWDOWN;
	}
	qsort(sd, (size_t)n, sizeof *sd, cmp_double);
	st.geomean = exp(sum / n);
	int k = (int)ceil(0.9 * n) - 1;
	st.p90 = sd[k < 0 ? 0 : k];
	st.worst = sd[n - 1];
	return st;
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
static void helion_grow(htree *t, int node, const hmatrix *m, int *shapes, int n, const int *label,
                        const int *subset, int k, int depth)
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
		sort_by_feature(m, sorted, shapes, n, f);
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
		sort_by_feature(m, sorted, shapes, n, best_f);
		int l = add_node(t), rr = add_node(t);
		nd = &t->nodes[node];
		nd->feature = best_f;
		nd->threshold = best_t;
		nd->left = l;
		nd->right = rr;
		helion_grow(t, l, m, sorted, best_pos, label, subset, k, depth + 1);
		helion_grow(t, rr, m, sorted + best_pos, n - best_pos, label, subset, k, depth + 1);
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
	if (k > 0)
		helion_grow(t, 0, m, work, n, label, subset, k, 0);
	free(work);
	free(label);
	free(subset);
}

typedef struct model {
	int *subset;
	int nsubset, ncover;
	htree tree;
	htree helion;
	int *single_order;
	double *scale;
	nn_index *nn;
	const int *train;
	int ntrain;
} model;

static void model_fit(model *md, const hmatrix *m, const int *train, int n, const hoptions *o,
                      const htree_params *p)
{
	md->subset = xmalloc(((size_t)o->max_variants + (size_t)m->nvariants) * sizeof *md->subset + 1);
	md->nsubset = h_select_subset(m, train, n, o->max_variants, o->goal, md->subset);
	md->ncover = h_cover(m, train, n, md->subset, &md->nsubset);
	htree_fit(&md->tree, m, train, n, md->subset, md->nsubset, p);
	md->single_order = xmalloc((size_t)m->nvariants * sizeof *md->single_order + 1);
	single_fit(m, train, n, md->single_order);
	md->scale = xmalloc((size_t)m->nfeatures * sizeof *md->scale + 1);
	nearest_scale(m, train, n, md->scale);
	md->nn = nn_build(m, train, n, md->scale);
	helion_fit(&md->helion, m, train, n, o->max_variants);
	md->train = train;
	md->ntrain = n;
}

static void model_finish(model *md)
{
	free(md->subset);
	htree_finish(&md->tree);
	htree_finish(&md->helion);
	free(md->single_order);
	free(md->scale);
	nn_destroy(md->nn);
}

static int model_choose(const model *md, const hmatrix *m, hselector sel, int s)
{
	switch (sel) {
	case SEL_SINGLE:
		return first_valid(m, s, md->single_order, m->nvariants);
	case SEL_NEAREST:
		return nearest_choose(m, md->train, md->ntrain, md->scale, md->nn, s);
	case SEL_HELION:
		return htree_choose(&md->helion, &m->feat[(size_t)s * m->nfeatures],
		                    &m->valid[(size_t)s * m->nvariants]);
	default:
		return htree_choose(&md->tree, &m->feat[(size_t)s * m->nfeatures],
		                    &m->valid[(size_t)s * m->nvariants]);
	}
}

/* splitmix64, for a deterministic fold assignment */
static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Held-out slowdowns of every selector: fold by fold, fit on the others,
 * choose on this one. sd[sel][i] for shapes[i]. */
static void cross_validate(const hmatrix *m, const int *shapes, int n, const int *fold, int k,
                           const hoptions *o, const htree_params *p, double *sd[SEL_COUNT],
                           bool tree_only)
{
	int *train = xmalloc((size_t)n * sizeof *train + 1);
	for (int f = 0; f < k; f++) {
		int nt = 0;
		for (int i = 0; i < n; i++)
			if (fold[i] != f)
				train[nt++] = shapes[i];
		if (nt == n)
			continue;
		model md;
		if (tree_only) {
			md = (model){0};
			md.subset = xmalloc(((size_t)o->max_variants + (size_t)m->nvariants) * sizeof *md.subset + 1);
			md.nsubset = h_select_subset(m, train, nt, o->max_variants, o->goal, md.subset);
			h_cover(m, train, nt, md.subset, &md.nsubset);
			htree_fit(&md.tree, m, train, nt, md.subset, md.nsubset, p);
		} else {
			model_fit(&md, m, train, nt, o, p);
		}
		for (int i = 0; i < n; i++) {
			if (fold[i] != f)
				continue;
			for (int sel = tree_only ? SEL_TREE : 0; sel < SEL_COUNT; sel++)
				sd[sel][i] = h_slowdown(m, shapes[i], model_choose(&md, m, (hselector)sel, shapes[i]));
		}
		if (tree_only) {
			free(md.subset);
			htree_finish(&md.tree);
		} else {
			model_finish(&md);
		}
	}
	free(train);
}

void h_build(hresult *r, const hmatrix *m, const hoptions *o)
{
	memset(r, 0, sizeof *r);
	lsd_table = xmalloc((size_t)m->nshapes * (size_t)m->nvariants * sizeof *lsd_table + 1);
	for (int s = 0; s < m->nshapes; s++)
		for (int v = 0; v < m->nvariants; v++)
			lsd_table[(size_t)s * m->nvariants + v] = log(h_slowdown(m, s, v));
	lsd_m = m;
	order_tab = xmalloc((size_t)m->nfeatures * (size_t)m->nshapes * sizeof *order_tab + 1);
	for (int f = 0; f < m->nfeatures; f++) {
		int *o = order_tab + (size_t)f * m->nshapes;
		for (int s = 0; s < m->nshapes; s++)
			o[s] = s;
		sort_m = m;
		sort_f = f;
		qsort(o, (size_t)m->nshapes, sizeof *o, cmp_by_feature);
	}
	order_mark = xcalloc((size_t)m->nshapes + 1, sizeof *order_mark);
	order_stamp = 0;
	order_m = m;
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
	/* Folds over a random permutation. Beyond H_CV_SHAPES shapes, the tree
	 * size and the held-out figures come from cross-validation over the
	 * first H_CV_SHAPES of that permutation (in shape order) and only the
	 * final models see every shape: CV is most of the work, and
	 * H_CV_SHAPES shapes settle a tree's size as well as more would. */
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
	int *cv_shapes = shapes, *fold = xmalloc((size_t)n * sizeof *fold + 1);
	int k = o->folds < 2 ? 2 : o->folds;
	if (k > ncv)
		k = ncv > 1 ? ncv : 1;
	if (ncv < n) {
		bool *take = xcalloc((size_t)n + 1, 1);
		for (int i = 0; i < ncv; i++)
			take[perm[i]] = true;
		cv_shapes = xmalloc((size_t)ncv * sizeof *cv_shapes + 1);
		for (int i = 0, c = 0; i < n; i++)
			if (take[i])
				cv_shapes[c++] = shapes[i];
		/* folds by permutation rank within the sample */
		int *rank = xmalloc((size_t)n * sizeof *rank + 1);
		for (int i = 0; i < n; i++)
			rank[perm[i]] = i;
		for (int i = 0, c = 0; i < n; i++)
			if (take[i])
				fold[c++] = rank[i] % k;
		free(rank);
		free(take);
	} else {
		for (int i = 0; i < n; i++)
			fold[perm[i]] = i % k;
	}
	free(perm);
	r->cv_shapes = ncv;

	/* Tree size by held-out cost; ties (within 0.1%) go to the simpler. */
	static const int depths[] = {0, 1, 2, 3, 4, 5, 6};
	static const int leaves[] = {8, 4, 2, 1};
	htree_params best = {0, 1, o->min_gain};
	double best_score = INFINITY;
	double *sd[SEL_COUNT];
	for (int i = 0; i < SEL_COUNT; i++)
		sd[i] = xmalloc((size_t)n * sizeof *sd[i] + 1);
	for (size_t di = 0; di < sizeof depths / sizeof *depths && ncv > 1; di++)
		for (size_t li = 0; li < sizeof leaves / sizeof *leaves; li++) {
			htree_params p = {depths[di], leaves[li], o->min_gain};
			cross_validate(m, cv_shapes, ncv, fold, k, o, &p, sd, true);
			double sum = 0;
			for (int i = 0; i < ncv; i++)
				sum += log(sd[SEL_TREE][i]);
			if (sum < best_score - ncv * log(1.001)) {
				best_score = sum;
				best = p;
			}
		}
	r->cv_geomean = ncv ? exp(best_score / ncv) : 1;

	/* Held-out figures of all three selectors with that size. */
	cross_validate(m, cv_shapes, ncv, fold, k, o, &best, sd, false);
	for (int sel = 0; sel < SEL_COUNT; sel++)
		r->heldout[sel] = h_stats(sd[sel], ncv);
	if (cv_shapes != shapes)
		free(cv_shapes);

	/* The final models, on every shape, and their training figures. */
	model md;
	model_fit(&md, m, shapes, n, o, &best);
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		for (int i = 0; i < n; i++)
			sd[sel][i] = h_slowdown(m, shapes[i], model_choose(&md, m, (hselector)sel, shapes[i]));
		r->train[sel] = h_stats(sd[sel], n);
	}
	r->subset = md.subset;
	r->nsubset = md.nsubset;
	r->ncover = md.ncover;
	r->tree = md.tree;
	r->single_order = md.single_order;
	r->single = m->nvariants ? md.single_order[0] : -1;
	free(md.scale);
	nn_destroy(md.nn);
	htree_finish(&md.helion);
	for (int i = 0; i < SEL_COUNT; i++)
		free(sd[i]);
	free(fold);
	free(shapes);
	lsd_m = NULL;
	free(lsd_table);
	lsd_table = NULL;
	probe_m = NULL;
	free(probe_valid);
	probe_valid = NULL;
	order_m = NULL;
	free(order_tab);
	free(order_mark);
	order_tab = NULL;
	order_mark = NULL;
}

void hresult_finish(hresult *r)
{
	free(r->subset);
	htree_finish(&r->tree);
	free(r->single_order);
	memset(r, 0, sizeof *r);
}

void h_print_report(strbuf *sb, const hresult *r, const hmatrix *m)
{
	static const char *names[SEL_COUNT] = {"best single variant", "nearest neighbour",
	                                       "Helion-style tree", "aotc decision tree"};
	int covered = m->nshapes - r->uncovered;
	strbuf_printf(sb, "%d shapes (%d where no variant ran), %d variants; %d chosen for the dispatch",
	              m->nshapes, r->uncovered, m->nvariants, r->nsubset);
	if (r->ncover)
		strbuf_printf(sb, " (%d of them so that every shape near the measured ones has a valid variant)",
		              r->ncover);
	strbuf_putc(sb, '\n');
	strbuf_printf(sb, "tree: depth %d, %d leaves (max depth %d, min leaf %d, chosen by cross-validation over %d shapes",
	              htree_depth(&r->tree), htree_leaves(&r->tree), r->tree.max_depth, r->tree.min_leaf,
	              r->cv_shapes);
	if (r->cv_shapes < covered)
		strbuf_printf(sb, " drawn from the %d, the held-out figures too", covered);
	strbuf_puts(sb, ")\n\n");
	strbuf_printf(sb, "%-22s %-28s %s\n", "slowdown vs oracle", "training shapes", "held-out shapes (cross-validated)");
	strbuf_printf(sb, "%-22s %8s %8s %8s   %8s %8s %8s %s\n", "selector", "geomean", "p90", "worst",
	              "geomean", "p90", "worst", "misses");
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		const hstats *t = &r->train[sel], *h = &r->heldout[sel];
		strbuf_printf(sb, "%-22s %8.3f %8.3f %8.3f   %8.3f %8.3f %8.3f %d/%d\n", names[sel], t->geomean,
		              t->p90, t->worst, h->geomean, h->p90, h->worst, t->misses, h->misses);
	}
	strbuf_printf(sb, "\nbest single variant: %s\nchosen variants:", r->single >= 0 ? m->variant_names[r->single] : "none");
	for (int i = 0; i < r->nsubset; i++)
		strbuf_printf(sb, "%s %s", i ? "," : "", m->variant_names[r->subset[i]]);
	strbuf_puts(sb, "\n\ntree:\n");
	htree_print(sb, &r->tree, m);
}
