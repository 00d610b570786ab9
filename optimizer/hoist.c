/* hoist.c: loop-invariant arrays out of the functions of the array
   builtins. A function passed to map, map2, reduce, a loop, ... is
   evaluated once per element or iteration; a subterm of its body that is
   an array, mentions no variable bound inside the function (its
   parameters, its lets), cannot raise and has no effect, is computed once
   instead, by a let before the builtin:
     map (r. dot r (map (y. 2 * y) x)) m
       -> let v = map (y. 2 * y) x in map (r. dot r v) m
   The largest such subterms are taken (builtins' results; array literals
   are left where they are). Moving one out of a branch or out
   of a builtin over an empty array evaluates it where the program may not
   have: it cannot raise, so only the work differs. (A read by index that
   cannot raise only where it stands, a gradient's replay, stays.) Fusion then leaves the
   hoisted array alone (it is no longer in the same lambda body as its
   consumer), so a map of dot products against it stays a matrix-vector
   product. Inner builtins are done first, so an invariant climbs out of
   every function it does not depend on. */
#include "passes.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "pe_util.h"


/* How many functions inside a function are looked into for invariants. */
#define MAX_NEST 2

typedef struct Hoist {
  PtrMap inside;   /* Syms bound inside the function being scanned */
  int nest;        /* functions entered inside it */
  Sym **xs;        /* the hoisted lets, in order */
  Term **rhs;
  int n, cap;
} Hoist;

static Term *visit(const Term *t);
static Term *scan(Hoist *h, const Term *t, intptr_t depth, intptr_t *minb);
static Term *scan_node(Hoist *h, const Term *t, intptr_t depth, intptr_t *minb);

/* The largest term hoisted: checking that a term cannot raise walks it,
   so the walk is bounded (a deep nest of invariant maps stays linear). */
#define MAX_HOIST 1000

/* Whether t reads by index (an index, a slice, a scatter) or loops a
   counted number of times. Such a read marked checked (term.h) is in range
   where it stands (a gradient's replay of the primal, under the primal's
   branch and inside its loop), not necessarily outside: it is never
   hoisted, though opt_may_raise trusts the mark. */
static bool reads_by_index(const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_PRIM && (t->prim == PRIM_INDEX || t->prim == PRIM_SLICE || t->prim == PRIM_REDUCE_BY_INDEX ||
                            t->prim == PRIM_LOOP_FOR))
    return true;
  for (int i = 0; i < t->nkids; i++)
    if (reads_by_index(t->kids[i])) return true;
  return false;
}

static bool hoistable(const Term *t) {
  return t->type && t->type->kind == TY_ARRAY && t->kind == T_PRIM && t->nkids > 0 &&
         fe_term_size_upto(t, MAX_HOIST) <= MAX_HOIST && !opt_may_raise(t) && !reads_by_index(t);
}

static Term *bind(Hoist *h, Term *t) {
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 4;
    Sym **xs = NEW_ARRAY(Sym *, h->cap);
    Term **rs = NEW_ARRAY(Term *, h->cap);
    if (h->n) {
      memcpy(xs, h->xs, sizeof(Sym *) * (size_t)h->n);
      memcpy(rs, h->rhs, sizeof(Term *) * (size_t)h->n);
    }
    h->xs = xs;
    h->rhs = rs;
  }
  Sym *x = fe_mk_sym("inv", t->type, t->span);
  h->xs[h->n] = x;
  h->rhs[h->n++] = t;
  return fe_mk_var(t->span, x);
}

/* The depth of a variable's binder, counted in nodes from the function's
   LAM (depth 0); an occurrence of it is free in a subterm rooted deeper. */
static void mark_binders(Hoist *h, const Term *t, intptr_t depth) {
  void *d = (void *)(depth + 1);
  if (t->kind == T_LET) ptrmap_put(&h->inside, t->sym, d);
  if (t->kind == T_LETTUP || t->kind == T_LAM)
    for (int i = 0; i < t->nsyms; i++) ptrmap_put(&h->inside, t->syms[i], d);
}

#define NONE INTPTR_MAX

/* t, at depth in the function, with its invariant kids hoisted; *minb:
   the least depth of the binders of the variables it mentions (NONE for
   none): t mentions a variable bound inside the function, outside t,
   when *minb < depth. An invariant t is left to its parent, which hoists
   the largest invariant parts. */
static Term *scan(Hoist *h, const Term *t, intptr_t depth, intptr_t *minb) {
  fe_stack_check(t->span);
  if (t->kind == T_LAM && depth > 0 && ++h->nest > MAX_NEST) {
    /* deeper functions are not looked into (each node is scanned for at
       most MAX_NEST + 1 enclosing functions: linear); taken as depending */
    h->nest--;
    *minb = -1;
    return (Term *)t;
  }
  Term *r = scan_node(h, t, depth, minb);
  if (t->kind == T_LAM && depth > 0) h->nest--;
  return r;
}

static Term *scan_node(Hoist *h, const Term *t, intptr_t depth, intptr_t *minb) {
  mark_binders(h, t, depth);
  if (t->kind == T_VAR) {
    intptr_t d = (intptr_t)ptrmap_get(&h->inside, t->sym);
    *minb = d ? d - 1 : NONE;
    return (Term *)t;
  }
  *minb = NONE;
  if (t->nkids == 0) return (Term *)t;
  intptr_t *kb = NEW_ARRAY(intptr_t, t->nkids);
  OPT_KIDS(kids, t->nkids);
  bool changed = false;
  for (int i = 0; i < t->nkids; i++) {
    kids[i] = scan(h, t->kids[i], depth + 1, &kb[i]);
    if (kb[i] < *minb) *minb = kb[i];
    changed |= kids[i] != t->kids[i];
  }
  if (*minb < depth) /* t depends: its invariant kids go out */
    for (int i = 0; i < t->nkids; i++)
      if (kb[i] >= depth + 1 && hoistable(kids[i])) {
        kids[i] = bind(h, kids[i]);
        changed = true;
      }
  return changed ? opt_with_kids(t, kids) : (Term *)t;
}

/* An array builtin: its kids done first, then the invariants of its
   functions bound before it. */
static Term *builtin(const Term *t) {
  OPT_KIDS(kids, t->nkids);
  bool changed = false;
  for (int i = 0; i < t->nkids; i++) {
    kids[i] = visit(t->kids[i]);
    changed |= kids[i] != t->kids[i];
  }
  Hoist h = {0};
  for (int i = 0; i < t->nkids; i++) {
    if (kids[i]->kind != T_LAM) continue;
    intptr_t minb;
    Term *lam = kids[i];
    ptrmap_init(&h.inside, 16);
    Term *body = scan(&h, lam, 0, &minb);
    if (minb >= 1 && hoistable(body->kids[0])) { /* the whole body is invariant */
      Term *k[1] = {bind(&h, body->kids[0])};
      body = opt_with_kids(body, k);
    }
    if (body != lam) {
      kids[i] = body;
      changed = true;
    }
  }
  Term *r = changed ? opt_with_kids(t, kids) : (Term *)t;
  for (int i = h.n - 1; i >= 0; i--) r = fe_mk_let(t->span, h.xs[i], h.rhs[i], r);
  return r;
}

static Term *visit(const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_PRIM && fe_prims[t->prim].cls == P_ARRAY) return builtin(t);
  if (t->nkids == 0) return (Term *)t;
  /* let chains by a loop: they are long */
  if (t->kind == T_LET || t->kind == T_LETTUP) {
    const Term *cur = t;
    int n = 0;
    while (cur->kind == T_LET || cur->kind == T_LETTUP) {
      n++;
      cur = cur->kids[1];
    }
    const Term **nodes = NEW_ARRAY(const Term *, n);
    Term **rhs = NEW_ARRAY(Term *, n);
    bool changed = false;
    cur = t;
    for (int i = 0; i < n; i++) {
      nodes[i] = cur;
      rhs[i] = visit(cur->kids[0]);
      changed |= rhs[i] != cur->kids[0];
      cur = cur->kids[1];
    }
    Term *body = visit(cur);
    if (!changed && body == cur) return (Term *)t;
    for (int i = n - 1; i >= 0; i--) {
      Term *k[2] = {rhs[i], body};
      body = opt_with_kids(nodes[i], k);
    }
    return body;
  }
  OPT_KIDS(kids, t->nkids);
  bool changed = false;
  for (int i = 0; i < t->nkids; i++) {
    kids[i] = visit(t->kids[i]);
    changed |= kids[i] != t->kids[i];
  }
  return changed ? opt_with_kids(t, kids) : (Term *)t;
}

/* Invariant arrays hoisted out of the functions of the array builtins. */
Term *opt_hoist(const Term *t) { return visit(t); }
