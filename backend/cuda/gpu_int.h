/* gpu_int.h: what gpu_eval.c (preparing a program) and gpu_ops.c
   (running its builtins) share. */
#ifndef UNA_CUDA_GPU_INT_H
#define UNA_CUDA_GPU_INT_H

#include "driver.h"
#include "plan.h"

/* A planned kernel, loaded: its functions, one per launch (a, b, c). */
typedef struct GpuLoaded {
  const GpuKernel *k;
  CudaFunction *f[3];
} GpuLoaded;

/* builtin term -> GpuLoaded*: the kernels of the program gpu_call runs. */
extern PtrMap gpu_loaded;

#endif
