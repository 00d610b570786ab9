/* device.h: where arrays live and array primitives run (the CPU, or a CUDA
   GPU found through the driver library at run time). */
#ifndef UNA_DEVICE_H
#define UNA_DEVICE_H

#include "../ir/common.h"

typedef enum { FE_DEVICE_CPU, FE_DEVICE_GPU } FeDevice;

/* "cpu" or "gpu". */
const char *fe_device_name(FeDevice d);

/* Whether the CUDA driver opens and has a device: backend/cuda/driver.h's
   cuda_open (one opening of the driver for the whole program). Otherwise
   *why (when why is not NULL) says what is missing, e.g. "no CUDA driver
   found (libcuda.so.1: cannot open shared object file: No such file or
   directory)". The session asks gpu_available, which also needs NVRTC. */
bool fe_device_probe(const char **why);

#endif
