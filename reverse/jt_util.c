/* jt_util.c: helpers shared by the transpose-Jacobian builders (see
   jt_util.h). */
#include "jt_util.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"

Term *rev_checked(Term *t) {
  ASSERT(t->kind == T_PRIM);
  t->b = true;
  return t;
}

/* Marks the map2s of a term built over atoms only (no user code inside). */
static void mark_all(Term *t) {
  if (t->kind == T_PRIM && t->prim == PRIM_MAP2) t->b = true;
  for (int i = 0; i < t->nkids; i++)
    if (t->kids[i]->kind != T_VAR) mark_all(t->kids[i]);
}

Term *rev_gadd(Span s, Term *a, Term *b) {
  Term *r = fe_mk_gadd(s, a, b);
  mark_all(r);
  return r;
}

Term *rev_jt_body_grad(const RevJt *j, const Term *lam) {
  ASSERT(lam->kind == T_LAM);
  int n = lam->nsyms + j->nfv;
  Sym **ctx = NEW_ARRAY(Sym *, n);
  for (int i = 0; i < lam->nsyms; i++) ctx[i] = lam->syms[i];
  for (int i = 0; i < j->nfv; i++) ctx[lam->nsyms + i] = j->fv[i];
  return j->nabla(ctx, n, lam->kids[0], j->ud);
}

Term *rev_jt_paste(Span s, const Term *t, int n, Sym **from, Sym **to) {
  Term **vars = NEW_ARRAY(Term *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) vars[i] = fe_mk_var(s, to[i]);
  return fe_subst(t, n, from, vars);
}

Term *rev_jt_pick(Span s, Term *t, int ncomp, int i) {
  ASSERT(i >= 0 && i < ncomp);
  return ncomp == 1 ? t : fe_mk_proj(s, t, i);
}

Term *rev_jt_pack(Span s, int n, Term **items) {
  ASSERT(n >= 1);
  return n == 1 ? items[0] : fe_mk_tuple(s, n, items);
}

Term *rev_jt_scaled(Span s, Sym *w_arr, int ncomp, int i, Sym *wts) {
  ASSERT(w_arr->type->kind == TY_ARRAY && fe_type_is_real_array(wts->type));
  Sym *ps[2] = {fe_mk_sym("t", w_arr->type->elem, s), fe_mk_sym("w", fe_ty_real(), s)};
  Term *g = rev_jt_pick(s, fe_mk_var(s, ps[0]), ncomp, i);
  Term *body = fe_mk_gscale(s, fe_mk_var(s, ps[1]), g);
  return rev_checked(fe_mk_map2(s, fe_mk_lam(s, 2, ps, body), fe_mk_var(s, w_arr), fe_mk_var(s, wts)));
}

Term *rev_jt_gplus(Span s, const Type *t) {
  if (t->kind == TY_REAL) return fe_mk_oplam(s, PRIM_ADD);
  Sym *ps[2] = {fe_mk_sym("g", t, s), fe_mk_sym("h", t, s)};
  return fe_mk_lam(s, 2, ps, rev_gadd(s, fe_mk_var(s, ps[0]), fe_mk_var(s, ps[1])));
}

Term *rev_jt_gsum(Span s, Term *arr, Term *zero) {
  ASSERT(fe_type_eq(arr->type->elem, zero->type));
  return fe_mk_reduce(s, rev_jt_gplus(s, arr->type->elem), zero, arr);
}

void rev_jt_fv_cots(const RevJt *j, Sym *w_arr, int ncomp, int first, Sym *wts, Term **items) {
  Span s = j->span;
  for (int k = 0; k < j->nfv; k++) {
    Term *zero = fe_mk_zero_like(s, fe_mk_var(s, j->fv[k]));
    items[k] = rev_jt_gsum(s, rev_jt_scaled(s, w_arr, ncomp, first + k, wts), zero);
  }
}

Term *rev_jt_inner(Span s, Term *z, Term *e) {
  const Type *t = e->type;
  ASSERT(fe_type_eq(z->type, t));
  if (!fe_type_has_reals(t)) return fe_mk_num(s, 0); /* tau(t) is empty (booleans) */
  switch (t->kind) {
  case TY_REAL: return fe_mk_mul(s, z, e);
  case TY_ARRAY: {
    /* reduce (+) 0 (map2 (p, q. <p, q>) z e) */
    Sym *ps[2] = {fe_mk_sym("p", t->elem, s), fe_mk_sym("q", t->elem, s)};
    Term *body = rev_jt_inner(s, fe_mk_var(s, ps[0]), fe_mk_var(s, ps[1]));
    Term *prods = rev_checked(fe_mk_map2(s, fe_mk_lam(s, 2, ps, body), z, e));
    return fe_mk_reduce(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), prods);
  }
  case TY_TUPLE: {
    /* let u = e in <z.0, u.0> + ... + <z.(n-1), u.(n-1)> */
    Sym *u = fe_mk_sym("u", t, s);
    Term *sum = NULL;
    for (int i = 0; i < t->n; i++) {
      if (!fe_type_has_reals(t->elems[i])) continue;
      Term *c = rev_jt_inner(s, fe_mk_proj(s, z, i), fe_mk_proj(s, fe_mk_var(s, u), i));
      sum = sum ? fe_mk_add(s, sum, c) : c;
    }
    return fe_mk_let(s, u, e, sum);
  }
  case TY_BOOL:
  case TY_FUN: break;
  }
  UNREACHABLE();
}
