/* Both ends of the worker protocol (worker.h). The worker side keeps, per
 * shape, every buffer twice on the device (the working copy and a pristine
 * one it is restored from before each checked run) and a copy of the
 * reference outputs, so checking a variant never moves data to the host. */
#define _GNU_SOURCE /* fegetexcept, dl_iterate_phdr, pipe2 */
#include "worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <link.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "backend.h"
#include "elements.h"
#include "ir.h"
#include "shapes.h"

extern char **environ;

/* ---- Worker side --------------------------------------------------------- */

/* Every buffer the worker allocates has a guard zone of GUARD bytes on each
 * side (and, past its end, whatever the allocation has beyond the bytes in
 * use), filled with a pattern of its own (rt_pattern_byte, seeded per
 * buffer and per copy), so that a variant that copies one guard into
 * another, as an off-by-one copy loop does, changes what is there. A
 * variant that writes outside a buffer changes a zone, which is found by
 * scanning them all after each checked launch. Where the backend can seal
 * memory (the host: mprotect), the pristine inputs and the reference
 * outputs are read-only while variants run, so a write into them, however
 * far, faults instead of corrupting them. */
enum { GUARD = 128 * 1024 };

typedef struct guarded {
	rt_ptr base;       /* the allocation; 0 when none */
	size_t alloc;      /* its bytes: GUARD + data + tail guard */
	rt_ptr data;       /* base + GUARD */
	size_t bytes;      /* in use; the rest up to alloc - GUARD is guard too */
	uint64_t pattern;  /* the seed of its guard pattern, over offsets from base */
	bool sealed;
} guarded;

/* Two input sets per shape: set 0 for the first checked launch and the
 * timing, set 1 (other values) for the last timed launch, which is checked
 * too, so a variant that is right only on its first call, or returns a
 * result cached from an earlier call, is wrong. */
enum { NSETS = 2 };

/* Every timed launch is checked while the checks so far took at most
 * CHECK_SHARE of the time of the timed launches so far (so that checking
 * adds at most a quarter to what a measurement costs), and at least every
 * CHECK_EVERY-th and the last one whatever they cost; untimed checked
 * launches follow until there are MIN_CHECKS (the method's min_checks,
 * --checks), within the same bound. A variant wrong on some of its calls
 * is caught there (one wrong on 30% of them passes 20 checks once in
 * 1250), not only one right on its first call alone. min_checks 1 checks
 * the first launch only, as Kernel Tuner does (bench/kerneltuner/). */
enum { CHECK_EVERY = 5, MIN_CHECKS = 20 };

typedef struct wbuf {
	const buffer *b;
	aotc_dtype t;
	size_t scalars, bytes;          /* for the variant being measured */
	guarded cur;                    /* what kernels run on */
	guarded pristine[NSETS];        /* in, inout: the inputs of each set */
	guarded ref[NSETS];             /* out, inout: the reference's outputs */
	size_t ref_scalars;
} wbuf;

/* The state of this process that a variant's host code can change and
 * that would change how later variants run or end (docs/database.md#what-a-variant-leaves-behind). */
typedef struct traces {
	int threads;               /* -1: /proc/self/status unreadable */
	uint64_t sig_ignored, sig_caught, sig_blocked;
	uintptr_t handler[65];     /* of each caught signal (a sanitizer's, say) */
	char cwd[4096];
	int fp_round, fp_traps;
	unsigned fp_flush;         /* x86: MXCSR's flush-to-zero and denormals-are-zero */
} traces;

/* Copies of the working buffers that timed launches take in turn (method
 * "cold_cache": "rotate", AOTC_COLD_CACHE=rotate): ncopies of them back to
 * back in one guarded allocation, so many that a copy's data has left the
 * last-level cache by the time its turn comes again, without a flush per
 * launch. */
typedef struct rotation {
	guarded arena;        /* ncopies copies of chunk bytes */
	size_t chunk;         /* one copy: every buffer, each 256-byte aligned */
	size_t *bytes;        /* per buffer: its bytes when laid out */
	int ncopies, next;
	bool ready;           /* laid out for bytes[] */
	bool filled;          /* holding input set 0 (inout buffers change) */
	int rotated;          /* launches timed on a copy in this request */
} rotation;

typedef struct loaded {
	char *path, *symbol;
	rt_function *f;
} loaded;

typedef struct wstate {
	const rt_ops *ops;
	rt_device *dev;
	aotc_module *m;
	const kernel *k;
	shape_set shapes;     /* only for its parameter map */
	uint64_t seed;
	/* method */
	int warmup, screen, min_samples, max_samples;
	int min_checks;       /* checked launches a cell; 1: the first only */
	double screen_factor, budget_ms;
	bool evict;           /* method "cold_cache": "evict" (cold_cache) */
	bool rotate;          /* method "cold_cache": "rotate" (rotation) */
	rotation rot;
	uint64_t flush_bytes; /* what the backend's full flush writes (info.flush_bytes) */
	/* the current shape */
	bool have_shape;
	int64_t *row, *params;
	uint64_t shape_seed;
	wbuf *bufs;
	bool have_ref[NSETS]; /* reference outputs are in bufs[].ref[set] */
	uint64_t *slots;      /* argument storage, one 8-byte slot per parameter */
	void **args;
	loaded *cache;
	int ncache;
	size_t cache_cap;
	/* A host reference's shared object: loaded once, never closed (it may
	 * hold the CUDA runtime, as an extern's caller does). */
	char *host_ref_path;
	rt_host_entry *host_ref;
	strbuf err;
	bool too_large;       /* err says the shape's buffers are over the limit */
	pid_t pid;            /* the worker's: a forked copy has another */
	FILE *proto;          /* the replies' stream: the real stdout */
	traces base;          /* what variants must leave as they found it */
} wstate;

/* Sends o (taken) as the answer to the request with id (json null: none),
 * with the worker's pid. A forked copy of the worker that got here (a
 * variant forked and its child returned into the worker's code) must not
 * answer: the tuner would take its reply for the worker's. */
static void reply(const wstate *w, json_t *o, json_t *id)
{
	if (getpid() != w->pid)
		_exit(0);
	if (json_is_integer(id))
		json_object_set(o, "id", id);
	json_object_set_new(o, "pid", json_integer(w->pid));
	char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	fputs(s, w->proto);
	fputc('\n', w->proto);
	fflush(w->proto);
	free(s);
	json_decref(o);
}

static json_t *status_reply(const char *status, const char *note)
{
	json_t *o = json_pack("{s:s}", "status", status);
	if (note && *note)
		json_object_set_new(o, "note", json_string(note));
	return o;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

/* Scalars: the value a parameter gets for this shape, in its own type. */
static void set_scalar_args(wstate *w)
{
	const kernel *k = w->k;
	for (int i = 0; i < k->nparams; i++) {
		const param *p = &k->params[i];
		if (p->is_pointer)
			continue;
		double v = (double)w->params[i]; /* an integer AOTC_VALUE was evaluated there */
		if (p->value >= 0 && dtype_is_floating(p->dtype) && k->values[p->value].is_float)
			v = k->values[p->value].fvalue;
		w->slots[i] = 0;
		if (dtype_is_integer(p->dtype) && p->dtype != DT_U64 && p->dtype != DT_I64) {
			/* exact for every 32-bit value */
			int64_t iv = w->params[i];
			memcpy(&w->slots[i], &iv, dtype_size(p->dtype)); /* little-endian */
		} else if (p->dtype == DT_I64 || p->dtype == DT_U64) {
			memcpy(&w->slots[i], &w->params[i], 8);
		} else {
			elem_set(&w->slots[i], p->dtype, 0, v);
		}
	}
}

/* ---- Guarded buffers ---- */

/* Which copy of a buffer a guard pattern is for: each has its own. */
enum { COPY_CUR, COPY_PRISTINE, COPY_REF = COPY_PRISTINE + 2, COPY_HOST = COPY_REF + 2, COPY_ROTATED };

static uint64_t guard_seed(const wstate *w, int buffer, int copy)
{
	return mix(mix(w->seed ^ 0x6a09e667f3bcc908ull, (uint64_t)buffer), (uint64_t)copy);
}

static rt_status g_alloc(wstate *w, guarded *g, size_t bytes, uint64_t pattern)
{
	size_t tail = GUARD + (256 - bytes % 256) % 256;
	if (bytes > SIZE_MAX - GUARD - tail) {
		strbuf_printf(&w->err, "cannot allocate %zu bytes", bytes);
		return RT_ERR_OTHER;
	}
	*g = (guarded){0};
	rt_status rs = w->ops->alloc(w->dev, GUARD + bytes + tail, &g->base, &w->err);
	if (rs != RT_OK)
		return rs;
	g->alloc = GUARD + bytes + tail;
	g->data = g->base + GUARD;
	g->bytes = bytes;
	g->pattern = pattern;
	return w->ops->fill_pattern(w->dev, g->base, pattern, 0, g->alloc, &w->err);
}

static void g_release(wstate *w, guarded *g)
{
	if (g->base)
		w->ops->release(w->dev, g->base);
	*g = (guarded){0};
}

/* Read-only from now on, where the backend can. */
static rt_status g_seal(wstate *w, guarded *g)
{
	if (!w->ops->seal)
		return RT_OK;
	rt_status rs = w->ops->seal(w->dev, g->base, true, &w->err);
	g->sealed = rs == RT_OK;
	return rs;
}

/* Uses bytes bytes of the data (no more than it was allocated with): the
 * bytes given up become guard. */
static rt_status g_use(wstate *w, guarded *g, size_t bytes)
{
	rt_status rs = RT_OK;
	if (bytes < g->bytes)
		rs = w->ops->fill_pattern(w->dev, g->data + bytes, g->pattern, GUARD + bytes,
		                          g->bytes - bytes, &w->err);
	g->bytes = bytes;
	return rs;
}

/* Scans both zones of g; on a difference says where in note (what names
 * the buffer) and restores the zone, so the next variant starts clean. */
static rt_status g_check(wstate *w, guarded *g, const char *what, bool *ok, strbuf *note)
{
	if (!g->base || g->sealed)
		return RT_OK; /* sealed: a write would have faulted */
	uint64_t first;
	rt_status rs = w->ops->scan_pattern(w->dev, g->base, g->pattern, 0, GUARD, &first, &w->err);
	if (rs != RT_OK)
		return rs;
	if (first < GUARD) {
		if (*ok)
			strbuf_printf(note, "%s: written before its start (first changed byte: start - %llu)", what,
			              (unsigned long long)(GUARD - first));
		*ok = false;
		if ((rs = w->ops->fill_pattern(w->dev, g->base, g->pattern, 0, GUARD, &w->err)) != RT_OK)
			return rs;
	}
	size_t at = GUARD + g->bytes, tail = g->alloc - at;
	if ((rs = w->ops->scan_pattern(w->dev, g->base + at, g->pattern, at, tail, &first, &w->err)) != RT_OK)
		return rs;
	if (first < tail) {
		if (*ok)
			strbuf_printf(note, "%s: written past its end (first changed byte: end + %llu)", what,
			              (unsigned long long)first);
		*ok = false;
		rs = w->ops->fill_pattern(w->dev, g->base + at, g->pattern, at, tail, &w->err);
	}
	return rs;
}

/* Every guard zone of the shape: the working buffers and, with all and
 * where they are not sealed, the pristine inputs and the reference's
 * outputs (a variant's launches between two full scans can only be
 * blamed on it: each measurement ends with one). */
static rt_status check_guards(wstate *w, bool all, bool *ok, strbuf *note)
{
	*ok = true;
	for (int i = 0; i < w->k->nbuffers; i++) {
		wbuf *b = &w->bufs[i];
		const char *name = w->k->params[b->b->param].name;
		char what[160];
		rt_status rs = g_check(w, &b->cur, name, ok, note);
		if (rs == RT_OK && all && i == 0 && w->rot.ready)
			rs = g_check(w, &w->rot.arena, "the rotated copies of the buffers", ok, note);
		for (int s = 0; s < NSETS && rs == RT_OK && all; s++) {
			snprintf(what, sizeof what, "the pristine copy of %s", name);
			if ((rs = g_check(w, &b->pristine[s], what, ok, note)) != RT_OK)
				break;
			snprintf(what, sizeof what, "the reference's copy of %s", name);
			rs = g_check(w, &b->ref[s], what, ok, note);
		}
		if (rs != RT_OK)
			return rs;
	}
	return RT_OK;
}

/* The rotated copies go with the buffers they copy. */
static void rot_release(wstate *w)
{
	g_release(w, &w->rot.arena);
	free(w->rot.bytes);
	w->rot = (rotation){.rotated = w->rot.rotated};
}

static void free_buffers(wstate *w)
{
	rot_release(w);
	if (!w->bufs)
		return;
	for (int i = 0; i < w->k->nbuffers; i++) {
		wbuf *b = &w->bufs[i];
		g_release(w, &b->cur);
		for (int s = 0; s < NSETS; s++) {
			g_release(w, &b->pristine[s]);
			g_release(w, &b->ref[s]);
		}
	}
	free(w->bufs);
	w->bufs = NULL;
}

/* "1.5 GiB", "300 MiB": a size for people. */
static void put_size(strbuf *sb, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		strbuf_printf(sb, "%.1f GiB", (double)bytes / (double)(1ull << 30));
	else
		strbuf_printf(sb, "%.1f MiB", (double)bytes / (double)(1ull << 20));
}

/* What the buffers take once sized to bytes[] (every copy, guard zones
 * included, allocations kept as they are where they are reused), against
 * the device's buffer_limit: RT_ERR_RESOURCES with w->too_large and the
 * reason in w->err when over it, so that a shape too large is refused
 * before anything is allocated. */
static rt_status check_footprint(wstate *w, const size_t *bytes)
{
	rt_device_info info;
	w->ops->describe(w->dev, &info);
	if (!info.buffer_limit)
		return RT_OK;
	uint64_t total = 0;
	for (int i = 0; i < w->k->nbuffers; i++) {
		const wbuf *b = &w->bufs[i];
		uint64_t one = (uint64_t)bytes[i] + 2 * (uint64_t)GUARD + 256;
		uint64_t cur = b->cur.base && bytes[i] <= b->cur.alloc - 2 * GUARD ? b->cur.alloc : one;
		total += cur * (b->b->role == ROLE_OUT ? 1 : 1 + NSETS);
		for (int s = 0; s < NSETS && b->b->role != ROLE_IN; s++)
			total += b->ref[s].base ? b->ref[s].alloc : one;
	}
	if (total <= info.buffer_limit)
		return RT_OK;
	strbuf_puts(&w->err, "the buffers need ");
	put_size(&w->err, total);
	strbuf_puts(&w->err, " (with the copies the checks keep), more than the limit of ");
	put_size(&w->err, info.buffer_limit);
	strbuf_puts(&w->err, " (on the host half of its memory, or AOTC_HOST_MEMORY_LIMIT)");
	w->too_large = true;
	return RT_ERR_RESOURCES;
}

/* Sizes (and if needed allocates and fills) every buffer for the given
 * tunable values (NULL for the reference). */
/* The buffers for a variant of function fk (the kernel or an alternative,
 * whose copies of the kernel's AOTC_BUFFERs are over its own tunables) with
 * these tunable values; NULL values: the reference's sizes. */
static rt_status ensure_buffers(wstate *w, const kernel *fk, const int64_t *values, const char **why)
{
	const kernel *k = w->k;
	eval_env env = {.tunables = values, .ntunables = values ? fk->ntunables : 0,
	                .params = w->params, .nparams = k->nparams};
	size_t *scalars = xcalloc((size_t)k->nbuffers + 1, sizeof *scalars);
	size_t *bytes = xcalloc((size_t)k->nbuffers + 1, sizeof *bytes);
	rt_status rs = RT_ERR_OTHER;
	for (int i = 0; i < k->nbuffers; i++) {
		const param *p = &k->params[w->bufs[i].b->param];
		int64_t count;
		eval_status st = expr_eval(fk->buffers[i].count.e, &env, &count);
		if (st != EVAL_OK || count < 0) {
			*why = st == EVAL_UNBOUND ? "buffer size depends on tunables the reference does not have"
			                          : "buffer size expression failed";
			goto out;
		}
		size_t esize = dtype_size(p->dtype) * (size_t)p->vec;
		if (esize && (uint64_t)count > SIZE_MAX / 2 / esize) {
			*why = "buffer size overflows";
			goto out;
		}
		scalars[i] = (size_t)count * (size_t)p->vec;
		bytes[i] = scalars[i] * dtype_size(p->dtype);
		if (bytes[i] == 0)
			bytes[i] = 1;
	}
	if ((rs = check_footprint(w, bytes)) != RT_OK)
		goto out;
	for (int i = 0; i < k->nbuffers; i++) {
		wbuf *b = &w->bufs[i];
		b->scalars = scalars[i];
		b->bytes = bytes[i];
		b->t = k->params[b->b->param].dtype;
		if (b->cur.base && b->bytes <= b->cur.alloc - 2 * GUARD) {
			if ((rs = g_use(w, &b->cur, b->bytes)) != RT_OK)
				goto out;
			continue;
		}
		/* Larger than before: new buffers, and inputs filled afresh (the
		 * same for every variant of this shape that needs this size). */
		g_release(w, &b->cur);
		for (int s = 0; s < NSETS; s++)
			g_release(w, &b->pristine[s]);
		if ((rs = g_alloc(w, &b->cur, b->bytes, guard_seed(w, i, COPY_CUR))) != RT_OK)
			goto out;
		if (b->b->role == ROLE_OUT)
			continue; /* poisoned before every run: no pristine copy */
		void *host = xmalloc(b->bytes);
		for (int s = 0; s < NSETS; s++) {
			uint64_t seed = mix(w->shape_seed, (uint64_t)i);
			if (s > 0)
				seed = mix(seed, 0x5e70000000000000ull + (uint64_t)s);
			elem_fill(host, b->t, b->scalars, &b->b->init, seed);
			if ((rs = g_alloc(w, &b->pristine[s], b->bytes, guard_seed(w, i, COPY_PRISTINE + s))) != RT_OK ||
			    (rs = w->ops->upload(w->dev, b->pristine[s].data, host, b->bytes, &w->err)) != RT_OK ||
			    (rs = g_seal(w, &b->pristine[s])) != RT_OK)
				break;
		}
		free(host);
		if (rs != RT_OK)
			goto out;
	}
	for (int i = 0; i < k->nbuffers; i++)
		w->slots[k->buffers[i].param] = w->bufs[i].cur.data;
	rs = RT_OK;
out:
	free(scalars);
	free(bytes);
	return rs;
}

/* Input set s, pristine; outputs poisoned. */
static rt_status prepare_run(wstate *w, int s)
{
	for (int i = 0; i < w->k->nbuffers; i++) {
		wbuf *b = &w->bufs[i];
		rt_status rs = b->b->role == ROLE_OUT
			? w->ops->memset8(w->dev, b->cur.data, elem_poison_byte(b->t), b->bytes, &w->err)
			: w->ops->copy(w->dev, b->cur.data, b->pristine[s].data, b->bytes, &w->err);
		if (rs != RT_OK)
			return rs;
	}
	return RT_OK;
}

/* The outputs now in the working buffers become reference set s. */
static rt_status take_reference(wstate *w, int s)
{
	for (int i = 0; i < w->k->nbuffers; i++) {
		wbuf *b = &w->bufs[i];
		if (b->b->role == ROLE_IN)
			continue;
		g_release(w, &b->ref[s]);
		rt_status rs;
		if ((rs = g_alloc(w, &b->ref[s], b->bytes, guard_seed(w, i, COPY_REF + s))) != RT_OK ||
		    (rs = w->ops->copy(w->dev, b->ref[s].data, b->cur.data, b->bytes, &w->err)) != RT_OK ||
		    (rs = g_seal(w, &b->ref[s])) != RT_OK)
			return rs;
		b->ref_scalars = b->scalars;
	}
	w->have_ref[s] = true;
	return RT_OK;
}

/* ---- A host reference ---- */

/* The host function at path (its entry point symbol), loaded once. */
static rt_host_entry *load_host_reference(wstate *w, const char *path, const char *symbol,
                                          rt_status *rs)
{
	*rs = RT_OK;
	if (w->host_ref && !strcmp(w->host_ref_path, path))
		return w->host_ref;
	rt_blob blob = {0};
	blob.data = read_file(path, &blob.size);
	if (!blob.data) {
		strbuf_printf(&w->err, "cannot read %s: %s", path, strerror(errno));
		*rs = RT_ERR_OTHER;
		return NULL;
	}
	void *so, *sym;
	/* Lazy: a library the file links but the reference does not call
	 * need not resolve. */
	*rs = rt_load_shared(&blob, "reference", RTLD_LAZY | RTLD_LOCAL, symbol, &so, &sym, &w->err);
	rt_blob_finish(&blob);
	if (*rs != RT_OK)
		return NULL;
	free(w->host_ref_path);
	w->host_ref_path = xstrdup(path);
	w->host_ref = (rt_host_entry *)sym;
	return w->host_ref;
}

/* Runs the host reference on input set s and makes its outputs reference
 * set s: every buffer gets a host copy with guard zones (inputs from the
 * pristine set, outputs poisoned, as a variant sees them), the function
 * is called with their addresses where a kernel gets device pointers and
 * the shape's scalars, the zones are checked (*ok false and note saying
 * where when written), and the outputs go to the device beside the ones a
 * reference kernel would leave there, so that variants are checked the
 * same way against either. */
static rt_status run_host_reference(wstate *w, rt_host_entry *entry, int s, bool *ok,
                                    strbuf *note)
{
	const kernel *k = w->k;
	rt_status rs = RT_OK;
	unsigned char **host = xcalloc((size_t)k->nbuffers + 1, sizeof *host);
	uint64_t *slots = xcalloc((size_t)k->nparams + 1, sizeof *slots);
	void **args = xcalloc((size_t)k->nparams + 1, sizeof *args);
	memcpy(slots, w->slots, (size_t)k->nparams * sizeof *slots);
	for (int i = 0; i < k->nparams; i++)
		args[i] = &slots[i];
	*ok = true;
	for (int i = 0; i < k->nbuffers; i++) {
		wbuf *b = &w->bufs[i];
		host[i] = xmalloc(b->bytes + 2 * (size_t)GUARD);
		rt_pattern_fill(host[i], guard_seed(w, i, COPY_HOST), 0, b->bytes + 2 * (size_t)GUARD);
		unsigned char *data = host[i] + GUARD;
		if (b->b->role == ROLE_OUT)
			memset(data, elem_poison_byte(b->t), b->bytes);
		else if ((rs = w->ops->download(w->dev, data, b->pristine[s].data, b->bytes, &w->err)) != RT_OK)
			goto out;
		slots[b->b->param] = (uint64_t)(uintptr_t)data;
	}
	entry(args);
	for (int i = 0; i < k->nbuffers && *ok; i++) {
		const wbuf *b = &w->bufs[i];
		const char *name = k->params[b->b->param].name;
		uint64_t seed = guard_seed(w, i, COPY_HOST), end = GUARD + b->bytes;
		if (rt_pattern_scan(host[i], seed, 0, GUARD) < GUARD)
			strbuf_printf(note, "%s: written before its start", name);
		else if (rt_pattern_scan(host[i] + end, seed, end, GUARD) < GUARD)
			strbuf_printf(note, "%s: written past its end", name);
		else
			continue;
		*ok = false;
	}
	for (int i = 0; i < k->nbuffers && *ok; i++) {
		wbuf *b = &w->bufs[i];
		if (b->b->role == ROLE_IN)
			continue;
		g_release(w, &b->ref[s]);
		if ((rs = g_alloc(w, &b->ref[s], b->bytes, guard_seed(w, i, COPY_REF + s))) != RT_OK ||
		    (rs = w->ops->upload(w->dev, b->ref[s].data, host[i] + GUARD, b->bytes, &w->err)) != RT_OK ||
		    (rs = g_seal(w, &b->ref[s])) != RT_OK)
			goto out;
		b->ref_scalars = b->scalars;
	}
	w->have_ref[s] = *ok;
out:
	for (int i = 0; i < k->nbuffers; i++)
		free(host[i]);
	free(host);
	free(slots);
	free(args);
	return rs;
}

static bool parse_launch(const json_t *o, rt_launch *l)
{
	memset(l, 0, sizeof *l);
	const json_t *g = json_object_get(o, "grid"), *b = json_object_get(o, "block");
	if (!json_is_array(g) || !json_is_array(b) || json_array_size(g) != 3 ||
	    json_array_size(b) != 3)
		return false;
	for (size_t i = 0; i < 3; i++) {
		l->grid[i] = (uint32_t)json_integer_value(json_array_get(g, i));
		l->block[i] = (uint32_t)json_integer_value(json_array_get(b, i));
	}
	l->smem = (uint32_t)json_integer_value(json_object_get(o, "smem"));
	return true;
}

static rt_function *load_blob(wstate *w, const char *path, const char *symbol, rt_status *rs)
{
	for (int i = 0; i < w->ncache; i++)
		if (!strcmp(w->cache[i].path, path) && !strcmp(w->cache[i].symbol, symbol)) {
			*rs = RT_OK;
			return w->cache[i].f;
		}
	rt_blob blob = {0};
	blob.data = read_file(path, &blob.size);
	if (!blob.data) {
		strbuf_printf(&w->err, "cannot read %s: %s", path, strerror(errno));
		*rs = RT_ERR_OTHER;
		return NULL;
	}
	blob.symbol = xstrdup(symbol);
	rt_function *f = NULL;
	*rs = w->ops->load(w->dev, &blob, &f, &w->err);
	rt_blob_finish(&blob);
	if (*rs != RT_OK)
		return NULL;
	if ((size_t)w->ncache == w->cache_cap) {
		w->cache_cap = w->cache_cap ? 2 * w->cache_cap : 64;
		w->cache = xrealloc(w->cache, w->cache_cap * sizeof *w->cache);
	}
	w->cache[w->ncache++] = (loaded){xstrdup(path), xstrdup(symbol), f};
	return f;
}

static const char *rs_status(rt_status rs)
{
	switch (rs) {
	case RT_ERR_FAULT: return "fault";
	case RT_ERR_RESOURCES: return "resources";
	case RT_ERR_ENV: return "environment";
	case RT_ERR_NO_DEVICE: return "no_device";
	case RT_ERR_COMPILE: return "compile_error";
	case RT_ERR_RETURNED: return "returned_error";
	default: return "error";
	}
}

static json_t *failure(wstate *w, rt_status rs)
{
	json_t *o = status_reply(rs_status(rs), w->err.data);
	if (w->too_large)
		json_object_set_new(o, "too_large", json_true());
	w->too_large = false;
	w->err.len = 0;
	w->err.data[0] = 0;
	return o;
}

static json_t *do_init(wstate *w, const json_t *req)
{
	const char *arch = json_string_value(json_object_get(req, "arch"));
	const char *kname = json_string_value(json_object_get(req, "kernel"));
	json_t *ir = json_object_get(req, "ir");
	const json_t *method = json_object_get(req, "method");
	if (!arch || !kname || !json_is_object(ir) || !json_is_object(method))
		return status_reply("error", "init needs arch, kernel, ir and method");
	w->ops = rt_backend_for(arch);
	if (!w->ops)
		return status_reply("environment", "this aotc has no backend for that architecture");
	char *text = json_dumps(ir, JSON_COMPACT);
	diags d;
	diags_init(&d);
	w->m = ir_from_json(text, strlen(text), "<ir>", &d);
	diags_finish(&d);
	free(text);
	w->k = w->m ? ir_find_kernel(w->m, kname) : NULL;
	if (!w->k)
		return status_reply("error", "the IR sent to the worker does not hold the kernel");
	shape_set_init(&w->shapes, w->k);
	w->seed = (uint64_t)json_integer_value(json_object_get(req, "seed"));
	w->warmup = (int)json_integer_value(json_object_get(method, "warmup"));
	w->screen = (int)json_integer_value(json_object_get(method, "screen_samples"));
	w->min_samples = (int)json_integer_value(json_object_get(method, "min_samples"));
	w->max_samples = (int)json_integer_value(json_object_get(method, "max_samples"));
	w->screen_factor = json_number_value(json_object_get(method, "screen_factor"));
	w->budget_ms = json_number_value(json_object_get(method, "budget_ms"));
	const json_t *checks = json_object_get(method, "min_checks");
	w->min_checks = json_is_integer(checks) ? (int)json_integer_value(checks) : MIN_CHECKS;
	const char *cold = json_string_value(json_object_get(method, "cold_cache"));
	w->evict = cold && !strcmp(cold, "evict");
	w->rotate = cold && !strcmp(cold, "rotate");
	w->slots = xcalloc((size_t)w->k->nparams + 1, sizeof *w->slots);
	w->args = xcalloc((size_t)w->k->nparams + 1, sizeof *w->args);
	for (int i = 0; i < w->k->nparams; i++)
		w->args[i] = &w->slots[i];
	w->row = xcalloc((size_t)w->shapes.nargs + 1, sizeof *w->row);
	w->params = xcalloc((size_t)w->k->nparams + 1, sizeof *w->params);
	const json_t *index = json_object_get(req, "device");
	rt_status rs = w->ops->open(&w->dev, arch, json_is_integer(index) ? (int)json_integer_value(index) : -1,
	                            &w->err);
	if (rs != RT_OK)
		return failure(w, rs);
	rt_device_info info;
	w->ops->describe(w->dev, &info);
	w->flush_bytes = info.flush_bytes;
	json_t *dev = json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:i, s:[i,i,i], s:[I,I,I], s:I, s:I, s:i, s:s, s:s}",
		"id", info.hardware_id, "backend", info.backend, "name", info.name,
		"arch", info.arch, "sm_count", info.sm_count,
		"memory_bytes", (json_int_t)info.memory_bytes, "l2_bytes", (json_int_t)info.l2_bytes,
		"max_threads_per_block", info.max_threads_per_block,
		"max_block_dims", info.max_block_dims[0], info.max_block_dims[1], info.max_block_dims[2],
		"max_grid_dims", (json_int_t)info.max_grid_dims[0], (json_int_t)info.max_grid_dims[1],
		(json_int_t)info.max_grid_dims[2],
		"smem_per_block", (json_int_t)info.smem_per_block,
		"smem_per_block_optin", (json_int_t)info.smem_per_block_optin,
		"clock_mhz", info.clock_mhz, "driver_version", info.driver_version,
		"runtime_version", info.runtime_version);
	json_t *o = status_reply("ok", NULL);
	json_object_set_new(o, "device", dev);
	json_object_set_new(o, "index", json_integer(info.index));
	json_object_set_new(o, "count", json_integer(info.count));
	return o;
}

static json_t *do_shape(wstate *w, const json_t *req)
{
	if (!w->k)
		return status_reply("error", "shape before init");
	const json_t *row = json_object_get(req, "row");
	if (!json_is_array(row) || (int)json_array_size(row) != w->shapes.nargs)
		return status_reply("error", "shape row has the wrong length");
	free_buffers(w);
	w->bufs = xcalloc((size_t)w->k->nbuffers + 1, sizeof *w->bufs);
	for (int i = 0; i < w->k->nbuffers; i++)
		w->bufs[i].b = &w->k->buffers[i];
	for (int s = 0; s < NSETS; s++)
		w->have_ref[s] = false;
	w->shape_seed = w->seed;
	for (int a = 0; a < w->shapes.nargs; a++) {
		w->row[a] = json_integer_value(json_array_get(row, (size_t)a));
		w->shape_seed = mix(w->shape_seed, (uint64_t)w->row[a]);
	}
	if (shape_param_values(w->k, &w->shapes, w->row, w->params) != EVAL_OK)
		return status_reply("invalid", "an AOTC_VALUE cannot be evaluated for this shape");
	/* The reference has no tunables: an AOTC_VALUE over them gets the
	 * first configuration's value (docs/annotations.md). */
	if (ir_has_per_variant(w->k)) {
		int64_t first[w->k->ntunables + 1];
		if (!ir_reference_values(w->k, first) ||
		    ir_variant_params(w->k, first, w->params) != EVAL_OK)
			return status_reply("invalid", "an AOTC_VALUE over tunables cannot be evaluated for the reference at this shape");
	}
	set_scalar_args(w);
	w->have_shape = true;

	const json_t *ref = json_object_get(req, "reference");
	if (!json_is_object(ref))
		return status_reply("ok", NULL);
	rt_launch dims;
	const char *blob = json_string_value(json_object_get(ref, "blob"));
	const char *symbol = json_string_value(json_object_get(ref, "symbol"));
	bool on_host = json_is_true(json_object_get(ref, "host"));
	if (!blob || !symbol || (!on_host && !parse_launch(json_object_get(ref, "launch"), &dims)))
		return status_reply("error", "malformed reference");
	const char *why = NULL;
	rt_status rs;
	rt_function *f = NULL;
	rt_host_entry *entry = NULL;
	if (on_host ? !(entry = load_host_reference(w, blob, symbol, &rs))
	            : !(f = load_blob(w, blob, symbol, &rs)))
		return failure(w, rs);
	if ((rs = ensure_buffers(w, w->k, NULL, &why)) != RT_OK)
		return why ? status_reply("error", why) : failure(w, rs);
	/* The reference runs on buffers no variant has touched (they are new
	 * for each shape) and its outputs are kept apart, sealed where the
	 * backend can. */
	for (int s = 0; s < NSETS; s++) {
		bool ok = false;
		strbuf note;
		strbuf_init(&note);
		if (on_host)
			rs = run_host_reference(w, entry, s, &ok, &note);
		else if ((rs = prepare_run(w, s)) == RT_OK &&
		         (rs = w->ops->launch(w->dev, f, &dims, w->args, NULL, &w->err)) == RT_OK &&
		         (rs = w->ops->sync(w->dev, &w->err)) == RT_OK)
			rs = check_guards(w, true, &ok, &note);
		if (rs != RT_OK) {
			strbuf_finish(&note);
			return failure(w, rs);
		}
		if (!ok) {
			strbuf msg;
			strbuf_init(&msg);
			strbuf_printf(&msg, "the %s writes outside its buffers: %s",
			              on_host ? "host reference" : "reference kernel", note.data);
			json_t *o = status_reply("error", msg.data);
			strbuf_finish(&msg);
			strbuf_finish(&note);
			return o;
		}
		strbuf_finish(&note);
		/* A host reference has put its outputs there itself. */
		if (!on_host && (rs = take_reference(w, s)) != RT_OK)
			return failure(w, rs);
	}
	return status_reply("ok", NULL);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Compares every output with reference set s; on a mismatch *note says how. */
static rt_status check_outputs(wstate *w, int s, double *error, bool *wrong, strbuf *note)
{
	const kernel *k = w->k;
	*error = 0;
	*wrong = false;
	for (int i = 0; i < k->nbuffers; i++) {
		wbuf *b = &w->bufs[i];
		if (b->b->role == ROLE_IN)
			continue;
		rt_compare c;
		size_t n = b->scalars < b->ref_scalars ? b->scalars : b->ref_scalars;
		rt_status rs = w->ops->compare(w->dev, b->cur.data, b->ref[s].data, b->t, n, &c, &w->err);
		if (rs != RT_OK)
			return rs;
		double e = dtype_is_floating(b->t) ? elem_rel_error(&c)
		           : (n ? (double)c.bad / (double)n : 0);
		double tol = k->has_tolerance ? k->tolerance : elem_default_tolerance(b->t);
		const char *name = k->params[b->b->param].name;
		if (c.bad && dtype_is_floating(b->t)) {
			strbuf_printf(note, "%s: %llu elements NaN, infinite or unwritten (first at %llu)",
			              name, (unsigned long long)c.bad, (unsigned long long)c.first_bad);
			*wrong = true;
			e = INFINITY;
		} else if (!(e <= tol)) {
			strbuf_printf(note, "%s: relative error %.3g exceeds %.3g", name, e, tol);
			*wrong = true;
		}
		if (e > *error)
			*error = e;
		if (*wrong)
			break;
	}
	return RT_OK;
}

/* After a launch on input set s: an `in` buffer is const to the variant,
 * so its working copy must still be the pristine one, bit for bit. On a
 * difference *changed and note says which. */
static rt_status check_inputs(wstate *w, int s, bool *changed, strbuf *note)
{
	*changed = false;
	for (int i = 0; i < w->k->nbuffers && !*changed; i++) {
		wbuf *b = &w->bufs[i];
		if (b->b->role != ROLE_IN)
			continue;
		/* The widest unsigned type that tiles the bytes: compared bits. */
		size_t word = b->bytes % 4 == 0 ? 4 : b->bytes % 2 == 0 ? 2 : 1;
		rt_compare c;
		rt_status rs = w->ops->compare(w->dev, b->cur.data, b->pristine[s].data,
		                               word == 4 ? DT_U32 : word == 2 ? DT_U16 : DT_U8,
		                               b->bytes / word, &c, &w->err);
		if (rs != RT_OK)
			return rs;
		if (c.bad) {
			size_t esize = dtype_size(b->t) ? dtype_size(b->t) : 1;
			strbuf_printf(note, "wrote into input %s (first changed element: %llu)",
			              w->k->params[b->b->param].name,
			              (unsigned long long)(c.first_bad * word / esize));
			*changed = true;
		}
	}
	return RT_OK;
}

typedef enum verdict { V_OK, V_WRONG, V_OUT_OF_BOUNDS } verdict;

/* Launches f; a forked copy of the worker returning here (the variant
 * forked) ends at once, before it runs anything else of the worker's. */
static rt_status run_launch(wstate *w, rt_function *f, const rt_launch *dims, double *ms)
{
	rt_status rs = w->ops->launch(w->dev, f, dims, w->args, ms, &w->err);
	if (getpid() != w->pid)
		_exit(0);
	return rs;
}

/* Before a timed launch, the caches cold for its data (method
 * "cold_cache"): with "evict", where the backend can evict lines (the
 * host) and the working buffers are smaller than its full flush, the
 * lines of the buffers' data leave every cache level (what the variant
 * reads and writes, at a cost of their size); else the full flush, which
 * writes twice the last-level cache (on the host, 600 MB here, for
 * kernels of microseconds: most of a host tune's time). The variant's
 * code and stack stay cached either way. */
static rt_status cold_cache(wstate *w)
{
	uint64_t total = 0;
	for (int i = 0; i < w->k->nbuffers && w->bufs; i++)
		total += w->bufs[i].cur.bytes;
	if (!w->evict || !w->ops->evict || total >= w->flush_bytes)
		return w->ops->flush_cache(w->dev, &w->err);
	rt_status rs = RT_OK;
	for (int i = 0; i < w->k->nbuffers && rs == RT_OK; i++)
		if (w->bufs[i].cur.bytes)
			rs = w->ops->evict(w->dev, w->bufs[i].cur.data, w->bufs[i].cur.bytes, &w->err);
	return rs;
}

/* A buffer's place in a rotated copy: its bytes, 256-byte aligned. */
static size_t rot_span(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* Lays the copies out for the buffers' sizes now, where they can rotate:
 * r->ready says whether they do. */
static rt_status rot_layout(wstate *w)
{
	rotation *r = &w->rot;
	const kernel *k = w->k;
	r->bytes = xmalloc((size_t)k->nbuffers * sizeof *r->bytes);
	size_t chunk = 0;
	for (int i = 0; i < k->nbuffers; i++) {
		r->bytes[i] = w->bufs[i].bytes;
		chunk += rot_span(w->bufs[i].bytes);
	}
	if (chunk >= w->flush_bytes)
		return RT_OK;
	/* (ncopies - 1) * chunk >= the flush's bytes */
	size_t n = (size_t)((w->flush_bytes + chunk - 1) / chunk) + 1;
	rt_device_info info;
	w->ops->describe(w->dev, &info);
	if (info.buffer_limit && n * chunk > info.buffer_limit / 4)
		return RT_OK;
	size_t at = w->err.len;
	rt_status rs = g_alloc(w, &r->arena, n * chunk, guard_seed(w, 0, COPY_ROTATED));
	if (rs == RT_ERR_RESOURCES) { /* no memory for them: flush */
		w->err.len = at;
		w->err.data[at] = 0;
		g_release(w, &r->arena);
		return RT_OK;
	}
	if (rs != RT_OK)
		return rs;
	r->chunk = chunk;
	r->ncopies = (int)n;
	r->ready = true;
	return RT_OK;
}

/* Every copy: input set 0, outputs poisoned; then the cache flushed of
 * the copying. */
static rt_status rot_fill(wstate *w)
{
	rotation *r = &w->rot;
	rt_status rs = RT_OK;
	size_t off = 0;
	for (int i = 0; i < w->k->nbuffers && rs == RT_OK; i++) {
		wbuf *b = &w->bufs[i];
		rs = b->b->role == ROLE_OUT
			? w->ops->memset8(w->dev, r->arena.data + off, elem_poison_byte(b->t), b->bytes, &w->err)
			: w->ops->copy(w->dev, r->arena.data + off, b->pristine[0].data, b->bytes, &w->err);
		off += rot_span(b->bytes);
	}
	/* the first copy into the others, doubling */
	size_t n = (size_t)r->ncopies;
	for (size_t have = 1; have < n && rs == RT_OK; have *= 2)
		rs = w->ops->copy(w->dev, r->arena.data + have * r->chunk, r->arena.data,
		                  (have < n - have ? have : n - have) * r->chunk, &w->err);
	if (rs == RT_OK)
		rs = w->ops->flush_cache(w->dev, &w->err);
	r->filled = rs == RT_OK;
	return rs;
}

/* A request begins: copies whose inout buffers earlier launches changed
 * are filled again (a kernel that updates in place would drift). */
static void rot_begin(wstate *w)
{
	w->rot.rotated = 0;
	for (int i = 0; i < w->k->nbuffers; i++)
		if (w->k->buffers[i].role == ROLE_INOUT)
			w->rot.filled = false;
}

/* Whether the buffers as sized now can rotate (*on), laying out and
 * filling the copies where they are not yet: each copy holds input set 0
 * and poisoned outputs, as the first timed launch finds its buffers. A
 * copy's turn comes again after the others' data, at least the full
 * flush's bytes, went through the cache; a variant that touches only part
 * of its buffers evicts less, and on an H100 rotated times were up to 20%
 * slower than flushed ones on bandwidth-bound cells, which is why it is
 * not a default (bench/cold/ compares the two). Buffers as large as the
 * flush, or copies the device has no memory for, do not rotate: the flush
 * it is. */
static rt_status rot_ready(wstate *w, bool *on)
{
	rotation *r = &w->rot;
	const kernel *k = w->k;
	*on = false;
	if (!w->rotate || !w->bufs || !k->nbuffers)
		return RT_OK;
	bool same = r->bytes != NULL;
	for (int i = 0; i < k->nbuffers && same; i++)
		same = r->bytes[i] == w->bufs[i].bytes;
	rt_status rs = RT_OK;
	if (!same) {
		rot_release(w);
		if ((rs = rot_layout(w)) != RT_OK)
			return rs;
	}
	if (r->ready && !r->filled && (rs = rot_fill(w)) != RT_OK)
		return rs;
	*on = r->ready;
	return RT_OK;
}

/* A timed launch with the caches cold for its data: on the next rotated
 * copy where the buffers rotate (the working buffers, untouched, stay as
 * the last checked launch left them), else after cold_cache, on the
 * working buffers restored to input set 0 first with restore. */
static rt_status cold_launch(wstate *w, rt_function *f, const rt_launch *dims, bool restore, double *ms)
{
	bool on;
	rt_status rs = rot_ready(w, &on);
	if (rs != RT_OK)
		return rs;
	if (!on) {
		if ((restore && (rs = prepare_run(w, 0)) != RT_OK) || (rs = cold_cache(w)) != RT_OK)
			return rs;
		return run_launch(w, f, dims, ms);
	}
	rotation *r = &w->rot;
	rt_ptr at = r->arena.data + (size_t)r->next * r->chunk;
	r->next = (r->next + 1) % r->ncopies;
	for (int i = 0; i < w->k->nbuffers; i++) {
		w->slots[w->k->buffers[i].param] = at;
		at += rot_span(w->bufs[i].bytes);
	}
	rs = run_launch(w, f, dims, ms);
	for (int i = 0; i < w->k->nbuffers; i++)
		w->slots[w->k->buffers[i].param] = w->bufs[i].cur.data;
	r->rotated++;
	return rs;
}

/* One checked launch on input set s (timed into *ms when ms is non-NULL,
 * after a cache flush): guard zones first (all of them, or the working
 * buffers' only), then the inputs against their pristine copies, then the
 * outputs against reference set s, which they become when there is none
 * yet. *spent is the time the checking took (preparing the buffers and the
 * checks, not the flush and the launch, unless the other timed launches
 * rotate). */
static rt_status checked_run(wstate *w, rt_function *f, const rt_launch *dims, int s, bool all,
                             double *ms, verdict *v, double *error, strbuf *note, double *spent)
{
	rt_status rs;
	bool ok, changed, wrong;
	*v = V_OK;
	*error = 0;
	double t0 = now_ms(), t1 = t0, t2 = t0;
	if ((rs = prepare_run(w, s)) != RT_OK)
		goto out;
	t1 = now_ms();
	if ((ms && (rs = cold_cache(w)) != RT_OK) ||
	    (rs = run_launch(w, f, dims, ms)) != RT_OK ||
	    (rs = w->ops->sync(w->dev, &w->err)) != RT_OK)
		goto out;
	t2 = now_ms();
	if ((rs = check_guards(w, all, &ok, note)) != RT_OK)
		goto out;
	if (!ok) {
		*v = V_OUT_OF_BOUNDS;
		*error = NAN;
		goto out;
	}
	if ((rs = check_inputs(w, s, &changed, note)) != RT_OK)
		goto out;
	if (changed) {
		*v = V_WRONG;
		*error = NAN;
		goto out;
	}
	if (!w->have_ref[s]) {
		rs = take_reference(w, s); /* no reference kernel: the first variant is the truth */
		goto out;
	}
	if ((rs = check_outputs(w, s, error, &wrong, note)) != RT_OK)
		goto out;
	*v = wrong ? V_WRONG : V_OK;
out:
	*spent = (t1 - t0) + (now_ms() - t2);
	/* Where the other timed launches rotate, the flush and the waiting
	 * are this launch's alone, for its checks: they count as checking. */
	if (ms && w->rot.ready && rs == RT_OK)
		*spent += t2 - t1 > *ms ? t2 - t1 - *ms : 0;
	return rs;
}

static json_t *verdict_reply(verdict v, double error, const char *note)
{
	json_t *o = status_reply(v == V_WRONG ? "wrong" : "out_of_bounds", note);
	json_object_set_new(o, "error", isfinite(error) ? json_real(error) : json_null());
	return o;
}

static const double CHECK_SHARE = 0.25;

/* A measure request, read: its fields or, where one is missing or
 * malformed, false. */
typedef struct measure_req {
	const char *blob, *symbol;
	const json_t *values;   /* the variant's tunable values: fk->ntunables, none for an extern */
	const kernel *fk;       /* the function measured: the kernel or one of its alternatives */
	bool is_extern;         /* an AOTC_EXTERN routine (no values, no function) */
	rt_launch dims;
	double best;            /* the best median so far, for the screen; 0: none */
} measure_req;

static bool read_measure(const wstate *w, const json_t *req, measure_req *mr)
{
	mr->blob = json_string_value(json_object_get(req, "blob"));
	mr->symbol = json_string_value(json_object_get(req, "symbol"));
	mr->values = json_object_get(req, "values");
	/* A routine is called with the kernel's arguments and the stream: an
	 * AOTC_EXTERN (no values, no function) or a host launcher. */
	bool is_routine = json_is_true(json_object_get(req, "extern"));
	const json_t *jfn = json_object_get(req, "function");
	mr->fk = jfn ? ir_member(w->k, json_string_value(jfn) ? json_string_value(jfn) : "") : w->k;
	mr->is_extern = is_routine && !jfn;
	const json_t *jbest = json_object_get(req, "best_ms");
	mr->best = json_is_number(jbest) ? json_number_value(jbest) : 0;
	return mr->blob && mr->symbol && json_is_array(mr->values) && mr->fk &&
	       (int)json_array_size(mr->values) == (mr->is_extern ? 0 : mr->fk->ntunables) &&
	       parse_launch(json_object_get(req, "launch"), &mr->dims);
}

/* A measurement in progress: what the steps of do_measure share. */
typedef struct measuring {
	rt_function *f;
	const rt_launch *dims;
	double *samples;   /* the timed launches' milliseconds, n of them */
	int n;
	int nchecked;      /* checked launches, timed or not */
	double start;      /* when the timing began (after the warm-up) */
	double checking;   /* milliseconds spent checking since start */
	double spent;      /* what the last checked launch spent checking */
	double error;      /* the largest error of the checked launches */
	bool screened;     /* stopped early: far behind the best */
	strbuf note;       /* what the last check found */
} measuring;

static json_t *verdict_at(verdict v, double error, const char *note, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* verdict_reply with the note "<where>: note", where from fmt. */
static json_t *verdict_at(verdict v, double error, const char *note, const char *fmt, ...)
{
	strbuf msg;
	strbuf_init(&msg);
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(&msg, fmt, ap);
	va_end(ap);
	strbuf_printf(&msg, ": %s", note);
	json_t *o = verdict_reply(v, error, msg.data);
	strbuf_finish(&msg);
	return o;
}

/* The warm-up, then launches timed after an L2 flush each, checked as
 * CHECK_SHARE and CHECK_EVERY say, until the screen (the first few show
 * the variant far behind the best), the budget or max_samples stops them.
 * A failed check is RT_OK with its reply in *out. */
static rt_status timed_launches(wstate *w, measuring *ms, double best, json_t **out)
{
	rt_status rs;
	verdict v;
	double e;
	for (int i = 0; i < w->warmup; i++)
		if ((rs = run_launch(w, ms->f, ms->dims, NULL)) != RT_OK)
			return rs;
	bool rotating; /* laid out and filled before the clock starts */
	if ((rs = rot_ready(w, &rotating)) != RT_OK)
		return rs;
	int max = w->max_samples > 0 ? w->max_samples : 1;
	ms->samples = xmalloc((size_t)(max + 1) * sizeof *ms->samples);
	ms->start = now_ms();
	while (ms->n < max - 1) {
		double timing = now_ms() - ms->start - ms->checking;
		if (w->min_checks > 1 && (ms->checking <= CHECK_SHARE * timing || (ms->n + 1) % CHECK_EVERY == 0)) {
			if ((rs = checked_run(w, ms->f, ms->dims, 0, false, &ms->samples[ms->n], &v, &e, &ms->note,
			                      &ms->spent)) != RT_OK)
				return rs;
			ms->checking += ms->spent;
			ms->nchecked++;
			if (v != V_OK) {
				*out = verdict_at(v, e, ms->note.data, "on timed launch %d (after %d launches)", ms->n + 1,
				                  1 + w->warmup + ms->n);
				return RT_OK;
			}
			if (e > ms->error)
				ms->error = e;
		} else if ((rs = cold_launch(w, ms->f, ms->dims, false, &ms->samples[ms->n])) != RT_OK) {
			return rs;
		}
		ms->n++;
		if (ms->n == w->screen && best > 0 && w->screen_factor > 0 &&
		    median(ms->samples, (size_t)ms->n) > w->screen_factor * best) {
			ms->screened = true;
			break;
		}
		if (ms->n >= w->min_samples - 1 && now_ms() - ms->start - ms->checking > w->budget_ms)
			break;
	}
	return RT_OK;
}

/* The last timed launch is checked too, on input set 1: a variant that
 * computes only once, or hands back a result it kept, fails here. */
static rt_status last_timed_launch(wstate *w, measuring *ms, json_t **out)
{
	rt_status rs;
	verdict v;
	double e;
	if (w->min_checks <= 1) { /* --checks 1: the first launch was the check */
		if ((rs = cold_launch(w, ms->f, ms->dims, false, &ms->samples[ms->n])) == RT_OK)
			ms->n++;
		return rs;
	}
	if ((rs = checked_run(w, ms->f, ms->dims, 1, true, &ms->samples[ms->n], &v, &e, &ms->note,
	                      &ms->spent)) != RT_OK)
		return rs;
	ms->checking += ms->spent;
	ms->nchecked++;
	ms->n++;
	if (v != V_OK) {
		*out = verdict_at(v, e, ms->note.data, "on the last timed launch (other inputs, after %d launches)",
		                  ms->n + w->warmup);
		return RT_OK;
	}
	if (e > ms->error)
		ms->error = e;
	return RT_OK;
}

/* Where the timing took few launches (slow ones, or a long cache flush),
 * more checked launches, untimed and on both input sets in turn, within the
 * same share of the timing's time; then the guard zones once more. */
static rt_status checks_after_timing(wstate *w, measuring *ms, json_t **out)
{
	rt_status rs;
	verdict v;
	double e;
	double timed = now_ms() - ms->start - ms->checking, cost = ms->spent;
	int x = 0;
	for (; ms->nchecked < w->min_checks && ms->checking + cost <= CHECK_SHARE * timed; x++) {
		double t0 = now_ms();
		if ((rs = checked_run(w, ms->f, ms->dims, x % NSETS, false, NULL, &v, &e, &ms->note,
		                      &ms->spent)) != RT_OK)
			return rs;
		cost = now_ms() - t0;
		ms->checking += cost;
		ms->nchecked++;
		if (v != V_OK) {
			*out = verdict_at(v, e, ms->note.data,
			                  "on checked launch %d after the timing (input set %d, after %d launches)",
			                  x + 1, x % NSETS, 1 + w->warmup + ms->n + x);
			return RT_OK;
		}
		if (e > ms->error)
			ms->error = e;
	}
	bool zones_ok = true;
	if (x > 0 && (rs = check_guards(w, true, &zones_ok, &ms->note)) != RT_OK)
		return rs;
	if (!zones_ok)
		*out = verdict_at(V_OUT_OF_BOUNDS, NAN, ms->note.data, "in the checked launches after the timing");
	return RT_OK;
}

/* The "ok" reply: samples, error and what the checking cost (began: when
 * the request came, checked_at: when the first checked launch ended). */
static json_t *measured_reply(const wstate *w, const measuring *ms, bool became_reference, double began,
                              double checked_at)
{
	json_t *out = status_reply("ok", NULL);
	json_t *js = json_array();
	for (int i = 0; i < ms->n; i++)
		json_array_append_new(js, json_real(ms->samples[i]));
	json_object_set_new(out, "samples", js);
	json_object_set_new(out, "error", json_real(ms->error));
	if (ms->screened)
		json_object_set_new(out, "screened", json_true());
	if (became_reference)
		json_object_set_new(out, "became_reference", json_true());
	json_object_set_new(out, "checked", json_integer(ms->nchecked));
	json_object_set_new(out, "rotated", json_integer(w->rot.rotated));
	json_object_set_new(out, "check_ms", json_real(checked_at - began + ms->checking));
	json_object_set_new(out, "timing_ms", json_real(now_ms() - checked_at - ms->checking));
	return out;
}

/* measure: load the variant, check it once (the first variant measured on
 * a shape without a reference kernel becomes the reference), time it, check
 * it more. */
static json_t *do_measure(wstate *w, const json_t *req)
{
	if (!w->have_shape)
		return status_reply("error", "measure before shape");
	measure_req mr;
	if (!read_measure(w, req, &mr))
		return status_reply("error", "malformed measure request");
	const kernel *fk = mr.fk;
	double began = now_ms();
	rot_begin(w);
	int64_t *values = xcalloc((size_t)fk->ntunables + 1, sizeof *values);
	for (int i = 0; i < (int)json_array_size(mr.values); i++)
		values[i] = json_integer_value(json_array_get(mr.values, (size_t)i));

	json_t *out = NULL;
	measuring ms = {.dims = &mr.dims, .nchecked = 1};
	strbuf_init(&ms.note);
	const char *why = NULL;
	rt_status rs;
	verdict v;
	bool became_reference = false, ok = false;
	/* Per-variant values: this variant's arguments (an extern has none). */
	if (!mr.is_extern && ir_has_per_variant(fk)) {
		if (ir_variant_params(fk, values, w->params) != EVAL_OK) {
			out = status_reply("invalid", "an AOTC_VALUE over tunables cannot be evaluated");
			goto done;
		}
		set_scalar_args(w);
	}
	if (!(ms.f = load_blob(w, mr.blob, mr.symbol, &rs)))
		goto fail;
	/* An extern has no tunables: its buffers are the reference's. */
	if ((rs = ensure_buffers(w, fk, mr.is_extern ? NULL : values, &why)) != RT_OK)
		goto fail;

	/* The first checked launch, on input set 0. */
	became_reference = !w->have_ref[0];
	if ((rs = checked_run(w, ms.f, &mr.dims, 0, true, NULL, &v, &ms.error, &ms.note, &ms.spent)) != RT_OK)
		goto fail;
	if (v != V_OK) {
		out = verdict_reply(v, ms.error, ms.note.data);
		goto done;
	}
	double checked_at = now_ms();
	if ((rs = timed_launches(w, &ms, mr.best, &out)) == RT_OK && !out &&
	    (rs = last_timed_launch(w, &ms, &out)) == RT_OK && !out)
		rs = checks_after_timing(w, &ms, &out);
	if (rs != RT_OK)
		goto fail;
	if (out)
		goto done;
	ok = true;
	out = measured_reply(w, &ms, became_reference, began, checked_at);
	goto done;
fail:
	out = why ? status_reply("error", why) : failure(w, rs);
done:
	/* A variant that failed after it became the reference was not the
	 * truth after all. */
	if (became_reference && !ok)
		w->have_ref[0] = w->have_ref[1] = false;
	free(ms.samples);
	free(values);
	strbuf_finish(&ms.note);
	return out;
}

/* ---- Warm-up, clocks and the close contenders' alternation ---- */

/* The clocks the backend reports, as JSON (json null when it says nothing). */
static json_t *clocks_json(wstate *w)
{
	rt_clocks c;
	if (!w->ops->clocks || !w->ops->clocks(w->dev, &c))
		return json_null();
	json_t *o = json_pack("{s:s}", "source", c.source);
	if (c.sm_mhz > 0)
		json_object_set_new(o, "sm_mhz", json_integer(c.sm_mhz));
	if (c.mem_mhz > 0)
		json_object_set_new(o, "mem_mhz", json_integer(c.mem_mhz));
	if (c.max_sm_mhz > 0)
		json_object_set_new(o, "max_sm_mhz", json_integer(c.max_sm_mhz));
	if (c.app_sm_mhz > 0)
		json_object_set_new(o, "app_sm_mhz", json_integer(c.app_sm_mhz));
	if (c.governor[0])
		json_object_set_new(o, "governor", json_string(c.governor));
	json_object_set_new(o, "locked", c.locked < 0 ? json_string("unknown") : json_boolean(c.locked));
	return o;
}

/* {"op": "warm", "ms"}: keeps the device busy (cache flushes: a GPU writes
 * twice its L2, the host twice its last-level cache) for at least ms, and
 * on until the last WARM_WINDOW flushes take within WARM_STEADY of each
 * other or 3 ms have passed, so that the first shape is timed at the clock
 * the rest will be; then the clocks. ms 0: the clocks only. */
enum { WARM_WINDOW = 8 };
static const double WARM_STEADY = 0.05;

static json_t *do_warm(wstate *w, const json_t *req)
{
	if (!w->dev)
		return status_reply("error", "warm before init");
	double ms = json_number_value(json_object_get(req, "ms"));
	double t[WARM_WINDOW] = {0}, began = now_ms(), el = 0;
	int n = 0;
	bool steady = false;
	while (ms > 0) {
		double t0 = now_ms();
		rt_status rs;
		if ((rs = w->ops->flush_cache(w->dev, &w->err)) != RT_OK ||
		    (rs = w->ops->sync(w->dev, &w->err)) != RT_OK)
			return failure(w, rs);
		t[n++ % WARM_WINDOW] = now_ms() - t0;
		el = now_ms() - began;
		if (n >= WARM_WINDOW) {
			double lo = t[0], hi = t[0];
			for (int i = 1; i < WARM_WINDOW; i++) {
				lo = t[i] < lo ? t[i] : lo;
				hi = t[i] > hi ? t[i] : hi;
			}
			steady = hi <= lo * (1 + WARM_STEADY);
		}
		if (el >= 3 * ms || (el >= ms && steady))
			break;
	}
	json_t *o = status_reply("ok", NULL);
	if (ms > 0) {
		json_object_set_new(o, "warm_ms", json_real(el));
		json_object_set_new(o, "flushes", json_integer(n));
		json_object_set_new(o, "steady", json_boolean(steady));
	}
	json_object_set_new(o, "clocks", clocks_json(w));
	return o;
}

/* One variant of an alternation, ready to launch. */
typedef struct contender {
	rt_function *f;
	rt_launch dims;
	const kernel *fk;
	int64_t *values;
	bool is_extern;
	double *samples;
	int n;
	json_t *failed;   /* its verdict once a checked launch failed */
} contender;

/* The arguments and buffers of contender c at the current shape. */
static rt_status contender_ready(wstate *w, contender *c, const char **why)
{
	if (!c->is_extern && ir_has_per_variant(c->fk)) {
		if (ir_variant_params(c->fk, c->values, w->params) != EVAL_OK) {
			*why = "an AOTC_VALUE over tunables cannot be evaluated";
			return RT_ERR_OTHER;
		}
		set_scalar_args(w);
	}
	return ensure_buffers(w, c->fk, c->is_extern ? NULL : c->values, why);
}

/* {"op": "alternate", "variants": [measure requests' variant fields], "rounds", "budget_ms"}
 * -> {"status", "rounds", "results": [{"status", "samples" | "note", "error"}]}:
 * the close contenders of the current shape timed again in turn (A B C A B
 * C ...), each launch on input set 0 restored, after a cache flush, timed
 * as a measure's; the last round's launches are checked (input set 1, every
 * guard zone; not with min_checks 1), so a variant that fails there gets
 * its verdict, never a time. At least ALT_MIN_ROUNDS rounds, then up to
 * rounds while they took less than budget_ms (flushes included, as a
 * measure's budget). */
enum { ALT_MIN_ROUNDS = 5, ALT_MAX_VARIANTS = 8 };

static json_t *do_alternate(wstate *w, const json_t *req)
{
	if (!w->have_shape)
		return status_reply("error", "alternate before shape");
	const json_t *jvs = json_object_get(req, "variants");
	int nv = (int)json_array_size(jvs), rounds = (int)json_integer_value(json_object_get(req, "rounds"));
	double budget = json_number_value(json_object_get(req, "budget_ms"));
	if (nv < 1 || nv > ALT_MAX_VARIANTS || rounds < 1 || rounds > 1000)
		return status_reply("error", "malformed alternate request");
	contender cs[ALT_MAX_VARIANTS] = {0};
	rot_begin(w);
	json_t *out = NULL;
	const char *why = NULL;
	rt_status rs = RT_OK;
	strbuf note;
	strbuf_init(&note);
	for (int i = 0; i < nv; i++) {
		const json_t *v = json_array_get(jvs, (size_t)i), *jv = json_object_get(v, "values");
		const char *blob = json_string_value(json_object_get(v, "blob"));
		const char *symbol = json_string_value(json_object_get(v, "symbol"));
		const json_t *jfn = json_object_get(v, "function");
		contender *c = &cs[i];
		c->fk = jfn ? ir_member(w->k, json_string_value(jfn) ? json_string_value(jfn) : "") : w->k;
		c->is_extern = json_is_true(json_object_get(v, "extern")) && !jfn;
		if (!blob || !symbol || !json_is_array(jv) || !c->fk ||
		    (int)json_array_size(jv) != (c->is_extern ? 0 : c->fk->ntunables) ||
		    !parse_launch(json_object_get(v, "launch"), &c->dims)) {
			out = status_reply("error", "malformed alternate request");
			goto done;
		}
		c->values = xcalloc((size_t)c->fk->ntunables + 1, sizeof *c->values);
		for (int t = 0; t < (int)json_array_size(jv); t++)
			c->values[t] = json_integer_value(json_array_get(jv, (size_t)t));
		c->samples = xcalloc((size_t)rounds + 1, sizeof *c->samples);
		if (!(c->f = load_blob(w, blob, symbol, &rs)))
			goto fail;
		/* One untimed launch each, as a measure's warm-up. */
		if ((rs = contender_ready(w, c, &why)) != RT_OK || (rs = prepare_run(w, 0)) != RT_OK ||
		    (rs = run_launch(w, c->f, &c->dims, NULL)) != RT_OK || (rs = w->ops->sync(w->dev, &w->err)) != RT_OK)
			goto fail;
	}
	double start = now_ms();
	int r = 0;
	for (bool last = false; !last; r++) {
		last = r + 1 >= rounds || (r + 1 >= ALT_MIN_ROUNDS && now_ms() - start >= budget);
		for (int i = 0; i < nv; i++) {
			contender *c = &cs[i];
			if (c->failed)
				continue;
			double *ms = &c->samples[c->n];
			if ((rs = contender_ready(w, c, &why)) != RT_OK)
				goto fail;
			if (last && w->min_checks > 1) {
				verdict v;
				double e, spent;
				note.len = 0;
				note.data[0] = 0;
				if ((rs = checked_run(w, c->f, &c->dims, 1, true, ms, &v, &e, &note, &spent)) != RT_OK)
					goto fail;
				if (v != V_OK) {
					strbuf msg;
					strbuf_init(&msg);
					strbuf_printf(&msg, "on the last launch of the alternated re-timing (round %d, other inputs): %s",
					              r + 1, note.data);
					c->failed = verdict_reply(v, e, msg.data);
					strbuf_finish(&msg);
					continue;
				}
			} else if ((rs = cold_launch(w, c->f, &c->dims, true, ms)) != RT_OK) {
				goto fail;
			}
			c->n++;
		}
	}
	out = status_reply("ok", NULL);
	json_object_set_new(out, "rounds", json_integer(r));
	json_object_set_new(out, "rotated", json_integer(w->rot.rotated));
	json_t *res = json_array();
	for (int i = 0; i < nv; i++) {
		if (cs[i].failed) {
			json_array_append(res, cs[i].failed);
			continue;
		}
		json_t *js = json_array();
		for (int k = 0; k < cs[i].n; k++)
			json_array_append_new(js, json_real(cs[i].samples[k]));
		json_array_append_new(res, json_pack("{s:s, s:o}", "status", "ok", "samples", js));
	}
	json_object_set_new(out, "results", res);
	goto done;
fail:
	out = why ? status_reply("error", why) : failure(w, rs);
done:
	for (int i = 0; i < nv && i < ALT_MAX_VARIANTS; i++) {
		free(cs[i].values);
		free(cs[i].samples);
		json_decref(cs[i].failed);
	}
	strbuf_finish(&note);
	return out;
}

/* ---- What a variant leaves behind ---- */

/* Reads the state of this process that traces holds. */
static void traces_take(traces *t)
{
	*t = (traces){.threads = -1};
	char *st = read_file("/proc/self/status", NULL);
	for (char *line = st; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(line, "Threads:", 8))
			t->threads = atoi(line + 8);
		else if (!strncmp(line, "SigBlk:", 7))
			t->sig_blocked = strtoull(line + 7, NULL, 16);
		else if (!strncmp(line, "SigIgn:", 7))
			t->sig_ignored = strtoull(line + 7, NULL, 16);
		else if (!strncmp(line, "SigCgt:", 7))
			t->sig_caught = strtoull(line + 7, NULL, 16);
		line = nl ? nl + 1 : NULL;
	}
	free(st);
	/* A handler replaced by another leaves the masks as they were. */
	for (int sig = 1; sig <= 64; sig++) {
		struct sigaction sa;
		if ((t->sig_caught >> (sig - 1) & 1) && sigaction(sig, NULL, &sa) == 0)
			t->handler[sig] = sa.sa_flags & SA_SIGINFO ? (uintptr_t)sa.sa_sigaction
			                                           : (uintptr_t)sa.sa_handler;
	}
	if (!getcwd(t->cwd, sizeof t->cwd))
		t->cwd[0] = 0;
	t->fp_round = fegetround();
	t->fp_traps = fegetexcept();
#if defined(__SSE__)
	t->fp_flush = _mm_getcsr() & 0x8040u;
#endif
}

/* Whether a library that keeps a pool of threads between calls (OpenMP,
 * TBB, a GPU driver) is loaded: its threads are no variant's leftovers. */
static int find_pool(struct dl_phdr_info *info, size_t size, void *found)
{
	(void)size;
	static const char *const pools[] = {"libgomp", "libomp", "libiomp", "libtbb", "libcuda",
	                                    "libamdhip64"};
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	for (size_t i = 0; base && i < COUNTOF(pools); i++)
		if (!strncmp(base + 1, pools[i], strlen(pools[i])))
			*(bool *)found = true;
	return *(bool *)found;
}

/* The first signal set in a and not in b, or the other way round. The C
 * library's own (32 up to SIGRTMIN, which it handles from the first thread
 * a process starts) are left out. */
static int changed_signal(uint64_t a, uint64_t b)
{
	uint64_t d = a ^ b;
	for (int sig = 32; sig < SIGRTMIN && sig <= 64; sig++)
		d &= ~(1ull << (sig - 1));
	return d ? __builtin_ctzll(d) + 1 : 0;
}

/* What the variant that just ran left behind, against w->base, into why
 * ("left 1 thread running"); false when nothing. A thread pool's new
 * threads are taken into the base instead. */
static bool left_behind(wstate *w, strbuf *why)
{
	traces now;
	traces_take(&now);
	const traces *b = &w->base;
	int st, sig;
	pid_t child = waitpid(-1, &st, WNOHANG);
	if (child >= 0)
		strbuf_puts(why, "the variant forked: it left a child process");
	if (now.threads > b->threads && b->threads >= 0) {
		bool pool = false;
		dl_iterate_phdr(find_pool, &pool);
		if (pool)
			w->base.threads = now.threads;
		else
			strbuf_printf(why, "%sleft %d thread%s running", why->len ? "; " : "",
			              now.threads - b->threads, now.threads - b->threads == 1 ? "" : "s");
	}
	struct itimerval it;
	for (int which = 0; which < 3; which++) {
		static const int timers[] = {ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF};
		if (getitimer(timers[which], &it) == 0 && (it.it_value.tv_sec || it.it_value.tv_usec)) {
			strbuf_printf(why, "%sleft a timer armed (alarm or setitimer)", why->len ? "; " : "");
			break;
		}
	}
	uint64_t replaced = 0;
	for (int i = 1; i <= 64; i++)
		if (now.handler[i] != b->handler[i])
			replaced |= 1ull << (i - 1);
	if ((sig = changed_signal(now.sig_caught | now.sig_ignored, b->sig_caught | b->sig_ignored)) ||
	    (sig = changed_signal(now.sig_caught, b->sig_caught)) || (sig = changed_signal(replaced, 0)))
		strbuf_printf(why, "%schanged the handling of signal %d (%s)", why->len ? "; " : "", sig,
		              strsignal(sig));
	else if ((sig = changed_signal(now.sig_blocked, b->sig_blocked)))
		strbuf_printf(why, "%schanged whether signal %d (%s) is blocked", why->len ? "; " : "", sig,
		              strsignal(sig));
	if (strcmp(now.cwd, b->cwd))
		strbuf_printf(why, "%schanged the working directory to %s", why->len ? "; " : "", now.cwd);
	if (now.fp_round != b->fp_round || now.fp_traps != b->fp_traps || now.fp_flush != b->fp_flush)
		strbuf_printf(why, "%schanged the floating-point environment (%s)", why->len ? "; " : "",
		              now.fp_round != b->fp_round ? "rounding mode"
		              : now.fp_traps != b->fp_traps ? "exception traps" : "flush to zero");
	return why->len > 0;
}

/* Replies go to a duplicate of stdout (*proto) and requests come from one
 * of stdin (returned), both close-on-exec, and the standard streams become
 * /dev/null (in) and stderr (out): a library that prints cannot corrupt the
 * protocol, and a program a variant runs cannot read or answer requests. */
static FILE *protocol_in(FILE **proto)
{
	int in = fcntl(0, F_DUPFD_CLOEXEC, 3), out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	FILE *f = NULL;
	if (in < 0 || out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0 ||
	    !(*proto = fdopen(out, "w")) || !(f = fdopen(in, "r"))) {
		if (!*proto && out >= 0)
			close(out);
		if (in >= 0)
			close(in);
		f = NULL;
	}
	if (null >= 0)
		close(null);
	return f;
}

int worker_main(void)
{
	wstate w = {.pid = getpid()};
	FILE *in = protocol_in(&w.proto);
	if (!in)
		return AOTC_ENVIRONMENT;
	strbuf_init(&w.err);
	traces_take(&w.base);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int status = 0;
	while ((n = getline(&line, &cap, in)) > 0) {
		json_t *req = json_loadb(line, (size_t)n, 0, NULL);
		const char *op = req ? json_string_value(json_object_get(req, "op")) : NULL;
		json_t *r;
		bool measure = false;
		if (!op)
			r = status_reply("error", "malformed request");
		else if (!strcmp(op, "init"))
			r = do_init(&w, req);
		else if (!strcmp(op, "shape"))
			r = do_shape(&w, req);
		else if ((measure = !strcmp(op, "measure")))
			r = do_measure(&w, req);
		else if ((measure = !strcmp(op, "alternate")))
			r = do_alternate(&w, req);
		else if (!strcmp(op, "warm"))
			r = do_warm(&w, req);
		else if (!strcmp(op, "quit")) {
			json_decref(req);
			break;
		} else
			r = status_reply("error", "unknown op");
		strbuf left;
		strbuf_init(&left);
		if (measure && left_behind(&w, &left)) {
			/* Its own measurement is not to be trusted either, and the
			 * next variant runs in a fresh process. */
			const char *was = json_string_value(json_object_get(r, "status"));
			if (was && strcmp(was, "ok"))
				strbuf_printf(&left, " (and it was %s)", was);
			json_decref(r);
			r = status_reply("fault", left.data);
		} else if (!measure) {
			traces_take(&w.base); /* the device, the reference: trusted */
		}
		strbuf_finish(&left);
		bool fatal = !strcmp(json_string_value(json_object_get(r, "status")), "fault");
		reply(&w, r, req ? json_object_get(req, "id") : NULL);
		json_decref(req);
		if (fatal) {
			status = 1; /* the context is gone; the tuner starts a new worker */
			break;
		}
	}
	free(line);
	fclose(in);
	if (status) {
		/* Whatever a variant left (threads, handlers) must not run the
		 * worker's cleanup: the device goes with the process. */
		fclose(w.proto);
		_exit(status);
	}
	if (w.dev) {
		free_buffers(&w);
		for (int i = 0; i < w.ncache; i++) {
			w.ops->unload(w.dev, w.cache[i].f);
			free(w.cache[i].path);
			free(w.cache[i].symbol);
		}
		w.ops->close(w.dev);
	}
	free(w.cache);
	free(w.host_ref_path);
	free(w.slots);
	free(w.args);
	free(w.row);
	free(w.params);
	if (w.k)
		shape_set_finish(&w.shapes);
	ir_module_destroy(w.m);
	strbuf_finish(&w.err);
	fclose(w.proto);
	return status;
}

/* ---- Tuner side ---------------------------------------------------------- */

struct worker {
	pid_t pid;          /* also its process group's id */
	int to, from;       /* pipe ends: requests, replies */
	strbuf in;          /* bytes read but not yet a whole line */
	uint64_t key, seq;  /* request ids: a hash of both */
};

worker *worker_start(const char *exe, strbuf *err)
{
	/* Close-on-exec: no other child of the tuner (a compiler) keeps the
	 * worker's pipes open; posix_spawn's dup2 clears it on 0 and 1. */
	int req[2], rep[2];
	if (pipe2(req, O_CLOEXEC) < 0)
		goto fail_pipe;
	if (pipe2(rep, O_CLOEXEC) < 0) {
		close(req[0]);
		close(req[1]);
		goto fail_pipe;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, req[0], 0);
	posix_spawn_file_actions_adddup2(&fa, rep[1], 1);
	/* Its own process group, so that whatever a variant forks goes with
	 * it when it is killed. */
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	char *argv[] = {(char *)exe, "__worker", NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, exe, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(req[0]);
	close(rep[1]);
	if (rc != 0) {
		close(req[1]);
		close(rep[0]);
		strbuf_printf(err, "cannot start the worker %s: %s", exe, strerror(rc));
		return NULL;
	}
	worker *w = xcalloc(1, sizeof *w);
	w->pid = pid;
	w->to = req[1];
	w->from = rep[0];
	strbuf_init(&w->in);
	if (getrandom(&w->key, sizeof w->key, GRND_NONBLOCK) != (ssize_t)sizeof w->key)
		w->key = mix((uint64_t)pid, (uint64_t)(now_ms() * 1e3));
	return w;
fail_pipe:
	strbuf_printf(err, "pipe: %s", strerror(errno));
	return NULL;
}

/* Kills the worker and everything in its process group (what a variant
 * forked), then reaps it. */
static void kill_worker(worker *w)
{
	if (w->pid <= 0)
		return;
	kill(-w->pid, SIGKILL);
	kill(w->pid, SIGKILL);
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		;
	w->pid = 0;
}

static void reap(worker *w, strbuf *why)
{
	if (w->pid <= 0)
		return;
	int st;
	while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
		;
	if (why) {
		if (WIFSIGNALED(st))
			strbuf_printf(why, "worker killed by signal %d (%s)", WTERMSIG(st),
			              strsignal(WTERMSIG(st)));
		else
			strbuf_printf(why, "worker exited with status %d", WEXITSTATUS(st));
	}
	/* What it forked may still run: its group goes too. */
	kill(-w->pid, SIGKILL);
	w->pid = 0;
}

void worker_stop(worker *w)
{
	if (!w)
		return;
	/* End of input asks the worker to release the device and exit; one
	 * that does not within a second is killed. */
	close(w->to);
	for (int i = 0; w->pid > 0 && i < 100; i++) {
		int st;
		pid_t r = waitpid(w->pid, &st, WNOHANG);
		if (r == w->pid || (r < 0 && errno != EINTR)) {
			kill(-w->pid, SIGKILL);
			w->pid = 0;
			break;
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill_worker(w);
	close(w->from);
	strbuf_finish(&w->in);
	free(w);
}

/* Whether reply is the worker's answer to the request with id; if not,
 * why says whose it is. */
static bool answers(const worker *w, const json_t *reply, json_int_t id, strbuf *why)
{
	const json_t *jid = json_object_get(reply, "id"), *jpid = json_object_get(reply, "pid");
	if (!json_is_integer(jpid))
		strbuf_printf(why, "the variant's process forked or answered out of turn: a reply "
		              "without the worker's pid (%ld)", (long)w->pid);
	else if (json_integer_value(jpid) != w->pid)
		strbuf_printf(why, "the variant's process forked or answered out of turn: a reply "
		              "from process %lld, not the worker %ld", (long long)json_integer_value(jpid),
		              (long)w->pid);
	else if (!json_is_integer(jid) || json_integer_value(jid) != id)
		strbuf_puts(why, "the variant's process forked or answered out of turn: a reply to "
		                 "another request");
	else
		return true;
	return false;
}

call_result worker_call(worker *w, json_t *request, double timeout_ms, json_t **reply_out,
                        strbuf *why)
{
	*reply_out = NULL;
	if (w->pid <= 0) {
		strbuf_puts(why, "the worker is gone");
		return CALL_DIED;
	}
	/* A fresh id each request, which no earlier copy of the worker can
	 * know: an answer with another is not this request's. */
	json_int_t id = (json_int_t)(mix(w->key, ++w->seq) >> 2);
	json_object_set_new(request, "id", json_integer(id));
	char *s = json_dumps(request, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_object_del(request, "id");
	size_t len = strlen(s);
	s = xrealloc(s, len + 2);
	s[len++] = '\n';
	const char *p = s;
	/* SIGPIPE would kill the tuner when the worker is gone. */
	signal(SIGPIPE, SIG_IGN);
	while (len > 0) {
		ssize_t n = write(w->to, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(s);
			reap(w, why);
			return CALL_DIED;
		}
		p += n;
		len -= (size_t)n;
	}
	free(s);
	double deadline = now_ms() + timeout_ms;
	for (;;) {
		char *nl = memchr(w->in.data, '\n', w->in.len);
		if (nl) {
			size_t n = (size_t)(nl - w->in.data) + 1;
			*reply_out = json_loadb(w->in.data, n, 0, NULL);
			memmove(w->in.data, w->in.data + n, w->in.len - n);
			w->in.len -= n;
			w->in.data[w->in.len] = 0;
			if (!*reply_out)
				strbuf_puts(why, "malformed reply from the worker");
			else if (answers(w, *reply_out, id, why))
				return CALL_OK;
			json_decref(*reply_out);
			*reply_out = NULL;
			/* Nothing it says can be trusted any more. */
			kill_worker(w);
			return CALL_DIED;
		}
		double left = deadline - now_ms();
		if (left <= 0) {
			kill_worker(w);
			strbuf_printf(why, "no answer within %.0f s", timeout_ms / 1e3);
			return CALL_TIMEOUT;
		}
		struct pollfd pfd = {w->from, POLLIN, 0};
		int rc = poll(&pfd, 1, left > 1e9 ? -1 : (int)left + 1);
		if (rc < 0 && errno != EINTR) {
			strbuf_printf(why, "poll: %s", strerror(errno));
			kill_worker(w);
			return CALL_DIED;
		}
		if (rc <= 0)
			continue;
		char buf[65536];
		ssize_t n = read(w->from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			reap(w, why);
			return CALL_DIED;
		}
		strbuf_putn(&w->in, buf, (size_t)n);
	}
}
