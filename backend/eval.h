/* eval.h: the CPU interpreter: evaluates checked Terms in a flat frame of
   Values (one slot per Sym, Sym.slot). Array builtins run a whole array at a
   time (array_ops.h); run-time errors are raised as located FeErrors. */
#ifndef UNA_EVAL_H
#define UNA_EVAL_H

#include "value.h"
#include "../frontend/term.h"

/* Calls the checked function d with d->nparams arguments (args may be NULL
   when there are none) in a fresh frame of d->nslots Values; returns its
   result. Raises FeError on a run-time error (located at the failing
   builtin) or when interrupted. */
Value cpu_call(const Def *d, const Value *args);

/* Evaluates the checked term t in frame (the enclosing Def's frame, with
   the slots of every variable in scope set). */
Value cpu_eval(const Term *t, Value *frame);

#endif
