#include "measure.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

const sampling SAMPLING_DEFAULT = {.warmup = 1, .min_samples = 5, .max_samples = 25, .screen_samples = 3,
                                   .screen_factor = 3.0, .budget_ms = 100.0, .min_checks = 20};
const sampling SAMPLING_QUICK = {.warmup = 1, .min_samples = 3, .max_samples = 5, .screen_samples = 3,
                                 .screen_factor = 2.0, .budget_ms = 20.0, .min_checks = 20};

/* How long one measurement may take before the variant counts as hung:
 * 30 s, or $AOTC_MEASURE_TIMEOUT seconds. */
static double measure_timeout_ms(void)
{
	const char *e = getenv("AOTC_MEASURE_TIMEOUT");
	double s = e ? atof(e) : 0;
	return (s > 0 ? s : 30) * 1e3;
}

double warmup_ms(const arch_info *arch)
{
	const char *e = getenv("AOTC_WARMUP_MS");
	double ms = e ? atof(e) : -1;
	return ms >= 0 ? ms : arch->kind != ARCH_HOST ? 200 : 100;
}

/* How a timed launch finds the caches (tuner/worker.c cold_cache,
 * cold_launch): the host evicts the buffers' lines ("evict"), a GPU
 * flushes its L2 ("flush": rotating copies of the buffers, "rotate", made
 * its cells no cheaper on an H100 and some bandwidth-bound ones slower,
 * docs/PERFORMANCE.md); $AOTC_COLD_CACHE "flush", "evict" or "rotate" sets
 * it (bench/cold/ compares them; options.c refuses other values). Where
 * one cannot apply, the worker flushes in full. */
static const char *cold_cache_method(const arch_info *arch)
{
	const char *e = getenv("AOTC_COLD_CACHE");
	if (e && (!strcmp(e, "flush") || !strcmp(e, "evict") || !strcmp(e, "rotate")))
		return e;
	return arch->kind == ARCH_HOST ? "evict" : "flush";
}

json_t *method_json(const arch_info *arch, const sampling *sp, int alt_rounds)
{
	return json_pack("{s:s, s:s, s:b, s:s, s:i, s:i, s:f, s:i, s:i, s:f, s:i, s:s, s:f, s:{s:i, s:i, s:f}}",
		"timer", arch->kind != ARCH_HOST ? "device events around each launch" : "CLOCK_MONOTONIC around each call",
		"statistic", "median", "cache_flush", 1, "cold_cache", cold_cache_method(arch), "warmup", sp->warmup,
		"screen_samples", sp->screen_samples, "screen_factor", sp->screen_factor,
		"min_samples", sp->min_samples, "max_samples", sp->max_samples, "budget_ms", sp->budget_ms,
		"min_checks", sp->min_checks,
		"inputs", "fresh per shape from a seeded generator, restored before each checked run",
		"warmup_ms", warmup_ms(arch), "alternation", "group", ALT_GROUP, "rounds", alt_rounds,
		"min_noise", ALT_MIN_NOISE);
}

meas_status launch_dims(const kernel *k, const launch *grid, const launch *block,
                               const aexpr *smem, const int64_t *values, const int64_t *params,
                               const json_t *dev, json_t **out, strbuf *why)
{
	*out = NULL;
	/* The kernel's own launch may use per-variant values: this variant's
	 * (the reference's geometry may not, ir_check says). */
	int64_t own[k->nparams + 1];
	memcpy(own, params, (size_t)k->nparams * sizeof *own);
	eval_status st = values ? ir_variant_params(k, values, own) : EVAL_OK;
	if (st != EVAL_OK) {
		strbuf_printf(why, "%s in an AOTC_VALUE over tunables", eval_status_name(st));
		return MS_INVALID;
	}
	if (!k->is_global) {
		*out = json_pack("{s:[i,i,i], s:[i,i,i], s:i}", "grid", 1, 1, 1, "block", 1, 1, 1,
		                 "smem", 0);
		return MS_OK;
	}
	eval_env env = {.tunables = values, .ntunables = values ? k->ntunables : 0,
	                .params = own, .nparams = k->nparams};
	int64_t dims[7];
	int which;
	st = ir_launch_dims(grid, block, smem, &env, dims, &which);
	if (st != EVAL_OK) {
		static const char *const what[7] = {"grid x", "grid y", "grid z", "block x", "block y",
		                                    "block z", "dynamic shared memory"};
		if (st == EVAL_DOMAIN)
			strbuf_printf(why, "%s is %lld", what[which], (long long)dims[which]);
		else
			strbuf_printf(why, "%s in the %s expression", eval_status_name(st), what[which]);
		return MS_INVALID;
	}
	const int64_t *g = dims, *b = dims + 3, sm = dims[6];
	/* What the device cannot launch is skipped here, with the reason. */
	int64_t threads = b[0] * b[1] * b[2];
	int64_t maxt = json_integer_value(json_object_get(dev, "max_threads_per_block"));
	const json_t *mb = json_object_get(dev, "max_block_dims"), *mg = json_object_get(dev, "max_grid_dims");
	int64_t optin = json_integer_value(json_object_get(dev, "smem_per_block_optin"));
	if (maxt > 0 && threads > maxt) {
		strbuf_printf(why, "%lld threads per block, the device allows %lld", (long long)threads,
		              (long long)maxt);
		return MS_SKIPPED;
	}
	for (int i = 0; i < 3; i++) {
		int64_t lb = json_integer_value(json_array_get(mb, (size_t)i));
		int64_t lg = json_integer_value(json_array_get(mg, (size_t)i));
		if ((lb > 0 && b[i] > lb) || (lg > 0 && g[i] > lg)) {
			strbuf_printf(why, "%s dimension %d exceeds the device's %lld", b[i] > lb ? "block" : "grid",
			              i, (long long)(b[i] > lb ? lb : lg));
			return MS_SKIPPED;
		}
	}
	if (optin > 0 && sm > optin) {
		strbuf_printf(why, "%lld bytes of dynamic shared memory, the device allows %lld",
		              (long long)sm, (long long)optin);
		return MS_SKIPPED;
	}
	*out = json_pack("{s:[I,I,I], s:[I,I,I], s:I}", "grid", (json_int_t)g[0], (json_int_t)g[1],
	                 (json_int_t)g[2], "block", (json_int_t)b[0], (json_int_t)b[1],
	                 (json_int_t)b[2], "smem", (json_int_t)sm);
	return MS_OK;
}

/* ---- The worker ---------------------------------------------------------- */

/* Starts (or restarts) the worker and sends init and the current shape. */
static aotc_status start_worker(measurer *ms, strbuf *why)
{
	worker_stop(ms->w);
	ms->w = worker_start(ms->exe, why);
	if (!ms->w)
		return AOTC_ENVIRONMENT;
	json_t *r;
	if (worker_call(ms->w, ms->init, 120e3, &r, why) != CALL_OK)
		return AOTC_ENVIRONMENT;
	const char *st = json_string_value(json_object_get(r, "status"));
	if (!st || strcmp(st, "ok") != 0) {
		const char *note = json_string_value(json_object_get(r, "note"));
		ms->no_device = st && !strcmp(st, "no_device");
		strbuf_puts(why, note ? note : "the worker could not open the device");
		json_decref(r);
		return AOTC_ENVIRONMENT;
	}
	if (!ms->device) {
		ms->device = json_incref(json_object_get(r, "device"));
		ms->index = (int)json_integer_value(json_object_get(r, "index"));
		ms->count = (int)json_integer_value(json_object_get(r, "count"));
	}
	json_decref(r);
	if (ms->shape_req) {
		if (worker_call(ms->w, ms->shape_req, 600e3, &r, why) != CALL_OK)
			return AOTC_ENVIRONMENT;
		json_decref(r);
	}
	ms->fresh = true;
	return AOTC_OK;
}

aotc_status measurer_start(measurer *ms, const aotc_module *m, const kernel *k, const arch_info *arch,
                           int device, uint64_t seed, json_t *method, strbuf *why)
{
	/* What killed tuners and workers left, even when nothing compiles. */
	proc_sweep_scratch();
	ssize_t n = readlink("/proc/self/exe", ms->exe, sizeof ms->exe - 1);
	if (n <= 0) {
		strbuf_printf(why, "cannot find the aotc executable: %s", strerror(errno));
		json_decref(method);
		return AOTC_ENVIRONMENT;
	}
	ms->exe[n] = 0;
	char *ir = ir_to_json(m);
	json_t *jir = json_loads(ir, 0, NULL);
	free(ir);
	ms->init = json_pack("{s:s, s:s, s:o, s:s, s:I, s:o}", "op", "init", "arch", arch->name, "ir", jir,
	                     "kernel", k->id, "seed", (json_int_t)seed, "method", method);
	if (device >= 0)
		json_object_set_new(ms->init, "device", json_integer(device));
	ms->max_samples = (int)json_integer_value(json_object_get(method, "max_samples"));
	ms->budget_ms = json_number_value(json_object_get(method, "budget_ms"));
	return start_worker(ms, why);
}

void measurer_stop(measurer *ms)
{
	worker_stop(ms->w);
	ms->w = NULL;
}

void measurer_finish(measurer *ms)
{
	measurer_stop(ms);
	json_decref(ms->init);
	json_decref(ms->device);
	json_decref(ms->shape_req);
}

shape_result measurer_shape(measurer *ms, const int64_t *row, int nargs, json_t *ref,
                            strbuf *why)
{
	json_t *jrow = json_array();
	for (int a = 0; a < nargs; a++)
		json_array_append_new(jrow, json_integer(row[a]));
	json_t *req = json_pack("{s:s, s:o, s:o}", "op", "shape", "row", jrow, "reference", ref);
	json_decref(ms->shape_req);
	ms->shape_req = NULL; /* start_worker sends init only */
	if (!ms->w && start_worker(ms, why) != 0) {
		json_decref(req);
		return SHAPE_WORKER_LOST;
	}
	for (int attempt = 0;; attempt++) {
		bool fresh = ms->fresh;
		json_t *r;
		double ts = monotonic_s();
		call_result cr = worker_call(ms->w, req, 600e3, &r, why);
		ms->shape_ms += (monotonic_s() - ts) * 1e3;
		if (cr == CALL_OK) {
			const char *st = json_string_value(json_object_get(r, "status"));
			const char *note = json_string_value(json_object_get(r, "note"));
			bool ok = st && !strcmp(st, "ok"), fault = st && !strcmp(st, "fault");
			bool refused = json_is_true(json_object_get(r, "too_large"));
			if (refused)
				strbuf_puts(why, note ? note : "the buffers are over the limit");
			else if (!ok)
				strbuf_printf(why, "%s%s%s", st ? st : "?", note ? ": " : "", note ? note : "");
			json_decref(r);
			if (ok) {
				ms->shape_req = req;
				return SHAPE_OK;
			}
			if (refused) {
				json_decref(req); /* the worker is fine, without a shape */
				return SHAPE_REFUSED;
			}
			if (!fault)
				break; /* the worker lives: what it said stands */
		}
		if (fresh || attempt > 0)
			break;
		/* Dead after running variants: it may have died of what one of
		 * them left, so once more in a fresh worker before the
		 * reference is blamed. */
		why->len = 0;
		why->data[0] = 0;
		if (start_worker(ms, why) != 0) {
			json_decref(req);
			return SHAPE_WORKER_LOST;
		}
		ms->restarts++;
	}
	json_decref(req);
	/* The worker may be in any state: a fresh one, without this shape. */
	strbuf w2;
	strbuf_init(&w2);
	aotc_status rc = start_worker(ms, &w2);
	if (rc != 0)
		strbuf_printf(why, "; the worker cannot be restarted: %s", w2.data);
	strbuf_finish(&w2);
	return rc == 0 ? SHAPE_REFERENCE_FAILED : SHAPE_WORKER_LOST;
}

static void note_time(double *acc, const json_t *reply, const char *key)
{
	const json_t *v = json_object_get(reply, key);
	if (json_is_number(v))
		*acc += json_number_value(v);
}

/* Turns a worker reply into a measurement. */
static void from_reply(const json_t *r, measurement *m)
{
	const char *st = json_string_value(json_object_get(r, "status"));
	const char *note = json_string_value(json_object_get(r, "note"));
	m->status = MS_FAULT;
	if (st && !strcmp(st, "ok"))
		m->status = MS_OK;
	else if (st && !strcmp(st, "wrong"))
		m->status = MS_WRONG;
	else if (st && !strcmp(st, "out_of_bounds"))
		m->status = MS_OUT_OF_BOUNDS;
	else if (st && !strcmp(st, "resources"))
		m->status = MS_RESOURCES;
	else if (st && !strcmp(st, "invalid"))
		m->status = MS_INVALID;
	else if (st && !strcmp(st, "returned_error"))
		m->status = MS_ERROR;
	m->note = note ? xstrdup(note) : (m->status == MS_FAULT && st && strcmp(st, "fault")
	                                          ? xstrdup(st) : NULL);
	const json_t *e = json_object_get(r, "error");
	m->error = json_is_number(e) ? json_number_value(e) : NAN;
	const json_t *js = json_object_get(r, "samples");
	m->nsamples = (int)json_array_size(js);
	m->samples = xmalloc((size_t)m->nsamples * sizeof *m->samples + 1);
	for (int i = 0; i < m->nsamples; i++)
		m->samples[i] = json_number_value(json_array_get(js, (size_t)i));
	m->screened = json_is_true(json_object_get(r, "screened"));
	if (m->status == MS_OK && m->nsamples == 0)
		m->status = MS_FAULT;
	m->time_ms = m->status == MS_OK ? median(m->samples, (size_t)m->nsamples) : NAN;
}

bool measurer_run(measurer *ms, const job *j, json_t *ldims, const kernel *fn,
                  const int64_t *values, double best, measurement *mm, strbuf *why)
{
	json_t *jv = json_array();
	for (int i = 0; fn && i < fn->ntunables; i++)
		json_array_append_new(jv, json_integer(values[i]));
	json_t *req = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "op", "measure", "blob", j->path,
	                        "symbol", j->symbol, "launch", ldims, "values", jv, "best_ms",
	                        isfinite(best) ? json_real(best) : json_null());
	if (!fn || fn->host_launcher)
		json_object_set_new(req, "extern", json_true());
	if (fn && fn->alt_of)
		json_object_set_new(req, "function", json_string(fn->name));
	double timeout = measure_timeout_ms();
	if (isfinite(best))
		timeout += best * ms->max_samples * 20;
	bool ok = true;
	for (;;) {
		bool fresh = ms->fresh;
		ms->fresh = false;
		ms->refused = false;
		json_t *r;
		call_result cr = worker_call(ms->w, req, timeout, &r, why);
		if (cr == CALL_OK) {
			from_reply(r, mm);
			ms->refused = json_is_true(json_object_get(r, "too_large"));
			note_time(&ms->check_ms, r, "check_ms");
			note_time(&ms->timing_ms, r, "timing_ms");
			ms->timed += mm->nsamples;
			ms->rotated += json_integer_value(json_object_get(r, "rotated"));
			json_decref(r);
		} else {
			mm->status = cr == CALL_TIMEOUT ? MS_TIMEOUT : MS_FAULT;
			mm->note = xstrdup(why->data);
		}
		if (mm->status != MS_FAULT && cr == CALL_OK)
			break;
		/* The context is gone: a new worker, the same shape. */
		strbuf w2;
		strbuf_init(&w2);
		ok = start_worker(ms, &w2) == 0;
		if (!ok) {
			why->len = 0;
			strbuf_printf(why, "%s", w2.data);
		}
		strbuf_finish(&w2);
		ms->restarts++;
		if (!ok || fresh)
			break; /* its own failure: it ran first in a fresh worker */
		/* Another variant of this worker may have left what ended it:
		 * run this one first in the fresh worker, and record that. */
		free(mm->note);
		free(mm->samples);
		*mm = (measurement){.config = mm->config, .shape = mm->shape, .error = NAN, .time_ms = NAN};
		why->len = 0;
		why->data[0] = 0;
		ms->reruns++;
	}
	json_decref(req);
	return ok;
}

json_t *measurer_warm(measurer *ms, double warm_ms)
{
	strbuf why;
	strbuf_init(&why);
	json_t *req = json_pack("{s:s, s:f}", "op", "warm", "ms", warm_ms), *r = NULL;
	if (!ms->w && start_worker(ms, &why) != 0) {
		json_decref(req);
		strbuf_finish(&why);
		return NULL;
	}
	if (worker_call(ms->w, req, measure_timeout_ms() + 3 * warm_ms, &r, &why) != CALL_OK ||
	    !json_is_string(json_object_get(r, "status")) ||
	    strcmp(json_string_value(json_object_get(r, "status")), "ok")) {
		json_decref(r);
		r = NULL;
		why.len = 0;
		if (start_worker(ms, &why) == 0)
			ms->restarts++;
	}
	json_decref(req);
	strbuf_finish(&why);
	return r;
}

bool measurer_alternate(measurer *ms, alt_variant *v, int n, int rounds, bool *lost, strbuf *why)
{
	*lost = false;
	json_t *vs = json_array();
	double timeout = measure_timeout_ms(), sum = 0;
	for (int i = 0; i < n; i++) {
		const kernel *fn = v[i].fn;
		json_t *jv = json_array();
		for (int t = 0; fn && t < fn->ntunables; t++)
			json_array_append_new(jv, json_integer(v[i].values[t]));
		json_t *o = json_pack("{s:s, s:s, s:o, s:o}", "blob", v[i].j->path, "symbol", v[i].j->symbol,
		                      "launch", v[i].ldims, "values", jv);
		v[i].ldims = NULL;
		if (!fn || fn->host_launcher)
			json_object_set_new(o, "extern", json_true());
		if (fn && fn->alt_of)
			json_object_set_new(o, "function", json_string(fn->name));
		json_array_append_new(vs, o);
		sum += v[i].mm->time_ms;
	}
	timeout += sum * (rounds + 2) * 20;
	json_t *req = json_pack("{s:s, s:o, s:i, s:f}", "op", "alternate", "variants", vs, "rounds", rounds,
	                        "budget_ms", ms->budget_ms * n), *r = NULL;
	ms->fresh = false;
	double t0 = monotonic_s();
	call_result cr = worker_call(ms->w, req, timeout, &r, why);
	ms->alt_ms += (monotonic_s() - t0) * 1e3;
	json_decref(req);
	const char *st = cr == CALL_OK ? json_string_value(json_object_get(r, "status")) : NULL;
	const json_t *res = json_object_get(r, "results");
	if (!st || strcmp(st, "ok") || (int)json_array_size(res) != n) {
		if (cr == CALL_OK) {
			const char *note = json_string_value(json_object_get(r, "note"));
			strbuf_printf(why, "%s%s%s", st ? st : "?", note ? ": " : "", note ? note : "");
		}
		json_decref(r);
		strbuf w2;
		strbuf_init(&w2);
		*lost = start_worker(ms, &w2) != 0;
		if (*lost)
			strbuf_printf(why, "; the worker cannot be restarted: %s", w2.data);
		strbuf_finish(&w2);
		ms->restarts++;
		return false;
	}
	int ran = (int)json_integer_value(json_object_get(r, "rounds"));
	ms->rotated += json_integer_value(json_object_get(r, "rotated"));
	for (int i = 0; i < n; i++) {
		measurement *mm = v[i].mm, got = {.config = mm->config, .shape = mm->shape};
		from_reply(json_array_get(res, (size_t)i), &got);
		ms->timed += got.nsamples;
		free(mm->samples);
		free(mm->note);
		if (got.status == MS_OK) {
			mm->samples = got.samples;
			mm->nsamples = got.nsamples;
			mm->time_ms = got.time_ms;
			mm->screened = false;
			mm->alternated = ran;
			mm->note = NULL;
			free(got.note);
		} else {
			double error = mm->error;
			*mm = got;
			if (isnan(mm->error))
				mm->error = error;
		}
	}
	json_decref(r);
	return true;
}
