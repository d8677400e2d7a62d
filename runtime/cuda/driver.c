/* The device side of the CUDA backend, on the driver API: one device, its
 * primary context, one non-blocking stream that carries everything (copies
 * included, so that they are ordered after queued launches), two events for
 * timing and a buffer that evicts L2. Used from the worker's one thread. */
#include "cuda_internal.h"
#include "proc.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cuda.h renames most of these to their current ABI (cuMemAlloc ->
 * cuMemAlloc_v2); __typeof__ follows the rename, and the table below names
 * the same versioned symbols. A fallback is given only where the older
 * symbol has the same signature. */
static struct {
	__typeof__(cuInit) *Init;
	__typeof__(cuGetErrorName) *GetErrorName;
	__typeof__(cuGetErrorString) *GetErrorString;
	__typeof__(cuDriverGetVersion) *DriverGetVersion;
	__typeof__(cuDeviceGetCount) *DeviceGetCount;
	__typeof__(cuDeviceGet) *DeviceGet;
	__typeof__(cuDeviceGetName) *DeviceGetName;
	__typeof__(cuDeviceGetAttribute) *DeviceGetAttribute;
	__typeof__(cuDeviceTotalMem) *DeviceTotalMem;
	__typeof__(cuDevicePrimaryCtxRetain) *DevicePrimaryCtxRetain;
	__typeof__(cuDevicePrimaryCtxRelease) *DevicePrimaryCtxRelease;
	__typeof__(cuCtxSetCurrent) *CtxSetCurrent;
	__typeof__(cuStreamCreate) *StreamCreate;
	__typeof__(cuStreamDestroy) *StreamDestroy;
	__typeof__(cuStreamSynchronize) *StreamSynchronize;
	__typeof__(cuEventCreate) *EventCreate;
	__typeof__(cuEventDestroy) *EventDestroy;
	__typeof__(cuEventRecord) *EventRecord;
	__typeof__(cuEventSynchronize) *EventSynchronize;
	__typeof__(cuEventElapsedTime) *EventElapsedTime;
	__typeof__(cuModuleLoadData) *ModuleLoadData;
	__typeof__(cuModuleUnload) *ModuleUnload;
	__typeof__(cuModuleGetFunction) *ModuleGetFunction;
	__typeof__(cuFuncGetAttribute) *FuncGetAttribute;
	__typeof__(cuFuncSetAttribute) *FuncSetAttribute;
	__typeof__(cuLaunchKernel) *LaunchKernel;
	__typeof__(cuMemAlloc) *MemAlloc;
	__typeof__(cuMemFree) *MemFree;
	__typeof__(cuMemcpyHtoDAsync) *MemcpyHtoDAsync;
	__typeof__(cuMemcpyDtoHAsync) *MemcpyDtoHAsync;
	__typeof__(cuMemcpyDtoDAsync) *MemcpyDtoDAsync;
	__typeof__(cuMemsetD32Async) *MemsetD32Async;
	__typeof__(cuMemsetD8Async) *MemsetD8Async;
} cu;

static const rt_sym cu_syms[] = {
	{"cuInit", NULL, (void **)&cu.Init},
	{"cuGetErrorName", NULL, (void **)&cu.GetErrorName},
	{"cuGetErrorString", NULL, (void **)&cu.GetErrorString},
	{"cuDriverGetVersion", NULL, (void **)&cu.DriverGetVersion},
	{"cuDeviceGetCount", NULL, (void **)&cu.DeviceGetCount},
	{"cuDeviceGet", NULL, (void **)&cu.DeviceGet},
	{"cuDeviceGetName", NULL, (void **)&cu.DeviceGetName},
	{"cuDeviceGetAttribute", NULL, (void **)&cu.DeviceGetAttribute},
	{"cuDeviceTotalMem_v2", NULL, (void **)&cu.DeviceTotalMem},
	{"cuDevicePrimaryCtxRetain", NULL, (void **)&cu.DevicePrimaryCtxRetain},
	{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease",
	 (void **)&cu.DevicePrimaryCtxRelease},
	{"cuCtxSetCurrent", NULL, (void **)&cu.CtxSetCurrent},
	{"cuStreamCreate", NULL, (void **)&cu.StreamCreate},
	{"cuStreamDestroy_v2", "cuStreamDestroy", (void **)&cu.StreamDestroy},
	{"cuStreamSynchronize", NULL, (void **)&cu.StreamSynchronize},
	{"cuEventCreate", NULL, (void **)&cu.EventCreate},
	{"cuEventDestroy_v2", "cuEventDestroy", (void **)&cu.EventDestroy},
	{"cuEventRecord", NULL, (void **)&cu.EventRecord},
	{"cuEventSynchronize", NULL, (void **)&cu.EventSynchronize},
	{"cuEventElapsedTime_v2", "cuEventElapsedTime", (void **)&cu.EventElapsedTime},
	{"cuModuleLoadData", NULL, (void **)&cu.ModuleLoadData},
	{"cuModuleUnload", NULL, (void **)&cu.ModuleUnload},
	{"cuModuleGetFunction", NULL, (void **)&cu.ModuleGetFunction},
	{"cuFuncGetAttribute", NULL, (void **)&cu.FuncGetAttribute},
	{"cuFuncSetAttribute", NULL, (void **)&cu.FuncSetAttribute},
	{"cuLaunchKernel", NULL, (void **)&cu.LaunchKernel},
	{"cuMemAlloc_v2", NULL, (void **)&cu.MemAlloc},
	{"cuMemFree_v2", NULL, (void **)&cu.MemFree},
	{"cuMemcpyHtoDAsync_v2", NULL, (void **)&cu.MemcpyHtoDAsync},
	{"cuMemcpyDtoHAsync_v2", NULL, (void **)&cu.MemcpyDtoHAsync},
	{"cuMemcpyDtoDAsync_v2", NULL, (void **)&cu.MemcpyDtoDAsync},
	{"cuMemsetD32Async", NULL, (void **)&cu.MemsetD32Async},
	{"cuMemsetD8Async", NULL, (void **)&cu.MemsetD8Async},
};

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static bool cu_ok;
static char cu_error[512];
static bool cu_no_driver;   /* no libcuda at all: a machine without a GPU */

static void cu_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(cu_error, sizeof cu_error,
		         "libcuda.so.1 not found: no NVIDIA driver on this machine (%s)", dlerror());
		cu_no_driver = true;
		return;
	}
	const char *missing;
	if (!rt_resolve(lib, cu_syms, COUNTOF(cu_syms), &missing)) {
		snprintf(cu_error, sizeof cu_error,
		         "libcuda.so.1 has no %s: the NVIDIA driver is too old, update it", missing);
		dlclose(lib);
		return;
	}
	cu_ok = true;
}

struct rt_device {
	CUdevice dev;
	CUcontext ctx;        /* the primary context, retained */
	CUstream stream;
	CUevent start, stop;
	CUdeviceptr flush;    /* 2x L2, rewritten before each timed launch */
	size_t flush_words;
	unsigned flush_value;
	rt_device_info info;
	char arch[16];
	/* The comparison kernels (compiled on first use, per element type)
	 * and their 4 result words: sum diff^2, sum ref^2, bad, first bad. */
	rt_function *compare[DT_F64 + 1];
	CUdeviceptr result;
	/* The guard-pattern kernels: fill and scan (compiled on first use). */
	rt_function *pattern[2];
};

struct rt_function {
	CUmodule mod;
	CUfunction fn;
	int max_threads;      /* what registers and __launch_bounds__ allow */
	int static_smem;
	uint32_t dyn_smem_ok; /* dynamic shared memory opted in to so far */
	/* An AOTC_EXTERN routine's caller instead (mod NULL): a dlopen'ed
	 * shared object and its entry point. */
	void *so;
	cuda_extern_entry *entry;
};

/* What a failed call means for the tuner. Launch configuration errors
 * (CUDA_ERROR_INVALID_VALUE from cuLaunchKernel or cuFuncSetAttribute:
 * too many threads, too much shared memory, grid too large) only count as
 * resources when the caller says the call was a launch. */
static rt_status cu_status(CUresult r, bool launching)
{
	switch (r) {
	case CUDA_SUCCESS:
		return RT_OK;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
	case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
		return RT_ERR_RESOURCES;
	case CUDA_ERROR_INVALID_VALUE:
		return launching ? RT_ERR_RESOURCES : RT_ERR_OTHER;
	/* Sticky: the context is lost and every later call fails alike. */
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_TENSOR_MEMORY_LEAK:
	case CUDA_ERROR_ECC_UNCORRECTABLE:
		return RT_ERR_FAULT;
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED:
	case CUDA_ERROR_STUB_LIBRARY:
	case CUDA_ERROR_DEVICE_UNAVAILABLE:
	case CUDA_ERROR_DEVICE_NOT_LICENSED:
	case CUDA_ERROR_SYSTEM_NOT_READY:
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
	case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
		return RT_ERR_ENV;
	default:
		return RT_ERR_OTHER;
	}
}

/* "cuXxx: CUDA_ERROR_NAME (message)" into err; returns the mapped status.
 * call is the API name or the call's text ("cu.MemAlloc(&p, n)"). */
static rt_status cu_fail(CUresult r, const char *call, bool launching, strbuf *err)
{
	const char *name = NULL, *msg = NULL;
	if (cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = NULL;
	if (cu.GetErrorString(r, &msg) != CUDA_SUCCESS || !msg)
		msg = "unknown error";
	if (strncmp(call, "cu.", 3) == 0)
		strbuf_printf(err, "cu%.*s: ", (int)strcspn(call + 3, "("), call + 3);
	else
		strbuf_printf(err, "%s: ", call);
	if (name)
		strbuf_printf(err, "%s (%s)", name, msg);
	else
		strbuf_printf(err, "CUDA error %d (%s)", (int)r, msg);
	return cu_status(r, launching);
}

#define CU_TRY(call, launching)                                        \
	do {                                                           \
		CUresult cu_r_ = (call);                               \
		if (cu_r_ != CUDA_SUCCESS)                             \
			return cu_fail(cu_r_, #call, launching, err);  \
	} while (0)

static void version_string(char *out, size_t n, int v)
{
	snprintf(out, n, "%d.%d", v / 1000, v % 1000 / 10);
}

static rt_status attr(rt_device *d, CUdevice_attribute a, int *v, strbuf *err)
{
	CU_TRY(cu.DeviceGetAttribute(v, a, d->dev), false);
	return RT_OK;
}

/* Fills d->info from the device. */
static rt_status describe_device(rt_device *d, int cc_major, int cc_minor, strbuf *err)
{
	rt_device_info *in = &d->info;
	rt_status st;
	int v;
	strcpy(in->backend, "cuda");
	snprintf(in->arch, sizeof in->arch, "sm%d%d", cc_major, cc_minor);
	CU_TRY(cu.DeviceGetName(in->name, (int)sizeof in->name, d->dev), false);
	size_t mem = 0;
	CU_TRY(cu.DeviceTotalMem(&mem, d->dev), false);
	in->memory_bytes = mem;

	static const struct {
		CUdevice_attribute a;
		size_t off;
	} ints[] = {
		{CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(rt_device_info, sm_count)},
		{CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
		 offsetof(rt_device_info, max_threads_per_block)},
		{CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, offsetof(rt_device_info, max_block_dims[0])},
		{CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, offsetof(rt_device_info, max_block_dims[1])},
		{CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, offsetof(rt_device_info, max_block_dims[2])},
	};
	for (size_t i = 0; i < COUNTOF(ints); i++)
		if ((st = attr(d, ints[i].a, (int *)((char *)in + ints[i].off), err)) != RT_OK)
			return st;
	static const CUdevice_attribute grid[3] = {
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
	};
	for (int i = 0; i < 3; i++) {
		if ((st = attr(d, grid[i], &v, err)) != RT_OK)
			return st;
		in->max_grid_dims[i] = v;
	}
	if ((st = attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &v, err)) != RT_OK)
		return st;
	in->l2_bytes = (uint64_t)v;
	if ((st = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &v, err)) != RT_OK)
		return st;
	in->smem_per_block = (uint64_t)v;
	if ((st = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &v, err)) != RT_OK)
		return st;
	in->smem_per_block_optin = (uint64_t)v;
	if ((st = attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &v, err)) != RT_OK)
		return st;
	in->clock_mhz = v / 1000;   /* reported in kHz */

	int drv = 0;
	CU_TRY(cu.DriverGetVersion(&drv), false);
	version_string(in->driver_version, sizeof in->driver_version, drv);
	/* The code is built by NVRTC, so its version names the toolchain;
	 * without NVRTC (a worker only running cached CUBINs) the driver's. */
	int nmaj, nmin;
	if (cuda_nvrtc_version(&nmaj, &nmin, NULL))
		snprintf(in->runtime_version, sizeof in->runtime_version, "%d.%d", nmaj, nmin);
	else
		strcpy(in->runtime_version, in->driver_version);

	char name[sizeof in->name];
	strcpy(name, in->name);
	for (char *p = name; *p; p++)
		if (*p == ' ')
			*p = '_';
	snprintf(in->hardware_id, sizeof in->hardware_id, "cuda_%s_%s", name, in->runtime_version);
	return RT_OK;
}

/* The device asked for: index when >= 0 (the tuner's --devices), else
 * $AOTC_DEVICE's (*from_env), else 0. */
static rt_status device_index(int index, int *out, bool *from_env, strbuf *err)
{
	const char *s = getenv("AOTC_DEVICE");
	*out = index >= 0 ? index : 0;
	*from_env = false;
	if (index >= 0)
		return RT_OK;
	if (!s || !s[0])
		return RT_OK;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 1024) {
		strbuf_printf(err, "AOTC_DEVICE='%s' is not a device index", s);
		return RT_ERR_ENV;
	}
	*out = (int)v;
	*from_env = true;
	return RT_OK;
}

static rt_status open_device(rt_device *d, const char *arch, int want, strbuf *err)
{
	int want_major, want_minor;
	if (!cuda_parse_arch(arch, &want_major, &want_minor, NULL, 0)) {
		strbuf_printf(err, "not a CUDA architecture: '%s' (expected e.g. sm90)", arch);
		return RT_ERR_ENV;
	}
	CUresult r = cu.Init(0);
	if (r != CUDA_SUCCESS) {
		/* No usable driver; "no device" only when the driver says so
		 * (a mismatched or broken driver is worth an error). */
		cu_fail(r, "cuInit", false, err);
		return r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY ? RT_ERR_NO_DEVICE
		                                                                 : RT_ERR_ENV;
	}
	int index, count = 0;
	bool from_env;
	rt_status st = device_index(want, &index, &from_env, err);
	if (st != RT_OK)
		return st;
	CU_TRY(cu.DeviceGetCount(&count), false);
	if (index >= count) {
		if (count == 0) {
			strbuf_puts(err, "no CUDA device on this machine");
			return RT_ERR_NO_DEVICE;
		}
		strbuf_printf(err, "%s%d, but there %s only %d CUDA device%s", from_env ? "AOTC_DEVICE=" : "device ",
		              index, count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
		return RT_ERR_ENV;
	}
	d->info.index = index;
	d->info.count = count;
	CU_TRY(cu.DeviceGet(&d->dev, index), false);
	int major, minor;
	if ((st = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major, err)) != RT_OK ||
	    (st = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor, err)) != RT_OK)
		return st;
	if ((st = describe_device(d, major, minor, err)) != RT_OK)
		return st;
	/* A CUBIN runs only on its own compute capability, so a mismatch is
	 * not something to tune through. */
	snprintf(d->arch, sizeof d->arch, "%s", arch);
	if (major != want_major || minor != want_minor) {
		strbuf_printf(err, "device %d (%s) is sm%d%d, not %s", index, d->info.name, major,
		              minor, arch);
		return RT_ERR_NO_DEVICE;
	}

	CU_TRY(cu.DevicePrimaryCtxRetain(&d->ctx, d->dev), false);
	CU_TRY(cu.CtxSetCurrent(d->ctx), false);
	CU_TRY(cu.StreamCreate(&d->stream, CU_STREAM_NON_BLOCKING), false);
	CU_TRY(cu.EventCreate(&d->start, CU_EVENT_DEFAULT), false);
	CU_TRY(cu.EventCreate(&d->stop, CU_EVENT_DEFAULT), false);
	if (d->info.l2_bytes) {
		size_t bytes = 2 * (size_t)d->info.l2_bytes;
		CU_TRY(cu.MemAlloc(&d->flush, bytes), false);
		d->flush_words = bytes / 4;
		d->info.flush_bytes = bytes;
	}
	return RT_OK;
}

rt_status cuda_open(rt_device **out, const char *arch, int index, strbuf *err)
{
	*out = NULL;
	pthread_once(&cu_once, cu_load);
	if (!cu_ok) {
		strbuf_puts(err, cu_error);
		return cu_no_driver ? RT_ERR_NO_DEVICE : RT_ERR_ENV;
	}
	rt_device *d = xcalloc(1, sizeof *d);
	rt_status st = open_device(d, arch, index, err);
	if (st != RT_OK) {
		cuda_close(d);
		return st;
	}
	*out = d;
	return RT_OK;
}

void cuda_close(rt_device *d)
{
	if (!d)
		return;
	/* Errors are ignored: after a fault every call fails, and the worker
	 * exits anyway. */
	if (d->ctx) {
		cu.CtxSetCurrent(d->ctx);
		if (d->stream)
			cu.StreamSynchronize(d->stream);
		if (d->flush)
			cu.MemFree(d->flush);
		if (d->result)
			cu.MemFree(d->result);
		for (size_t i = 0; i < sizeof d->compare / sizeof d->compare[0]; i++)
			if (d->compare[i])
				cuda_unload(d, d->compare[i]);
		for (size_t i = 0; i < sizeof d->pattern / sizeof d->pattern[0]; i++)
			if (d->pattern[i])
				cuda_unload(d, d->pattern[i]);
		if (d->start)
			cu.EventDestroy(d->start);
		if (d->stop)
			cu.EventDestroy(d->stop);
		if (d->stream)
			cu.StreamDestroy(d->stream);
		cu.CtxSetCurrent(NULL);
		cu.DevicePrimaryCtxRelease(d->dev);
	}
	free(d);
}

void cuda_describe(rt_device *d, rt_device_info *info) { *info = d->info; }

bool cuda_clocks(rt_device *d, rt_clocks *out)
{
	int domain = 0, bus = 0, device = 0;
	strbuf err;
	strbuf_init(&err);
	bool found = attr(d, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &domain, &err) == RT_OK &&
	             attr(d, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &bus, &err) == RT_OK &&
	             attr(d, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &device, &err) == RT_OK;
	strbuf_finish(&err);
	char id[32];
	snprintf(id, sizeof id, "%08x:%02x:%02x.0", (unsigned)domain, (unsigned)bus, (unsigned)device);
	if (found)
		return cuda_nvml_clocks(id, out);
	memset(out, 0, sizeof *out);
	out->locked = -1;
	return false;
}

/* An extern's caller: the shared object is written to a fresh file (so
 * dlopen never hands back an earlier one) and opened. The CUDA runtime it
 * links binds to the context current on this thread, the primary context
 * open_device made current, so it works in the worker's context, on its
 * stream, and sees its allocations. */
static rt_status load_extern(const rt_blob *blob, rt_function **out, strbuf *err)
{
	/* Lazily bound: the file's other host code (a main() calling a
	 * library no AOTC_EXTERN names) need not resolve unless called. */
	void *so, *sym;
	rt_status st = rt_load_shared(blob, "extern", RTLD_LAZY | RTLD_LOCAL, CUDA_EXTERN_ENTRY, &so, &sym, err);
	if (st != RT_OK)
		return st;
	rt_function *f = xcalloc(1, sizeof *f);
	f->so = so;
	f->entry = (cuda_extern_entry *)sym;
	*out = f;
	return RT_OK;
}

rt_status cuda_load(rt_device *d, const rt_blob *blob, rt_function **out, strbuf *err)
{
	(void)d;
	*out = NULL;
	if (blob->symbol && strcmp(blob->symbol, CUDA_EXTERN_ENTRY) == 0)
		return load_extern(blob, out, err);
	CUmodule mod;
	CU_TRY(cu.ModuleLoadData(&mod, blob->data), false);
	rt_function *f = xcalloc(1, sizeof *f);
	f->mod = mod;
	CUresult r = cu.ModuleGetFunction(&f->fn, mod, blob->symbol);
	if (r == CUDA_SUCCESS)
		r = cu.FuncGetAttribute(&f->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f->fn);
	if (r == CUDA_SUCCESS)
		r = cu.FuncGetAttribute(&f->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f->fn);
	if (r != CUDA_SUCCESS) {
		strbuf_printf(err, "%s: ", blob->symbol);
		rt_status st = cu_fail(r, "cuModuleGetFunction", false, err);
		cu.ModuleUnload(mod);
		free(f);
		return st;
	}
	*out = f;
	return RT_OK;
}

void cuda_unload(rt_device *d, rt_function *f)
{
	if (!f)
		return;
	/* Unloading code that a queued launch still runs is undefined. */
	cu.StreamSynchronize(d->stream);
	/* An extern's library stays loaded: the runtime and libraries such as
	 * cuBLAS keep state (handles, registered kernels) until the worker
	 * exits, and unloading them earlier buys nothing. */
	if (f->mod)
		cu.ModuleUnload(f->mod);
	free(f);
}

rt_status cuda_alloc(rt_device *d, size_t bytes, rt_ptr *out, strbuf *err)
{
	(void)d;
	CUdeviceptr p = 0;
	*out = 0;
	/* cuMemAlloc refuses 0 bytes; an empty buffer still needs a handle. */
	CU_TRY(cu.MemAlloc(&p, bytes ? bytes : 4), false);
	*out = (rt_ptr)p;
	return RT_OK;
}

void cuda_release(rt_device *d, rt_ptr p)
{
	if (!p)
		return;
	cu.StreamSynchronize(d->stream);
	cu.MemFree((CUdeviceptr)p);
}

/* Copies go on the stream, then wait: a synchronous cuMemcpy runs on the
 * legacy default stream, which a non-blocking stream does not order
 * against, so it could overtake a queued launch. */
rt_status cuda_upload(rt_device *d, rt_ptr dst, const void *src, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	CU_TRY(cu.MemcpyHtoDAsync((CUdeviceptr)dst, src, bytes, d->stream), false);
	CU_TRY(cu.StreamSynchronize(d->stream), false);
	return RT_OK;
}

rt_status cuda_download(rt_device *d, void *dst, rt_ptr src, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	CU_TRY(cu.MemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, d->stream), false);
	CU_TRY(cu.StreamSynchronize(d->stream), false);
	return RT_OK;
}

rt_status cuda_copy(rt_device *d, rt_ptr dst, rt_ptr src, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	CU_TRY(cu.MemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, d->stream), false);
	CU_TRY(cu.StreamSynchronize(d->stream), false);
	return RT_OK;
}

/* An extern's caller, on the worker's stream, timed with the same events
 * as a kernel (so around whatever the routine queues; a routine that
 * synchronises inside is timed with that too). A routine that returns an
 * error leaves the device usable (RT_ERR_RETURNED) unless the context is
 * broken, which the stream then says (a fault). */
static rt_status launch_extern(rt_device *d, rt_function *f, void **args, double *ms,
                               strbuf *err)
{
	if (ms)
		CU_TRY(cu.EventRecord(d->start, d->stream), false);
	const char *name = NULL, *text = NULL;
	int e = f->entry(args, (void *)d->stream, &name, &text);
	if (e != 0) {
		strbuf_printf(err, "the routine returned %s (%s)", name ? name : "an error",
		              text ? text : "no description");
		CUresult r = cu.StreamSynchronize(d->stream);
		if (r != CUDA_SUCCESS) {
			strbuf_puts(err, "; then ");
			return cu_fail(r, "cuStreamSynchronize", false, err);
		}
		return RT_ERR_RETURNED;
	}
	if (!ms)
		return RT_OK;
	CU_TRY(cu.EventRecord(d->stop, d->stream), false);
	/* A fault in what the routine queued surfaces here. */
	CU_TRY(cu.EventSynchronize(d->stop), false);
	float t = 0;
	CU_TRY(cu.EventElapsedTime(&t, d->start, d->stop), false);
	*ms = t;
	return RT_OK;
}

rt_status cuda_launch(rt_device *d, rt_function *f, const rt_launch *dims, void **args,
                      double *ms, strbuf *err)
{
	if (f->entry)
		return launch_extern(d, f, args, ms, err);
	const rt_device_info *in = &d->info;
	uint64_t threads = (uint64_t)dims->block[0] * dims->block[1] * dims->block[2];
	/* Said here in words; cuLaunchKernel would only say "invalid value"
	 * or "too many resources requested". */
	if (threads > (uint64_t)f->max_threads) {
		strbuf_printf(err, "block of %llu threads, the kernel allows at most %d "
		              "(registers, __launch_bounds__)", (unsigned long long)threads,
		              f->max_threads);
		return RT_ERR_RESOURCES;
	}
	uint64_t smem = (uint64_t)f->static_smem + dims->smem;
	if (smem > in->smem_per_block_optin) {
		strbuf_printf(err, "%d bytes of static and %u of dynamic shared memory, the device "
		              "allows %llu", f->static_smem, dims->smem,
		              (unsigned long long)in->smem_per_block_optin);
		return RT_ERR_RESOURCES;
	}
	/* Beyond the default 48 KiB a kernel must opt in, once. */
	if (smem > in->smem_per_block && dims->smem > f->dyn_smem_ok) {
		CU_TRY(cu.FuncSetAttribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		                           (int)dims->smem), true);
		f->dyn_smem_ok = dims->smem;
	}
	if (ms)
		CU_TRY(cu.EventRecord(d->start, d->stream), false);
	CU_TRY(cu.LaunchKernel(f->fn, dims->grid[0], dims->grid[1], dims->grid[2], dims->block[0],
	                       dims->block[1], dims->block[2], dims->smem, d->stream, args, NULL),
	       true);
	if (!ms)
		return RT_OK;
	CU_TRY(cu.EventRecord(d->stop, d->stream), false);
	/* A fault in the kernel surfaces here. */
	CU_TRY(cu.EventSynchronize(d->stop), false);
	float t = 0;
	CU_TRY(cu.EventElapsedTime(&t, d->start, d->stop), false);
	*ms = t;
	return RT_OK;
}

rt_status cuda_flush_cache(rt_device *d, strbuf *err)
{
	if (!d->flush)
		return RT_OK;
	/* A new value each time, so no write can be elided as unchanged. */
	CU_TRY(cu.MemsetD32Async(d->flush, ++d->flush_value, d->flush_words, d->stream), false);
	return RT_OK;
}

rt_status cuda_sync(rt_device *d, strbuf *err)
{
	CU_TRY(cu.StreamSynchronize(d->stream), false);
	return RT_OK;
}

rt_status cuda_memset8(rt_device *d, rt_ptr dst, uint8_t value, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	CU_TRY(cu.MemsetD8Async((CUdeviceptr)dst, value, bytes, d->stream), false);
	return RT_OK;
}

/* Compares outputs on the device, so that checking a variant moves 32 bytes
 * to the host instead of the whole output. Accumulates in double; one
 * atomic per warp. Floating types: an element is bad when out is NaN or
 * infinite and ref is finite ((x - x) == 0 exactly for finite x). Integer
 * types compare their bits. */
static const char compare_source[] =
	"typedef unsigned long long u64;\n"
	"__device__ double get(const void *p, u64 i, int kind) {\n"
	"  switch (kind) {\n"
	"  case 0: { unsigned h = ((const unsigned short *)p)[i];\n"
	"    unsigned e = (h >> 10) & 31, m = h & 1023, s = (h & 0x8000u) << 16, x;\n"
	"    if (e == 0) { float f = m * 5.9604644775390625e-8f; return s ? -f : f; }\n"
	"    x = e == 31 ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112) << 23) | (m << 13));\n"
	"    return __int_as_float((int)x); }\n"
	"  case 1: return __int_as_float((int)((unsigned)((const unsigned short *)p)[i] << 16));\n"
	"  case 2: return ((const float *)p)[i];\n"
	"  default: return ((const double *)p)[i];\n"
	"  }\n"
	"}\n"
	"__device__ u64 bits(const void *p, u64 i, int bytes) {\n"
	"  switch (bytes) {\n"
	"  case 1: return ((const unsigned char *)p)[i];\n"
	"  case 2: return ((const unsigned short *)p)[i];\n"
	"  case 4: return ((const unsigned *)p)[i];\n"
	"  default: return ((const u64 *)p)[i];\n"
	"  }\n"
	"}\n"
	"template <int KIND, int BYTES>\n"
	"__global__ void aotc_compare(const void *out, const void *ref, u64 n, double *acc, u64 *bad) {\n"
	"  double dd = 0, rr = 0; u64 nb = 0, first = ~0ull;\n"
	"  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {\n"
	"    bool b;\n"
	"    if (KIND >= 0) {\n"
	"      double o = get(out, i, KIND), r = get(ref, i, KIND);\n"
	"      bool of = (o - o) == 0, rf = (r - r) == 0;\n"
	"      b = !of && rf;\n"
	"      if (of) { dd += (o - r) * (o - r); rr += r * r; }\n"
	"    } else {\n"
	"      b = bits(out, i, BYTES) != bits(ref, i, BYTES);\n"
	"    }\n"
	"    if (b) { nb++; if (i < first) first = i; }\n"
	"  }\n"
	"  for (int o = 16; o > 0; o /= 2) {\n"
	"    dd += __shfl_down_sync(0xffffffffu, dd, o);\n"
	"    rr += __shfl_down_sync(0xffffffffu, rr, o);\n"
	"    nb += __shfl_down_sync(0xffffffffu, nb, o);\n"
	"    u64 f = __shfl_down_sync(0xffffffffu, first, o); if (f < first) first = f;\n"
	"  }\n"
	"  if ((threadIdx.x & 31) == 0) {\n"
	"    if (dd != 0) atomicAdd(&acc[0], dd);\n"
	"    if (rr != 0) atomicAdd(&acc[1], rr);\n"
	"    if (nb) { atomicAdd(&bad[0], nb); atomicMin(&bad[1], first); }\n"
	"  }\n"
	"}\n"
	/* Guard zones: byte i of the pattern of seed, as rt_pattern_byte. */
	"__device__ unsigned char pattern_byte(u64 seed, u64 i) {\n"
	"  u64 x = seed ^ ((i >> 3) * 0x9e3779b97f4a7c15ull);\n"
	"  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;\n"
	"  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;\n"
	"  x ^= x >> 31;\n"
	"  return (unsigned char)(x >> ((i & 7) * 8));\n"
	"}\n"
	"template <int SCAN>\n"
	"__global__ void aotc_pattern(unsigned char *p, u64 n, u64 seed, u64 offset, u64 *first) {\n"
	"  u64 f = ~0ull;\n"
	"  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {\n"
	"    unsigned char b = pattern_byte(seed, offset + i);\n"
	"    if (!SCAN) p[i] = b;\n"
	"    else if (p[i] != b && i < f) f = i;\n"
	"  }\n"
	"  if (SCAN) {\n"
	"    for (int o = 16; o > 0; o /= 2) {\n"
	"      u64 g = __shfl_down_sync(0xffffffffu, f, o); if (g < f) f = g;\n"
	"    }\n"
	"    if ((threadIdx.x & 31) == 0 && f != ~0ull) atomicMin(first, f);\n"
	"  }\n"
	"}\n";

/* The kernel instance of compare_source (compiled and loaded on first
 * use into *slot). */
static rt_status aux_kernel(rt_device *d, const char *instance, rt_function **slot, strbuf *err)
{
	if (*slot)
		return RT_OK;
	/* cuda_compile includes a file; the source goes through a temporary. */
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/aotc-compare-%ld-XXXXXX", tmp && *tmp ? tmp : "/tmp",
	         (long)getpid());
	int fd = mkstemp(path);
	if (fd < 0) {
		strbuf_printf(err, "mkstemp: %s", strerror(errno));
		return RT_ERR_OTHER;
	}
	bool written = write(fd, compare_source, sizeof compare_source - 1) ==
	               (ssize_t)(sizeof compare_source - 1);
	close(fd);
	rt_compile_request req = {.source_path = path, .instance = instance, .arch = d->arch};
	rt_blob blob = {0};
	rt_status st = written ? cuda_compile(&req, &blob, err) : RT_ERR_OTHER;
	unlink(path);
	if (st == RT_OK)
		st = cuda_load(d, &blob, slot, err);
	rt_blob_finish(&blob);
	return st == RT_ERR_COMPILE ? RT_ERR_OTHER : st;
}

static rt_status compare_kernel(rt_device *d, aotc_dtype t, rt_function **out, strbuf *err)
{
	int kind = t == DT_F16 ? 0 : t == DT_BF16 ? 1 : t == DT_F32 ? 2 : t == DT_F64 ? 3 : -1;
	char instance[64];
	snprintf(instance, sizeof instance, "aotc_compare<%d, %zu>", kind,
	         kind >= 0 ? (size_t)0 : dtype_size(t));
	rt_status st = aux_kernel(d, instance, &d->compare[t], err);
	*out = d->compare[t];
	return st;
}

rt_status cuda_compare(rt_device *d, rt_ptr out, rt_ptr ref, aotc_dtype t, size_t count,
                       rt_compare *res, strbuf *err)
{
	memset(res, 0, sizeof *res);
	if (count == 0)
		return RT_OK;
	rt_function *f;
	rt_status st = compare_kernel(d, t, &f, err);
	if (st != RT_OK)
		return st;
	if (!d->result)
		CU_TRY(cu.MemAlloc(&d->result, 4 * sizeof(uint64_t)), false);
	CU_TRY(cu.MemsetD32Async(d->result, 0, 6, d->stream), false);
	CU_TRY(cu.MemsetD32Async(d->result + 24, 0xffffffffu, 2, d->stream), false);
	CUdeviceptr o = (CUdeviceptr)out, r = (CUdeviceptr)ref, acc = d->result,
	            bad = d->result + 16;
	unsigned long long n = count;
	void *args[] = {&o, &r, &n, &acc, &bad};
	uint64_t blocks = (count + 255) / 256, cap = 8 * (uint64_t)(d->info.sm_count ? d->info.sm_count : 1);
	rt_launch dims = {{(uint32_t)(blocks < cap ? blocks : cap), 1, 1}, {256, 1, 1}, 0};
	if ((st = cuda_launch(d, f, &dims, args, NULL, err)) != RT_OK)
		return st;
	uint64_t words[4];
	if ((st = cuda_download(d, words, d->result, sizeof words, err)) != RT_OK)
		return st;
	memcpy(&res->diff_sq, &words[0], 8);
	memcpy(&res->ref_sq, &words[1], 8);
	res->bad = words[2];
	res->first_bad = words[3];
	return RT_OK;
}

/* One launch of the pattern kernel over bytes bytes at p (scan: the first
 * mismatch into d->result's last word), as many blocks as the comparison
 * uses. */
static rt_status pattern_launch(rt_device *d, int scan, rt_ptr p, uint64_t seed, uint64_t offset,
                                size_t bytes, strbuf *err)
{
	char instance[32];
	snprintf(instance, sizeof instance, "aotc_pattern<%d>", scan);
	rt_status st = aux_kernel(d, instance, &d->pattern[scan], err);
	if (st != RT_OK)
		return st;
	CUdeviceptr ptr = (CUdeviceptr)p, first = d->result + 24;
	unsigned long long n = bytes, s = seed, o = offset;
	void *args[] = {&ptr, &n, &s, &o, &first};
	uint64_t blocks = (bytes + 255) / 256, cap = 8 * (uint64_t)(d->info.sm_count ? d->info.sm_count : 1);
	rt_launch dims = {{(uint32_t)(blocks < cap ? blocks : cap), 1, 1}, {256, 1, 1}, 0};
	return cuda_launch(d, d->pattern[scan], &dims, args, NULL, err);
}

rt_status cuda_fill_pattern(rt_device *d, rt_ptr dst, uint64_t seed, uint64_t offset, size_t bytes,
                            strbuf *err)
{
	if (!bytes)
		return RT_OK;
	if (!d->result)
		CU_TRY(cu.MemAlloc(&d->result, 4 * sizeof(uint64_t)), false);
	return pattern_launch(d, 0, dst, seed, offset, bytes, err);
}

/* On the device, like the comparison: 8 bytes come back. */
rt_status cuda_scan_pattern(rt_device *d, rt_ptr p, uint64_t seed, uint64_t offset, size_t bytes,
                            uint64_t *first, strbuf *err)
{
	*first = bytes;
	if (!bytes)
		return RT_OK;
	if (!d->result)
		CU_TRY(cu.MemAlloc(&d->result, 4 * sizeof(uint64_t)), false);
	CU_TRY(cu.MemsetD32Async(d->result + 24, 0xffffffffu, 2, d->stream), false);
	rt_status st = pattern_launch(d, 1, p, seed, offset, bytes, err);
	uint64_t at;
	if (st == RT_OK && (st = cuda_download(d, &at, d->result + 24, sizeof at, err)) == RT_OK &&
	    at < bytes)
		*first = at;
	return st;
}
