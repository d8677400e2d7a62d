/* The one interface between the tuner and a kind of device. A backend
 * compiles variants (in the tuner process, from many threads, without a
 * device) and runs them (in a worker process that owns the device). Nothing
 * outside runtime/ knows which backend it talks to: it asks rt_backend_for()
 * and calls through the table.
 *
 * Device pointers are opaque 64-bit handles (rt_ptr). All functions return
 * RT_OK or an rt_status and, on failure, put a one-line reason in err. */
#ifndef AOTC_BACKEND_H
#define AOTC_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "util.h"

typedef enum rt_status {
	RT_OK,
	RT_ERR_COMPILE,   /* the variant does not compile */
	RT_ERR_RESOURCES, /* cannot launch (too many threads, registers, shared memory), or
	                     cannot be built for them (ptxas: static shared memory) */
	RT_ERR_FAULT,     /* the kernel faulted (illegal address, trap); the device
	                     context is unusable: the worker must exit */
	RT_ERR_ENV,       /* no compiler, a broken driver, a bad setting */
	RT_ERR_NO_DEVICE, /* no device of that architecture on this machine (no
	                     driver at all, none found, another architecture):
	                     the one environment error `aotc compile` answers
	                     by emitting from the database */
	RT_ERR_OTHER,
	RT_ERR_RETURNED,  /* an AOTC_EXTERN routine returned an error (err: which);
	                     the device is fine */
} rt_status;

const char *rt_status_name(rt_status s); /* "ok", "compile_error", ... */

typedef uint64_t rt_ptr;

typedef struct rt_device_info {
	char backend[16];          /* "cuda", "host" */
	char name[128];            /* "NVIDIA H200" */
	char arch[16];             /* "sm90", "host" */
	char hardware_id[192];     /* docs/spec.md §4: cuda_NVIDIA_H200_13.0 */
	int sm_count;              /* multiprocessors (host: cores) */
	uint64_t memory_bytes;
	/* The most bytes the buffers of one shape may take, every copy the
	 * worker keeps and their guard zones included; 0 for no limit but the
	 * allocations' own (a device allocation fails cleanly). The host's
	 * memory is also the machine's: there half of it, or
	 * $AOTC_HOST_MEMORY_LIMIT bytes (suffix K, M or G), so that a large
	 * shape is refused instead of bringing the machine's OOM killer. */
	uint64_t buffer_limit;
	uint64_t l2_bytes;         /* last-level cache, flushed before timing */
	uint64_t flush_bytes;      /* what flush_cache writes (twice l2_bytes; 0: none) */
	int max_threads_per_block;
	int max_block_dims[3];
	int64_t max_grid_dims[3];
	uint64_t smem_per_block;        /* without opt-in */
	uint64_t smem_per_block_optin;  /* with cudaFuncAttributeMaxDynamicSharedMemorySize */
	int clock_mhz;
	char driver_version[32];   /* "13.0" / "580.159.04" as the driver reports */
	char runtime_version[32];  /* "13.0" */
	int index;                 /* which of the backend's devices (host: 0) */
	int count;                 /* devices the backend sees (host: 1) */
} rt_device_info;

/* The most instantiations one compiler run takes (rt_ops.batch_limit):
 * enough to share the file's cost, few enough that a batch with one
 * failing variant is split quickly and every compile thread has some. */
#define RT_BATCH_MAX 16

/* What to compile: one instantiation of a kernel. */
typedef struct rt_compile_request {
	const char *source_path;   /* the kernel file (absolute) */
	const char *instance;      /* C++ expression naming it: "sgemm<64, 128, 8, 8, 4>" */
	const char *arch;          /* "sm90", "host" */
	const char *const *include_dirs;
	int ninclude_dirs;
	const char *const *defines;
	int ndefines;
	const char *compiler;      /* what compiler_for() chose for this file */
	/* The kernel file with its host functions blanked out (lines kept;
	 * ir_device_source), for a compiler of device code only: where NVRTC
	 * cannot take the file itself, it may take this one, with empty
	 * stand-ins for the host-only standard headers. NULL: none. */
	const char *device_source;
	/* An AOTC_EXTERN routine instead of an instantiation (instance is then
	 * unused): the backend builds a caller taking the same void **args as
	 * launch() (host: fn(args...); CUDA: fn(args..., stream), returning
	 * cudaError_t), checked at compile time to take extern_nparams
	 * arguments (the kernel's parameters; CUDA: and the stream). Its
	 * argument types are fn's own, which the frontend checked against the
	 * kernel's. */
	const char *extern_fn;     /* NULL: an instantiation */
	int extern_nparams;
	/* extern_fn is not a routine but a plain host function run on host
	 * memory (a __global__ kernel's host AOTC_REFERENCE): whatever the
	 * backend, the file is compiled as host code into a shared object
	 * (rt_load_shared) whose entry RT_HOST_ENTRY calls fn(args...) with
	 * pointers as host addresses, checked at compile time to take
	 * extern_nparams arguments (the kernel's); the device never sees it.
	 * The host backend builds every extern this way. */
	bool on_host;
	/* The libraries the file's AOTC_EXTERNs name, all of them (C
	 * identifiers): the whole file is compiled into every extern's caller,
	 * and on the host into every variant too, so each links them all
	 * (-l<lib>). CUBINs link nothing. */
	const char *const *libs;
	int nlibs;
} rt_compile_request;

/* A compiled variant: bytes to hand to load() (a CUBIN; the host backend's
 * shared object), and the symbol to look up in it. malloc'd; rt_blob_finish
 * frees. */
typedef struct rt_blob {
	void *data;
	size_t size;
	char *symbol;
} rt_blob;

void rt_blob_finish(rt_blob *b);

/* A shared object in blob (a host variant, an AOTC_EXTERN caller) written
 * to a fresh file in the process's temporary directory,
 * <tmp>/aotc-<name>-<pid>-XXXXXX.so (so dlopen never hands back an earlier
 * one; proc_sweep_scratch removes one a kill left), opened with dlopen flags dl_flags, the file
 * unlinked, and symbol looked up: RT_OK with *handle and *sym (dlclose the
 * handle), RT_ERR_ENV when the file cannot be written, RT_ERR_OTHER when it
 * does not load or lacks the symbol (err says why). */
rt_status rt_load_shared(const rt_blob *blob, const char *name, int dl_flags, const char *symbol,
                         void **handle, void **sym, strbuf *err);

/* One symbol of a library loaded at run time (the CUDA driver, NVRTC,
 * libamdhip64): the name to try first (the versioned one where a header
 * renames the entry point), an optional fallback with the same signature,
 * and where to store it. */
typedef struct rt_sym {
	const char *name;
	const char *fallback;
	void **slot;
} rt_sym;

/* dlsyms every entry of syms[0..n); false with the first missing name in
 * *missing. */
bool rt_resolve(void *lib, const rt_sym *syms, size_t n, const char **missing);

/* C++ text for generated callers (host variants, AOTC_EXTERN callers):
 * template <class T> T aotc_arg(void *p), an argument of the launch's
 * void **args in type T: an rt_ptr for a pointer, the value itself
 * otherwise, read with memcpy since nothing promises their alignment; and
 * the standard headers it and the callers use (<cstddef>, <cstdint>,
 * <cstring>, <type_traits>, <utility>). */
extern const char rt_cpp_arg[];

/* The entry point of a host call's shared object (the host backend's
 * variants and externs, a host reference of any backend):
 * void RT_HOST_ENTRY(void **args), args as launch() takes them. */
#define RT_HOST_ENTRY "aotc_entry"
typedef void rt_host_entry(void **args);

/* Appends to gen (after rt_cpp_arg) the C++ of RT_HOST_ENTRY calling fn
 * (a function or an instance; its return value dropped) with args in its
 * own parameter types; with nparams >= 0 a static_assert that fn takes
 * nparams parameters, naming what (e.g. "AOTC_EXTERN(f)") when it does not. */
void rt_cpp_host_entry(strbuf *gen, const char *fn, int nparams, const char *what);

/* The directory of path ("." when it names none, "/" for a file there);
 * malloc'd. */
char *rt_source_dir(const char *path);

/* One run of an external compiler on generated source, as the host, nvcc
 * and hipcc backends make them. In a fresh scratch directory
 * (<tmp>/<prefix>-<pid>-XXXXXX, proc_mkdtemp) holding aotc.h and gen as <name>, runs
 *   pre... -I<scratch> -I<the source's directory> -I<req's> -D<req's>
 *   <scratch>/<name> post... -o <scratch>/<out>
 * with its output logged there, and gives the file out's bytes (malloc'd,
 * *size) before removing the directory. RT_ERR_ENV when the directory or
 * the files cannot be written or the compiler cannot be started,
 * RT_ERR_COMPILE with the log when it fails. */
rt_status rt_run_compiler(const char *prefix, const char *const *pre, int npre,
                          const rt_compile_request *req, const char *name, const char *gen,
                          const char *const *post, int npost, const char *out, void **data,
                          size_t *size, strbuf *err);

typedef struct rt_launch {
	uint32_t grid[3], block[3];
	uint32_t smem;             /* dynamic shared memory bytes */
} rt_launch;

/* Result of comparing an output with the reference, element by element,
 * accumulated in double. */
typedef struct rt_compare {
	double diff_sq;    /* sum of (out - ref)^2 (floats) */
	double ref_sq;     /* sum of ref^2 (floats) */
	uint64_t bad;      /* floats: out NaN or infinite where ref is finite;
	                      integers: out != ref */
	uint64_t first_bad; /* index of the first bad element (if bad > 0) */
} rt_compare;

/* Guard patterns: what the zones around every buffer hold. Each zone gets
 * its own seed, and the byte at offset i of the pattern of seed s is byte
 * i % 8 (least significant first) of rt_pattern_word(s, i / 8), a hash of
 * both: no byte value repeats with a short period and two seeds differ at
 * almost every offset, so a variant that copies one buffer's guard into
 * another's changes what is there (a zone of one repeated byte would not
 * show it). The CUDA backend's scan kernel computes the same bytes. */
static inline uint64_t rt_pattern_word(uint64_t seed, uint64_t word)
{
	uint64_t x = seed ^ (word * 0x9e3779b97f4a7c15ull);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint8_t rt_pattern_byte(uint64_t seed, uint64_t i)
{
	return (uint8_t)(rt_pattern_word(seed, i / 8) >> (8 * (i % 8)));
}

/* The pattern in host memory: writes bytes [offset, offset + bytes) of
 * seed's pattern to p; rt_pattern_scan returns the index (from p) of the
 * first byte that differs from them, or bytes when none does. */
void rt_pattern_fill(void *p, uint64_t seed, uint64_t offset, size_t bytes);
size_t rt_pattern_scan(const void *p, uint64_t seed, uint64_t offset, size_t bytes);

/* The device's clocks as its driver reports them (rt_ops.clocks), for the
 * database's timing method; 0 (or "") where it does not say. */
typedef struct rt_clocks {
	char source[16];     /* "nvml", "cpufreq" */
	int sm_mhz;          /* now: the SM clock (host: cpu0's frequency) */
	int mem_mhz;         /* now: the memory clock */
	int max_sm_mhz;      /* the most the SM clock (host: cpu0) can run at */
	int app_sm_mhz;      /* the applications (or locked) SM clock */
	int locked;          /* 1: the SM clock is at the applications clock, 0: not, -1: not known */
	char governor[32];   /* host: cpufreq's scaling governor */
} rt_clocks;

typedef struct rt_device rt_device;   /* an open device (worker side) */
typedef struct rt_function rt_function;

typedef struct rt_ops {
	const char *name;

	/* ---- Compile side: thread-safe, no device needed ---- */

	/* Chooses the compiler for a kernel file (req->instance unused), once
	 * per tune, and returns its identity for the compile cache ("nvrtc
	 * 13.0", "nvcc 13.0", "g++ 12.2.0"), which goes into req->compiler of
	 * every compile() of that file. NULL with err set when no compiler can
	 * take the file. A choice worth telling the user about (a file NVRTC
	 * cannot take goes to nvcc) is explained in note. */
	const char *(*compiler_for)(const rt_compile_request *file, strbuf *note, strbuf *err);
	/* Compiles one instantiation. On RT_ERR_COMPILE err holds the log. */
	rt_status (*compile)(const rt_compile_request *req, rt_blob *out, strbuf *err);
	/* Batches (optional; NULL: none): the most instantiations of one file
	 * its compiler takes in one run for this request's compiler (1: it
	 * compiles one at a time), and that run: instances[0..n) into one
	 * binary (out; out->symbol unused) holding them all, symbols[i] the
	 * symbol of instances[i] (malloc'd). A failure is the whole batch's,
	 * with the log: the caller splits the batch to find which fail. With
	 * n == 0 the run compiles the file alone (pool_probe). */
	int (*batch_limit)(const rt_compile_request *file);
	rt_status (*compile_batch)(const rt_compile_request *req, const char *const *instances, int n,
	                           rt_blob *out, char **symbols, strbuf *err);

	/* ---- Device side: one thread, in the worker ---- */

	/* Device index of the backend's devices; -1: $AOTC_DEVICE's, else the
	 * backend's default (CUDA: 0; ROCm: the first of the architecture). */
	rt_status (*open)(rt_device **out, const char *arch, int index, strbuf *err);
	void (*close)(rt_device *d);                 /* accepts NULL */
	void (*describe)(rt_device *d, rt_device_info *info);

	/* Loads a blob and finds its symbol. */
	rt_status (*load)(rt_device *d, const rt_blob *blob, rt_function **out, strbuf *err);
	void (*unload)(rt_device *d, rt_function *f);

	rt_status (*alloc)(rt_device *d, size_t bytes, rt_ptr *out, strbuf *err);
	void (*release)(rt_device *d, rt_ptr p);
	rt_status (*upload)(rt_device *d, rt_ptr dst, const void *src, size_t bytes, strbuf *err);
	rt_status (*download)(rt_device *d, void *dst, rt_ptr src, size_t bytes, strbuf *err);
	rt_status (*copy)(rt_device *d, rt_ptr dst, rt_ptr src, size_t bytes, strbuf *err);

	/* Runs f once. args[i] points to the value of parameter i (an rt_ptr
	 * for pointer parameters, the scalar otherwise), as cuLaunchKernel
	 * takes them. If ms is non-NULL the launch is timed with device events
	 * (host: a monotonic clock) and waited for; otherwise it is only
	 * queued. Opting in to more than the default shared memory is the
	 * backend's business. An extern's caller is run the same way (dims
	 * unused), on the stream launches use, and timed alike. */
	rt_status (*launch)(rt_device *d, rt_function *f, const rt_launch *dims, void **args,
	                    double *ms, strbuf *err);
	/* Sets bytes bytes at dst to value (poisoning outputs). */
	rt_status (*memset8)(rt_device *d, rt_ptr dst, uint8_t value, size_t bytes, strbuf *err);
	/* Writes bytes [offset, offset + bytes) of the guard pattern of seed
	 * (rt_pattern_byte) to dst (filling guard zones). */
	rt_status (*fill_pattern)(rt_device *d, rt_ptr dst, uint64_t seed, uint64_t offset,
	                          size_t bytes, strbuf *err);
	/* Finds the first of bytes bytes at p that differs from bytes
	 * [offset, offset + bytes) of the pattern of seed: *first is its index
	 * from p, or bytes when all match (checking guard zones). */
	rt_status (*scan_pattern)(rt_device *d, rt_ptr p, uint64_t seed, uint64_t offset,
	                          size_t bytes, uint64_t *first, strbuf *err);
	/* Optional, NULL where the device cannot: makes the allocation p (as
	 * alloc returned it) read-only (sealed) or writable again, so that a
	 * stray write into it faults instead of corrupting it. */
	rt_status (*seal)(rt_device *d, rt_ptr p, bool sealed, strbuf *err);
	/* Compares count scalars of type t at out and ref (see rt_compare);
	 * on the device, so outputs need not be copied back. */
	rt_status (*compare)(rt_device *d, rt_ptr out, rt_ptr ref, aotc_dtype t, size_t count,
	                     rt_compare *res, strbuf *err);
	/* Evicts the last-level cache (writes a buffer larger than it). */
	rt_status (*flush_cache)(rt_device *d, strbuf *err);
	/* Optional (NULL: none): evicts from every cache level the lines of
	 * bytes at p (an allocation of alloc's or a part of one), so that the
	 * next launch reads them from memory: what a full flush does for a
	 * launch's data at the cost of its size, not of twice the cache (the
	 * host: clflushopt on x86). */
	rt_status (*evict)(rt_device *d, rt_ptr p, size_t bytes, strbuf *err);
	/* Waits for all queued work; reports faults of queued launches. */
	rt_status (*sync)(rt_device *d, strbuf *err);

	/* Optional (NULL: none): the clocks as the driver says them now (the
	 * CUDA backend: NVML, when libnvidia-ml.so.1 loads; the host:
	 * cpufreq); false when it says nothing. Never an error. */
	bool (*clocks)(rt_device *d, rt_clocks *out);
} rt_ops;

/* The backend for an --arch ("sm90" -> cuda, "gfx90a" -> hip, "host");
 * NULL if this build has none for it. */
const rt_ops *rt_backend_for(const char *arch);

extern const rt_ops rt_host_ops;
extern const rt_ops rt_hip_ops;   /* runtime/hip/: hipcc, libamdhip64 at run time */
#ifdef AOTC_HAVE_CUDA
extern const rt_ops rt_cuda_ops;
#endif

#endif
