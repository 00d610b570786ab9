/* direct.h: figure 5's direct reverse-mode transform D_{Gamma;Y} (Term ->
   Term with continuations, no UNF), with a choice of context discipline.
   rev_direct_gradient (paths.h) is the live-context form; the tests also
   run the paper's dense form and hold the two against each other. */
#ifndef UNA_DIRECT_H
#define UNA_DIRECT_H

#include "../frontend/ir/term.h"

typedef enum {
  /* Gamma of each continuation = the variables that are live there (used
     later and able to carry a gradient): a straight-line program of n
     lets gives O(n) continuation arguments in all. The default. */
  REV_DIRECT_LIVE,
  /* Gamma = every ground variable in scope, exactly as figure 5 and
     example 3.1 write it (quadratic in the number of lets): for printing
     the paper's expansion and for cross-checks. */
  REV_DIRECT_DENSE,
} RevDirectMode;

/* rev_direct_gradient (paths.h) in the given mode: pi_2 D(body)(0, 1) with
   Y the projection continuation onto ctx[wrt[0..nwrt)), a target term of
   type (T_wrt0, ..., T_wrtk) (the single type when nwrt == 1) in which the
   ctx variables are free. Raises a located FeError for what cannot be
   differentiated ("grad: scanl is not supported under grad yet"). */
Term *rev_direct_gradient_mode(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body,
                               RevDirectMode mode);

#endif
