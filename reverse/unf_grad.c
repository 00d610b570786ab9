/* unf_grad.c: the gradient through UNF^-1 (figure 10 with figure 4's
   assembly): UNF^-1 of D_rho(UNF(e)) applied as pi_2 (...) (0_Gamma, 1)
   with the projection continuation Y of section 3.3 (see unf_grad.h). The
   forward primitives and the continuations are UNF^-1's (unf/to_term.c);
   each J^T is reverse/unf_jt.c's, through UNF^-1's hook. */
#include "unf_grad.h"
#include "unf_jt.h"
#include "../frontend/ir/build.h"

/* The state of one gradient: UNF^-1's, the J^T rules' and the gradient's
   context and wrt. */
typedef struct {
  UnfTt tt;
  RevUnfJt jt;
  Sym **ctx;
  int nctx;
  const int *wrt;
  int nwrt;
  Sym *y; /* the projection continuation Y as a variable, or NULL */
} Grad;

/* Applies the continuation k to the cotangents c: the J^T of every
   primitive back to the start, then Y (the projection onto wrt). */
static Term *apply_k(Grad *g, UnfCont *k, RevCot *c) {
  unf_tt_apply_cont(&g->tt, k, c);
  ASSERT(c->len == g->nctx);
  rev_cot_flush(&g->tt, c, g->nctx > 0 ? g->ctx[0]->span : fe_nospan);
  if (g->y) { /* Y (cot x1, ..., cot xn) */
    Term **args = NEW_ARRAY(Term *, g->nctx > 0 ? g->nctx : 1);
    for (int i = 0; i < g->nctx; i++) {
      Sym *x = g->ctx[i];
      args[i] = c->v[i] ? unf_tt_use(c->v[i]) : fe_mk_zero_like(x->span, fe_mk_var(x->span, x));
    }
    return fe_mk_app(g->y->span, fe_mk_var(g->y->span, g->y), g->nctx, args);
  }
  Term **items = NEW_ARRAY(Term *, g->nwrt > 0 ? g->nwrt : 1);
  for (int i = 0; i < g->nwrt; i++) {
    int w = g->wrt[i];
    Sym *x = g->ctx[w];
    items[i] = c->v[w] ? unf_tt_use(c->v[w]) : fe_mk_zero_like(x->span, fe_mk_var(x->span, x));
  }
  ASSERT(g->nwrt >= 1);
  return g->nwrt == 1 ? items[0] : fe_mk_tuple(items[0]->span, g->nwrt, items);
}

/* Y = fun (dx1, ..., dxn) -> (dx_wrt0, ...): the projection continuation
   of section 3.3 as a value. */
static Term *projection_continuation(Grad *g, Span s) {
  int n = g->nctx;
  Sym **ps = NEW_ARRAY(Sym *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    ps[i] = fe_mk_sym(una_sprintf("d%s", g->ctx[i]->name), g->ctx[i]->type, s);
  Term **items = NEW_ARRAY(Term *, g->nwrt);
  for (int i = 0; i < g->nwrt; i++) items[i] = fe_mk_var(s, ps[g->wrt[i]]);
  return fe_mk_lam(s, n, ps, g->nwrt == 1 ? items[0] : fe_mk_tuple(s, g->nwrt, items));
}

Term *rev_unf_to_term_grad(const Unf *d, Sym **ctx, int n, const int *wrt, int nwrt, RevOut out_kind,
                           RevNablaFn nabla, void *ud) {
  bool values = out_kind != REV_OUT_APPLIED;
  Grad g = {0};
  UnfTt *st = &g.tt;
  Span s = d->span;
  g.jt.nabla = nabla;
  g.jt.ud = ud;
  st->jt = rev_unf_jt_apply;
  st->jt_ud = &g.jt;
  g.ctx = ctx;
  g.nctx = n;
  g.wrt = wrt;
  g.nwrt = nwrt;
  ASSERT(nwrt >= 1);
  if (values) {
    Term *y = projection_continuation(&g, s);
    g.y = fe_mk_sym("Y", y->type, s);
    UnfBind b = {s, g.y, NULL, 0, y};
    unf_tt_add_bind(st, b);
  }
  UnfCont *y = NEW(UnfCont);
  y->init = true;
  const UnfEnv *out = unf_tt_run(st, d, unf_tt_env_push(unf_tt_ctx_env(ctx, n), NULL, y, NULL));
  ASSERT(unf_tt_env_len(out) == n + 2 && out->k && out->prev->atom);
  RevCot c = {0};
  if (!values) { /* pi_2 (...) (0_ctx, 1), applied here */
    for (int i = 0; i < n; i++) rev_cot_push(&c, NULL);
    rev_cot_push(&c, fe_mk_num(s, 1));
    return unf_tt_wrap(st, 0, apply_k(&g, out->k, &c));
  }
  /* K = fun (dx1, ..., dxn, z) -> ... Y (...), the continuation of D(e) */
  Sym **ps = NEW_ARRAY(Sym *, n + 1);
  for (int i = 0; i < n; i++) {
    ps[i] = fe_mk_sym(una_sprintf("d%s", ctx[i]->name), ctx[i]->type, s);
    rev_cot_push(&c, fe_mk_var(s, ps[i]));
  }
  ps[n] = fe_mk_sym("z", fe_ty_real(), s);
  rev_cot_push(&c, fe_mk_var(s, ps[n]));
  int mark = st->n;
  Term *kbody = unf_tt_wrap(st, mark, apply_k(&g, out->k, &c));
  Term *k = fe_mk_lam(s, n + 1, ps, kbody);
  /* let (y, K) = (v, k) in K (0_ctx, 1) */
  Term *pair[2] = {unf_tt_use(out->prev->atom), k};
  Term *dv = fe_mk_tuple(s, 2, pair);
  Sym *yk[2] = {fe_mk_sym("y", dv->type->elems[0], s), fe_mk_sym("K", k->type, s)};
  Term **args = NEW_ARRAY(Term *, n + 1);
  for (int i = 0; i < n; i++) args[i] = fe_mk_zero_like(ctx[i]->span, fe_mk_var(ctx[i]->span, ctx[i]));
  args[n] = fe_mk_num(s, 1);
  Term *apply = fe_mk_app(s, fe_mk_var(s, yk[1]), n + 1, args);
  UnfBind b = {s, NULL, NEW_ARRAY(Sym *, 2), 2, dv};
  b.xs[0] = yk[0];
  b.xs[1] = yk[1];
  unf_tt_add_bind(st, b);
  if (out_kind == REV_OUT_VALUE) { /* (y, K (0_ctx, 1)): the value from the same forward pass */
    Term *vg[2] = {fe_mk_var(s, yk[0]), apply};
    apply = fe_mk_tuple(s, 2, vg);
  }
  return unf_tt_wrap(st, 0, apply);
}
