/* The tuner's driver: the stages in order (enumerate, open the device,
 * compiler and database, schedule, compile, measure), each a function of
 * its own below; the stages' machinery is in compile.c (the compile pool
 * and cache), schedule.c (which cells, in which order, when to stop) and
 * measure.c (the worker process). */
#include "tune.h"

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

/* The enumerated configurations of the kernel, then of each of its
 * AOTC_ALTERNATIVEs (in the order the IR holds them), then (from
 * nvariants on) the kernel's AOTC_EXTERN routines in annotation order:
 * named as the routine, their value rows zeros (they have no tunables),
 * always measured. An alternative's variants are always measured too: the
 * model search ranks configurations by the kernel's tunables, which they
 * do not have. */
typedef struct configs {
	const kernel *k;
	const kernel *cur;   /* the function add_config enumerates */
	arena a;
	int64_t *values;     /* n rows of nt, a function's own values first */
	int nt;              /* the most tunables of the kernel and its alternatives */
	char **names;
	const kernel **fn;   /* per config: the function it is a variant of; NULL: an extern */
	int *job;            /* compile job per config */
	bool *always;        /* per config: an extern or an alternative's, outside the search */
	int n, nvariants;
	size_t cap;
} configs;

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

static const int64_t *config_values(const configs *c, int i) { return c->values + (size_t)i * c->nt; }

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

/* ---- Progress ---------------------------------------------------------- */

typedef struct progress {
	bool tty, quiet;
	double last;
	double every;   /* seconds between lines: 0.25 on a terminal, else 15 or $AOTC_PROGRESS_SECONDS */
} progress;

static void fmt_duration(char *buf, size_t n, double s)
{
	if (s < 60)
		snprintf(buf, n, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, n, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
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

/* ---- The run --------------------------------------------------------------- */

/* One tune of one kernel: the stages' results, in the order they fill. */
typedef struct tune_run {
	const aotc_module *m;
	const kernel *k;
	const tune_options *o;
	diags *d;
	const rt_ops *ops;
	/* enumerate */
	configs cf;
	shape_set ss;
	int64_t *params;      /* per shape: k->nparams values */
	bool *params_ok;      /* per shape: its AOTC_VALUEs evaluate */
	/* open: devices, compiler, database */
	measurer *ms;         /* one per device (--devices), each with its worker */
	int nms;
	json_t *device;       /* ms[0]'s (borrowed): every measurement's hardware */
	rt_compile_request req;
	char *abs;
	const char *hwid;
	tune_db *db;
	db_key key;             /* what its measurements are keyed by (dbset_key) */
	int *dbc, *dbs;       /* configuration / shape -> database index */
	/* schedule */
	cost_features feat;
	schedule sc;
	int learned;          /* cells recorded from failures learnt once */
	/* compile */
	pool p;
	bool pool_started;
	int ref_job;
	json_t *ref_dims;     /* per shape: the reference's launch, or NULL */
	/* measure: one thread per device; they share this run under mu */
	pthread_mutex_t mu;
	unsigned char *busy;  /* per schedule cell: a device is measuring it */
	aotc_status failed;   /* a device's error: the others stop */
	double t0;
	/* What measuring costs, for the time left (estimate_left): per cell,
	 * wall seconds y against the ms its timed launches took x (sums for a
	 * least-squares line); the rest (shape setups, alternation) apart. */
	double fit_n, fit_x, fit_y, fit_xx, fit_xy, other_s;
	double pred_x, pred_actual; /* the predicted x of cells measured that had one, and their x */
	int pred_n;
	double *shape_x;      /* per shape: the x of its cells measured, added */
	int *shape_n;         /* and how many */
	int measured, reused;
	bool out_of_budget, lost_shapes;
	progress pr;
	/* noise: the warm-up, the clocks, the close contenders' alternation */
	json_t *warm, *clocks_end; /* the first device warmed's replies, or NULL */
	int warm_ms;          /* its index in ms */
	bool *warmed;         /* per device */
	bool *alt_done;       /* per shape: alternated in this run */
	int alternations, alt_lost;
} tune_run;

static const measurement *cell_meas(const tune_run *r, int c, int s)
{
	return db_get(r->db, r->dbc[c], r->dbs[s]);
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
	free(r->shape_x);
	free(r->shape_n);
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

static const int64_t *shape_params(const tune_run *r, int s)
{
	return r->params + (size_t)s * (r->k->nparams + 1);
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

static aotc_status record(tune_run *r, measurement *mm)
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
static aotc_status record_status(tune_run *r, int c, int s, meas_status st, const char *note)
{
	measurement mm = {.config = r->dbc[c], .shape = r->dbs[s], .status = st, .error = NAN,
	                  .time_ms = NAN, .note = (char *)note};
	schedule_mark(&r->sc, c, s, st, NAN);
	return record(r, &mm);
}

/* The launch of configuration c at shape s, or why it has none: MS_OK with
 * *dims, MS_INVALID (an AOTC_VALID_IF, a launch expression) or MS_SKIPPED
 * (beyond the device's limits), decided without running anything. */
static meas_status static_status(const tune_run *r, int c, int s, json_t **dims, strbuf *why)
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
	static_status(r, c, s, &a, &why);
	static_status(r, c, t, &b, &why);
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
static aotc_status learn_from(tune_run *r, int c, int s)
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
		status = record_status(r, c, t, put, note.data);
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
			meas_status st = static_status(r, c, s, &dims, &why);
			json_decref(dims);
			if (st != MS_OK)
				status = record_status(r, c, s, st, why.data);
		}
	}
	for (int s = 0; s < r->ss.count && !status; s++)
		for (int c = 0; c < r->cf.n && !status; c++)
			status = learn_from(r, c, s);
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
static int contenders(const tune_run *r, int s, int *group, bool *fresh)
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
static bool shape_alternated(const tune_run *r, int s)
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
		int g = r->params_ok[s] && !shape_alternated(r, s) ? contenders(r, s, group, &fresh) : AOTC_OK;
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

/* Seconds left: the cells the search still means to measure at the pace
 * so far, or what is left of the budget when that is less (*capped). */
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

/* The x (timed_ms) of a cell of shape s without a prediction: the shape's
 * own so far, else a power law in the shapes' sizes fitted to those of the
 * shapes measured (log x = k + e log size; e = 1 with one size), else the
 * average so far. */
static double shape_x_guess(const tune_run *r, int s, double mx)
{
	if (r->shape_n[s])
		return r->shape_x[s] / r->shape_n[s];
	double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int t = 0; t < r->ss.count; t++) {
		if (!r->shape_n[t] || !(r->shape_x[t] > 0))
			continue;
		double x = log(shape_size(r, t)), y = log(r->shape_x[t] / r->shape_n[t]);
		n++;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	if (n == 0)
		return mx;
	double var = sxx / n - (sx / n) * (sx / n);
	double e = var > 1e-9 ? (sxy / n - (sx / n) * (sy / n)) / var : 1;
	e = e < 0 ? 0 : e > 3 ? 3 : e;
	return exp(sy / n + e * (log(shape_size(r, s)) - sx / n));
}

static double estimate_left(tune_run *r, bool *capped)
{
	*capped = false;
	const schedule *sc = &r->sc;
	if (r->measured < 5 || r->fit_n < 5) /* one slow first cell is no pace */
		return NAN;
	/* A cell costs a + b x seconds, x the ms its timed launches take (a:
	 * the worker's round trips, the checks, the cold cache; fitted to the
	 * cells measured), x from the cost model's prediction of its time
	 * where the search has one (the promising cells come first, so the
	 * ones left are the slower ones), else the average so far; shape
	 * setups and alternation add what they cost per cell so far. The
	 * devices share the work; waiting for compiles is counted as the
	 * compiling left, which measuring cannot outrun. */
	double n = r->fit_n, mx = r->fit_x / n, my = r->fit_y / n;
	double var = r->fit_xx / n - mx * mx, b = var > 1e-12 ? (r->fit_xy / n - mx * my) / var : 0;
	b = b > 0 ? b : 0;
	double a = my - b * mx;
	a = a > 0 ? a : 0;
	double extra = r->other_s / r->fit_n, left = 0;
	/* the cost model's bias, as the cells measured since it predicted show */
	double bias = r->pred_n >= 20 && r->pred_x > 0 ? r->pred_actual / r->pred_x : 1;
	for (int s = 0; s < r->ss.count; s++) {
		if (sc->closed[s])
			continue;
		int open = 0, sample = 0;
		double cost = 0, guess = shape_x_guess(r, s, mx);
		for (int c = 0; c < r->cf.n; c++) {
			int cell = schedule_cell(sc, c, s);
			if (sc->state[cell] != CELL_PENDING || schedule_deprioritised(sc, c))
				continue;
			open++;
			cost += a + b * (isfinite(sc->pred[cell]) ? bias * timed_ms(r, s, exp(sc->pred[cell])) : guess) + extra;
		}
		for (int i = 0; i < sc->nsample; i++)
			sample += sc->state[schedule_cell(sc, sc->order[i], s)] == CELL_PENDING;
		if (sc->kind == SEARCH_MODEL && open) {
			int more = sample + (SEARCH_PATIENCE - sc->stale[s]) * SEARCH_BATCH;
			if (more < open) {
				cost *= (double)more / open;
				open = more;
			}
		}
		left += cost / r->nms;
	}
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

static void show_progress(tune_run *r, bool final)
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
	mm.status = static_status(r, c, s, &dims, &why);
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
		r->fit_n++;
		r->fit_x += x;
		r->fit_y += took;
		r->fit_xx += x * x;
		r->fit_xy += x * took;
		r->shape_x[s] += x;
		r->shape_n[s]++;
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
		status = record(r, &mm);
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
		status = learn_from(r, c, s);
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
	int n = contenders(r, s, group, &fresh);
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
		if (r->cf.job[c] < 0 || static_status(r, c, s, &dims, &why) != MS_OK)
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
			status = record(r, &mm[i]);
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
	if (sr == SHAPE_REFUSED) {
		/* Too large for this machine: every cell says so. */
		for (int c = 0; c < r->cf.n && !status; c++) {
			int cell = schedule_cell(&r->sc, c, s);
			if (r->sc.state[cell] == CELL_PENDING && !r->busy[cell])
				status = record_status(r, c, s, MS_RESOURCES, why.data);
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
		show_progress(r, false);
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
		if (!r->params_ok[s] || r->alt_done[s] || r->sc.dead[s] || shape_alternated(r, s) ||
		    contenders(r, s, group, &fresh) < 2 || !fresh)
			continue;
		cw->v[cw->nv++] = (visit){.s = s};
		cw->open[s] = 1;
	}
}

/* Rounds until the schedule is done or the budget is spent. */
static aotc_status measure_stage(tune_run *r)
{
	r->pr = (progress){.tty = isatty(2), .quiet = r->o->quiet, .every = 15};
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
	r->shape_x = xcalloc((size_t)r->ss.count + 1, sizeof *r->shape_x);
	r->shape_n = xcalloc((size_t)r->ss.count + 1, sizeof *r->shape_n);
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
		int g = contenders(r, s, group, &fresh);
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
		status = measure_stage(&r);
	if (status) {
		if (r.db)
			db_save(r.db); /* keep what was measured; the journal has it anyway */
		run_finish(&r);
		return status;
	}
	show_progress(&r, true);
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
			all.restarts += r.ms[i].restarts;
		}
		fprintf(out, "\n%d measurements taken, %d reused, %d learnt from failures elsewhere, in %.1f s", r.measured,
		        r.reused, r.learned, wall);
		if (r.nms > 1)
			fprintf(out, " on %d devices", r.nms);
		fprintf(out, " (%schecking %.1f s, timing %.1f s, shape setup %.1f s", r.nms > 1 ? "their " : "",
		        all.check_ms / 1e3, all.timing_ms / 1e3, all.shape_ms / 1e3);
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
