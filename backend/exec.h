/* exec.h: the context an evaluation runs in, passed down explicitly from
   the call that starts it (cpu_call_in, gpu_call, cpu_metered_call) to
   every builtin and kernel it reaches. Nothing else decides how a program
   runs: there is no global switch for the device, the meter or the fast
   paths.

   The tree evaluator is reached through ex->eval, so the array builtins,
   the kernels' binding and the sibling groups (array_ops.c, kernel_run.c,
   siblings.c, scan_map.c) evaluate subterms without including eval.h:
   eval.c calls them, they call back through the context; and eval.c
   reaches the GPU's array builtins through it, without including the
   CUDA backend. */
#ifndef UNA_EXEC_H
#define UNA_EXEC_H

#include "parallel.h"
#include "value.h"
#include "../frontend/ir/term.h"

typedef struct Exec Exec;
struct CpuCost;    /* cost_meter.h */
struct GpuLoaded;  /* cuda/gpu_int.h */
struct CpuBlasJob; /* blas.h */

struct Exec {
  /* The tree evaluator: t in frame (eval.c's cpu_eval). */
  Value (*eval)(const Exec *ex, const Term *t, Value *frame);
  /* The array builtins: array_ops.c's on the CPU, the GPU's launches
     (cuda/gpu_ops.c) in the context gpu_call makes. */
  Value (*array_prim)(const Exec *ex, const Term *t, Value *frame);
  /* The monoid loops and the block kernels; a test turns them off to hold
     the fast paths against the generic one. */
  bool monoid, kernel;
  /* While the cost meter runs: where its counts go (cost_meter.h); the
     meter also turns the fast paths off. NULL otherwise. */
  struct CpuCost *meter;
  /* When the array builtins run on the GPU: the loaded kernels of the
     plan being run, by kernel id (cuda/gpu_eval.c); NULL on the CPU. */
  struct GpuLoaded **gpu;
  /* On the GPU, the matrix products' runner (cuBLAS, cuda/gpu_blas.c):
     the product j into a new array of its m x n reals (GEMV: m), or NULL
     when it cannot (the map then runs as written). NULL on the CPU (its
     BLAS is blas.c's) and when the GPU has no cuBLAS. */
  struct Array *(*blas)(const Exec *ex, const struct CpuBlasJob *j, Span s);
  /* The threads a parallel loop uses (1 .. CPU_MAX_THREADS), or 0 for the
     machine's: its cores, or UNA_THREADS (parallel.h). The chunks, and so
     the bits, never depend on it. */
  int threads;
  /* An error raised inside a call goes on with a note naming the call
     ("FILE:LINE:COL: note: called from here" after its message), so that
     it ends with the chain of calls that led to it (the session's re-run
     of a failed item: tracebacks). */
  bool trace_calls;
  /* Where the row a map's function is computing goes (array_ops.c's
     map_arrays, which puts rows of one length in one buffer): the array
     builtin row->term writes its [R] there when it has row->len elements.
     NULL outside such a function. */
  struct CpuRowSlot *row;
  /* The matrix-vector product of a map's function computed for all its
     rows at once (plan/note.h: batch): the product term returns row i of
     the whole product while element i is computed. NULL elsewhere. */
  const struct CpuBatch *batch;
  /* In a loop's body whose state a map may overwrite (plan/note.h:
     state_map): that map, its result of the last iteration, and the
     state when it is that result (which nothing else holds). NULL
     elsewhere. */
  struct CpuLoopOwn *loop_own;
};

/* Exec.loop_own: the map writes into `owned` when it is its array, and
   records each result it allocates in `fresh`. */
typedef struct CpuLoopOwn {
  const struct Term *map;
  struct Array *fresh, *owned;
} CpuLoopOwn;

/* A map's matrix-vector products, all computed (Exec.batch). */
typedef struct CpuBatch {
  const struct Term *term; /* the product M p in the function */
  struct Array *whole;     /* row i: M times the map's row i */
  size_t i, len;           /* the element being computed; M's rows */
} CpuBatch;

/* One row's place in a map's buffer of rows (Exec.row). */
typedef struct CpuRowSlot {
  const struct Term *term; /* the function's result: its tail builtin */
  struct Array *whole;     /* the rows' buffer */
  size_t off, len;         /* the row's elements in it */
  bool used;               /* set when the builtin took the place */
} CpuRowSlot;

/* The threads ex's parallel loops use. */
static inline int cpu_exec_threads(const Exec *ex) {
  return ex->threads > 0 ? cpu_clamp_threads(ex->threads) : cpu_threads();
}

/* The context of a plain evaluation on the CPU: every fast path on, no
   meter, no GPU. A constant. */
extern const Exec cpu_exec_default;

#endif
