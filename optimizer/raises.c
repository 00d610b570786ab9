/* raises.c: what a value kept only for its errors still has to compute.

   dce keeps a dead let whose right-hand side may raise: a gradient keeps
   its primal for the primal's errors (the replays it reads are checked by
   construction). Such a let needs none of its value, only its errors, in
   the same order, word for word. opt_errors_of(t) is t reduced to them:

     E(t)             nothing (NULL) when t cannot raise
     E(let x = r in b)  E(b) first; then r is kept whole when E(b) reads
                      x, reduced to its shape S(r) when E(b) reads only
                      x's length (length x, or x mapped by a function that
                      ignores its element), and to E(r) when E(b) does not
                      read x at all
     E(map f A..)     the function's body reduced to E(body); a function
                      that cannot raise leaves only its arrays' errors (map)
                      or their length check (map2 (p, q. 0) S(A) S(B): the
                      plan's check kernel, nothing computed)
     E(reduce, foldl, scanl, scanr g z A) with g unable to raise: E(z),
                      then E(A) (the engine evaluates z first)
     E(tuple), E(projection), E(a builtin that cannot raise by itself):
                      its parts' errors in order

   S(t), for an array t, keeps t's type, its length and its errors but
   not its elements: S(map f A) = map (p. E(body) or 0) A', where A' is
   S(A) when the function does not read its element.

   So the MLP's dead primal, `map (xi. let hid = map2 (z, b. tanh (z +
   b)) (matvec w1 xi) b1 in ...) x`, becomes the row-length checks of its
   two matrix-vector products and its two map2s' length checks, instead of
   a matrix product and tanh of all of it again (the engine runs a map of
   row checks as a loop over the rows' lengths: array_ops.c).

   Anything else is kept as it is (an index, an iota, a transpose, a
   call): E never adds work. E is idempotent up to the names of its new
   variables, which dce relies on to reach its fixpoint. */
#include "raises.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"
#include "pe_util.h"
#include "rw.h"

static Term *errors_of(const Term *t);
static Term *shape_of(const Term *t);

static bool is_map(const Term *t) {
  return t->kind == T_PRIM && (t->prim == PRIM_MAP || t->prim == PRIM_MAP2 || t->prim == PRIM_MAP3) &&
         t->kids[0]->kind == T_LAM;
}

static bool is_fold(const Term *t) {
  return t->kind == T_PRIM && t->nkids == 3 && t->kids[0]->kind == T_LAM &&
         (t->prim == PRIM_REDUCE || t->prim == PRIM_FOLDL || t->prim == PRIM_SCANL || t->prim == PRIM_SCANR);
}

/* Counts x's occurrences in t (*all) and those that read only its length
   (*shape): `length x`, x as an array of a map whose function ignores
   that element, or x as an array of a dead let's map whose function
   cannot raise (a length check: its function is never run). */
static void census(const Term *t, const Sym *x, long *all, long *shape) {
  fe_stack_check(t->span);
  if (t->kind == T_VAR) {
    if (t->sym == x) (*all)++;
    return;
  }
  if (t->kind == T_LET && is_map(t->kids[0]) && !opt_may_raise(t->kids[0]->kids[0]->kids[0]) &&
      !opt_mentions(t->kids[1], t->sym)) {
    const Term *m = t->kids[0];
    for (int i = 1; i < m->nkids; i++) {
      if (m->kids[i]->kind == T_VAR && m->kids[i]->sym == x) (*all)++, (*shape)++;
      else census(m->kids[i], x, all, shape);
    }
    census(m->kids[0], x, all, shape);
    census(t->kids[1], x, all, shape);
    return;
  }
  if (t->kind == T_PRIM && t->prim == PRIM_LENGTH && t->kids[0]->kind == T_VAR) {
    if (t->kids[0]->sym == x) (*all)++, (*shape)++;
    return;
  }
  if (is_map(t)) {
    const Term *lam = t->kids[0];
    for (int i = 1; i < t->nkids; i++) {
      if (t->kids[i]->kind == T_VAR && t->kids[i]->sym == x && !opt_mentions(lam->kids[0], lam->syms[i - 1]))
        (*all)++, (*shape)++;
      else census(t->kids[i], x, all, shape);
    }
    census(lam->kids[0], x, all, shape);
    return;
  }
  for (int i = 0; i < t->nkids; i++) census(t->kids[i], x, all, shape);
}

/* a's errors, then b's: NULL when neither raises. */
static Term *then(Span s, Term *a, Term *b) {
  if (!a) return b;
  if (!b || opt_alpha_eq(a, b)) return a; /* the same errors again: raised by a first */
  return fe_mk_let(s, fe_mk_sym("c", a->type, s), a, b);
}

/* The errors e as a real: e itself when it is one, else `let c = e in 0`
   (at the end of e's let chain); 0 when e is NULL. */
static Term *as_real(Span s, Term *e) {
  if (!e) return fe_mk_num(s, 0);
  if (e->type->kind == TY_REAL) return e;
  if (e->kind == T_LET) return fe_mk_let(e->span, e->sym, e->kids[0], as_real(s, e->kids[1]));
  if (e->kind == T_LETTUP) return fe_mk_lettup(e->span, e->nsyms, e->syms, e->kids[0], as_real(s, e->kids[1]));
  return fe_mk_let(s, fe_mk_sym("c", e->type, s), e, fe_mk_num(s, 0));
}

/* The let chain t reduced to its errors. */
static Term *errors_of_lets(const Term *t) {
  long n = 0;
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) n++, cur = cur->kids[1];
  const Term **lets = NEW_ARRAY(const Term *, n);
  n = 0;
  for (cur = t; cur->kind == T_LET || cur->kind == T_LETTUP; cur = cur->kids[1]) lets[n++] = cur;
  Term *acc = errors_of(cur);
  for (long i = n - 1; i >= 0; i--) {
    const Term *l = lets[i];
    Term *r = l->kids[0];
    if (l->kind == T_LET) {
      long all = 0, shape = 0;
      if (acc) census(acc, l->sym, &all, &shape);
      if (all == 0) acc = then(l->span, errors_of(r), acc);
      else acc = fe_mk_let(l->span, l->sym, all == shape ? shape_of(r) : r, acc);
      continue;
    }
    bool used = false;
    for (int k = 0; acc && k < l->nsyms && !used; k++) used = opt_mentions(acc, l->syms[k]);
    acc = used ? fe_mk_lettup(l->span, l->nsyms, l->syms, r, acc) : then(l->span, errors_of(r), acc);
  }
  return acc;
}

/* The map t with its function's body replaced by body (a real) and its
   arrays by their shapes where the function ignores their elements (all
   of them: a length check, whose function is never run); map2's and
   map3's checked flag kept; t itself when nothing changes. */
static Term *remap(const Term *t, Term *body, bool check) {
  const Term *lam = t->kids[0];
  int n = t->nkids;
  bool same = body == lam->kids[0];
  Term **k = NEW_ARRAY(Term *, n);
  for (int i = 1; i < n; i++) {
    k[i] = !check && opt_mentions(body, lam->syms[i - 1]) ? t->kids[i] : shape_of(t->kids[i]);
    same = same && k[i] == t->kids[i];
  }
  if (same) return (Term *)t;
  k[0] = fe_mk_lam(lam->span, lam->nsyms, lam->syms, body);
  if (t->prim == PRIM_MAP) return fe_mk_map(t->span, k[0], k[1]);
  if (t->prim == PRIM_MAP2) return opt_checked_as(fe_mk_map2(t->span, k[0], k[1], k[2]), t);
  return opt_checked_as(fe_mk_array_prim(t->span, PRIM_MAP3, 4, k), t);
}

static Term *errors_of_map(const Term *t) {
  Term *body = errors_of(t->kids[0]->kids[0]);
  if (!body && (t->prim == PRIM_MAP || t->b)) { /* only its arrays raise */
    Term *e = NULL;
    for (int i = t->nkids - 1; i >= 1; i--) e = then(t->span, errors_of(t->kids[i]), e);
    return e;
  }
  /* a length check (the plan's check kernel: its function is never run):
     kept as written when its arrays are */
  if (!body) return remap(t, (Term *)t->kids[0]->kids[0], true);
  return remap(t, as_real(t->span, body), false);
}

static Term *errors_of(const Term *t) {
  fe_stack_check(t->span);
  if (!opt_may_raise(t)) return NULL;
  switch (t->kind) {
  case T_LET:
  case T_LETTUP: return errors_of_lets(t);
  case T_TUPLE: {
    Term *e = NULL;
    for (int i = t->nkids - 1; i >= 0; i--) e = then(t->span, errors_of(t->kids[i]), e);
    return e;
  }
  case T_PROJ: return errors_of(t->kids[0]);
  case T_PRIM:
    if (is_map(t)) return errors_of_map(t);
    if (is_fold(t) && !opt_may_raise(t->kids[0]->kids[0]))
      return then(t->span, errors_of(t->kids[1]), errors_of(t->kids[2]));
    if (fe_prims[t->prim].effect == E_PURE) {
      for (int i = 0; i < t->nkids; i++)
        if (t->kids[i]->kind == T_LAM) return (Term *)t;
      Term *e = NULL;
      for (int i = t->nkids - 1; i >= 0; i--) e = then(t->span, errors_of(t->kids[i]), e);
      return e;
    }
    return (Term *)t;
  default: return (Term *)t;
  }
}

/* The array t with its length and errors and its type, its elements not
   needed. */
static Term *shape_of(const Term *t) {
  fe_stack_check(t->span);
  if (!is_map(t) || t->type->elem->kind != TY_REAL) return (Term *)t;
  return remap(t, as_real(t->span, errors_of(t->kids[0]->kids[0])), false);
}

Term *opt_errors_of(const Term *t) { return errors_of(t); }
