#include "simulate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_features.h"
#include "schedule.h"
#include "shapes.h"

/* Per measured cell beyond its launches: the worker's round trip, the
 * input restore, the guard check (ms; about what the H200 logs show). */
static const double CELL_OVERHEAD_MS = 1.0;

static double cell_cost(const measurement *m)
{
	double t = CELL_OVERHEAD_MS;
	for (int i = 0; i < m->nsamples; i++)
		t += m->samples[i];
	if (m->status == MS_OK)
		t += 2 * m->time_ms; /* the checked launches */
	return t;
}

/* The cells the schedule measured, as a database in out_dir. */
static aotc_status write_measured(const tune_db *db, const schedule *sc, const char *out_dir, diags *d)
{
	const char *base = strrchr(db->path, '/');
	strbuf path;
	strbuf_init(&path);
	strbuf_printf(&path, "%s/%s", out_dir, base ? base + 1 : db->path);
	int inv = 0;
	tune_db *out = db_open(path.data, db->kernel, db->source, db->source_hash,
	                       (const char *const *)db->tunables, db->ntunables,
	                       (const char *const *)db->shape_args, db->nshape_args, db->hardware,
	                       db->method, NULL, &inv, d);
	strbuf_finish(&path);
	if (!out)
		return AOTC_ENVIRONMENT;
	aotc_status rc = AOTC_OK;
	for (int s = 0; s < db->nshapes && !rc; s++)
		for (int c = 0; c < db->nconfigs && !rc; c++) {
			const measurement *m = db_get(db, c, s);
			if (!m || sc->state[schedule_cell(sc, c, s)] != CELL_DONE)
				continue;
			measurement copy = *m;
			copy.config = db_config(out, db->configs[c].name, db->configs[c].values);
			copy.shape = db_shape(out, db->shapes + (size_t)s * db->nshape_args);
			rc = db_record(out, &copy);
		}
	out->search = json_pack("{s:s, s:b, s:[i,i]}", "strategy", search_name(sc->kind), "finished", 1,
	                        "shard", 1, 1);
	if (rc || db_save(out) < 0) {
		diag_plain_error(d, "cannot write %s: %s", out->path, strerror(errno));
		rc = AOTC_ENVIRONMENT;
	}
	db_close(out);
	return rc;
}

aotc_status tune_simulate(const kernel *k, const tune_db *db, const tune_options *o, const char *out_dir,
                  diags *d)
{
	shape_set ss;
	shape_set_init(&ss, k);
	bool fits = db->ntunables == k->ntunables && db->nshape_args == ss.nargs;
	if (!fits) {
		diag_error(d, (aotc_loc){db->path, 0, 0}, "the database does not hold '%s'", k->id);
		shape_set_finish(&ss);
		return AOTC_DIAGNOSED;
	}
	int nc = db->nconfigs, ns = db->nshapes;
	for (int s = 0; s < ns; s++)
		shape_set_add(&ss, db->shapes + (size_t)s * ss.nargs);
	int64_t *values = xcalloc((size_t)nc * k->ntunables + 1, sizeof *values);
	const char **names = xmalloc((size_t)nc * sizeof *names + 1);
	/* Externs and alternatives' variants are outside the search, as in a tune. */
	bool *always = xcalloc((size_t)nc + 1, sizeof *always);
	for (int c = 0; c < nc; c++) {
		const db_entry *e = &db->configs[c];
		always[c] = e->is_extern || e->function;
		if (!always[c])
			memcpy(values + (size_t)c * k->ntunables, e->values, (size_t)k->ntunables * sizeof *values);
		names[c] = e->name;
	}
	json_t *sm = json_object_get(db->hardware, "sm_count");
	cost_features feat;
	cost_features_init(&feat, k, &ss, ss.nargs, k->ntunables,
	                   json_is_integer(sm) ? (double)json_integer_value(sm) : 1);
	/* The exhaustive run: its cost and per shape its best. */
	double total = 0, *oracle = xmalloc((size_t)ns * sizeof *oracle + 1);
	for (int s = 0; s < ns; s++) {
		oracle[s] = INFINITY;
		for (int c = 0; c < nc; c++) {
			const measurement *m = db_get(db, c, s);
			if (!m)
				continue;
			if (m->status != MS_INVALID && m->status != MS_SKIPPED)
				total += cell_cost(m);
			if (m->status == MS_OK && m->time_ms < oracle[s])
				oracle[s] = m->time_ms;
		}
	}
	schedule sc;
	schedule_params sp = {
		.kind = o->search, .nconfigs = nc, .nshapes = ns, .ntunables = k->ntunables,
		.values = values, .names = names, .always = always, .shard = 1, .nshards = 1,
		.budgeted = o->budget_s > 0, .seed = o->seed, .features = &feat, .rows = ss.values,
	};
	schedule_init(&sc, &sp);
	/* Static statuses are known before measuring, as in a tune. */
	for (int s = 0; s < ns; s++)
		for (int c = 0; c < nc; c++) {
			const measurement *m = db_get(db, c, s);
			if (!m)
				schedule_close_shape(&sc, s);
			else if (m->status == MS_INVALID || m->status == MS_SKIPPED)
				schedule_mark(&sc, c, s, m->status, NAN);
		}
	int *cells = xmalloc((size_t)nc * ns * sizeof *cells + 1);
	double spent = 0, budget_ms = o->budget_s > 0 ? o->budget_s * 1e3 : INFINITY;
	int measured = 0, n;
	printf("%s: %d configurations x %d shapes, exhaustive cost %.1f s; search %s, sample %d\n",
	       k->id, nc, ns, total / 1e3, search_name(sc.kind), sc.nsample);
	printf("%6s %8s %9s %9s %9s\n", "round", "cells", "cost", "geomean", "worst");
	while (spent < budget_ms && (n = schedule_next_round(&sc, cells)) > 0) {
		for (int i = 0; i < n && spent < budget_ms; i++) {
			int c = cells[i] % nc, s = cells[i] / nc;
			if (sc.state[cells[i]] != CELL_PENDING || schedule_deprioritised(&sc, c))
				continue;
			const measurement *m = db_get(db, c, s);
			spent += cell_cost(m);
			measured++;
			schedule_mark(&sc, c, s, m->status, m->time_ms);
		}
		double lg = 0, worst = 1;
		int k2 = 0;
		for (int s = 0; s < ns; s++) {
			if (!isfinite(oracle[s]))
				continue;
			double r = isfinite(sc.best[s]) ? sc.best[s] / oracle[s] : 100;
			lg += log(r);
			worst = r > worst ? r : worst;
			k2++;
		}
		printf("%6d %8d %8.1f%% %9.4f %9.4f\n", sc.round, measured, 100 * spent / total,
		       exp(lg / (k2 ? k2 : 1)), worst);
	}
	aotc_status rc = out_dir ? write_measured(db, &sc, out_dir, d) : AOTC_OK;
	schedule_finish(&sc);
	free(cells);
	free(oracle);
	free(values);
	free(names);
	free(always);
	shape_set_finish(&ss);
	return rc;
}
