/* outer_split.c: an outer product whose rows are scaled by a value
   computed from each element,

     map (a. let y = a + a in map (q. y * q) v) A
       ->  map (y. map (q. y * q) v) (map (a. let y = a + a in y) A)

   (a gradient's `2 y x^T`, the scaling fused into it), so that the plan
   finds the outer product (backend/plan/matrix.c) and makes it one loop
   over its rows instead of a map per row. The lets are scalar and cannot
   raise (they run for every element before the rows are made, instead of
   before each row). fusion.c fuses nothing into an outer product, so the
   two maps stay apart. */
#include "outer_split.h"

#include "../frontend/ir/build.h"
#include "pe_util.h"

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

/* The product p * q (or q * p) of the variables p and q. */
static bool product_of(const Term *m, const Sym *p, const Sym *q) {
  if (!is_prim(m, PRIM_MUL)) return false;
  const Term *a = m->kids[0], *b = m->kids[1];
  return a->kind == T_VAR && b->kind == T_VAR && ((a->sym == p && b->sym == q) || (a->sym == q && b->sym == p));
}

/* Whether in is map (q. y * q) v, v a variable or global other than y. */
static bool scaled_row(const Term *in, const Sym *y) {
  if (!is_prim(in, PRIM_MAP) || in->kids[0]->kind != T_LAM) return false;
  const Term *v = in->kids[1];
  if (!(v->kind == T_GLOBAL || (v->kind == T_VAR && v->sym != y))) return false;
  return product_of(in->kids[0]->kids[0], y, in->kids[0]->syms[0]);
}

bool opt_outer_rows(const Term *t) {
  return is_prim(t, PRIM_MAP) && t->kids[0]->kind == T_LAM && scaled_row(t->kids[0]->kids[0], t->kids[0]->syms[0]);
}

Term *opt_outer_split(OptRw *c, Term *t) {
  if (!is_prim(t, PRIM_MAP) || t->kids[0]->kind != T_LAM || t->kids[1]->type->elem->kind != TY_REAL) return NULL;
  const Term *lam = t->kids[0], *b = lam->kids[0], *row = b;
  if (b->kind != T_LET) return NULL;
  for (; row->kind == T_LET; row = row->kids[1])
    if (row->kids[0]->type->kind != TY_REAL || opt_may_raise(row->kids[0])) return NULL;
  if (!is_prim(row, PRIM_MAP) || row->kids[0]->kind != T_LAM) return NULL;
  /* y: the product's operand that is not the row's parameter, a let */
  const Term *prod = row->kids[0]->kids[0], *v = row->kids[1];
  if (!is_prim(prod, PRIM_MUL)) return NULL;
  const Sym *q = row->kids[0]->syms[0];
  bool yfirst = !(prod->kids[0]->kind == T_VAR && prod->kids[0]->sym == q);
  const Term *yv = prod->kids[yfirst ? 0 : 1];
  if (yv->kind != T_VAR || !scaled_row(row, yv->sym)) return NULL;
  bool bound = false;
  for (const Term *l = b; l != row; l = l->kids[1]) {
    if (v->kind == T_VAR && v->sym == l->sym) return NULL; /* the row's vector is the element's */
    bound = bound || l->sym == yv->sym;
  }
  if (!bound) return NULL;
  Span sp = t->span;
  Term *scale = fe_mk_map(sp, fe_mk_lam(lam->span, 1, lam->syms, opt_with_tail(b, fe_mk_var(sp, yv->sym))), t->kids[1]);
  Sym *p = fe_mk_sym(yv->sym->name, yv->sym->type, sp), *q2 = fe_mk_sym(q->name, q->type, sp);
  Term *pv = fe_mk_var(sp, p), *qv = fe_mk_var(sp, q2);
  Term *m = fe_mk_op2(prod->span, PRIM_MUL, yfirst ? pv : qv, yfirst ? qv : pv);
  Term *nrow = fe_mk_map(row->span, fe_mk_lam(row->kids[0]->span, 1, &q2, m), (Term *)v);
  (void)c;
  return fe_mk_map(sp, fe_mk_lam(lam->span, 1, &p, nrow), scale);
}
