/* Helion's AOT heuristic, as the baseline to beat (SEL_HELION): variants
 * chosen by how many shapes they are within 10% of the best on, and an
 * entropy tree to depth 6 fitted to the per-shape best label. */
#include "heuristic_internal.h"

#include <stdlib.h>
#include <string.h>

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
		h_sort_by_feature(m, ss, sorted, shapes, n, f);
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
				best_t = h_threshold_between(a, b);
			}
		}
	}
	hnode *nd = &t->nodes[node];
	nd->nshapes = n;
	if (best_f < 0) {
		ranked *r = xmalloc((size_t)k * sizeof *r + 1);
		for (int i = 0; i < k; i++)
			r[i] = (ranked){subset[i], -counts[i]};
		qsort(r, (size_t)k, sizeof *r, h_cmp_ranked);
		nd->order = xmalloc((size_t)k * sizeof *nd->order + 1);
		nd->norder = k;
		for (int i = 0; i < k; i++)
			nd->order[i] = r[i].v;
		free(r);
	} else {
		h_sort_by_feature(m, ss, sorted, shapes, n, best_f);
		int l = h_add_node(t), rr = h_add_node(t);
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

void h_helion_fit(htree *t, const hmatrix *m, const int *shapes, int n, int max)
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
	h_add_node(t);
	sort_scratch ss = {0};
	if (k > 0)
		helion_grow(t, 0, m, &ss, work, n, label, subset, k, 0);
	h_sort_scratch_finish(&ss);
	free(work);
	free(label);
	free(subset);
}
