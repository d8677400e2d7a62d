#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

char *cache_dir(void)
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
static void cache_key(const pool *p, const job *j, char out[33])
{
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "aotc-cache-2\n%s\n%s\n%s\n%s\n%s\n", AOTC_VERSION_STRING,
	              p->compiler_id, p->req.arch, p->source_hash, j->instance);
	if (j->ext)
		strbuf_printf(&sb, "extern %d\n", j->ext_nparams);
	if (j->on_host)
		strbuf_printf(&sb, "host %d\n", j->ext_nparams);
	for (int i = 0; i < p->req.nlibs; i++)
		strbuf_printf(&sb, "-l%s\n", p->req.libs[i]);
	for (int i = 0; i < p->req.ninclude_dirs; i++)
		strbuf_printf(&sb, "-I%s\n", p->req.include_dirs[i]);
	for (int i = 0; i < p->req.ndefines; i++)
		strbuf_printf(&sb, "-D%s\n", p->req.defines[i]);
	hash_hex(sb.data, sb.len, out);
	strbuf_finish(&sb);
}

/* ---- The cache ---------------------------------------------------------------
 *
 * Per variant, under its key: <key>.bin and <key>.sym when it compiled (the
 * blob first: a reader that finds the symbol finds the blob; the variants
 * of one batch share one file through hard links), <key>.err when it did
 * not (RT_ERR_COMPILE or RT_ERR_RESOURCES: the status's name, a newline,
 * the log), so a failure is not compiled again either. An environment
 * error (no compiler, a full disk) is not the variant's and is not kept. */

static char *cache_path(const pool *p, const char *key, const char *ext)
{
	strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "%s/%s.%s", p->cache_dir, key, ext);
	return sb.data;
}

/* Fills j from the cache; false when the key has no entry. */
static bool cache_lookup(const pool *p, job *j, const char *key)
{
	char *bin = cache_path(p, key, "bin"), *sym = cache_path(p, key, "sym"), *errp = cache_path(p, key, "err");
	size_t n;
	char *symbol = read_file(sym, &n), *failed = symbol ? NULL : read_file(errp, &n);
	struct stat st;
	bool found = false;
	if (symbol && stat(bin, &st) == 0) {
		j->rs = RT_OK;
		j->symbol = symbol;
		j->path = bin;
		bin = NULL;
		symbol = NULL;
		found = true;
	} else if (failed) {
		size_t line = strcspn(failed, "\n");
		bool resources = line == strlen(rt_status_name(RT_ERR_RESOURCES)) &&
		                 !strncmp(failed, rt_status_name(RT_ERR_RESOURCES), line);
		bool compile = line == strlen(rt_status_name(RT_ERR_COMPILE)) &&
		               !strncmp(failed, rt_status_name(RT_ERR_COMPILE), line);
		if (resources || compile) {
			j->rs = resources ? RT_ERR_RESOURCES : RT_ERR_COMPILE;
			j->log = xstrdup(failed[line] ? failed + line + 1 : "");
			found = true;
		}
	}
	j->cached = found;
	free(symbol);
	free(failed);
	free(bin);
	free(sym);
	free(errp);
	return found;
}

/* Keeps j's outcome under key: its blob (written to bin, or linked to
 * shared, a file of the same bytes already in the cache), its symbol, or
 * its failure. RT_ERR_ENV when the cache cannot be written. */
static rt_status cache_store(const pool *p, job *j, const char *key, const rt_blob *blob, const char *shared,
                             strbuf *err)
{
	if (j->rs != RT_OK) {
		if (j->rs == RT_ERR_COMPILE || j->rs == RT_ERR_RESOURCES) {
			char *errp = cache_path(p, key, "err");
			strbuf text;
			strbuf_init(&text);
			strbuf_printf(&text, "%s\n%s", rt_status_name(j->rs), err->data);
			write_file_atomic(errp, text.data, text.len); /* a cache: losing it costs a compile */
			strbuf_finish(&text);
			free(errp);
		}
		return j->rs;
	}
	char *bin = cache_path(p, key, "bin"), *sym = cache_path(p, key, "sym");
	bool ok = false;
	if (shared) {
		/* the batch's file once on disk: a link, renamed into place */
		char *tmp = cache_path(p, key, "bin.link");
		unlink(tmp);
		ok = link(shared, tmp) == 0 && rename(tmp, bin) == 0;
		if (!ok)
			unlink(tmp);
		free(tmp);
	}
	if ((ok || write_file_atomic(bin, blob->data, blob->size) == 0) &&
	    write_file_atomic(sym, j->symbol, strlen(j->symbol)) == 0) {
		j->path = bin;
		bin = NULL;
	} else {
		j->rs = RT_ERR_ENV;
		strbuf_printf(err, "cannot write the compile cache %s: %s", p->cache_dir, strerror(errno));
	}
	free(bin);
	free(sym);
	return j->rs;
}

/* ---- Compiling ---------------------------------------------------------------- */

static bool plain(const job *j) { return !j->ext && !j->on_host; }

/* One job, alone: compiled and kept in the cache. */
static void compile_one(pool *p, job *j, const char *key)
{
	double t0 = monotonic_s();
	rt_compile_request req = p->req;
	req.instance = j->instance;
	if (j->ext || j->on_host) {
		req.extern_fn = j->instance;
		req.extern_nparams = j->ext_nparams;
		req.on_host = j->on_host;
	}
	rt_blob blob = {0};
	strbuf err;
	strbuf_init(&err);
	j->rs = p->ops->compile(&req, &blob, &err);
	if (j->rs == RT_OK)
		j->symbol = xstrdup(blob.symbol);
	if (cache_store(p, j, key, &blob, NULL, &err) != RT_OK)
		j->log = xstrdup(err.data);
	rt_blob_finish(&blob);
	strbuf_finish(&err);
	j->seconds = monotonic_s() - t0;
}

/* Jobs js[0..n) (plain instances, keys[i] theirs) in one compiler run; a
 * batch that fails is split in two, down to single variants, so that a
 * failing variant costs the others nothing but the runs that find it. */
static void compile_group(pool *p, job **js, char (*keys)[33], int n)
{
	if (n <= 1 || !plain(js[0]) || !p->ops->compile_batch) {
		for (int i = 0; i < n; i++)
			compile_one(p, js[i], keys[i]);
		return;
	}
	double t0 = monotonic_s();
	const char **inst = xcalloc((size_t)n, sizeof *inst);
	char **symbols = xcalloc((size_t)n, sizeof *symbols);
	for (int i = 0; i < n; i++)
		inst[i] = js[i]->instance;
	rt_blob blob = {0};
	strbuf err;
	strbuf_init(&err);
	rt_status st = p->ops->compile_batch(&p->req, inst, n, &blob, symbols, &err);
	atomic_fetch_add(&p->batches, 1);
	if (st == RT_OK) {
		const char *shared = NULL;
		for (int i = 0; i < n; i++) {
			job *j = js[i];
			j->rs = RT_OK;
			j->symbol = symbols[i];
			symbols[i] = NULL;
			err.len = 0;
			err.data[0] = 0;
			if (cache_store(p, j, keys[i], &blob, shared, &err) != RT_OK)
				j->log = xstrdup(err.data);
			else if (!shared)
				shared = j->path;
			j->seconds = (monotonic_s() - t0) / n;
		}
	} else if (st == RT_ERR_ENV) {
		for (int i = 0; i < n; i++) {
			js[i]->rs = st;
			js[i]->log = xstrdup(err.data);
			js[i]->seconds = (monotonic_s() - t0) / n;
		}
	} else {
		atomic_fetch_add(&p->splits, 1);
		compile_group(p, js, keys, n / 2);
		compile_group(p, js + n / 2, keys + n / 2, n - n / 2);
	}
	rt_blob_finish(&blob);
	strbuf_finish(&err);
	for (int i = 0; i < n; i++)
		free(symbols[i]);
	free(symbols);
	free(inst);
}

/* Jobs js[0..n) (at most RT_BATCH_MAX, from take_batch: plain instances,
 * or one job): what the cache has, then the rest compiled together. */
static void run_jobs(pool *p, job **js, int n)
{
	job *missing[RT_BATCH_MAX]; /* not in the cache */
	char keys[RT_BATCH_MAX][33];
	int m = 0;
	for (int i = 0; i < n; i++) {
		double t0 = monotonic_s();
		cache_key(p, js[i], keys[m]);
		if (cache_lookup(p, js[i], keys[m]))
			js[i]->seconds = monotonic_s() - t0;
		else
			missing[m++] = js[i];
	}
	compile_group(p, missing, keys, m);
}

/* After job j is taken: more pending plain instances to compile with it in
 * one run, taken from where the pool hands out jobs (the wanted list on
 * demand, else the list in order), as many as share the pending work out
 * among the threads, at most the backend's batch limit. Returns how many
 * jobs batch holds (j first). Called with the lock held. */
static int take_batch(pool *p, int j, int *batch)
{
	batch[0] = j;
	if (p->batch_max <= 1 || !plain(&p->jobs[j]))
		return 1;
	int left = 0;
	if (p->on_demand) {
		for (int i = p->wanted_at; i < p->nwanted; i++)
			left += p->jobs[p->wanted[i]].state == JOB_PENDING && plain(&p->jobs[p->wanted[i]]);
	} else {
		for (int i = p->next; i < p->njobs; i++)
			left += p->jobs[i].state == JOB_PENDING && plain(&p->jobs[i]);
	}
	int want = (left + 1 + p->nthreads - 1) / p->nthreads;
	if (want > p->batch_max)
		want = p->batch_max;
	int n = 1;
	int at = p->on_demand ? p->wanted_at : p->next;
	int end = p->on_demand ? p->nwanted : p->njobs;
	for (int i = at; i < end && n < want; i++) {
		int c = p->on_demand ? p->wanted[i] : i;
		if (c != j && p->jobs[c].state == JOB_PENDING && plain(&p->jobs[c])) {
			p->jobs[c].state = JOB_RUNNING;
			batch[n++] = c;
		}
	}
	return n;
}

static void *pool_thread(void *arg)
{
	pool *p = arg;
	int *batch = xcalloc((size_t)RT_BATCH_MAX + 1, sizeof *batch);
	job **js = xcalloc((size_t)RT_BATCH_MAX + 1, sizeof *js);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		job *j = NULL;
		while (!j && p->nurgent > 0) {
			job *u = &p->jobs[p->urgent[--p->nurgent]];
			j = u->state == JOB_PENDING ? u : NULL;
		}
		while (!j && p->on_demand && p->wanted_at < p->nwanted) {
			job *u = &p->jobs[p->wanted[p->wanted_at++]];
			j = u->state == JOB_PENDING ? u : NULL;
		}
		while (!j && !p->on_demand && p->next < p->njobs) {
			job *u = &p->jobs[p->next++];
			j = u->state == JOB_PENDING ? u : NULL;
		}
		if (!j && p->on_demand && !p->stopping) {
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		if (!j)
			break;
		j->state = JOB_RUNNING;
		int n = take_batch(p, (int)(j - p->jobs), batch);
		for (int i = 0; i < n; i++)
			js[i] = &p->jobs[batch[i]];
		pthread_mutex_unlock(&p->mu);
		run_jobs(p, js, n);
		pthread_mutex_lock(&p->mu);
		for (int i = 0; i < n; i++) {
			js[i]->state = JOB_DONE;
			p->done++;
			p->busy_s += js[i]->seconds;
		}
		p->finished_at = monotonic_s();
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	free(batch);
	free(js);
	return NULL;
}

static int add_job(pool *p, const char *instance, const extern_fn *ext, bool on_host, int nparams)
{
	for (int i = 0; i < p->njobs; i++)
		if (!strcmp(p->jobs[i].instance, instance) && !p->jobs[i].ext == !ext &&
		    p->jobs[i].on_host == on_host)
			return i;
	p->jobs = xrealloc(p->jobs, (size_t)(p->njobs + 1) * sizeof *p->jobs);
	p->urgent = xrealloc(p->urgent, (size_t)(p->njobs + 1) * sizeof *p->urgent);
	p->wanted = xrealloc(p->wanted, (size_t)(p->njobs + 1) * sizeof *p->wanted);
	p->jobs[p->njobs] = (job){.instance = xstrdup(instance), .ext = ext, .on_host = on_host,
	                          .ext_nparams = nparams};
	return p->njobs++;
}

int pool_add(pool *p, const char *instance) { return add_job(p, instance, NULL, false, 0); }

int pool_add_extern(pool *p, const extern_fn *e, int nparams)
{
	return add_job(p, e->name, e, false, nparams);
}

int pool_add_routine(pool *p, const char *instance, int nparams)
{
	/* called like an extern: the job's ext only tells the kind */
	static const extern_fn routine = {.name = "(host launcher)"};
	return add_job(p, instance, &routine, false, nparams);
}

int pool_add_host_fn(pool *p, const char *fn, int nparams)
{
	return add_job(p, fn, NULL, true, nparams);
}

rt_status pool_probe(pool *p, char **log)
{
	*log = NULL;
	if (!p->ops->compile_batch || !p->ops->batch_limit || p->ops->batch_limit(&p->req) <= 1)
		return RT_OK;
	rt_blob blob = {0};
	strbuf err;
	strbuf_init(&err);
	rt_status st = p->ops->compile_batch(&p->req, NULL, 0, &blob, NULL, &err);
	if (st != RT_OK)
		*log = xstrdup(err.data);
	rt_blob_finish(&blob);
	strbuf_finish(&err);
	return st;
}

rt_status pool_first(pool *p, int j)
{
	job *jb = &p->jobs[j];
	p->started_at = monotonic_s();
	run_jobs(p, &jb, 1);
	jb->state = JOB_DONE;
	p->done++;
	p->busy_s += jb->seconds;
	return jb->rs;
}

void pool_start(pool *p, int nthreads, bool on_demand)
{
	p->on_demand = on_demand;
	p->batch_max = p->ops->batch_limit && p->ops->compile_batch ? p->ops->batch_limit(&p->req) : 1;
	if (p->batch_max > RT_BATCH_MAX)
		p->batch_max = RT_BATCH_MAX;
	/* AOTC_COMPILE_BATCH=N: at most N a run (1: one at a time), for
	 * measuring what batching gains (bench/compile-batch.sh) */
	const char *env = getenv("AOTC_COMPILE_BATCH");
	if (env && atoi(env) >= 1 && atoi(env) < p->batch_max)
		p->batch_max = atoi(env);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->nthreads = nthreads < p->njobs ? nthreads : p->njobs;
	p->threads = xcalloc((size_t)p->nthreads + 1, sizeof *p->threads);
	if (!p->started_at)
		p->started_at = monotonic_s();
	for (int i = 0; i < p->nthreads; i++)
		if (pthread_create(&p->threads[i], NULL, pool_thread, p) != 0)
			die("pthread_create failed");
}

const job *pool_wait(pool *p, int j)
{
	pthread_mutex_lock(&p->mu);
	if (p->jobs[j].state == JOB_PENDING) {
		p->urgent[p->nurgent++] = j; /* at most once: it is then taken */
		pthread_cond_broadcast(&p->cv);
	}
	while (p->jobs[j].state != JOB_DONE)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return &p->jobs[j];
}

void pool_want(pool *p, int j)
{
	pthread_mutex_lock(&p->mu);
	bool asked = false;
	for (int i = 0; i < p->nwanted && !asked; i++)
		asked = p->wanted[i] == j;
	if (!asked && p->nwanted < p->njobs && p->jobs[j].state == JOB_PENDING) {
		p->wanted[p->nwanted++] = j;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
}

int pool_done(pool *p)
{
	pthread_mutex_lock(&p->mu);
	int d = p->done;
	pthread_mutex_unlock(&p->mu);
	return d;
}

void pool_finish(pool *p)
{
	if (p->threads) { /* started */
		pthread_mutex_lock(&p->mu);
		p->next = p->njobs;
		p->nurgent = 0;
		p->nwanted = p->wanted_at = 0;
		p->stopping = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		for (int i = 0; i < p->nthreads; i++)
			pthread_join(p->threads[i], NULL);
	}
	for (int i = 0; i < p->njobs; i++) {
		free(p->jobs[i].instance);
		free(p->jobs[i].path);
		free(p->jobs[i].symbol);
		free(p->jobs[i].log);
	}
	free(p->jobs);
	free(p->urgent);
	free(p->wanted);
	free(p->cache_dir);
	if (p->threads) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	free(p->threads);
}

