/* gpu_array.h: arrays of reals on the device. An Array's device copy is a
   DevBuf (driver.h, freed by the collector) and an offset, so that shifts
   stay views; its host copy (a->r) is made on demand by val_fetch. */
#ifndef UNA_CUDA_GPU_ARRAY_H
#define UNA_CUDA_GPU_ARRAY_H

#include "driver.h"
#include "../value.h"

/* A new array of n uninitialised reals on the device (n == 0: an empty
   host array). Raises "device out of memory" at s. */
Array *gpu_new_array(size_t n, Span s);

/* The device address of a's element 0, copying a to the device first if
   it is only on the host (once: the copy is kept in a). a is unboxed. */
CudaPtr gpu_array_ptr(const Array *a, Span s);

/* Drops the host copy of a device array (after a load, say), so that the
   array lives on the device only. */
void gpu_drop_host(Array *a);

#endif
