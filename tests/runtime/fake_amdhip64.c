/* A STAND-IN for libamdhip64, for tests only: it proves the plumbing of
 * aotc's HIP device side (runtime/hip/device.c) on a machine without an
 * AMD GPU, and measures nothing. Loaded with AOTC_HIP_LIBRARY, it offers
 * one device, "aotc test stand-in (not a GPU)", gfx90a, or the devices
 * AOTC_FAKE_HIP_DEVICES lists (below). A device's memory is host memory
 * (a device pointer is a malloc'd address), its copies and memsets are
 * memcpy and memset, its events read a made-up clock that each launch
 * advances by a made-up time, and its hipModuleLaunchKernel runs a host
 * version of the kernel that hipModuleGetFunction was asked for, chosen
 * by its mangled name: only tests/codegen/rocm/axpy.cu's axpy and axpy_ref
 * (tests/runtime/axpy_host_ref.cu's axpy is the same kernel). Three of
 * axpy's variants misbehave on purpose, as broken kernels do on a GPU:
 *   axpy<64, 2>   adds 1 to y[0]: a wrong result;
 *   axpy<128, 2>  also writes y[n]: outside its buffer;
 *   axpy<512, 2>  faults: hipErrorIllegalAddress from the next
 *                 synchronisation and every call after it (sticky, as HIP's).
 *
 * AOTC_FAKE_HIP_DEVICES="gfx90a,gfx90a,gfx90a:other,gfx908", read once
 * when the library is loaded, offers one device per entry, ordinals in
 * that order: ARCH is its gcnArchName's target, and a MODEL after the
 * colon (letters, digits, '-') makes it another model of that
 * architecture: its name, and so its hardware id, ends " MODEL". The
 * device-query entries (hipGetDeviceCount, hipDeviceGet, hipSetDevice,
 * hipDeviceGetName, hipDeviceTotalMem, hipDeviceGetAttribute,
 * hipGetDeviceProperties) answer per ordinal and refuse any other; which
 * device is current changes nothing else. Unset or empty: the one device
 * above. A value that does not read so makes hipInit fail
 * (hipErrorInvalidValue), saying why on stderr. All of its state is the
 * process's own: two workers on two of its devices share nothing.
 *
 * A database written through it holds no measurement and must never be
 * committed as data (tests/runtime/hip-stand-in.sh writes its own to a
 * temporary directory).
 *
 * The entry points have HIP's signatures with HIP's types spelled as their
 * ABI (int for hipError_t and enums, void * for handles); the constants are
 * aotc's own (runtime/hip/hip_internal.h), which hip_abi.c checks against
 * ROCm's header where it is installed. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"

#define EXPORT __attribute__((visibility("default")))
#define DEVICE_NAME "aotc test stand-in (not a GPU)"
#define ARCH_FEATURES ":sramecc+:xnack-" /* after the target in gcnArchName */
#define VERSION 50221153 /* reads as 5.2 */
#define MAX_DEVICES 16

/* The devices offered (AOTC_FAKE_HIP_DEVICES), set once at load. */
typedef struct fake_device {
	char arch_name[64]; /* gcnArchName: "gfx90a:sramecc+:xnack-" */
	char name[96];      /* DEVICE_NAME, then " MODEL" for another model */
} fake_device;
static fake_device devices[MAX_DEVICES] = {{"gfx90a" ARCH_FEATURES, DEVICE_NAME}};
static int ndevices = 1;
static int bad_devices; /* AOTC_FAKE_HIP_DEVICES did not read: hipInit fails */

/* Everything the stand-in hands out stays reachable from here, so a
 * worker that exits after a fault without freeing is no leak. */
static void **live;
static size_t nlive, cap;
static int sticky;     /* set by a fault: every later call returns it */
static double clock_ms;     /* the made-up device clock */
static int initialised;

static void keep(void *p)
{
	if (nlive == cap) {
		cap = cap ? 2 * cap : 64;
		live = realloc(live, cap * sizeof *live);
		if (!live)
			abort();
	}
	live[nlive++] = p;
}

static int drop(void *p)
{
	for (size_t i = 0; i < nlive; i++)
		if (live[i] == p) {
			live[i] = live[--nlive];
			free(p);
			return 1;
		}
	return 0;
}

/* One entry of AOTC_FAKE_HIP_DEVICES, len bytes at p: ARCH[:MODEL]. */
static int read_device(fake_device *dev, const char *p, size_t len)
{
	size_t arch_len = strcspn(p, ":,"); /* at most len: p[len] is ',' or the end */
	if (arch_len < 4 || arch_len > 16 || strncmp(p, "gfx", 3) != 0)
		return 0;
	for (size_t i = 3; i < arch_len; i++)
		if (!isalnum((unsigned char)p[i]))
			return 0;
	const char *model = p + arch_len + 1;
	size_t model_len = arch_len < len ? len - arch_len - 1 : 0;
	if (arch_len < len && (model_len == 0 || model_len > 32))
		return 0;
	for (size_t i = 0; i < model_len; i++)
		if (!isalnum((unsigned char)model[i]) && model[i] != '-')
			return 0;
	snprintf(dev->arch_name, sizeof dev->arch_name, "%.*s%s", (int)arch_len, p, ARCH_FEATURES);
	if (model_len)
		snprintf(dev->name, sizeof dev->name, "%s %.*s", DEVICE_NAME, (int)model_len, model);
	else
		snprintf(dev->name, sizeof dev->name, "%s", DEVICE_NAME);
	return 1;
}

/* Once, at load, before any entry point can run: no lock needed. */
__attribute__((constructor)) static void read_devices(void)
{
	const char *s = getenv("AOTC_FAKE_HIP_DEVICES");
	if (!s || !s[0])
		return;
	int n = 0;
	for (const char *p = s;; n++) {
		size_t len = strcspn(p, ",");
		if (n == MAX_DEVICES) {
			fprintf(stderr, "fake_amdhip64: AOTC_FAKE_HIP_DEVICES='%s': more than %d devices\n", s,
			        MAX_DEVICES);
			bad_devices = 1;
			return;
		}
		if (!read_device(&devices[n], p, len)) {
			fprintf(stderr, "fake_amdhip64: AOTC_FAKE_HIP_DEVICES='%s': entry %d is not ARCH[:MODEL] "
			        "(gfx90a, gfx90a:other)\n", s, n + 1);
			bad_devices = 1;
			return;
		}
		if (!p[len])
			break;
		p += len + 1;
	}
	ndevices = n + 1;
}

static int valid(int ordinal) { return ordinal >= 0 && ordinal < ndevices; }

#define STICKY()                  \
	do {                      \
		if (sticky)       \
			return sticky; \
	} while (0)

EXPORT int hipInit(unsigned flags)
{
	(void)flags;
	if (bad_devices)
		return HIP_E_INVALID_VALUE;
	initialised = 1;
	return HIP_E_SUCCESS;
}

EXPORT const char *hipGetErrorName(int e)
{
	switch (e) {
	case HIP_E_SUCCESS: return "hipSuccess";
	case HIP_E_INVALID_VALUE: return "hipErrorInvalidValue";
	case HIP_E_NOT_FOUND: return "hipErrorNotFound";
	case HIP_E_ILLEGAL_ADDRESS: return "hipErrorIllegalAddress";
	case HIP_E_NOT_INITIALIZED: return "hipErrorNotInitialized";
	default: return "hipErrorUnknown";
	}
}

EXPORT const char *hipGetErrorString(int e)
{
	switch (e) {
	case HIP_E_ILLEGAL_ADDRESS: return "an illegal memory access was encountered (stand-in)";
	default: return hipGetErrorName(e);
	}
}

EXPORT int hipDriverGetVersion(int *v) { *v = VERSION; return HIP_E_SUCCESS; }
EXPORT int hipRuntimeGetVersion(int *v) { *v = VERSION; return HIP_E_SUCCESS; }

EXPORT int hipGetDeviceCount(int *n)
{
	*n = initialised ? ndevices : 0;
	return initialised ? HIP_E_SUCCESS : HIP_E_NOT_INITIALIZED;
}

EXPORT int hipDeviceGet(int *dev, int ordinal)
{
	if (!valid(ordinal))
		return HIP_E_INVALID_DEVICE;
	*dev = ordinal;
	return HIP_E_SUCCESS;
}

EXPORT int hipSetDevice(int ordinal) { return valid(ordinal) ? HIP_E_SUCCESS : HIP_E_INVALID_DEVICE; }

EXPORT int hipDeviceGetName(char *name, int len, int dev)
{
	if (!valid(dev) || len <= 0)
		return HIP_E_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", devices[dev].name);
	return HIP_E_SUCCESS;
}

EXPORT int hipDeviceTotalMem(size_t *bytes, int dev)
{
	if (!valid(dev))
		return HIP_E_INVALID_DEVICE;
	*bytes = (size_t)1 << 30;
	return HIP_E_SUCCESS;
}

EXPORT int hipDeviceGetAttribute(int *v, int attr, int ordinal)
{
	if (!valid(ordinal))
		return HIP_E_INVALID_DEVICE;
	switch (attr) {
	case HIP_ATTR_CLOCK_RATE: *v = 1700000; break;
	case HIP_ATTR_L2_CACHE_SIZE: *v = 1 << 20; break; /* small: the flush buffer is host memory */
	case HIP_ATTR_MAX_BLOCK_DIM_X: case HIP_ATTR_MAX_BLOCK_DIM_X + 1: case HIP_ATTR_MAX_BLOCK_DIM_X + 2:
		*v = 1024;
		break;
	case HIP_ATTR_MAX_GRID_DIM_X: case HIP_ATTR_MAX_GRID_DIM_X + 1: case HIP_ATTR_MAX_GRID_DIM_X + 2:
		*v = 2147483647;
		break;
	case HIP_ATTR_MAX_THREADS_PER_BLOCK: *v = 1024; break;
	case HIP_ATTR_MULTIPROCESSOR_COUNT: *v = 104; break;
	case HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK: *v = 65536; break;
	case HIP_ATTR_SHARED_MEM_PER_BLOCK_OPTIN: *v = 65536; break;
	default: return HIP_E_INVALID_VALUE;
	}
	return HIP_E_SUCCESS;
}

/* ROCm 5's entry point and layout: only gcnArchName is filled. */
EXPORT int hipGetDeviceProperties(void *props, int ordinal)
{
	if (!valid(ordinal))
		return HIP_E_INVALID_DEVICE;
	const fake_device *dev = &devices[ordinal];
	memset(props, 0, 792);
	memcpy(props, dev->name, strlen(dev->name) + 1);
	memcpy((char *)props + HIP_PROPS_R0000_ARCH_NAME, dev->arch_name, strlen(dev->arch_name) + 1);
	return HIP_E_SUCCESS;
}

/* Streams and events: everything runs at once on the host. */
EXPORT int hipStreamCreateWithFlags(void **s, unsigned flags)
{
	(void)flags;
	STICKY();
	*s = malloc(1);
	keep(*s);
	return HIP_E_SUCCESS;
}

EXPORT int hipStreamDestroy(void *s) { drop(s); return HIP_E_SUCCESS; }
EXPORT int hipStreamSynchronize(void *s) { (void)s; return sticky; }

EXPORT int hipEventCreateWithFlags(void **e, unsigned flags)
{
	(void)flags;
	STICKY();
	*e = calloc(1, sizeof(double));
	keep(*e);
	return HIP_E_SUCCESS;
}

EXPORT int hipEventDestroy(void *e) { drop(e); return HIP_E_SUCCESS; }

EXPORT int hipEventRecord(void *e, void *s)
{
	(void)s;
	STICKY();
	*(double *)e = clock_ms;
	return HIP_E_SUCCESS;
}

EXPORT int hipEventSynchronize(void *e) { (void)e; return sticky; }

EXPORT int hipEventElapsedTime(float *ms, void *start, void *stop)
{
	STICKY();
	*ms = (float)(*(double *)stop - *(double *)start);
	return HIP_E_SUCCESS;
}

/* Modules: a function is its mangled name. */
typedef struct fake_fn {
	int ref;       /* axpy_ref */
	int bs, per;   /* axpy<BS, PER> */
} fake_fn;

EXPORT int hipModuleLoadData(void **m, const void *image)
{
	STICKY();
	if (memcmp(image, "\177ELF", 4) != 0)
		return HIP_E_INVALID_IMAGE;
	*m = malloc(1);
	keep(*m);
	return HIP_E_SUCCESS;
}

EXPORT int hipModuleUnload(void *m) { drop(m); return HIP_E_SUCCESS; }

EXPORT int hipModuleGetFunction(void **f, void *m, const char *name)
{
	(void)m;
	STICKY();
	fake_fn fn = {0};
	if (!strcmp(name, "_Z8axpy_refifPKfPf"))
		fn.ref = 1;
	else if (sscanf(name, "_Z4axpyILi%dELi%dEEvifPKfPf", &fn.bs, &fn.per) != 2 || fn.bs <= 0 ||
	         fn.per <= 0)
		return HIP_E_NOT_FOUND;
	fake_fn *p = malloc(sizeof *p);
	*p = fn;
	keep(p);
	*f = p;
	return HIP_E_SUCCESS;
}

EXPORT int hipFuncGetAttribute(int *v, int attr, void *f)
{
	(void)f;
	*v = attr == HIP_FUNC_ATTR_MAX_THREADS_PER_BLOCK ? 1024 : 0;
	return HIP_E_SUCCESS;
}

EXPORT int hipFuncSetAttribute(const void *f, int attr, int value)
{
	(void)f;
	(void)attr;
	(void)value;
	return HIP_E_SUCCESS;
}

static void *arg_ptr(void *arg)
{
	uint64_t v;
	memcpy(&v, arg, sizeof v);
	return (void *)(uintptr_t)v;
}

EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                      unsigned by, unsigned bz, unsigned smem, void *s,
                                      void **params, void **extra)
{
	(void)gy, (void)gz, (void)by, (void)bz, (void)smem, (void)s, (void)extra;
	STICKY();
	const fake_fn *fn = f;
	int n;
	float a;
	memcpy(&n, params[0], sizeof n);
	memcpy(&a, params[1], sizeof a);
	const float *x = arg_ptr(params[2]);
	float *y = arg_ptr(params[3]);
	int bs = fn->ref ? (int)bx : fn->bs, per = fn->ref ? 1 : fn->per;
	if (!fn->ref && fn->bs == 512 && fn->per == 2) {
		sticky = HIP_E_ILLEGAL_ADDRESS;
		return HIP_E_SUCCESS; /* as on a GPU: the launch is queued, the fault comes later */
	}
	/* The kernel as the GPU runs it: every thread of every block. */
	for (unsigned b = 0; b < gx; b++)
		for (unsigned t = 0; t < bx; t++)
			for (int j = 0, i = (int)b * bs * per + (int)t; j < per; j++, i += bs)
				if (i < n)
					y[i] += a * x[i];
	if (!fn->ref && fn->per == 2 && fn->bs == 64 && n > 0)
		y[0] += 1;
	if (!fn->ref && fn->per == 2 && fn->bs == 128)
		y[n] = 1;
	/* Made-up time: 12 bytes an element, a little better with more per
	 * thread, best at 256 threads. */
	double t = 0.003 + n * 12 / 1.6e6;
	t *= 1 - 0.04 * log2((double)per);
	t *= 1 + 0.03 * fabs(log2(bs / 256.0));
	clock_ms += t;
	return HIP_E_SUCCESS;
}

EXPORT int hipMalloc(void **p, size_t bytes)
{
	STICKY();
	*p = malloc(bytes);
	if (!*p)
		return HIP_E_OUT_OF_MEMORY;
	keep(*p);
	return HIP_E_SUCCESS;
}

EXPORT int hipFree(void *p) { return p && !drop(p) ? HIP_E_INVALID_VALUE : HIP_E_SUCCESS; }

EXPORT int hipMemcpyHtoDAsync(void *dst, void *src, size_t bytes, void *s)
{
	(void)s;
	STICKY();
	memcpy(dst, src, bytes);
	return HIP_E_SUCCESS;
}

EXPORT int hipMemcpyDtoHAsync(void *dst, void *src, size_t bytes, void *s)
{
	(void)s;
	STICKY();
	memcpy(dst, src, bytes);
	return HIP_E_SUCCESS;
}

EXPORT int hipMemcpyDtoDAsync(void *dst, void *src, size_t bytes, void *s)
{
	(void)s;
	STICKY();
	memmove(dst, src, bytes);
	return HIP_E_SUCCESS;
}

EXPORT int hipMemsetD32Async(void *dst, int value, size_t count, void *s)
{
	(void)s;
	STICKY();
	for (size_t i = 0; i < count; i++)
		memcpy((char *)dst + 4 * i, &value, 4);
	return HIP_E_SUCCESS;
}

EXPORT int hipMemsetD8Async(void *dst, unsigned char value, size_t count, void *s)
{
	(void)s;
	STICKY();
	memset(dst, value, count);
	return HIP_E_SUCCESS;
}
