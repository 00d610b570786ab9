/* gpu_int.h: what gpu_eval.c (preparing a program) and gpu_ops.c
   (running its builtins) share. */
#ifndef UNA_CUDA_GPU_INT_H
#define UNA_CUDA_GPU_INT_H

#include "driver.h"
#include "launch.h"

/* A planned kernel, loaded: its functions, one per launch (a, b, c). */
typedef struct GpuLoaded {
  const PlanKernel *k;
  CudaFunction *f[3];
} GpuLoaded;

#endif
