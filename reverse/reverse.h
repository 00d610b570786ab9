/* reverse.h: reverse-mode differentiation, the public face of reverse/.

   Two independent paths compute the same gradients (the paper proves them
   equal, proposition 6.14):
     REV_UNF     source term --UNF--> Source UNF --D_rho--> Target UNF
                 --UNF^-1--> target term        (figures 9, 8, 10)
     REV_DIRECT  figure 5's D_{Gamma;Y}, Term -> Term, no UNF.
   The result of both is a target term: a Una term that may also contain
   lambdas as values (continuations) and applications (T_APP). */
#ifndef UNA_REVERSE_H
#define UNA_REVERSE_H

#include "../frontend/ir/term.h"

typedef enum { REV_UNF, REV_DIRECT } RevPath;

/* The gradient function of f with respect to its parameters wrt[0..nwrt)
   (indexes, in that order; none of type B): a new Def named "grad_NAME"
   with f's parameters returning the gradients as a tuple (the single
   gradient when nwrt == 1). Calls in f are inlined first. Raises a located
   FeError for what cannot be differentiated (scans and shifts, arrays of
   tuples or nested arrays under grad, a lambda parameter or accumulator
   that is not R), naming the construct. */
Def *rev_grad(const Def *f, const int *wrt, int nwrt, RevPath path);

/* ∇ of a term: for a checked term `body` of type R whose free variables
   include ctx[0..n) (ground types: R, tuples, arrays of R), a target term
   of type (T1, ..., Tn) (or T1 when n == 1) computing the partial
   derivatives of body with respect to each ctx variable, at the values
   those variables hold. Other free variables (of type B, or not listed)
   are constants. This is what the transpose Jacobians of map, map2,
   reduce, foldl and if use for the lambda bodies and branches. */
Term *rev_nabla(Sym **ctx, int n, const Term *body, RevPath path);

/* The stages of grad f for ":show STAGE f", as text:
   "source" (the inlined body), "unf" (Source UNF), "dunf" (Target UNF),
   "target" (after UNF^-1), "direct" (figure 5's transform).
   Raises FeError like rev_grad. */
char *rev_show(const Def *f, const int *wrt, int nwrt, const char *stage);

#endif
