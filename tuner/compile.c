#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

static void run_job(pool *p, job *j)
{
	double t0 = monotonic_s();
	char key[33];
	cache_key(p, j, key);
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
		j->seconds = monotonic_s() - t0;
		return;
	}
	free(symbol);
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
	j->seconds = monotonic_s() - t0;
}

static void *pool_thread(void *arg)
{
	pool *p = arg;
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
		pthread_mutex_unlock(&p->mu);
		run_job(p, j);
		pthread_mutex_lock(&p->mu);
		j->state = JOB_DONE;
		p->done++;
		p->busy_s += j->seconds;
		p->finished_at = monotonic_s();
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
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

void pool_start(pool *p, int nthreads, bool on_demand)
{
	p->on_demand = on_demand;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->nthreads = nthreads < p->njobs ? nthreads : p->njobs;
	p->threads = xcalloc((size_t)p->nthreads + 1, sizeof *p->threads);
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
	pthread_mutex_lock(&p->mu);
	p->next = p->njobs;
	p->nurgent = 0;
	p->nwanted = p->wanted_at = 0;
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
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
	free(p->urgent);
	free(p->wanted);
	free(p->threads);
	free(p->cache_dir);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}

