/* jvp.h: forward mode, the tangent transformation of a term (docs/ad.md,
   section 10). Every subterm e that depends on a parameter with a tangent
   becomes a pair of variables, its value and its tangent (a dual number
   for an R, an array of tangents for an array, a tuple for a tuple),
   computed side by side in one pass over the program; subterms that
   depend on no tangent are kept as they are and have the tangent zero,
   which is never built. The cost is a constant factor of the term's own
   (no reverse pass, nothing saved). */
#ifndef UNA_JVP_H
#define UNA_JVP_H

#include "../frontend/ir/term.h"

/* The pair (body, its tangent) for a checked term body whose calls are
   inlined or kept as fwd_jvp_def does: tangents[i] is the tangent of params[i] (a Sym of the same
   type, ground), NULL for a constant. The result has type (T, T) for
   body : T; T must have reals. Raises a located FeError for what has no
   tangent yet (tuples mixing booleans and numbers that depend on a
   tangent, reduce_by_index with another operator than (+), the
   derivative of trigamma). */
Term *fwd_jvp(Sym **params, Sym **tangents, int n, const Term *body);

/* jvp_NAME (jvp_NAME_wrt_P.. when wrt is not all of f's parameters
   with reals): f's parameters followed by the tangents of the parameters
   wrt[0..nwrt) (in that order, each of its parameter's type), returning
   (f args, the tangent of the result). f must hold no derivative
   operator (reverse.h's deriv_expand expands them first). The calls of
   large functions stay calls (reverse.h's rev_inline_policy), of their
   own jvp. Built once per (f, wrt). */
Def *fwd_jvp_def(const Def *f, const int *wrt, int nwrt);

#endif
