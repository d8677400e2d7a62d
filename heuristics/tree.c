/* The dispatch tree (heuristic.h, "Tree"): grown greedily on the shapes,
 * each split the one that most lowers the summed log slowdown of the
 * leaves' choices, each leaf an ordered list of variants to try. */
#include "heuristic_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int h_add_node(htree *t)
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
typedef struct fit_ctx {
	const hmatrix *m;
	const int *subset;
	int nsubset;
	const htree_params *p;
	htree *t;
	int *cls;               /* per matrix shape (those fitted on) */
	int ncls;
	bool *cls_valid;        /* [c * nsubset + i] */
	sort_scratch *ss;
} fit_ctx;

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
			sum[(size_t)k * V + i] += h_wlsd(m, shapes[j], c->subset[i]);
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
	qsort(r, (size_t)nr, sizeof *r, h_cmp_ranked);
	for (int i = 0; i < nr; i++)
		nd->order[nd->norder++] = r[i].v;
	nd->cost = 0;
	for (int j = 0; j < n; j++) {
		int v = -1;
		for (int i = 0; i < nd->norder && v < 0; i++)
			if (h_valid(m, shapes[j], nd->order[i]))
				v = nd->order[i];
		nd->cost += h_wlsd(m, shapes[j], v);
	}
	free(r);
	free(placed);
	free(served);
	free(best);
	free(sum);
	free(count);
}

/* An integer threshold t with a <= t < b: the geometric middle for
 * positive values (shape features are mostly sizes), else the middle. */
double h_threshold_between(double a, double b)
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
			total[(size_t)k * V + i] += h_wlsd(m, shapes[j], c->subset[i]);
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
		h_sort_by_feature(m, c->ss, sorted, shapes, n, f);
		memset(prefix, 0, cells * sizeof *prefix);
		memset(lcount, 0, (size_t)K * sizeof *lcount);
		for (int pos = 1; pos < n; pos++) {
			int s = sorted[pos - 1], k = c->cls[s];
			lcount[k] += h_weight(m, s);
			for (int i = 0; i < V; i++)
				prefix[(size_t)k * V + i] += h_wlsd(m, s, c->subset[i]);
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
				best_t = h_threshold_between(a, b);
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
	h_sort_by_feature(m, c->ss, sorted, shapes, n, best_f);
	int l = h_add_node(c->t), r = h_add_node(c->t);
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
	int root = h_add_node(t);
	grow(&c, root, work, nshapes, 0);
	free(work);
	free(c.cls);
	free(c.cls_valid);
	h_sort_scratch_finish(&ss);
}

void htree_finish(htree *t)
{
	for (int i = 0; i < t->nnodes; i++)
		free(t->nodes[i].order);
	free(t->nodes);
	memset(t, 0, sizeof *t);
}

int htree_choose_cut(const htree *t, const double *feat, const bool *valid, int depth)
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
	return htree_choose_cut(t, feat, valid, INT_MAX);
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
