/* row_fold.c: the elementwise minimum (or maximum) of rows that a map
   computes, folded as they are made instead of stored (arrays.c calls it
   on every reduce):

     reduce (u, v. map2 (min) u v) z (map2 (r, q. lets in map (x. e) r) A B)
       ->  let chk = map2 (r, q. 0) A B in      (map2's length error first)
           loop acc = z for j < length A do
             let r = A[j] in let q = B[j] in lets in map2 (a, x. min a e) acc r

   (a map over A alone likewise; max, and the operands the other way
   round, too: then map2 (x, a. min e a) r acc) when the rows' map is
   used only here, z, the lets and e cannot raise, and A and B are
   variables. The fold runs from the left
   as reduce's does over rows (min and max are exact; reduce's order is
   unspecified anyway), each row's map2 raising where the fold's would.
   No k x n matrix is stored and read again: the loop's state is updated
   in place by its map2 (docs/cpu.md), one pass over each row (kmeans'
   nearest centroid, `cc - 2 x` per row, as XLA fuses it). */
#include "row_fold.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"
#include "pe_util.h"

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

/* The inner `map (x. e) r` at the end of the row function's lets, r its
   first parameter, the lets and e unable to raise; NULL otherwise. */
static const Term *row_map(const Term *f) {
  const Term *t = f->kids[0];
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    if (opt_may_raise(t->kids[0])) return NULL;
    t = t->kids[1];
  }
  if (!is_prim(t, PRIM_MAP) || t->kids[1]->kind != T_VAR || t->kids[1]->sym != f->syms[0]) return NULL;
  const Term *g = t->kids[0];
  return g->nsyms == 1 && !opt_may_raise(g->kids[0]) ? t : NULL;
}

/* The row function's lets around `body` (a copy of its chain with the
   inner map replaced). */
static Term *with_lets(const Term *chain, const Term *inner, Term *body) {
  if (chain == inner) return body;
  Term *k[2] = {chain->kids[0], with_lets(chain->kids[1], inner, body)};
  return opt_with_kids(chain, k);
}

Term *opt_row_fold(OptRw *c, Term *t) {
  bool acc_first;
  Prim op = is_prim(t, PRIM_REDUCE) ? fe_rows_extremum(t->kids[0], &acc_first) : PRIM__COUNT;
  if (op == PRIM__COUNT || !opt_rw_safe(c, t->kids[1])) return NULL;
  Term *a = t->kids[2];
  if (a->kind == T_VAR && (opt_rw_uses(c, a->sym) != 1 || !opt_rw_same_depth(c, a->sym))) return NULL;
  Term *m = opt_rw_resolve(c, a);
  if (!(is_prim(m, PRIM_MAP) || is_prim(m, PRIM_MAP2))) return NULL;
  for (int i = 1; i < m->nkids; i++)
    if (m->kids[i]->kind != T_VAR) return NULL;
  const Term *f = m->kids[0], *inner = row_map(f);
  if (!inner) return NULL;
  Span s = t->span, ms = t->kids[0]->kids[0]->span; /* the fold's map2: its errors' place */
  const Type *R = fe_ty_real(), *AR = fe_ty_array(R);
  /* the loop's body: the row's parameters read at j, the lets, then
     map2 (a, x. op a e) acc r (map2 (x, a. op e a) r acc for the other
     order) */
  Sym *acc = fe_mk_sym("acc", AR, s), *j = fe_mk_sym("j", R, s);
  const Term *g = inner->kids[0];
  Sym *av = fe_mk_sym("a", R, s), *xv = fe_mk_sym(g->syms[0]->name, R, s);
  Term *xt = fe_mk_var(s, xv);
  Term *e = fe_subst(g->kids[0], 1, (Sym **)g->syms, &xt);
  /* the operands in the fold's order, so that its length error reads the
     same (the state first is also what lets it be updated in place) */
  Term *opk = acc_first ? fe_mk_op2(ms, op, fe_mk_var(s, av), e) : fe_mk_op2(ms, op, e, fe_mk_var(s, av));
  Sym *ps[2] = {acc_first ? av : xv, acc_first ? xv : av};
  Term *as[2] = {fe_mk_var(s, acc), fe_copy(inner->kids[1])};
  Term *step = fe_mk_map2(ms, fe_mk_lam(s, 2, ps, opk), as[acc_first ? 0 : 1], as[acc_first ? 1 : 0]);
  Term *body = with_lets(f->kids[0], inner, step);
  for (int i = f->nsyms - 1; i >= 0; i--) {
    Term *ix[2] = {fe_copy(m->kids[1 + i]), fe_mk_var(s, j)};
    Term *read = fe_mk_array_prim(s, PRIM_INDEX, 2, ix);
    read->b = true; /* j < length A (= length B, checked first) */
    body = fe_mk_let(s, f->syms[i], read, body);
  }
  Sym *lp[2] = {acc, j};
  Term *lk[3] = {fe_copy(fe_mk_lam(s, 2, lp, body)), t->kids[1], fe_mk_length(s, fe_copy(m->kids[1]))};
  Term *loop = fe_mk_array_prim(s, PRIM_LOOP_FOR, 3, lk);
  if (!is_prim(m, PRIM_MAP2)) return loop;
  /* A and B's lengths checked first, as the rows' map2 did */
  Sym *cp[2] = {fe_mk_sym("r", m->kids[1]->type->elem, s), fe_mk_sym("q", m->kids[2]->type->elem, s)};
  Term *chk = fe_mk_map2(m->span, fe_mk_lam(s, 2, cp, fe_mk_num(s, 0)), fe_copy(m->kids[1]), fe_copy(m->kids[2]));
  return fe_mk_let(s, fe_mk_sym("chk", chk->type, s), chk, loop);
}
