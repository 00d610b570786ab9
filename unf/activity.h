/* activity.h: which subterms of a term depend on the variables being
   differentiated (activity analysis). A subterm is active when one of its
   free variables is active: a variable of the context, or a let-bound
   variable whose value is active, except the builtins that carry no
   derivative (prims.def's G_CONST: length, iota, stop_gradient, ...),
   which are constants whatever their arguments. Everything else (constants, the
   parameters not named after `wrt`, data computed from them only,
   globals) carries no derivative: UNF takes it whole as a constant
   (cst), whatever its type, and the transpose Jacobians skip it. Lambda
   parameters count as inactive here: lambda bodies are differentiated
   separately, in their own context. */
#ifndef UNA_UNF_ACTIVITY_H
#define UNA_UNF_ACTIVITY_H

#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/term.h"

typedef struct UnfActivity {
  PtrMap terms; /* active subterms */
  PtrMap syms;  /* active variables */
} UnfActivity;

/* The activity of the subterms of body with ctx[0..n) active. One pass,
   linear in the term. */
UnfActivity *unf_activity(const Term *body, Sym **ctx, int n);
bool unf_term_active(const UnfActivity *a, const Term *t);
bool unf_sym_active(const UnfActivity *a, const Sym *x);

#endif
