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
   gradient when nwrt == 1). On the UNF path the calls of small functions
   are inlined and those of large ones kept: the gradient calls f's callee
   g and vjp_g (rev_vjp), each derived once (modular differentiation); the
   direct path inlines every call. Raises a located
   FeError for what cannot be differentiated (scans and shifts, arrays of
   tuples or nested arrays under grad, a lambda parameter or accumulator
   that is not R), naming the construct. */
Def *rev_grad(const Def *f, const int *wrt, int nwrt, RevPath path);

/* value_and_grad_NAME: (f params, the gradient), both from one forward
   pass (the UNF path's: the value is that of the pass the reverse pass
   continues). Built once per (f, wrt). Raises like rev_grad. */
Def *rev_value_and_grad(const Def *f, const int *wrt, int nwrt);

/* vjp_NAME: f's parameters followed by a cotangent c of f's result
   type, returning the cotangents of the parameters wrt[0..nwrt) (a tuple,
   the single one when nwrt == 1): ∇ of <c, f params>, one reverse pass.
   Built once per (f, wrt, path); the gradients of functions that call f
   call it. Raises like rev_grad. */
Def *rev_vjp(const Def *f, const int *wrt, int nwrt, RevPath path);

/* Which calls the UNF path keeps (frontend/inline.h): those of
   functions larger than a limit whose parameters and result have
   cotangents. */
struct FeInlinePolicy;
const struct FeInlinePolicy *rev_inline_policy(void);

/* Whether v is a vjp Def that rev_vjp built (or an optimized copy of
   one: Def.vjp_of), and of which function and parameters (*f, *wrt,
   *nwrt). */
bool rev_vjp_source(const Def *v, const Def **f, const int **wrt, int *nwrt);

/* The name of a derived function: OP_NAME when wrt is every parameter of
   f that has reals, in order; else OP_NAME_wrt_P1_P2 after the
   parameters named (so that the derived functions of one f differ). */
const char *rev_derived_name(const char *op, const Def *f, const int *wrt, int nwrt);

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

/* For the stages printed as a definition (source, target, direct): the
   name it is printed with, the Def whose parameters it has and its body
   (what rev_show prints, for other printers: :show STAGE f --dot); false
   for the UNF stages. */
bool rev_show_def(const Def *f, const int *wrt, int nwrt, const char *stage, const char **name, Def **like,
                  Term **body);

#endif
