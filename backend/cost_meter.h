/* cost_meter.h: the evaluator's cost meter: counts MOVES, ADDS, MULTS and
   NLOPS while a program runs, as the paper's figure 11 defines the cost of
   each construct (the rules, extended to all of Una, are written out in
   optimizer/cost.h). Deterministic: the counts depend only on the program
   and its arguments, never on the evaluation path (the meter turns the
   monoid loops and block kernels off, so every element runs on the generic
   path and is counted there) or on timing.

   Off by default; when off, the evaluator pays one predictable branch per
   node and per array builtin, nothing per element. */
#ifndef UNA_COST_METER_H
#define UNA_COST_METER_H

#include <stdint.h>

#include "value.h"
#include "../frontend/ir/term.h"

/* A cost vector (MOVES, ADDS, MULTS, NLOPS). */
typedef struct CpuCost {
  uint64_t moves, adds, mults, nlops;
} CpuCost;

/* Adds t's own cost (not its subterms') to *c: called by cpu_eval for
   every node it evaluates while the meter runs (the context's meter,
   exec.h). Array builtins count in cpu_meter_array instead, once their
   length is known. */
void cpu_meter_node(CpuCost *c, const Term *t);

/* Adds the array builtin t's own cost to *c, n being the length its cost
   depends on (the input's length; the output's for iota, replicate, rand
   and load). Called by array_ops.c while the meter runs. */
void cpu_meter_array(CpuCost *c, const Term *t, size_t n);


#endif
