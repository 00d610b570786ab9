/* jt_map.c: the transpose Jacobian of map (x. e) A (paper appendix A,
   figure 16, with the free variables of e; see jt.h). */
#include "jt_util.h"
#include "../frontend/ir/build.h"

/* With g(a) = ∇_(x, fv...) e at x = a (one ∇ per element), z the
   cotangent of the result (length n) and fv the free variables:
     let W = map (a. g(a)) A in
     ( reduce (+^) 0_fv1 (map2 (t, w. w *^ t.1) W z), ...   -- per fv
       map2 (t, w. w * t.0) W z )                          -- cot A
   i.e. cot A_i = z_i * ∂e/∂x(A_i) and cot fv = sum_i z_i * ∂e/∂fv(A_i).
   Figure 16's map rule has the same shape; its G multiplies Z by the
   gradients before the reduce, as here. */
Term *rev_jt_map(const RevJt *j, const Term *lam, Term *a, Term *z) {
  Span s = j->span;
  const Type *R = fe_ty_real();
  ASSERT(lam->kind == T_LAM && lam->nsyms == 1 && fe_type_eq(lam->syms[0]->type, R));
  ASSERT(fe_type_eq(lam->kids[0]->type, R));
  ASSERT(fe_type_is_real_array(a->type) && fe_type_is_real_array(z->type) && z->kind == T_VAR);
  int ncomp = 1 + j->nfv;
  Term *g = rev_jt_body_grad(j, lam);
  Sym *p = fe_mk_sym("a", R, s);
  Term *w_rhs = fe_mk_map(s, fe_mk_lam(s, 1, &p, rev_jt_paste(s, g, 1, lam->syms, &p)), a);
  Sym *w = fe_mk_sym("W", w_rhs->type, s);
  Term **items = NEW_ARRAY(Term *, ncomp);
  rev_jt_fv_cots(j, w, ncomp, 1, z->sym, items);
  items[j->nfv] = rev_jt_scaled(s, w, ncomp, 0, z->sym);
  return fe_mk_let(s, w, w_rhs, rev_jt_pack(s, ncomp, items));
}
