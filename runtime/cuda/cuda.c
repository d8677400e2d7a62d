/* The CUDA backend's table and the helpers both halves use. */
#include "cuda_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"

bool cuda_parse_arch(const char *arch, int *major, int *minor, char *name, size_t n)
{
	char plain[16];
	if (!strncmp(arch, "sm_", 3)) { /* the compilers' spelling */
		snprintf(plain, sizeof plain, "sm%s", arch + 3);
		arch = plain;
	}
	const arch_info *a = arch_parse(arch);
	if (!a || a->kind != ARCH_CUDA)
		return false;
	*major = a->major;
	*minor = a->minor;
	if (name)
		snprintf(name, n, "sm_%s", a->name + 2); /* the compilers' spelling: sm_90a */
	return true;
}

/* NVRTC when it takes the file (in-process, the faster of the two); nvcc
 * for files it cannot take: host headers (<cstdio>, <cublas_v2.h>), host
 * functions, main(). AOTC_CUDA_COMPILER=nvrtc|nvcc forces one. */
const char *cuda_compiler_for(const rt_compile_request *file, strbuf *note, strbuf *err)
{
	const char *force = getenv("AOTC_CUDA_COMPILER");
	if (force && *force && strcmp(force, "nvrtc") && strcmp(force, "nvcc")) {
		strbuf_printf(err, "AOTC_CUDA_COMPILER=%s: expected nvrtc or nvcc", force);
		return NULL;
	}
	if (force && !strcmp(force, "nvcc"))
		return cuda_nvcc_id(err);
	const char *nvrtc = cuda_nvrtc_id(err);
	if (force && !strcmp(force, "nvrtc"))
		return nvrtc;
	strbuf log, aside_log;
	strbuf_init(&log);
	strbuf_init(&aside_log);
	if (nvrtc && cuda_nvrtc_takes(file, false, &log)) {
		strbuf_finish(&log);
		strbuf_finish(&aside_log);
		return nvrtc;
	}
	/* The device code alone: the file's host functions blanked out and
	 * the host-only headers empty. In process and without a host
	 * compiler, still NVRTC's speed (docs/cli.md, "Which compiler"). */
	if (nvrtc && file->device_source && cuda_nvrtc_takes(file, true, &aside_log)) {
		static char id[64]; /* compiler_for runs once per tune */
		strbuf_finish(&aside_log);
		const char *why = strstr(log.data, "error");
		size_t n = why ? strcspn(why, "\n") : 0;
		strbuf_printf(note, "%s cannot compile %s", nvrtc, file->source_path);
		if (n)
			strbuf_printf(note, " (%.*s)", (int)n, why);
		strbuf_printf(note, "; compiling its device code with %s, its host code set aside", nvrtc);
		strbuf_finish(&log);
		snprintf(id, sizeof id, "%s%s", nvrtc, CUDA_ASIDE);
		return id;
	}
	strbuf_finish(&aside_log);
	const char *nvcc = cuda_nvcc_id(NULL);
	if (!nvcc) {
		/* Compile errors come from NVRTC then, variant by variant. */
		strbuf_finish(&log);
		return nvrtc;
	}
	err->len = 0;
	err->data[0] = 0;
	/* The first error line says why: "cannot open source file "cstdio"". */
	const char *why = strstr(log.data, "error");
	size_t n = why ? strcspn(why, "\n") : 0;
	strbuf_printf(note, "%s cannot compile %s", nvrtc ? nvrtc : "NVRTC", file->source_path);
	if (n)
		strbuf_printf(note, " (%.*s)", (int)n, why);
	strbuf_printf(note, "; compiling it with %s, as nvcc builds it", nvcc);
	strbuf_finish(&log);
	return nvcc;
}

rt_status cuda_compile(const rt_compile_request *req, rt_blob *out, strbuf *err)
{
	/* An extern's caller is host code: nvcc whatever compiles the variants. */
	if (req->extern_fn || (req->compiler && strncmp(req->compiler, "nvcc", 4) == 0))
		return cuda_nvcc_compile(req, out, err);
	return cuda_nvrtc_compile(req, out, err);
}

/* nvcc runs are long (the host compiler, the whole file): batch them.
 * NVRTC, in process, compiles one at a time. */
static int cuda_batch_limit(const rt_compile_request *file)
{
	return file->compiler && strncmp(file->compiler, "nvcc", 4) == 0 ? RT_BATCH_MAX : 1;
}

const rt_ops rt_cuda_ops = {
	.name = "cuda",
	.compiler_for = cuda_compiler_for,
	.compile = cuda_compile,
	.batch_limit = cuda_batch_limit,
	.compile_batch = cuda_nvcc_compile_batch,
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
	.fill_pattern = cuda_fill_pattern,
	.scan_pattern = cuda_scan_pattern,
	.compare = cuda_compare,
	.flush_cache = cuda_flush_cache,
	.sync = cuda_sync,
	.clocks = cuda_clocks,
};
