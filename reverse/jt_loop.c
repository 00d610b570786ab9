/* jt_loop.c: the transpose Jacobians of the loops (see jt_prim.h). A loop
   is a left fold over its iteration numbers, so its reverse is the fold's
   (jt_fold_any.c): the forward states are saved by a scanl over
   iota n, and the iterations run backwards over them.
     loop x = e0 for i < n do e      the fold of (x, i. e) from e0 over iota n
     loop x = e0 while c do e        first the trip count k, by running the
                                     loop again with a counter:
                                       (loop (x, k) = (e0, 0) while c do (e, k + 1)).1
                                     then the fold of (x, i. e) over iota k
   The count n and the condition carry no derivative. */
#include "jt_prim.h"
#include "jt_util.h"
#include "../frontend/ir/build.h"

static Term *iota(Span s, Term *n) { return fe_mk_array_prim(s, PRIM_IOTA, 1, &n); }

Term *rev_jt_loop_for(const RevJtPrim *p) {
  Span s = p->j.span;
  return rev_jt_fold_loop(p, p->t->kids[0], iota(s, rev_jt_use(p->ops[1])));
}

Term *rev_jt_loop_while(const RevJtPrim *p) {
  Span s = p->j.span;
  const Term *body = p->t->kids[0], *cond = p->t->kids[2];
  const Type *st = body->syms[0]->type, *R = fe_ty_real();
  /* (x, k. body) with a counter */
  Sym *x = fe_mk_sym(body->syms[0]->name, st, s), *k = fe_mk_sym("k", R, s);
  Term *items[2] = {fe_mk_var(s, x), fe_mk_num(s, 0)};
  Term *pair_t = fe_mk_tuple(s, 2, items);
  Sym *q = fe_mk_sym("q", pair_t->type, s);
  Sym *xk[2] = {x, k};
  Term *next[2] = {rev_jt_paste(s, body->kids[0], 1, body->syms, &x),
                   fe_mk_add(s, fe_mk_var(s, k), fe_mk_num(s, 1))};
  Term *step = fe_mk_lam(s, 1, &q, fe_mk_lettup(s, 2, xk, fe_mk_var(s, q), fe_mk_tuple(s, 2, next)));
  Sym *x2 = fe_mk_sym(body->syms[0]->name, st, s), *k2 = fe_mk_sym("k", R, s);
  Sym *q2 = fe_mk_sym("q", pair_t->type, s);
  Sym *xk2[2] = {x2, k2};
  Term *test = fe_mk_lam(s, 1, &q2,
                         fe_mk_lettup(s, 2, xk2, fe_mk_var(s, q2), rev_jt_paste(s, cond->kids[0], 1, cond->syms, &x2)));
  Term *init[2] = {rev_jt_use(p->ops[0]), fe_mk_num(s, 0)};
  Term *lk[3] = {step, fe_mk_tuple(s, 2, init), test};
  Term *count = fe_mk_proj(s, fe_mk_array_prim(s, PRIM_LOOP_WHILE, 3, lk), 1);
  /* the body as (x, i. body) */
  Sym *x3 = fe_mk_sym(body->syms[0]->name, st, s), *i3 = fe_mk_sym("i", R, s);
  Sym *ps[2] = {x3, i3};
  Term *lam = fe_mk_lam(s, 2, ps, rev_jt_paste(s, body->kids[0], 1, body->syms, &x3));
  return rev_jt_fold_loop(p, lam, iota(s, count));
}
