/* The ROCm backend, compile side: each variant is one `hipcc --genco
 * --offload-arch=gfx90a` run on a generated file that includes the kernel
 * source and takes the instance's address (which instantiates it for the
 * device, as nvcc -cubin does); the code object is taken out of the offload
 * bundle hipcc writes and the instance's mangled name found among its
 * function symbols (elfsym.c).
 *
 * Why hipcc and not hiprtc: hipcc is a Debian package that builds code
 * objects on a machine without an AMD GPU or a ROCm runtime (what CI and
 * --compile-only need), it takes kernel files as people write them (host
 * code, host headers), and it needs nothing loaded into aotc. hiprtc would
 * save a process per variant but needs libhiprtc at run time.
 *
 * The device side (load, launch, time) is device.c, on libamdhip64 loaded
 * at run time. */
#include "hip_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "elfsym.h"
#include "proc.h"

static struct {
	pthread_once_t once;
	char *path;       /* the hipcc that runs */
	char id[48];      /* "hipcc 5.2.21153-0" */
	char error[1024]; /* why there is none */
} hipcc = {.once = PTHREAD_ONCE_INIT};

/* "HIP version: 5.2.21153-0" -> "5.2.21153-0". */
static bool version_of(const char *text, char *out, size_t n)
{
	const char *v = strstr(text, "HIP version: ");
	if (!v)
		return false;
	v += 13;
	size_t len = strcspn(v, " \n");
	if (len == 0 || len >= n)
		return false;
	memcpy(out, v, len);
	out[len] = 0;
	return true;
}

static void hipcc_load(void)
{
	/* AOTC_HIPCC first, then ROCm's own place, then PATH (Debian's). */
	const char *env = getenv("AOTC_HIPCC");
	const char *cands[] = {env && *env ? env : NULL, "/opt/rocm/bin/hipcc", "hipcc"};
	strbuf tried;
	strbuf_init(&tried);
	for (size_t i = 0; i < COUNTOF(cands); i++) {
		if (!cands[i])
			continue;
		if (strchr(cands[i], '/') && access(cands[i], X_OK) != 0) {
			strbuf_printf(&tried, "%s%s: %s", tried.len ? "; " : "", cands[i], strerror(errno));
			continue;
		}
		char *path = xstrdup(cands[i]);
		char *argv[] = {path, "--version", NULL};
		strbuf err;
		strbuf_init(&err);
		char *out = proc_output(argv, &err);
		char ver[32];
		if (out && version_of(out, ver, sizeof ver)) {
			hipcc.path = path;
			snprintf(hipcc.id, sizeof hipcc.id, "hipcc %s", ver);
			free(out);
			strbuf_finish(&err);
			strbuf_finish(&tried);
			return;
		}
		strbuf_printf(&tried, "%s%s", tried.len ? "; " : "",
		              out ? "hipcc --version names no HIP version" : err.data);
		free(out);
		strbuf_finish(&err);
		free(path);
	}
	snprintf(hipcc.error, sizeof hipcc.error,
	         "hipcc not found (%s): install ROCm's hipcc (Debian: apt install hipcc) or set AOTC_HIPCC",
	         tried.data);
	strbuf_finish(&tried);
}

/* Whether this hipcc builds code for arch at all, tried on an empty kernel:
 * an older hipcc than the architecture (Debian's 5.2 knows gfx940 but not
 * gfx942) would otherwise fail every variant alike, one log each. */
static bool hipcc_knows(const rt_compile_request *file, const char *arch, strbuf *err)
{
	rt_compile_request probe = {.source_path = file->source_path, .arch = arch};
	strbuf offload, why;
	strbuf_init(&offload);
	strbuf_init(&why);
	strbuf_printf(&offload, "--offload-arch=%s", arch);
	const char *pre[] = {hipcc.path, "--genco", offload.data};
	void *raw = NULL;
	size_t size;
	rt_status st = rt_run_compiler("aotc-hipcc", pre, (int)COUNTOF(pre), &probe, "probe.hip",
	                               "#include <hip/hip_runtime.h>\n__global__ void aotc_probe() {}\n",
	                               NULL, 0, "probe.co", &raw, &size, &why);
	free(raw);
	if (st != RT_OK) {
		/* The compiler's own words: its first error, to a ';'. */
		const char *line = strstr(why.data, "error: ");
		line = line ? line + 7 : NULL;
		size_t n = line ? strcspn(line, ";\n") : 0;
		strbuf_printf(err, "%s cannot build code for %s%s%.*s (a newer ROCm can)", hipcc.id, arch,
		              line ? ": " : "", (int)n, line ? line : "");
	}
	strbuf_finish(&why);
	strbuf_finish(&offload);
	return st == RT_OK;
}

static const char *hip_compiler_for(const rt_compile_request *file, strbuf *note, strbuf *err)
{
	(void)note;
	pthread_once(&hipcc.once, hipcc_load);
	if (!hipcc.path) {
		strbuf_puts(err, hipcc.error);
		return NULL;
	}
	const arch_info *ai = arch_parse(file->arch);
	if (ai && ai->kind == ARCH_ROCM && !hipcc_knows(file, ai->name, err))
		return NULL;
	return hipcc.id;
}

/* The code object for arch in hipcc's output: the output itself when it is
 * an ELF, else the entry "hipv4-amdgcn-amd-amdhsa--<arch>" of the clang
 * offload bundle (magic, entry count, then per entry offset, size, triple
 * length and triple, little-endian 64-bit). A copy, malloc'd; NULL with the
 * reason in err. */
static unsigned char *code_object(const unsigned char *d, size_t size, const char *arch, size_t *n,
                                  strbuf *err)
{
	static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
	const size_t mlen = sizeof magic - 1;
	if (size >= 4 && memcmp(d, "\177ELF", 4) == 0) {
		*n = size;
		unsigned char *c = xmalloc(size);
		memcpy(c, d, size);
		return c;
	}
	if (size < mlen + 8 || memcmp(d, magic, mlen) != 0) {
		strbuf_puts(err, "hipcc's output is neither a code object nor an offload bundle");
		return NULL;
	}
	uint64_t count, off, sz, tlen;
	size_t at = mlen;
	memcpy(&count, d + at, 8);
	at += 8;
	for (uint64_t i = 0; i < count && at + 24 <= size; i++) {
		memcpy(&off, d + at, 8);
		memcpy(&sz, d + at + 8, 8);
		memcpy(&tlen, d + at + 16, 8);
		at += 24;
		if (tlen > size - at)
			break;
		const char *triple = (const char *)d + at;
		at += tlen;
		const char *dash = tlen > 2 ? memchr(triple, '-', tlen) : NULL;
		bool amd = dash && strstr(triple, "amdgcn") && tlen > strlen(arch) &&
		           memcmp(triple + tlen - strlen(arch), arch, strlen(arch)) == 0 &&
		           triple[tlen - strlen(arch) - 1] == '-';
		if (!amd)
			continue;
		if (off > size || sz > size - off || sz < 4 || memcmp(d + off, "\177ELF", 4) != 0)
			break;
		*n = (size_t)sz;
		unsigned char *c = xmalloc(*n);
		memcpy(c, d + off, *n);
		return c;
	}
	strbuf_printf(err, "hipcc's offload bundle has no code object for %s", arch);
	return NULL;
}

/* A host reference (rt_compile_request.on_host): the kernel file as host
 * code only (no device code, so nothing registers with the HIP runtime
 * when the worker loads it) in a shared object whose entry calls it. */
static rt_status host_reference(const rt_compile_request *req, const arch_info *ai, rt_blob *out,
                                strbuf *err)
{
	if (!ir_is_routine_name(req->extern_fn)) {
		strbuf_puts(err, "AOTC_REFERENCE: a function name that is not a C identifier");
		return RT_ERR_COMPILE;
	}
	strbuf gen, what, offload;
	strbuf_init(&gen);
	strbuf_init(&what);
	strbuf_init(&offload);
	strbuf_printf(&gen, "#include <hip/hip_runtime.h>\n#include \"%s\"\n%s", req->source_path, rt_cpp_arg);
	strbuf_printf(&what, "AOTC_REFERENCE(%s)", req->extern_fn);
	rt_cpp_host_entry(&gen, req->extern_fn, req->extern_nparams, what.data);
	/* hipcc --cuda-host-only --offload-arch=gfx90a -shared -fPIC -O3
	 * -std=c++17 -I... -D... reference.hip -o reference.so (the arch only
	 * keeps hipcc from probing for a GPU). */
	strbuf_printf(&offload, "--offload-arch=%s", ai->name);
	const char *pre[] = {hipcc.path, "--cuda-host-only", offload.data, "-shared", "-fPIC", "-O3", "-std=c++17"};
	rt_status st = rt_run_compiler("aotc-hipcc", pre, (int)COUNTOF(pre), req, "reference.hip", gen.data,
	                               NULL, 0, "reference.so", &out->data, &out->size, err);
	strbuf_finish(&gen);
	strbuf_finish(&what);
	strbuf_finish(&offload);
	if (st == RT_OK)
		out->symbol = xstrdup(RT_HOST_ENTRY);
	return st;
}

/* What every hipcc run needs: hipcc, a ROCm architecture (*ai), a source
 * path an #include can name. */
static rt_status hip_request_ok(const rt_compile_request *req, const arch_info **ai, strbuf *err)
{
	if (!hip_compiler_for(req, NULL, err))
		return RT_ERR_ENV;
	*ai = arch_parse(req->arch);
	if (!*ai || (*ai)->kind != ARCH_ROCM) {
		strbuf_printf(err, "not a ROCm architecture: '%s' (expected e.g. gfx90a)", req->arch);
		return RT_ERR_ENV;
	}
	if (strpbrk(req->source_path, "\"\n")) {
		strbuf_printf(err, "%s: cannot #include a path with '\"' or a newline", req->source_path);
		return RT_ERR_COMPILE;
	}
	return RT_OK;
}

/* instances[0..n) of the file in one hipcc --genco run. The kernel file is
 * CUDA as people write it: the HIP runtime header first gives it
 * __global__, threadIdx, float4 and the rest. Taking each address
 * instantiates it for the device. */
static rt_status hip_compile_batch(const rt_compile_request *req, const char *const *instances, int n,
                                   rt_blob *out, char **symbols, strbuf *err)
{
	memset(out, 0, sizeof *out);
	const arch_info *ai;
	rt_status st = hip_request_ok(req, &ai, err);
	if (st != RT_OK)
		return st;
	strbuf gen;
	strbuf_init(&gen);
	strbuf_printf(&gen, "#include <hip/hip_runtime.h>\n#include \"%s\"\n", req->source_path);
	for (int i = 0; i < n; i++)
		strbuf_printf(&gen, "[[maybe_unused]] static auto *const aotc_instance_%d = &%s;\n", i, instances[i]);
	/* hipcc --genco --offload-arch=gfx90a -O3 -std=c++17 -I... -D...
	 * variant.hip -o variant.co */
	strbuf offload;
	strbuf_init(&offload);
	strbuf_printf(&offload, "--offload-arch=%s", ai->name);
	const char *pre[] = {hipcc.path, "--genco", offload.data, "-O3", "-std=c++17"};
	void *raw;
	size_t size;
	st = rt_run_compiler("aotc-hipcc", pre, (int)COUNTOF(pre), req, "variant.hip", gen.data, NULL, 0,
	                     "variant.co", &raw, &size, err);
	strbuf_finish(&offload);
	strbuf_finish(&gen);
	if (st != RT_OK)
		return st;
	size_t cosize = 0;
	unsigned char *co = code_object(raw, size, ai->name, &cosize, err);
	free(raw);
	if (!co || !elf_find_kernels(co, cosize, instances, n, "hipcc", symbols, err)) {
		free(co);
		return RT_ERR_COMPILE;
	}
	out->data = co;
	out->size = cosize;
	return RT_OK;
}

static rt_status hip_compile(const rt_compile_request *req, rt_blob *out, strbuf *err)
{
	memset(out, 0, sizeof *out);
	if (!req->extern_fn)
		return hip_compile_batch(req, &req->instance, 1, out, &out->symbol, err);
	const arch_info *ai;
	rt_status st = hip_request_ok(req, &ai, err);
	if (st != RT_OK)
		return st;
	if (!req->on_host) {
		strbuf_printf(err, "AOTC_EXTERN routines are not built for ROCm yet ('%s')", req->extern_fn);
		return RT_ERR_COMPILE;
	}
	return host_reference(req, ai, out, err);
}

/* hipcc runs are long (about a second a variant): batch them. */
static int hip_batch_limit(const rt_compile_request *file)
{
	(void)file;
	return RT_BATCH_MAX;
}

/* The compile side here, the device side in device.c. */
const rt_ops rt_hip_ops = {
	.name = "hip",
	.compiler_for = hip_compiler_for,
	.compile = hip_compile,
	.batch_limit = hip_batch_limit,
	.compile_batch = hip_compile_batch,
	.open = hip_open,
	.close = hip_close,
	.describe = hip_describe,
	.load = hip_load,
	.unload = hip_unload,
	.alloc = hip_alloc,
	.release = hip_release,
	.upload = hip_upload,
	.download = hip_download,
	.copy = hip_copy,
	.launch = hip_launch,
	.memset8 = hip_memset8,
	.fill_pattern = hip_fill_pattern,
	.scan_pattern = hip_scan_pattern,
	.compare = hip_compare,
	.flush_cache = hip_flush_cache,
	.sync = hip_sync,
};
