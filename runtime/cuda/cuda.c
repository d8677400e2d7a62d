/* The CUDA backend's table and the helpers both halves use. */
#include "cuda_internal.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cuda_resolve(void *lib, const cuda_sym *syms, size_t n, const char **missing)
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

bool cuda_parse_arch(const char *arch, int *major, int *minor, char *name, size_t n)
{
	if (strncmp(arch, "sm", 2) != 0)
		return false;
	const char *p = arch + 2;
	if (*p == '_')
		p++;
	const char *digits = p;
	while (isdigit((unsigned char)*p))
		p++;
	size_t nd = (size_t)(p - digits);
	/* Two or three digits, the last one the minor version: sm_90, sm_100.
	 * At most one letter behind them: sm_90a, sm_100f. */
	if (nd < 2 || nd > 3 || (p[0] && (!islower((unsigned char)p[0]) || p[1])))
		return false;
	int v = atoi(digits);
	*major = v / 10;
	*minor = v % 10;
	if (name)
		snprintf(name, n, "sm_%.*s%s", (int)nd, digits, p);
	return true;
}

const rt_ops rt_cuda_ops = {
	.name = "cuda",
	.compiler_id = cuda_compiler_id,
	.compile = cuda_compile,
	.open = cuda_open,
	.close = cuda_close,
	.describe = cuda_describe,
	.load = cuda_load,
	.unload = cuda_unload,
	.alloc = cuda_alloc,
	.release = cuda_release,
	.upload = cuda_upload,
	.download = cuda_download,
	.copy = cuda_copy,
	.launch = cuda_launch,
	.memset8 = cuda_memset8,
	.compare = cuda_compare,
	.flush_cache = cuda_flush_cache,
	.sync = cuda_sync,
};
