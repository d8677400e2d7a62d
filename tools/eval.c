/* aotc eval (eval.h): tune the held-out shapes, find the held-out and the
 * training databases, learn from the one, print how the dispatch does on
 * the other. */
#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "dbset.h"
#include "dispatch.h"
#include "failures.h"
#include "from_db.h"
#include "heldout.h"

/* The held-out shapes, measured with every variant (the oracle) into dir.
 * Without the device, the held-out measurements already there are
 * evaluated (that is how CI checks committed ones): *have_device false,
 * and held keeps why, said only when there are none. Otherwise what the
 * tune said goes to d. */
static aotc_status tune_heldout(const aotc_module *m, const kernel *k, const tune_options *o, char *dir,
                                bool *have_device, diags *held, diags *d)
{
	tune_options eo = *o;
	eo.db_dir = dir;
	eo.search = SEARCH_EXHAUSTIVE;
	eo.shard = eo.nshards = 1;
	held->quiet_warnings = d->quiet_warnings;
	bool no_device = false;
	*have_device = true;
	aotc_status status = tune_kernel(m, k, &eo, &no_device, held);
	if (status == AOTC_ENVIRONMENT && no_device) {
		*have_device = false;
		return AOTC_OK;
	}
	if (d->out)
		diags_flush(held, d->out);
	d->errors += held->errors;
	d->warnings += held->warnings;
	return status;
}

/* The held-out database in dir: the first of k's there that was measured
 * on arch. One measured wholly from another version of the source keeps
 * its source hash, for eval_kernel to refuse; NULL when there is none. */
static tune_db *heldout_db(const char *dir, const kernel *k, const char *arch, const char *source_hash,
                           diags *d)
{
	char **paths;
	int npaths = dbset_list(dir, k->id, &paths);
	tune_db *test = NULL;
	for (int i = 0; i < npaths && !test; i++) {
		diags quiet;
		diags_init_buffered(&quiet);
		bool not_db = false;
		tune_db *db = db_load_any(paths[i], &not_db, &quiet);
		if (!db && !not_db && d->out) {
			diags_flush(&quiet, d->out);
			d->errors++;
		}
		diags_finish(&quiet);
		const char *a = db ? json_string_value(json_object_get(db->hardware, "arch")) : NULL;
		db_key key = dbset_key(k);
		int before = db ? db->nmeas : 0;
		char *old = db ? xstrdup(db->source_hash) : NULL;
		if (a && !strcmp(a, arch) && before && db_drop_stale(db, &key, source_hash, NULL) == before) {
			/* all of another version: the check below says so */
			free(db->source_hash);
			db->source_hash = old;
			old = NULL;
		}
		free(old);
		if (a && !strcmp(a, arch))
			test = db;
		else
			db_close(db);
	}
	dbset_free_paths(paths);
	return test;
}

/* A training configuration the held-out database lacks is a miss wherever
 * the dispatch chooses it: said before the figures it spoils. */
static void warn_unmeasured(const hmatrix *mt, const dispatch *dp, const int *map, const char *path, diags *d)
{
	int missing = 0, dispatched = 0;
	strbuf names;
	strbuf_init(&names);
	for (int v = 0; v < mt->nvariants; v++) {
		if (map[v] >= 0)
			continue;
		if (missing < 3)
			strbuf_printf(&names, "%s%s", missing ? ", " : "", mt->variant_names[v]);
		missing++;
		for (int i = 0; i < dp->nvariants; i++)
			dispatched += dp->variants[i].config == v;
	}
	if (missing)
		diag_warning(d, (aotc_loc){path, 0, 0},
		             "%d of the %d training configurations are not in this held-out database (%s%s), %d of them "
		             "among the dispatch's %d variants: where the dispatch chooses one, the shape counts as a miss; "
		             "measure them with aotc eval on the device",
		             missing, mt->nvariants, names.data, missing > 3 ? ", ..." : "", dispatched, dp->nvariants);
	strbuf_finish(&names);
}

/* Slowdowns on the held-out shapes that ran, one slot per shape, and what
 * the emitted select() chose there. */
typedef struct eval_figures {
	double *sel[SEL_COUNT]; /* each selector's choice; SEL_TREE: the emitted select()'s */
	double *model;          /* the cost model's predicted best */
	double *cap;            /* the best of the dispatch's variants valid there */
	int *shape;             /* the held-out shape of each slot */
	int *chosen;            /* select()'s training configuration; -1: none valid */
	int n;                  /* shapes that ran */
	int dispatched_failures;
} eval_figures;

/* One held-out shape s: every selector's and the emitted dispatch's
 * slowdown into slot f->n. */
static void eval_shape(const kernel *k, const hmatrix *mt, const hmatrix *me, const hresult *r,
                       const dispatch *dp, const int *map, bool *valid, int s, eval_figures *f)
{
	int n = f->n;
	eval_trained_valid(mt, me, s, map, valid);
	const double *feat = &me->feat[(size_t)s * me->nfeatures];
	for (int sel = 0; sel < SEL_COUNT; sel++) {
		int c = h_choose(r, mt, (hselector)sel, feat, valid);
		f->sel[sel][n] = c >= 0 ? h_slowdown(me, s, map[c]) : H_MISS_SLOWDOWN;
	}
	/* The emitted select() at this shape: a choice the held-out database
	 * did not measure is a miss. */
	int e = dispatch_select(dp, k, me->rows + (size_t)s * me->nargs);
	int v = e >= 0 ? dp->variants[e].config : -1;
	f->sel[SEL_TREE][n] = v >= 0 && map[v] >= 0 ? h_slowdown(me, s, map[v]) : H_MISS_SLOWDOWN;
	f->cap[n] = H_MISS_SLOWDOWN;
	for (int i = 0; i < dp->nvariants; i++) {
		int c = dp->variants[i].config;
		double x = valid[c] ? h_slowdown(me, s, map[c]) : H_MISS_SLOWDOWN;
		f->cap[n] = x < f->cap[n] ? x : f->cap[n];
	}
	int pv = h_predict_best(r, mt, me->rows + (size_t)s * me->nargs, valid);
	f->model[n] = pv >= 0 ? h_slowdown(me, s, map[pv]) : H_MISS_SLOWDOWN;
	f->dispatched_failures += f->sel[SEL_TREE][n] >= H_FAIL_SLOWDOWN;
	f->shape[n] = s;
	f->chosen[n] = v;
	f->n++;
}

/* What eval prints, whichever the format. */
typedef struct eval_out {
	const kernel *k;
	const hmatrix *mt, *me;
	const tune_db *test;
	const hresult *r;
	const int *map;
	const eval_figures *f;
} eval_out;

/* The failure of the chosen variant at slot i, as measured; NULL when it
 * was not measured failing. */
static const char *chosen_failure(const eval_out *e, int i)
{
	if (e->f->sel[SEL_TREE][i] < H_FAIL_SLOWDOWN)
		return NULL;
	const measurement *fm = db_get(e->test, e->map[e->f->chosen[i]], e->f->shape[i]);
	return fm ? meas_status_name(fm->status) : "?";
}

static void stats_line(const char *name, double *sd, int n)
{
	hstats st = h_stats(sd, n);
	printf("%-22s %8.3f %8.3f %8.3f %6d %6d\n", name, st.geomean, st.p90, st.worst, st.misses, st.failed);
}

/* The table: a line per held-out shape, then each selector's figures. */
static void print_text(const eval_out *e)
{
	const eval_figures *f = e->f;
	const hmatrix *mt = e->mt, *me = e->me;
	printf("\nEVAL %s: the dispatch learnt from %d shapes, on %d new ones\n", e->k->id, mt->nshapes, me->nshapes);
	printf("  %-28s %-34s %10s %10s %9s\n", "shape", "chosen", "ms", "best ms", "slowdown");
	for (int i = 0; i < f->n; i++) {
		int s = f->shape[i], v = f->chosen[i];
		const char *failure = chosen_failure(e, i);
		if (failure)
			printf("  %-28s %-34s %10s %10.4f  FAILED (%s)\n", me->shape_labels[s], mt->variant_names[v], "-",
			       me->oracle[s], failure);
		else
			printf("  %-28s %-34s %10.4f %10.4f %9.3f%s\n", me->shape_labels[s],
			       v >= 0 ? mt->variant_names[v] : "(none valid)",
			       v >= 0 && e->map[v] >= 0 ? h_time(me, s, e->map[v]) : NAN, me->oracle[s], f->sel[SEL_TREE][i],
			       v >= 0 && e->map[v] < 0 ? "  (not measured here)" : "");
	}
}

static void print_text_figures(const eval_out *e)
{
	const eval_figures *f = e->f;
	printf("\n%-22s %8s %8s %8s %6s %6s\n", "slowdown vs oracle", "geomean", "p90", "worst", "misses", "failed");
	for (int sel = SEL_COUNT - 1; sel >= 0; sel--)
		if (sel != SEL_MEASURED || e->r->distilled)
			stats_line(h_selector_names[sel], f->sel[sel], f->n);
	if (e->r->distilled)
		stats_line("cost model alone", f->model, f->n);
	stats_line("best it can return", f->cap, f->n);
}

static json_t *jreal(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *jfigures(const char *key, const char *name, double *sd, int n)
{
	hstats st = h_stats(sd, n);
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:i, s:i}", "key", key, "name", name, "geomean", jreal(st.geomean),
	                 "p90", jreal(st.p90), "worst", jreal(st.worst), "misses", st.misses, "failed", st.failed);
}

/* The same as one JSON document on one line (docs/cli.md, "aotc eval"). */
static void print_json(const eval_out *e)
{
	const eval_figures *f = e->f;
	const hmatrix *mt = e->mt, *me = e->me;
	const tune_db *test = e->test;
	json_t *args = json_array(), *shapes = json_array(), *sels = json_array();
	for (int a = 0; a < test->nshape_args; a++)
		json_array_append_new(args, json_string(test->shape_args[a]));
	for (int i = 0; i < f->n; i++) {
		int s = f->shape[i], v = f->chosen[i];
		json_t *row = json_object();
		for (int a = 0; a < me->nargs && a < test->nshape_args; a++)
			json_object_set_new(row, test->shape_args[a], json_integer(me->rows[(size_t)s * me->nargs + a]));
		const char *failure = chosen_failure(e, i);
		bool measured = v >= 0 && e->map[v] >= 0;
		const char *status = v < 0 ? "none valid" : !measured ? "not measured" : failure ? "failed" : "ok";
		json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "label", me->shape_labels[s], "args", row,
		                      "chosen", v >= 0 ? json_string(mt->variant_names[v]) : json_null(),
		                      "ms", measured && !failure ? jreal(h_time(me, s, e->map[v])) : json_null(),
		                      "best_ms", jreal(me->oracle[s]),
		                      "slowdown", f->sel[SEL_TREE][i] < H_MISS_SLOWDOWN ? jreal(f->sel[SEL_TREE][i]) : json_null(),
		                      "status", status);
		if (failure)
			json_object_set_new(o, "failure", json_string(failure));
		json_array_append_new(shapes, o);
	}
	for (int sel = SEL_COUNT - 1; sel >= 0; sel--)
		if (sel != SEL_MEASURED || e->r->distilled)
			json_array_append_new(sels, jfigures(h_selector_keys[sel], h_selector_names[sel], f->sel[sel], f->n));
	if (e->r->distilled)
		json_array_append_new(sels, jfigures("model", "cost model alone", f->model, f->n));
	json_array_append_new(sels, jfigures("cap", "best it can return", f->cap, f->n));
	json_t *root = json_pack("{s:i, s:s, s:s, s:i, s:i, s:o, s:o, s:o}", "aotc_eval", 1, "kernel", e->k->id,
	                         "heldout_database", test->path, "training_shapes", mt->nshapes, "heldout_shapes",
	                         me->nshapes, "shape_args", args, "shapes", shapes, "selectors", sels);
	char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
	puts(text);
	free(text);
	json_decref(root);
}

/* The dispatch dp (learnt as r from mt) on the held-out matrix me of the
 * database test: a line per shape, then each selector's figures, as text
 * or JSON. */
static aotc_status eval_print(const kernel *k, const hmatrix *mt, const hmatrix *me, const tune_db *test,
                              const hresult *r, const dispatch *dp, bool json, diags *d)
{
	/* Variants by name: the held-out database may list them in another
	 * order. */
	int *map = xmalloc((size_t)mt->nvariants * sizeof *map + 1);
	for (int v = 0; v < mt->nvariants; v++)
		map[v] = db_find_config(test, mt->variant_names[v]);
	warn_unmeasured(mt, dp, map, test->path, d);
	bool *valid = xmalloc((size_t)mt->nvariants * sizeof *valid + 1);
	eval_figures f = {0};
	for (int sel = 0; sel < SEL_COUNT; sel++)
		f.sel[sel] = xmalloc((size_t)me->nshapes * sizeof *f.sel[sel] + 1);
	f.model = xmalloc((size_t)me->nshapes * sizeof *f.model + 1);
	f.cap = xmalloc((size_t)me->nshapes * sizeof *f.cap + 1);
	f.shape = xmalloc((size_t)me->nshapes * sizeof *f.shape + 1);
	f.chosen = xmalloc((size_t)me->nshapes * sizeof *f.chosen + 1);
	for (int s = 0; s < me->nshapes; s++)
		if (isfinite(me->oracle[s]))
			eval_shape(k, mt, me, r, dp, map, valid, s, &f);
	eval_out e = {k, mt, me, test, r, map, &f};
	aotc_status status = AOTC_OK;
	if (!json)
		print_text(&e);
	if (f.n == 0) {
		diag_plain_error(d, "no held-out shape has a variant that ran");
		status = AOTC_NO_VARIANT;
		goto out;
	}
	if (f.dispatched_failures)
		diag_warning(d, (aotc_loc){test->path, 0, 0}, "the dispatch runs a variant measured failing on %d of the %d held-out shapes "
		                   "(FAILED%s): tune those shapes too (aotc tune --shapes) so that it learns where the "
		                   "variant fails", f.dispatched_failures, f.n, json ? "" : " above");
	if (json)
		print_json(&e);
	else
		print_text_figures(&e);
out:
	for (int sel = 0; sel < SEL_COUNT; sel++)
		free(f.sel[sel]);
	free(f.model);
	free(f.cap);
	free(f.shape);
	free(f.chosen);
	free(map);
	free(valid);
	return status;
}

aotc_status eval_kernel(const aotc_module *m, const kernel *k, const tune_options *o, const hoptions *ho,
                        bool json, diags *d)
{
	if (!o->shapes_file) {
		diag_plain_error(d, "aotc eval needs --shapes FILE: the held-out shapes to measure on");
		return AOTC_USAGE;
	}
	char *dir = dbset_eval_dir(o->db_dir);
	diags held;
	diags_init_buffered(&held);
	bool have_device;
	aotc_status status = tune_heldout(m, k, o, dir, &have_device, &held, d);
	tune_db *train = NULL, *test = NULL;
	hmatrix mt = {0}, me = {0};
	hresult r = {0};
	dispatch dp = {0};
	bool built = false;
	if (status != AOTC_OK && status != AOTC_NO_VARIANT)
		goto out;
	status = AOTC_OK;

	/* The held-out database just written names the hardware; the training
	 * set is every database of this architecture one folder up, merged
	 * as emit merges it (shards too). */
	test = heldout_db(dir, k, o->arch->name, m->source_hash, d);
	if (!test) {
		if (!have_device && d->out)
			diags_flush(&held, d->out); /* why it cannot tune */
		diag_plain_error(d, "no held-out database in %s", dir);
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	if (!have_device && !o->quiet)
		fprintf(stderr, "aotc: no %s device here: evaluating the measurements in %s\n", o->arch->name,
		        test->path);
	train = dbset_load(o->db_dir, k, o->arch, m->source_hash, m->file, NULL, d);
	if (!train) {
		fprintf(stderr, "aotc: eval learns from the training database: run aotc tune first\n");
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	/* Measurements of another version of the kernel are no held-out
	 * figure of this one: its variants share only their names. With a
	 * device tune_kernel has measured them anew; without, refuse. */
	if (strcmp(test->source_hash, train->source_hash) != 0) {
		diag_plain_error(d,
		                 "%s was measured from another version of %s (source hash %.8s, the training database "
		                 "%s %.8s): measure the held-out shapes again with aotc eval where a %s device is, or "
		                 "put in %s the held-out database measured from this source",
		                 test->path, m->file, test->source_hash, train->path, train->source_hash, o->arch->name, dir);
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	if (!hmatrix_from_db(&mt, train, k, d) || !hmatrix_from_db(&me, test, k, d)) {
		status = AOTC_DIAGNOSED;
		goto out;
	}
	h_build(&r, &mt, ho);
	built = true;
	/* The dispatch as emitted: its choice is what a program would run. */
	if (!dispatch_from_result(&dp, k, train, &mt, &r, NULL, 0, d)) {
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	status = eval_print(k, &mt, &me, test, &r, &dp, json, d);
out:
	diags_finish(&held);
	dispatch_finish(&dp);
	if (built)
		hresult_finish(&r);
	if (mt.time)
		hmatrix_from_db_finish(&mt);
	if (me.time)
		hmatrix_from_db_finish(&me);
	db_close(train);
	db_close(test);
	free(dir);
	return status;
}
