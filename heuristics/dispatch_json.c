/* The saved dispatch (docs/database.md, "The saved dispatch"):
 *
 *   {"aotc_dispatch": DISPATCH_VERSION, "key": "<32 hex>",
 *    "from": {"db": NAME, "merged": N, "notes": [{"kind", "file", "line", "col", "message"}]},
 *    "variants": [{"name", "values": [..], "config", "routine", "failed", "terms": [[arg, kind, bound]]}],
 *    "features": [{"text", "kfeature", "param"}],
 *    "nodes": [[feature, threshold, left, right, order]],
 *    "orders": [[v, ...]],            (without the -1 that ends each in memory)
 *    "figures": {...}}
 *
 * Reading trusts nothing: any value out of range or disagreeing with the
 * kernel refuses the whole file, and the caller learns again. */
#include "dispatch.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "dbset.h"
#include "heuristic.h"

#define MAX_NODES (1 << 16)
#define MAX_DEPTH 1000

static const char *const term_names[] = {"multiple", "at_most", "at_least"};

/* ---- Writing -------------------------------------------------------------- */

/* A double that reads back bit for bit: jansson writes %.17g; what JSON
 * cannot hold is a string. */
static json_t *jdouble(double x)
{
	if (isnan(x))
		return json_string("nan");
	if (isinf(x))
		return json_string(x > 0 ? "inf" : "-inf");
	return json_real(x);
}

static json_t *jstats(const dstats *s)
{
	return json_pack("{s:o, s:o, s:o, s:i, s:i, s:i}", "geomean", jdouble(s->geomean), "p90", jdouble(s->p90),
	                 "worst", jdouble(s->worst), "n", s->n, "misses", s->misses, "failed", s->failed);
}

/* path relative to dir when it is under it ("templates/x.json" -> "x.json", in_dir) */
static const char *under(const char *path, const char *dir, bool *in_dir)
{
	size_t n = strlen(dir);
	*in_dir = path && n && !strncmp(path, dir, n) && path[n] == '/' && !strchr(path + n + 1, '/');
	return *in_dir ? path + n + 1 : path;
}

bool dispatch_save(const dispatch *d, const char *key, const char *path, diags *dg)
{
	char *dir = dbset_db_dir_of_dispatch(path);
	json_t *root = json_object();
	json_object_set_new(root, "aotc_dispatch", json_integer(DISPATCH_VERSION));
	json_object_set_new(root, "key", json_string(key));

	json_t *from = json_object(), *notes = json_array();
	bool in_dir;
	const char *db = under(d->from.db, dir, &in_dir);
	json_object_set_new(from, "db", db ? json_string(db) : json_null());
	json_object_set_new(from, "db_in_dir", json_boolean(in_dir));
	json_object_set_new(from, "merged", json_integer(d->from.merged));
	for (int i = 0; i < d->from.notes.n; i++) {
		const diag_entry *e = &d->from.notes.v[i];
		const char *f = under(e->file, dir, &in_dir);
		json_array_append_new(notes, json_pack("{s:s, s:o, s:b, s:i, s:i, s:s}", "kind", e->kind, "file",
		                                       f ? json_string(f) : json_null(), "file_in_dir", in_dir,
		                                       "line", e->line, "col", e->col, "message", e->msg));
	}
	json_object_set_new(from, "notes", notes);
	json_object_set_new(root, "from", from);

	json_t *vars = json_array();
	for (int v = 0; v < d->nvariants; v++) {
		const dvariant *dv = &d->variants[v];
		json_t *values = json_array(), *terms = json_array();
		for (int i = 0; i < dv->nvalues; i++)
			json_array_append_new(values, json_integer((json_int_t)dv->values[i]));
		for (int i = 0; i < dv->nterms; i++)
			json_array_append_new(terms, json_pack("[i, s, I]", dv->terms[i].arg, term_names[dv->terms[i].kind],
			                                       (json_int_t)dv->terms[i].bound));
		json_t *jv = json_pack("{s:s, s:o, s:i, s:i, s:o, s:o}", "name", dv->name, "values", values, "config",
		                       dv->config, "routine", dv->routine, "failed",
		                       dv->failed ? json_string(dv->failed) : json_null(), "terms", terms);
		/* only for an alternative's: other dispatches read and write as before */
		if (dv->function)
			json_object_set_new(jv, "function", json_string(dv->function));
		json_array_append_new(vars, jv);
	}
	json_object_set_new(root, "variants", vars);
	json_object_set_new(root, "ntunables", json_integer(d->ntunables));

	json_t *feats = json_array();
	for (int f = 0; f < d->nfeatures; f++)
		json_array_append_new(feats, json_pack("{s:s, s:i, s:i}", "text", d->features[f].text, "kfeature",
		                                       d->features[f].kfeature, "param", d->features[f].param));
	json_object_set_new(root, "features", feats);

	json_t *nodes = json_array();
	for (int i = 0; i < d->nnodes; i++) {
		const dnode *n = &d->nodes[i];
		json_array_append_new(nodes, json_pack("[i, I, i, i, i]", n->feature, (json_int_t)n->threshold, n->left,
		                                       n->right, n->order));
	}
	json_object_set_new(root, "nodes", nodes);
	json_t *orders = json_array();
	for (int o = 0; o < d->norders; o++) {
		json_t *list = json_array();
		for (const int *p = d->orders + d->order_at[o]; *p >= 0; p++)
			json_array_append_new(list, json_integer(*p));
		json_array_append_new(orders, list);
	}
	json_object_set_new(root, "orders", orders);

	const dfigures *g = &d->fig;
	json_t *fig = json_pack("{s:o, s:i, s:i, s:i, s:i, s:b, s:i, s:o, s:o, s:i, s:i, s:b, s:o, s:o, s:o}",
	                        "hardware", g->hardware ? json_string(g->hardware) : json_null(), "shapes", g->shapes,
	                        "variants", g->variants, "failing", g->failing, "dropped", g->dropped,
	                        "distilled", g->distilled, "dense_shapes", g->dense_shapes, "train", jstats(&g->train),
	                        "heldout", jstats(&g->heldout), "folds", g->folds, "folds_by", g->fold_by, "weighted",
	                        g->weighted, "train_w", jdouble(g->train_w), "heldout_w", jdouble(g->heldout_w),
	                        "eval", jstats(&g->eval));
	json_object_set_new(root, "figures", fig);

	char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(root);
	free(dir);
	if (!text)
		die("out of memory");
	size_t len = strlen(text);
	text = xrealloc(text, len + 2);
	text[len++] = '\n';
	bool ok = write_file_atomic(path, text, len) == 0;
	if (!ok)
		diag_warning(dg, (aotc_loc){path, 0, 0}, "cannot save the dispatch: %s", strerror(errno));
	free(text);
	return ok;
}

/* ---- Reading ---------------------------------------------------------------- */

static bool get_int(const json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	const json_t *v = key ? json_object_get(o, key) : o;
	if (!json_is_integer(v))
		return false;
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return false;
	*out = x;
	return true;
}

static bool get_i(const json_t *o, const char *key, int lo, int hi, int *out)
{
	int64_t x;
	if (!get_int(o, key, lo, hi, &x))
		return false;
	*out = (int)x;
	return true;
}

static bool get_double(const json_t *o, const char *key, double *out)
{
	const json_t *v = json_object_get(o, key);
	if (json_is_real(v))
		*out = json_real_value(v);
	else if (json_is_integer(v))
		*out = (double)json_integer_value(v);
	else if (json_is_string(v) && !strcmp(json_string_value(v), "nan"))
		*out = NAN;
	else if (json_is_string(v) && !strcmp(json_string_value(v), "inf"))
		*out = INFINITY;
	else if (json_is_string(v) && !strcmp(json_string_value(v), "-inf"))
		*out = -INFINITY;
	else
		return false;
	return true;
}

static bool get_bool(const json_t *o, const char *key, bool *out)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

static bool get_stats(const json_t *o, const char *key, dstats *s)
{
	const json_t *v = json_object_get(o, key);
	return json_is_object(v) && get_double(v, "geomean", &s->geomean) && get_double(v, "p90", &s->p90) &&
	       get_double(v, "worst", &s->worst) && get_i(v, "n", 0, INT32_MAX, &s->n) &&
	       get_i(v, "misses", 0, INT32_MAX, &s->misses) && get_i(v, "failed", 0, INT32_MAX, &s->failed);
}

/* dir + "/" + name where in_dir, else name (malloc'd) */
static char *rebase(const char *dir, const char *name, bool in_dir)
{
	if (!in_dir || !dir[0])
		return xstrdup(name);
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "%s/%s", dir, name);
	return sb.data;
}

static bool load_from(dispatch *d, const json_t *root, const char *dir)
{
	const json_t *from = json_object_get(root, "from");
	const json_t *db = json_object_get(from, "db"), *notes = json_object_get(from, "notes");
	bool in_dir;
	if (!json_is_object(from) || !(json_is_string(db) || json_is_null(db)) || !get_bool(from, "db_in_dir", &in_dir) ||
	    !get_i(from, "merged", 0, INT32_MAX, &d->from.merged) || !json_is_array(notes))
		return false;
	if (json_is_string(db))
		d->from.db = rebase(dir, json_string_value(db), in_dir);
	size_t i;
	const json_t *n;
	json_array_foreach(notes, i, n) {
		const json_t *kind = json_object_get(n, "kind"), *file = json_object_get(n, "file"),
		             *msg = json_object_get(n, "message");
		int line, col;
		bool fin;
		if (!json_is_string(kind) || !json_is_string(msg) || !(json_is_string(file) || json_is_null(file)) ||
		    !get_bool(n, "file_in_dir", &fin) || !get_i(n, "line", 0, INT32_MAX, &line) ||
		    !get_i(n, "col", 0, INT32_MAX, &col))
			return false;
		const char *k = json_string_value(kind);
		if (strcmp(k, "error") && strcmp(k, "warning") && strcmp(k, "note"))
			return false;
		char *f = json_is_string(file) ? rebase(dir, json_string_value(file), fin) : NULL;
		diag_list_add(&d->from.notes, k, (aotc_loc){f, line, col}, json_string_value(msg));
		free(f);
	}
	return true;
}

static bool load_variants(dispatch *d, const kernel *k, const json_t *root, int nargs)
{
	const json_t *vars = json_object_get(root, "variants");
	if (!get_i(root, "ntunables", 0, INT32_MAX, &d->ntunables) || d->ntunables != k->ntunables ||
	    !json_is_array(vars) || json_array_size(vars) == 0 || json_array_size(vars) > MAX_NODES)
		return false;
	d->variants = xcalloc(json_array_size(vars) + 1, sizeof *d->variants);
	arena a;
	arena_init(&a);
	bool ok = true;
	size_t i;
	const json_t *jv;
	json_array_foreach(vars, i, jv) {
		dvariant *dv = &d->variants[d->nvariants++];
		const json_t *name = json_object_get(jv, "name"), *values = json_object_get(jv, "values"),
		             *failed = json_object_get(jv, "failed"), *terms = json_object_get(jv, "terms");
		const json_t *jfn = json_object_get(jv, "function");
		const kernel *fk = !jfn ? k : json_is_string(jfn) ? ir_member(k, json_string_value(jfn)) : NULL;
		dv->alt = fk && fk != k ? (int)(fk - k->alts) : -1;
		ok = fk && (!jfn || fk != k) && json_is_string(name) && json_is_array(values) &&
		     (json_is_null(failed) || json_is_string(failed)) && json_is_array(terms) &&
		     json_array_size(terms) <= 64 && get_i(jv, "config", 0, INT32_MAX, &dv->config) &&
		     get_i(jv, "routine", -1, jfn ? -1 : k->nexterns - 1, &dv->routine);
		if (!ok)
			break;
		dv->nvalues = dv->routine >= 0 ? k->ntunables : fk->ntunables;
		dv->values = xcalloc((size_t)dv->nvalues + 1, sizeof *dv->values);
		ok = json_array_size(values) == (size_t)dv->nvalues;
		if (!ok)
			break;
		dv->name = xstrdup(json_string_value(name));
		dv->function = jfn ? xstrdup(fk->name) : NULL;
		for (int t = 0; t < dv->nvalues && ok; t++)
			ok = get_int(json_array_get(values, (size_t)t), NULL, INT64_MIN, INT64_MAX, &dv->values[t]);
		if (!ok)
			break;
		/* The name is what the IR says, never the file's. */
		const char *want = dv->routine >= 0 ? k->externs[dv->routine].name : ir_variant_name(&a, fk, dv->values);
		if (strcmp(want, dv->name) != 0) {
			ok = false;
			break;
		}
		if (json_is_string(failed))
			dv->failed = xstrdup(json_string_value(failed));
		dv->terms = xcalloc(json_array_size(terms) + 1, sizeof *dv->terms);
		size_t j;
		const json_t *jt;
		json_array_foreach(terms, j, jt) {
			dterm *t = &dv->terms[dv->nterms++];
			const json_t *kind = json_array_get(jt, 1);
			int kd = -1;
			for (int x = 0; json_is_string(kind) && x < 3; x++)
				if (!strcmp(json_string_value(kind), term_names[x]))
					kd = x;
			ok = json_is_array(jt) && json_array_size(jt) == 3 && kd >= 0 &&
			     get_i(json_array_get(jt, 0), NULL, 0, nargs - 1, &t->arg) &&
			     get_int(json_array_get(jt, 2), NULL, kd == DT_MULTIPLE ? 1 : INT64_MIN, INT64_MAX, &t->bound);
			t->kind = (dterm_kind)kd;
			if (!ok)
				break;
		}
		if (!ok)
			break;
	}
	arena_finish(&a);
	return ok;
}

static bool load_features(dispatch *d, const kernel *k, const json_t *root)
{
	const json_t *feats = json_object_get(root, "features");
	if (!json_is_array(feats) || json_array_size(feats) > (size_t)k->nfeatures + (size_t)k->nparams)
		return false;
	d->features = xcalloc(json_array_size(feats) + 1, sizeof *d->features);
	size_t i;
	const json_t *jf;
	json_array_foreach(feats, i, jf) {
		dfeature *df = &d->features[d->nfeatures++];
		const json_t *text = json_object_get(jf, "text");
		if (!json_is_string(text) || !get_i(jf, "kfeature", -1, k->nfeatures - 1, &df->kfeature) ||
		    !get_i(jf, "param", -1, k->nparams - 1, &df->param))
			return false;
		/* The text is the kernel's: a pointer into its IR. */
		if (df->kfeature >= 0 && df->param < 0)
			df->text = k->features[df->kfeature].text;
		else if (df->kfeature < 0 && df->param >= 0 && k->params[df->param].shape >= 0)
			df->text = k->params[df->param].name;
		else
			return false;
		if (strcmp(df->text, json_string_value(text)) != 0)
			return false;
	}
	return true;
}

/* Every node reached once from the root, no deeper than MAX_DEPTH. */
static bool tree_ok(const dispatch *d)
{
	unsigned char *seen = xcalloc((size_t)d->nnodes, 1);
	int *stack = xmalloc((size_t)d->nnodes * 2 * sizeof *stack), *depth = stack + d->nnodes;
	int sp = 0, reached = 0;
	bool ok = true;
	stack[sp] = 0, depth[sp++] = 0;
	while (sp > 0 && ok) {
		sp--;
		int i = stack[sp], dep = depth[sp];
		if (seen[i] || dep > MAX_DEPTH) {
			ok = false;
			break;
		}
		seen[i] = 1;
		reached++;
		const dnode *n = &d->nodes[i];
		if (n->feature >= 0) {
			if (sp + 2 > d->nnodes) {
				ok = false; /* more to visit than nodes: some node twice */
				break;
			}
			stack[sp] = n->left, depth[sp++] = dep + 1;
			stack[sp] = n->right, depth[sp++] = dep + 1;
		}
	}
	ok = ok && reached == d->nnodes;
	free(seen);
	free(stack);
	return ok;
}

static bool load_tree(dispatch *d, const json_t *root)
{
	const json_t *nodes = json_object_get(root, "nodes"), *orders = json_object_get(root, "orders");
	if (!json_is_array(nodes) || !json_is_array(orders) || json_array_size(nodes) == 0 ||
	    json_array_size(nodes) > MAX_NODES || json_array_size(orders) == 0 ||
	    json_array_size(orders) > json_array_size(nodes))
		return false;
	size_t total = 0, i;
	const json_t *jo;
	json_array_foreach(orders, i, jo) {
		if (!json_is_array(jo) || json_array_size(jo) > (size_t)d->nvariants)
			return false;
		total += json_array_size(jo) + 1;
	}
	d->orders = xmalloc((total + 1) * sizeof *d->orders);
	d->order_at = xmalloc((json_array_size(orders) + 1) * sizeof *d->order_at);
	size_t at = 0;
	json_array_foreach(orders, i, jo) {
		d->order_at[d->norders++] = (int)at;
		size_t j;
		const json_t *jv;
		json_array_foreach(jo, j, jv)
			if (!get_i(jv, NULL, 0, d->nvariants - 1, &d->orders[at++]))
				return false;
		d->orders[at++] = -1;
	}
	d->nodes = xcalloc(json_array_size(nodes) + 1, sizeof *d->nodes);
	int nn = (int)json_array_size(nodes);
	const json_t *jn;
	json_array_foreach(nodes, i, jn) {
		dnode *n = &d->nodes[d->nnodes++];
		if (!json_is_array(jn) || json_array_size(jn) != 5 ||
		    !get_i(json_array_get(jn, 0), NULL, -1, d->nfeatures - 1, &n->feature) ||
		    !get_int(json_array_get(jn, 1), NULL, INT64_MIN, INT64_MAX, &n->threshold) ||
		    !get_i(json_array_get(jn, 2), NULL, -1, nn - 1, &n->left) ||
		    !get_i(json_array_get(jn, 3), NULL, -1, nn - 1, &n->right) ||
		    !get_i(json_array_get(jn, 4), NULL, -1, d->norders - 1, &n->order))
			return false;
		if (n->feature >= 0 ? n->left < 0 || n->right < 0 : n->order < 0)
			return false;
	}
	return tree_ok(d);
}

static bool load_figures(dispatch *d, const json_t *root)
{
	const json_t *g = json_object_get(root, "figures");
	dfigures *f = &d->fig;
	const json_t *hw = json_object_get(g, "hardware");
	if (!json_is_object(g) || !(json_is_string(hw) || json_is_null(hw)))
		return false;
	if (json_is_string(hw))
		f->hardware = xstrdup(json_string_value(hw));
	return get_i(g, "shapes", 0, INT32_MAX, &f->shapes) && get_i(g, "variants", 0, INT32_MAX, &f->variants) &&
	       get_i(g, "failing", 0, INT32_MAX, &f->failing) && get_i(g, "dropped", 0, INT32_MAX, &f->dropped) &&
	       get_bool(g, "distilled", &f->distilled) && get_i(g, "dense_shapes", 0, INT32_MAX, &f->dense_shapes) &&
	       get_stats(g, "train", &f->train) && get_stats(g, "heldout", &f->heldout) &&
	       get_i(g, "folds", 0, INT32_MAX, &f->folds) && get_i(g, "folds_by", H_FOLDS_RANDOM, H_FOLDS_SHAPE, &f->fold_by) &&
	       get_bool(g, "weighted", &f->weighted) && get_double(g, "train_w", &f->train_w) &&
	       get_double(g, "heldout_w", &f->heldout_w) && get_stats(g, "eval", &f->eval);
}

bool dispatch_load(dispatch *d, const kernel *k, const char *path, const char *key)
{
	memset(d, 0, sizeof *d);
	size_t len;
	struct stat st; /* a regular file only: opening a pipe would block */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	char *text = read_file_max(path, &len, (size_t)AOTC_DB_MAX_MIB << 20);
	if (!text)
		return false;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	free(text);
	const json_t *jkey = json_object_get(root, "key");
	int64_t version;
	bool ok = json_is_object(root) && get_int(root, "aotc_dispatch", DISPATCH_VERSION, DISPATCH_VERSION, &version) &&
	          json_is_string(jkey) && !strcmp(json_string_value(jkey), key);
	if (ok) {
		int nargs = 0;
		for (int i = 0; i < k->nparams; i++)
			nargs += k->params[i].shape >= 0;
		char *dir = dbset_db_dir_of_dispatch(path);
		ok = load_from(d, root, dir) && load_variants(d, k, root, nargs) && load_features(d, k, root) &&
		     load_tree(d, root) && load_figures(d, root);
		free(dir);
	}
	json_decref(root);
	if (!ok)
		dispatch_finish(d);
	return ok;
}
