/* The matrix of measured times (heuristic.h): its oracle and log
 * slowdowns, every feature's order over the shapes, and the statistics of
 * a list of slowdowns. */
#include "heuristic_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* Every feature's order over the shapes ([f * nshapes + i]). */
static void sort_features(hmatrix *m)
{
	free(m->order);
	m->order = xmalloc((size_t)m->nfeatures * (size_t)m->nshapes * sizeof *m->order + 1);
	h_keyed *keys = xmalloc((size_t)m->nshapes * sizeof *keys + 1);
	for (int f = 0; f < m->nfeatures; f++) {
		int *ot = m->order + (size_t)f * m->nshapes;
		for (int s = 0; s < m->nshapes; s++)
			keys[s] = (h_keyed){h_feat(m, s, f), s};
		h_sort_keyed(keys, m->nshapes);
		for (int s = 0; s < m->nshapes; s++)
			ot[s] = keys[s].at;
	}
	free(keys);
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

double h_lsd(const hmatrix *m, int s, int v)
{
	if (m->lsd && v >= 0)
		return m->lsd[(size_t)s * m->nvariants + v];
	return log(h_slowdown(m, s, v));
}

void h_normalise_weights(double *w, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += w[i];
	for (int i = 0; sum > 0 && i < n; i++)
		w[i] *= n / sum;
}

static int cmp_keyed(const void *a, const void *b)
{
	const h_keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->at - y->at;
}

void h_sort_keyed(h_keyed *k, int n) { qsort(k, (size_t)n, sizeof *k, cmp_keyed); }

int h_cmp_ranked(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->v - y->v;
}

void h_sort_scratch_finish(sort_scratch *ss)
{
	free(ss->mark);
	free(ss->keys);
	memset(ss, 0, sizeof *ss);
}

/* A node holding a fair share of the shapes takes its sorted list from the
 * matrix's order in one pass instead of sorting (the same list, the order
 * being total). */
void h_sort_by_feature(const hmatrix *m, sort_scratch *ss, int *sorted, const int *shapes, int n, int f)
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
	if ((size_t)n > ss->cap) {
		ss->cap = (size_t)n;
		ss->keys = xrealloc(ss->keys, ss->cap * sizeof *ss->keys);
	}
	for (int i = 0; i < n; i++)
		ss->keys[i] = (h_keyed){h_feat(m, shapes[i], f), shapes[i]};
	h_sort_keyed(ss->keys, n);
	for (int i = 0; i < n; i++)
		sorted[i] = ss->keys[i].at;
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
