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
  /* the trip count: the loop again, with a counter; a replay of the
     primal's loop, which ran without error (optimizer/loop_states.c lets
     the primal read its value from this loop) */
  Term *counting = rev_jt_replayed(fe_mk_counting_loop(s, body, rev_jt_use(p->ops[0]), cond));
  Term *count = fe_mk_proj(s, counting, 1);
  /* the body as (x, i. body) */
  Sym *x3 = fe_mk_sym(body->syms[0]->name, st, s), *i3 = fe_mk_sym("i", R, s);
  Sym *ps[2] = {x3, i3};
  Term *lam = fe_mk_lam(s, 2, ps, rev_jt_paste(s, body->kids[0], 1, body->syms, &x3));
  return rev_jt_fold_loop(p, lam, iota(s, count));
}
