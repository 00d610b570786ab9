/* device.c: probing for a CUDA GPU through the driver library, opened with
   dlopen so that the binary builds and runs on machines without one. */
#include "device.h"
#include <dlfcn.h>

/* The name of device d as the command line and :device write it. */
const char *fe_device_name(FeDevice d) { return d == FE_DEVICE_GPU ? "gpu" : "cpu"; }

typedef int (*CuInitFn)(unsigned int flags);
typedef int (*CuDeviceGetCountFn)(int *count);

static bool probed;
static bool found;
static const char *reason;

/* Does the probe itself; sets found and reason. */
static void probe_once(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    reason = una_sprintf("no CUDA driver found (%s)", e ? e : "libcuda.so.1 cannot be opened");
    return;
  }
  CuInitFn cu_init = (CuInitFn)(uintptr_t)dlsym(lib, "cuInit");
  CuDeviceGetCountFn cu_count = (CuDeviceGetCountFn)(uintptr_t)dlsym(lib, "cuDeviceGetCount");
  if (!cu_init || !cu_count) {
    reason = "no usable CUDA driver found (libcuda.so.1 lacks cuInit or cuDeviceGetCount)";
    return;
  }
  int rc = cu_init(0);
  if (rc != 0) {
    /* 100 is CUDA_ERROR_NO_DEVICE. */
    reason = rc == 100 ? una_strdup("no CUDA device found (the driver reports none)")
                       : una_sprintf("the CUDA driver failed to initialise (error %d)", rc);
    return;
  }
  int count = 0;
  rc = cu_count(&count);
  if (rc != 0) {
    reason = una_sprintf("the CUDA driver cannot count devices (error %d)", rc);
    return;
  }
  if (count <= 0) {
    reason = "no CUDA device found (the driver reports none)";
    return;
  }
  found = true;
  /* The library stays open: the GPU backend will use it. */
}

/* Probes once for a CUDA GPU; later calls return the cached answer. */
bool fe_device_probe(const char **why) {
  if (!probed) {
    probe_once();
    probed = true;
  }
  if (!found && why) *why = reason;
  return found;
}
