/* metered.h: evaluating a function under the cost meter (cost_meter.h
   counts, eval.h evaluates; this file joins them, so that neither needs
   the other). */
#ifndef UNA_METERED_H
#define UNA_METERED_H

#include "cost_meter.h"

/* Evaluates d with args (as cpu_call) in a context with a meter of its
   own, started from zero (exec.h), and stores the cost in *cost, also
   when an error is raised again. */
Value cpu_metered_call(const Def *d, const Value *args, CpuCost *cost);

#endif
