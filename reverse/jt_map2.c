/* jt_map2.c: the transpose Jacobian of map2 (x, y. e) A B (paper figure
   10, J^T map2, corrected; see jt.h). */
#include "jt_util.h"
#include "../frontend/ir/build.h"

/* With g(a, b) = ∇_(x, y, fv...) e at x = a, y = b (one ∇ per element),
   z the cotangent of the result:
     let W = map2 (a, b. g(a, b)) A B in
     ( reduce (+^) 0_fv1 (map2 (t, w. w *^ t.2) W z), ...   -- per fv
       map2 (t, w. w * t.0) W z,                           -- cot A
       map2 (t, w. w * t.1) W z )                          -- cot B
   i.e. cot A_i = z_i ∂e/∂x(A_i, B_i), cot B_i = z_i ∂e/∂y(A_i, B_i),
   cot fv = sum_i z_i ∂e/∂fv(A_i, B_i). The printed figure 10 substitutes
   only [a/x] in ∂e/∂x and ∂e/∂y (map2 over (A, Z) and (B, Z)), which is
   wrong as soon as ∂e/∂x depends on y (e = x * y); the partials need both
   elements. */
Term *rev_jt_map2(const RevJt *j, const Term *lam, Term *a, Term *b, Term *z) {
  Span s = j->span;
  const Type *R = fe_ty_real();
  ASSERT(lam->kind == T_LAM && lam->nsyms == 2);
  ASSERT(fe_type_eq(lam->syms[0]->type, R) && fe_type_eq(lam->syms[1]->type, R));
  ASSERT(fe_type_eq(lam->kids[0]->type, R));
  ASSERT(fe_type_is_real_array(a->type) && fe_type_is_real_array(b->type));
  ASSERT(fe_type_is_real_array(z->type) && z->kind == T_VAR);
  int ncomp = 2 + j->nfv;
  Term *g = rev_jt_body_grad(j, lam);
  Sym *ps[2] = {fe_mk_sym("a", R, s), fe_mk_sym("b", R, s)};
  Term *w_rhs = rev_checked(fe_mk_map2(s, fe_mk_lam(s, 2, ps, rev_jt_paste(s, g, 2, lam->syms, ps)), a, b));
  Sym *w = fe_mk_sym("W", w_rhs->type, s);
  Term **items = NEW_ARRAY(Term *, ncomp);
  rev_jt_fv_cots(j, w, ncomp, 2, z->sym, items);
  items[j->nfv] = rev_jt_scaled(s, w, ncomp, 0, z->sym);
  items[j->nfv + 1] = rev_jt_scaled(s, w, ncomp, 1, z->sym);
  return fe_mk_let(s, w, w_rhs, rev_jt_pack(s, ncomp, items));
}
