/* plan.h: which CUDA kernels evaluating a term on the GPU launches, decided
   from the term alone (so that `:cuda e` can print them without a GPU).

   Every array builtin of a term (and of the functions it calls, and of the
   lambda bodies in it) whose arrays are [R] and whose lambdas compile to
   scalar kernels (backend/kernel.h) gets one GpuKernel:

     map, map2         GK_MAP      out[i] = src(i)
     reduce f v A      GK_REDUCE   block partials, then one block folds
                                   them and v (any bracketing: reduce's
                                   operator is associative by contract; in
                                   element order unless it commutes,
                                   backend/commute.h)
     scanl/scanr f v A GK_SCAN     reduce-then-scan over tiles, when f is a
                                   builtin monoid (+ * max min)
                       GK_SCAN_SEQ one thread, for any other operator
     foldl f v A       GK_FOLDL    one thread
     iota, replicate   GK_IOTA, GK_REPLICATE, GK_RAND
     and rand
     let x = map/map2 ... in e, x unused
                       GK_CHECK    no launch: the optimizer keeps such a
                                   let only for the errors it may raise, so
                                   its leaves are evaluated and its lengths
                                   checked, and no element is computed

   The elements of a map, reduce, scan or fold are a GpuSrc: a tree whose
   inner nodes are the maps and map2s written inline in the argument
   (fused: never stored) and whose leaves are the arrays evaluated on their
   own (a variable, a shift, any other builtin). Shifts are views and need
   no kernel; length, load, save and everything else run on the host.

   Every kernel has the same parameter list (the launch code builds it the
   same way for all):
     (double *out, const double *aux, long long n, double v,
      const double *L0, ..., const double *L(nleaves-1),
      double <inputs of fns[0]>, ..., double <inputs of fns[nfns-1]>)
   where the inputs of a function are the input vregs of its scalar kernel
   (free variables and hoisted parts, cpu_kernel_vreg_kind CPU_VR_INPUT)
   that its code reads, in increasing vreg order. */
#ifndef UNA_CUDA_PLAN_H
#define UNA_CUDA_PLAN_H

#include "../../frontend/ir/ptrmap.h"
#include "../../frontend/ir/term.h"
#include "../array_ops.h"
#include "../kernel.h"

typedef enum {
  GK_MAP,
  GK_REDUCE,
  GK_SCAN,
  GK_SCAN_SEQ,
  GK_FOLDL,
  GK_IOTA,
  GK_REPLICATE,
  GK_RAND,
  GK_CHECK /* a dead let's map/map2: leaves evaluated, lengths checked, nothing launched */
} GpuKernelKind;

/* One lambda, compiled to the __device__ function una_f<id>. */
typedef struct GpuFn {
  const Term *lam;
  const CpuKernel *k;
  int id;
  int ninputs;
  int *inputs; /* vregs */
} GpuFn;

typedef struct GpuSrc GpuSrc;
struct GpuSrc {
  bool leaf;
  const Term *term; /* leaf: the array term; node: the map/map2 term */
  int index;        /* leaf: its place among the kernel's leaves */
  const GpuFn *fn;  /* node: the mapped function */
  GpuSrc *a, *b;    /* node: its arrays (b NULL for map) */
};

typedef struct GpuKernel {
  GpuKernelKind kind;
  const Term *term; /* the builtin it evaluates */
  int id;
  const char *name; /* una_map_3; GK_REDUCE and GK_SCAN add _a, _b, _c per launch */
  GpuSrc *src;      /* MAP, REDUCE, SCAN, SCAN_SEQ, FOLDL */
  int nleaves;
  GpuSrc **leaves;
  const GpuFn *op;  /* REDUCE, SCAN, SCAN_SEQ, FOLDL */
  CpuMonoid monoid; /* SCAN: which builtin monoid op computes */
  bool right;       /* scanr */
  bool ordered;     /* REDUCE: op may not commute, so each block and thread
                       folds a contiguous run (see emit.c) */
  int nfns;
  const GpuFn **fns; /* the functions whose inputs are parameters, in order */
} GpuKernel;

typedef struct GpuPlan {
  int nkernels;
  GpuKernel **kernels;
  int nfns;
  GpuFn **fns;
  const char *source; /* the translation unit (emit.h) */
  PtrMap index;       /* builtin term -> its GpuKernel (while planning) */
} GpuPlan;

/* The kernels of calling d, in the order of a walk of its body (and of the
   bodies of the functions it calls, each once), with their source. */
GpuPlan *gpu_plan_def(const Def *d);

/* How many launches k makes: the functions <name>_a, _b, ... when more
   than one, else <name>; none for GK_CHECK. */
int gpu_kernel_launches(const GpuKernel *k);

/* Threads per block, and elements per thread in a GK_SCAN tile: macros,
   because emit.c writes them into the CUDA source's prelude as text. */
#define GPU_BLOCK 256
#define GPU_SCAN_ITEMS 16
#define GPU_SCAN_TILE (GPU_BLOCK * GPU_SCAN_ITEMS)
/* Blocks of a GK_REDUCE's first launch, at most. */
enum { GPU_REDUCE_GRID = 1024 };

#endif
