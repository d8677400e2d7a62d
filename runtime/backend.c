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

rt_status rt_load_shared(const rt_blob *blob, const char *name, int dl_flags, const char *symbol,
                         void **handle, void **sym, strbuf *err)
{
	*handle = *sym = NULL;
	strbuf path;
	strbuf_init(&path);
	strbuf_printf(&path, "%s/aotc-%s-XXXXXX.so", proc_tmp_root(), name);
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
