/* array_ops.h: the array builtins on the CPU: map, map2, reduce, foldl,
   scanl, scanr (each with a dedicated loop for the builtin monoids + * max
   min, the block kernel of kernel.h, and the generic per-element path),
   shift1L/shift1R (views), length, iota, replicate, rand, load, save. */
#ifndef UNA_ARRAY_OPS_H
#define UNA_ARRAY_OPS_H

#include "exec.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* Evaluates the array builtin PRIM term t (its arguments included) in frame.
   Run-time errors are located at t's span. */
Value cpu_array_prim(const Exec *ex, const Term *t, Value *frame);

/* Raises map2's located error when the lengths la and lb of the map2 term
   t's arrays differ. */
void cpu_check_map2_lengths(const Term *t, size_t la, size_t lb);

/* The size argument n of the iota/replicate/rand term t, checked: a
   non-negative integer whose elements of elem_size bytes can be allocated;
   raises the located error otherwise. */
size_t cpu_size_arg(const Term *t, double n, size_t elem_size);

/* The builtin monoid a two-parameter lambda computes, if any: its body is
   x OP y of its parameters x, y (in either order: *swapped is set when the
   body is y OP x), all of type R, OP a builtin R x R -> R that prims.def
   gives LAW_ASSOC and a unit and that has dedicated loops here: + * max
   min. */
typedef enum { CPU_M_NONE, CPU_M_ADD, CPU_M_MUL, CPU_M_MAX, CPU_M_MIN } CpuMonoid;
CpuMonoid cpu_monoid_of(const Term *lam, bool *swapped);
/* The builtin of monoid m (not CPU_M_NONE): its laws and unit are in
   fe_prims. */
Prim cpu_monoid_prim(CpuMonoid m);

#endif
