/* Which variants the dispatch chooses among (heuristic.h, "Variant
 * subset"): the greedy order that most lowers the slowdown, completed so
 * that every shape near the measured ones has a valid variant. */
#include "heuristic_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double weight_sum(const hmatrix *m, const int *shapes, int n)
{
	double w = 0;
	for (int i = 0; i < n; i++)
		w += h_weight(m, shapes[i]);
	return w;
}

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
				double l = h_wlsd(m, shapes[i], v);
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
			double l = h_wlsd(m, shapes[i], pick);
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

void hprobes_init(hprobes *p, const hmatrix *m)
{
	memset(p, 0, sizeof *p);
	if (!m->valid_at || !m->rows || m->nargs == 0)
		return;
	p->m = m;
	p->per = 1 + 2 * m->nargs;
	int64_t *row = xmalloc((size_t)m->nargs * sizeof *row);
	p->valid = xmalloc((size_t)m->nshapes * (size_t)p->per * (size_t)m->nvariants + 1);
	for (int s = 0; s < m->nshapes; s++)
		for (int k = 0; k < p->per; k++) {
			make_probe(m, s, k, row);
			for (int v = 0; v < m->nvariants; v++)
				p->valid[((size_t)s * p->per + (size_t)k) * m->nvariants + v] = m->valid_at(m->valid_ctx, row, v);
		}
	free(row);
}

void hprobes_finish(hprobes *p)
{
	free(p->valid);
	memset(p, 0, sizeof *p);
}

int h_cover(const hmatrix *m, const int *shapes, int nshapes, int *subset, int *n)
{
	return h_cover_probed(m, NULL, shapes, nshapes, subset, n);
}

int h_cover_probed(const hmatrix *m, const hprobes *pv, const int *shapes, int nshapes, int *subset, int *n)
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
			bool ok = pv && pv->valid && pv->m == m
				? pv->valid[((size_t)shapes[p / per] * per + (size_t)(p % per)) * m->nvariants + v]
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
				cost += h_wlsd(m, shapes[i], v);
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
