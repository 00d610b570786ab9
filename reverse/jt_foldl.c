/* jt_foldl.c: the transpose Jacobian of the left fold foldl (x, y. e) v A
   (paper appendix A, figure 16, with the free variables of e), shared with
   reduce (jt_reduce.c); see jt.h. */
#include "jt_util.h"
#include "../frontend/ir/build.h"

static Term *var(Span s, Sym *x) { return fe_mk_var(s, x); }

/* The fold: s_0 = v, s_(i+1) = f(s_i, A_i) for i < n, result s_n, with
   f(x, y) = e. Its partials at step i: P_i = ∂e/∂x (s_i, A_i),
   Q_i = ∂e/∂y (s_i, A_i), G_i = ∂e/∂fv (s_i, A_i). The cotangent of s_n
   is z, so that of s_(i+1) is z * S_i with the suffix product
   S_i = P_(i+1) * ... * P_(n-1) (S_(n-1) = 1), and
     cot A_i = z S_i Q_i
     cot v   = z P_0 * ... * P_(n-1)
     cot fv  = sum_i z S_i G_i
   (figure 13's rule for fv is wrong in print: it takes the suffix
   products of the G_i themselves, scanr (x^) 1 B0, instead of weighting
   each G_i by S_i, and forgets z). As a term (one ∇ per element, no
   division, so zeros give exact results; linear in n):
     let A0 = shift1R (scanl (x, y. e) v A) in        -- [s_0 .. s_(n-1)]
     let W  = map2 (a, b. ∇_(x, y, fv...) e [a/x, b/y]) A0 A in
     let P  = map (t. t.0) W in
     let S  = shift1L (scanr (*) 1 P) in               -- [S_0 .. S_(n-1)]
     let Zs = map (u. u * z) S in
     ( reduce (+^) 0_fv1 (map2 (t, w. w *^ t.2) W Zs), ...   -- per fv
       z * reduce (*) 1 P,                                   -- cot v
       map2 (t, w. w * t.1) W Zs )                           -- cot A
   The paper shifts P before the scanr (A1 = shift1L (map2 ...)); on the
   empty array that gives scanr (*) 1 [] = [1], one element too many, so
   the shift comes after the scan here: n = 0 gives cot v = z, cot A = []
   and cot fv = 0. */
Term *rev_jt_fold(const RevJt *j, const Term *lam, Term *v, Term *a, Term *z) {
  Span s = j->span;
  const Type *R = fe_ty_real(), *AR = fe_ty_array(fe_ty_real());
  ASSERT(lam->kind == T_LAM && lam->nsyms == 2);
  ASSERT(fe_type_eq(lam->syms[0]->type, R) && fe_type_eq(lam->syms[1]->type, R));
  ASSERT(fe_type_eq(lam->kids[0]->type, R) && fe_type_eq(v->type, R));
  ASSERT(fe_type_eq(a->type, AR) && fe_type_eq(z->type, R));
  int ncomp = 2 + j->nfv;

  /* A0 = shift1R (scanl (x, y. e) v A) */
  Sym *fp[2] = {fe_mk_sym("x", R, s), fe_mk_sym("y", R, s)};
  Term *f = fe_mk_lam(s, 2, fp, rev_jt_paste(s, lam->kids[0], 2, lam->syms, fp));
  Sym *a0 = fe_mk_sym("A0", AR, s);
  Term *a0_rhs = fe_mk_shift(s, PRIM_SHIFT1R, fe_mk_scanl(s, f, v, a));

  /* W = map2 (a, b. g(a, b)) A0 A */
  Term *g = rev_jt_body_grad(j, lam);
  Sym *gp[2] = {fe_mk_sym("a", R, s), fe_mk_sym("b", R, s)};
  Term *glam = fe_mk_lam(s, 2, gp, rev_jt_paste(s, g, 2, lam->syms, gp));
  Term *w_rhs = rev_checked(fe_mk_map2(s, glam, var(s, a0), a));
  Sym *w = fe_mk_sym("W", w_rhs->type, s);

  /* P = map (t. t.0) W */
  Sym *t = fe_mk_sym("t", w_rhs->type->elem, s);
  Sym *p = fe_mk_sym("P", AR, s);
  Term *p_rhs = fe_mk_map(s, fe_mk_lam(s, 1, &t, fe_mk_proj(s, var(s, t), 0)), var(s, w));

  /* S = shift1L (scanr (*) 1 P) */
  Sym *sp = fe_mk_sym("S", AR, s);
  Term *s_rhs = fe_mk_shift(s, PRIM_SHIFT1L,
                            fe_mk_scanr(s, fe_mk_oplam(s, PRIM_MUL), fe_mk_num(s, 1), var(s, p)));

  /* Zs = map (u. u * z) S */
  Sym *u = fe_mk_sym("u", R, s);
  Sym *zs = fe_mk_sym("Zs", AR, s);
  Term *zs_rhs = fe_mk_map(s, fe_mk_lam(s, 1, &u, fe_mk_mul(s, var(s, u), z)), var(s, sp));

  Term **items = NEW_ARRAY(Term *, ncomp);
  rev_jt_fv_cots(j, w, ncomp, 2, zs, items);
  items[j->nfv] = fe_mk_mul(s, z, fe_mk_reduce(s, fe_mk_oplam(s, PRIM_MUL), fe_mk_num(s, 1), var(s, p)));
  items[j->nfv + 1] = rev_jt_scaled(s, w, ncomp, 1, zs);
  Term *body = rev_jt_pack(s, ncomp, items);

  body = fe_mk_let(s, zs, zs_rhs, body);
  body = fe_mk_let(s, sp, s_rhs, body);
  body = fe_mk_let(s, p, p_rhs, body);
  body = fe_mk_let(s, w, w_rhs, body);
  return fe_mk_let(s, a0, a0_rhs, body);
}

/* foldl (acc, y. e) v A: the fold above, sequential as the primal. */
Term *rev_jt_foldl(const RevJt *j, const Term *lam, Term *v, Term *a, Term *z) {
  return rev_jt_fold(j, lam, v, a, z);
}
