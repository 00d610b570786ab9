/* program.h: optimizing a Def together with every Def it calls. */
#ifndef UNA_PROGRAM_H
#define UNA_PROGRAM_H

#include "opt.h"

/* d optimized, with its calls retargeted to optimized callees; each Def
   is optimized once (the result is remembered in d->optimized). Returns d
   when o is NULL or disabled. */
Def *opt_optimize_program(Def *d, const OptOptions *o);

/* The optimizer for derived functions (derive.h's DerivOpt.run, with ud
   the OptOptions): d optimized as opt_optimize_program does, enabled even
   when o is not (a derived function must be first-order). */
Def *opt_derived(const Def *d, void *ud);

#endif
