/* Cross-validation (heuristic.h, hfolds): folds that fit the grid, and
 * every candidate dispatch and baseline measured on them, folds on
 * threads. */
#include "heuristic_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void make_folds(folds *F, const hmatrix *m, const int *shapes, int n, int k, const int *rank)
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

/* Held-out slowdowns of every candidate, fold by fold:
 * sd[candidate * npairs + pair]. */
typedef struct cv_job {
	const hmatrix *m;
	const int *shapes;
	int n;
	const hprobes *pv;
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
		int *sub = prefix_subset(order, norder, var_count(o, vi), m, j->pv, train, nt, &nsub, &ncov);
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
							m, shapes[i], htree_choose_cut(&t, h_feat_of(m, shapes[i]), h_valid_of(m, shapes[i]),
							                               depth_at(di)));
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

void cv_candidates(const hmatrix *m, const hprobes *pv, const int *shapes, int n, const folds *F, const hoptions *o,
                   bool dense, float *sd)
{
	int *pair0 = xmalloc(((size_t)F->k + 1) * sizeof *pair0);
	for (int f = 0, p = 0; f < F->k; f++) {
		pair0[f] = p;
		for (int i = 0; i < n; i++)
			p += F->held[(size_t)f * n + i];
	}
	cv_job j = {m, shapes, n, pv, F, o, dense ? H_NKINDS : 1, sd, pair0, 0, PTHREAD_MUTEX_INITIALIZER};
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

int best_candidate(const float *sd, int lo, int hi, int npairs, const double *pw, double *geomean)
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

void cv_baselines(const hmatrix *m, const int *shapes, int n, const folds *F, const hoptions *o,
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
				                                                       h_feat_of(m, shapes[i]), h_valid_of(m, shapes[i])));
			pair++;
		}
		model_finish(&md);
	}
	free(train);
}

void folds_finish(folds *F)
{
	free(F->held);
	memset(F, 0, sizeof *F);
}
