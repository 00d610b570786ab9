/* scan_map.h: scans over reals, by chunks on all cores where their
   operator allows, and a map2 one of whose arrays (or both) is a scan, or
   a shift of one, fused with it: the scan is computed into the map2's
   result array and the map2's lambda is applied there in place, so no
   scan takes an array of its own. ∇prod, map2 (*) (shift1L (scanr (*) 1
   a)) (shift1R (scanl (*) 1 a)), is two passes over the input and the
   result, as in hand-written code: a backward pass writes the suffix
   products into the result, a forward pass multiplies in the prefix
   products; at its peak it holds the input and the result only.

   The bracketing of a scan whose operator f is a builtin monoid (x + y,
   x * y, max, min, in either order), with input X of n elements and
   initial value v, is this on every CPU path (monoid loops, kernels, the
   generic per-element path; fused or not), so all give the same bits:

   - below CPU_PAR_MIN elements (parallel.h), the sequential scan of the
     definition (scanl: E[0] = v, E[i+1] = f(E[i], X[i]); scanr: E[n] = v,
     E[i] = f(X[i], E[i+1]));
   - from CPU_PAR_MIN elements on, X is cut into the CPU_CHUNKS chunks of
     cpu_chunk_bounds (whole blocks; they depend on n only). Each chunk's
     total T_c: the chunk cut into segments of CPU_SCAN_SEG elements from
     its start, each reduced in CPU_BLOCK lanes (lane j starts as the
     segment's element j, element i is folded into lane i mod CPU_BLOCK by
     lane = f(lane, element), the lanes then folded left to right), the
     segments' results folded left to right. scanl: chunk 0 is scanned
     sequentially from v; chunk c > 0 is scanned from its first element
     alone (l = X[lo], then l = f(l, X[i])) and each of its results l is
     stored as f(C_c, l), with the carry C_1 = f(v, T_0), C_(c+1) = f(C_c,
     T_c). scanr mirrors it: the last chunk is scanned sequentially from
     v; chunk c < CPU_CHUNKS-1 from its last element alone (r = X[hi-1],
     then r = f(X[i], r)), each result stored as f(r, D_c), with D_(last-1)
     = f(T_last, v), D_(c-1) = f(T_c, D_c).

   The chunks run on all cores, so the bits never depend on the number of
   threads. Any other operator scans sequentially. */
#ifndef UNA_SCAN_MAP_H
#define UNA_SCAN_MAP_H

#include "array_int.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* Elements per segment of a chunk's total (above). */
#define CPU_SCAN_SEG (64 * CPU_BLOCK)

typedef enum { CPU_NO_SHIFT, CPU_SHIFT1L, CPU_SHIFT1R } CpuShift;

/* One array argument of a fused map2, or a scan alone: a plain array, or
   scanl/scanr of an array of reals (under a shift or not). */
typedef struct CpuScanArg {
  bool scan;              /* false: a plain array, x holds the map2's m elements */
  bool right;             /* scanr (else scanl) */
  CpuShift shift;         /* the map2 reads shift1L/shift1R of the scan */
  const double *x;        /* the scan's input */
  size_t n;               /* its length: the scan has n + 1 elements */
  double v;               /* the initial value */
  const MonoidFns *m;     /* the operator: a builtin monoid's loops, or */
  const CpuKernelRun *op; /* ... a bound kernel (cloned for each thread) */
  bool monoid;            /* the operator is a builtin monoid (always so with m): bracket by chunks */
  /* cpu_scan only: the scan's elements are gmap(x[i], y[i]) (y NULL for
     a one-parameter map), computed a block at a time, never stored */
  const CpuKernelRun *gmap;
  const double *y;
} CpuScanArg;

/* The number of elements the map2 reads from a: m for a plain array, n or
   n + 1 for a scan under a shift or not. */
size_t cpu_scan_arg_len(const CpuScanArg *a, size_t m);

/* out[q] = g(A[q], B[q]) for q < m, where A and B are the elements of a
   and b (at least one a scan; cpu_scan_arg_len of each is m), bracketed as
   above; g is a bound two-parameter kernel giving reals, gm its loops when
   it is a builtin monoid (cpu_monoid_loops; else NULL). No array but out
   is written. Two passes, each on all cores where the chunks allow: the
   first writes one scan's elements into out in its direction (a scanr
   where there is one), the second computes the other argument's (the
   other scan in its direction, or a plain array) and applies g in place.
   Raises only "interrupted" (at s). */
void cpu_scan_map2(int nthreads, const CpuScanArg *a, const CpuScanArg *b, const CpuKernelRun *g,
                   const MonoidFns *gm, double *out, size_t m, Span s);

/* The n + 1 elements of the scan s (no shift) into out. Both run their
   passes on nthreads threads (the bits do not depend on it). */
void cpu_scan(int nthreads, const CpuScanArg *s, double *out, Span sp);

/* Whether the map2 term t may run this way, as far as its terms tell (the
   execution plan's decision, backend/plan/lower.c: its lambdas must have
   their programs): an array argument (or both) is scanl/scanr (possibly
   under shift1L/shift1R) of an array that is not an inline map, and the
   map2's lambda is a kernel giving reals. */
bool cpu_scan_map_candidate(const Term *t);

/* Evaluates the map2 term t this way when its plan's note says so and,
   at run time, the scans' operators have a monoid loop or a kernel and
   the kernels bind. Returns false (having evaluated nothing) otherwise.
   Errors are those of the ordinary evaluation, raised in the same
   order. */
bool cpu_map2_of_scan(const Exec *ex, const Term *t, Value *frame, Value *result);

#endif
