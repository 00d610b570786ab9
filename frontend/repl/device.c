/* device.c: probing for a CUDA GPU. The probe is the GPU backend's own
   opening of the driver (cuda_open, backend/cuda/driver.c: libcuda opened
   with dlopen, so that the binary builds and runs on machines without a
   GPU), so that both share one opening of the library. */
#include "device.h"
#include "../../backend/cuda/driver.h"

/* The name of device d as the command line and :device write it. */
const char *fe_device_name(FeDevice d) { return d == FE_DEVICE_GPU ? "gpu" : "cpu"; }

/* Probes once for a CUDA GPU; later calls return the cached answer. The
   reasons are cuda_open's: "no CUDA driver found (...)", "no CUDA device
   found (the driver reports none)", "the CUDA driver failed to initialise
   (error N)", ... */
bool fe_device_probe(const char **why) { return cuda_open(why); }
