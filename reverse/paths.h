/* paths.h: the two differentiation paths behind rev_grad and rev_nabla.
   Each computes, for a checked term body : R (the UNF path takes calls of functions that
   grad_NAME's inlining kept, the direct path none) whose free
   variables include ctx[0..n) (ground types), the gradient restricted to
   the positions wrt[0..nwrt) (indexes into ctx, in that order) through the
   projection continuation Y of section 3.3 (Y sends x_i to itself when i
   is in wrt and to 0 otherwise), i.e. pi_2 D(body)(0, 1) with that Y. The
   result is a target term of type (T_wrt0, ..., T_wrtk) (the single type
   when nwrt == 1) in which the ctx variables are free. */
#ifndef UNA_PATHS_H
#define UNA_PATHS_H

#include "../frontend/ir/term.h"

/* UNF (fig 9) -> D_rho (fig 8) -> UNF^-1 (fig 10): reverse/unf_path.c */
Term *rev_unf_gradient(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body);

/* Figure 5's direct transform D_{Gamma;Y}: reverse/direct.c */
Term *rev_direct_gradient(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body);

/* Raises an internal FeError at a term no source program holds (an
   unexpanded derivative operator, an application): every construct is
   differentiable; grad.c calls it before either path. */
void rev_check_supported(const Term *body, Sym **ctx, int n);

#endif
