/* launch.h: how the CUDA backend runs the kernels of an execution plan
   (backend/plan/plan.h): every plan kernel becomes one __global__
   function, or two or three launched in turn (gpu_kernel_launches).

   Every kernel has the same parameter list (the launch code builds it the
   same way for all):
     (double *out, const double *aux, long long n, double v,
      const double *L0, ..., const double *L(nleaves-1),
      double <inputs of fns[0]>, ..., double <inputs of fns[nfns-1]>,
      <arrays of fns[0]>, ..., <arrays of fns[nfns-1]>,
      unsigned long long *fault)                  (fault: when any fn has arrays)
   where the inputs of a function are the input vregs of its scalar kernel
   (free variables and hoisted parts, cpu_kernel_vreg_kind CPU_VR_INPUT)
   that its code reads, in increasing vreg order (PlanFn.inputs), and its
   arrays the arrays its gathers read (CPU_VR_ARRAY, PlanFn.arrays), each
   passed as (const double *data, long long length). A gather whose index
   is not an integer in bounds records the first such fault in fault[0..4):
   1, the index's bits, the length, and the site: the gathering function's
   id (PlanFn.id) times GPU_SITES plus the gather's vreg (its INDEX term:
   cpu_kernel_index_term); the launch code raises it after the launches. */
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
/* A fault's site: fn id * GPU_SITES + the gather's vreg. */
#define GPU_SITES 65536
/* Whether some function of k gathers (its launches take a fault buffer). */
bool gpu_kernel_gathers(const PlanKernel *k);
/* Blocks of a PK_REDUCE's first launch, at most. */
enum { GPU_REDUCE_GRID = 1024 };

#endif
