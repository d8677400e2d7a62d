/* The compile side of the CUDA backend: one instantiation of a kernel
 * template through NVRTC into a CUBIN. Called from many tuner threads at
 * once; NVRTC itself is thread-safe for distinct programs, and all shared
 * state here is written once under pthread_once. */
#include "cuda_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The build embeds runtime/include/aotc.h. */
extern const char aotc_header_text[];
extern const size_t aotc_header_text_len;

static struct {
	__typeof__(nvrtcVersion) *Version;
	__typeof__(nvrtcGetErrorString) *GetErrorString;
	__typeof__(nvrtcCreateProgram) *CreateProgram;
	__typeof__(nvrtcDestroyProgram) *DestroyProgram;
	__typeof__(nvrtcCompileProgram) *CompileProgram;
	__typeof__(nvrtcGetProgramLogSize) *GetProgramLogSize;
	__typeof__(nvrtcGetProgramLog) *GetProgramLog;
	__typeof__(nvrtcAddNameExpression) *AddNameExpression;
	__typeof__(nvrtcGetLoweredName) *GetLoweredName;
	__typeof__(nvrtcGetCUBINSize) *GetCUBINSize;
	__typeof__(nvrtcGetCUBIN) *GetCUBIN;
} nv;

static const rt_sym nv_syms[] = {
	{"nvrtcVersion", NULL, (void **)&nv.Version},
	{"nvrtcGetErrorString", NULL, (void **)&nv.GetErrorString},
	{"nvrtcCreateProgram", NULL, (void **)&nv.CreateProgram},
	{"nvrtcDestroyProgram", NULL, (void **)&nv.DestroyProgram},
	{"nvrtcCompileProgram", NULL, (void **)&nv.CompileProgram},
	{"nvrtcGetProgramLogSize", NULL, (void **)&nv.GetProgramLogSize},
	{"nvrtcGetProgramLog", NULL, (void **)&nv.GetProgramLog},
	{"nvrtcAddNameExpression", NULL, (void **)&nv.AddNameExpression},
	{"nvrtcGetLoweredName", NULL, (void **)&nv.GetLoweredName},
	{"nvrtcGetCUBINSize", NULL, (void **)&nv.GetCUBINSize},
	{"nvrtcGetCUBIN", NULL, (void **)&nv.GetCUBIN},
};

/* Written once by nv_load, read-only afterwards. */
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
static bool nv_ok;
static char nv_error[1024];
static int nv_major, nv_minor;
static char nv_id[32];
static char *nv_include_opt;   /* "-I<toolkit>/include", or NULL if none found */
static char *nv_cccl_opt;      /* "-I<toolkit>/include/cccl" (CUDA 13 keeps libcu++,
                                  CUB and Thrust there, as nvcc knows), or NULL */
static char *nv_header;        /* aotc.h, NUL-terminated as NVRTC wants it */

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format(const char *fmt, ...)
{
	strbuf sb;
	strbuf_init(&sb);
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	return sb.data;
}

static bool is_dir(const char *path) { return access(path, X_OK) == 0; }

/* Tries the sonames NVRTC has had, in dir/lib64 or (dir NULL) on the
 * loader's search path. */
static void *nv_open(const char *dir, strbuf *tried)
{
	static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
	for (size_t i = 0; i < COUNTOF(names); i++) {
		char *path = dir ? format("%s/lib64/%s", dir, names[i]) : xstrdup(names[i]);
		void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!lib)
			strbuf_printf(tried, "%s%s", tried->len ? ", " : "", path);
		free(path);
		if (lib)
			return lib;
	}
	return NULL;
}

static void nv_load(void)
{
	/* An explicit CUDA_PATH / CUDA_HOME wins over whatever the loader
	 * finds; /usr/local/cuda is the last resort. */
	const char *roots[] = {getenv("CUDA_PATH"), getenv("CUDA_HOME"), NULL, "/usr/local/cuda"};
	strbuf tried;
	strbuf_init(&tried);
	void *lib = NULL;
	const char *root = NULL;
	for (size_t i = 0; i < COUNTOF(roots) && !lib; i++) {
		if (i < 2 && (!roots[i] || !roots[i][0]))
			continue;
		lib = nv_open(roots[i], &tried);
		root = roots[i];
	}
	if (!lib) {
		snprintf(nv_error, sizeof nv_error,
		         "NVRTC not found: install the CUDA toolkit or set CUDA_PATH (tried %s)",
		         tried.data);
		strbuf_finish(&tried);
		return;
	}
	strbuf_finish(&tried);
	const char *missing;
	if (!rt_resolve(lib, nv_syms, COUNTOF(nv_syms), &missing)) {
		snprintf(nv_error, sizeof nv_error,
		         "NVRTC is too old (no %s): install CUDA toolkit 11.2 or newer", missing);
		dlclose(lib);
		return;
	}
	nv.Version(&nv_major, &nv_minor);
	snprintf(nv_id, sizeof nv_id, "nvrtc %d.%d", nv_major, nv_minor);

	/* The toolkit headers (<cuda_fp16.h>, <cuda/std/...>) next to the
	 * library we loaded, else the first toolkit that has them. */
	const char *incs[] = {root, getenv("CUDA_PATH"), getenv("CUDA_HOME"), "/usr/local/cuda"};
	for (size_t i = 0; i < COUNTOF(incs) && !nv_include_opt; i++) {
		if (!incs[i] || !incs[i][0])
			continue;
		char *dir = format("%s/include", incs[i]);
		if (is_dir(dir)) {
			nv_include_opt = format("-I%s", dir);
			char *cccl = format("%s/cccl", dir);
			if (is_dir(cccl))
				nv_cccl_opt = format("-I%s", cccl);
			free(cccl);
		}
		free(dir);
	}

	nv_header = xmalloc(aotc_header_text_len + 1);
	memcpy(nv_header, aotc_header_text, aotc_header_text_len);
	nv_header[aotc_header_text_len] = 0;
	nv_ok = true;
}

bool cuda_nvrtc_version(int *major, int *minor, const char **why)
{
	pthread_once(&nv_once, nv_load);
	if (!nv_ok) {
		if (why)
			*why = nv_error;
		return false;
	}
	*major = nv_major;
	*minor = nv_minor;
	return true;
}

const char *cuda_nvrtc_id(strbuf *err)
{
	pthread_once(&nv_once, nv_load);
	if (!nv_ok) {
		strbuf_puts(err, nv_error);
		return NULL;
	}
	return nv_id;
}

/* The program log without its trailing newlines; "" when there is none. */
static char *program_log(nvrtcProgram prog)
{
	size_t n = 0;
	if (nv.GetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0)
		return xstrdup("");
	char *log = xmalloc(n + 1);
	if (nv.GetProgramLog(prog, log) != NVRTC_SUCCESS)
		n = 0;
	log[n] = 0;
	size_t len = strlen(log);
	while (len && (log[len - 1] == '\n' || log[len - 1] == ' '))
		log[--len] = 0;
	return log;
}

/* NVRTC's options for req, NULL-terminated; free with free_opts. */
static char **nvrtc_options(const rt_compile_request *req, const char *arch, size_t *n)
{
	size_t nopts = 0, maxopts = 8 + (size_t)req->ninclude_dirs + (size_t)req->ndefines;
	char **opts = xcalloc(maxopts, sizeof *opts);
	/* sm_XX, not compute_XX: we want SASS in a CUBIN, not PTX. */
	opts[nopts++] = format("-arch=%s", arch);
	opts[nopts++] = xstrdup("-std=c++17");
	/* Keeps warning 1097 out of the log of every variant. */
	opts[nopts++] = xstrdup("--diag-suppress=1097");
	char *srcdir = rt_source_dir(req->source_path);
	opts[nopts++] = format("-I%s", srcdir);
	free(srcdir);
	for (int i = 0; i < req->ninclude_dirs; i++)
		opts[nopts++] = format("-I%s", req->include_dirs[i]);
	if (nv_include_opt)
		opts[nopts++] = xstrdup(nv_include_opt);
	if (nv_cccl_opt)
		opts[nopts++] = xstrdup(nv_cccl_opt);
	for (int i = 0; i < req->ndefines; i++)
		opts[nopts++] = format("-D%s", req->defines[i]);
	*n = nopts;
	return opts;
}

static void free_opts(char **opts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(opts[i]);
	free(opts);
}

/* The headers every program gets in memory: aotc.h; and with the host code
 * set aside (cuda_nvrtc_aside), the headers only host code includes, which
 * NVRTC does not have, empty: the code that used them is blanked out, and
 * device code that needs one fails here and goes to nvcc. */
static const char *const header_names[] = {
	"aotc.h", "cstdio", "stdio.h", "cstdlib", "stdlib.h", "cstring", "string.h", "iostream",
	"fstream", "sstream", "iomanip", "vector", "string", "map", "memory", "chrono", "ctime",
	"time.h", "random", "omp.h", "cuda_runtime.h", "cuda_runtime_api.h", "unistd.h", "sys/time.h",
};

static int program_headers(bool aside, const char **contents)
{
	for (size_t i = 0; i < COUNTOF(header_names); i++)
		contents[i] = i == 0 ? nv_header : "";
	return aside ? (int)COUNTOF(header_names) : 1;
}

bool cuda_nvrtc_aside(const char *compiler) { return compiler && strstr(compiler, CUDA_ASIDE) != NULL; }

bool cuda_nvrtc_takes(const rt_compile_request *file, bool aside, strbuf *log)
{
	pthread_once(&nv_once, nv_load);
	int major, minor;
	char arch[16];
	if (!nv_ok || !cuda_parse_arch(file->arch, &major, &minor, arch, sizeof arch))
		return false;
	char *source = format("#include \"%s\"\n", aside ? file->device_source : file->source_path);
	size_t nopts;
	char **opts = nvrtc_options(file, arch, &nopts);
	const char *headers[COUNTOF(header_names)];
	int nheaders = program_headers(aside, headers);
	nvrtcProgram prog = NULL;
	bool ok = nv.CreateProgram(&prog, source, "aotc_file.cu", nheaders, headers, header_names) ==
	          NVRTC_SUCCESS;
	if (ok) {
		nvrtcResult r = nv.CompileProgram(prog, (int)nopts, (const char *const *)opts);
		ok = r == NVRTC_SUCCESS;
		if (!ok) {
			char *text = program_log(prog);
			strbuf_puts(log, text[0] ? text : nv.GetErrorString(r));
			free(text);
		}
		nv.DestroyProgram(&prog);
	}
	free_opts(opts, nopts);
	free(source);
	return ok;
}

rt_status cuda_nvrtc_compile(const rt_compile_request *req, rt_blob *out, strbuf *err)
{
	out->data = NULL;
	out->size = 0;
	out->symbol = NULL;
	pthread_once(&nv_once, nv_load);
	if (!nv_ok) {
		strbuf_puts(err, nv_error);
		return RT_ERR_ENV;
	}
	int major, minor;
	char arch[16];
	if (!cuda_parse_arch(req->arch, &major, &minor, arch, sizeof arch)) {
		strbuf_printf(err, "not a CUDA architecture: '%s' (expected e.g. sm90)", req->arch);
		return RT_ERR_ENV;
	}

	/* The kernel file is included rather than passed as the program so
	 * that its own quoted includes and diagnostics keep its real path. */
	bool aside = cuda_nvrtc_aside(req->compiler) && req->device_source;
	char *source = format("#include \"%s\"\n", aside ? req->device_source : req->source_path);
	size_t nopts;
	char **opts = nvrtc_options(req, arch, &nopts);
	/* A template instance is named by address: "&sgemm<64, 64, 8, 4, 4, 4>". */
	char *expr = req->instance[0] == '&' ? xstrdup(req->instance)
	                                     : format("&%s", req->instance);

	rt_status st = RT_OK;
	nvrtcProgram prog = NULL;
	const char *headers[COUNTOF(header_names)];
	int nheaders = program_headers(aside, headers);
	nvrtcResult r = nv.CreateProgram(&prog, source, "aotc_variant.cu", nheaders, headers, header_names);
	if (r != NVRTC_SUCCESS) {
		strbuf_printf(err, "nvrtcCreateProgram: %s", nv.GetErrorString(r));
		st = RT_ERR_OTHER;
		goto out;
	}
	r = nv.AddNameExpression(prog, expr);
	if (r != NVRTC_SUCCESS) {
		strbuf_printf(err, "nvrtcAddNameExpression(%s): %s", expr, nv.GetErrorString(r));
		st = RT_ERR_COMPILE;
		goto out;
	}
	r = nv.CompileProgram(prog, (int)nopts, (const char *const *)opts);
	if (r != NVRTC_SUCCESS) {
		char *log = program_log(prog);
		if (r == NVRTC_ERROR_INVALID_OPTION) {
			/* Not the variant's fault: every variant would fail the
			 * same way (most likely an arch this NVRTC lacks). */
			strbuf_printf(err, "%s rejected the options (-arch=%s)%s%s", nv_id, arch,
			              log[0] ? ": " : "", log);
			st = RT_ERR_ENV;
		} else {
			strbuf_puts(err, log[0] ? log : nv.GetErrorString(r));
			st = r == NVRTC_ERROR_COMPILATION ? RT_ERR_COMPILE : RT_ERR_OTHER;
			if (st == RT_ERR_COMPILE && cuda_resource_error(err))
				st = RT_ERR_RESOURCES;
		}
		free(log);
		goto out;
	}
	const char *lowered = NULL;
	r = nv.GetLoweredName(prog, expr, &lowered);
	if (r != NVRTC_SUCCESS || !lowered) {
		strbuf_printf(err, "%s does not name a kernel: %s", req->instance,
		              nv.GetErrorString(r));
		st = RT_ERR_COMPILE;
		goto out;
	}
	size_t size = 0;
	r = nv.GetCUBINSize(prog, &size);
	if (r != NVRTC_SUCCESS || size == 0) {
		strbuf_printf(err, "NVRTC produced no CUBIN for -arch=%s (a bug in aotc's options)%s%s",
		              arch, r != NVRTC_SUCCESS ? ": " : "",
		              r != NVRTC_SUCCESS ? nv.GetErrorString(r) : "");
		st = RT_ERR_COMPILE;
		goto out;
	}
	void *data = xmalloc(size);
	r = nv.GetCUBIN(prog, data);
	if (r != NVRTC_SUCCESS) {
		free(data);
		strbuf_printf(err, "nvrtcGetCUBIN: %s", nv.GetErrorString(r));
		st = RT_ERR_OTHER;
		goto out;
	}
	out->data = data;
	out->size = size;
	out->symbol = xstrdup(lowered);   /* owned by prog, which goes now */
out:
	if (prog)
		nv.DestroyProgram(&prog);
	free_opts(opts, nopts);
	free(expr);
	free(source);
	return st;
}
