/* jt_reduce_minmax.c: the transpose Jacobian of an elementwise minimum
   or maximum of rows, reduce (u, w. map2 min u w) v A (max, and either
   operand order), without saving the fold's states.

   The fold's partials (reverse/partials.c: min a b is a when a <= b, max
   a b when a >= b) give each column's whole cotangent to one of v, A_0,
   ..., A_(k-1): its winner, the operand the fold kept last. One pass over
   the rows finds it, carrying the running extremum and the winner's row
   (-1 for v), both updated in place:
     let W = stop_gradient (loop (s, w) = (v, map (x. -1) v) for j < length A do
               let a = A[j] in
               (map2 min s a, map3 (x, y, c. if x <= y then c else j) s a w)).1 in
     cot v = map2 (c, zi. if c == -1 then zi else 0) W z
     cot A = map (j. map2 (c, zi. if c == j then zi else 0) W z) (iota (length A))
   The winners are piecewise constant in every input, so the stop_gradient
   says what their derivative is: zero (a jvp of this gradient, a
   Hessian's diagonal, gets no tangent of the loop). Work: two passes over
   A; memory: two rows, where the general fold rule (jt_fold_any.c) saves
   all k running rows and sweeps back over them. */
#include "jt_prim.h"
#include "jt_util.h"
#include "partials.h"
#include "../frontend/ir/build.h"

static Term *var(Span s, Sym *x) { return fe_mk_var(s, x); }

/* Whether the fold keeps its accumulator acc against the element a: the
   partial of op (the partials' table) in the accumulator's operand is 1. */
static Term *keeps(Span s, Prim op, bool acc_first, Term *acc, Term *a) {
  Term *args[2] = {acc_first ? acc : a, acc_first ? a : acc};
  return fe_mk_op2(s, PRIM_EQ, rev_partial(s, op, acc_first ? 0 : 1, args), fe_mk_num(s, 1));
}

/* map2 (c, zi. if c == j then zi else 0) W z */
static Term *cot_of(Span s, Sym *w, Term *z, Term *j) {
  const Type *R = fe_ty_real();
  Sym *c = fe_mk_sym("c", R, s), *zi = fe_mk_sym("zi", R, s);
  Sym *ps[2] = {c, zi};
  Term *body = fe_mk_if(s, fe_mk_op2(s, PRIM_EQ, var(s, c), j), var(s, zi), fe_mk_num(s, 0));
  return rev_checked(fe_mk_map2(s, fe_mk_lam(s, 2, ps, body), var(s, w), z));
}

Term *rev_jt_reduce_minmax(const RevJtPrim *p) {
  bool acc_first;
  Prim op = p->t->prim == PRIM_REDUCE && p->j.nfv == 0 ? fe_rows_extremum(p->t->kids[0], &acc_first) : PRIM__COUNT;
  if (op == PRIM__COUNT || !fe_type_eq(p->ops[0]->type, fe_ty_array(fe_ty_real()))) return NULL;
  Span s = p->j.span;
  const Type *R = fe_ty_real(), *AR = fe_ty_array(R);
  Term *v = rev_jt_use(p->ops[0]), *a = p->ops[1];
  /* the loop's body: (s, w), j -> (map2 op s A[j], map3 (..) s A[j] w) */
  Sym *q = fe_mk_sym("q", fe_ty_tuple(2, (const Type *[]){AR, AR}), s), *j = fe_mk_sym("j", R, s);
  Sym *st = fe_mk_sym("s", AR, s), *w = fe_mk_sym("w", AR, s), *row = fe_mk_sym("a", AR, s);
  Term *ix[2] = {rev_jt_use(a), var(s, j)};
  Term *read = fe_mk_array_prim(s, PRIM_INDEX, 2, ix);
  read->b = true; /* j < length A */
  Sym *x = fe_mk_sym("x", R, s), *y = fe_mk_sym("y", R, s), *c = fe_mk_sym("c", R, s);
  Sym *xyc[3] = {x, y, c};
  Term *pick = fe_mk_if(s, keeps(s, op, acc_first, var(s, x), var(s, y)), var(s, c), var(s, j));
  Term *m3[4] = {fe_mk_lam(s, 3, xyc, pick), var(s, st), var(s, row), var(s, w)};
  Term *ext = rev_checked(fe_mk_map2(s, fe_mk_oplam(s, op), var(s, st), var(s, row)));
  Term *next[2] = {ext, rev_checked(fe_mk_array_prim(s, PRIM_MAP3, 4, m3))};
  Sym *sw[2] = {st, w};
  Term *body = fe_mk_lettup(s, 2, sw, var(s, q), fe_mk_let(s, row, read, fe_mk_tuple(s, 2, next)));
  Sym *lp[2] = {q, j};
  Sym *e = fe_mk_sym("x", R, s);
  Term *none = fe_mk_map(s, fe_mk_lam(s, 1, &e, fe_mk_num(s, -1)), rev_jt_use(p->ops[0]));
  Term *init[2] = {v, none};
  Term *lk[3] = {fe_mk_lam(s, 2, lp, body), fe_mk_tuple(s, 2, init), fe_mk_length(s, rev_jt_use(a))};
  Term *loop = fe_mk_array_prim(s, PRIM_LOOP_FOR, 3, lk);
  Term *winners = fe_mk_proj(s, loop, 1);
  Term *stop = fe_mk_array_prim(s, PRIM_STOPGRAD_ANY, 1, &winners);
  Sym *wv = fe_mk_sym("W", AR, s);
  /* the cotangents */
  Sym *jj = fe_mk_sym("j", R, s);
  Term *n = fe_mk_length(s, rev_jt_use(a));
  Term *cot_a = fe_mk_map(s, fe_mk_lam(s, 1, &jj, cot_of(s, wv, rev_jt_use(p->z), var(s, jj))),
                          fe_mk_array_prim(s, PRIM_IOTA, 1, &n));
  Term *opc[2] = {cot_of(s, wv, rev_jt_use(p->z), fe_mk_num(s, -1)), cot_a};
  return fe_mk_let(s, wv, stop, rev_jt_prim_result(p, NEW_ARRAY(Term *, 1), opc));
}
