/* The tuner's driver: the stages in order (enumerate, open the devices,
 * compiler and database, schedule, compile, measure), each a function of
 * its own below but the measure stage, which is crew.c's (a thread per
 * device; the run they share is tune_run.h); the stages' machinery is in
 * compile.c (the compile pool and cache), schedule.c (which cells, in
 * which order, when to stop) and measure.c (the worker process). */
#include "tune_run.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "arch.h"
#include "backend.h"
#include "compile.h"
#include "db.h"
#include "dbset.h"
#include "cost_features.h"
#include "measure.h"
#include "schedule.h"
#include "shapes.h"

/* ---- Configurations ---------------------------------------------------- */

static bool add_config(void *ctx, const int64_t *values)
{
	configs *c = ctx;
	int nt = c->nt, own = c->cur ? c->cur->ntunables : 0;
	if ((size_t)c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->values = xrealloc(c->values, c->cap * (size_t)(nt + 1) * sizeof *values);
		c->names = xrealloc(c->names, c->cap * sizeof *c->names);
		c->fn = xrealloc(c->fn, c->cap * sizeof *c->fn);
	}
	int64_t *row = c->values + (size_t)c->n * nt;
	memset(row, 0, (size_t)nt * sizeof *row);
	memcpy(row, values, (size_t)own * sizeof *values);
	c->fn[c->n] = c->cur;
	c->names[c->n++] = c->cur ? ir_variant_name(&c->a, c->cur, values) : NULL;
	return true;
}

/* Every configuration of the kernel and of its alternatives, in order. A
 * host launcher is a CUDA routine (it takes a cudaStream_t): for an AMD GPU
 * it is left out, with a note. */
static void enumerate_configs(configs *c, const arch_info *arch)
{
	const kernel *k = c->k;
	c->nt = k->ntunables;
	for (int a = 0; a < k->nalts; a++)
		c->nt = k->alts[a].ntunables > c->nt ? k->alts[a].ntunables : c->nt;
	for (int a = -1; a < k->nalts; a++) {
		c->cur = a < 0 ? k : &k->alts[a];
		if (c->cur->host_launcher && arch->kind != ARCH_CUDA) {
			fprintf(stderr, "aotc: note: %s: host launcher %s is a CUDA routine; not tuned for %s\n", k->id,
			        c->cur->name, arch->name);
			continue;
		}
		ir_enumerate(c->cur, add_config, c);
	}
	c->cur = NULL;
}

static void configs_finish(configs *c)
{
	free(c->values);
	free(c->names);
	free(c->fn);
	free(c->job);
	free(c->always);
	arena_finish(&c->a);
}

/* The extern configuration i is, or NULL for a variant. */
static const extern_fn *config_extern(const configs *c, int i)
{
	return i >= c->nvariants ? &c->k->externs[i - c->nvariants] : NULL;
}

/* After the enumeration: the externs as configurations. A __global__
 * kernel's externs are CUDA routines (they take a cudaStream_t and return a
 * cudaError_t), so for an AMD GPU they are left out, with a note. */
static void add_externs(configs *c, const arch_info *arch)
{
	const kernel *k = c->k;
	int64_t *zeros = xcalloc((size_t)k->ntunables + 1, sizeof *zeros);
	c->nvariants = c->n;
	bool cuda_only = k->is_global && arch->kind != ARCH_CUDA;
	for (int e = 0; e < k->nexterns && cuda_only; e++)
		fprintf(stderr, "aotc: note: %s: AOTC_EXTERN(%s) is a CUDA routine; not tuned for %s\n",
		        k->id, k->externs[e].name, arch->name);
	for (int e = 0; e < k->nexterns && !cuda_only; e++) {
		add_config(c, zeros);
		c->names[c->n - 1] = arena_strdup(&c->a, k->externs[e].name);
	}
	free(zeros);
	c->always = xcalloc((size_t)c->n + 1, sizeof *c->always);
	for (int i = 0; i < c->n; i++)
		c->always[i] = i >= c->nvariants || c->fn[i] != k;
}


/* What an extern's caller takes: the kernel's parameters, and for a
 * __global__ kernel the stream. */
static int extern_nparams(const kernel *k) { return ir_kernel_nparams(k) + (k->is_global ? 1 : 0); }

/* The reference's compile job, or -1 without one: a __global__ kernel's
 * host reference is host code the worker calls itself; any other is
 * compiled like a variant. */
static int add_reference(pool *p, const kernel *k)
{
	if (!k->reference)
		return -1;
	char *ref = ir_reference_instance(k);
	int j = k->ref_on_host ? pool_add_host_fn(p, ref, k->nparams) : pool_add(p, ref);
	free(ref);
	return j;
}

/* The C++ expression that names the instantiation: the variant name
 * without its launch-only tunables. */
static char *instance_of(const char *name)
{
	const char *br = strchr(name, '[');
	size_t n = br ? (size_t)(br - name) : strlen(name);
	char *s = xmalloc(n + 1);
	memcpy(s, name, n);
	s[n] = 0;
	return s;
}

/* A configuration's compile job: the instance of its function, or the
 * caller of its routine (an extern, a host launcher's instance). */
static int add_config_job(pool *p, const configs *c, int i, int nparams)
{
	if (config_extern(c, i))
		return pool_add_extern(p, config_extern(c, i), nparams);
	char *inst = instance_of(c->names[i]);
	int j = c->fn[i]->host_launcher ? pool_add_routine(p, inst, nparams) : pool_add(p, inst);
	free(inst);
	return j;
}

/* Before the pool starts: the reference compiled alone (ref_job), or
 * without one the file alone where the backend batches (pool_probe). 0,
 * or the exit status after one diagnostic: the file does not compile, and
 * nothing else is compiled (1; 3 for an environment error). */
static aotc_status compile_file_first(pool *p, const aotc_module *m, const kernel *k, int ref_job, diags *d)
{
	char *log = NULL;
	rt_status st = ref_job >= 0 ? pool_first(p, ref_job) : pool_probe(p, &log);
	if (st == RT_OK)
		return AOTC_OK;
	if (ref_job >= 0) {
		const job *j = &p->jobs[ref_job];
		diag_error(d, k->reference_loc, "the reference '%s' does not compile (no variant was compiled):\n%s",
		           k->reference, j->log ? j->log : rt_status_name(st));
	} else {
		diag_error(d, k->loc, "%s does not compile (no variant was compiled):\n%s", m->file,
		           log ? log : rt_status_name(st));
	}
	free(log);
	return st == RT_ERR_ENV ? AOTC_ENVIRONMENT : AOTC_DIAGNOSED;
}

/* The backend that tunes k for --arch: 0, or an exit status (diagnosed). */
static aotc_status backend_for_kernel(const kernel *k, const tune_options *o, const rt_ops **ops,
                              diags *d)
{
	*ops = rt_backend_for(o->arch->name);
	if (!*ops) {
		diag_plain_error(d, "this aotc cannot tune for --arch %s (built without that backend)", o->arch->name);
		return AOTC_ENVIRONMENT;
	}
	if (k->is_global != (o->arch->kind != ARCH_HOST)) {
		diag_error(d, k->loc, "'%s' is a %s kernel; it cannot be tuned for --arch %s", k->id,
		           k->is_global ? "__global__" : "host", o->arch->name);
		return AOTC_DIAGNOSED;
	}
	return AOTC_OK;
}

/* Every library an AOTC_EXTERN of m names, once, in order of appearance
 * (malloc'd; the names are m's). */
static const char **module_libs(const aotc_module *m, int *n)
{
	int cap = 0;
	for (int i = 0; i < m->nkernels; i++)
		for (int e = 0; e < m->kernels[i].nexterns; e++)
			cap += m->kernels[i].externs[e].nlibs;
	const char **libs = xcalloc((size_t)cap + 1, sizeof *libs);
	*n = 0;
	for (int i = 0; i < m->nkernels; i++)
		for (int e = 0; e < m->kernels[i].nexterns; e++)
			for (int l = 0; l < m->kernels[i].externs[e].nlibs; l++) {
				const char *lib = m->kernels[i].externs[e].libs[l];
				bool seen = false;
				for (int j = 0; j < *n && !seen; j++)
					seen = !strcmp(libs[j], lib);
				if (!seen)
					libs[(*n)++] = lib;
			}
	return libs;
}

/* m's file with its host code blanked out (ir_device_source), written
 * once into the compile cache under a name of its contents: the
 * request's device_source (malloc'd), or NULL when the file has no host
 * code or cannot be read as it was parsed. */
static char *device_source_file(const aotc_module *m, const char *path)
{
	size_t len;
	char *text = m->nhost_code ? read_file(path, &len) : NULL;
	char *dev = text ? ir_device_source(m, text, len) : NULL;
	char *file = NULL, *dir = dev ? cache_dir() : NULL;
	if (dir && mkdir_p(dir) == 0) {
		char h[33];
		hash_hex(dev, len, h);
		strbuf sb;
		strbuf_init(&sb);
		strbuf_printf(&sb, "%s/device-%s.cu", dir, h);
		struct stat st;
		if (stat(sb.data, &st) == 0 || write_file_atomic(sb.data, dev, len) == 0)
			file = sb.data;
		else
			strbuf_finish(&sb);
	}
	free(dir);
	free(dev);
	free(text);
	return file;
}

/* The compile request for m's file with the compiler the backend chooses
 * for it (saying why when that is worth saying), linking the libraries of
 * every AOTC_EXTERN of the file (the caller frees req->libs and
 * req->device_source). *abs gets the file's absolute path, which the
 * request borrows. False when no compiler can take the file (diagnosed). */
static bool choose_compiler(const rt_ops *ops, const aotc_module *m, const tune_options *o,
                            rt_compile_request *req, char **abs, diags *d)
{
	*abs = realpath(m->file, NULL);
	*req = (rt_compile_request){
		.source_path = *abs ? *abs : m->file, .arch = o->arch->name,
		.include_dirs = o->include_dirs, .ninclude_dirs = o->ninclude_dirs,
		.defines = o->defines, .ndefines = o->ndefines,
	};
	req->libs = module_libs(m, &req->nlibs);
	req->device_source = device_source_file(m, req->source_path);
	strbuf note, why;
	strbuf_init(&note);
	strbuf_init(&why);
	req->compiler = ops->compiler_for(req, &note, &why);
	if (note.len && !o->quiet)
		fprintf(stderr, "aotc: %s\n", note.data);
	if (!req->compiler)
		diag_plain_error(d, "%s", why.data);
	strbuf_finish(&note);
	strbuf_finish(&why);
	return req->compiler != NULL;
}

static void run_finish(tune_run *r)
{
	if (r->pool_started)
		pool_finish(&r->p);
	else
		free(r->p.cache_dir);
	for (int i = 0; i < r->nms; i++)
		measurer_finish(&r->ms[i]);
	free(r->ms);
	free(r->warmed);
	free(r->busy);
	free(r->shape_cost);
	schedule_finish(&r->sc);
	free(r->abs);
	free((void *)r->req.libs);
	free((void *)r->req.device_source);
	db_close(r->db);
	free(r->dbc);
	free(r->dbs);
	configs_finish(&r->cf);
	shape_set_finish(&r->ss);
	free(r->params);
	free(r->params_ok);
	free(r->alt_done);
	json_decref(r->warm);
	json_decref(r->clocks_end);
}

/* "deprioritised", the note's first word on a cell the model search left:
 * an exhaustive search measures such cells after all. */
static const char DEPRIORITISED[] = "deprioritised";

static bool left_by_search(const measurement *m)
{
	return m->status == MS_SKIPPED && m->note &&
	       !strncmp(m->note, DEPRIORITISED, sizeof DEPRIORITISED - 1);
}

/* ---- Stage 1: enumerate -------------------------------------------------- */

static aotc_status enumerate_stage(tune_run *r)
{
	const kernel *k = r->k;
	aotc_status status = backend_for_kernel(k, r->o, &r->ops, r->d);
	if (status)
		return status;
	if (!(r->o->shapes_file ? shapes_from_file(k, r->o->shapes_file, &r->ss, r->d)
	                        : shapes_from_ir(k, &r->ss, r->o->seed, r->d)))
		return AOTC_DIAGNOSED;
	enumerate_configs(&r->cf, r->o->arch);
	if (r->cf.n == 0) {
		diag_error(r->d, k->loc, "no configuration of '%s' satisfies its AOTC_REQUIREs", k->id);
		return AOTC_DIAGNOSED;
	}
	add_externs(&r->cf, r->o->arch);
	r->params = xcalloc((size_t)r->ss.count * (k->nparams + 1), sizeof *r->params);
	r->params_ok = xcalloc((size_t)r->ss.count + 1, sizeof *r->params_ok);
	for (int s = 0; s < r->ss.count; s++) {
		r->params_ok[s] = shape_param_values(k, &r->ss, shape_row(&r->ss, s),
		                                     r->params + (size_t)s * (k->nparams + 1)) == EVAL_OK;
		if (!r->params_ok[s]) {
			strbuf sb;
			strbuf_init(&sb);
			shape_format(&sb, k, &r->ss, s);
			fprintf(stderr, "aotc: warning: skipping shape %s: an AOTC_VALUE cannot be evaluated\n", sb.data);
			strbuf_finish(&sb);
		}
	}
	return AOTC_OK;
}

static void schedule_stage_init(tune_run *r, double sm_count)
{
	const kernel *k = r->k;
	cost_features_init(&r->feat, k, &r->ss, r->ss.nargs, k->ntunables, sm_count);
	schedule_params sp = {
		.kind = r->o->search, .nconfigs = r->cf.n, .nshapes = r->ss.count,
		.ntunables = r->cf.nt, .values = r->cf.values,
		.names = (const char *const *)r->cf.names, .always = r->cf.always,
		.shard = r->o->shard, .nshards = r->o->nshards, .budgeted = r->o->budget_s > 0,
		.seed = r->o->seed, .features = &r->feat, .rows = r->ss.values,
	};
	schedule_init(&r->sc, &sp);
	r->busy = xcalloc((size_t)r->cf.n * (size_t)r->ss.count + 1, 1);
}

/* --dump=configs: the shard's configurations in the order the search
 * takes them. */
static void dump_configs(const tune_run *r)
{
	const schedule *sc = &r->sc;
	for (int i = 0; i < sc->norder; i++) {
		int c = sc->order[i];
		json_t *v = json_array();
		for (int t = 0; !config_extern(&r->cf, c) && t < r->cf.fn[c]->ntunables; t++)
			json_array_append_new(v, json_integer(config_values(&r->cf, c)[t]));
		json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:o, s:b, s:[i,i]}", "stage", "configs",
		                      "kernel", r->k->id, "order", i, "name", r->cf.names[c],
		                      "values", v, "sample", i < sc->nsample, "shard", sc->p.shard,
		                      sc->p.nshards);
		if (config_extern(&r->cf, c))
			json_object_set_new(o, "extern", json_true());
		else if (r->cf.fn[c] != r->k)
			json_object_set_new(o, "function", json_string(r->cf.fn[c]->name));
		char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", line);
		free(line);
		json_decref(o);
	}
	fprintf(stderr, "aotc: %s: %d of %d configurations in shard %d/%d, %d in the first sample; search %s\n",
	        r->k->id, sc->norder, r->cf.n, sc->p.shard, sc->p.nshards, sc->nsample,
	        search_name(sc->kind));
}

/* ---- Stage 2: open the device, the compiler and the database ------------- */

/* A database of k for this architecture but another hardware id in --db:
 * emit would refuse to merge the two (tuner/dbset.h). Sharded, that is an
 * error before measuring; otherwise a warning. Returns false after the
 * error. */
static bool same_hardware_beside(tune_run *r)
{
	const tune_options *o = r->o;
	char **paths;
	int n = dbset_list(o->db_dir, r->k->id, &paths);
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		diags quiet;
		diags_init_buffered(&quiet);
		bool not_db;
		struct stat st;
		tune_db *db = stat(paths[i], &st) == 0 && S_ISREG(st.st_mode) ? db_load_any(paths[i], &not_db, &quiet) : NULL;
		diags_finish(&quiet);
		const char *arch = db ? json_string_value(json_object_get(db->hardware, "arch")) : NULL;
		const char *id = db ? json_string_value(json_object_get(db->hardware, "id")) : NULL;
		if (arch && id && strcmp(arch, o->arch->name) == 0 && strcmp(id, r->hwid) != 0) {
			if (o->nshards > 1) {
				diag_plain_error(r->d, "%s was measured on %s, this machine is %s: shards of one --db must come from one "
				                 "hardware id (emit refuses to merge them); give this tune another --db",
				                 paths[i], id, r->hwid);
				ok = false;
			} else if (!o->quiet) {
				fprintf(stderr, "aotc: warning: %s was measured on %s, this machine is %s: emit will refuse to merge "
				        "them; keep each hardware id's databases in a --db of its own\n", paths[i], id, r->hwid);
			}
		}
		db_close(db);
	}
	dbset_free_paths(paths);
	return ok;
}

/* A worker on device index (-1: the default one) in ms (its place in
 * r->ms, zeroed); 0, or 3 with why. */
static aotc_status start_device(tune_run *r, measurer *ms, int index, json_t *method, strbuf *why)
{
	return measurer_start(ms, r->m, r->k, r->o->arch, index, r->o->seed, json_incref(method), why);
}

static const char *device_name(const measurer *ms)
{
	return json_string_value(json_object_get(ms->device, "name"));
}

/* Whether the worker of ms runs on the model of ms0's (the hardware id:
 * the backend's name of the device and its runtime). */
static bool same_model(const measurer *ms0, const measurer *ms)
{
	return json_equal(json_object_get(ms0->device, "id"), json_object_get(ms->device, "id"));
}

/* Notes the first diagnostic of a device that cannot be tuned on. */
static void device_error(tune_run *r, bool *no_device, const measurer *ms, const char *why)
{
	diag_plain_error(r->d, "cannot tune for %s here: %s", r->o->arch->name, why);
	if (ms->no_device && r->d->out)
		fprintf(r->d->out, "aotc: tune on a machine with that GPU, or run 'aotc emit' with a database tuned there\n");
	if (no_device)
		*no_device = ms->no_device;
}

/* Adds a measurer to r->ms. */
static void add_device(tune_run *r, const measurer *ms)
{
	r->ms = xrealloc(r->ms, (size_t)(r->nms + 1) * sizeof *r->ms);
	r->ms[r->nms++] = *ms;
}

/* The devices listed with --devices I,J,...: each there, all of the first
 * one's model (a winner picked across two models' times is neither's).
 * 0, or 3 after a diagnostic. */
static aotc_status open_listed(tune_run *r, json_t *method, strbuf *why)
{
	const tune_options *o = r->o;
	for (int i = 1; i < o->ndevices; i++)
		if (o->arch->kind != ARCH_HOST && o->devices[i] >= r->ms[0].count) {
			diag_plain_error(r->d, "cannot tune for %s here: device %d, but there %s only %d device%s", o->arch->name,
			                 o->devices[i], r->ms[0].count == 1 ? "is" : "are", r->ms[0].count, r->ms[0].count == 1 ? "" : "s");
			return AOTC_ENVIRONMENT;
		}
	for (int i = 1; i < o->ndevices; i++) {
		measurer ms = {0};
		why->len = 0;
		why->data[0] = 0;
		aotc_status status = start_device(r, &ms, o->devices[i], method, why);
		if (status)
			diag_plain_error(r->d, "cannot tune for %s on device %d here: %s", o->arch->name, o->devices[i],
			                 why->data);
		else if (!same_model(&r->ms[0], &ms)) {
			diag_plain_error(r->d, "devices %d (%s) and %d (%s) are different models: one dispatch cannot pick across their times; list devices of one model with --devices",
			                 r->ms[0].index, device_name(&r->ms[0]), ms.index, device_name(&ms));
			status = AOTC_ENVIRONMENT;
		}
		if (status) {
			measurer_finish(&ms);
			return status;
		}
		if (o->arch->kind == ARCH_HOST)
			ms.index = o->devices[i]; /* a stand-in: the index names it */
		add_device(r, &ms);
	}
	return AOTC_OK;
}

/* With --devices N (want N; 0: every one) or none: the devices the backend
 * sees of the first one's model, in index order, the others left out with
 * a note; $AOTC_DEVICE alone asks for its one device. On the host, N
 * workers standing in for devices (default one). 0, or 3 after a
 * diagnostic (fewer than N devices of that model). */
static aotc_status open_model(tune_run *r, json_t *method, strbuf *why)
{
	const tune_options *o = r->o;
	bool host = o->arch->kind == ARCH_HOST;
	int want = o->ndevices;
	if (!want && (host || (getenv("AOTC_DEVICE") && getenv("AOTC_DEVICE")[0])))
		want = 1;
	for (int i = host ? 1 : 0; (!want || r->nms < want) && (host || i < r->ms[0].count); i++) {
		if (!host && i == r->ms[0].index)
			continue;
		measurer ms = {0};
		why->len = 0;
		why->data[0] = 0;
		if (start_device(r, &ms, i, method, why) != AOTC_OK || !same_model(&r->ms[0], &ms)) {
			if (host) { /* the machine that started the first: its error is the tune's */
				diag_plain_error(r->d, "cannot start a worker standing in for device %d: %s", i, why->data);
				measurer_finish(&ms);
				return AOTC_ENVIRONMENT;
			}
			if (!o->quiet && ms.device)
				fprintf(stderr, "aotc: note: device %d (%s) left out: not the model of device %d (%s)\n", i,
				        device_name(&ms), r->ms[0].index, device_name(&r->ms[0]));
			else if (!o->quiet)
				fprintf(stderr, "aotc: note: device %d left out: %s\n", i, why->data);
			measurer_finish(&ms);
			continue;
		}
		if (host)
			ms.index = i; /* a stand-in: the index names it */
		add_device(r, &ms);
	}
	if (want && r->nms < want) {
		strbuf list;
		strbuf_init(&list);
		for (int i = 0; i < r->nms; i++)
			strbuf_printf(&list, "%s%d", i ? ", " : "", r->ms[i].index);
		diag_plain_error(r->d, "cannot tune for %s on %d devices here: %s %d of the model of device %d (%s): device%s %s",
		                 o->arch->name, want, r->nms == 1 ? "there is" : "there are only", r->nms,
		                 r->ms[0].index, device_name(&r->ms[0]), r->nms == 1 ? "" : "s", list.data);
		strbuf_finish(&list);
		return AOTC_ENVIRONMENT;
	}
	return AOTC_OK;
}

/* The devices measured on, a worker each (docs/cli.md, --devices): the
 * first (the listed one, else $AOTC_DEVICE's or the backend's default),
 * then open_listed's or open_model's. 0, or 3 after a diagnostic. */
static aotc_status open_devices(tune_run *r, json_t *method, bool *no_device)
{
	const tune_options *o = r->o;
	strbuf why;
	strbuf_init(&why);
	measurer first = {0};
	aotc_status status = start_device(r, &first, o->devices ? o->devices[0] : -1, method, &why);
	add_device(r, &first);
	if (status)
		device_error(r, no_device, &r->ms[0], why.data);
	else
		status = o->devices ? open_listed(r, method, &why) : open_model(r, method, &why);
	if (!status && o->devices && o->arch->kind == ARCH_HOST)
		r->ms[0].index = o->devices[0];
	if (!status) {
		r->device = r->ms[0].device;
		r->warmed = xcalloc((size_t)r->nms, sizeof *r->warmed);
	}
	strbuf_finish(&why);
	return status;
}

static aotc_status open_stage(tune_run *r, bool *no_device)
{
	const kernel *k = r->k;
	const tune_options *o = r->o;
	strbuf why;
	strbuf_init(&why);
	json_t *method = method_json(o->arch, &o->sampling, o->alt_rounds);
	aotc_status status = open_devices(r, method, no_device);
	if (status)
		goto out;
	if (!choose_compiler(r->ops, r->m, o, &r->req, &r->abs, r->d)) {
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	r->hwid = json_string_value(json_object_get(r->device, "id"));
	if (!same_hardware_beside(r)) {
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	char *path = dbset_db_path(o->db_dir, k->id, r->hwid, o->shard, o->nshards);
	const char **tnames = xcalloc((size_t)k->ntunables + 1, sizeof *tnames);
	for (int i = 0; i < k->ntunables; i++)
		tnames[i] = k->tunables[i].name;
	const char **anames = xcalloc((size_t)r->ss.nargs + 1, sizeof *anames);
	for (int i = 0; i < r->ss.nargs; i++)
		anames[i] = k->params[r->ss.params[i]].name;
	int invalidated = 0;
	char *superseded = dbset_superseded_path(path);
	r->key = dbset_key(k);
	r->key.compiler = r->req.compiler;
	r->key.superseded_path = superseded;
	r->db = db_open(path, k->id, r->m->file, r->m->source_hash, tnames, k->ntunables, anames,
	                r->ss.nargs, r->device, method, &r->key, &invalidated, r->d);
	r->key.superseded_path = NULL;
	free(tnames);
	free(anames);
	if (!r->db) {
		free(superseded);
		free(path);
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	tune_db *db = r->db;
	if (db->stale_temps && !o->quiet)
		fprintf(stderr, "aotc: removed %d temporary file%s left beside %s by a killed write\n",
		        db->stale_temps, db->stale_temps == 1 ? "" : "s", path);
	if (invalidated && !o->quiet)
		fprintf(stderr, "aotc: %s changed since %s was tuned: dropped %d old measurements\n",
		        r->m->file, path, invalidated);
	if (db->journal_ignored && !o->quiet)
		fprintf(stderr, "aotc: %s: ignored %d journal line%s measured from another version of %s (not reused)\n",
		        db->journal_path, db->journal_ignored, db->journal_ignored == 1 ? "" : "s", r->m->file);
	free(path);
	r->dbc = xcalloc((size_t)r->cf.n, sizeof *r->dbc);
	r->dbs = xcalloc((size_t)r->ss.count, sizeof *r->dbs);
	for (int c = 0; c < r->cf.n; c++)
		r->dbc[c] = config_extern(&r->cf, c) ? db_extern(db, r->cf.names[c])
		            : r->cf.fn[c] != k ? db_alt_config(db, r->cf.names[c], r->cf.fn[c]->name, config_values(&r->cf, c),
		                                               r->cf.fn[c]->ntunables)
		                               : db_config(db, r->cf.names[c], config_values(&r->cf, c));
	for (int i = 0; i < r->ss.count; i++) {
		r->dbs[i] = db_shape(db, shape_row(&r->ss, i));
		/* A record file's counts replace older ones: the file accumulates. */
		if (r->ss.calls && r->ss.calls[i])
			db->shape_calls[r->dbs[i]] = r->ss.calls[i];
	}
	/* Measurements of other code set aside, those of this code brought back. */
	if (db_settle(db, &r->key) < 0) {
		diag_plain_error(r->d, "cannot write %s or %s: %s", db->path, superseded, strerror(errno));
		free(superseded);
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	if ((db->moved || db->restored) && !o->quiet) {
		fprintf(stderr, "aotc: %s: ", db->path);
		if (db->moved)
			fprintf(stderr, "set aside %d measurement%s of other code or another compiler in %s%s", db->moved,
			        db->moved == 1 ? "" : "s", superseded, db->restored ? "; " : "\n");
		if (db->restored)
			fprintf(stderr, "brought back %d measurement%s of this code from %s\n", db->restored,
			        db->restored == 1 ? "" : "s", superseded);
	}
	free(superseded);
out:
	json_decref(method);
	strbuf_finish(&why);
	return status;
}

/* ---- Stage 3: schedule: what is known before measuring ------------------- */

aotc_status tune_record(tune_run *r, measurement *mm)
{
	if (db_record(r->db, mm) < 0) {
		diag_plain_error(r->d, "cannot write %s: %s", r->db->journal_path, strerror(errno));
		return AOTC_ENVIRONMENT;
	}
	if (r->db->unsaved >= 1000 && db_save(r->db) < 0) {
		diag_plain_error(r->d, "cannot write %s: %s", r->db->path, strerror(errno));
		return AOTC_ENVIRONMENT;
	}
	return AOTC_OK;
}

/* Records status st with note for cell (c, s) and tells the schedule. */
aotc_status tune_record_status(tune_run *r, int c, int s, meas_status st, const char *note)
{
	measurement mm = {.config = r->dbc[c], .shape = r->dbs[s], .status = st, .error = NAN,
	                  .time_ms = NAN, .note = (char *)note};
	schedule_mark(&r->sc, c, s, st, NAN);
	return tune_record(r, &mm);
}

/* The launch of configuration c at shape s, or why it has none: MS_OK with
 * *dims, MS_INVALID (an AOTC_VALID_IF, a launch expression) or MS_SKIPPED
 * (beyond the device's limits), decided without running anything. */
meas_status tune_static_status(const tune_run *r, int c, int s, json_t **dims, strbuf *why)
{
	const kernel *k = r->cf.fn[c];
	/* A routine handles any shape and launches its own work. */
	json_t *none = json_pack("{s:[i,i,i], s:[i,i,i], s:i}", "grid", 1, 1, 1, "block", 1, 1, 1, "smem", 0);
	if (!k) {
		*dims = none;
		return MS_OK;
	}
	const int64_t *values = config_values(&r->cf, c);
	eval_status vst;
	int bad = ir_first_invalid(k, values, shape_params(r, s), &vst);
	*dims = NULL;
	if (bad >= 0) {
		json_decref(none);
		strbuf_printf(why, "AOTC_VALID_IF(%s) %s", k->valid_ifs[bad].text,
		              vst != EVAL_OK ? eval_status_name(vst) : "is false");
		return MS_INVALID;
	}
	if (k->host_launcher) {
		*dims = none;
		return MS_OK;
	}
	json_decref(none);
	return launch_dims(k, &k->grid, &k->block, &k->smem, values, shape_params(r, s), r->device,
	                   dims, why);
}

/* Whether configuration c launches the same block and shared memory at
 * shapes s and t (resources do not depend on the shape otherwise). */
static bool same_resources(const tune_run *r, int c, int s, int t)
{
	strbuf why;
	strbuf_init(&why);
	json_t *a, *b;
	tune_static_status(r, c, s, &a, &why);
	tune_static_status(r, c, t, &b, &why);
	bool same = a && b && json_equal(json_object_get(a, "block"), json_object_get(b, "block")) &&
	            json_equal(json_object_get(a, "smem"), json_object_get(b, "smem"));
	json_decref(a);
	json_decref(b);
	strbuf_finish(&why);
	return same;
}

/* What one cell of configuration c tells about its others (docs/spec.md §3, issue
 * 11): a compile error holds for every shape; resources for every shape
 * with the same block and shared memory; a configuration the model search
 * deprioritises is skipped on its remaining shapes. Records those cells. */
aotc_status tune_learn_from(tune_run *r, int c, int s)
{
	const measurement *m = cell_meas(r, c, s);
	if (!m)
		return AOTC_OK;
	strbuf note, label;
	strbuf_init(&note);
	strbuf_init(&label);
	shape_format(&label, r->k, &r->ss, s);
	meas_status st = m->status;
	bool deprioritised = schedule_deprioritised(&r->sc, c);
	aotc_status status = AOTC_OK;
	if (st == MS_COMPILE_ERROR)
		strbuf_printf(&note, "does not compile (the log is with shape %s)", label.data);
	else if (st == MS_RESOURCES)
		strbuf_printf(&note, "cannot launch, as at shape %s: %.300s", label.data, m->note ? m->note : "");
	else if (deprioritised)
		strbuf_printf(&note, "%s: failed on %d shapes (last %s, %s); --search exhaustive measures it",
		              DEPRIORITISED, r->sc.fails[c], label.data, meas_status_name(st));
	else
		goto out;
	for (int t = 0; t < r->ss.count && !status; t++) {
		int cell = schedule_cell(&r->sc, c, t);
		if (r->sc.state[cell] != CELL_PENDING || r->busy[cell] || !r->params_ok[t])
			continue; /* a busy cell: another device is measuring it */
		if (st == MS_RESOURCES && !same_resources(r, c, s, t))
			continue;
		meas_status put = st == MS_COMPILE_ERROR || st == MS_RESOURCES ? st : MS_SKIPPED;
		status = tune_record_status(r, c, t, put, note.data);
		r->learned++;
	}
out:
	strbuf_finish(&note);
	strbuf_finish(&label);
	return status;
}

/* Marks in the schedule what the database holds, records every cell whose
 * status is known without running it (invalid, beyond the device's
 * limits) and what failures learnt once imply. */
static aotc_status schedule_stage(tune_run *r)
{
	json_t *dev = json_object_get(r->device, "sm_count");
	schedule_stage_init(r, json_is_integer(dev) ? (double)json_integer_value(dev) : 1);
	schedule *sc = &r->sc;
	bool exhaustive = sc->kind == SEARCH_EXHAUSTIVE;
	for (int s = 0; s < r->ss.count; s++)
		for (int c = 0; c < r->cf.n; c++) {
			const measurement *m = cell_meas(r, c, s);
			if (!m || sc->state[schedule_cell(sc, c, s)] == CELL_OTHER)
				continue;
			if (exhaustive && left_by_search(m))
				continue; /* measured after all */
			schedule_mark(sc, c, s, m->status, m->time_ms);
			r->reused++;
		}
	/* A finished model search of this database: its shapes are done. */
	const json_t *prev = r->db->search;
	if (sc->kind == SEARCH_MODEL && json_is_true(json_object_get(prev, "finished")) &&
	    json_is_string(json_object_get(prev, "strategy")) &&
	    !strcmp(json_string_value(json_object_get(prev, "strategy")), "model"))
		for (int s = 0; s < r->ss.count; s++) {
			bool sampled = true;
			for (int i = 0; i < sc->nsample && sampled; i++)
				sampled = sc->state[schedule_cell(sc, sc->order[i], s)] != CELL_PENDING;
			if (sampled)
				schedule_close_shape(sc, s);
		}
	strbuf why;
	strbuf_init(&why);
	aotc_status status = AOTC_OK;
	for (int s = 0; s < r->ss.count && !status; s++) {
		if (!r->params_ok[s]) {
			schedule_close_shape(sc, s);
			continue;
		}
		for (int c = 0; c < r->cf.n && !status; c++) {
			if (sc->state[schedule_cell(sc, c, s)] != CELL_PENDING)
				continue;
			why.len = 0;
			why.data[0] = 0;
			json_t *dims;
			meas_status st = tune_static_status(r, c, s, &dims, &why);
			json_decref(dims);
			if (st != MS_OK)
				status = tune_record_status(r, c, s, st, why.data);
		}
	}
	for (int s = 0; s < r->ss.count && !status; s++)
		for (int c = 0; c < r->cf.n && !status; c++)
			status = tune_learn_from(r, c, s);
	strbuf_finish(&why);
	return status;
}

/* ---- Close contenders ------------------------------------------------------ */

/* The noise two measurements must beat to tell them apart: the larger
 * spread of the two, at least ALT_MIN_NOISE. */
static double noise_of(const measurement *a, const measurement *b)
{
	double na = meas_spread(a), nb = meas_spread(b), n = na > nb ? na : nb;
	return n > ALT_MIN_NOISE ? n : ALT_MIN_NOISE;
}

/* Shape s's close contenders (docs/database.md): its best ok cell of this
 * shard and every ok one within their noise of it, fastest first, at most
 * ALT_GROUP, into group (configurations): how many. *fresh: whether one of
 * them has not been alternated yet. */
int tune_contenders(const tune_run *r, int s, int *group, bool *fresh)
{
	const schedule *sc = &r->sc;
	int n = 0, best = -1;
	for (int c = 0; c < r->cf.n; c++) {
		const measurement *m = cell_meas(r, c, s);
		if (sc->state[schedule_cell(sc, c, s)] != CELL_OTHER && m && m->status == MS_OK &&
		    (best < 0 || m->time_ms < cell_meas(r, best, s)->time_ms))
			best = c;
	}
	*fresh = false;
	if (best < 0)
		return 0;
	const measurement *b = cell_meas(r, best, s);
	for (int c = 0; c < r->cf.n; c++) {
		const measurement *m = cell_meas(r, c, s);
		if (sc->state[schedule_cell(sc, c, s)] == CELL_OTHER || !m || m->status != MS_OK ||
		    m->time_ms > b->time_ms * (1 + noise_of(b, m)))
			continue;
		/* Kept sorted by time; the slowest beyond ALT_GROUP drops out. */
		int at = n;
		while (at > 0 && cell_meas(r, group[at - 1], s)->time_ms > m->time_ms)
			at--;
		if (at >= ALT_GROUP)
			continue;
		int last = n < ALT_GROUP ? n++ : ALT_GROUP - 1;
		for (int i = last; i > at; i--)
			group[i] = group[i - 1];
		group[at] = c;
	}
	for (int i = 0; i < n && n > 1; i++)
		*fresh |= cell_meas(r, group[i], s)->alternated == 0;
	return n;
}

/* Whether any cell of shape s was alternated: a shape alternated in an
 * earlier run, which a rerun does not time again (its contenders as they
 * stand now may differ from those it had: noise moves them). */
bool tune_shape_alternated(const tune_run *r, int s)
{
	for (int c = 0; c < r->cf.n; c++) {
		const measurement *m = cell_meas(r, c, s);
		if (m && m->alternated)
			return true;
	}
	return false;
}

/* ---- Stage 4: compile ------------------------------------------------------ */

/* Compile jobs for what still has cells to measure: the reference first,
 * then configurations in the search's order. */
static aotc_status compile_stage(tune_run *r)
{
	const kernel *k = r->k;
	const schedule *sc = &r->sc;
	schedule_counts n = schedule_count(sc);
	r->p.ops = r->ops;
	r->p.compiler_id = r->req.compiler;
	r->p.source_hash = r->m->source_hash;
	r->p.cache_dir = cache_dir();
	if (mkdir_p(r->p.cache_dir) < 0) {
		diag_plain_error(r->d, "cannot create the compile cache %s: %s", r->p.cache_dir, strerror(errno));
		return AOTC_ENVIRONMENT;
	}
	r->p.req = r->req;
	/* Shapes measured before whose close contenders were not alternated
	 * (a tune killed in between): their contenders are compiled too. */
	bool *again = xcalloc((size_t)r->cf.n + 1, sizeof *again), realternate = false;
	for (int s = 0; s < r->ss.count && r->o->alt_rounds > 0; s++) {
		int group[ALT_GROUP];
		bool fresh;
		int g = r->params_ok[s] && !tune_shape_alternated(r, s) ? tune_contenders(r, s, group, &fresh) : AOTC_OK;
		for (int i = 0; i < g && fresh; i++)
			again[group[i]] = realternate = true;
	}
	r->ref_job = n.pending || realternate ? add_reference(&r->p, k) : -1;
	r->cf.job = xcalloc((size_t)r->cf.n, sizeof *r->cf.job);
	for (int c = 0; c < r->cf.n; c++)
		r->cf.job[c] = -1;
	for (int i = 0; i < sc->norder; i++) {
		int c = sc->order[i];
		bool open = false;
		for (int s = 0; s < r->ss.count && !open; s++)
			open = sc->state[schedule_cell(sc, c, s)] == CELL_PENDING;
		if (!open && !again[c])
			continue;
		r->cf.job[c] = add_config_job(&r->p, &r->cf, c, extern_nparams(k));
	}
	free(again);
	r->pool_started = true; /* run_finish frees it, started or not */
	/* The reference first, alone: if the file does not compile, nothing
	 * else is compiled. */
	aotc_status status = r->p.njobs > 0 ? compile_file_first(&r->p, r->m, k, r->ref_job, r->d) : AOTC_OK;
	if (status)
		return status;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	/* The model search measures a small part of a large space: it
	 * compiles what each round asks for, a round ahead of measuring. */
	pool_start(&r->p, r->o->jobs > 0 ? r->o->jobs : (int)(cores > 0 ? cores : 1),
	           sc->kind == SEARCH_MODEL && r->o->dump != TUNE_DUMP_COMPILE);
	if (r->p.njobs == 0)
		for (int i = 0; i < r->nms; i++)
			measurer_stop(&r->ms[i]); /* nothing left to measure */
	if (!r->o->quiet) {
		fprintf(stderr, "aotc: tuning %s on %s: %d configurations", k->id, r->hwid, r->cf.n);
		if (sc->p.nshards > 1)
			fprintf(stderr, " (%d in shard %d/%d)", sc->norder, sc->p.shard, sc->p.nshards);
		fprintf(stderr, " x %d shapes, search %s; %d to compile; %s%d measurements to take, %d reused from %s",
		        r->ss.count, search_name(sc->kind), r->p.njobs, sc->kind == SEARCH_MODEL ? "at most " : "",
		        n.pending, r->reused, r->db->path);
		if (n.done > r->reused)
			fprintf(stderr, ", %d known without running", n.done - r->reused);
		fputc('\n', stderr);
	}
	if (!k->reference && !r->o->quiet)
		fprintf(stderr, "aotc: warning: '%s' has no AOTC_REFERENCE: the first variant that runs on a shape is taken as correct\n",
		        k->id);
	return AOTC_OK;
}

/* --dump=compile: every configuration's compile, as it finishes. */
static void dump_compile(tune_run *r)
{
	for (int i = 0; i < r->sc.norder; i++) {
		int c = r->sc.order[i];
		if (r->cf.job[c] < 0)
			continue;
		const job *j = pool_wait(&r->p, r->cf.job[c]);
		json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:f}", "stage", "compile", "name", r->cf.names[c],
		                      "status", j->rs == RT_OK ? "ok" : rt_status_name(j->rs), "cached",
		                      j->cached, "seconds", j->seconds);
		char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", line);
		free(line);
		json_decref(o);
	}
}

/* ---- Summary ------------------------------------------------------------- */

/* The fastest correct measurement of shape s among the cells this shard
 * took, or -1. */
static int best_cell(const tune_run *r, int s)
{
	int best = -1;
	for (int c = 0; c < r->cf.n; c++) {
		if (r->sc.state[schedule_cell(&r->sc, c, s)] == CELL_OTHER)
			continue;
		const measurement *m = cell_meas(r, c, s);
		if (m && m->status == MS_OK && (best < 0 || m->time_ms < cell_meas(r, best, s)->time_ms))
			best = c;
	}
	return best;
}

/* Configuration c's throughput at shape s (AOTC_METRIC's count per second),
 * NAN where it has none. */
static double cell_throughput(const tune_run *r, int c, int s)
{
	double count;
	const measurement *m = cell_meas(r, c, s);
	if (!m || m->status != MS_OK || !(m->time_ms > 0) || !r->params_ok[s] ||
	    !ir_metric_count(r->k, r->cf.fn[c], config_values(&r->cf, c), shape_params(r, s), &count))
		return NAN;
	return count / (m->time_ms * 1e-3);
}

static void print_summary(const tune_run *r, FILE *out)
{
	const kernel *k = r->k;
	const schedule *sc = &r->sc;
	/* AOTC_METRIC: the best's throughput, in one scale for the table */
	double *tp = xcalloc((size_t)r->ss.count + 1, sizeof *tp), max = 0, scale = 1;
	for (int s = 0; s < r->ss.count; s++) {
		int best = best_cell(r, s);
		tp[s] = best >= 0 ? cell_throughput(r, best, s) : NAN;
		if (tp[s] > max)
			max = tp[s];
	}
	const char *unit = k->metric != METRIC_NONE ? ir_throughput_scale(k->metric, max, &scale) : NULL;
	fprintf(out, "\nAUTOTUNE %s: %d configurations x %d shapes, search %s", k->id, r->cf.n, r->ss.count,
	       search_name(sc->kind));
	if (sc->p.nshards > 1)
		fprintf(out, ", shard %d/%d (%d configurations)", sc->p.shard, sc->p.nshards, sc->norder);
	fputc('\n', out);
	for (int s = 0; s < r->ss.count; s++) {
		int best = -1, second = -1, ran = 0, unmeasured = 0;
		int count[MS_COUNT] = {0};
		for (int c = 0; c < r->cf.n; c++) {
			if (sc->state[schedule_cell(sc, c, s)] == CELL_OTHER)
				continue;
			const measurement *m = cell_meas(r, c, s);
			if (!m) {
				unmeasured++;
				continue;
			}
			count[m->status]++;
			ran += m->status != MS_INVALID && m->status != MS_SKIPPED;
			if (m->status != MS_OK)
				continue;
			if (best < 0 || m->time_ms < cell_meas(r, best, s)->time_ms) {
				second = best;
				best = c;
			} else if (second < 0 || m->time_ms < cell_meas(r, second, s)->time_ms) {
				second = c;
			}
		}
		strbuf sb;
		strbuf_init(&sb);
		shape_format(&sb, k, &r->ss, s);
		fprintf(out, "  %-28s", sb.data);
		strbuf_finish(&sb);
		if (best >= 0) {
			double tb = cell_meas(r, best, s)->time_ms;
			fprintf(out, " best %s %.4f ms", r->cf.names[best], tb);
			if (unit && isfinite(tp[s]))
				fprintf(out, " (%.4g %s)", tp[s] / scale, unit);
			else if (unit)
				fprintf(out, " (- %s)", unit);
			if (second >= 0) {
				double t2 = cell_meas(r, second, s)->time_ms;
				fprintf(out, ", next %s %.4f ms (%.2fx)", r->cf.names[second], t2, t2 / tb);
			}
		} else {
			fprintf(out, ran ? " no variant ran correctly" : " not measured");
		}
		bool first = true;
		for (int st = MS_WRONG; st < MS_COUNT; st++)
			if (count[st] && st != MS_INVALID && st != MS_SKIPPED) {
				fprintf(out, "%s%d %s", first ? "; failed: " : ", ", count[st], meas_status_name(st));
				first = false;
			}
		if (count[MS_INVALID])
			fprintf(out, "; %d excluded by AOTC_VALID_IF", count[MS_INVALID]);
		if (count[MS_SKIPPED])
			fprintf(out, "; %d skipped", count[MS_SKIPPED]);
		if (unmeasured && best >= 0)
			fprintf(out, "; %d not measured", unmeasured);
		fputc('\n', out);
	}
	free(tp);
}

/* The machine's timing noise over the shapes with a winner: the median
 * and the largest spread of their winners, and on how many of them the
 * runner-up is still within the noise of the winner (after alternation:
 * which of the two wins there is chance). */
typedef struct noise_figures {
	int shapes, unresolved, alternated;
	double median, worst;
} noise_figures;

static noise_figures noise_of_tune(const tune_run *r)
{
	noise_figures f = {0};
	double *spread = xmalloc((size_t)r->ss.count * sizeof *spread + 1);
	for (int s = 0; s < r->ss.count; s++) {
		int group[ALT_GROUP];
		bool fresh;
		int g = tune_contenders(r, s, group, &fresh);
		if (g == 0)
			continue;
		const measurement *w = cell_meas(r, group[0], s);
		spread[f.shapes++] = meas_spread(w);
		f.alternated += w->alternated > 0;
		if (g > 1) {
			const measurement *u = cell_meas(r, group[1], s);
			double nw = meas_spread(w), nu = meas_spread(u);
			f.unresolved += u->time_ms <= w->time_ms * (1 + (nw > nu ? nw : nu));
		}
		f.worst = spread[f.shapes - 1] > f.worst ? spread[f.shapes - 1] : f.worst;
	}
	f.median = f.shapes ? median(spread, (size_t)f.shapes) : 0;
	free(spread);
	return f;
}

/* The warm-up and the clocks at the start and end, in the database's
 * timing method; one warning on a GPU whose clock moved during the tune. */
static void note_clocks(tune_run *r)
{
	if (!r->warm)
		return;
	json_t *warm = json_deep_copy(r->warm), *end = json_object_get(r->clocks_end, "clocks");
	json_t *start = json_incref(json_object_get(warm, "clocks"));
	json_object_del(warm, "status");
	json_object_del(warm, "pid");
	json_object_del(warm, "id");
	json_object_del(warm, "clocks");
	json_object_set_new(r->db->method, "warmed", warm);
	if (json_is_object(start) || json_is_object(end))
		json_object_set_new(r->db->method, "clocks", json_pack("{s:o, s:O}", "start", start ? start : json_null(),
		                                                     "end", end ? end : json_null()));
	else
		json_decref(start);
	double a = (double)json_integer_value(json_object_get(start, "sm_mhz"));
	double b = (double)json_integer_value(json_object_get(end, "sm_mhz"));
	bool locked_warned = json_is_false(json_object_get(start, "locked"));
	if (!r->o->quiet && !locked_warned && r->o->arch->kind != ARCH_HOST && a > 0 && b > 0 &&
	    fabs(a - b) > 0.05 * a)
		fprintf(stderr, "aotc: warning: the GPU's SM clock moved from %.0f MHz to %.0f MHz during the tune: times taken at different clocks are compared\n",
		        a, b);
}

/* The spread of the shapes' winners beyond which the tune warns: what a
 * dispatch choosing between variants a few percent apart cannot resolve
 * (docs/database.md, "Noise"). */
static const double NOISE_WARN = 0.05;

/* The search's record in the database (docs/database.md). */
static void note_search(tune_run *r, bool finished)
{
	json_decref(r->db->search);
	json_t *devices = json_array();
	for (int i = 0; i < r->nms; i++)
		json_array_append_new(devices, json_integer(r->ms[i].index));
	r->db->search = json_pack("{s:s, s:b, s:[i,i], s:o}", "strategy", search_name(r->sc.kind),
	                          "finished", finished, "shard", r->sc.p.shard, r->sc.p.nshards, "devices", devices);
}

aotc_status tune_kernel(const aotc_module *m, const kernel *k, const tune_options *o, bool *no_device,
                diags *d)
{
	tune_run r = {.m = m, .k = k, .o = o, .d = d, .cf = {.k = k}, .ref_job = -1};
	arena_init(&r.cf.a);
	shape_set_init(&r.ss, k);
	if (no_device)
		*no_device = false;
	aotc_status status = enumerate_stage(&r);
	if (!status && o->dump == TUNE_DUMP_CONFIGS) {
		schedule_stage_init(&r, 1);
		dump_configs(&r);
		run_finish(&r);
		return AOTC_OK;
	}
	if (!status)
		status = open_stage(&r, no_device);
	if (!status)
		status = schedule_stage(&r);
	if (!status)
		status = compile_stage(&r);
	if (!status && o->dump == TUNE_DUMP_COMPILE) {
		dump_compile(&r);
		run_finish(&r);
		return AOTC_OK;
	}
	if (!status)
		status = tune_measure_stage(&r);
	if (status) {
		if (r.db)
			db_save(r.db); /* keep what was measured; the journal has it anyway */
		run_finish(&r);
		return status;
	}
	tune_show_progress(&r, true);
	double wall = monotonic_s() - r.t0;
	schedule_counts n = schedule_count(&r.sc);
	note_search(&r, !r.out_of_budget);
	note_clocks(&r);
	if (db_save(r.db) < 0) {
		diag_plain_error(d, "cannot write %s: %s", r.db->path, strerror(errno));
		run_finish(&r);
		return AOTC_ENVIRONMENT;
	}
	if (!o->quiet) {
		/* The summary on stdout, unless stdout is a dump's or the
		 * caller's. */
		FILE *out = o->dump == TUNE_DUMP_NONE && !o->stdout_taken ? stdout : stderr;
		print_summary(&r, out);
		int cached = 0;
		for (int i = 0; i < r.p.njobs; i++)
			cached += r.p.jobs[i].state == JOB_DONE && r.p.jobs[i].cached;
		double cwall = r.p.njobs ? r.p.finished_at - r.p.started_at : AOTC_OK;
		int built = pool_done(&r.p) - cached;
		measurer all = {0}; /* the devices' figures added */
		for (int i = 0; i < r.nms; i++) {
			all.check_ms += r.ms[i].check_ms;
			all.timing_ms += r.ms[i].timing_ms;
			all.shape_ms += r.ms[i].shape_ms;
			all.alt_ms += r.ms[i].alt_ms;
			all.timed += r.ms[i].timed;
			all.rotated += r.ms[i].rotated;
			all.restarts += r.ms[i].restarts;
		}
		fprintf(out, "\n%d measurements taken, %d reused, %d learnt from failures elsewhere, in %.1f s", r.measured,
		        r.reused, r.learned, wall);
		if (r.nms > 1)
			fprintf(out, " on %d devices", r.nms);
		fprintf(out, " (%schecking %.1f s, timing %.1f s", r.nms > 1 ? "their " : "", all.check_ms / 1e3,
		        all.timing_ms / 1e3);
		if (all.rotated > 0)
			fprintf(out, " with %.0f%% of the timed launches on rotated copies",
			        all.timed ? 100.0 * (double)all.rotated / (double)all.timed : 0.0);
		fprintf(out, ", shape setup %.1f s", all.shape_ms / 1e3);
		if (r.alternations)
			fprintf(out, ", alternation %.1f s", all.alt_ms / 1e3);
		fputs("); ", out);
		if (built > 0)
			fprintf(out, "%d compiled (%d from cache) in %.1f s on %d thread%s (%.1f variants/s, %.1f s of compile time); ",
			        pool_done(&r.p), cached, cwall, r.p.nthreads, r.p.nthreads == 1 ? "" : "s",
			        cwall > 0 ? built / cwall : 0, r.p.busy_s);
		else if (cached > 0)
			fprintf(out, "%d variant%s from the compile cache; ", cached, cached == 1 ? "" : "s");
		fprintf(out, "%d worker restart%s\n", all.restarts, all.restarts == 1 ? "" : "s");
		noise_figures nf = noise_of_tune(&r);
		if (nf.shapes && o->alt_rounds > 0)
			fprintf(out, "timing noise: the winners' spread is %.1f %% (median), up to %.1f %%; %d of %d shapes' close contenders alternated (%d this run), the runner-up within the noise on %d\n",
			        100 * nf.median, 100 * nf.worst, nf.alternated, nf.shapes, r.alternations, nf.unresolved);
		else if (nf.shapes)
			fprintf(out, "timing noise: the winners' spread is %.1f %% (median), up to %.1f %%; %d of %d shapes' close contenders alternated (none this run: --alternate 0), the runner-up within the noise on %d\n",
			        100 * nf.median, 100 * nf.worst, nf.alternated, nf.shapes, nf.unresolved);
		int unmeasured = n.mine - n.done;
		if (r.out_of_budget)
			fprintf(out, "stopped at the --budget with %d of %d cells not measured (%d of %d shapes with no correct variant yet); run again to go on from here\n",
			       unmeasured, n.mine, r.ss.count - n.shapes_ok, r.ss.count);
		else if (unmeasured && r.sc.kind == SEARCH_MODEL)
			fprintf(out, "model search: %d of %d cells measured; the other %d were predicted slower (--search exhaustive measures them)\n",
			       n.done, n.mine, unmeasured);
		fprintf(out, "database: %s\n", r.db->path);
		fflush(out); /* before any error on stderr */
		if (nf.shapes && nf.median > NOISE_WARN)
			fprintf(stderr, "aotc: warning: timing noise on this machine (median spread %.0f %%, up to %.0f %%) exceeds the %.0f %% the dispatch can resolve: the winners of %d of %d shapes are not reliable; tune on an idle machine\n",
			        100 * nf.median, 100 * nf.worst, 100 * NOISE_WARN, nf.unresolved, nf.shapes);
	}
	bool any_ok = false;
	for (int i = 0; i < r.db->nmeas && !any_ok; i++)
		any_ok = r.db->meas[i].status == MS_OK;
	if (!any_ok && !r.out_of_budget) {
		diag_plain_error(d, "no configuration of '%s' ran correctly on any shape (the summary says how they failed; %s has every status)",
		                 k->id, r.db->path);
		status = AOTC_NO_VARIANT;
	}
	run_finish(&r);
	return status;
}

/* The first lines of a compiler log, indented, for a per-variant failure. */
static void print_log(const char *log, bool all)
{
	int lines = 0;
	for (const char *p = log; *p && (all || lines < 8); lines++) {
		size_t n = strcspn(p, "\n");
		fprintf(stderr, "    %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
		if (!all && lines == 7 && *p)
			fprintf(stderr, "    ... (--verbose shows the whole log)\n");
	}
}

aotc_status tune_compile_only(const aotc_module *m, const kernel *k, const tune_options *o, diags *d)
{
	const rt_ops *ops;
	aotc_status status = backend_for_kernel(k, o, &ops, d);
	if (status != 0)
		return status;
	configs cf = {.k = k};
	arena_init(&cf.a);
	pool p = {0};
	rt_compile_request req = {0};
	char *abs = NULL;
	unsigned char *mine = NULL;
	bool started = false;
	enumerate_configs(&cf, o->arch);
	if (cf.n == 0) {
		diag_error(d, k->loc, "no configuration of '%s' satisfies its AOTC_REQUIREs", k->id);
		status = AOTC_DIAGNOSED;
		goto out;
	}
	add_externs(&cf, o->arch);
	if (!choose_compiler(ops, m, o, &req, &abs, d)) {
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	p.ops = ops;
	p.req = req;
	p.compiler_id = req.compiler;
	p.source_hash = m->source_hash;
	p.cache_dir = cache_dir();
	if (mkdir_p(p.cache_dir) < 0) {
		diag_plain_error(d, "cannot create the compile cache %s: %s", p.cache_dir, strerror(errno));
		status = AOTC_ENVIRONMENT;
		goto out;
	}
	int ref_job = add_reference(&p, k);
	/* --shard: the configurations tune --shard would measure (the
	 * reference in every shard: each tune needs it). */
	mine = xcalloc((size_t)cf.n + 1, 1);
	shard_members((const char *const *)cf.names, cf.n, o->shard, o->nshards, mine);
	int nvar = 0, next = 0;
	for (int c = 0; c < cf.n; c++) {
		if (mine[c] && config_extern(&cf, c))
			next++;
		else if (mine[c])
			nvar++;
	}
	cf.job = xcalloc((size_t)cf.n, sizeof *cf.job);
	for (int c = 0; c < cf.n; c++) {
		if (!mine[c])
			continue;
		cf.job[c] = add_config_job(&p, &cf, c, extern_nparams(k));
	}
	started = true; /* pool_finish frees it, started or not */
	if (!o->quiet)
		fprintf(stderr, "aotc: compiling %s for %s with %s: %d configurations%s%s\n", k->id, o->arch->name,
		        req.compiler, nvar, k->reference ? " and the reference" : "", next ? ", the externs" : "");
	/* The reference first, alone: if the file does not compile (a
	 * file-level error, an architecture the toolkit lacks), one
	 * diagnostic and nothing else compiled. */
	if ((status = compile_file_first(&p, m, k, ref_job, d)) != 0)
		goto out;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	pool_start(&p, o->jobs > 0 ? o->jobs : (int)(cores > 0 ? cores : 1), false);
	int ok = 0, cached = 0, ext_ok = 0, resources = 0;
	bool env = false;
	for (int c = 0; c < cf.n; c++) {
		if (!mine[c])
			continue;
		const job *j = pool_wait(&p, cf.job[c]);
		cached += j->cached;
		resources += j->rs == RT_ERR_RESOURCES;
		if (j->rs == RT_OK) {
			if (config_extern(&cf, c))
				ext_ok++;
			else
				ok++;
			continue;
		}
		env |= j->rs == RT_ERR_ENV;
		if (!o->quiet) {
			fprintf(stderr, "aotc: %s: %s\n", cf.names[c], rt_status_name(j->rs));
			print_log(j->log ? j->log : "", o->verbose);
		}
	}
	double wall = p.finished_at - p.started_at;
	FILE *out = o->stdout_taken ? stderr : stdout;
	fprintf(out, "%s: %d of %d configurations compiled for %s with %s (%d from cache) in %.1f s on %d thread%s; reference %s",
	       k->id, ok, nvar, o->arch->name, req.compiler, cached, wall, p.nthreads, p.nthreads == 1 ? "" : "s",
	       !k->reference ? "none" : "compiled");

	if (next)
		fprintf(out, "; externs: %d of %d compiled", ext_ok, next);
	if (o->nshards > 1)
		fprintf(out, "; shard %d/%d of %d configurations", o->shard, o->nshards, cf.n);
	fputc('\n', out);
	fflush(out);
	if (!o->quiet && p.batches)
		fprintf(stderr, "aotc: %d compiler run%s of several variants (up to %d a run; %d split to find a failing one)\n",
		        (int)p.batches, p.batches == 1 ? "" : "s", p.batch_max, (int)p.splits);
	if (!o->quiet && resources)
		fprintf(stderr, "aotc: %d variant%s beyond the static shared memory limit (resources, not compiled again)\n",
		        resources, resources == 1 ? "" : "s");
	if (status == 0 && ok == 0 && nvar > 0) {
		diag_plain_error(d, "no configuration of '%s' compiles", k->id);
		status = env ? 3 : 4;
	}
out:
	if (started)
		pool_finish(&p);
	else
		free(p.cache_dir);
	free(abs);
	free((void *)req.libs);
	free((void *)req.device_source);
	configs_finish(&cf);
	free(mine);
	return status;
}
