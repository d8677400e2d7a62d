/* The measure stage (docs/design.md, "Crew" and "Time left"): the rounds
 * of the schedule measured on every device at once, a thread per device;
 * the progress line and its time left. The stages before it and the
 * summary are tuner/tune.c's; the run they share is tuner/tune_run.h. */
#include "tune_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fmt_duration(char *buf, size_t n, double s)
{
	if (s < 60)
		snprintf(buf, n, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, n, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

/* The reference's compiled blob and launch at shape s (json null without
 * a reference); NULL after a diagnostic. */
static json_t *reference_at(tune_run *r, int s, aotc_status *status)
{
	const kernel *k = r->k;
	if (r->ref_job < 0)
		return json_null();
	const job *j = pool_wait(&r->p, r->ref_job);
	if (j->rs != RT_OK) {
		diag_error(r->d, k->reference_loc, "the reference '%s' does not compile:\n%s", k->reference,
		           j->log ? j->log : "");
		*status = AOTC_DIAGNOSED;
		return NULL;
	}
	if (k->ref_on_host)
		return json_pack("{s:s, s:s, s:b}", "blob", j->path, "symbol", j->symbol, "host", true);
	strbuf why;
	strbuf_init(&why);
	json_t *dims;
	meas_status ls = launch_dims(k, &k->ref_grid, &k->ref_block, &k->ref_smem, NULL,
	                             shape_params(r, s), r->device, &dims, &why);
	if (ls != MS_OK) {
		diag_error(r->d, k->reference_loc, "the reference cannot be launched: %s", why.data);
		strbuf_finish(&why);
		*status = AOTC_DIAGNOSED;
		return NULL;
	}
	strbuf_finish(&why);
	return json_pack("{s:s, s:s, s:o}", "blob", j->path, "symbol", j->symbol, "launch", dims);
}

/* ---- Stage 5: measure ------------------------------------------------------ */

/* The ms the timed launches of a cell whose launches take t ms would take
 * at shape s under the sampling (docs/database.md, "How a measurement is
 * taken"): screened after a few when far behind the best, else until the
 * cell's time is spent, within the least and the most samples. */
static double timed_ms(const tune_run *r, int s, double t)
{
	const sampling *sp = &r->o->sampling;
	double best = r->sc.best[s];
	if (sp->screen_factor > 0 && isfinite(best) && t > sp->screen_factor * best)
		return t * (sp->warmup + sp->screen_samples);
	double n = ceil(sp->budget_ms / t);
	n = n < sp->min_samples ? sp->min_samples : n > sp->max_samples ? sp->max_samples : n;
	return t * (sp->warmup + n);
}

/* The product of shape s's arguments (at least 1): how much work a shape
 * is, roughly, for a kernel whose work grows with each argument. */
static double shape_size(const tune_run *r, int s)
{
	double v = 1;
	for (int a = 0; a < r->ss.nargs; a++)
		v *= fmax(1, (double)shape_row(&r->ss, s)[a]);
	return v;
}

/* Value v at shape s: its own where known[s], else a power law in the
 * shapes' sizes fitted to the shapes where it is known (log v = k + e log
 * size; e = 1 with one size, within 0 to 3), else fallback. */
static double shape_guess(const tune_run *r, int s, const double *v, const bool *known, double fallback)
{
	if (known[s])
		return v[s];
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int t = 0; t < r->ss.count; t++) {
		if (!known[t])
			continue;
		double x = log(shape_size(r, t)), y = log(v[t]);
		n++;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	if (n == 0)
		return fallback;
	double var = sxx / n - (sx / n) * (sx / n);
	double e = var > 1e-9 ? (sxy / n - (sx / n) * (sy / n)) / var : 1;
	e = e < 0 ? 0 : e > 3 ? 3 : e;
	return exp(sy / n + e * (log(shape_size(r, s)) - sx / n));
}

/* The cells a shape needs measured for its own slope of cost on x. */
enum { SHAPE_SLOPE_CELLS = 10 };

/* Seconds left: what the cells the search still means to measure will
 * cost, or what is left of the budget when that is less (*capped). */
static double estimate_left(tune_run *r, bool *capped)
{
	*capped = false;
	const schedule *sc = &r->sc;
	int ns = r->ss.count;
	/* A cell of shape s costs a_s + b_s x seconds, x the ms its timed
	 * launches take: b_s from the shape's cells (how a cell's cost grows
	 * with its timed ms; pooled over the shapes where it has fewer than
	 * SHAPE_SLOPE_CELLS), a_s what is left of the shape's
	 * cells' cost (the worker's round trips, the checks, the cold cache:
	 * they grow with the buffers, not with x), guessed from the other
	 * shapes' by a power law in size where none of its cells is measured
	 * yet. x from the cost model's prediction of the cell's time where the
	 * search has one (the promising cells come first, so the ones left are
	 * the slower ones), else the shape's own cells' or a power law over
	 * the other shapes'. Each visit of a shape costs its setup and the
	 * alternation that ends it (what they cost per visit so far): one more
	 * visit per open shape in an exhaustive search (two while its sample
	 * is not measured), as many as the rounds it has left in the model
	 * search. The devices share the work; waiting for compiles is counted
	 * as the compiling left, which measuring cannot outrun. */
	cost_sums all = {0};
	double wxx = 0, wxy = 0;
	for (int s = 0; s < 2 * ns; s++) {
		const cost_sums *c = &r->shape_cost[s];
		all.n += c->n;
		all.x += c->x;
		all.y += c->y;
		all.xx += c->xx;
		all.xy += c->xy;
		if (c->n >= 2) {
			wxx += c->xx - c->x * c->x / c->n;
			wxy += c->xy - c->x * c->y / c->n;
		}
	}
	if (r->measured < 5 || all.n < 5) /* one slow first cell is no pace */
		return NAN;
	double mx = all.x / all.n, my = all.y / all.n, var = all.xx / all.n - mx * mx;
	double b = wxx > 1e-12 ? wxy / wxx : var > 1e-12 ? (all.xy / all.n - mx * my) / var : 0;
	b = b > 0 ? b : 0;
	/* Cells measured while variants were compiling cost more (on the
	 * host the compilers take the cores): f, what the shapes measured
	 * both ways show, brings those to what the cells left will cost. */
	double qy = 0, by = 0;
	for (int s = 0; s < ns; s++) {
		const cost_sums *q = &r->shape_cost[s], *c = &r->shape_cost[ns + s];
		if (q->n >= 3 && c->n >= 3) {
			qy += q->y / q->n;
			by += c->y / c->n;
		}
	}
	double f = by > 0 && qy < by ? qy / by : 1;
	/* A shape's own slope where it has cells enough: how a cell's cost
	 * grows with x differs between shapes (the budget may be spent
	 * evicting large buffers, a screened cell has few launches). */
	double *xv = xmalloc(3 * (size_t)ns * sizeof *xv + 1), *av = xv + ns, *bv = av + ns;
	bool *xk = xmalloc(2 * (size_t)ns * sizeof *xk + 1), *ak = xk + ns;
	for (int s = 0; s < ns; s++) {
		const cost_sums *q = &r->shape_cost[s], *c = &r->shape_cost[ns + s];
		double n = q->n + c->n, sxx = 0, sxy = 0;
		for (const cost_sums *g = q; g; g = g == q ? c : NULL)
			if (g->n >= 2) {
				sxx += g->xx - g->x * g->x / g->n;
				sxy += g->xy - g->x * g->y / g->n;
			}
		bv[s] = n >= SHAPE_SLOPE_CELLS && sxx > 1e-12 ? (sxy > 0 ? sxy / sxx : 0) : b;
		xv[s] = n ? (q->x + c->x) / n : 0;
		if (q->n >= 3 || (q->n > 0 && c->n == 0))
			av[s] = (q->y - bv[s] * q->x) / q->n;
		else
			av[s] = c->n ? f * (c->y - bv[s] * c->x) / c->n : 0;
		xk[s] = n > 0 && xv[s] > 0;
		ak[s] = n > 0 && av[s] > 0;
	}
	double a_all = my - b * mx > 0 ? my - b * mx : 0;
	double per_visit = r->visits ? r->other_s / r->visits : 0, left = 0;
	/* the cost model's bias, as the cells measured since it predicted show */
	double bias = r->pred_n >= 20 && r->pred_x > 0 ? r->pred_actual / r->pred_x : 1;
	for (int s = 0; s < r->ss.count; s++) {
		if (sc->closed[s])
			continue;
		int open = 0, sample = 0;
		double cost = 0, guess = shape_guess(r, s, xv, xk, mx);
		double a = r->shape_cost[s].n + r->shape_cost[ns + s].n > 0 ? (ak[s] ? av[s] : 0)
		                                                             : shape_guess(r, s, av, ak, f * a_all);
		for (int c = 0; c < r->cf.n; c++) {
			int cell = schedule_cell(sc, c, s);
			if (sc->state[cell] != CELL_PENDING || schedule_deprioritised(sc, c))
				continue;
			open++;
			cost += a + bv[s] * (isfinite(sc->pred[cell]) ? bias * timed_ms(r, s, exp(sc->pred[cell])) : guess);
		}
		for (int i = 0; i < sc->nsample; i++)
			sample += sc->state[schedule_cell(sc, sc->order[i], s)] == CELL_PENDING;
		int visits = open ? 1 + (sample > 0 && open > sample) : 0;
		if (sc->kind == SEARCH_MODEL && open) {
			int rounds = SEARCH_PATIENCE - sc->stale[s], more = sample + rounds * SEARCH_BATCH;
			visits = (sample > 0) + (rounds > 1 ? rounds : 1);
			if (more < open) {
				cost *= (double)more / open;
				open = more;
			}
		}
		cost += visits * per_visit;
		left += cost / r->nms;
	}
	free(xv);
	free(xk);
	pool *p = &r->p;
	int built = pool_done(p), jobs = p->on_demand ? p->nwanted : p->njobs;
	if (built > 0 && jobs > built && p->nthreads > 0) {
		double compiling = (jobs - built) * (p->busy_s / built) / p->nthreads;
		left = compiling > left ? compiling : left;
	}
	double budget_left = r->o->budget_s - (monotonic_s() - r->t0);
	if (r->o->budget_s > 0 && budget_left < left) {
		*capped = true;
		left = budget_left > 0 ? budget_left : 0;
	}
	return left;
}

void tune_show_progress(tune_run *r, bool final)
{
	progress *pr = &r->pr;
	if (pr->quiet)
		return;
	double t = monotonic_s();
	if (!final && t - pr->last < pr->every)
		return;
	pr->last = t;
	schedule_counts n = schedule_count(&r->sc);
	char eta[48] = "";
	bool capped;
	double left = final ? NAN : estimate_left(r, &capped);
	if (!isnan(left)) {
		fmt_duration(eta, sizeof eta - 16, left);
		if (!final && capped)
			strcat(eta, " (the budget)");
	}
	int ncompile = r->p.on_demand ? r->p.nwanted : r->p.njobs;
	strbuf line;
	strbuf_init(&line);
	if (ncompile > 0)
		strbuf_printf(&line, "compiled %d/%d, ", pool_done(&r->p), ncompile);
	strbuf_printf(&line, "measured %d (%d of %d cells known), shapes covered %d/%d", r->measured, n.done,
	              n.mine, n.shapes_ok, r->ss.count);
	if (!final && !isnan(left))
		strbuf_printf(&line, ", %s left", eta);
	fprintf(stderr, "%saotc: %s%s", pr->tty ? "\r\033[K" : "", line.data, pr->tty && !final ? "" : "\n");
	strbuf_finish(&line);
}

/* --dump=schedule: the round's batches. */
static void dump_round(const tune_run *r, const int *cells, int n)
{
	for (int i = 0; i < n;) {
		int s = cells[i] / r->cf.n;
		json_t *names = json_array();
		for (; i < n && cells[i] / r->cf.n == s; i++)
			json_array_append_new(names, json_string(r->cf.names[cells[i] % r->cf.n]));
		strbuf sb;
		strbuf_init(&sb);
		shape_format(&sb, r->k, &r->ss, s);
		json_t *o = json_pack("{s:s, s:i, s:s, s:o}", "stage", "schedule", "round", r->sc.round,
		                      "shape", sb.data, "configs", names);
		char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", line);
		fflush(stdout);
		free(line);
		json_decref(o);
		strbuf_finish(&sb);
	}
}

/* ---- The crew: one thread per device ------------------------------------- */

/* Measuring is shared by one thread per device (--devices), each with its
 * measurer (a worker on its device). A round's cells are cut into visits
 * (a shape and some of the cells the round gives it); each thread takes
 * the next visit, makes the shape its worker's and measures the cells.
 * Everything else (the schedule, the database, the progress line,
 * diagnostics) is the run's, under r->mu: a thread holds it except while
 * it waits for a compile or for its worker (run_unlock ... run_lock
 * around those calls), so the bookkeeping goes as with one device. A cell
 * being measured is busy: what another cell's failure teaches is not
 * recorded there meanwhile. The thread that ends a round's last visit of
 * a shape alternates the shape's close contenders (its worker holds the
 * shape). With one device the crew is the calling thread. */

static void run_lock(tune_run *r) { pthread_mutex_lock(&r->mu); }
static void run_unlock(tune_run *r) { pthread_mutex_unlock(&r->mu); }

/* "device 1: " before a line about one device's work, when there are
 * several; "" otherwise. */
static const char *device_tag(const tune_run *r, const measurer *ms, char *buf, size_t n)
{
	buf[0] = 0;
	if (r->nms > 1)
		snprintf(buf, n, "device %d: ", ms->index);
	return buf;
}

/* Measures configuration c at shape s, which ms's worker holds; records
 * it. Called and returns with r->mu held. */
static aotc_status measure_cell(tune_run *r, measurer *ms, int c, int s)
{
	const kernel *k = r->k;
	measurement mm = {.config = r->dbc[c], .shape = r->dbs[s], .error = NAN, .time_ms = NAN};
	strbuf why;
	strbuf_init(&why);
	json_t *dims;
	mm.status = tune_static_status(r, c, s, &dims, &why);
	double best = r->sc.best[s];
	int cell = schedule_cell(&r->sc, c, s);
	double pred_x = isfinite(r->sc.pred[cell]) ? timed_ms(r, s, exp(r->sc.pred[cell])) : NAN;
	r->busy[cell] = 1;
	run_unlock(r);
	const job *j = NULL;
	if (mm.status == MS_OK) {
		j = pool_wait(&r->p, r->cf.job[c]);
		if (j->rs != RT_OK) {
			/* ptxas refusing the static shared memory: resources */
			mm.status = j->rs == RT_ERR_RESOURCES ? MS_RESOURCES : MS_COMPILE_ERROR;
			strbuf_puts(&why, j->log ? j->log : rt_status_name(j->rs));
		}
	}
	bool lost = false;
	double took = 0;
	if (mm.status != MS_OK) {
		json_decref(dims);
		mm.note = xstrdup(why.data);
	} else {
		double t0 = monotonic_s();
		lost = !measurer_run(ms, j, dims, r->cf.fn[c], r->cf.fn[c] ? config_values(&r->cf, c) : NULL, best,
		                     &mm, &why);
		took = monotonic_s() - t0;
	}
	run_lock(r);
	r->busy[cell] = 0;
	if (took > 0) {
		double x = 0;
		for (int i = 0; i < mm.nsamples; i++)
			x += mm.samples[i];
		pool *p = &r->p;
		bool compiling = pool_done(p) < (p->on_demand ? p->nwanted : p->njobs);
		cost_sums *cs = &r->shape_cost[compiling ? r->ss.count + s : s];
		cs->n++;
		cs->x += x;
		cs->y += took;
		cs->xx += x * x;
		cs->xy += x * took;
		if (isfinite(pred_x)) {
			r->pred_x += pred_x;
			r->pred_actual += x;
			r->pred_n++;
		}
	}
	aotc_status status = AOTC_OK;
	if (lost) {
		diag_plain_error(r->d, "the worker cannot be restarted: %s", why.data);
		status = AOTC_ENVIRONMENT;
	}
	if (!status) {
		schedule_mark(&r->sc, c, s, mm.status, mm.time_ms);
		status = tune_record(r, &mm);
		r->measured++;
	}
	if (!status && r->o->verbose) {
		strbuf sb;
		strbuf_init(&sb);
		shape_format(&sb, k, &r->ss, s);
		char tag[32];
		fprintf(stderr, "%saotc: %s%s %s: %s", r->pr.tty ? "\r\033[K" : "", device_tag(r, ms, tag, sizeof tag),
		        sb.data, r->cf.names[c], meas_status_name(mm.status));
		if (mm.status == MS_OK)
			fprintf(stderr, " %.4f ms%s", mm.time_ms, mm.screened ? " (screened)" : "");
		else if (mm.note)
			fprintf(stderr, " (%.200s)", mm.note);
		fputc('\n', stderr);
		strbuf_finish(&sb);
	}
	free(mm.note);
	free(mm.samples);
	strbuf_finish(&why);
	/* Buffers over the memory limit say nothing of the configuration's
	 * other shapes, unlike a launch it cannot make. */
	if (!status && !(mm.status == MS_RESOURCES && ms->refused))
		status = tune_learn_from(r, c, s);
	return status;
}

/* Before ms's device times its first shape: the device warmed to a steady
 * clock (measurer_warm) and its clocks read; the first device's reply is
 * the run's, with one warning on a GPU whose clocks are not locked. */
static void warm_once(tune_run *r, measurer *ms)
{
	int d = (int)(ms - r->ms);
	if (r->warmed[d])
		return;
	r->warmed[d] = true;
	run_unlock(r);
	json_t *warm = measurer_warm(ms, warmup_ms(r->o->arch));
	run_lock(r);
	if (r->warm || !warm) {
		json_decref(warm);
		return;
	}
	r->warm = warm;
	r->warm_ms = d;
	const json_t *ck = json_object_get(r->warm, "clocks");
	if (!r->o->quiet && r->o->arch->kind != ARCH_HOST && json_is_false(json_object_get(ck, "locked")))
		fprintf(stderr, "%saotc: warning: the GPU's clocks are not locked (SM %lld MHz now, applications clock %lld MHz, at most %lld MHz): times may drift with temperature and power; lock them (nvidia-smi -lgc) for a steadier tune\n",
		        r->pr.tty ? "\r\033[K" : "", (long long)json_integer_value(json_object_get(ck, "sm_mhz")),
		        (long long)json_integer_value(json_object_get(ck, "app_sm_mhz")),
		        (long long)json_integer_value(json_object_get(ck, "max_sm_mhz")));
}

/* Shape s (which ms's worker holds): its close contenders, where one was
 * not alternated yet, timed again in alternation and recorded; the
 * schedule's times follow. A failure of the worker on them leaves their
 * measurements as they were (with a warning). 0 or an exit status; r->mu
 * held. */
static aotc_status alternate_once(tune_run *r, measurer *ms, int s)
{
	int group[ALT_GROUP];
	bool fresh;
	int n = tune_contenders(r, s, group, &fresh);
	if (n < 2 || !fresh)
		return AOTC_OK;
	alt_variant v[ALT_GROUP];
	measurement mm[ALT_GROUP];
	strbuf why;
	strbuf_init(&why);
	aotc_status status = AOTC_OK;
	int nv = 0;
	for (int i = 0; i < n; i++) {
		int c = group[i];
		json_t *dims;
		if (r->cf.job[c] < 0 || tune_static_status(r, c, s, &dims, &why) != MS_OK)
			continue; /* not compiled in this run: cannot happen, contenders are */
		const measurement *m = cell_meas(r, c, s);
		mm[nv] = *m;
		mm[nv].samples = xmalloc((size_t)m->nsamples * sizeof *m->samples + 1);
		memcpy(mm[nv].samples, m->samples, (size_t)m->nsamples * sizeof *m->samples);
		mm[nv].note = m->note ? xstrdup(m->note) : NULL;
		v[nv] = (alt_variant){.ldims = dims, .fn = r->cf.fn[c],
		                      .values = r->cf.fn[c] ? config_values(&r->cf, c) : NULL, .mm = &mm[nv]};
		group[nv++] = c;
	}
	run_unlock(r);
	/* The compiled contenders (a failed compile: left out) */
	int kept = 0;
	for (int i = 0; i < nv; i++) {
		pool_want(&r->p, r->cf.job[group[i]]);
		const job *j = pool_wait(&r->p, r->cf.job[group[i]]);
		if (j->rs != RT_OK) {
			json_decref(v[i].ldims);
			free(mm[i].samples);
			free(mm[i].note);
			continue;
		}
		v[kept] = v[i];
		v[kept].j = j;
		mm[kept] = mm[i];
		v[kept].mm = &mm[kept];
		group[kept++] = group[i];
	}
	nv = kept;
	bool lost = false, alternated = false;
	why.len = 0;
	why.data[0] = 0;
	double t0 = monotonic_s();
	if (nv >= 2)
		alternated = measurer_alternate(ms, v, nv, r->o->alt_rounds, &lost, &why);
	double took = monotonic_s() - t0;
	run_lock(r);
	r->other_s += took;
	if (alternated) {
		r->alternations++;
		for (int i = 0; i < nv && !status; i++) {
			schedule_retime(&r->sc, group[i], s, mm[i].status, mm[i].time_ms);
			status = tune_record(r, &mm[i]);
		}
		if (!status && r->o->verbose) {
			strbuf sb;
			strbuf_init(&sb);
			shape_format(&sb, r->k, &r->ss, s);
			char tag[32];
			fprintf(stderr, "%saotc: %s%s: alternated", r->pr.tty ? "\r\033[K" : "",
			        device_tag(r, ms, tag, sizeof tag), sb.data);
			for (int i = 0; i < nv; i++)
				if (mm[i].status == MS_OK)
					fprintf(stderr, "%s %s %.4f ms (noise %.1f %%)", i ? "," : "", r->cf.names[group[i]],
					        mm[i].time_ms, 100 * meas_spread(&mm[i]));
				else
					fprintf(stderr, "%s %s %s", i ? "," : "", r->cf.names[group[i]], meas_status_name(mm[i].status));
			fprintf(stderr, " (%d rounds)\n", mm[0].alternated);
			strbuf_finish(&sb);
		}
	} else if (nv >= 2) {
		strbuf sb;
		strbuf_init(&sb);
		shape_format(&sb, r->k, &r->ss, s);
		fprintf(stderr, "%saotc: warning: shape %s: the close contenders could not be timed again in alternation (%s); their first times stand\n",
		        r->pr.tty ? "\r\033[K" : "", sb.data, why.data);
		strbuf_finish(&sb);
		r->alt_lost++;
		if (lost) {
			diag_plain_error(r->d, "the worker cannot be restarted: %s", why.data);
			status = AOTC_ENVIRONMENT;
		}
	} else {
		for (int i = 0; i < nv; i++)
			json_decref(v[i].ldims);
	}
	for (int i = 0; i < nv; i++) {
		free(mm[i].samples);
		free(mm[i].note);
	}
	strbuf_finish(&why);
	return status;
}

/* alternate_once, once more where the new times made a variant measured
 * only once a contender (the first ones were slower in alternation than
 * alone); once per shape until alt_done[s] is reset. Nothing with
 * --alternate 0: the contenders keep their first times. */
static aotc_status alternate_shape(tune_run *r, measurer *ms, int s)
{
	if (r->alt_done[s] || r->o->alt_rounds == 0)
		return AOTC_OK;
	r->alt_done[s] = true;
	aotc_status status = AOTC_OK;
	for (int pass = 0; pass < 2 && !status; pass++)
		status = alternate_once(r, ms, s);
	return status;
}

/* A shape and some of the cells a round gives it (cells[from..to) of the
 * crew's); from == to: only the shape's close contenders' alternation. */
typedef struct visit {
	int s, from, to;
} visit;

typedef struct crew {
	tune_run *r;
	const int *cells;   /* the round's, grouped by shape */
	visit *v;
	int nv, next;       /* visits, and the next one to take */
	int *open;          /* per shape: its visits not ended */
	bool *measured;     /* per shape: a visit measured a cell there */
} crew;

/* Visit v with ms's worker: the shape set up, the cells measured; where
 * this visit ends the shape's in this round, its contenders alternated.
 * 0 or an exit status; r->mu held. */
static aotc_status visit_shape(crew *cw, measurer *ms, const visit *v)
{
	tune_run *r = cw->r;
	int s = v->s;
	aotc_status status = AOTC_OK;
	json_t *ref = reference_at(r, s, &status);
	if (!ref)
		return status;
	warm_once(r, ms);
	strbuf why;
	strbuf_init(&why);
	run_unlock(r);
	double t0 = monotonic_s();
	shape_result sr = measurer_shape(ms, shape_row(&r->ss, s), r->ss.nargs, ref, &why);
	double took = monotonic_s() - t0;
	run_lock(r);
	r->other_s += took;
	r->visits++;
	if (sr == SHAPE_REFUSED) {
		/* Too large for this machine: every cell says so. */
		for (int c = 0; c < r->cf.n && !status; c++) {
			int cell = schedule_cell(&r->sc, c, s);
			if (r->sc.state[cell] == CELL_PENDING && !r->busy[cell])
				status = tune_record_status(r, c, s, MS_RESOURCES, why.data);
		}
		schedule_close_shape(&r->sc, s);
	} else if (sr != SHAPE_OK) {
		strbuf sb;
		strbuf_init(&sb);
		shape_format(&sb, r->k, &r->ss, s);
		fprintf(stderr, "%saotc: warning: shape %s: the reference failed (%s)\n", r->pr.tty ? "\r\033[K" : "",
		        sb.data, why.data);
		strbuf_finish(&sb);
		schedule_close_shape(&r->sc, s);
		r->lost_shapes = true;
		if (sr == SHAPE_WORKER_LOST) {
			diag_plain_error(r->d, "the worker cannot be restarted: %s", why.data);
			status = AOTC_ENVIRONMENT;
		}
	}
	for (int i = v->from; i < v->to && sr == SHAPE_OK && !status && !r->failed; i++) {
		int c = cw->cells[i] % r->cf.n;
		if (r->sc.state[cw->cells[i]] != CELL_PENDING || schedule_deprioritised(&r->sc, c))
			continue; /* learnt from another cell meanwhile */
		if (r->o->budget_s > 0 && monotonic_s() - r->t0 > r->o->budget_s) {
			r->out_of_budget = true;
			break;
		}
		status = measure_cell(r, ms, c, s);
		cw->measured[s] |= !status;
		tune_show_progress(r, false);
	}
	/* The shape's close contenders, while this worker holds it, where the
	 * round measured something there (a later round's new contenders are
	 * alternated again), or where the visit is for them alone. */
	bool alone = v->from == v->to;
	if (--cw->open[s] == 0 && sr == SHAPE_OK && !status && !r->failed && !r->out_of_budget &&
	    (cw->measured[s] || alone)) {
		if (!alone)
			r->alt_done[s] = false;
		status = alternate_shape(r, ms, s);
	}
	strbuf_finish(&why);
	return status;
}

typedef struct crew_member {
	crew *cw;
	measurer *ms;
} crew_member;

/* One device's thread: visits until none is left, the budget is spent or
 * a device failed (r->failed). */
static void *crew_thread(void *arg)
{
	crew_member *m = arg;
	tune_run *r = m->cw->r;
	run_lock(r);
	while (!r->failed && !r->out_of_budget && m->cw->next < m->cw->nv) {
		visit v = m->cw->v[m->cw->next++];
		aotc_status status = visit_shape(m->cw, m->ms, &v);
		if (status && !r->failed)
			r->failed = status;
	}
	run_unlock(r);
	return NULL;
}

/* The crew's visits, shared among the devices' threads; r->failed. */
static aotc_status crew_run(crew *cw)
{
	tune_run *r = cw->r;
	cw->next = 0;
	crew_member *m = xcalloc((size_t)r->nms, sizeof *m);
	for (int i = 0; i < r->nms; i++)
		m[i] = (crew_member){.cw = cw, .ms = &r->ms[i]};
	if (r->nms == 1) {
		crew_thread(&m[0]);
	} else {
		pthread_t *t = xcalloc((size_t)r->nms, sizeof *t);
		for (int i = 0; i < r->nms; i++)
			if (pthread_create(&t[i], NULL, crew_thread, &m[i]) != 0)
				die("pthread_create failed");
		for (int i = 0; i < r->nms; i++)
			pthread_join(t[i], NULL);
		free(t);
	}
	free(m);
	return r->failed;
}

/* The round's cells (grouped by shape) as the crew's visits: a shape's
 * cells one visit, or, when the round has fewer shapes than devices,
 * pieces of them so that every device has work (not without a reference:
 * there a worker takes the first variant it runs at a shape as correct,
 * and two workers might take different ones). */
static void plan_visits(crew *cw, int n)
{
	tune_run *r = cw->r;
	const int *cells = cw->cells;
	int shapes = 0;
	for (int i = 0; i < n; i++)
		shapes += i == 0 || cells[i] / r->cf.n != cells[i - 1] / r->cf.n;
	int pieces = shapes < r->nms && r->ref_job >= 0 ? (r->nms + shapes - 1) / shapes : 1;
	cw->nv = 0;
	memset(cw->open, 0, (size_t)r->ss.count * sizeof *cw->open);
	memset(cw->measured, 0, (size_t)r->ss.count * sizeof *cw->measured);
	for (int i = 0; i < n;) {
		int s = cells[i] / r->cf.n, end = i;
		while (end < n && cells[end] / r->cf.n == s)
			end++;
		int per = (end - i + pieces - 1) / pieces;
		for (int from = i; from < end; from += per) {
			cw->v[cw->nv++] = (visit){.s = s, .from = from, .to = from + per < end ? from + per : end};
			cw->open[s]++;
		}
		i = end;
	}
}

/* After the rounds: shapes none of whose cells was ever alternated
 * (measured by a run killed before it got there, or whose last visit in
 * a round lost its worker) are set up again and their contenders
 * alternated; nothing else is measured. */
static void plan_alternation(crew *cw)
{
	tune_run *r = cw->r;
	cw->nv = 0;
	memset(cw->open, 0, (size_t)r->ss.count * sizeof *cw->open);
	for (int s = 0; s < r->ss.count; s++) {
		int group[ALT_GROUP];
		bool fresh;
		if (!r->params_ok[s] || r->alt_done[s] || r->sc.dead[s] || tune_shape_alternated(r, s) ||
		    tune_contenders(r, s, group, &fresh) < 2 || !fresh)
			continue;
		cw->v[cw->nv++] = (visit){.s = s};
		cw->open[s] = 1;
	}
}

/* Rounds until the schedule is done or the budget is spent. */
aotc_status tune_measure_stage(tune_run *r)
{
	r->pr = (progress){.tty = term_redraws(2), .quiet = r->o->quiet, .every = 15};
	const char *every = getenv("AOTC_PROGRESS_SECONDS");
	if (r->pr.tty)
		r->pr.every = 0.25;
	else if (every && atof(every) > 0)
		r->pr.every = atof(every);
	r->t0 = monotonic_s();
	int ncells = r->cf.n * r->ss.count;
	int *cells = xmalloc((size_t)ncells * sizeof *cells + 1);
	crew cw = {.r = r, .cells = cells, .v = xmalloc((size_t)(ncells + r->ss.count) * sizeof *cw.v + 1),
	           .open = xcalloc((size_t)r->ss.count + 1, sizeof *cw.open),
	           .measured = xcalloc((size_t)r->ss.count + 1, sizeof *cw.measured)};
	r->alt_done = xcalloc((size_t)r->ss.count + 1, sizeof *r->alt_done);
	r->shape_cost = xcalloc(2 * (size_t)r->ss.count + 1, sizeof *r->shape_cost);
	pthread_mutex_init(&r->mu, NULL);
	aotc_status status = AOTC_OK;
	int n;
	while (!status && !r->out_of_budget && r->p.njobs > 0 && (n = schedule_next_round(&r->sc, cells)) > 0) {
		if (r->o->dump == TUNE_DUMP_SCHEDULE)
			dump_round(r, cells, n);
		if (r->ref_job >= 0)
			pool_want(&r->p, r->ref_job);
		for (int i = 0; i < n; i++)
			if (r->cf.job[cells[i] % r->cf.n] >= 0)
				pool_want(&r->p, r->cf.job[cells[i] % r->cf.n]);
		plan_visits(&cw, n);
		status = crew_run(&cw);
	}
	if (!status && !r->out_of_budget && r->p.njobs > 0 && r->o->alt_rounds > 0) {
		plan_alternation(&cw);
		status = crew_run(&cw);
	}
	/* The clocks at the end, read under a short load as at the start (an
	 * idle GPU lowers them within moments). */
	if (!status && r->warm)
		r->clocks_end = measurer_warm(&r->ms[r->warm_ms], warmup_ms(r->o->arch) / 4);
	pthread_mutex_destroy(&r->mu);
	free(cells);
	free(cw.v);
	free(cw.open);
	free(cw.measured);
	return status;
}

