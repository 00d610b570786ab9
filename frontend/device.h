/* device.h: where arrays live and array primitives run (the CPU, or a CUDA
   GPU found through the driver library at run time). */
#ifndef UNA_DEVICE_H
#define UNA_DEVICE_H

#include "common.h"

typedef enum { FE_DEVICE_CPU, FE_DEVICE_GPU } FeDevice;

/* "cpu" or "gpu". */
const char *fe_device_name(FeDevice d);

/* Looks for a usable CUDA GPU: opens libcuda.so.1 with dlopen, calls cuInit
   and cuDeviceGetCount through dlsym. Returns true when at least one device
   is present; otherwise *why (when why is not NULL) says what is missing,
   e.g. "no CUDA driver found (libcuda.so.1: cannot open shared object file:
   No such file or directory)". The result is computed once and cached. */
bool fe_device_probe(const char **why);

#endif
