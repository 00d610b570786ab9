/* jt_prim.c: the table of the J^T rules of the generic prim nodes and the
   helpers they share (see jt_prim.h). */
#include "jt_prim.h"
#include "../frontend/ir/subst.h"
#include "jt_util.h"
#include "../frontend/ir/build.h"

static const RevJtPrimRule rules[PRIM__COUNT] = {
    [PRIM_INDEX] = rev_jt_index,
    [PRIM_SLICE] = rev_jt_slice,
    [PRIM_REDUCE_BY_INDEX] = rev_jt_reduce_by_index,
    [PRIM_TRANSPOSE] = rev_jt_transpose,
    [PRIM_CONCAT] = rev_jt_concat,
    [PRIM_ZIP] = rev_jt_zip,
    [PRIM_UNZIP] = rev_jt_unzip,
    [PRIM_SHIFT1L] = rev_jt_shift,
    [PRIM_SHIFT1R] = rev_jt_shift,
    [PRIM_MAP] = rev_jt_map_any,
    [PRIM_MAP2] = rev_jt_map_any,
    [PRIM_MAP3] = rev_jt_map_any,
    [PRIM_REDUCE] = rev_jt_fold_any,
    [PRIM_FOLDL] = rev_jt_fold_any,
    [PRIM_SCANL] = rev_jt_scanl,
    [PRIM_SCANR] = rev_jt_scanr,
    [PRIM_LOOP_FOR] = rev_jt_loop_for,
    [PRIM_LOOP_WHILE] = rev_jt_loop_while,
};

RevJtPrimRule rev_jt_prim_rule(Prim p) { return rules[p]; }

Term *rev_jt_use(const Term *t) {
  Term *u = NEW(Term);
  *u = *t;
  return u;
}

int rev_jt_vjp_count(const RevJt *j, int n, const bool *want) {
  int m = j->nfv;
  for (int k = 0; k < n; k++) m += !want || want[k];
  return m;
}

Term *rev_jt_replayed(Term *t) { return fe_mark_checked(t); }

Term *rev_jt_vjp(const RevJt *j, const Term *lam, Sym **params, const bool *want, Term *c) {
  Span s = j->span;
  ASSERT(lam->kind == T_LAM);
  int n = rev_jt_vjp_count(j, lam->nsyms, want);
  if (n == 0) return NULL;
  Term *body = rev_jt_paste(s, lam->kids[0], lam->nsyms, lam->syms, params);
  Term *inner = rev_jt_inner(s, c, body);
  Sym **ctx = NEW_ARRAY(Sym *, n);
  int m = 0;
  for (int k = 0; k < lam->nsyms; k++)
    if (!want || want[k]) ctx[m++] = params[k];
  for (int k = 0; k < j->nfv; k++) ctx[m++] = j->fv[k];
  Term *v = j->nabla(ctx, n, inner, j->ud);
  return v ? rev_jt_replayed(fe_copy(v)) : v; /* a copy: v may share the primal's own terms */
}

Term *rev_jt_prim_result(const RevJtPrim *p, Term **fvc, Term **opc) {
  Span s = p->j.span;
  Term **items = NEW_ARRAY(Term *, p->j.nfv + p->nops + 1);
  int n = 0;
  for (int k = 0; k < p->j.nfv; k++) items[n++] = fvc[k];
  for (int k = 0; k < p->nops; k++)
    if (p->active[k]) items[n++] = opc[k] ? opc[k] : fe_mk_zero_like(s, rev_jt_use(p->ops[k]));
  return n == 0 ? NULL : rev_jt_pack(s, n, items);
}

Term *rev_jt_column(Span s, Sym *w, int ncomp, int i) {
  if (ncomp == 1) return fe_mk_var(s, w);
  Sym *t = fe_mk_sym("t", w->type->elem, s);
  return fe_mk_map(s, fe_mk_lam(s, 1, &t, fe_mk_proj(s, fe_mk_var(s, t), i)), fe_mk_var(s, w));
}

void rev_jt_prim_fv_sums(const RevJtPrim *p, Sym *w, int ncomp, int first, Term **fvc) {
  Span s = p->j.span;
  for (int k = 0; k < p->j.nfv; k++) {
    Term *zero = fe_mk_zero_like(s, fe_mk_var(s, p->j.fv[k]));
    fvc[k] = rev_jt_gsum(s, rev_jt_column(s, w, ncomp, first + k), zero);
  }
}
