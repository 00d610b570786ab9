/* unf_grad.h: UNF^-1 of a differentiated term applied to (0_Gamma, 1): the
   last stage of the UNF path (reverse/unf_grad.c). Internal to reverse/
   (reverse/unf_path.c calls it). */
#ifndef UNA_UNF_GRAD_H
#define UNA_UNF_GRAD_H

#include "jt.h"
#include "../unf/unf.h"

/* UNF^-1 (figure 10) of the Target UNF d = D_rho(UNF(body)),
   D(ctx) |- d : D(ctx, R), applied as pi_2 (UNF^-1 d)(0_ctx, 1) with the
   projection continuation Y (x_i to itself for i in wrt[0..nwrt), to 0
   otherwise). The continuations inside d are used linearly (lemma 5.1),
   so each application of one is beta-reduced as it is generated and
   variables are forward-substituted (the first rules of figure 12): the
   output is linear in the size of d. With values set, Y and the last
   continuation stay functions in the output, which then reads
     let Y = fun (dx1, ..., dxn) -> (dx_wrt...) in
     ...the values...
     let (y, K) = (v, fun (dx1, ..., dxn, z) -> ...; Y (...)) in
     K (0_ctx, 1)
   (closures applied by T_APP); without it they are applied at compile
   time too and the output has no lambda values (used for the gradients
   of lambda bodies, which run per element). nabla (with ud) gives the ∇
   of the lambda bodies and branches that J^T map, map2, reduce, foldl and
   if need. The result has type (T_wrt0, ..., T_wrtk) (the single type
   when nwrt == 1) with ctx free. */
typedef enum {
  REV_OUT_APPLIED, /* the gradient, continuations applied at compile time */
  REV_OUT_VALUES,  /* the gradient, Y and K lambdas in the output */
  REV_OUT_VALUE    /* the same, paired with the value: (y, gradient) */
} RevOut;
Term *rev_unf_to_term_grad(const Unf *d, Sym **ctx, int n, const int *wrt, int nwrt, RevOut out,
                           RevNablaFn nabla, void *ud);

#endif
