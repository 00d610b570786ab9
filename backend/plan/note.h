/* note.h: the execution plan's decisions about one node of the host
   program (Term.note, see plan.h), all that the engines read while they
   run: this header needs nothing else, so the engine's files that read
   notes (eval.c, array_ops.c, kernel.c, siblings.c, the GPU's launches)
   do not depend on the planner, which depends on them. */
#ifndef UNA_PLAN_NOTE_H
#define UNA_PLAN_NOTE_H

#include <stdbool.h>

struct CpuKernel;      /* backend/kernel.h */
struct PlanKernel;     /* plan.h */
struct CpuSiblingPlan; /* backend/siblings.h */
struct Term;           /* frontend/ir/term.h */

/* A map that computes a matrix product (backend/plan/matrix.c decides,
   backend/blas.c runs it with BLAS on the CPU). The map is
   `map (p. BODY) X` over the rows of X : [[R]], and BODY the dot product
   of p with
   - GEMV (BODY : R): a vector v that does not depend on p: the result is
     the [R] X v (cblas_dgemv);
   - GEMM (BODY : [R], a map over the rows q of a matrix Y that does not
     depend on p): the result is the [[R]] X Y^T, element (i, j) the
     dot product of row i of X and row j of Y (cblas_dgemm, Y transposed).
   `dot` is any way of writing reduce (+) 0 (map2 (*) a b), through calls
   (the prelude's dot and sum, or the user's own).
   - OUTER: the map is `map (p. map (q. p * q) v) X` (or q * p) over the
     reals of X : [R], v a variable or global [R]: the [[R]] whose element (i, j) is
     X[i] * v[j], an outer product (a gradient's `2 y x^T`), made by one
     loop over its rows on the CPU's threads (backend/outer.c), with the
     bits of the map as written. */
typedef enum { PLAN_GEMV, PLAN_GEMM, PLAN_OUTER } PlanMatrixKind;
typedef struct PlanMatrix {
  PlanMatrixKind kind;
  int id;                    /* b<id> in the printed plan */
  bool swapped;              /* OUTER: the product is written q * p */
  const struct Term *other;  /* v (GEMV, OUTER) or Y (GEMM): a term of the map's
                                body, free of p, evaluated in the map's
                                frame once X has a row */
  const struct Term *inner;  /* GEMM: the inner map when it is written in
                                the body itself (not in a called Def), or
                                NULL; the planner gives it no product of
                                its own */
  const struct Term *let;    /* GEMM: the let whose body is the map, as in
                                the prelude's matmul, `let y = transpose B
                                in map ... X`, when Y is y, read nowhere
                                else, and B and X are variables; or NULL.
                                Its right-hand side is not evaluated there
                                (its note says deferred): BLAS reads B as it
                                is, and the map as written evaluates it
                                first (backend/blas.h) */
  const struct Term *untransposed; /* B, with let; GEMM: also when Y is
                                      written `transpose B` (B a variable)
                                      in the map: BLAS reads B, and the
                                      transpose is computed only by the map
                                      as written */
  bool x_let;                /* GEMV: the let is `let t = transpose B in
                                map (p. dot p v) t`, or the map is written
                                map (p. dot p v) (transpose B) with B a
                                variable; X itself transposed (a
                                gradient of matvec): BLAS computes B^T v
                                from B (cblas_dgemv transposed), and X is
                                computed only for the map as written */
} PlanMatrix;

/* The decisions about one node of the host program. */
typedef struct PlanNote {
  const struct CpuKernel *k;          /* T_LAM: its scalar program, or NULL */
  const struct CpuKernel *step;       /* T_LAM of a loop (LOOP_FOR, LOOP_WHILE):
                                         its program over the state's reals
                                         (kernel.h: cpu_kernel_compile_step),
                                         or NULL */
  const struct CpuKernel *indexed;    /* T_LAM of a map3 over three array
                                         variables: its program over the
                                         index, reading them (kernel.h:
                                         cpu_kernel_compile_map3), or NULL */
  const struct PlanKernel *kernel;    /* array T_PRIM: its kernel, or NULL */
  bool fused;                         /* map/map2 T_PRIM: computed inside
                                         the kernel that reads it */
  bool scan_map;                      /* map2 T_PRIM: one argument a scan
                                         (or a shifted one) computed into
                                         the result */
  const struct CpuSiblingPlan *group; /* T_LET: the sibling group it
                                         starts; T_TUPLE: its items' */
  bool in_place;                      /* reduce_by_index T_PRIM: its
                                         destination is a fresh array
                                         that nothing else reads, so it
                                         is updated in place */
  int over;                           /* map, map2 T_PRIM with a kernel: its array
                                         (1 or 2) that no one else holds, which
                                         its kernel may write its result over,
                                         element after element (array_ops.c's
                                         map_arrays); 0 for none */
  const struct Term *state_map;       /* LOOP_FOR, LOOP_WHILE T_PRIM whose state is
                                         an [R] read once in its body, by the map
                                         or map2 that is the body's value, as its
                                         first array: that map may write each
                                         iteration's state in place of the last
                                         (loop_ops.c, array_ops.c's map_arrays) */
  const PlanMatrix *matrix;           /* map T_PRIM: a matrix product */
  const struct Term *batch;           /* map T_PRIM over rows: a
                                         matrix-vector product M p in its
                                         function's lets (M a variable from
                                         outside, p the parameter), which
                                         array_ops.c computes for all the
                                         rows at once, as one matrix
                                         product, when the shapes let no
                                         element's product raise (Exec.batch) */
  bool release;                       /* T_LET of a map's fresh [R] that its body
                                         reads only by consuming its elements:
                                         dead once the body has its value, its
                                         buffer is given back to the allocator
                                         then (plan/release.c, eval.c); LOOP_FOR,
                                         LOOP_WHILE T_PRIM: each state but the
                                         first given back once the next is made
                                         (loop_ops.c) */
  bool deferred;                      /* T_LET: its right-hand side is left
                                         to the matrix product of its body
                                         (PlanMatrix.let) */
} PlanNote;

#endif
