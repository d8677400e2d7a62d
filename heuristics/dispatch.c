#include "dispatch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "failures.h"
#include "from_db.h"
#include "shapes.h"

void dispatch_finish(dispatch *d)
{
	if (!d)
		return;
	for (int v = 0; v < d->nvariants; v++) {
		free(d->variants[v].name);
		free(d->variants[v].values);
		free(d->variants[v].function);
		free(d->variants[v].failed);
		free(d->variants[v].terms);
	}
	free(d->variants);
	free(d->features);
	free(d->nodes);
	free(d->orders);
	free(d->order_at);
	free(d->fig.hardware);
	free(d->from.db);
	diag_list_finish(&d->from.notes);
	memset(d, 0, sizeof *d);
}

int dispatch_leaf(const dispatch *d, const int64_t *feat)
{
	int i = 0;
	while (d->nodes[i].feature >= 0)
		i = feat[d->nodes[i].feature] <= d->nodes[i].threshold ? d->nodes[i].left : d->nodes[i].right;
	return i;
}

static int depth_of(const dispatch *d, int i)
{
	const dnode *n = &d->nodes[i];
	if (n->feature < 0)
		return 0;
	int l = depth_of(d, n->left), r = depth_of(d, n->right);
	return 1 + (l > r ? l : r);
}

int dispatch_depth(const dispatch *d) { return d->nnodes ? depth_of(d, 0) : 0; }

int dispatch_leaves(const dispatch *d)
{
	int n = 0;
	for (int i = 0; i < d->nnodes; i++)
		n += d->nodes[i].feature < 0;
	return n;
}

/* As htree_print (heuristics/heuristic.h): "if (cols <= 3626)" / "else",
 * indented by depth; a leaf is "-> first" and its fallbacks wrapped below. */
static void print_node(strbuf *sb, const dispatch *d, int i, int indent)
{
	const dnode *n = &d->nodes[i];
	if (n->feature < 0) {
		const int *o = d->orders + d->order_at[n->order];
		strbuf_printf(sb, "%*s-> %s\n", indent, "", o[0] >= 0 ? d->variants[o[0]].name : "-1 (none)");
		if (o[0] >= 0 && o[1] >= 0) {
			strbuf_printf(sb, "%*selse", indent + 3, "");
			size_t col = (size_t)indent + 7;
			strbuf item;
			strbuf_init(&item);
			for (int k = 1; o[k] >= 0; k++) {
				item.len = 0;
				strbuf_printf(&item, "%s%s", d->variants[o[k]].name, o[k + 1] >= 0 ? "," : "");
				strbuf_put_wrapped(sb, &col, item.data, indent + 7, DISPATCH_TEXT_WIDTH);
			}
			strbuf_finish(&item);
			strbuf_putc(sb, '\n');
		}
		return;
	}
	strbuf_printf(sb, "%*sif (%s <= %lld)\n", indent, "", d->features[n->feature].text, (long long)n->threshold);
	print_node(sb, d, n->left, indent + 2);
	strbuf_printf(sb, "%*selse\n", indent, "");
	print_node(sb, d, n->right, indent + 2);
}

void dispatch_print(strbuf *sb, const dispatch *d)
{
	if (d->nnodes)
		print_node(sb, d, 0, 2);
}

/* ---- Asking it ------------------------------------------------------------- */

bool dispatch_params(const kernel *k, const int64_t *row, int64_t *params)
{
	shape_set ss;
	shape_set_init(&ss, k);
	bool ok = shape_param_values(k, &ss, row, params) == EVAL_OK;
	shape_set_finish(&ss);
	return ok;
}

static bool term_holds(const dterm *t, const int64_t *row)
{
	int64_t a = row[t->arg];
	switch (t->kind) {
	case DT_MULTIPLE: return a % t->bound == 0;
	case DT_AT_MOST: return a <= t->bound;
	case DT_AT_LEAST: return a >= t->bound;
	}
	return false;
}

bool dispatch_valid(const dispatch *d, const kernel *k, int v, const int64_t *row, const int64_t *params)
{
	const dvariant *dv = &d->variants[v];
	for (int i = 0; i < dv->nterms; i++)
		if (!term_holds(&dv->terms[i], row))
			return false;
	return dv->routine >= 0 || ir_dispatchable(dispatch_function(k, dv), dv->values, params);
}

const kernel *dispatch_function(const kernel *k, const dvariant *dv)
{
	return dv->alt >= 0 && dv->alt < k->nalts ? &k->alts[dv->alt] : k;
}

int dispatch_select(const dispatch *d, const kernel *k, const int64_t *row)
{
	int64_t params[k->nparams + 1], fv[k->nfeatures + k->nparams + 1], feat[d->nfeatures + 1];
	if (!dispatch_params(k, row, params))
		return -1;
	ir_features(k, params, fv);
	int na = 0;
	for (int f = 0; f < d->nfeatures; f++) {
		if (d->features[f].kfeature >= 0) {
			feat[f] = fv[d->features[f].kfeature];
			continue;
		}
		na = 0;
		for (int i = 0; i < d->features[f].param; i++)
			na += k->params[i].shape >= 0;
		feat[f] = fv[na];
	}
	const dnode *leaf = &d->nodes[dispatch_leaf(d, feat)];
	for (const int *o = d->orders + d->order_at[leaf->order]; *o >= 0; o++)
		if (dispatch_valid(d, k, *o, row, params))
			return *o;
	return -1;
}

/* ---- Building it from the heuristic --------------------------------------- */

/* The tree's leaf orders truncated where nothing after can be reached: a
 * variant never valid (dropped for its failures, or unmeasured) is left
 * out, and a variant valid wherever any is (a routine that never failed)
 * ends the list. */
static int truncate_order(const hnode *n, const hmatrix *m, const tune_db *db, int *out)
{
	int len = 0;
	for (int i = 0; i < n->norder; i++) {
		int c = n->order[i];
		const hfailure *f = m->fail ? &m->fail[c] : NULL;
		if (f && f->dropped)
			continue;
		out[len++] = c;
		if (db->configs[c].is_extern && !(f && f->nfailed))
			break;
	}
	return len;
}

typedef struct builder {
	const hmatrix *m;
	const tune_db *db;
	const htree *t;
	int **order;            /* per tree node (leaves): the truncated order, -1 ended */
	int *merged;            /* per tree node: 1 when it became a leaf */
	int *store;             /* what order[] points into */
	int orders_len;         /* of the dispatch's orders[] so far */
} builder;

static bool same_order(const int *a, const int *b)
{
	while (*a >= 0 && *a == *b)
		a++, b++;
	return *a == *b;
}

/* Bottom-up: an inner node whose two sides are leaves with the same order
 * becomes a leaf with it (the choices are the same either way). */
static const int *simplify(builder *b, int i)
{
	const hnode *n = &b->t->nodes[i];
	if (n->feature < 0)
		return b->order[i];
	const int *l = simplify(b, n->left), *r = simplify(b, n->right);
	if (l && r && same_order(l, r)) {
		b->merged[i] = 1;
		b->order[i] = (int *)l;
		return l;
	}
	return NULL;
}

static bool is_leaf(const builder *b, int i) { return b->t->nodes[i].feature < 0 || b->merged[i]; }

/* Copies the simplified tree in preorder; returns the new node's index. */
static int copy_node(builder *b, dispatch *d, int i, const int *emitted, const int *fmap)
{
	int at = d->nnodes++;
	const hnode *n = &b->t->nodes[i];
	if (is_leaf(b, i)) {
		int tmp[b->m->nvariants + 1], len = 0;
		for (const int *o = b->order[i]; *o >= 0; o++)
			tmp[len++] = emitted[*o];
		tmp[len] = -1;
		int k = 0;
		for (; k < d->norders; k++)
			if (same_order(d->orders + d->order_at[k], tmp))
				break;
		if (k == d->norders) {
			memcpy(d->orders + b->orders_len, tmp, (size_t)(len + 1) * sizeof *tmp);
			d->order_at[d->norders++] = b->orders_len;
			b->orders_len += len + 1;
		}
		d->nodes[at] = (dnode){.feature = -1, .left = -1, .right = -1, .order = k};
		return at;
	}
	double t = n->threshold;
	int64_t th = t >= 9223372036854775807.0 ? INT64_MAX : t <= -9223372036854775807.0 ? INT64_MIN : (int64_t)t;
	d->nodes[at] = (dnode){.feature = fmap[n->feature], .threshold = th, .order = -1};
	int l = copy_node(b, d, n->left, emitted, fmap);
	int r = copy_node(b, d, n->right, emitted, fmap);
	d->nodes[at].left = l;
	d->nodes[at].right = r;
	return at;
}

static void mark_features(const builder *b, int i, bool *used)
{
	if (is_leaf(b, i))
		return;
	used[b->t->nodes[i].feature] = true;
	mark_features(b, b->t->nodes[i].left, used);
	mark_features(b, b->t->nodes[i].right, used);
}

static void mark_variants(const builder *b, int i, bool *used)
{
	if (is_leaf(b, i)) {
		for (const int *o = b->order[i]; *o >= 0; o++)
			used[*o] = true;
		return;
	}
	mark_variants(b, b->t->nodes[i].left, used);
	mark_variants(b, b->t->nodes[i].right, used);
}

static dstats to_dstats(const hstats *h)
{
	return (dstats){.geomean = h->geomean, .p90 = h->p90, .worst = h->worst, .n = h->n,
	                .misses = h->misses, .failed = h->failed};
}

/* The dispatch's slowdowns on the matrix's shapes (those where some variant
 * ran, as the heuristic counts them): each shape's leaf by its features,
 * then the first variant valid there. */
static void train_figures(dispatch *d, const hmatrix *m, const htree *t, const int *config)
{
	double *sd = xmalloc((size_t)m->nshapes * sizeof *sd + 1), *w = xmalloc((size_t)m->nshapes * sizeof *w + 1);
	int64_t feat[d->nfeatures + 1];
	int n = 0;
	for (int s = 0; s < m->nshapes; s++) {
		if (!isfinite(m->oracle[s]))
			continue;
		for (int f = 0; f < d->nfeatures; f++) {
			double x = h_feat(m, s, d->features[f].kfeature >= 0 ? d->features[f].kfeature : d->features[f].param);
			feat[f] = x >= 9223372036854775807.0 ? INT64_MAX : x <= -9223372036854775807.0 ? INT64_MIN : (int64_t)x;
		}
		int choice = -1;
		for (const int *o = d->orders + d->order_at[d->nodes[dispatch_leaf(d, feat)].order]; *o >= 0 && choice < 0; o++)
			if (h_valid(m, s, config[*o]))
				choice = config[*o];
		/* Simplifying never changes a choice (features beyond 2^53 compare
		 * as int64_t here, as in the emitted code, and as doubles there). */
		bool exact = true;
		for (int f = 0; f < d->nfeatures; f++)
			exact = exact && feat[f] > -(INT64_C(1) << 53) && feat[f] < (INT64_C(1) << 53);
		if (t->nnodes && exact &&
		    choice != htree_choose(t, &m->feat[(size_t)s * m->nfeatures], &m->valid[(size_t)s * m->nvariants]))
			die("dispatch: the simplified tree chooses %d where the learnt one chooses %d (shape %d)", choice,
			    htree_choose(t, &m->feat[(size_t)s * m->nfeatures], &m->valid[(size_t)s * m->nvariants]), s);
		w[n] = h_weight(m, s);
		sd[n++] = h_slowdown(m, s, choice);
	}
	d->fig.train_w = m->weight ? h_wgeomean(sd, w, n) : 0;
	hstats h = h_stats(sd, n);
	d->fig.train = to_dstats(&h);
	if (!m->weight)
		d->fig.train_w = h.geomean;
	free(sd);
	free(w);
}

/* The leaf orders truncated (truncate_order), then the tree simplified. */
static void builder_init(builder *b, const hmatrix *m, const tune_db *db, const htree *t)
{
	*b = (builder){.m = m, .db = db, .t = t};
	b->order = xcalloc((size_t)t->nnodes + 1, sizeof *b->order);
	b->merged = xcalloc((size_t)t->nnodes + 1, sizeof *b->merged);
	b->store = xmalloc(((size_t)t->nnodes * (m->nvariants + 1) + 1) * sizeof *b->store);
	for (int i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].feature >= 0)
			continue;
		b->order[i] = b->store + (size_t)i * (m->nvariants + 1);
		b->order[i][truncate_order(&t->nodes[i], m, db, b->order[i])] = -1;
	}
	if (t->nnodes)
		simplify(b, 0);
}

static void builder_finish(builder *b)
{
	free(b->order);
	free(b->merged);
	free(b->store);
}

/* The variants some leaf can return, in database order: config[v] is
 * dispatch variant v's configuration, emitted[c] configuration c's
 * dispatch variant (-1: none). Returns how many. */
static int used_variants(const builder *b, int *emitted, int *config)
{
	int nvariants = b->m->nvariants, n = 0;
	bool *vused = xcalloc((size_t)nvariants + 1, sizeof *vused);
	if (b->t->nnodes)
		mark_variants(b, 0, vused);
	for (int c = 0; c < nvariants; c++) {
		emitted[c] = vused[c] ? n : -1;
		if (vused[c])
			config[n++] = c;
	}
	free(vused);
	return n;
}

/* Dispatch variant dv for configuration c of db: its values and names,
 * checked against the kernel k (NULL: the database alone), and where its
 * failures keep it out. False (an error in dg) when the database is not
 * k's. */
static bool make_variant(dvariant *dv, const kernel *k, const tune_db *db, const hmatrix *m, int c, arena *a,
                         diags *dg)
{
	bool ok = true;
	const db_entry *cf = &db->configs[c];
	dv->config = c;
	dv->routine = -1;
	dv->alt = -1;
	dv->values = xcalloc((size_t)cf->nvalues + 1, sizeof *dv->values);
	memcpy(dv->values, cf->values, (size_t)cf->nvalues * sizeof *dv->values);
	dv->nvalues = cf->nvalues;
	dv->name = xstrdup(cf->name);
	dv->function = cf->function ? xstrdup(cf->function) : NULL;
	const kernel *fk = k && cf->function ? ir_member(k, cf->function) : k;
	if (k && cf->function && (!fk || fk == k || fk->ntunables != cf->nvalues)) {
		diag_plain_error(dg, "%s: '%s' is not a variant of an AOTC_ALTERNATIVE of '%s': the database is not this kernel's",
		                 db->path, cf->name, k->name);
		ok = false;
		fk = NULL;
	} else if (k && cf->function) {
		dv->alt = (int)(fk - k->alts);
	}
	if (k && cf->is_extern) {
		for (int e = 0; e < k->nexterns; e++)
			if (!strcmp(k->externs[e].name, cf->name))
				dv->routine = e;
		if (dv->routine < 0) {
			diag_plain_error(dg, "%s: routine '%s' is not an AOTC_EXTERN of '%s': the database is not this kernel's",
			                 db->path, cf->name, k->name);
			ok = false;
		}
	} else if (fk) {
		/* Names come from the IR and the values, never from the
		 * database's text: a database that disagrees is refused. */
		const char *name = ir_variant_name(a, fk, cf->values);
		if (strcmp(name, cf->name) != 0) {
			diag_plain_error(dg, "%s: configuration '%s' does not match its values (%s): the database is not this kernel's",
			                 db->path, cf->name, name);
			ok = false;
		}
	} else if (cf->is_extern) {
		dv->routine = 0; /* no kernel: which routine is unknown, only that it is one */
	}
	const hfailure *f = m->fail ? &m->fail[c] : NULL;
	if (f && f->nfailed) {
		strbuf why;
		strbuf_init(&why);
		hf_print_why(&why, f, db);
		dv->failed = why.data;
		dv->terms = xcalloc((size_t)f->nterms + 1, sizeof *dv->terms);
		dv->nterms = f->nterms;
		for (int i = 0; i < f->nterms; i++)
			dv->terms[i] = (dterm){.arg = f->terms[i].arg,
			                       .kind = f->terms[i].kind == HT_MULTIPLE ? DT_MULTIPLE
			                             : f->terms[i].kind == HT_AT_MOST ? DT_AT_MOST : DT_AT_LEAST,
			                       .bound = f->terms[i].bound};
	}
	return ok;
}

/* The features the simplified tree splits on, in the matrix's order:
 * fmap[f] is matrix feature f's dispatch feature (-1: none). */
static void make_features(dispatch *d, const kernel *k, const builder *b, int *fmap)
{
	const hmatrix *m = b->m;
	bool *fused = xcalloc((size_t)m->nfeatures + 1, sizeof *fused);
	if (b->t->nnodes)
		mark_features(b, 0, fused);
	d->features = xcalloc((size_t)m->nfeatures + 1, sizeof *d->features);
	for (int f = 0; f < m->nfeatures; f++) {
		fmap[f] = -1;
		if (!fused[f])
			continue;
		dfeature *df = &d->features[d->nfeatures];
		fmap[f] = d->nfeatures++;
		df->text = m->feature_names[f];
		df->kfeature = -1;
		df->param = -1;
		if (k && k->nfeatures) {
			df->kfeature = f;
			df->text = k->features[f].text;
		} else {
			/* the f-th shape argument */
			for (int i = 0, n = 0; k && i < k->nparams; i++)
				if (k->params[i].shape >= 0 && n++ == f) {
					df->param = i;
					df->text = k->params[i].name; /* the kernel's, as documented */
				}
			if (!k)
				df->param = f;
		}
	}
	free(fused);
}

/* The tree, the orders in the variants' new numbers. */
static void make_tree(dispatch *d, builder *b, const int *emitted, const int *fmap)
{
	const htree *t = b->t;
	d->nodes = xcalloc((size_t)t->nnodes + 1, sizeof *d->nodes);
	d->orders = xmalloc(((size_t)t->nnodes * (d->nvariants + 1) + 1) * sizeof *d->orders);
	d->order_at = xmalloc(((size_t)t->nnodes + 1) * sizeof *d->order_at);
	if (t->nnodes) {
		copy_node(b, d, 0, emitted, fmap);
	} else {
		d->nodes[0] = (dnode){.feature = -1, .left = -1, .right = -1, .order = 0};
		d->orders[0] = -1;
		d->order_at[0] = 0;
		d->nnodes = d->norders = 1;
	}
}

/* Figures, for this tree. */
static void make_figures(dispatch *d, const tune_db *db, const hmatrix *m, const hresult *r, const int *config,
                         const hstats *eval, int neval)
{
	const char *hw = json_string_value(json_object_get(db->hardware, "id"));
	d->fig.hardware = hw ? xstrdup(hw) : NULL;
	d->fig.shapes = m->nshapes;
	d->fig.variants = m->nvariants;
	for (int c = 0; m->fail && c < m->nvariants; c++) {
		d->fig.failing += m->fail[c].nfailed > 0;
		d->fig.dropped += m->fail[c].dropped;
	}
	d->fig.distilled = r->distilled;
	d->fig.dense_shapes = r->dense_shapes;
	train_figures(d, m, &r->tree, config);
	d->fig.heldout = to_dstats(&r->heldout[SEL_TREE]);
	d->fig.folds = r->folds;
	d->fig.fold_by = (int)r->fold_by;
	d->fig.weighted = r->weighted;
	d->fig.heldout_w = r->heldout_w[SEL_TREE];
	if (eval && neval > 0)
		d->fig.eval = to_dstats(eval);
}

bool dispatch_from_result(dispatch *d, const kernel *k, const tune_db *db, const hmatrix *m,
                          const hresult *r, const hstats *eval, int neval, diags *dg)
{
	memset(d, 0, sizeof *d);
	builder b;
	builder_init(&b, m, db, &r->tree);
	int *emitted = xmalloc((size_t)m->nvariants * sizeof *emitted + 1);
	int *config = xmalloc((size_t)m->nvariants * sizeof *config + 1);
	d->nvariants = used_variants(&b, emitted, config);
	d->variants = xcalloc((size_t)d->nvariants + 1, sizeof *d->variants);
	d->ntunables = db->ntunables;
	bool ok = true;
	arena a;
	arena_init(&a);
	for (int v = 0; v < d->nvariants; v++)
		ok &= make_variant(&d->variants[v], k, db, m, config[v], &a, dg);
	arena_finish(&a);
	int *fmap = xmalloc((size_t)m->nfeatures * sizeof *fmap + 1);
	make_features(d, k, &b, fmap);
	make_tree(d, &b, emitted, fmap);
	make_figures(d, db, m, r, config, eval, neval);
	builder_finish(&b);
	free(emitted);
	free(config);
	free(fmap);
	if (!ok)
		dispatch_finish(d);
	return ok;
}
