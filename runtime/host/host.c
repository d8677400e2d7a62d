/* The host (CPU) backend: variants are C++ function templates compiled by the
 * system C++ compiler into shared objects, loaded with dlopen and called
 * directly. The "device" is this process; device pointers are addresses. */
#include "backend.h"
#include "elements.h"
#include "proc.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* ------------------------------------------------------------------ */
/* Running the compiler                                               */
/* ------------------------------------------------------------------ */

enum { MAX_CXX_WORDS = 16 };

/* The compiler, resolved once for the process: its command words and the
 * first line of its --version. */
static struct {
	pthread_once_t once;
	char *words[MAX_CXX_WORDS + 1];
	int nwords;
	char *id;          /* NULL when no compiler was found */
	char version[32];  /* "12.2.0" */
	char *error;       /* why none was found */
} cxx = {.once = PTHREAD_ONCE_INIT};

/* "c++ (Debian 12.2.0-14+deb12u1) 12.2.0" -> "12.2.0": the first token outside
 * parentheses shaped like a dotted version. */
static void short_version(const char *line, char out[32])
{
	int depth = 0;
	const char *p = line;
	while (*p) {
		if (*p == '(' || *p == ')') {
			depth += *p == '(' ? 1 : (depth > 0 ? -1 : 0);
			p++;
			continue;
		}
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		const char *s = p;
		while (*p && !isspace((unsigned char)*p) && *p != '(' && *p != ')')
			p++;
		size_t n = (size_t)(p - s);
		bool digits = n > 0 && isdigit((unsigned char)s[0]), dot = false;
		for (size_t i = 0; i < n && digits; i++) {
			if (s[i] == '.')
				dot = true;
			else if (!isdigit((unsigned char)s[i]))
				digits = false;
		}
		if (depth == 0 && digits && dot && n < 32) {
			memcpy(out, s, n);
			out[n] = 0;
			return;
		}
	}
	snprintf(out, 32, "unknown");
}

/* Splits $CXX on whitespace ("ccache g++" works; quoting does not). */
static int split_words(const char *s, char **words)
{
	int n = 0;
	while (*s && n < MAX_CXX_WORDS) {
		while (isspace((unsigned char)*s))
			s++;
		const char *b = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (s > b) {
			char *w = xmalloc((size_t)(s - b) + 1);
			memcpy(w, b, (size_t)(s - b));
			w[s - b] = 0;
			words[n++] = w;
		}
	}
	words[n] = NULL;
	return n;
}

static void resolve_cxx(void)
{
	strbuf err;
	strbuf_init(&err);
	const char *env = getenv("CXX");
	/* An explicit $CXX is used or reported, never silently replaced. */
	const char *cands[] = {env, NULL};
	const char *defaults[] = {"c++", "g++", NULL};
	const char **list = env && *env ? cands : defaults;
	for (; *list; list++) {
		char *words[MAX_CXX_WORDS + 1];
		int n = split_words(*list, words);
		if (n == 0)
			continue;
		if (err.len)
			strbuf_puts(&err, "; ");
		char *argv[MAX_CXX_WORDS + 2];
		memcpy(argv, words, (size_t)n * sizeof *argv);
		argv[n] = "--version";
		argv[n + 1] = NULL;
		char *line = proc_output(argv, &err);
		if (line)
			line[strcspn(line, "\r\n")] = 0;
		if (line) {
			memcpy(cxx.words, words, sizeof words);
			cxx.nwords = n;
			cxx.id = line;
			short_version(line, cxx.version);
			strbuf_finish(&err);
			return;
		}
		for (int i = 0; i < n; i++)
			free(words[i]);
	}
	snprintf(cxx.version, sizeof cxx.version, "none");
	cxx.error = err.data;
}

static const char *host_compiler_id(strbuf *err)
{
	pthread_once(&cxx.once, resolve_cxx);
	if (!cxx.id)
		strbuf_printf(err, "no C++ compiler found: %s", cxx.error);
	return cxx.id;
}

static const char *host_compiler_for(const rt_compile_request *file, strbuf *note,
                                     strbuf *err)
{
	(void)file;
	(void)note;
	return host_compiler_id(err);
}

/* ------------------------------------------------------------------ */
/* Compiling                                                          */
/* ------------------------------------------------------------------ */

/* Whether the kernel file uses OpenMP (includes <omp.h> or has an omp
 * pragma): its own build passes -fopenmp then, and so does aotc, so that
 * what is measured is what the user runs (and omp_* calls link). Only the
 * file itself is read, not what it includes. */
static bool uses_openmp(const char *path)
{
	size_t len;
	char *text = read_file_max(path, &len, (size_t)64 << 20);
	if (!text)
		return false;
	bool omp = false;
	for (const char *p = text; !omp && (p = strstr(p, "omp")); p += 3) {
		const char *line = p;
		while (line > text && line[-1] != '\n')
			line--;
		while (*line == ' ' || *line == '\t')
			line++;
		omp = (!strncmp(line, "#include", 8) && !strncmp(p, "omp.h", 5)) ||
		      (!strncmp(line, "#pragma", 7) && line + 7 < p &&
		       strspn(line + 7, " \t") == (size_t)(p - line - 7));
	}
	free(text);
	return omp;
}

static rt_status host_compile(const rt_compile_request *req, rt_blob *out, strbuf *err)
{
	memset(out, 0, sizeof *out);
	if (!host_compiler_id(err))
		return RT_ERR_ENV;
	if (strpbrk(req->source_path, "\"\n")) {
		strbuf_printf(err, "%s: cannot #include a path with '\"' or a newline",
		              req->source_path);
		return RT_ERR_COMPILE;
	}
	/* The generated file lives elsewhere, so the source must be named
	 * absolutely (the caller should already have done so). */
	char *src = req->source_path[0] == '/' ? xstrdup(req->source_path)
	                                       : realpath(req->source_path, NULL);
	if (!src) {
		strbuf_printf(err, "%s: %s", req->source_path, strerror(errno));
		return RT_ERR_COMPILE;
	}
	/* Names pasted into the generated file and the command line. */
	bool names_ok = !req->extern_fn || ir_is_routine_name(req->extern_fn);
	for (int i = 0; i < req->nlibs; i++)
		names_ok &= ir_is_identifier(req->libs[i]);
	if (!names_ok) {
		strbuf_puts(err, "AOTC_EXTERN: a routine or library name that is not a C identifier");
		free(src);
		return RT_ERR_COMPILE;
	}
	strbuf gen;
	strbuf_init(&gen);
	strbuf_printf(&gen, "#include \"%s\"\n\n%s", src, rt_cpp_arg);
	/* An extern is called like an instance, its arguments of its own
	 * types (the frontend compared them with the kernel's); its return
	 * value, if any, is dropped. */
	if (req->extern_fn) {
		strbuf what;
		strbuf_init(&what);
		strbuf_printf(&what, "AOTC_%s(%s)", req->on_host ? "REFERENCE" : "EXTERN", req->extern_fn);
		rt_cpp_host_entry(&gen, req->extern_fn, req->extern_nparams, what.data);
		strbuf_finish(&what);
	} else {
		rt_cpp_host_entry(&gen, req->instance, -1, NULL);
	}

	/* cxx... -std=c++17 -O3 -march=native -fPIC -shared -w [-fopenmp] -I... -D...
	 * gen.cpp -l<lib>... -o gen.so (the libraries after the source, for
	 * the linker); the source's directory as its real path has it. */
	const char **pre = xcalloc((size_t)cxx.nwords + 8, sizeof *pre);
	int npre = 0;
	for (int i = 0; i < cxx.nwords; i++)
		pre[npre++] = cxx.words[i];
	const char *fixed[] = {"-std=c++17", "-O3", "-march=native", "-fPIC", "-shared", "-w"};
	for (size_t i = 0; i < COUNTOF(fixed); i++)
		pre[npre++] = fixed[i];
	if (uses_openmp(src))
		pre[npre++] = "-fopenmp";
	char **post = xcalloc((size_t)req->nlibs + 1, sizeof *post);
	for (int i = 0; i < req->nlibs; i++) {
		strbuf l;
		strbuf_init(&l);
		strbuf_printf(&l, "-l%s", req->libs[i]);
		post[i] = l.data;
	}
	rt_compile_request real = *req;
	real.source_path = src;
	void *so;
	size_t size;
	rt_status st = rt_run_compiler("aotc-host", pre, npre, &real, "gen.cpp", gen.data,
	                               (const char *const *)post, req->nlibs, "gen.so", &so, &size, err);
	for (int i = 0; i < req->nlibs; i++)
		free(post[i]);
	free(post);
	free(pre);
	strbuf_finish(&gen);
	free(src);
	if (st != RT_OK)
		return st;
	out->data = so;
	out->size = size;
	out->symbol = xstrdup(RT_HOST_ENTRY);
	return RT_OK;
}

/* ------------------------------------------------------------------ */
/* The device: this process                                           */
/* ------------------------------------------------------------------ */

/* An allocation: its own mapping with an inaccessible page on each side,
 * so that a variant writing past a buffer faults instead of corrupting the
 * worker's heap (and through it the reference or a later shape). */
typedef struct mapping {
	unsigned char *base; /* the whole mapping, guard pages included */
	size_t size;         /* of the whole mapping */
	size_t usable;       /* bytes between the guard pages */
} mapping;

struct rt_device {
	rt_device_info info;
	unsigned char *flush;
	size_t flush_size;
	unsigned char flush_byte;
	size_t page;
	mapping *maps;
	size_t nmaps, maps_cap;
};

struct rt_function {
	void *handle;
	void (*entry)(void **);
};

/* "32768K" -> bytes (suffixes K, M, G: powers of 1024; then only
 * whitespace); 0 if it is not such a size or overflows. */
static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return 0;
	int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
	if (shift)
		end++;
	while (isspace((unsigned char)*end))
		end++;
	if (*end || v > UINT64_MAX >> shift)
		return 0;
	return (uint64_t)v << shift;
}

/* The size in a sysfs file ("32768K"); 0 if unreadable. */
static uint64_t read_size(const char *path)
{
	char *s = read_file(path, NULL);
	if (!s)
		return 0;
	uint64_t v = parse_size(s);
	free(s);
	return v;
}

/* The largest cache of the highest level cpu0 sees. */
static uint64_t llc_bytes(void)
{
	uint64_t best = 0;
	long best_level = 0;
	char path[96];
	for (int i = 0; i < 32; i++) {
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		char *s = read_file(path, NULL);
		if (!s)
			break;
		long level = strtol(s, NULL, 10);
		free(s);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		uint64_t size = read_size(path);
		if (level > best_level || (level == best_level && size > best)) {
			best_level = level;
			best = size;
		}
	}
	return best ? best : 32u << 20;
}

/* The value of the first "key<spaces>: value" line of /proc/cpuinfo. */
static bool cpuinfo_field(const char *key, char *out, size_t cap)
{
	char *s = read_file("/proc/cpuinfo", NULL);
	if (!s)
		return false;
	bool found = false;
	size_t klen = strlen(key);
	for (char *line = s; line && *line; ) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (strncmp(line, key, klen) == 0 && (line[klen] == '\t' || line[klen] == ' ' ||
		                                      line[klen] == ':')) {
			char *v = strchr(line, ':');
			if (v) {
				v++;
				while (*v == ' ' || *v == '\t')
					v++;
				snprintf(out, cap, "%s", v);
				found = true;
				break;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	free(s);
	return found;
}

static void fill_info(rt_device_info *info, uint64_t llc)
{
	memset(info, 0, sizeof *info);
	snprintf(info->backend, sizeof info->backend, "host");
	snprintf(info->arch, sizeof info->arch, "host");
	info->count = 1;
	if (!cpuinfo_field("model name", info->name, sizeof info->name) || !info->name[0])
		snprintf(info->name, sizeof info->name, "unknown CPU");
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	info->sm_count = cores > 0 ? (int)cores : 1;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	info->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	/* A limit that does not parse is no reason to have none. */
	const char *limit = getenv("AOTC_HOST_MEMORY_LIMIT");
	info->buffer_limit = limit ? parse_size(limit) : 0;
	if (!info->buffer_limit)
		info->buffer_limit = info->memory_bytes / 2;
	info->l2_bytes = llc;
	/* Host kernels are called once per launch: no blocks, no grid. */
	info->max_threads_per_block = 1;
	for (int i = 0; i < 3; i++) {
		info->max_block_dims[i] = 1;
		info->max_grid_dims[i] = 1;
	}
	uint64_t khz = read_size("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
	char mhz[32];
	if (khz)
		info->clock_mhz = (int)(khz / 1000);
	else if (cpuinfo_field("cpu MHz", mhz, sizeof mhz))
		info->clock_mhz = (int)strtod(mhz, NULL);
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(info->driver_version, sizeof info->driver_version, "%.31s", u.release);
	strbuf ignored;
	strbuf_init(&ignored);
	host_compiler_id(&ignored);
	strbuf_finish(&ignored);
	snprintf(info->runtime_version, sizeof info->runtime_version, "%s", cxx.version);

	/* host_<name>_<compiler version>, with anything unusual as '_'. */
	char name[sizeof info->name];
	size_t n = 0;
	for (const char *p = info->name; *p && n + 1 < sizeof name; p++)
		name[n++] = isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-'
		                    ? *p : '_';
	name[n] = 0;
	snprintf(info->hardware_id, sizeof info->hardware_id, "host_%s_%s", name,
	         info->runtime_version);
}

/* index: ignored; the tuner's --devices N runs N workers here that stand
 * in for devices, all of them this machine. */
static rt_status host_open(rt_device **out, const char *arch, int index, strbuf *err)
{
	(void)index;
	*out = NULL;
	if (strcmp(arch, "host") != 0) {
		strbuf_printf(err, "the host backend cannot run --arch %s", arch);
		return RT_ERR_ENV;
	}
	rt_device *d = xcalloc(1, sizeof *d);
	long page = sysconf(_SC_PAGESIZE);
	d->page = page > 0 ? (size_t)page : 4096;
	fill_info(&d->info, llc_bytes());
	/* Twice the last-level cache, or $AOTC_HOST_FLUSH_BYTES (at least a
	 * page): tests of the tuner's logic set it small, as they time
	 * nothing that matters. */
	d->flush_size = (size_t)d->info.l2_bytes * 2;
	const char *fb = getenv("AOTC_HOST_FLUSH_BYTES");
	if (fb && atol(fb) > 0)
		d->flush_size = (size_t)atol(fb) < d->page ? d->page : (size_t)atol(fb);
	d->flush_size = (d->flush_size + 63) / 64 * 64;
	d->info.flush_bytes = d->flush_size;
	d->flush = aligned_alloc(64, d->flush_size);
	if (!d->flush) {
		strbuf_printf(err, "cannot allocate a %zu-byte cache-flush buffer", d->flush_size);
		free(d);
		return RT_ERR_ENV;
	}
	memset(d->flush, 0, d->flush_size);
	*out = d;
	return RT_OK;
}

static void host_close(rt_device *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nmaps; i++)
		munmap(d->maps[i].base, d->maps[i].size);
	free(d->maps);
	free(d->flush);
	free(d);
}

static void host_describe(rt_device *d, rt_device_info *info) { *info = d->info; }

static rt_status host_load(rt_device *d, const rt_blob *blob, rt_function **out, strbuf *err)
{
	(void)d;
	*out = NULL;
	void *h, *sym;
	rt_status st = rt_load_shared(blob, "host", RTLD_NOW | RTLD_LOCAL, blob->symbol, &h, &sym, err);
	if (st != RT_OK)
		return st;
	rt_function *f = xmalloc(sizeof *f);
	f->handle = h;
	f->entry = (void (*)(void **))sym;
	*out = f;
	return RT_OK;
}

static void host_unload(rt_device *d, rt_function *f)
{
	(void)d;
	if (!f)
		return;
	dlclose(f->handle);
	free(f);
}

static mapping *find_mapping(rt_device *d, rt_ptr p)
{
	for (size_t i = 0; i < d->nmaps; i++)
		if ((rt_ptr)(uintptr_t)(d->maps[i].base + d->page) == p)
			return &d->maps[i];
	return NULL;
}

static rt_status host_alloc(rt_device *d, size_t bytes, rt_ptr *out, strbuf *err)
{
	*out = 0;
	size_t usable = bytes ? (bytes + d->page - 1) / d->page * d->page : d->page;
	size_t size = usable + 2 * d->page;
	void *p = usable >= bytes && size > usable
		? mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
	if (p == MAP_FAILED) {
		strbuf_printf(err, "cannot allocate %zu bytes of host memory", bytes);
		return RT_ERR_OTHER;
	}
	unsigned char *base = p;
	if (mprotect(base + d->page, usable, PROT_READ | PROT_WRITE) != 0) {
		strbuf_printf(err, "mprotect: %s", strerror(errno));
		munmap(p, size);
		return RT_ERR_OTHER;
	}
	if (d->nmaps == d->maps_cap) {
		d->maps_cap = d->maps_cap ? 2 * d->maps_cap : 16;
		d->maps = xrealloc(d->maps, d->maps_cap * sizeof *d->maps);
	}
	d->maps[d->nmaps++] = (mapping){base, size, usable};
	*out = (rt_ptr)(uintptr_t)(base + d->page);
	return RT_OK;
}

static void host_release(rt_device *d, rt_ptr p)
{
	mapping *m = find_mapping(d, p);
	if (!m)
		return;
	munmap(m->base, m->size);
	*m = d->maps[--d->nmaps];
}

static rt_status host_seal(rt_device *d, rt_ptr p, bool sealed, strbuf *err)
{
	mapping *m = find_mapping(d, p);
	if (!m) {
		strbuf_puts(err, "seal: not an allocation");
		return RT_ERR_OTHER;
	}
	if (mprotect(m->base + d->page, m->usable, sealed ? PROT_READ : PROT_READ | PROT_WRITE)) {
		strbuf_printf(err, "mprotect: %s", strerror(errno));
		return RT_ERR_OTHER;
	}
	return RT_OK;
}

static rt_status host_fill_pattern(rt_device *d, rt_ptr dst, uint64_t seed, uint64_t offset,
                                   size_t bytes, strbuf *err)
{
	(void)d;
	(void)err;
	rt_pattern_fill((void *)(uintptr_t)dst, seed, offset, bytes);
	return RT_OK;
}

static rt_status host_scan_pattern(rt_device *d, rt_ptr p, uint64_t seed, uint64_t offset,
                                   size_t bytes, uint64_t *first, strbuf *err)
{
	(void)d;
	(void)err;
	*first = rt_pattern_scan((const void *)(uintptr_t)p, seed, offset, bytes);
	return RT_OK;
}

static rt_status host_upload(rt_device *d, rt_ptr dst, const void *src, size_t bytes,
                             strbuf *err)
{
	(void)d;
	(void)err;
	memcpy((void *)(uintptr_t)dst, src, bytes);
	return RT_OK;
}

static rt_status host_download(rt_device *d, void *dst, rt_ptr src, size_t bytes, strbuf *err)
{
	(void)d;
	(void)err;
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	return RT_OK;
}

static rt_status host_copy(rt_device *d, rt_ptr dst, rt_ptr src, size_t bytes, strbuf *err)
{
	(void)d;
	(void)err;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
	return RT_OK;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static rt_status host_launch(rt_device *d, rt_function *f, const rt_launch *dims, void **args,
                             double *ms, strbuf *err)
{
	(void)d;
	(void)dims;
	(void)err;
	/* A crash here takes the worker down, which is how the tuner learns
	 * of it: no signal handling on purpose. */
	if (!ms) {
		f->entry(args);
		return RT_OK;
	}
	double t0 = now_ms();
	f->entry(args);
	*ms = now_ms() - t0;
	return RT_OK;
}

static rt_status host_flush_cache(rt_device *d, strbuf *err)
{
	(void)err;
	/* A new byte each time so no level can keep a line as already-equal;
	 * the volatile read keeps the stores from being dropped. */
	memset(d->flush, ++d->flush_byte, d->flush_size);
	volatile unsigned char sink = d->flush[d->flush_size - 1];
	(void)sink;
	return RT_OK;
}

#if defined(__x86_64__) || defined(__i386__)
/* clflush is baseline x86-64 (clflushopt, faster, is not): each line out of
 * every cache level, written back if dirty; the fence orders the evictions
 * before the launch that follows. */
static rt_status host_evict(rt_device *d, rt_ptr p, size_t bytes, strbuf *err)
{
	(void)d;
	(void)err;
	const char *c = (const char *)(uintptr_t)p;
	for (size_t off = 0; off < bytes; off += 64)
		_mm_clflush(c + off);
	if (bytes)
		_mm_clflush(c + bytes - 1);
	_mm_mfence();
	return RT_OK;
}
#define HOST_EVICT host_evict
#else
#define HOST_EVICT NULL
#endif

/* cpufreq's view of cpu0, where the kernel has it (not in most VMs). */
static bool host_clocks(rt_device *d, rt_clocks *out)
{
	(void)d;
	static const char dir[] = "/sys/devices/system/cpu/cpu0/cpufreq/";
	char path[128];
	memset(out, 0, sizeof *out);
	out->locked = -1;
	snprintf(path, sizeof path, "%sscaling_governor", dir);
	char *gov = read_file(path, NULL);
	if (gov) {
		gov[strcspn(gov, "\n")] = 0;
		snprintf(out->governor, sizeof out->governor, "%.31s", gov);
		free(gov);
	}
	snprintf(path, sizeof path, "%sscaling_cur_freq", dir);
	out->sm_mhz = (int)(read_size(path) / 1000);
	snprintf(path, sizeof path, "%scpuinfo_max_freq", dir);
	out->max_sm_mhz = (int)(read_size(path) / 1000);
	if (!out->governor[0] && !out->sm_mhz)
		return false;
	snprintf(out->source, sizeof out->source, "cpufreq");
	return true;
}

static rt_status host_memset8(rt_device *d, rt_ptr dst, uint8_t value, size_t bytes,
                              strbuf *err)
{
	(void)d;
	(void)err;
	memset((void *)(uintptr_t)dst, value, bytes);
	return RT_OK;
}

static rt_status host_compare(rt_device *d, rt_ptr out, rt_ptr ref, aotc_dtype t,
                              size_t count, rt_compare *res, strbuf *err)
{
	(void)d;
	(void)err;
	const void *o = (const void *)(uintptr_t)out, *r = (const void *)(uintptr_t)ref;
	/* Integers compare their bits (inputs against their pristine copies,
	 * after every checked launch): equal memory needs no walk. */
	if (!dtype_is_floating(t) && memcmp(o, r, count * dtype_size(t)) == 0) {
		memset(res, 0, sizeof *res);
		return RT_OK;
	}
	elem_compare(o, r, t, count, res);
	return RT_OK;
}

static rt_status host_sync(rt_device *d, strbuf *err)
{
	(void)d;
	(void)err;
	return RT_OK;
}

const rt_ops rt_host_ops = {
	.name = "host",
	.compiler_for = host_compiler_for,
	.compile = host_compile,
	.open = host_open,
	.close = host_close,
	.describe = host_describe,
	.load = host_load,
	.unload = host_unload,
	.alloc = host_alloc,
	.release = host_release,
	.upload = host_upload,
	.download = host_download,
	.copy = host_copy,
	.launch = host_launch,
	.memset8 = host_memset8,
	.fill_pattern = host_fill_pattern,
	.scan_pattern = host_scan_pattern,
	.seal = host_seal,
	.compare = host_compare,
	.flush_cache = host_flush_cache,
	.evict = HOST_EVICT,
	.sync = host_sync,
	.clocks = host_clocks,
};
