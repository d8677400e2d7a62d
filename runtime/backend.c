#include "backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "proc.h"

const char *rt_status_name(rt_status s)
{
	static const char *names[] = {
		[RT_OK] = "ok",
		[RT_ERR_COMPILE] = "compile_error",
		[RT_ERR_RESOURCES] = "resources",
		[RT_ERR_FAULT] = "fault",
		[RT_ERR_ENV] = "environment",
		[RT_ERR_OTHER] = "error",
		[RT_ERR_NO_DEVICE] = "no_device",
		[RT_ERR_RETURNED] = "returned_error",
	};
	return (unsigned)s < COUNTOF(names) ? names[s] : "error";
}

void rt_blob_finish(rt_blob *b)
{
	free(b->data);
	free(b->symbol);
	b->data = NULL;
	b->symbol = NULL;
	b->size = 0;
}

/* The pattern's 8 bytes at an offset that is a multiple of 8, as they lie
 * in memory. */
static uint64_t pattern_bytes(uint64_t seed, uint64_t word)
{
	uint64_t v = rt_pattern_word(seed, word);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

void rt_pattern_fill(void *p, uint64_t seed, uint64_t offset, size_t bytes)
{
	unsigned char *b = p;
	size_t i = 0;
	for (; i < bytes && (offset + i) % 8; i++)
		b[i] = rt_pattern_byte(seed, offset + i);
	for (; i + 8 <= bytes; i += 8) {
		uint64_t v = pattern_bytes(seed, (offset + i) / 8);
		memcpy(b + i, &v, 8);
	}
	for (; i < bytes; i++)
		b[i] = rt_pattern_byte(seed, offset + i);
}

size_t rt_pattern_scan(const void *p, uint64_t seed, uint64_t offset, size_t bytes)
{
	const unsigned char *b = p;
	size_t i = 0;
	for (; i < bytes && (offset + i) % 8; i++)
		if (b[i] != rt_pattern_byte(seed, offset + i))
			return i;
	for (; i + 8 <= bytes; i += 8) {
		uint64_t v;
		memcpy(&v, b + i, 8);
		if (v != pattern_bytes(seed, (offset + i) / 8))
			break; /* the byte loop below finds which */
	}
	for (; i < bytes; i++)
		if (b[i] != rt_pattern_byte(seed, offset + i))
			return i;
	return bytes;
}

const rt_ops *rt_backend_for(const char *arch)
{
	const arch_info *a = arch_parse(arch);
	switch (a ? a->kind : ARCH_ROCM) {
	case ARCH_HOST:
		return &rt_host_ops;
	case ARCH_CUDA:
#ifdef AOTC_HAVE_CUDA
		return &rt_cuda_ops;
#else
		return NULL;
#endif
	case ARCH_ROCM:
		return &rt_hip_ops;
	}
	return NULL;
}

bool rt_resolve(void *lib, const rt_sym *syms, size_t n, const char **missing)
{
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(lib, syms[i].name);
		if (!p && syms[i].fallback)
			p = dlsym(lib, syms[i].fallback);
		if (!p) {
			*missing = syms[i].name;
			return false;
		}
		*syms[i].slot = p;
	}
	return true;
}

rt_status rt_load_shared(const rt_blob *blob, const char *name, int dl_flags, const char *symbol,
                         void **handle, void **sym, strbuf *err)
{
	*handle = *sym = NULL;
	strbuf path;
	strbuf_init(&path);
	strbuf_printf(&path, "%s/aotc-%s-%ld-XXXXXX.so", proc_tmp_root(), name, (long)getpid());
	int fd = mkstemps(path.data, 3);
	if (fd < 0) {
		strbuf_printf(err, "mkstemps %s: %s", path.data, strerror(errno));
		strbuf_finish(&path);
		return RT_ERR_ENV;
	}
	const char *p = blob->data;
	size_t left = blob->size;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			strbuf_printf(err, "%s: %s", path.data, strerror(errno));
			close(fd);
			unlink(path.data);
			strbuf_finish(&path);
			return RT_ERR_ENV;
		}
		p += w;
		left -= (size_t)w;
	}
	close(fd);
	/* The mapping keeps the inode alive once the name is gone. */
	void *h = dlopen(path.data, dl_flags);
	unlink(path.data);
	strbuf_finish(&path);
	if (!h) {
		const char *m = dlerror();
		strbuf_printf(err, "dlopen: %s", m ? m : "failed");
		return RT_ERR_OTHER;
	}
	dlerror();
	void *s = dlsym(h, symbol);
	if (!s) {
		const char *m = dlerror();
		strbuf_printf(err, "dlsym %s: %s", symbol, m ? m : "not found");
		dlclose(h);
		return RT_ERR_OTHER;
	}
	*handle = h;
	*sym = s;
	return RT_OK;
}

const char rt_cpp_arg[] =
	"#include <cstddef>\n"
	"#include <cstdint>\n"
	"#include <cstring>\n"
	"#include <type_traits>\n"
	"#include <utility>\n"
	"template <class T> static T aotc_arg(void *p)\n"
	"{\n"
	"\tusing U = std::remove_cv_t<T>;\n"
	"\tif constexpr (std::is_pointer_v<U>) {\n"
	"\t\tstd::uint64_t v;\n"
	"\t\tstd::memcpy(&v, p, sizeof v);\n"
	"\t\treturn reinterpret_cast<U>(static_cast<std::uintptr_t>(v));\n"
	"\t} else {\n"
	"\t\tU v;\n"
	"\t\tstd::memcpy(&v, p, sizeof v);\n"
	"\t\treturn v;\n"
	"\t}\n"
	"}\n";

/* The call through a trampoline generic in fn's parameter types. */
static const char host_trampoline[] =
	"template <class R, class... P, std::size_t... I>\n"
	"static void aotc_call(R (*f)(P...), void **a, std::index_sequence<I...>)\n"
	"{\n"
	"\t(void)a;\n"
	"\tf(aotc_arg<P>(a[I])...);\n"
	"}\n"
	"template <class R, class... P> static void aotc_call(R (*f)(P...), void **a)\n"
	"{\n"
	"\taotc_call(f, a, std::index_sequence_for<P...>{});\n"
	"}\n"
	"template <class R, class... P> constexpr std::size_t aotc_arity(R (*)(P...))\n"
	"{\n"
	"\treturn sizeof...(P);\n"
	"}\n";

void rt_cpp_host_entry(strbuf *gen, const char *fn, int nparams, const char *what)
{
	strbuf_puts(gen, host_trampoline);
	if (nparams >= 0)
		strbuf_printf(gen, "static_assert(aotc_arity(&%s) == %d, \"%s takes the kernel's %d parameters\");\n",
		              fn, nparams, what, nparams);
	strbuf_printf(gen, "extern \"C\" void " RT_HOST_ENTRY "(void **a)\n{\n"
	                   "\taotc_call(&%s, a);\n}\n", fn);
}

char *rt_source_dir(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	else
		strcpy(dir, ".");
	return dir;
}

extern const char aotc_header_text[];
extern const size_t aotc_header_text_len;

/* "<prefix><value>", malloc'd: one word of a command line. */
static char *word(const char *prefix, const char *value)
{
	strbuf w;
	strbuf_init(&w);
	strbuf_printf(&w, "%s%s", prefix, value);
	return w.data;
}

rt_status rt_run_compiler(const char *prefix, const char *const *pre, int npre,
                          const rt_compile_request *req, const char *name, const char *gen,
                          const char *const *post, int npost, const char *out, void **data,
                          size_t *size, strbuf *err)
{
	*data = NULL;
	*size = 0;
	strbuf dir, path, log, bin;
	strbuf_init(&dir);
	strbuf_init(&path);
	strbuf_init(&log);
	strbuf_init(&bin);
	rt_status st = RT_ERR_ENV;
	char **argv = NULL;
	int n = 0;
	if (!proc_mkdtemp(prefix, &dir, err))
		goto done;
	strbuf_printf(&path, "%s/aotc.h", dir.data);
	if (proc_write_new(path.data, aotc_header_text, aotc_header_text_len) < 0) {
		strbuf_printf(err, "%s: %s", path.data, strerror(errno));
		goto done;
	}
	path.len = 0;
	strbuf_printf(&path, "%s/%s", dir.data, name);
	if (proc_write_new(path.data, gen, strlen(gen)) < 0) {
		strbuf_printf(err, "%s: %s", path.data, strerror(errno));
		goto done;
	}
	strbuf_printf(&bin, "%s/%s", dir.data, out);
	strbuf_printf(&log, "%s/log", dir.data);
	argv = xcalloc((size_t)(npre + npost + req->ninclude_dirs + req->ndefines + 6), sizeof *argv);
	for (int i = 0; i < npre; i++)
		argv[n++] = xstrdup(pre[i]);
	argv[n++] = word("-I", dir.data);
	char *srcdir = rt_source_dir(req->source_path);
	argv[n++] = word("-I", srcdir);
	free(srcdir);
	for (int i = 0; i < req->ninclude_dirs; i++)
		argv[n++] = word("-I", req->include_dirs[i]);
	for (int i = 0; i < req->ndefines; i++)
		argv[n++] = word("-D", req->defines[i]);
	argv[n++] = xstrdup(path.data);
	for (int i = 0; i < npost; i++)
		argv[n++] = xstrdup(post[i]);
	argv[n++] = xstrdup("-o");
	argv[n++] = xstrdup(bin.data);
	argv[n] = NULL;
	int status = proc_run_logged(argv, log.data);
	if (status == -2) {
		strbuf_printf(err, "cannot run %s: %s", argv[0], strerror(errno));
		goto done;
	}
	*data = status == 0 ? read_file(bin.data, size) : NULL;
	if (*data) {
		st = RT_OK;
	} else {
		if (status == 0)
			strbuf_printf(err, "%s: %s", bin.data, strerror(errno));
		else
			proc_append_log(err, log.data, argv[0], status);
		st = RT_ERR_COMPILE;
	}
done:
	for (int i = 0; i < n; i++)
		free(argv[i]);
	free(argv);
	if (dir.len)
		proc_remove_dir(dir.data);
	strbuf_finish(&dir);
	strbuf_finish(&path);
	strbuf_finish(&log);
	strbuf_finish(&bin);
	return st;
}
