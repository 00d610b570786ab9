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

/* True while the meter runs (read by the evaluator's hooks). */
extern bool cpu_metering;

/* The counts accumulated since the meter was last started. */
extern CpuCost cpu_meter;

/* Counts t's own cost (not its subterms'): called by cpu_eval for every
   node it evaluates while the meter runs. Array builtins count in
   cpu_meter_array instead, once their length is known. */
void cpu_meter_node(const Term *t);

/* Counts the array builtin t's own cost, n being the length its cost
   depends on (the input's length; the output's for iota, replicate, rand
   and load). Called by array_ops.c while the meter runs. */
void cpu_meter_array(const Term *t, size_t n);

/* Evaluates d with args (as cpu_call) under the meter, started from zero,
   and stores the cost in *cost. The meter is stopped before an error is
   raised again, so a failing evaluation leaves it off. Does not nest. */
Value cpu_metered_call(const Def *d, const Value *args, CpuCost *cost);

#endif
