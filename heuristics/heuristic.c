/* Learning the dispatch (heuristic.h, h_build), step by step: the shapes
 * to learn from, the candidates measured by cross-validation, the chosen
 * ones fitted on every shape with every selector's training figures. The
 * steps themselves live beside it (heuristic_internal.h lists them). */
#include "heuristic_internal.h"

#include <stdlib.h>
#include <string.h>

const char *const h_selector_names[SEL_COUNT] = {"best single variant", "nearest neighbour",
                                                 "Helion-style tree", "tree, measured only",
                                                 "aotc decision tree"};
const char *const h_selector_keys[SEL_COUNT] = {"single", "nearest", "helion", "measured", "tree"};

void hoptions_default(hoptions *o)
{
	o->max_variants = 16;
	o->goal = 1.0;
	o->folds = 5;
	o->seed = 1;
	o->min_gain = 1.005;
	o->distill = true;
}

/* One h_build: what every step reads, and what cross-validation chose. */
typedef struct build {
	hresult *r;
	const hmatrix *m;
	const hoptions *o;
	hprobes probes;         /* validity near every shape, made once */
	bool model_possible;    /* a cost model can be fitted (h_build says when) */
	int *shapes, n;         /* the shapes where some variant ran */
	int zm, zt;             /* the candidates chosen: measured tree, dispatch */
} build;

/* Shapes where nothing ran teach nothing: counted as uncovered, then left
 * out. */
static void usable_shapes(build *b)
{
	const hmatrix *m = b->m;
	b->shapes = xmalloc((size_t)m->nshapes * sizeof *b->shapes + 1);
	b->n = 0;
	for (int s = 0; s < m->nshapes; s++) {
		if (isfinite(m->oracle[s]))
			b->shapes[b->n++] = s;
		else
			b->r->uncovered++;
	}
}

/* Beyond H_CV_SHAPES shapes, the candidate and the held-out figures come
 * from cross-validation over H_CV_SHAPES of them drawn by the seed (in
 * shape order); only the final models see every shape. cv[0..ncv) gets
 * them, rank[] each one's place in the draw. */
static void draw_cv_shapes(const build *b, int ncv, int *cv, int *rank)
{
	int n = b->n;
	int *perm = xmalloc((size_t)n * sizeof *perm + 1);
	for (int i = 0; i < n; i++)
		perm[i] = i;
	uint64_t seed = b->o->seed;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(h_mix(&seed) % (uint64_t)(i + 1));
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	int *rk = xmalloc((size_t)n * sizeof *rk + 1);
	for (int i = 0; i < n; i++)
		rk[perm[i]] = i;
	for (int i = 0, c = 0; i < n; i++)
		if (rk[i] < ncv) {
			rank[c] = rk[i];
			cv[c++] = b->shapes[i];
		}
	free(rk);
	free(perm);
}

/* Each held-out pair's weight, in the pairs' order (fold, then shape);
 * NULL without weights. */
static double *pair_weights(const hmatrix *m, const folds *F, const int *cv)
{
	if (!m->weight)
		return NULL;
	double *pw = xmalloc((size_t)F->npairs * sizeof *pw + 1);
	for (int f = 0, pair = 0; f < F->k; f++)
		for (int i = 0; i < F->n; i++)
			if (F->held[(size_t)f * F->n + i])
				pw[pair++] = m->weight[cv[i]];
	return pw;
}

/* Every candidate's held-out slowdowns; the best measured one is
 * SEL_MEASURED (b->zm), the best of all the dispatch (SEL_TREE, b->zt),
 * whose held-out slowdowns go to sd[] and geomean is returned. */
static double choose_candidates(build *b, const int *cv, const folds *F, const double *pw, double *sd[SEL_COUNT])
{
	hresult *r = b->r;
	const hoptions *o = b->o;
	int nmeasured = kind_first(o, H_KIND_MODEL), ncand = ncandidates(o, b->model_possible);
	float *csd = xmalloc((size_t)ncand * F->npairs * sizeof *csd + 1);
	cv_candidates(b->m, &b->probes, cv, F->n, F, o, b->model_possible, csd);
	for (int kk = (b->model_possible ? H_NKINDS : 1) - 1; kk >= 0; kk--) {
		b->zm = best_candidate(csd, kind_first(o, (hkind)kk), kind_first(o, (hkind)(kk + 1)), F->npairs, pw,
		                       &r->kind_cv[kk]);
		r->kind_nvar[kk] = candidate_at(o, b->zm).nvar;
	}
	double gm = r->kind_cv[H_KIND_MEASURED]; /* zm: the last, the measured kind's */
	double gt = gm;
	b->zt = b->zm;
	if (b->model_possible) {
		/* the measured tree must beat the distilled one by 0.1%: where
		 * the folds cannot tell them apart (no held-out shape falls
		 * between two measured ones), the cost model's interpolation
		 * is the better guess (tests/unit/test_heuristic.c,
		 * test_breakpoint) */
		double gd;
		int zd = best_candidate(csd, nmeasured, ncand, F->npairs, pw, &gd);
		if (!(gm < gd / 1.001)) {
			b->zt = zd;
			gt = gd;
		}
	}
	for (int i = 0; i < F->npairs; i++) {
		sd[SEL_MEASURED][i] = csd[(size_t)b->zm * F->npairs + i];
		sd[SEL_TREE][i] = csd[(size_t)b->zt * F->npairs + i];
	}
	free(csd);
	return gt;
}

/* Each selector's figures on slowdowns sd[sel][0..n) (reordered), and
 * weighted by w[] where there are weights. */
static void figures(hstats st[SEL_COUNT], double wgeomean[SEL_COUNT], double *sd[SEL_COUNT], const double *w, int n)
{
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		double g = w ? h_wgeomean(sd[sel], w, n) : 0; /* before h_stats reorders sd */
		st[sel] = h_stats(sd[sel], n);
		wgeomean[sel] = w ? g : st[sel].geomean;
	}
}

/* Cross-validation over (at most H_CV_SHAPES of) the shapes: the folds,
 * the candidates chosen, every selector's held-out figures. */
static void cross_validate(build *b)
{
	hresult *r = b->r;
	int ncv = b->n > H_CV_SHAPES ? H_CV_SHAPES : b->n;
	int *cv = xmalloc((size_t)ncv * sizeof *cv + 1), *rank = xmalloc((size_t)ncv * sizeof *rank + 1);
	draw_cv_shapes(b, ncv, cv, rank);
	r->cv_shapes = ncv;
	int k = b->o->folds < 2 ? 2 : b->o->folds;
	if (k > ncv)
		k = ncv > 1 ? ncv : 1;
	folds F;
	make_folds(&F, b->m, cv, ncv, ncv > 1 ? k : 0, rank);
	free(rank);
	r->folds = F.k;
	r->fold_by = F.by;
	double *sd[SEL_COUNT];
	for (int i = 0; i < SEL_COUNT; i++)
		sd[i] = xmalloc((size_t)F.npairs * sizeof *sd[i] + 1);
	double *pw = pair_weights(b->m, &F, cv);
	r->weighted = pw != NULL;
	b->zm = b->zt = 0;
	r->cv_geomean = 1;
	if (F.k > 0) {
		r->cv_geomean = choose_candidates(b, cv, &F, pw, sd);
		cv_baselines(b->m, cv, ncv, &F, b->o, sd);
	}
	figures(r->heldout, r->heldout_w, sd, pw, F.npairs);
	for (int i = 0; i < SEL_COUNT; i++)
		free(sd[i]);
	free(pw);
	folds_finish(&F);
	free(cv);
}

/* The geometric-mean slowdown of tree t on the shapes it was fitted on. */
static double training_geomean(const build *b, const htree *t)
{
	double sum = 0;
	for (int i = 0; i < b->n; i++) {
		int s = b->shapes[i];
		sum += log(h_slowdown(b->m, s, htree_choose(t, h_feat_of(b->m, s), h_valid_of(b->m, s))));
	}
	return b->n ? exp(sum / b->n) : 1;
}

/* A distilled dispatch may lose this much to the measured tree on the
 * measured shapes themselves. */
#define H_DISTILLED_TRAIN_SLACK 1.02

/* The final models on every shape: the baselines, the measured tree
 * (SEL_MEASURED) and the dispatch with its cost model. Where the
 * distilled dispatch chosen by cross-validation is more than 2% slower
 * than the measured tree on the measured shapes, the measured tree is the
 * dispatch: cross-validation tied them (a distilled tree is taken on a
 * tie), and folds that each hold out one value can be right by chance
 * with one variant per fold (tests/unit/test_heuristic.c,
 * test_distilled_contradicted), where the measurements say otherwise. */
static void fit_final(build *b)
{
	hresult *r = b->r;
	const hmatrix *m = b->m;
	model *md = xcalloc(1, sizeof *md);
	model_fit(md, m, b->shapes, b->n, b->o);
	candidate xm = candidate_at(b->o, b->zm), xt = candidate_at(b->o, b->zt);
	fitted f;
	fit_candidate(&f, &xm, m, &b->probes, b->shapes, b->n, b->o, false);
	md->measured = f.tree;
	md->subset = f.subset;
	md->nsubset = f.nsubset;
	md->ncover = f.ncover;
	cm_finish(&f.cm);
	fit_candidate(&f, &xt, m, &b->probes, b->shapes, b->n, b->o, b->model_possible);
	if (xt.kind != H_KIND_MEASURED &&
	    training_geomean(b, &f.tree) > training_geomean(b, &md->measured) * H_DISTILLED_TRAIN_SLACK) {
		htree_finish(&f.tree);
		free(f.subset);
		cm_finish(&f.cm);
		r->distilled_contradicted = true;
		b->zt = b->zm;
		xt = xm;
		fit_candidate(&f, &xt, m, &b->probes, b->shapes, b->n, b->o, b->model_possible);
	}
	r->tree = f.tree;
	r->subset = f.subset;
	r->nsubset = f.nsubset;
	r->ncover = f.ncover;
	md->cost = f.cm;
	r->dense_shapes = f.ndense;
	r->distilled = xt.kind != H_KIND_MEASURED;
	r->kind = xt.kind;
	r->nvar = xt.nvar;
	r->model = md;
	r->single_order = xmalloc((size_t)m->nvariants * sizeof *r->single_order + 1);
	memcpy(r->single_order, md->single_order, (size_t)m->nvariants * sizeof *r->single_order);
	r->single = m->nvariants ? md->single_order[0] : -1;
}

/* Every selector's figures on the shapes it was fitted on. */
static void training_figures(build *b)
{
	const hmatrix *m = b->m;
	int n = b->n;
	double *sd[SEL_COUNT];
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		sd[sel] = xmalloc((size_t)n * sizeof *sd[sel] + 1);
		for (int i = 0; i < n; i++) {
			int s = b->shapes[i];
			sd[sel][i] = h_slowdown(m, s, h_choose(b->r, m, (hselector)sel, h_feat_of(m, s), h_valid_of(m, s)));
		}
	}
	double *tw = NULL; /* the training shapes' weights */
	if (m->weight) {
		tw = xmalloc((size_t)n * sizeof *tw + 1);
		for (int i = 0; i < n; i++)
			tw[i] = m->weight[b->shapes[i]];
	}
	figures(b->r->train, b->r->train_w, sd, tw, n);
	free(tw);
	for (int sel = 0; sel < SEL_COUNT; sel++)
		free(sd[sel]);
}

void h_build(hresult *r, const hmatrix *m, const hoptions *o)
{
	memset(r, 0, sizeof *r);
	build b = {.r = r, .m = m, .o = o};
	hprobes_init(&b.probes, m);
	usable_shapes(&b);
	b.model_possible = o->distill && m->row_info && m->cost_row && m->ncost > 0 && m->rows && m->nargs > 0 &&
	                   b.n >= 2 && b.n < H_DENSE_SHAPES;
	cross_validate(&b);
	fit_final(&b);
	training_figures(&b);
	free(b.shapes);
	hprobes_finish(&b.probes);
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
