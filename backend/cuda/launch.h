/* launch.h: how the CUDA backend runs the kernels of an execution plan
   (backend/plan/plan.h): every plan kernel becomes one __global__
   function, or two or three launched in turn (gpu_kernel_launches).

   Every kernel has the same parameter list (the launch code builds it the
   same way for all):
     (double *out, const double *aux, long long n, double v,
      const double *L0, ..., const double *L(nleaves-1),
      double <inputs of fns[0]>, ..., double <inputs of fns[nfns-1]>)
   where the inputs of a function are the input vregs of its scalar kernel
   (free variables and hoisted parts, cpu_kernel_vreg_kind CPU_VR_INPUT)
   that its code reads, in increasing vreg order (PlanFn.inputs). */
#ifndef UNA_CUDA_LAUNCH_H
#define UNA_CUDA_LAUNCH_H

#include "../plan/plan.h"

/* The CUDA source of p's kernels (emit.h), made once and kept with p. */
const char *gpu_plan_source(Plan *p);

/* How many launches k takes: the functions <name>_a, _b, ... when more
   than one, else <name>; none for PK_CHECK. */
int gpu_kernel_launches(const PlanKernel *k);

/* Threads per block, and elements per thread in a PK_SCAN tile: macros,
   because emit.c writes them into the CUDA source's prelude as text. */
#define GPU_BLOCK 256
#define GPU_SCAN_ITEMS 16
#define GPU_SCAN_TILE (GPU_BLOCK * GPU_SCAN_ITEMS)
/* Blocks of a PK_REDUCE's first launch, at most. */
enum { GPU_REDUCE_GRID = 1024 };

#endif
