/* jt_map_any.c: the transpose Jacobian of map, map2 and map3 over any
   element types (nested arrays, tuples; the reals-only forms of the
   paper are jt_map.c and jt_map2.c). With e the body, x1..xk its
   parameters, z the cotangent of the result (one element per element):
     let W = map(k+1) (a1, .., ak, c. ∇_(x1..xk, fv) <c, e>[a/x]) A1 .. Ak z in
     ( sum over W of the fv components...,    -- per free variable
       map (t. t.i) W ... )                   -- cot A_i
   the vector-Jacobian product of the body at each element (<c, e> the
   inner product, c a constant for ∇), so e may return any type. With
   three arrays, z rides with the third: map3 (a1, a2, q. let (a3, c) = q
   in ...) A1 A2 (zip A3 z). */
#include "jt_prim.h"
#include "../frontend/ir/build.h"

static bool has_reals(const Type *t) {
  switch (t->kind) {
  case TY_REAL: return true;
  case TY_ARRAY: return has_reals(t->elem);
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++)
      if (has_reals(t->elems[i])) return true;
    return false;
  default: return false;
  }
}

Term *rev_jt_map_any(const RevJtPrim *p) {
  Span s = p->j.span;
  const Term *lam = p->t->kids[0];
  int k = p->nops;
  ASSERT(lam->kind == T_LAM && lam->nsyms == k && k >= 1 && k <= 3);
  Sym **params = NEW_ARRAY(Sym *, k);
  bool *want = NEW_ARRAY(bool, k);
  for (int i = 0; i < k; i++) {
    params[i] = fe_mk_sym(lam->syms[i]->name, lam->syms[i]->type, s);
    want[i] = p->active[i] && has_reals(lam->syms[i]->type);
  }
  int ncomp = rev_jt_vjp_count(&p->j, k, want);
  Term **opc = NEW_ARRAY(Term *, k);
  if (ncomp == 0) return rev_jt_prim_result(p, NULL, opc);
  Sym *c = fe_mk_sym("c", p->z->type->elem, s);
  Term *vjp = rev_jt_vjp(&p->j, lam, params, want, fe_mk_var(s, c));
  Term *w_rhs;
  if (k == 1) {
    Sym *ps[2] = {params[0], c};
    w_rhs = fe_mk_map2(s, fe_mk_lam(s, 2, ps, vjp), rev_jt_use(p->ops[0]), rev_jt_use(p->z));
  } else {
    Term *third = rev_jt_use(p->z);
    Sym *ps[3] = {params[0], params[1], c};
    if (k == 3) {
      Term *zk[2] = {rev_jt_use(p->ops[2]), rev_jt_use(p->z)};
      third = fe_mk_array_prim(s, PRIM_ZIP, 2, zk);
      Sym *q = fe_mk_sym("q", third->type->elem, s);
      Sym *qs[2] = {params[2], c};
      vjp = fe_mk_lettup(s, 2, qs, fe_mk_var(s, q), vjp);
      ps[2] = q;
    }
    Term *mk[4] = {fe_mk_lam(s, 3, ps, vjp), rev_jt_use(p->ops[0]), rev_jt_use(p->ops[1]), third};
    w_rhs = fe_mk_array_prim(s, PRIM_MAP3, 4, mk);
  }
  Sym *w = fe_mk_sym("W", w_rhs->type, s);
  int nwant = 0;
  for (int i = 0; i < k; i++)
    if (want[i]) opc[i] = rev_jt_column(s, w, ncomp, nwant++);
  Term **fvc = NEW_ARRAY(Term *, p->j.nfv > 0 ? p->j.nfv : 1);
  rev_jt_prim_fv_sums(p, w, ncomp, nwant, fvc);
  Term *r = rev_jt_prim_result(p, fvc, opc);
  return r ? fe_mk_let(s, w, w_rhs, r) : NULL;
}
