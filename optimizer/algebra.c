/* algebra.c: the ring laws of the reals (figure 12's algebraic rules) and
   constant folding with the evaluator's own scalar functions.

   Rules (x any real term, c a literal):
     op c1 ... cn      -> the value, computed by backend/scalar.h (bit-identical)
     x * 1, 1 * x      -> x          x / 1, x ^ 1 -> x
     x + 0, 0 + x      -> x          x - 0 -> x          (0 the literal +0)
     x + -0, -0 + x    -> x
     - (- x)           -> x
     -1 * x, x * -1    -> - x       (exact in IEEE arithmetic, as are the
     (- x) * y, x * (- y), (- x) / y, x / (- y) -> - (x * y), - (x / y)
     x + (- y) -> x - y      (- x) + y -> y - x      x - (- y) -> x + y
                          rules above it: a tangent's or an adjoint's
                          `b + -1 * c` becomes `b - c`, and a negation
                          moves out of products to the sum that absorbs it)
     x * 0, 0 * x      -> 0          only when x is `length A` (finite, >= 0)
     comparisons and && || ! of literals; true && e -> e, false && e -> false,
     e && true -> e (and the duals for ||); e && false -> false only when e
     cannot raise
     if true then a else b -> a, if false then a else b -> b
     if c then a else a -> a   when c cannot raise (a and b alike up to
                               the names of bound variables)
     if c then (if c then a else b) else d -> if c then a else d, and
     if c then a else (if c then b else d) -> if c then a else d
   Over tuples and arrays the laws act through the lifted forms the AD
   builds (component-wise tuples, map2 (+) / map (x. x * z) over arrays):
   this pass simplifies the scalar bodies and optimizer/arrays.c the array
   forms. IEEE: x * 0 is not folded for a possibly infinite or nan x. x + 0
   turns -0 into +0 where the original gave +0; the briefing accepts it. */
#include "passes.h"

#include "../backend/scalar.h"
#include "../frontend/ir/build.h"
#include "pe_util.h"
#include "rw.h"

static bool is_neg(const Term *t) { return t->kind == T_PRIM && t->prim == PRIM_NEG; }

/* `length a`: a non-negative integer */
static bool is_length(const Term *t) { return t->kind == T_PRIM && t->prim == PRIM_LENGTH; }

/* `length a`, or a variable a let binds to one (`let k = length w`) */
static bool a_length(OptRw *c, const Term *t) {
  return is_length(t) || (t->kind == T_VAR && is_length(opt_rw_resolve(c, (Term *)t)));
}

static Term *neg(Span s, Term *x) { return fe_term_prim(s, x->type, PRIM_NEG, 1, &x); }

static Term *prim2(const Term *like, Prim p, Term *a, Term *b) {
  Term *k[2] = {a, b};
  return fe_term_prim(like->span, like->type, p, 2, k);
}

/* `if length a == 0 then map f a else map g a` (a a variable): both
   branches are the empty array when a is (map reads only a), so the
   else branch stands for both (a gradient's test for an empty matrix
   around its map over the rows). */
static bool empty_test_of_maps(OptRw *rw, Term *t) {
  const Term *c = t->kids[0], *x = opt_rw_resolve(rw, t->kids[1]), *y = opt_rw_resolve(rw, t->kids[2]);
  if (!(c->kind == T_PRIM && c->prim == PRIM_EQ && opt_is_num(c->kids[1], 0) && is_length(c->kids[0]))) return false;
  const Term *a = c->kids[0]->kids[0];
  if (a->kind != T_VAR) return false;
  for (int b = 0; b < 2; b++) {
    const Term *m = b ? y : x;
    if (!(m->kind == T_PRIM && m->prim == PRIM_MAP && m->kids[1]->kind == T_VAR && m->kids[1]->sym == a->sym))
      return false;
  }
  return true;
}

/* `(if b then 1 else 0) == 1` is b (a partial's selector, reverse/
   partials.c, tested: `== 0` is !b; either literal order); NULL when t
   is not such a test. */
static Term *selector_test(Term *t) {
  for (int side = 0; side < 2; side++) {
    Term *f = t->kids[side], *k = t->kids[1 - side];
    if (f->kind != T_IF || k->kind != T_NUM || f->kids[1]->kind != T_NUM || f->kids[2]->kind != T_NUM) continue;
    double a = f->kids[1]->num, b = f->kids[2]->num;
    if ((a == 1 && b == 0) || (a == 0 && b == 1)) {
      if (k->num == a) return f->kids[0];
      if (k->num == b) return fe_mk_op1(t->span, PRIM_NOT, f->kids[0]);
    }
  }
  return NULL;
}

static Term *fold_rule(OptRw *c, Term *t) {
  bool known;
  if (opt_rw_known(c, t, &known)) return fe_mk_bool(t->span, known);
  if (t->kind == T_IF && t->kids[0]->kind == T_BOOL) return t->kids[0]->b ? t->kids[1] : t->kids[2];
  if (t->kind == T_IF && opt_alpha_eq(t->kids[1], t->kids[2]) && opt_rw_safe(c, t->kids[0])) return t->kids[1];
  if (t->kind == T_IF && empty_test_of_maps(c, t)) return t->kids[2];
  if (t->kind == T_IF) {
    /* a branch that tests the condition again: its own branch is known */
    for (int b = 1; b <= 2; b++) {
      const Term *in = t->kids[b];
      if (in->kind != T_IF || !opt_alpha_eq(in->kids[0], t->kids[0])) continue;
      Term *k[3] = {t->kids[0], t->kids[1], t->kids[2]};
      k[b] = in->kids[b];
      return fe_mk_if(t->span, k[0], k[1], k[2]);
    }
  }
  if (t->kind != T_PRIM) return t;
  PrimClass cls = fe_prims[t->prim].cls;
  Term **k = t->kids;
  switch (cls) {
  case P_SCALAR1:
    if (k[0]->kind == T_NUM) return fe_mk_num(t->span, cpu_scalar1(t->prim, k[0]->num));
    if (t->prim == PRIM_NEG && k[0]->kind == T_PRIM && k[0]->prim == PRIM_NEG) return k[0]->kids[0];
    if (t->prim == PRIM_FLOOR && a_length(c, k[0])) return k[0]; /* an integer */
    return t;
  case P_SCALAR2:
    if (k[0]->kind == T_NUM && k[1]->kind == T_NUM)
      return fe_mk_num(t->span, cpu_scalar2(t->prim, k[0]->num, k[1]->num));
    switch (t->prim) {
    case PRIM_MUL:
      if (opt_is_num(k[1], 1)) return k[0];
      if (opt_is_num(k[0], 1)) return k[1];
      if (opt_is_num(k[0], -1)) return neg(t->span, k[1]);
      if (opt_is_num(k[1], -1)) return neg(t->span, k[0]);
      if (is_neg(k[0])) return neg(t->span, prim2(t, PRIM_MUL, k[0]->kids[0], k[1]));
      if (is_neg(k[1])) return neg(t->span, prim2(t, PRIM_MUL, k[0], k[1]->kids[0]));
      if (opt_is_num(k[1], 0) && k[0]->kind == T_PRIM && k[0]->prim == PRIM_LENGTH &&
          opt_rw_safe(c, k[0]))
        return k[1];
      if (opt_is_num(k[0], 0) && k[1]->kind == T_PRIM && k[1]->prim == PRIM_LENGTH &&
          opt_rw_safe(c, k[1]))
        return k[0];
      return t;
    case PRIM_ADD:
      if (opt_is_num(k[1], 0) || opt_is_num(k[1], -0.0)) return k[0];
      if (opt_is_num(k[0], 0) || opt_is_num(k[0], -0.0)) return k[1];
      if (is_neg(k[1])) return prim2(t, PRIM_SUB, k[0], k[1]->kids[0]);
      if (is_neg(k[0])) return prim2(t, PRIM_SUB, k[1], k[0]->kids[0]);
      return t;
    case PRIM_SUB:
      if (opt_is_num(k[1], 0)) return k[0];
      if (is_neg(k[1])) return prim2(t, PRIM_ADD, k[0], k[1]->kids[0]);
      if (a_length(c, k[0]) && opt_alpha_eq(k[0], k[1]) && opt_rw_safe(c, k[0])) return fe_mk_num(t->span, 0);
      return t;
    case PRIM_DIV:
      if (opt_is_num(k[1], 1)) return k[0];
      if (is_neg(k[0])) return neg(t->span, prim2(t, PRIM_DIV, k[0]->kids[0], k[1]));
      if (is_neg(k[1])) return neg(t->span, prim2(t, PRIM_DIV, k[0], k[1]->kids[0]));
      return t;
    case PRIM_POW:
      if (opt_is_num(k[1], 1)) return k[0];
      return t;
    default: return t;
    }
  case P_CMP:
    if (k[0]->kind == T_NUM && k[1]->kind == T_NUM)
      return fe_mk_bool(t->span, cpu_compare(t->prim, k[0]->num, k[1]->num));
    if (k[0]->kind == T_BOOL && k[1]->kind == T_BOOL && (t->prim == PRIM_EQ || t->prim == PRIM_NE))
      return fe_mk_bool(t->span, (k[0]->b == k[1]->b) == (t->prim == PRIM_EQ));
    /* a length (an integer, never nan) compared with itself */
    if (a_length(c, k[0]) && opt_alpha_eq(k[0], k[1]) && opt_rw_safe(c, k[0]))
      return fe_mk_bool(t->span, t->prim == PRIM_EQ || t->prim == PRIM_LE || t->prim == PRIM_GE);
    if (t->prim == PRIM_EQ) {
      Term *sel = selector_test(t);
      if (sel) return sel;
    }
    return t;
  case P_LOGIC: {
    bool is_and = t->prim == PRIM_AND;
    if (k[0]->kind == T_BOOL) return k[0]->b == is_and ? k[1] : k[0];
    if (k[1]->kind == T_BOOL) {
      if (k[1]->b == is_and) return k[0];
      if (opt_rw_safe(c, k[0])) return k[1];
    }
    return t;
  }
  case P_NOT:
    if (k[0]->kind == T_BOOL) return fe_mk_bool(t->span, !k[0]->b);
    if (k[0]->kind == T_PRIM && k[0]->prim == PRIM_NOT) return k[0]->kids[0];
    return t;
  case P_ARRAY: return t;
  }
  return t;
}

/* The algebraic simplifications and constant folding above, everywhere in t. */
Term *opt_algebra(const Term *t) { return opt_rw_run(t, fold_rule); }
