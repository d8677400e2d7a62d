/* The tuning loop. Compile threads run ahead through every configuration
 * (cached on disk); the main thread walks shapes, and for each shape every
 * configuration, sending what compiled to the worker and recording each
 * answer in the database before asking the next question. */
#include "tune.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "backend.h"
#include "db.h"
#include "shapes.h"
#include "worker.h"

/* The timing method (docs/database.md); stored in every database. */
enum { WARMUP = 1, SCREEN_SAMPLES = 3, MIN_SAMPLES = 5, MAX_SAMPLES = 25 };
static const double SCREEN_FACTOR = 3.0, BUDGET_MS = 100.0;

/* How long one measurement may take before the variant counts as hung:
 * 30 s, or $AOTC_MEASURE_TIMEOUT seconds. */
static double measure_timeout_ms(void)
{
	const char *e = getenv("AOTC_MEASURE_TIMEOUT");
	double s = e ? atof(e) : 0;
	return (s > 0 ? s : 30) * 1e3;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double parse_duration(const char *s)
{
	double total = 0;
	bool any = false;
	while (*s) {
		char *end;
		errno = 0;
		double v = strtod(s, &end);
		if (end == s || errno || v < 0)
			return -1;
		double unit = 1;
		switch (*end) {
		case 'h': unit = 3600; end++; break;
		case 'm': unit = 60; end++; break;
		case 's': end++; break;
		case 0: break;
		default: return -1;
		}
		total += v * unit;
		any = true;
		s = end;
	}
	return any ? total : -1;
}

/* ---- Compile cache and pool ---------------------------------------------- */

typedef enum { JOB_PENDING, JOB_RUNNING, JOB_DONE } job_state;

typedef struct job {
	char *instance;
	job_state state;
	rt_status rs;
	char *path, *symbol;  /* the cached blob */
	char *log;            /* compile errors */
	bool cached;
	double seconds;
} job;

typedef struct pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	job *jobs;
	int njobs, next, done;
	int nthreads;
	pthread_t *threads;
	const rt_ops *ops;
	rt_compile_request req;   /* instance filled per job */
	char *cache_dir;
	const char *compiler_id;
	const char *source_hash;
	double busy_s;
	double started_at, finished_at; /* first job taken, last job done */
} pool;

static char *cache_dir(void)
{
	strbuf sb;
	strbuf_init(&sb);
	const char *env = getenv("AOTC_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (env && *env)
		strbuf_puts(&sb, env);
	else if (xdg && *xdg)
		strbuf_printf(&sb, "%s/aotc", xdg);
	else
		strbuf_printf(&sb, "%s/.cache/aotc", home && *home ? home : "/tmp");
	return sb.data;
}

/* The key covers everything the bytes depend on. */
static void cache_key(const pool *p, const char *instance, char out[33])
{
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "aotc-cache-1\n%s\n%s\n%s\n%s\n%s\n", AOTC_VERSION_STRING,
	              p->compiler_id, p->req.arch, p->source_hash, instance);
	for (int i = 0; i < p->req.ninclude_dirs; i++)
		strbuf_printf(&sb, "-I%s\n", p->req.include_dirs[i]);
	for (int i = 0; i < p->req.ndefines; i++)
		strbuf_printf(&sb, "-D%s\n", p->req.defines[i]);
	hash_hex(sb.data, sb.len, out);
	strbuf_finish(&sb);
}

static void run_job(pool *p, job *j)
{
	double t0 = now_s();
	char key[33];
	cache_key(p, j->instance, key);
	strbuf bin, sym;
	strbuf_init(&bin);
	strbuf_init(&sym);
	strbuf_printf(&bin, "%s/%s.bin", p->cache_dir, key);
	strbuf_printf(&sym, "%s/%s.sym", p->cache_dir, key);
	size_t n;
	char *symbol = read_file(sym.data, &n);
	struct stat st;
	if (symbol && stat(bin.data, &st) == 0) {
		j->rs = RT_OK;
		j->cached = true;
		j->symbol = symbol;
		j->path = bin.data;
		strbuf_finish(&sym);
		j->seconds = now_s() - t0;
		return;
	}
	free(symbol);
	rt_compile_request req = p->req;
	req.instance = j->instance;
	rt_blob blob = {0};
	strbuf err;
	strbuf_init(&err);
	j->rs = p->ops->compile(&req, &blob, &err);
	if (j->rs == RT_OK) {
		/* The blob before the symbol: a reader that finds the symbol
		 * finds the blob. */
		if (write_file_atomic(bin.data, blob.data, blob.size) < 0 ||
		    write_file_atomic(sym.data, blob.symbol, strlen(blob.symbol)) < 0) {
			j->rs = RT_ERR_ENV;
			strbuf_printf(&err, "cannot write the compile cache %s: %s", p->cache_dir,
			              strerror(errno));
		} else {
			j->symbol = xstrdup(blob.symbol);
			j->path = xstrdup(bin.data);
		}
	}
	if (j->rs != RT_OK)
		j->log = xstrdup(err.data);
	rt_blob_finish(&blob);
	strbuf_finish(&err);
	strbuf_finish(&bin);
	strbuf_finish(&sym);
	j->seconds = now_s() - t0;
}

static void *pool_thread(void *arg)
{
	pool *p = arg;
	pthread_mutex_lock(&p->mu);
	while (p->next < p->njobs) {
		job *j = &p->jobs[p->next++];
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&p->mu);
		run_job(p, j);
		pthread_mutex_lock(&p->mu);
		j->state = JOB_DONE;
		p->done++;
		p->busy_s += j->seconds;
		p->finished_at = now_s();
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int pool_add(pool *p, const char *instance)
{
	for (int i = 0; i < p->njobs; i++)
		if (!strcmp(p->jobs[i].instance, instance))
			return i;
	p->jobs = xrealloc(p->jobs, (size_t)(p->njobs + 1) * sizeof *p->jobs);
	p->jobs[p->njobs] = (job){.instance = xstrdup(instance)};
	return p->njobs++;
}

static void pool_start(pool *p, int nthreads)
{
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->nthreads = nthreads < p->njobs ? nthreads : p->njobs;
	p->threads = xcalloc((size_t)p->nthreads + 1, sizeof *p->threads);
	p->started_at = now_s();
	for (int i = 0; i < p->nthreads; i++)
		if (pthread_create(&p->threads[i], NULL, pool_thread, p) != 0)
			die("pthread_create failed");
}

static const job *pool_wait(pool *p, int j)
{
	pthread_mutex_lock(&p->mu);
	while (p->jobs[j].state != JOB_DONE)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return &p->jobs[j];
}

static int pool_done(pool *p)
{
	pthread_mutex_lock(&p->mu);
	int d = p->done;
	pthread_mutex_unlock(&p->mu);
	return d;
}

/* Stops handing out jobs and joins the threads. */
static void pool_finish(pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->next = p->njobs;
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	for (int i = 0; i < p->njobs; i++) {
		free(p->jobs[i].instance);
		free(p->jobs[i].path);
		free(p->jobs[i].symbol);
		free(p->jobs[i].log);
	}
	free(p->jobs);
	free(p->threads);
	free(p->cache_dir);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}

/* ---- Configurations ---------------------------------------------------- */

typedef struct configs {
	const kernel *k;
	arena a;
	int64_t *values;     /* n rows of k->ntunables */
	char **names;
	int *job;            /* compile job per config */
	int n;
	size_t cap;
} configs;

static bool add_config(void *ctx, const int64_t *values)
{
	configs *c = ctx;
	int nt = c->k->ntunables;
	if ((size_t)c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->values = xrealloc(c->values, c->cap * (size_t)nt * sizeof *values);
		c->names = xrealloc(c->names, c->cap * sizeof *c->names);
	}
	memcpy(c->values + (size_t)c->n * nt, values, (size_t)nt * sizeof *values);
	c->names[c->n++] = ir_variant_name(&c->a, c->k, values);
	return true;
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

/* ---- Launch geometry ------------------------------------------------------ */

/* Evaluates a launch for this configuration and shape. Returns MS_OK, or
 * MS_INVALID / MS_SKIPPED with *why. */
static meas_status launch_dims(const kernel *k, const launch *grid, const launch *block,
                               const aexpr *smem, const int64_t *values, const int64_t *params,
                               const json_t *dev, json_t **out, strbuf *why)
{
	*out = NULL;
	if (!k->is_global) {
		*out = json_pack("{s:[i,i,i], s:[i,i,i], s:i}", "grid", 1, 1, 1, "block", 1, 1, 1,
		                 "smem", 0);
		return MS_OK;
	}
	eval_env env = {.tunables = values, .ntunables = values ? k->ntunables : 0,
	                .params = params, .nparams = k->nparams};
	int64_t dims[7];
	int which;
	eval_status st = ir_launch_dims(grid, block, smem, &env, dims, &which);
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

/* ---- Progress ---------------------------------------------------------- */

typedef struct progress {
	bool tty, quiet;
	double start, last;
	int total, done, last_pct;
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

static void show_progress(progress *pr, pool *p, bool final)
{
	if (pr->quiet)
		return;
	double t = now_s();
	int pct = pr->total ? 100 * pr->done / pr->total : 100;
	if (!final && (pr->tty ? t - pr->last < 0.25 : (pct < pr->last_pct + 10 && t - pr->last < 15)))
		return;
	pr->last = t;
	pr->last_pct = pct;
	char eta[32] = "?";
	if (pr->done > 0)
		fmt_duration(eta, sizeof eta, (t - pr->start) / pr->done * (pr->total - pr->done));
	int compiled = pool_done(p);
	if (pr->tty)
		fprintf(stderr, "\r\033[Kaotc: compiled %d/%d, measured %d/%d (%d%%), %s left",
		        compiled, p->njobs, pr->done, pr->total, pct, eta);
	else
		fprintf(stderr, "aotc: compiled %d/%d, measured %d/%d (%d%%), %s left\n", compiled,
		        p->njobs, pr->done, pr->total, pct, eta);
	if (pr->tty && final)
		fputc('\n', stderr);
}

/* ---- The loop --------------------------------------------------------------- */

typedef struct session {
	const aotc_module *m;
	const kernel *k;
	const tune_options *o;
	diags *d;
	const rt_ops *ops;
	char exe[PATH_MAX];
	json_t *init;         /* the init request, resent after a restart */
	worker *w;
	json_t *device;       /* from the worker */
	json_t *shape_req;    /* the current shape request, resent after a restart */
	int restarts;
	bool no_device;       /* the worker found no device of that architecture */
} session;

static void note_time(double *acc, const json_t *reply, const char *key)
{
	const json_t *v = json_object_get(reply, key);
	if (json_is_number(v))
		*acc += json_number_value(v);
}

/* Starts (or restarts) the worker and sends init and the current shape.
 * Returns 0, or 3 with a message when the device cannot be used. */
static int start_worker(session *s, strbuf *why)
{
	worker_stop(s->w);
	s->w = worker_start(s->exe, why);
	if (!s->w)
		return 3;
	json_t *r;
	call_result cr = worker_call(s->w, s->init, 120e3, &r, why);
	if (cr != CALL_OK)
		return 3;
	const char *st = json_string_value(json_object_get(r, "status"));
	if (!st || strcmp(st, "ok") != 0) {
		const char *note = json_string_value(json_object_get(r, "note"));
		s->no_device = st && !strcmp(st, "no_device");
		strbuf_puts(why, note ? note : "the worker could not open the device");
		json_decref(r);
		return 3;
	}
	if (!s->device)
		s->device = json_incref(json_object_get(r, "device"));
	json_decref(r);
	return 0;
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

static void print_summary(const kernel *k, const tune_db *db, const configs *cf,
                          const shape_set *ss, const int *dbc, const int *dbs)
{
	printf("\nAUTOTUNE %s: %d configurations x %d shapes\n", k->name, cf->n, ss->count);
	for (int s = 0; s < ss->count; s++) {
		int best = -1, second = -1;
		int fails[MS_COUNT] = {0};
		for (int c = 0; c < cf->n; c++) {
			const measurement *m = db_get(db, dbc[c], dbs[s]);
			if (!m)
				continue;
			if (m->status != MS_OK) {
				fails[m->status]++;
				continue;
			}
			if (best < 0 || m->time_ms < db_get(db, dbc[best], dbs[s])->time_ms) {
				second = best;
				best = c;
			} else if (second < 0 || m->time_ms < db_get(db, dbc[second], dbs[s])->time_ms) {
				second = c;
			}
		}
		strbuf sb;
		strbuf_init(&sb);
		shape_format(&sb, k, ss, s);
		printf("  %-28s", sb.data);
		if (best >= 0) {
			double tb = db_get(db, dbc[best], dbs[s])->time_ms;
			printf(" best %s %.4f ms", cf->names[best], tb);
			if (second >= 0) {
				double t2 = db_get(db, dbc[second], dbs[s])->time_ms;
				printf(", next %s %.4f ms (%.2fx)", cf->names[second], t2, t2 / tb);
			}
		} else {
			printf(" no variant ran correctly");
		}
		bool first = true;
		for (int st = MS_WRONG; st < MS_COUNT; st++)
			if (fails[st]) {
				printf("%s%d %s", first ? "; failed: " : ", ", fails[st], meas_status_name(st));
				first = false;
			}
		putchar('\n');
		strbuf_finish(&sb);
	}
}

static json_t *method_json(const char *backend)
{
	return json_pack("{s:s, s:s, s:b, s:i, s:i, s:f, s:i, s:i, s:f, s:s}",
		"timer", strcmp(backend, "host") ? "device events around each launch" : "CLOCK_MONOTONIC around each call",
		"statistic", "median", "cache_flush", 1, "warmup", WARMUP,
		"screen_samples", SCREEN_SAMPLES, "screen_factor", SCREEN_FACTOR,
		"min_samples", MIN_SAMPLES, "max_samples", MAX_SAMPLES, "budget_ms", BUDGET_MS,
		"inputs", "fresh per shape from a seeded generator, restored before each checked run");
}

/* The backend that tunes k for --arch: 0, or an exit status (diagnosed). */
static int backend_for_kernel(const kernel *k, const tune_options *o, const rt_ops **ops,
                              diags *d)
{
	*ops = rt_backend_for(o->arch);
	if (!*ops) {
		diag_plain_error(d, "this aotc cannot tune for --arch %s (built without that backend)", o->arch);
		return 3;
	}
	if (k->is_global != (strcmp(o->arch, "host") != 0)) {
		diag_error(d, k->loc, "'%s' is a %s kernel; it cannot be tuned for --arch %s", k->name,
		           k->is_global ? "__global__" : "host", o->arch);
		return 1;
	}
	return 0;
}

/* The compile request for m's file with the compiler the backend chooses
 * for it (saying why when that is worth saying). *abs gets the file's
 * absolute path, which the request borrows. False when no compiler can take
 * the file (diagnosed). */
static bool choose_compiler(const rt_ops *ops, const aotc_module *m, const tune_options *o,
                            rt_compile_request *req, char **abs, diags *d)
{
	*abs = realpath(m->file, NULL);
	*req = (rt_compile_request){
		.source_path = *abs ? *abs : m->file, .arch = o->arch,
		.include_dirs = o->include_dirs, .ninclude_dirs = o->ninclude_dirs,
		.defines = o->defines, .ndefines = o->ndefines,
	};
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

int tune_kernel(const aotc_module *m, const kernel *k, const tune_options *o, bool *no_device,
                diags *d)
{
	int status = 0;
	session s = {.m = m, .k = k, .o = o, .d = d};
	configs cf = {.k = k};
	arena_init(&cf.a);
	shape_set ss;
	shape_set_init(&ss, k);
	pool p = {0};
	tune_db *db = NULL;
	int *dbc = NULL, *dbs = NULL;
	int64_t *params = xcalloc((size_t)k->nparams + 1, sizeof *params);
	strbuf why;
	strbuf_init(&why);
	bool pool_started = false;
	char *abs = NULL;

	if (no_device)
		*no_device = false;
	if ((status = backend_for_kernel(k, o, &s.ops, d)) != 0)
		goto out;
	if (!(o->shapes_file ? shapes_from_file(k, o->shapes_file, &ss, d) : shapes_from_ir(k, &ss, o->seed, d))) {
		status = 1;
		goto out;
	}
	ir_enumerate(k, add_config, &cf);
	if (cf.n == 0) {
		diag_error(d, k->loc, "no configuration of '%s' satisfies its AOTC_REQUIREs", k->name);
		status = 1;
		goto out;
	}

	/* The device first: the database is per hardware id. */
	ssize_t n = readlink("/proc/self/exe", s.exe, sizeof s.exe - 1);
	if (n <= 0) {
		diag_plain_error(d, "cannot find the aotc executable: %s", strerror(errno));
		status = 3;
		goto out;
	}
	s.exe[n] = 0;
	char *ir = ir_to_json(m);
	json_t *jir = json_loads(ir, 0, NULL);
	free(ir);
	json_t *method = method_json(s.ops->name);
	s.init = json_pack("{s:s, s:s, s:o, s:s, s:I, s:O}", "op", "init", "arch", o->arch, "ir", jir,
	                   "kernel", k->name, "seed", (json_int_t)o->seed, "method", method);
	if ((status = start_worker(&s, &why)) != 0) {
		diag_plain_error(d, "cannot tune for %s here: %s", o->arch, why.data);
		if (s.no_device && d->out)
			fprintf(d->out, "aotc: tune on a machine with that GPU, or run 'aotc emit' with a database tuned there\n");
		if (no_device)
			*no_device = s.no_device;
		json_decref(method);
		goto out;
	}
	rt_compile_request file_req;
	if (!choose_compiler(s.ops, m, o, &file_req, &abs, d)) {
		json_decref(method);
		status = 3;
		goto out;
	}
	const char *hwid = json_string_value(json_object_get(s.device, "id"));
	char *path = db_path(o->db_dir, k->name, hwid);
	const char **tnames = xcalloc((size_t)k->ntunables + 1, sizeof *tnames);
	for (int i = 0; i < k->ntunables; i++)
		tnames[i] = k->tunables[i].name;
	const char **anames = xcalloc((size_t)ss.nargs + 1, sizeof *anames);
	for (int i = 0; i < ss.nargs; i++)
		anames[i] = k->params[ss.params[i]].name;
	int invalidated = 0;
	db = db_open(path, k->name, m->file, m->source_hash, tnames, k->ntunables, anames, ss.nargs,
	             s.device, method, &invalidated, d);
	json_decref(method);
	free(tnames);
	free(anames);
	if (!db) {
		free(path);
		status = 3;
		goto out;
	}
	if (db->stale_temps && !o->quiet)
		fprintf(stderr, "aotc: removed %d temporary file%s left beside %s by a killed write\n",
		        db->stale_temps, db->stale_temps == 1 ? "" : "s", path);
	if (invalidated && !o->quiet)
		fprintf(stderr, "aotc: %s changed since %s was tuned: dropped %d old measurements\n",
		        m->file, path, invalidated);
	if (db->journal_ignored && !o->quiet)
		fprintf(stderr, "aotc: %s: ignored %d journal line%s measured from another version of %s (not reused)\n",
		        db->journal_path, db->journal_ignored, db->journal_ignored == 1 ? "" : "s", m->file);
	free(path);
	dbc = xcalloc((size_t)cf.n, sizeof *dbc);
	dbs = xcalloc((size_t)ss.count, sizeof *dbs);
	for (int c = 0; c < cf.n; c++)
		dbc[c] = db_config(db, cf.names[c], cf.values + (size_t)c * k->ntunables);
	for (int i = 0; i < ss.count; i++)
		dbs[i] = db_shape(db, shape_row(&ss, i));

	/* Compile jobs: the reference first, then configurations in order. */
	p.ops = s.ops;
	p.compiler_id = file_req.compiler;
	p.source_hash = m->source_hash;
	p.cache_dir = cache_dir();
	if (mkdir_p(p.cache_dir) < 0) {
		diag_plain_error(d, "cannot create the compile cache %s: %s", p.cache_dir, strerror(errno));
		free(p.cache_dir);
		p.cache_dir = NULL;
		status = 3;
		goto out;
	}
	p.req = file_req;
	int ref_job = -1;
	for (int i = 0; i < ss.count && k->reference && ref_job < 0; i++)
		for (int c = 0; c < cf.n && ref_job < 0; c++)
			if (!db_get(db, dbc[c], dbs[i]))
				ref_job = pool_add(&p, k->reference);
	/* Only what still has measurements to take is compiled. */
	cf.job = xcalloc((size_t)cf.n, sizeof *cf.job);
	for (int c = 0; c < cf.n; c++) {
		cf.job[c] = -1;
		for (int i = 0; i < ss.count && cf.job[c] < 0; i++)
			if (!db_get(db, dbc[c], dbs[i])) {
				char *inst = instance_of(cf.names[c]);
				cf.job[c] = pool_add(&p, inst);
				free(inst);
			}
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	pool_start(&p, o->jobs > 0 ? o->jobs : (int)(cores > 0 ? cores : 1));
	if (p.njobs == 0) {
		worker_stop(s.w); /* nothing left to measure */
		s.w = NULL;
	}
	pool_started = true;

	int to_measure = 0, reused = 0;
	for (int i = 0; i < ss.count; i++)
		for (int c = 0; c < cf.n; c++)
			db_get(db, dbc[c], dbs[i]) ? reused++ : to_measure++;
	if (!o->quiet)
		fprintf(stderr, "aotc: tuning %s on %s: %d configurations (%d to compile) x %d shapes; %d measurements to take, %d reused from %s\n",
		        k->name, hwid, cf.n, p.njobs, ss.count, to_measure, reused, db->path);
	if (!k->reference && !o->quiet)
		fprintf(stderr, "aotc: warning: '%s' has no AOTC_REFERENCE: the first variant that runs on a shape is taken as correct\n",
		        k->name);

	progress pr = {.tty = isatty(2), .quiet = o->quiet, .start = now_s(), .total = to_measure};
	double t0 = now_s(), check_ms = 0, timing_ms = 0, shape_ms = 0;
	int measured = 0;
	bool out_of_budget = false;
	for (int si = 0; si < ss.count && !out_of_budget; si++) {
		const int64_t *row = shape_row(&ss, si);
		int missing = 0;
		double best = INFINITY;
		for (int c = 0; c < cf.n; c++) {
			const measurement *mm = db_get(db, dbc[c], dbs[si]);
			if (!mm)
				missing++;
			else if (mm->status == MS_OK && mm->time_ms < best)
				best = mm->time_ms;
		}
		if (!missing)
			continue;
		if (shape_param_values(k, &ss, row, params) != EVAL_OK) {
			strbuf sb;
			strbuf_init(&sb);
			shape_format(&sb, k, &ss, si);
			fprintf(stderr, "aotc: warning: skipping shape %s: an AOTC_VALUE cannot be evaluated\n", sb.data);
			strbuf_finish(&sb);
			continue;
		}
		json_t *ref = json_null();
		if (ref_job >= 0) {
			const job *j = pool_wait(&p, ref_job);
			if (j->rs != RT_OK) {
				diag_error(d, k->reference_loc, "the reference '%s' does not compile:\n%s",
				           k->reference, j->log ? j->log : "");
				status = 1;
				goto out;
			}
			json_t *ldims;
			why.len = 0;
			meas_status ls = launch_dims(k, &k->ref_grid, &k->ref_block, &k->ref_smem, NULL,
			                             params, s.device, &ldims, &why);
			if (ls != MS_OK) {
				diag_error(d, k->reference_loc, "the reference cannot be launched: %s", why.data);
				status = 1;
				goto out;
			}
			json_decref(ref);
			ref = json_pack("{s:s, s:s, s:o}", "blob", j->path, "symbol", j->symbol, "launch", ldims);
		}
		json_t *jrow = json_array();
		for (int a = 0; a < ss.nargs; a++)
			json_array_append_new(jrow, json_integer(row[a]));
		json_decref(s.shape_req);
		s.shape_req = json_pack("{s:s, s:o, s:o}", "op", "shape", "row", jrow, "reference", ref);
		bool shape_ok = false;
		for (int attempt = 0; attempt < 2 && !shape_ok; attempt++) {
			json_t *r;
			double ts = now_s();
			why.len = 0;
			call_result cr = worker_call(s.w, s.shape_req, 600e3, &r, &why);
			shape_ms += (now_s() - ts) * 1e3;
			if (cr == CALL_OK) {
				const char *st = json_string_value(json_object_get(r, "status"));
				shape_ok = st && !strcmp(st, "ok");
				if (!shape_ok) {
					const char *note = json_string_value(json_object_get(r, "note"));
					strbuf_printf(&why, "%s%s%s", st ? st : "?", note ? ": " : "", note ? note : "");
				}
				json_decref(r);
			}
			if (!shape_ok) {
				strbuf sb;
				strbuf_init(&sb);
				shape_format(&sb, k, &ss, si);
				fprintf(stderr, "%saotc: warning: shape %s: the reference failed (%s)\n",
				        pr.tty ? "\n" : "", sb.data, why.data);
				strbuf_finish(&sb);
				why.len = 0;
				if (start_worker(&s, &why) != 0) {
					diag_plain_error(d, "the worker cannot be restarted: %s", why.data);
					status = 3;
					goto out;
				}
				break;
			}
		}
		if (!shape_ok)
			continue;

		for (int c = 0; c < cf.n; c++) {
			if (db_get(db, dbc[c], dbs[si]))
				continue;
			if (o->budget_s > 0 && now_s() - t0 > o->budget_s) {
				out_of_budget = true;
				break;
			}
			const int64_t *values = cf.values + (size_t)c * k->ntunables;
			measurement mm = {.config = dbc[c], .shape = dbs[si], .error = NAN};
			why.len = 0;
			why.data[0] = 0;
			eval_status vst;
			int bad = ir_first_invalid(k, values, params, &vst);
			bool valid = bad < 0;
			if (!valid)
				strbuf_printf(&why, "AOTC_VALID_IF(%s) %s", k->valid_ifs[bad].text,
				              vst != EVAL_OK ? eval_status_name(vst) : "is false");
			json_t *ldims = NULL;
			if (!valid)
				mm.status = MS_INVALID;
			else
				mm.status = launch_dims(k, &k->grid, &k->block, &k->smem, values, params,
				                        s.device, &ldims, &why);
			const job *j = NULL;
			if (mm.status == MS_OK) {
				j = pool_wait(&p, cf.job[c]);
				if (j->rs != RT_OK) {
					mm.status = MS_COMPILE_ERROR;
					strbuf_puts(&why, j->log ? j->log : rt_status_name(j->rs));
				}
			}
			if (mm.status != MS_OK) {
				mm.note = xstrdup(why.data);
			} else {
				json_t *jv = json_array();
				for (int i = 0; i < k->ntunables; i++)
					json_array_append_new(jv, json_integer(values[i]));
				json_t *req = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "op", "measure",
					"blob", j->path, "symbol", j->symbol, "launch", ldims, "values", jv,
					"best_ms", isfinite(best) ? json_real(best) : json_null());
				ldims = NULL;
				json_t *r;
				double timeout = measure_timeout_ms();
				if (isfinite(best))
					timeout += best * MAX_SAMPLES * 20;
				call_result cr = worker_call(s.w, req, timeout, &r, &why);
				json_decref(req);
				if (cr == CALL_OK) {
					from_reply(r, &mm);
					note_time(&check_ms, r, "check_ms");
					note_time(&timing_ms, r, "timing_ms");
					json_decref(r);
				} else {
					mm.status = cr == CALL_TIMEOUT ? MS_TIMEOUT : MS_FAULT;
					mm.note = xstrdup(why.data);
				}
				if (mm.status == MS_FAULT || cr != CALL_OK) {
					/* The context is gone: a new worker, the same shape. */
					strbuf w2;
					strbuf_init(&w2);
					json_t *rr = NULL;
					if (start_worker(&s, &w2) != 0 ||
					    worker_call(s.w, s.shape_req, 600e3, &rr, &w2) != CALL_OK) {
						diag_plain_error(d, "the worker cannot be restarted: %s", w2.data);
						strbuf_finish(&w2);
						free(mm.note);
						free(mm.samples);
						json_decref(rr);
						status = 3;
						goto out;
					}
					json_decref(rr);
					strbuf_finish(&w2);
					s.restarts++;
				}
			}
			json_decref(ldims);
			if (mm.status == MS_OK && mm.time_ms < best)
				best = mm.time_ms;
			if (db_record(db, &mm) < 0) {
				diag_plain_error(d, "cannot write %s: %s", db->journal_path, strerror(errno));
				free(mm.note);
				free(mm.samples);
				status = 3;
				goto out;
			}
			if (o->verbose) {
				strbuf sb;
				strbuf_init(&sb);
				shape_format(&sb, k, &ss, si);
				fprintf(stderr, "aotc: %s %s: %s", sb.data, cf.names[c], meas_status_name(mm.status));
				if (mm.status == MS_OK)
					fprintf(stderr, " %.4f ms%s", mm.time_ms, mm.screened ? " (screened)" : "");
				else if (mm.note)
					fprintf(stderr, " (%.200s)", mm.note);
				fputc('\n', stderr);
				strbuf_finish(&sb);
			}
			free(mm.note);
			free(mm.samples);
			measured++;
			pr.done++;
			show_progress(&pr, &p, false);
			if (db->unsaved >= 1000 && db_save(db) < 0) {
				diag_plain_error(d, "cannot write %s: %s", db->path, strerror(errno));
				status = 3;
				goto out;
			}
		}
	}
	show_progress(&pr, &p, true);
	double wall = now_s() - t0;
	if (db_save(db) < 0) {
		diag_plain_error(d, "cannot write %s: %s", db->path, strerror(errno));
		status = 3;
		goto out;
	}
	int cached = 0;
	for (int i = 0; i < p.njobs; i++)
		cached += p.jobs[i].state == JOB_DONE && p.jobs[i].cached;
	if (!o->quiet) {
		print_summary(k, db, &cf, &ss, dbc, dbs);
		double cwall = p.njobs ? p.finished_at - p.started_at : 0;
		printf("\n%d measurements taken, %d reused, in %.1f s (checking %.1f s, timing %.1f s, shape setup %.1f s); "
		       "%d compiled (%d from cache) in %.1f s on %d threads (%.1f variants/s, %.1f s of compile time); %d worker restarts\n",
		       measured, reused, wall, check_ms / 1e3, timing_ms / 1e3, shape_ms / 1e3,
		       pool_done(&p), cached, cwall, p.nthreads, cwall > 0 ? pool_done(&p) / cwall : 0,
		       p.busy_s, s.restarts);
		if (out_of_budget)
			printf("stopped at the --budget; run again to go on from here\n");
		printf("database: %s\n", db->path);
	}
	bool any_ok = false;
	for (int i = 0; i < db->nmeas && !any_ok; i++)
		any_ok = db->meas[i].status == MS_OK;
	if (!any_ok && !out_of_budget)
		status = 4;
out:
	if (pool_started)
		pool_finish(&p);
	else
		free(p.cache_dir);
	worker_stop(s.w);
	free(abs);
	json_decref(s.init);
	json_decref(s.device);
	json_decref(s.shape_req);
	db_close(db);
	free(dbc);
	free(dbs);
	free(cf.values);
	free(cf.names);
	free(cf.job);
	arena_finish(&cf.a);
	shape_set_finish(&ss);
	free(params);
	strbuf_finish(&why);
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

int tune_compile_only(const aotc_module *m, const kernel *k, const tune_options *o, diags *d)
{
	const rt_ops *ops;
	int status = backend_for_kernel(k, o, &ops, d);
	if (status != 0)
		return status;
	configs cf = {.k = k};
	arena_init(&cf.a);
	pool p = {0};
	char *abs = NULL;
	bool started = false;
	ir_enumerate(k, add_config, &cf);
	if (cf.n == 0) {
		diag_error(d, k->loc, "no configuration of '%s' satisfies its AOTC_REQUIREs", k->name);
		status = 1;
		goto out;
	}
	rt_compile_request req;
	if (!choose_compiler(ops, m, o, &req, &abs, d)) {
		status = 3;
		goto out;
	}
	p.ops = ops;
	p.req = req;
	p.compiler_id = req.compiler;
	p.source_hash = m->source_hash;
	p.cache_dir = cache_dir();
	if (mkdir_p(p.cache_dir) < 0) {
		diag_plain_error(d, "cannot create the compile cache %s: %s", p.cache_dir, strerror(errno));
		status = 3;
		goto out;
	}
	int ref_job = k->reference ? pool_add(&p, k->reference) : -1;
	cf.job = xcalloc((size_t)cf.n, sizeof *cf.job);
	for (int c = 0; c < cf.n; c++) {
		char *inst = instance_of(cf.names[c]);
		cf.job[c] = pool_add(&p, inst);
		free(inst);
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	pool_start(&p, o->jobs > 0 ? o->jobs : (int)(cores > 0 ? cores : 1));
	started = true;
	if (!o->quiet)
		fprintf(stderr, "aotc: compiling %s for %s with %s: %d configurations%s on %d threads\n",
		        k->name, o->arch, req.compiler, cf.n, k->reference ? " and the reference" : "",
		        p.nthreads);
	bool ref_ok = true;
	if (ref_job >= 0) {
		const job *j = pool_wait(&p, ref_job);
		ref_ok = j->rs == RT_OK;
		if (!ref_ok) {
			diag_error(d, k->reference_loc, "the reference '%s' does not compile:\n%s",
			           k->reference, j->log ? j->log : rt_status_name(j->rs));
			status = 1;
		}
	}
	int ok = 0, cached = 0;
	bool env = false;
	for (int c = 0; c < cf.n; c++) {
		const job *j = pool_wait(&p, cf.job[c]);
		cached += j->cached;
		if (j->rs == RT_OK) {
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
	printf("%s: %d of %d configurations compiled for %s with %s (%d from cache) in %.1f s on %d threads; reference %s\n",
	       k->name, ok, cf.n, o->arch, req.compiler, cached, wall, p.nthreads,
	       !k->reference ? "none" : ref_ok ? "compiled" : "failed");
	if (status == 0 && ok == 0) {
		diag_plain_error(d, "no configuration of '%s' compiles", k->name);
		status = env ? 3 : 4;
	}
out:
	if (started)
		pool_finish(&p);
	else
		free(p.cache_dir);
	free(abs);
	free(cf.values);
	free(cf.names);
	free(cf.job);
	arena_finish(&cf.a);
	return status;
}
