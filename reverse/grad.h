/* grad.h: what grad.c shares with the rest of reverse/ (show.c): the
   preparation of a function for differentiation. */
#ifndef UNA_GRAD_H
#define UNA_GRAD_H

#include "reverse.h"

/* f inlined as the path needs (the UNF path keeps the calls of large
   functions, the direct path inlines all) and checked for what grad supports (parameter
   types, rev_check_supported), raising a located FeError
   otherwise. *ctx gets its non-B parameters (*nctx of them) and
   (*wrt_ctx)[k] the position of parameter wrt[k] in *ctx. */
Def *rev_prepare(const Def *f, RevPath path, const int *wrt, int nwrt, Sym ***ctx, int *nctx,
                 int **wrt_ctx);

/* rev_unf_gradient for a whole function: the same gradient, with the
   projection continuation Y and the continuation of the body kept as
   lambda values in the output, applied as K (0_Gamma, 1) (figure 4's
   pi_2 D(e)(0_Gamma, 1)); the gradients of lambda bodies use
   rev_unf_gradient, which applies them at compile time. */
Term *rev_unf_gradient_top(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body);
/* The same paired with the value of body from the same forward pass:
   (body, gradient). */
Term *rev_unf_value_and_gradient(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body);

#endif
