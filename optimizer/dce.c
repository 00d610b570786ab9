/* dce.c: dead-let elimination: a let (or let-tuple) none of whose
   variables is used is dropped when its right-hand side cannot raise and
   has no effect (opt_may_raise). Chains are processed from their end, and
   the uses inside a dropped right-hand side are discounted at once, so a
   whole chain of dead lets goes in one pass.

   A dead `map2 f A B` (A and B variables, f unable to raise) raises only
   when the lengths of A and B differ. It goes too when a later binding of
   the same chain is a map2 of the same A and B at the same source
   position (so its error is the same, word for word) and nothing between
   them can raise: the gradient of sum (map2 f w y) keeps its primal map2
   only for that error, and the map2 of its partials raises it.

   Any other dead let that may raise keeps only what raises its errors
   (raises.c): a dead map whose function gathers computes its gathers and
   their indices only (a vector-Jacobian product's map of tuples, kept
   after each component was given a map of its own), and a gradient's
   primal kept for its errors checks lengths instead of computing its
   matrix products.

   A let-tuple some of whose variables are unused loses them when the
   dropped components cannot raise (see bind_narrowed). */
#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"
#include "passes.h"
#include "pe_util.h"
#include "raises.h"

#include <string.h>

static Term *visit(void *ctx, const Term *t);

/* True when no variable bound by the let node t is used. */
static bool dead(OptSymMap *uses, const Term *t) {
  if (t->kind == T_LET) return opt_map_count(uses, t->sym) == 0;
  for (int i = 0; i < t->nsyms; i++)
    if (opt_map_count(uses, t->syms[i]) != 0) return false;
  return true;
}

static bool same_span(Span a, Span b) {
  return a.line == b.line && a.col == b.col && (a.file == b.file || (a.file && b.file && strcmp(a.file, b.file) == 0));
}

/* True when r is `map2 f A B` for variables A and B and an f that cannot
   raise: it raises only when the lengths of A and B differ. */
static bool length_check(const Term *r) {
  return r->kind == T_PRIM && r->prim == PRIM_MAP2 && r->kids[0]->kind == T_LAM && r->kids[1]->kind == T_VAR &&
         r->kids[2]->kind == T_VAR && !opt_may_raise(r->kids[0]->kids[0]);
}

/* True when r is a map2 of the same arrays as the length check c, at the
   same source position. */
static bool same_check(const Term *r, const Term *c) {
  return r->kind == T_PRIM && r->prim == PRIM_MAP2 && r->kids[1]->kind == T_VAR && r->kids[2]->kind == T_VAR &&
         r->kids[1]->sym == c->kids[1]->sym && r->kids[2]->sym == c->kids[2]->sym && same_span(r->span, c->span);
}

/* True when evaluating r raises the check c first: r is the same check,
   or a reduce, fold or scan whose initial value cannot raise and whose
   array is such a term. */
static bool leads_with(const Term *r, const Term *c) {
  for (;;) {
    if (same_check(r, c)) return true;
    if (r->kind != T_PRIM || r->nkids != 3 || opt_may_raise(r->kids[1])) return false;
    if (r->prim != PRIM_REDUCE && r->prim != PRIM_FOLDL && r->prim != PRIM_SCANL && r->prim != PRIM_SCANR) return false;
    r = r->kids[2];
  }
}

/* True when the dead length check lets[i] is raised again, word for word,
   by a later binding (or the tail) with nothing that can raise between. */
static bool checked_later(const Term **lets, long i, long n, const Term *tail) {
  const Term *c = lets[i]->kids[0];
  if (!length_check(c)) return false;
  for (long j = i + 1; j < n; j++) {
    const Term *r = lets[j]->kids[0];
    if (leads_with(r, c)) return true;
    if (opt_may_raise(r)) return false;
  }
  return leads_with(tail, c);
}

/* ---- dead right-hand sides that may raise ---- */

/* The dead right-hand side r that may raise reduced to its errors
   (raises.c), the uses counted again; r itself when that changes nothing
   or r is too large to walk (NULL: nothing of it raises). */
enum { MAX_ERRORS_WALK = 4000 };

static Term *errors_form(OptSymMap *uses, Term *r) {
  if (fe_term_size_upto(r, MAX_ERRORS_WALK) >= MAX_ERRORS_WALK) return r;
  Term *e = opt_errors_of(r);
  if (e && opt_alpha_eq(e, r)) return r;
  opt_count_uses(r, uses, -1);
  if (e) opt_count_uses(e, uses, 1);
  return e;
}

/* ---- unused components of a let-tuple ----

   `let (g, h) = if c then (e1, e2) else (let .. in (e3, e4)) in body` with g
   unused becomes `let h = if c then e2 else (let .. in e4) in body` when
   the dropped components cannot raise: the right-hand side is narrowed at
   each of its tuple leaves, through if and let. */

/* True when every leaf of t (through if, let, let-tuple) is a tuple of n
   components whose dropped ones (keep[i] false) cannot raise. */
static bool narrowable(const Term *t, const bool *keep, int n) {
  for (;;) {
    switch (t->kind) {
    case T_LET:
    case T_LETTUP: t = t->kids[1]; continue;
    case T_IF:
      if (!narrowable(t->kids[1], keep, n)) return false;
      t = t->kids[2];
      continue;
    case T_TUPLE:
      if (t->nkids != n) return false;
      for (int i = 0; i < n; i++)
        if (!keep[i] && opt_may_raise(t->kids[i])) return false;
      return true;
    default: return false;
    }
  }
}

/* t narrowed to its kept components (nkeep of them: one is the component
   itself); the uses in the dropped ones are discounted. */
static Term *narrow(OptSymMap *uses, const Term *t, const bool *keep, int n, int nkeep) {
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_LET: return fe_mk_let(t->span, t->sym, t->kids[0], narrow(uses, t->kids[1], keep, n, nkeep));
  case T_LETTUP:
    return fe_mk_lettup(t->span, t->nsyms, t->syms, t->kids[0], narrow(uses, t->kids[1], keep, n, nkeep));
  case T_IF:
    return fe_mk_if(t->span, t->kids[0], narrow(uses, t->kids[1], keep, n, nkeep),
                    narrow(uses, t->kids[2], keep, n, nkeep));
  case T_TUPLE: {
    Term **items = NEW_ARRAY(Term *, n);
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (keep[i]) items[m++] = t->kids[i];
      else opt_count_uses(t->kids[i], uses, -1);
    }
    return nkeep == 1 ? items[0] : fe_mk_tuple(t->span, m, items);
  }
  default: UNREACHABLE();
  }
}

/* Appends the binding of the let-tuple l with its unused variables dropped
   when its right-hand side r can be narrowed; false otherwise. */
static bool bind_narrowed(OptBinds *b, OptSymMap *uses, const Term *l, Term *r) {
  if (l->kind != T_LETTUP) return false;
  int n = l->nsyms, nkeep = 0;
  bool *keep = NEW_ARRAY(bool, n);
  Sym **xs = NEW_ARRAY(Sym *, n);
  for (int i = 0; i < n; i++)
    if ((keep[i] = opt_map_count(uses, l->syms[i]) != 0)) xs[nkeep++] = l->syms[i];
  if (nkeep == n || nkeep == 0 || !narrowable(r, keep, n)) return false;
  Term *nr = narrow(uses, r, keep, n, nkeep);
  if (nkeep == 1) {
    opt_binds_let(b, l->span, xs[0], nr);
  } else {
    opt_binds_let(b, l->span, xs[0], nr);
    OptBind *e = &b->v[b->n - 1];
    e->tup = true;
    e->xs = xs;
    e->n = nkeep;
  }
  return true;
}

/* A let chain, from its end back to its start. */
static Term *chain(OptSymMap *uses, const Term *t) {
  long n = 0, cap = 8;
  const Term **lets = NEW_ARRAY(const Term *, cap);
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    if (n == cap) {
      const Term **v = NEW_ARRAY(const Term *, 2 * cap);
      memcpy(v, lets, sizeof *v * (size_t)n);
      lets = v;
      cap *= 2;
    }
    lets[n++] = cur;
    cur = cur->kids[1];
  }
  Term *tail = visit(uses, cur);
  bool changed = tail != cur;
  Term **rhs = NEW_ARRAY(Term *, n);
  Sym **checks = NEW_ARRAY(Sym *, n); /* a dead map's check form: its new variable */
  for (long i = n - 1; i >= 0; i--) {
    const Term *l = lets[i];
    Term *cf;
    if (dead(uses, l) && (!opt_may_raise(l->kids[0]) || checked_later(lets, i, n, cur))) {
      opt_count_uses(l->kids[0], uses, -1);
      rhs[i] = NULL;
      changed = true;
    } else if (l->kind == T_LET && dead(uses, l) && !l->sym->errors_only &&
               (cf = errors_form(uses, l->kids[0])) != l->kids[0]) {
      rhs[i] = cf ? visit(uses, cf) : NULL;
      if (cf) {
        checks[i] = fe_mk_sym(l->sym->name, rhs[i]->type, l->sym->span);
        checks[i]->errors_only = true;
      }
      changed = true;
    } else {
      rhs[i] = visit(uses, l->kids[0]);
      if (rhs[i] != l->kids[0]) changed = true;
    }
  }
  OptBinds b = {0};
  for (long i = 0; i < n; i++) {
    if (!rhs[i]) continue;
    if (checks[i]) opt_binds_let(&b, lets[i]->span, checks[i], rhs[i]);
    else if (bind_narrowed(&b, uses, lets[i], rhs[i])) changed = true;
    else opt_binds_node(&b, lets[i], rhs[i]);
  }
  if (!changed) return (Term *)t;
  return opt_build_chain(&b, 0, tail);
}

static Term *visit(void *ctx, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return chain(ctx, t);
  return opt_map_kids(t, visit, ctx);
}

/* Dead-let elimination. */
Term *opt_dce(const Term *t) {
  OptSymMap *uses = opt_map_new();
  opt_count_uses(t, uses, 1);
  return visit(uses, t);
}
