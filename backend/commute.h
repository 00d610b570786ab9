/* commute.h: whether a two-parameter scalar kernel is symmetric in its
   parameters, so that a reduce may combine its elements out of order
   (array_ops.c's lanes, the GPU's strided folds). reduce's contract is
   associativity only: an operator that is not known to commute is folded
   in element order (any bracketing, never a permutation). */
#ifndef UNA_COMMUTE_H
#define UNA_COMMUTE_H

#include "kernel.h"

/* True when swapping k's two parameters gives the same program: the
   result's expression, with the operands of the builtins that prims.def
   marks LAW_COMM (+ * == != && || max min) in a canonical order, is the
   same either way (max and min commute as reals:
   the sign of a zero result may change, as with the builtin monoids). False when that cannot be
   shown (the operator may still commute: `if x < y then x else y`). */
bool cpu_kernel_commutes(const CpuKernel *k);

#endif
