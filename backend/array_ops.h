/* array_ops.h: the array builtins on the CPU: map, map2, reduce, foldl,
   scanl, scanr (each with a dedicated loop for the builtin monoids + * max
   min, the block kernel of kernel.h, and the generic per-element path),
   shift1L/shift1R (views), length, iota, replicate, rand, load, save;
   and, in the files named below, indexing, loops and reshaping.
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

/* The index i into an array of length len, checked: an integer in
   0..len-1, else the located error of LANGUAGE.md section 4 at s. */
size_t cpu_index_arg(Span s, double i, size_t len);
/* Raises that error for the index i into an array of length len (an
   FeFaultFn: compiled kernels record it with fe_fault). */
_Noreturn void cpu_bad_index(Span s, double i, double len);

/* The builtins of cpu_array_prim implemented beside array_ops.c:
   index, slice, reduce_by_index (index_ops.c); the loops (loop_ops.c);
   transpose, concat, zip, unzip, map3, stop_gradient of a non-R
   (shape_ops.c). */
Value cpu_index_prim(const Exec *ex, const Term *t, Value *frame);
Value cpu_loop_prim(const Exec *ex, const Term *t, Value *frame);
Value cpu_shape_prim(const Exec *ex, const Term *t, Value *frame);
/* a[i:j] (the SLICE term t), a view of a's elements i..j-1 after the
   checks of LANGUAGE.md section 4; fetch: a's elements brought to the
   host first (the GPU path leaves a device array where it is). */
Value cpu_slice(const Exec *ex, const Term *t, Value *frame, bool fetch);
/* The arrays a concat (or a tree of concats) joins, evaluated left to
   right as the CPU's concat evaluates them: *n of them, each brought to
   the host when fetch is set (else a device array stays where it is). */
Array **cpu_concat_leaves(const Exec *ex, const Term *t, Value *frame, bool fetch, int *n);
/* The concat t's result made of its n leaves (host arrays), each element
   copied once. */
Array *cpu_concat_join(const Term *t, Array *const *leaves, int n);

#endif
