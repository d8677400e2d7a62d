/* The device's clocks from NVML (libnvidia-ml.so.1, dlopen'ed on first
 * use; absent on some machines and in some containers: then nothing is
 * said, never an error). nvml.h is not needed: the few entry points take
 * an opaque handle and unsigned ints, declared here as the NVML API
 * documents them. */
#include "cuda_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct nvml_device *nvml_device; /* nvmlDevice_t */
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static struct {
	int (*Init)(void);                                              /* nvmlInit_v2 */
	int (*HandleByPci)(const char *bus_id, nvml_device *dev);       /* ..._v2 */
	int (*ClockInfo)(nvml_device dev, int type, unsigned *mhz);     /* now */
	int (*MaxClockInfo)(nvml_device dev, int type, unsigned *mhz);
	int (*AppClock)(nvml_device dev, int type, unsigned *mhz);      /* applications / locked */
} nv;

static const rt_sym nv_syms[] = {
	{"nvmlInit_v2", "nvmlInit", (void **)&nv.Init},
	{"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId", (void **)&nv.HandleByPci},
	{"nvmlDeviceGetClockInfo", NULL, (void **)&nv.ClockInfo},
	{"nvmlDeviceGetMaxClockInfo", NULL, (void **)&nv.MaxClockInfo},
	{"nvmlDeviceGetApplicationsClock", NULL, (void **)&nv.AppClock},
};

static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
static bool nv_ok;

static void nv_load(void)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	const char *missing;
	if (!lib)
		return;
	if (!rt_resolve(lib, nv_syms, COUNTOF(nv_syms), &missing) || nv.Init() != NVML_SUCCESS) {
		dlclose(lib);
		return;
	}
	nv_ok = true; /* never shut down: the worker's process ends it */
}

bool cuda_nvml_clocks(const char *pci_bus_id, rt_clocks *out)
{
	memset(out, 0, sizeof *out);
	out->locked = -1;
	pthread_once(&nv_once, nv_load);
	nvml_device dev;
	if (!nv_ok || nv.HandleByPci(pci_bus_id, &dev) != NVML_SUCCESS)
		return false;
	unsigned v;
	snprintf(out->source, sizeof out->source, "nvml");
	if (nv.ClockInfo(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
		out->sm_mhz = (int)v;
	if (nv.ClockInfo(dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
		out->mem_mhz = (int)v;
	if (nv.MaxClockInfo(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
		out->max_sm_mhz = (int)v;
	if (nv.AppClock(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
		out->app_sm_mhz = (int)v;
	/* Locked (nvidia-smi -lgc, or applications clocks) shows as the SM
	 * clock sitting at the applications clock under load; anything else
	 * is the boost logic's choice of the moment. */
	if (out->sm_mhz > 0 && out->app_sm_mhz > 0)
		out->locked = out->sm_mhz == out->app_sm_mhz;
	return out->sm_mhz > 0;
}
