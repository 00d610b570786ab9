/* derive.h: the derivative operators of the language (grad, vjp, jvp,
   value_and_grad; LANGUAGE.md section 6) turned into calls of derived
   functions: reverse mode (reverse/) for grad, vjp and value_and_grad,
   forward mode (forward/) for jvp. Nested operators are expanded inside
   out, each derived function optimized before it is inlined into the next
   derivative, so derivatives compose to any depth with no perturbation
   confusion (each operator differentiates a closed function; the free
   variables of a lambda are its extra parameters). */
#ifndef UNA_DERIVE_H
#define UNA_DERIVE_H

#include "../frontend/ir/term.h"

/* How the derived functions are optimized: run(d, ud) returns d
   optimized (first-order: no lambda value, no application left), as the
   driver's optimizer does. */
typedef struct DerivOpt {
  Def *(*run)(const Def *d, void *ud);
  void *ud;
} DerivOpt;

/* Replaces every derivative operator (T_GRAD: grad, vjp, jvp,
   value_and_grad) in d's body by a T_CALL of the derived Def, returning a
   new Def (d itself when it has none). The derived Defs are built once
   per (function, operator, wrt) and optimized with o, so a function that
   calls one can be differentiated in turn (its own operators are
   expanded first, to any depth). The driver runs this on every checked
   item before evaluation; the evaluator never sees T_GRAD. */
Def *deriv_expand(Def *d, const DerivOpt *o);

/* The derived function of op on f with respect to its parameters wrt
   (f's own derivative operators expanded first), optimized with o: for
   grad, grad_f as rev_grad; for vjp, vjp_f taking f's parameters and the
   cotangent c of the result; for jvp, jvp_f taking f's parameters and the
   tangents of wrt, returning (f args, the tangent); value_and_grad_f
   returning (f args, grad_f args). Built once per (f, op, wrt). */
Def *deriv_function(const Def *f, DerivOp op, const int *wrt, int nwrt, const DerivOpt *o);

/* d (a derived Def, optimized) with each kept call's pair in its top-level
   let chain, `let y = g a` ... `vjp_g a c`, split into `let (y, r) = fwd_g
   a` ... `rev_g r c`: g's forward pass runs once, its residuals r passed
   to the reverse part (derive/split.c). d itself when there is none. */
Def *deriv_split_calls(Def *d, const DerivOpt *o);

#endif
