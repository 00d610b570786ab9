/* siblings.h: sibling fusion on the CPU. A chain of lets whose right-hand
   sides are independent maps, map2s and reduces (of arrays or of inline
   maps) over arrays of one length, possibly ending in a tuple that holds
   more of them (or such a tuple alone), runs as one pass over the arrays
   (over the indices, one kernel reading the arrays at them, where a
   sibling maps over `iota n` of the same length): each block of elements
   is read once and every sibling computes its part of it while it is in
   the cache. The gradient of a loss over n inputs is typically such a
   chain (one reduce or map per parameter, all over the same data), which
   unfused reads the data once per parameter.

   Each sibling computes exactly what it computes alone (the same kernel,
   blocks and reduce bracketing, so the same bits); only the order of the
   work changes. A group forms only where that is unobservable: every
   array is a variable, no sibling reads another's variable, and every
   lambda is a kernel (which cannot raise once bound). Anything else at run
   time (lengths that differ, an empty or boxed array, a kernel that does
   not bind) leaves the chain to the ordinary evaluation, which raises what
   it must. */
#ifndef UNA_SIBLINGS_H
#define UNA_SIBLINGS_H

#include "exec.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* Whether rhs, the right-hand side of a let, may start a group (a cheap
   test before the group's plan is made). */
bool cpu_sibling_candidate(const Term *rhs);

/* The group that starts at the T_LET t, or of the T_TUPLE t's items, or
   NULL when none does (the
   execution plan's decision, backend/plan/lower.c: the lambdas of t's
   chain must have their scalar programs by then). */
typedef struct CpuSiblingPlan CpuSiblingPlan;
const CpuSiblingPlan *cpu_sibling_plan(const Term *t);

/* The group's siblings in words, for the plan's printer, each variable
   named as name(ud, x) names it. */
typedef Sym *(*CpuSymName)(void *ud, const Sym *x);
char *cpu_sibling_plan_str(const CpuSiblingPlan *p, CpuSymName name, void *ud);

/* Runs the group that the plan's note on the T_LET (or T_TUPLE) *t names,
   if any: its variables are then set in frame and *t is the rest of the
   chain, or, when the group took the chain's closing tuple, *result is the
   chain's value and the result is true. With no group, or one that cannot
   run, *t is unchanged and the result false. */
bool cpu_siblings(const Exec *ex, const Term **t, Value *frame, Value *result);

#endif
