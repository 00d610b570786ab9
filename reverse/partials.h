/* partials.h: the scalar partial derivatives of every builtin operator, in
   one table (the paper's ∂op1, ∂1 op2, ∂2 op2). Non-smooth and partial
   functions follow the conventions of AD systems (LANGUAGE.md section 5):
   the derivative of the branch the value came from; floor has 0. */
#ifndef UNA_PARTIALS_H
#define UNA_PARTIALS_H

#include "../frontend/ir/term.h"

/* True when the table has p's partial derivatives. Every P_SCALAR1 and
   P_SCALAR2 builtin must have them (tests/reverse/test_partials.c). */
bool rev_has_partials(Prim p);

/* The term for ∂_i p(args) (i 0-based, args the operands: 1 or 2 terms of
   type R, used possibly several times, so pass variables or constants).
   The result has type R. */
Term *rev_partial(Span s, Prim p, int i, Term **args);

#endif
