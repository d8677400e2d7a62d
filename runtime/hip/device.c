/* The device side of the ROCm backend, on the HIP module API, shaped like
 * the CUDA driver's (runtime/cuda/driver.c): one device, one non-blocking
 * stream that carries everything (copies included, so that they are
 * ordered after queued launches), two events for timing and a buffer that
 * evicts the last-level cache. Used from the worker's one thread.
 *
 * libamdhip64 is dlopen'ed on first use, so the same aotc runs (and
 * compiles, and emits from databases) where ROCm is absent; the ABI it
 * relies on is written down in hip_internal.h.
 *
 * Comparing outputs and scanning guard zones happen on the host, on
 * chunks downloaded into a staging buffer, where the CUDA backend runs
 * small kernels. A helper kernel would need a compiler in the worker
 * (hiprtc is a separate library that many ROCm installations lack; hipcc
 * costs seconds a run and the worker restarts after every fault) or code
 * objects built with aotc for every gfx target, and no AMD GPU was at hand
 * to test either; the host code is elements.c's, the host backend's.
 * The cost is the outputs and their references crossing the bus once per
 * checked launch, which timed launches never pay. */
#include "hip_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "elements.h"

typedef int hipError_t;
typedef void *hipStream_t, *hipEvent_t, *hipModule_t, *hipFunction_t, *hipDeviceptr_t;

static struct {
	hipError_t (*Init)(unsigned flags);
	const char *(*GetErrorName)(hipError_t e);
	const char *(*GetErrorString)(hipError_t e);
	hipError_t (*DriverGetVersion)(int *v);
	hipError_t (*RuntimeGetVersion)(int *v);
	hipError_t (*GetDeviceCount)(int *n);
	hipError_t (*DeviceGet)(int *dev, int ordinal);
	hipError_t (*SetDevice)(int ordinal);
	hipError_t (*DeviceGetName)(char *name, int len, int dev);
	hipError_t (*DeviceTotalMem)(size_t *bytes, int dev);
	hipError_t (*DeviceGetAttribute)(int *v, int attr, int ordinal);
	hipError_t (*GetDeviceProperties)(void *props, int ordinal);
	hipError_t (*StreamCreateWithFlags)(hipStream_t *s, unsigned flags);
	hipError_t (*StreamDestroy)(hipStream_t s);
	hipError_t (*StreamSynchronize)(hipStream_t s);
	hipError_t (*EventCreateWithFlags)(hipEvent_t *e, unsigned flags);
	hipError_t (*EventDestroy)(hipEvent_t e);
	hipError_t (*EventRecord)(hipEvent_t e, hipStream_t s);
	hipError_t (*EventSynchronize)(hipEvent_t e);
	hipError_t (*EventElapsedTime)(float *ms, hipEvent_t start, hipEvent_t stop);
	hipError_t (*ModuleLoadData)(hipModule_t *m, const void *image);
	hipError_t (*ModuleUnload)(hipModule_t m);
	hipError_t (*ModuleGetFunction)(hipFunction_t *f, hipModule_t m, const char *name);
	hipError_t (*FuncGetAttribute)(int *v, int attr, hipFunction_t f);
	hipError_t (*FuncSetAttribute)(const void *f, int attr, int value);
	hipError_t (*ModuleLaunchKernel)(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
	                                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
	                                 hipStream_t s, void **params, void **extra);
	hipError_t (*Malloc)(void **p, size_t bytes);
	hipError_t (*Free)(void *p);
	hipError_t (*MemcpyHtoDAsync)(hipDeviceptr_t dst, void *src, size_t bytes, hipStream_t s);
	hipError_t (*MemcpyDtoHAsync)(void *dst, hipDeviceptr_t src, size_t bytes, hipStream_t s);
	hipError_t (*MemcpyDtoDAsync)(hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes,
	                              hipStream_t s);
	hipError_t (*MemsetD32Async)(hipDeviceptr_t dst, int value, size_t count, hipStream_t s);
	hipError_t (*MemsetD8Async)(hipDeviceptr_t dst, unsigned char value, size_t count,
	                            hipStream_t s);
} hip;

static const rt_sym hip_syms[] = {
	{"hipInit", NULL, (void **)&hip.Init},
	{"hipGetErrorName", NULL, (void **)&hip.GetErrorName},
	{"hipGetErrorString", NULL, (void **)&hip.GetErrorString},
	{"hipDriverGetVersion", NULL, (void **)&hip.DriverGetVersion},
	{"hipRuntimeGetVersion", NULL, (void **)&hip.RuntimeGetVersion},
	{"hipGetDeviceCount", NULL, (void **)&hip.GetDeviceCount},
	{"hipDeviceGet", NULL, (void **)&hip.DeviceGet},
	{"hipSetDevice", NULL, (void **)&hip.SetDevice},
	{"hipDeviceGetName", NULL, (void **)&hip.DeviceGetName},
	{"hipDeviceTotalMem", NULL, (void **)&hip.DeviceTotalMem},
	{"hipDeviceGetAttribute", NULL, (void **)&hip.DeviceGetAttribute},
	{"hipStreamCreateWithFlags", NULL, (void **)&hip.StreamCreateWithFlags},
	{"hipStreamDestroy", NULL, (void **)&hip.StreamDestroy},
	{"hipStreamSynchronize", NULL, (void **)&hip.StreamSynchronize},
	{"hipEventCreateWithFlags", NULL, (void **)&hip.EventCreateWithFlags},
	{"hipEventDestroy", NULL, (void **)&hip.EventDestroy},
	{"hipEventRecord", NULL, (void **)&hip.EventRecord},
	{"hipEventSynchronize", NULL, (void **)&hip.EventSynchronize},
	{"hipEventElapsedTime", NULL, (void **)&hip.EventElapsedTime},
	{"hipModuleLoadData", NULL, (void **)&hip.ModuleLoadData},
	{"hipModuleUnload", NULL, (void **)&hip.ModuleUnload},
	{"hipModuleGetFunction", NULL, (void **)&hip.ModuleGetFunction},
	{"hipFuncGetAttribute", NULL, (void **)&hip.FuncGetAttribute},
	{"hipFuncSetAttribute", NULL, (void **)&hip.FuncSetAttribute},
	{"hipModuleLaunchKernel", NULL, (void **)&hip.ModuleLaunchKernel},
	{"hipMalloc", NULL, (void **)&hip.Malloc},
	{"hipFree", NULL, (void **)&hip.Free},
	{"hipMemcpyHtoDAsync", NULL, (void **)&hip.MemcpyHtoDAsync},
	{"hipMemcpyDtoHAsync", NULL, (void **)&hip.MemcpyDtoHAsync},
	{"hipMemcpyDtoDAsync", NULL, (void **)&hip.MemcpyDtoDAsync},
	{"hipMemsetD32Async", NULL, (void **)&hip.MemsetD32Async},
	{"hipMemsetD8Async", NULL, (void **)&hip.MemsetD8Async},
};

static pthread_once_t hip_once = PTHREAD_ONCE_INIT;
static bool hip_ok;
static bool hip_no_runtime;   /* no libamdhip64 at all: a machine without ROCm */
static char hip_error[1024];
static char hip_library[256]; /* the one loaded */
static size_t hip_arch_name_at; /* gcnArchName's offset in what GetDeviceProperties fills */

/* $AOTC_HIP_LIBRARY alone when set (a choice is not second-guessed), else
 * ROCm 6's, 5's, then the unversioned name. */
static void hip_load_library(void)
{
	const char *env = getenv("AOTC_HIP_LIBRARY");
	const char *cands[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
	const char *const *names = cands;
	size_t n = COUNTOF(cands);
	if (env && *env) {
		names = &env;
		n = 1;
	}
	strbuf tried;
	strbuf_init(&tried);
	void *lib = NULL;
	for (size_t i = 0; i < n && !lib; i++) {
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (lib)
			snprintf(hip_library, sizeof hip_library, "%s", names[i]);
		else
			strbuf_printf(&tried, "%s%s", tried.len ? "; " : "", dlerror());
	}
	if (!lib) {
		snprintf(hip_error, sizeof hip_error,
		         "%s: no ROCm runtime on this machine (%s)",
		         env && *env ? "AOTC_HIP_LIBRARY's HIP runtime not found"
		                     : "libamdhip64 not found",
		         tried.data);
		strbuf_finish(&tried);
		hip_no_runtime = true;
		return;
	}
	strbuf_finish(&tried);
	const char *missing;
	if (!rt_resolve(lib, hip_syms, COUNTOF(hip_syms), &missing)) {
		snprintf(hip_error, sizeof hip_error,
		         "%s has no %s: the ROCm runtime is too old (aotc needs ROCm 5 or later)",
		         hip_library, missing);
		dlclose(lib);
		return;
	}
	/* hip_internal.h: the layout follows the entry point. */
	void *props = dlsym(lib, "hipGetDevicePropertiesR0600");
	hip_arch_name_at = HIP_PROPS_R0600_ARCH_NAME;
	if (!props) {
		props = dlsym(lib, "hipGetDeviceProperties");
		hip_arch_name_at = HIP_PROPS_R0000_ARCH_NAME;
	}
	if (!props) {
		snprintf(hip_error, sizeof hip_error, "%s has no hipGetDeviceProperties", hip_library);
		dlclose(lib);
		return;
	}
	*(void **)&hip.GetDeviceProperties = props;
	hip_ok = true;
}

/* AMD's last-level cache beyond L2, which no HIP attribute reports: the
 * Infinity Cache (MALL) of MI300 (gfx940-942) and MI350 (gfx950), 256 MiB.
 * Earlier Instinct parts have none. */
static uint64_t infinity_cache_bytes(const char *arch)
{
	static const char *const mall[] = {"gfx940", "gfx941", "gfx942", "gfx950"};
	for (size_t i = 0; i < COUNTOF(mall); i++)
		if (!strcmp(arch, mall[i]))
			return 256ull << 20;
	return 0;
}

struct rt_device {
	int ordinal;
	int dev;              /* hipDevice_t */
	bool current;         /* hipSetDevice done: the stream and memory exist */
	hipStream_t stream;
	hipEvent_t start, stop;
	void *flush;          /* 2x the last-level cache, rewritten before each timed launch */
	size_t flush_words;
	unsigned flush_value;
	rt_device_info info;
	/* Host staging for compare and the guard patterns: two chunks of STAGE
	 * bytes. */
	unsigned char *stage;
	/* Every function loaded and not unloaded: close frees them (a worker
	 * leaves them loaded after a fault). */
	rt_function *loaded;
};

enum { STAGE = 4 << 20 };

struct rt_function {
	hipModule_t mod;
	hipFunction_t fn;
	int max_threads;      /* what registers and __launch_bounds__ allow */
	int static_smem;
	uint32_t dyn_smem_ok; /* dynamic shared memory opted in to so far */
	rt_function *prev, *next; /* in the device's loaded list */
};

/* What a failed call means for the tuner, as driver.c's cu_status. Launch
 * configuration errors (hipErrorInvalidValue, hipErrorInvalidConfiguration
 * from hipModuleLaunchKernel: too many threads, too much shared memory)
 * only count as resources when the call was a launch. */
static rt_status hip_status(hipError_t r, bool launching)
{
	switch (r) {
	case HIP_E_SUCCESS:
		return RT_OK;
	case HIP_E_LAUNCH_OUT_OF_RESOURCES:
	case HIP_E_COOPERATIVE_LAUNCH_TOO_LARGE:
		return RT_ERR_RESOURCES;
	case HIP_E_INVALID_VALUE:
	case HIP_E_INVALID_CONFIGURATION:
		return launching ? RT_ERR_RESOURCES : RT_ERR_OTHER;
	/* The device is lost for this process. A memory access fault often
	 * never gets here: ROCm's runtime aborts the process, which the tuner
	 * sees as a worker killed by SIGABRT and records as a fault too. */
	case HIP_E_ILLEGAL_ADDRESS:
	case HIP_E_LAUNCH_TIMEOUT:
	case HIP_E_ASSERT:
	case HIP_E_LAUNCH_FAILURE:
	case HIP_E_ECC_NOT_CORRECTABLE:
		return RT_ERR_FAULT;
	case HIP_E_NO_DEVICE:
	case HIP_E_INVALID_DEVICE:
	case HIP_E_NOT_INITIALIZED:
	case HIP_E_DEINITIALIZED:
	case HIP_E_INSUFFICIENT_DRIVER:
		return RT_ERR_ENV;
	default:
		return RT_ERR_OTHER;
	}
}

/* "hipXxx: hipErrorName (message)" into err; returns the mapped status.
 * call is the API name or the call's text ("hip.Malloc(&p, n)"). */
static rt_status hip_fail(hipError_t r, const char *call, bool launching, strbuf *err)
{
	const char *name = hip.GetErrorName(r), *msg = hip.GetErrorString(r);
	if (strncmp(call, "hip.", 4) == 0)
		strbuf_printf(err, "hip%.*s: ", (int)strcspn(call + 4, "("), call + 4);
	else
		strbuf_printf(err, "%s: ", call);
	if (name && msg && strcmp(name, msg))
		strbuf_printf(err, "%s (%s)", name, msg);
	else
		strbuf_printf(err, "%s", name ? name : msg ? msg : "unknown HIP error");
	strbuf_printf(err, " [%d]", r);
	return hip_status(r, launching);
}

#define HIP_TRY(call, launching)                                         \
	do {                                                             \
		hipError_t hip_r_ = (call);                              \
		if (hip_r_ != HIP_E_SUCCESS)                               \
			return hip_fail(hip_r_, #call, launching, err);  \
	} while (0)

/* HIP_VERSION's encoding: major * 10^7 + minor * 10^5 + patch. */
static void version_string(char *out, size_t n, int v, bool patch)
{
	if (patch)
		snprintf(out, n, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
	else
		snprintf(out, n, "%d.%d", v / 10000000, v / 100000 % 100);
}

static rt_status attr(rt_device *d, int a, int *v, strbuf *err)
{
	HIP_TRY(hip.DeviceGetAttribute(v, a, d->ordinal), false);
	return RT_OK;
}

/* gfx90a for "gfx90a:sramecc+:xnack-" (the target features after ':'). */
static rt_status arch_of(int ordinal, char *out, size_t n, strbuf *err)
{
	_Alignas(16) unsigned char props[HIP_PROPS_BUFFER];
	memset(props, 0, sizeof props);
	HIP_TRY(hip.GetDeviceProperties(props, ordinal), false);
	const char *name = (const char *)props + hip_arch_name_at;
	size_t len = strnlen(name, 256);
	len = strcspn(name, ":") < len ? strcspn(name, ":") : len;
	/* A wrong layout reads another field: say so rather than mismatch. */
	if (len < 4 || len >= n || strncmp(name, "gfx", 3) != 0) {
		strbuf_printf(err, "%s: device %d's gcnArchName does not read as gfx... at offset %zu of "
		              "hipDeviceProp_t: a HIP runtime whose ABI this aotc does not know",
		              hip_library, ordinal, hip_arch_name_at);
		return RT_ERR_ENV;
	}
	memcpy(out, name, len);
	out[len] = 0;
	return RT_OK;
}

/* Fills d->info from the device. */
static rt_status describe_device(rt_device *d, const char *arch, strbuf *err)
{
	rt_device_info *in = &d->info;
	rt_status st;
	int v;
	strcpy(in->backend, "rocm");
	snprintf(in->arch, sizeof in->arch, "%s", arch);
	HIP_TRY(hip.DeviceGetName(in->name, (int)sizeof in->name, d->dev), false);
	in->name[sizeof in->name - 1] = 0;
	size_t mem = 0;
	HIP_TRY(hip.DeviceTotalMem(&mem, d->dev), false);
	in->memory_bytes = mem;

	static const struct {
		int a;
		size_t off;
	} ints[] = {
		{HIP_ATTR_MULTIPROCESSOR_COUNT, offsetof(rt_device_info, sm_count)},
		{HIP_ATTR_MAX_THREADS_PER_BLOCK, offsetof(rt_device_info, max_threads_per_block)},
		{HIP_ATTR_MAX_BLOCK_DIM_X, offsetof(rt_device_info, max_block_dims[0])},
		{HIP_ATTR_MAX_BLOCK_DIM_X + 1, offsetof(rt_device_info, max_block_dims[1])},
		{HIP_ATTR_MAX_BLOCK_DIM_X + 2, offsetof(rt_device_info, max_block_dims[2])},
	};
	for (size_t i = 0; i < COUNTOF(ints); i++)
		if ((st = attr(d, ints[i].a, (int *)((char *)in + ints[i].off), err)) != RT_OK)
			return st;
	for (int i = 0; i < 3; i++) {
		if ((st = attr(d, HIP_ATTR_MAX_GRID_DIM_X + i, &v, err)) != RT_OK)
			return st;
		in->max_grid_dims[i] = v;
	}
	if ((st = attr(d, HIP_ATTR_L2_CACHE_SIZE, &v, err)) != RT_OK)
		return st;
	/* The last level: L2, and the Infinity Cache behind it where there is one. */
	in->l2_bytes = (uint64_t)(v > 0 ? v : 0) + infinity_cache_bytes(arch);
	if ((st = attr(d, HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, &v, err)) != RT_OK)
		return st;
	in->smem_per_block = (uint64_t)v;
	if ((st = attr(d, HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN, &v, err)) != RT_OK)
		return st;
	/* AMD devices have no opt-in (LDS is all available to a block): the
	 * runtime reports 0 or the same size. */
	in->smem_per_block_optin = (uint64_t)v > in->smem_per_block ? (uint64_t)v : in->smem_per_block;
	if ((st = attr(d, HIP_ATTR_CLOCK_RATE, &v, err)) != RT_OK)
		return st;
	in->clock_mhz = v / 1000;   /* reported in kHz */

	int drv = 0, rtv = 0;
	HIP_TRY(hip.DriverGetVersion(&drv), false);
	HIP_TRY(hip.RuntimeGetVersion(&rtv), false);
	version_string(in->driver_version, sizeof in->driver_version, drv, true);
	version_string(in->runtime_version, sizeof in->runtime_version, rtv, false);

	/* docs/spec.md §4: rocm_<name>_<runtime version>, spaces and '/' as
	 * '_' ("AMD Instinct MI250X/MI250"); other characters that have no
	 * place in a file name are dropped. */
	char name[sizeof in->name];
	size_t n = 0;
	for (const char *p = in->name; *p; p++) {
		char c = *p;
		if (c == ' ' || c == '/')
			name[n++] = '_';
		else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		         c == '-' || c == '.' || c == '+' || c == '_')
			name[n++] = c;
	}
	name[n] = 0;
	snprintf(in->hardware_id, sizeof in->hardware_id, "rocm_%s_%s", name, in->runtime_version);
	return RT_OK;
}

/* The device asked for: index when >= 0 (the tuner's --devices), else
 * $AOTC_DEVICE's (*from_env), else -1 (the first device of the
 * architecture). */
static rt_status device_index(int index, int *out, bool *from_env, strbuf *err)
{
	const char *s = getenv("AOTC_DEVICE");
	*out = index;
	*from_env = false;
	if (index >= 0 || !s || !s[0])
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

/* The device to use: AOTC_DEVICE's, or the first whose gcnArchName is
 * arch. None: RT_ERR_NO_DEVICE, naming what there is. */
static rt_status choose_device(rt_device *d, const char *arch, int index, strbuf *err)
{
	int want, count = 0;
	bool from_env;
	rt_status st = device_index(index, &want, &from_env, err);
	if (st != RT_OK)
		return st;
	hipError_t r = hip.Init(0);
	if (r == HIP_E_SUCCESS)
		r = hip.GetDeviceCount(&count);
	if (r != HIP_E_SUCCESS || count == 0) {
		/* hipInit says hipErrorInvalidDevice or hipErrorNoDevice where
		 * ROCm is installed but no AMD GPU is usable. */
		strbuf_printf(err, "no AMD GPU on this machine: %s loaded, but ", hip_library);
		if (r == HIP_E_SUCCESS) {
			strbuf_puts(err, "it reports 0 devices");
			return RT_ERR_NO_DEVICE;
		}
		st = hip_fail(r, "hipInit", false, err);
		return r == HIP_E_NO_DEVICE || r == HIP_E_INVALID_DEVICE ? RT_ERR_NO_DEVICE : st;
	}
	if (want >= count) {
		strbuf_printf(err, "%s%d, but there %s only %d AMD GPU%s", from_env ? "AOTC_DEVICE=" : "device ",
		              want, count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
		return RT_ERR_ENV;
	}
	d->info.count = count;
	strbuf found;
	strbuf_init(&found);
	d->ordinal = -1;
	for (int i = want >= 0 ? want : 0; i < (want >= 0 ? want + 1 : count); i++) {
		char got[32], name[128] = "";
		if ((st = arch_of(i, got, sizeof got, err)) != RT_OK)
			break;
		if (!strcmp(got, arch)) {
			d->ordinal = i;
			break;
		}
		int dev;
		if (hip.DeviceGet(&dev, i) != HIP_E_SUCCESS ||
		    hip.DeviceGetName(name, (int)sizeof name, dev) != HIP_E_SUCCESS)
			strcpy(name, "?");
		name[sizeof name - 1] = 0;
		strbuf_printf(&found, "%s%d: %s (%s)", found.len ? ", " : "", i, name, got);
	}
	if (st == RT_OK && d->ordinal < 0) {
		/* A code object runs only on its own gfx target. */
		strbuf_printf(err, "no %s among the AMD GPUs here (%s)", arch, found.data);
		st = RT_ERR_NO_DEVICE;
	}
	strbuf_finish(&found);
	return st;
}

static rt_status open_device(rt_device *d, const char *arch, int index, strbuf *err)
{
	const arch_info *ai = arch_parse(arch);
	if (!ai || ai->kind != ARCH_ROCM) {
		strbuf_printf(err, "not a ROCm architecture: '%s' (expected e.g. gfx90a)", arch);
		return RT_ERR_ENV;
	}
	rt_status st = choose_device(d, arch, index, err);
	if (st != RT_OK)
		return st;
	d->info.index = d->ordinal;
	HIP_TRY(hip.DeviceGet(&d->dev, d->ordinal), false);
	if ((st = describe_device(d, arch, err)) != RT_OK)
		return st;
	HIP_TRY(hip.SetDevice(d->ordinal), false);
	d->current = true;
	HIP_TRY(hip.StreamCreateWithFlags(&d->stream, HIP_STREAM_NON_BLOCKING), false);
	HIP_TRY(hip.EventCreateWithFlags(&d->start, HIP_EVENT_DEFAULT), false);
	HIP_TRY(hip.EventCreateWithFlags(&d->stop, HIP_EVENT_DEFAULT), false);
	if (d->info.l2_bytes) {
		size_t bytes = 2 * (size_t)d->info.l2_bytes;
		HIP_TRY(hip.Malloc(&d->flush, bytes), false);
		d->flush_words = bytes / 4;
		d->info.flush_bytes = bytes;
	}
	return RT_OK;
}

rt_status hip_open(rt_device **out, const char *arch, int index, strbuf *err)
{
	*out = NULL;
	pthread_once(&hip_once, hip_load_library);
	if (!hip_ok) {
		strbuf_puts(err, hip_error);
		return hip_no_runtime ? RT_ERR_NO_DEVICE : RT_ERR_ENV;
	}
	rt_device *d = xcalloc(1, sizeof *d);
	rt_status st = open_device(d, arch, index, err);
	if (st != RT_OK) {
		hip_close(d);
		return st;
	}
	*out = d;
	return RT_OK;
}

void hip_close(rt_device *d)
{
	if (!d)
		return;
	/* Errors are ignored: after a fault every call fails, and the worker
	 * exits anyway. */
	if (d->current) {
		if (d->stream)
			hip.StreamSynchronize(d->stream);
		if (d->flush)
			hip.Free(d->flush);
		if (d->start)
			hip.EventDestroy(d->start);
		if (d->stop)
			hip.EventDestroy(d->stop);
		if (d->stream)
			hip.StreamDestroy(d->stream);
	}
	while (d->loaded)
		hip_unload(d, d->loaded);
	free(d->stage);
	free(d);
}

void hip_describe(rt_device *d, rt_device_info *info) { *info = d->info; }

rt_status hip_load(rt_device *d, const rt_blob *blob, rt_function **out, strbuf *err)
{
	*out = NULL;
	/* Only code objects: AOTC_EXTERN callers (host shared objects on
	 * CUDA) are not built for ROCm, so one here is a bug upstream. */
	if (!blob->symbol || blob->size < 4 || memcmp(blob->data, "\177ELF", 4) != 0) {
		strbuf_printf(err, "%s: not an AMDGPU code object (AOTC_EXTERN routines are not built "
		              "for ROCm)", blob->symbol ? blob->symbol : "(no symbol)");
		return RT_ERR_OTHER;
	}
	hipModule_t mod;
	HIP_TRY(hip.ModuleLoadData(&mod, blob->data), false);
	rt_function *f = xcalloc(1, sizeof *f);
	f->mod = mod;
	hipError_t r = hip.ModuleGetFunction(&f->fn, mod, blob->symbol);
	if (r == HIP_E_SUCCESS)
		r = hip.FuncGetAttribute(&f->max_threads, HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK, f->fn);
	if (r == HIP_E_SUCCESS)
		r = hip.FuncGetAttribute(&f->static_smem, HIP_FUNC_ATTR_SHARED_SIZE_BYTES, f->fn);
	if (r != HIP_E_SUCCESS) {
		strbuf_printf(err, "%s: ", blob->symbol);
		rt_status st = hip_fail(r, "hipModuleGetFunction", false, err);
		hip.ModuleUnload(mod);
		free(f);
		return st;
	}
	f->next = d->loaded;
	if (d->loaded)
		d->loaded->prev = f;
	d->loaded = f;
	*out = f;
	return RT_OK;
}

void hip_unload(rt_device *d, rt_function *f)
{
	if (!f)
		return;
	/* Unloading code that a queued launch still runs is undefined. */
	hip.StreamSynchronize(d->stream);
	hip.ModuleUnload(f->mod);
	if (f->prev)
		f->prev->next = f->next;
	else
		d->loaded = f->next;
	if (f->next)
		f->next->prev = f->prev;
	free(f);
}

rt_status hip_alloc(rt_device *d, size_t bytes, rt_ptr *out, strbuf *err)
{
	(void)d;
	void *p = NULL;
	*out = 0;
	/* An empty buffer still needs a handle. */
	HIP_TRY(hip.Malloc(&p, bytes ? bytes : 4), false);
	*out = (rt_ptr)(uintptr_t)p;
	return RT_OK;
}

void hip_release(rt_device *d, rt_ptr p)
{
	if (!p)
		return;
	hip.StreamSynchronize(d->stream);
	hip.Free((void *)(uintptr_t)p);
}

static void *dptr(rt_ptr p) { return (void *)(uintptr_t)p; }

/* Copies go on the stream, then wait (see driver.c: the synchronous
 * copies run on the null stream, which a non-blocking stream does not
 * order against). */
rt_status hip_upload(rt_device *d, rt_ptr dst, const void *src, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	HIP_TRY(hip.MemcpyHtoDAsync(dptr(dst), (void *)src, bytes, d->stream), false);
	HIP_TRY(hip.StreamSynchronize(d->stream), false);
	return RT_OK;
}

rt_status hip_download(rt_device *d, void *dst, rt_ptr src, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	HIP_TRY(hip.MemcpyDtoHAsync(dst, dptr(src), bytes, d->stream), false);
	HIP_TRY(hip.StreamSynchronize(d->stream), false);
	return RT_OK;
}

rt_status hip_copy(rt_device *d, rt_ptr dst, rt_ptr src, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	HIP_TRY(hip.MemcpyDtoDAsync(dptr(dst), dptr(src), bytes, d->stream), false);
	HIP_TRY(hip.StreamSynchronize(d->stream), false);
	return RT_OK;
}

rt_status hip_launch(rt_device *d, rt_function *f, const rt_launch *dims, void **args, double *ms,
                     strbuf *err)
{
	const rt_device_info *in = &d->info;
	uint64_t threads = (uint64_t)dims->block[0] * dims->block[1] * dims->block[2];
	/* Said here in words; the runtime would only say "invalid value". */
	if (threads > (uint64_t)f->max_threads) {
		strbuf_printf(err, "block of %llu threads, the kernel allows at most %d "
		              "(registers, __launch_bounds__)", (unsigned long long)threads,
		              f->max_threads);
		return RT_ERR_RESOURCES;
	}
	uint64_t smem = (uint64_t)f->static_smem + dims->smem;
	if (smem > in->smem_per_block_optin) {
		strbuf_printf(err, "%d bytes of static and %u of dynamic shared memory (LDS), the "
		              "device allows %llu", f->static_smem, dims->smem,
		              (unsigned long long)in->smem_per_block_optin);
		return RT_ERR_RESOURCES;
	}
	/* As on CUDA, beyond the default a kernel opts in, once; no AMD
	 * device aotc knows has a default below its maximum. */
	if (smem > in->smem_per_block && dims->smem > f->dyn_smem_ok) {
		HIP_TRY(hip.FuncSetAttribute(f->fn, HIP_FUNC_ATTR_MAX_DYNAMIC_SHARED,
		                             (int)dims->smem), true);
		f->dyn_smem_ok = dims->smem;
	}
	if (ms)
		HIP_TRY(hip.EventRecord(d->start, d->stream), false);
	HIP_TRY(hip.ModuleLaunchKernel(f->fn, dims->grid[0], dims->grid[1], dims->grid[2],
	                               dims->block[0], dims->block[1], dims->block[2], dims->smem,
	                               d->stream, args, NULL), true);
	if (!ms)
		return RT_OK;
	HIP_TRY(hip.EventRecord(d->stop, d->stream), false);
	/* A fault in the kernel surfaces here. */
	HIP_TRY(hip.EventSynchronize(d->stop), false);
	float t = 0;
	HIP_TRY(hip.EventElapsedTime(&t, d->start, d->stop), false);
	*ms = t;
	return RT_OK;
}

rt_status hip_flush_cache(rt_device *d, strbuf *err)
{
	if (!d->flush)
		return RT_OK;
	/* A new value each time, so no write can be elided as unchanged. */
	HIP_TRY(hip.MemsetD32Async(d->flush, (int)++d->flush_value, d->flush_words, d->stream), false);
	return RT_OK;
}

rt_status hip_sync(rt_device *d, strbuf *err)
{
	HIP_TRY(hip.StreamSynchronize(d->stream), false);
	return RT_OK;
}

rt_status hip_memset8(rt_device *d, rt_ptr dst, uint8_t value, size_t bytes, strbuf *err)
{
	if (!bytes)
		return RT_OK;
	HIP_TRY(hip.MemsetD8Async(dptr(dst), value, bytes, d->stream), false);
	return RT_OK;
}

static unsigned char *staging(rt_device *d)
{
	if (!d->stage)
		d->stage = xmalloc(2 * (size_t)STAGE);
	return d->stage;
}

/* On the host, a chunk at a time (see the top of the file). */
rt_status hip_compare(rt_device *d, rt_ptr out, rt_ptr ref, aotc_dtype t, size_t count,
                      rt_compare *res, strbuf *err)
{
	memset(res, 0, sizeof *res);
	size_t esize = dtype_size(t), per = STAGE / esize;
	unsigned char *o = staging(d), *r = o + STAGE;
	for (size_t at = 0; at < count; at += per) {
		size_t n = count - at < per ? count - at : per;
		rt_status st;
		if ((st = hip_download(d, o, out + at * esize, n * esize, err)) != RT_OK ||
		    (st = hip_download(d, r, ref + at * esize, n * esize, err)) != RT_OK)
			return st;
		rt_compare c;
		elem_compare(o, r, t, n, &c);
		res->diff_sq += c.diff_sq;
		res->ref_sq += c.ref_sq;
		if (c.bad && !res->bad)
			res->first_bad = at + c.first_bad;
		res->bad += c.bad;
	}
	return RT_OK;
}

rt_status hip_fill_pattern(rt_device *d, rt_ptr dst, uint64_t seed, uint64_t offset, size_t bytes,
                           strbuf *err)
{
	unsigned char *b = staging(d);
	for (size_t at = 0; at < bytes; at += STAGE) {
		size_t n = bytes - at < STAGE ? bytes - at : STAGE;
		rt_pattern_fill(b, seed, offset + at, n);
		rt_status st = hip_upload(d, dst + at, b, n, err);
		if (st != RT_OK)
			return st;
	}
	return RT_OK;
}

rt_status hip_scan_pattern(rt_device *d, rt_ptr p, uint64_t seed, uint64_t offset, size_t bytes,
                           uint64_t *first, strbuf *err)
{
	unsigned char *b = staging(d);
	*first = bytes;
	for (size_t at = 0; at < bytes; at += STAGE) {
		size_t n = bytes - at < STAGE ? bytes - at : STAGE;
		rt_status st = hip_download(d, b, p + at, n, err);
		if (st != RT_OK)
			return st;
		size_t i = rt_pattern_scan(b, seed, offset + at, n);
		if (i < n) {
			*first = at + i;
			return RT_OK;
		}
	}
	return RT_OK;
}
