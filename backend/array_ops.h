/* array_ops.h: the array builtins on the CPU: map, map2, reduce, foldl,
   scanl, scanr (each with a dedicated loop for the builtin monoids + * max
   min, the block kernel of kernel.h, and the generic per-element path),
   shift1L/shift1R (views), length, iota, replicate, rand, load, save.
   What they share with scan_map.c and siblings.c is in array_int.h. */
#ifndef UNA_ARRAY_OPS_H
#define UNA_ARRAY_OPS_H

#include "exec.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* Evaluates the array builtin PRIM term t (its arguments included) in frame.
   Run-time errors are located at t's span. */
Value cpu_array_prim(const Exec *ex, const Term *t, Value *frame);

/* The size argument n of the iota/replicate/rand term t, checked: a
   non-negative integer whose elements of elem_size bytes can be allocated;
   raises the located error otherwise. */
size_t cpu_size_arg(const Term *t, double n, size_t elem_size);

#endif
