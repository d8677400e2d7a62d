/* The compile stage: a pool of threads that compiles each instantiation
 * once, through an on-disk cache (AOTC_CACHE_DIR, else
 * $XDG_CACHE_HOME/aotc, else ~/.cache/aotc) keyed by everything the bytes
 * depend on, which keeps failures too (a variant that does not compile is
 * not compiled again). Jobs run in the order they were added, except that a
 * job someone waits for is taken next. An on-demand pool (the model search,
 * which measures a small part of a large space) compiles only the jobs
 * asked for with pool_want or pool_wait. Where the backend batches (nvcc,
 * hipcc: rt_ops.batch_limit), a thread takes several pending instances at
 * once, as many as share the pending work out among the threads, and
 * compiles them in one compiler run; a batch that fails is split until the
 * failing variants are alone. */
#ifndef AOTC_COMPILE_H
#define AOTC_COMPILE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "backend.h"

typedef enum { JOB_PENDING, JOB_RUNNING, JOB_DONE } job_state;

typedef struct job {
	char *instance;       /* for an extern or a host function: its name */
	const extern_fn *ext; /* an AOTC_EXTERN routine (borrowed), or NULL */
	bool on_host;         /* a host function run on host memory (rt_compile_request) */
	int ext_nparams;      /* what its caller passes it (rt_compile_request) */
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
	int *urgent, nurgent; /* jobs waited for, taken before next */
	int *wanted, nwanted, wanted_at; /* on demand: jobs asked for, FIFO */
	bool on_demand, stopping;
	int nthreads;
	pthread_t *threads;
	const rt_ops *ops;
	rt_compile_request req;   /* instance filled per job */
	char *cache_dir;
	const char *compiler_id;
	const char *source_hash;
	double busy_s;
	double started_at, finished_at; /* first job taken, last job done */
	int batch_max;            /* instances per compiler run (pool_start; AOTC_COMPILE_BATCH) */
	atomic_int batches, splits; /* compiler runs of several instances; failing ones split */
} pool;

/* The compile cache's directory, malloc'd. */
char *cache_dir(void);

/* The job for instance (added unless there); its index. Before pool_start. */
int pool_add(pool *p, const char *instance);
/* The job for extern routine e, called with nparams arguments (added unless
 * there; e is borrowed); its index. Before pool_start. */
int pool_add_extern(pool *p, const extern_fn *e, int nparams);
/* A host launcher's instance ("splitk<4>"), called like an AOTC_EXTERN
 * routine with nparams arguments (the kernel's and the stream). */
int pool_add_routine(pool *p, const char *instance, int nparams);
/* The job for host function fn (a __global__ kernel's host reference),
 * called with nparams arguments on host memory (added unless there); its
 * index. Before pool_start. */
int pool_add_host_fn(pool *p, const char *fn, int nparams);
/* Compiles job j now, in this thread, before pool_start: the reference,
 * which every measurement needs and whose failure (the file itself does
 * not compile) ends the work before any variant is compiled. Its status. */
rt_status pool_first(pool *p, int j);
/* Where the backend batches and there is no reference to compile first:
 * the file alone, with no instance, in one compiler run before pool_start.
 * A failure there (a syntax error, a header that does not compile) is the
 * file's, and every variant would repeat it: its status, *log the
 * compiler's (malloc'd). RT_OK where there is nothing to probe. */
rt_status pool_probe(pool *p, char **log);
void pool_start(pool *p, int nthreads, bool on_demand);
/* Asks for job j (on demand: to be compiled in the order asked). */
void pool_want(pool *p, int j);
/* Waits for job j (taking it next if nobody has). */
const job *pool_wait(pool *p, int j);
int pool_done(pool *p);
/* Stops handing out jobs, joins the threads and frees the pool (started
 * or not). */
void pool_finish(pool *p);

#endif
