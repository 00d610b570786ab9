/* blas.h: the matrix products that the execution plan recognized
   (backend/plan/note.h: PlanMatrix), run with BLAS (OpenBLAS's
   cblas_dgemv and cblas_dgemm) on the CPU.

   The rows are passed to BLAS in place when they are consecutive views of
   one buffer (an n-D load, a transpose, a matrix product's result), else
   gathered into one buffer first. The work is cut into chunks of whole
   64-row blocks that depend only on the matrices' sizes, and each chunk
   is one single-threaded BLAS call on Una's threads (parallel.h), so the
   bits do not depend on the number of threads; BLAS sums in its own
   order, so they may differ in the last bits from the map as written
   (docs/cpu.md). */
#ifndef UNA_BLAS_H
#define UNA_BLAS_H

#include "exec.h"
#include "plan/note.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* Whether this build calls BLAS (the GPU machine's static bundle does not:
   its matrix products run as written on the CPU; on the GPU, cuBLAS runs
   them when it loads, exec.h's blas). */
bool cpu_blas_available(void);

/* One product, row-major: c = a b (GEMV, b the vector `vec`; trans: a is
   k rows of m and c = a^T vec) or c = a b^T (GEMM, a of m rows and b of n
   rows, all of k elements; b_kn: b is k rows of n and c = a b). a and b
   are host buffers (value.h: val_rows_flat); vec is an array that may
   live on the device. */
typedef struct CpuBlasJob {
  PlanMatrixKind kind;
  const double *a, *b;
  Array *arows, *brows; /* the [[R]]s a and b are the rows of: a is their
                           remembered rows when it is their rows_flat
                           (value.h), else a copy */
  Array *vec;
  size_t m, n, k;
  bool b_kn, trans;
} CpuBlasJob;

/* The map t, whose note is a matrix product, over the rows x (its
   evaluated array) in frame, computed with BLAS into *out: true when it
   was; false when the map must run as written instead: on the GPU, under
   the cost meter or with the kernels off (exec.h), without BLAS, when
   a dimension is 0, or when the lengths do not agree (the map as written
   then raises map2's located error). */
bool cpu_blas_map(const Exec *ex, const Term *t, Value *frame, Array *x, Value *out);

/* Before the map t, whose note is a matrix product, runs as written
   (cpu_blas_map returned false): the let of a transpose that the plan left
   to the product (note.h: PlanMatrix.let), evaluated into its slot. */
void cpu_blas_as_written(const Exec *ex, const Term *t, Value *frame);

/* The products of a map's rows with a matrix m (Exec.batch): the
   row-major n x r reals whose row i is m a[i], for a's n rows and m's r
   rows, all of one length k > 0 (a and m laid out flat, value.h); NULL
   when they are not (ragged, another length, empty) or there is no BLAS. */
Array *cpu_blas_rows_times(const Exec *ex, Array *a, Array *m, Span s);

/* How many products cpu_blas_map has computed in this process (the tests
   read it to see which path ran). */
size_t cpu_blas_products(void);

#endif
