/* unf_path.c: the UNF path of reverse mode (paths.h): a term is taken to
   Source UNF (figure 9), differentiated there (D_rho, figure 8) and taken
   back to a target term (UNF^-1, figure 10), which is applied to
   (0_Gamma, 1) with the projection continuation Y of section 3.3. */
#include "paths.h"
#include "d_rho.h"
#include "grad.h"
#include "unf_grad.h"

/* ∇ of lambda bodies and branches, on this same path. */
static Term *nabla_unf(Sym **ctx, int n, const Term *body, void *ud) {
  (void)ud;
  return rev_nabla(ctx, n, body, REV_UNF);
}

/* The gradient through UNF; values: Y and the last continuation as
   lambdas in the output (see rev_unf_to_term_grad). */
static Term *gradient(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body, RevOut out) {
  ASSERT(fe_type_eq(body->type, fe_ty_real()));
  Unf *src = unf_of_term(ctx, n, body);
  Unf *d = rev_d_rho(src);
  return rev_unf_to_term_grad(d, ctx, n, wrt, nwrt, out, nabla_unf, NULL);
}

Term *rev_unf_gradient(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body) {
  return gradient(ctx, n, wrt, nwrt, body, REV_OUT_APPLIED);
}

Term *rev_unf_value_and_gradient(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body) {
  return gradient(ctx, n, wrt, nwrt, body, REV_OUT_VALUE);
}

Term *rev_unf_gradient_top(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body) {
  return gradient(ctx, n, wrt, nwrt, body, REV_OUT_VALUES);
}
