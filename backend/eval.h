/* eval.h: the CPU interpreter: evaluates checked and target Terms (the
   latter with lambdas as closure values and applications, T_APP) in a flat
   frame of Values (one slot per Sym, Sym.slot). T_GRAD nodes are expanded
   into calls before evaluation (derive.h's deriv_expand). Array builtins run a whole array at a
   time (array_ops.h); run-time errors are raised as located FeErrors. */
#ifndef UNA_EVAL_H
#define UNA_EVAL_H

#include "exec.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* Calls the function d with d->nparams arguments (args may be NULL
   when there are none) in a fresh frame of d->nslots Values; returns its
   result. Raises FeError on a run-time error (located at the failing
   builtin) or when interrupted. Runs in cpu_exec_default (exec.h). */
Value cpu_call(const Def *d, const Value *args);

/* cpu_call in the context ex (which the whole evaluation gets). */
Value cpu_call_in(const Exec *ex, const Def *d, const Value *args);

/* Evaluates the term t in frame (the enclosing Def's frame, with
   the slots of every variable in scope set). */
Value cpu_eval(const Exec *ex, const Term *t, Value *frame);

#endif
