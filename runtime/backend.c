#include "backend.h"

#include <stdlib.h>
#include <string.h>

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
	if (strcmp(arch, "host") == 0)
		return &rt_host_ops;
#ifdef AOTC_HAVE_CUDA
	if (strncmp(arch, "sm", 2) == 0)
		return &rt_cuda_ops;
#endif
	return NULL;
}
