/* The CUDA backend's second compiler: nvcc, for kernel files NVRTC cannot
 * take (host headers such as <cstdio>, host functions, main()). nvcc -cubin
 * preprocesses with the host compiler, so it compiles the file exactly as
 * the user's own build does. One nvcc run compiles a batch of variants: a
 * generated file that includes the kernel and takes each instance's
 * address (which instantiates it, as NVRTC's name expressions do); each
 * instance's mangled name is then found among the CUBIN's function symbols
 * by demangling them. Called from many tuner threads at once. */
#include "cuda_internal.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsym.h"
#include "proc.h"

static struct {
	pthread_once_t once;
	char *path;       /* the nvcc that runs */
	char id[32];      /* "nvcc 13.0" */
	char error[1024]; /* why there is none */
} nvcc = {.once = PTHREAD_ONCE_INIT};

/* "Cuda compilation tools, release 13.0, V13.0.48" -> "13.0". */
static bool release_of(const char *text, char *out, size_t n)
{
	const char *r = strstr(text, "release ");
	if (!r)
		return false;
	r += 8;
	size_t len = strcspn(r, ", \n");
	if (len == 0 || len >= n)
		return false;
	memcpy(out, r, len);
	out[len] = 0;
	return true;
}

static void nvcc_load(void)
{
	/* The toolkit named by the environment first, as for NVRTC; then
	 * /usr/local/cuda; then PATH. */
	const char *roots[] = {getenv("CUDA_PATH"), getenv("CUDA_HOME"), "/usr/local/cuda"};
	strbuf tried;
	strbuf_init(&tried);
	for (size_t i = 0; i <= COUNTOF(roots); i++) {
		char *path;
		if (i < COUNTOF(roots)) {
			if (!roots[i] || !roots[i][0])
				continue;
			strbuf p;
			strbuf_init(&p);
			strbuf_printf(&p, "%s/bin/nvcc", roots[i]);
			path = p.data;
			if (access(path, X_OK) != 0) {
				strbuf_printf(&tried, "%s%s: %s", tried.len ? "; " : "", path, strerror(errno));
				free(path);
				continue;
			}
		} else {
			path = xstrdup("nvcc");
		}
		char *argv[] = {path, "--version", NULL};
		strbuf err;
		strbuf_init(&err);
		char *out = proc_output(argv, &err);
		char rel[16];
		if (out && release_of(out, rel, sizeof rel)) {
			nvcc.path = path;
			snprintf(nvcc.id, sizeof nvcc.id, "nvcc %s", rel);
			free(out);
			strbuf_finish(&err);
			strbuf_finish(&tried);
			return;
		}
		strbuf_printf(&tried, "%s%s", tried.len ? "; " : "",
		              out ? "nvcc --version names no release" : err.data);
		free(out);
		strbuf_finish(&err);
		free(path);
	}
	snprintf(nvcc.error, sizeof nvcc.error, "nvcc not found (%s)", tried.data);
	strbuf_finish(&tried);
}

/* The toolkit's library directory, beside nvcc's bin/ (lib64, else lib),
 * malloc'd; NULL for an nvcc found on PATH. */
static char *toolkit_lib_dir(void)
{
	const char *slash = strrchr(nvcc.path, '/');
	if (!slash || slash == nvcc.path)
		return NULL;
	static const char *const dirs[] = {"lib64", "lib"};
	for (size_t i = 0; i < COUNTOF(dirs); i++) {
		strbuf sb;
		strbuf_init(&sb);
		strbuf_printf(&sb, "%.*s/../%s", (int)(slash - nvcc.path), nvcc.path, dirs[i]);
		char *real = realpath(sb.data, NULL);
		strbuf_finish(&sb);
		if (real)
			return real;
	}
	return NULL;
}

const char *cuda_nvcc_id(strbuf *err)
{
	pthread_once(&nvcc.once, nvcc_load);
	if (!nvcc.path) {
		if (err)
			strbuf_puts(err, nvcc.error);
		return NULL;
	}
	return nvcc.id;
}

/* ---- Compiling ---------------------------------------------------------- */

/* An AOTC_EXTERN routine's caller (docs/annotations.md): host code, so a
 * shared object rather than a CUBIN, with an entry point of C linkage that
 * takes the launch's void **args (each an rt_ptr or the scalar, by memcpy:
 * nothing promises their alignment), passes them to the routine in its own
 * parameter types (the frontend compared them with the kernel's) and the
 * stream last, and returns the routine's cudaError_t with its name and
 * text. */
static const char extern_caller[] =
	"#include <tuple>\n"
	"#include <cuda_runtime.h>\n"
	"template <class... P, std::size_t... I>\n"
	"static cudaError_t aotc_call(cudaError_t (*f)(P...), void **a, cudaStream_t s,\n"
	"                             std::index_sequence<I...>)\n"
	"{\n"
	"\t(void)a;\n"
	"\treturn f(aotc_arg<std::tuple_element_t<I, std::tuple<P...>>>(a[I])..., s);\n"
	"}\n"
	"template <std::size_t N, class... P>\n"
	"static cudaError_t aotc_call(cudaError_t (*f)(P...), void **a, cudaStream_t s)\n"
	"{\n"
	"\tstatic_assert(sizeof...(P) == N, \"AOTC_EXTERN: the routine takes the kernel's parameters and a cudaStream_t\");\n"
	"\treturn aotc_call(f, a, s, std::make_index_sequence<N - 1>{});\n"
	"}\n";


/* What every nvcc run needs: nvcc, a CUDA architecture (its compilers'
 * spelling into arch), a source path an #include can name. */
static rt_status nvcc_request_ok(const rt_compile_request *req, char arch[16], strbuf *err)
{
	int major, minor;
	if (!cuda_nvcc_id(err))
		return RT_ERR_ENV;
	if (!cuda_parse_arch(req->arch, &major, &minor, arch, 16)) {
		strbuf_printf(err, "not a CUDA architecture: '%s' (expected e.g. sm90)", req->arch);
		return RT_ERR_ENV;
	}
	if (strpbrk(req->source_path, "\"\n")) {
		strbuf_printf(err, "%s: cannot #include a path with '\"' or a newline", req->source_path);
		return RT_ERR_COMPILE;
	}
	return RT_OK;
}

rt_status cuda_nvcc_compile(const rt_compile_request *req, rt_blob *out, strbuf *err)
{
	if (!req->extern_fn)
		return cuda_nvcc_compile_batch(req, &req->instance, 1, out, &out->symbol, err);
	memset(out, 0, sizeof *out);
	char arch[16];
	rt_status st = nvcc_request_ok(req, arch, err);
	if (st != RT_OK)
		return st;
	/* Names pasted into the generated file and the command line. */
	bool names_ok = ir_is_routine_name(req->extern_fn);
	for (int i = 0; i < req->nlibs; i++)
		names_ok &= ir_is_identifier(req->libs[i]);
	if (!names_ok) {
		strbuf_puts(err, "AOTC_EXTERN: a routine or library name that is not a C identifier");
		return RT_ERR_COMPILE;
	}
	strbuf gen;
	strbuf_init(&gen);
	strbuf_printf(&gen, "#include \"%s\"\n", req->source_path);
	if (req->on_host) {
		/* A host reference: the same shared object, called on host
		 * memory by the worker itself (rt_host_entry). */
		strbuf_puts(&gen, rt_cpp_arg);
		strbuf what;
		strbuf_init(&what);
		strbuf_printf(&what, "AOTC_REFERENCE(%s)", req->extern_fn);
		rt_cpp_host_entry(&gen, req->extern_fn, req->extern_nparams, what.data);
		strbuf_finish(&what);
	} else {
		strbuf_printf(&gen, "%s%s"
		              "extern \"C\" int " CUDA_EXTERN_ENTRY "(void **a, void *stream, const char **name,\n"
		              "                                 const char **text)\n"
		              "{\n"
		              "\tcudaError_t e = aotc_call<%d>(&%s, a, static_cast<cudaStream_t>(stream));\n"
		              "\t*name = cudaGetErrorName(e);\n"
		              "\t*text = cudaGetErrorString(e);\n"
		              "\treturn static_cast<int>(e);\n"
		              "}\n", rt_cpp_arg, extern_caller, req->extern_nparams, req->extern_fn);
	}

	/* An extern's caller or a host reference: nvcc -shared -Xcompiler -fPIC
	 * -cudart shared -arch=sm_90 -std=c++17 ... -l<lib>... -o variant.so, run
	 * where it is built, so with the toolkit's libraries on its rpath. */
	strbuf archopt;
	strbuf_init(&archopt);
	strbuf_printf(&archopt, "-arch=%s", arch);
	const char *pre[10] = {nvcc.path, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"};
	int npre = 6;
	pre[npre++] = archopt.data;
	pre[npre++] = "-std=c++17";
	if (req->on_host)
		pre[npre++] = "-O3"; /* host code the worker runs on every shape */
	char **post = xcalloc((size_t)req->nlibs + 3, sizeof *post);
	int npost = 0;
	for (int i = 0; i < req->nlibs; i++) {
		strbuf l;
		strbuf_init(&l);
		strbuf_printf(&l, "-l%s", req->libs[i]);
		post[npost++] = l.data;
	}
	char *libdir = toolkit_lib_dir();
	if (libdir) {
		post[npost++] = xstrdup("-Xlinker");
		strbuf r;
		strbuf_init(&r);
		strbuf_printf(&r, "-rpath=%s", libdir);
		post[npost++] = r.data;
		free(libdir);
	}
	void *bin;
	size_t size;
	st = rt_run_compiler("aotc-nvcc", pre, npre, req, "variant.cu", gen.data, (const char *const *)post, npost,
	                     "variant.so", &bin, &size, err);
	for (int i = 0; i < npost; i++)
		free(post[i]);
	free(post);
	strbuf_finish(&archopt);
	strbuf_finish(&gen);
	if (st != RT_OK)
		return st;
	out->data = bin;
	out->size = size;
	out->symbol = xstrdup(req->on_host ? RT_HOST_ENTRY : CUDA_EXTERN_ENTRY);
	return RT_OK;
}

bool cuda_resource_error(strbuf *log)
{
	const char *at = log->data ? strstr(log->data, "uses too much shared data (") : NULL;
	unsigned long used, max;
	if (!at || sscanf(at, "uses too much shared data (%lx bytes, %lx max)", &used, &max) != 2)
		return false;
	strbuf msg;
	strbuf_init(&msg);
	strbuf_printf(&msg, "%lu bytes of static shared memory, the limit is %lu (ptxas: %.*s)", used, max,
	              (int)strcspn(at, "\n"), at);
	strbuf_finish(log);
	*log = msg;
	return true;
}

/* instances[0..n) of the file in one nvcc -cubin run: taking each address
 * instantiates it, as NVRTC's name expressions do; each symbol is then
 * found among the CUBIN's by demangling. */
rt_status cuda_nvcc_compile_batch(const rt_compile_request *req, const char *const *instances, int n,
                                  rt_blob *out, char **symbols, strbuf *err)
{
	memset(out, 0, sizeof *out);
	char arch[16];
	rt_status st = nvcc_request_ok(req, arch, err);
	if (st != RT_OK)
		return st;
	strbuf gen, archopt;
	strbuf_init(&gen);
	strbuf_init(&archopt);
	strbuf_printf(&gen, "#include \"%s\"\n", req->source_path);
	for (int i = 0; i < n; i++)
		strbuf_printf(&gen, "[[maybe_unused]] static auto *const aotc_instance_%d = &%s;\n", i, instances[i]);
	/* nvcc -cubin -arch=sm_90 -std=c++17 -I... -D... variant.cu -o variant.cubin */
	strbuf_printf(&archopt, "-arch=%s", arch);
	const char *pre[] = {nvcc.path, "-cubin", archopt.data, "-std=c++17"};
	void *bin;
	size_t size;
	st = rt_run_compiler("aotc-nvcc", pre, (int)COUNTOF(pre), req, "variant.cu", gen.data, NULL, 0,
	                     "variant.cubin", &bin, &size, err);
	strbuf_finish(&archopt);
	strbuf_finish(&gen);
	if (st == RT_ERR_COMPILE && cuda_resource_error(err))
		return RT_ERR_RESOURCES;
	if (st != RT_OK)
		return st;
	if (!elf_find_kernels(bin, size, instances, n, "nvcc", symbols, err)) {
		free(bin);
		return RT_ERR_COMPILE;
	}
	out->data = bin;
	out->size = size;
	return RT_OK;
}
