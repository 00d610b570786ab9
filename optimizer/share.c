/* share.c: an expensive elementwise value computed by two maps over the
   same array, computed once. In a let chain,

     let dt = 1 / reduce (+) 0 (map (v. exp (v - a)) x) in
     map (w. dt * exp (w - a)) x
       ->  let e = map (v. exp (v - a)) x in
           let dt = 1 / reduce (+) 0 e in
           map (y. dt * y) e

   (the gradient of logsumexp, of a softmax): the first map, the array of
   a reduce, fold or scan or a call's argument, has a function E that holds a nonlinear
   builtin (exp, log, tanh, ...; cost class NLOPS) and cannot raise, a
   later map over the same variable x has E (its parameter for v) inside
   its function, and E reads nothing bound inside
   the chain after the first map's let. The first map becomes a let of its
   own just before the let it was in (it cannot raise, so moving it before
   that let's other parts changes nothing observable), read there and by
   the later map, whose E is its element. The later map reads x only
   through E becomes a map over e; else a map2 over x and e (checked: e
   has x's length). When the first map is already a let's right-hand
   side, and a reduce, fold, scan or call reads its variable, that
   variable is the stored array. (Only there: a stored array that maps
   alone read is fused into each of them again by fusion.c, and the two
   passes would undo each other.) The array e is stored, where each map
   computed E before (a store and two loads instead of twice the exponentials: at
   160,000 elements the logsumexp gradient 0.71 -> 0.55 ms). */
#include "passes.h"

#include "../frontend/ir/build.h"
#include "pe_util.h"
#include "rw.h"

#include <string.h>

/* How far apart (in lets) two maps are looked for, how large a later
   map's function is searched, and how many values one chain shares: the
   pass stays linear in the program. */
enum { SHARE_WINDOW = 32, SHARE_BODY_MAX = 400, SHARE_MAX = 64 };

static bool is_map1(const Term *t) {
  return t->kind == T_PRIM && t->prim == PRIM_MAP && t->kids[0]->kind == T_LAM && t->kids[1]->kind == T_VAR &&
         t->type->elem->kind == TY_REAL;
}

/* Whether t holds a nonlinear builtin. */
static bool expensive(const Term *t) {
  if (t->kind == T_PRIM && fe_prims[t->prim].cost == COST_NLOPS) return true;
  for (int i = 0; i < t->nkids; i++)
    if (expensive(t->kids[i])) return true;
  return false;
}

/* Whether m is a map whose function is expensive and cannot raise: what
   is worth storing, and may be computed before the let it was in. */
static bool worth_storing(const Term *m) {
  return is_map1(m) && expensive(m->kids[0]->kids[0]) && !opt_may_raise(m->kids[0]->kids[0]);
}

/* The first map over a variable whose function is expensive and cannot
   raise that is the array of a reduce, a fold or a scan or a call's
   argument (`sum (map ...)`), in t outside
   lambdas and lets (a let's right-hand side); NULL. Its stored array is
   then read by that builtin or call, not by maps only: fusion.c, which
   fuses a map read only by maps into each of them, leaves it stored. */
static const Term *first_map(const Term *t, int depth) {
  /* not past a binder: the map must read only what the chain binds */
  if (depth > 8 || t->kind == T_LAM || t->kind == T_LET || t->kind == T_LETTUP) return NULL;
  bool fold = t->kind == T_PRIM && t->nkids == 3 &&
              (t->prim == PRIM_REDUCE || t->prim == PRIM_FOLDL || t->prim == PRIM_SCANL || t->prim == PRIM_SCANR);
  for (int i = fold ? 2 : 0; (fold || t->kind == T_CALL) && i < t->nkids; i++) {
    const Term *m = t->kids[i];
    if (worth_storing(m)) return m;
  }
  for (int i = 0; i < t->nkids; i++) {
    const Term *m = first_map(t->kids[i], depth + 1);
    if (m) return m;
  }
  return NULL;
}

/* Whether t is e with v renamed w: (w. t) against (v. e), after a check
   of the roots that needs no lambda built. */
static bool is_copy(const Term *t, const Term *lam_e, const Sym *w) {
  const Term *e = lam_e->kids[0];
  if (t->kind != e->kind || t->prim != e->prim || t->nkids != e->nkids) return false;
  Sym *ws[1] = {(Sym *)w};
  return opt_alpha_eq(lam_e, fe_mk_lam(t->span, 1, ws, (Term *)t));
}

static bool has_copy(const Term *t, const Term *lam_e, const Sym *w) {
  if (t->kind == T_LAM) return false;
  if (is_copy(t, lam_e, w)) return true;
  for (int i = 0; i < t->nkids; i++)
    if (has_copy(t->kids[i], lam_e, w)) return true;
  return false;
}

/* t with its subterms equal to e (v renamed w) replaced by the variable y. */
static Term *with_elem(const Term *t, const Term *lam_e, const Sym *w, Sym *y) {
  if (t->kind == T_LAM) return (Term *)t;
  if (is_copy(t, lam_e, w)) return fe_mk_var(t->span, y);
  OPT_KIDS(k, t->nkids);
  for (int i = 0; i < t->nkids; i++) k[i] = with_elem(t->kids[i], lam_e, w, y);
  return opt_with_kids(t, k);
}

/* The first map over x outside lambdas in t whose function has a copy of
   lam_e's body; NULL. */
static const Term *second_map(const Term *t, const Sym *x, const Term *lam_e, int depth) {
  if (depth > 8 || t->kind == T_LAM) return NULL;
  if (is_map1(t) && t->kids[1]->sym == x && t->kids[0]->kids[0] != lam_e->kids[0] &&
      fe_term_size_upto(t->kids[0], SHARE_BODY_MAX + 1) <= SHARE_BODY_MAX &&
      has_copy(t->kids[0]->kids[0], lam_e, t->kids[0]->syms[0]))
    return t;
  for (int i = 0; i < t->nkids; i++) {
    const Term *m = second_map(t->kids[i], x, lam_e, depth + 1);
    if (m) return m;
  }
  return NULL;
}

static Term *visit(void *ctx, const Term *t);

/* Whether the variable x is the array of a reduce, fold or scan, or a
   call's argument, in t. */
static bool folded(const Term *t, const Sym *x) {
  bool fold = t->kind == T_PRIM && t->nkids == 3 &&
              (t->prim == PRIM_REDUCE || t->prim == PRIM_FOLDL || t->prim == PRIM_SCANL || t->prim == PRIM_SCANR);
  for (int i = 0; i < t->nkids; i++) {
    const Term *k = t->kids[i];
    if (k->kind == T_VAR && k->sym == x && ((fold && i == 2) || t->kind == T_CALL)) return true;
    if (folded(k, x)) return true;
  }
  return false;
}

/* In the bindings b and tail: the first map of let i, if any, shared
   with a later map (and the new let added); false when none is found. A
   let whose right-hand side is such a map, and whose variable a reduce,
   fold, scan or call reads, is the stored array itself. */
static bool share_one(OptBinds *b, Term **tail, long i) {
  const Term *m1 = first_map(b->v[i].rhs, 0);
  bool whole = false;
  if (!m1 && !b->v[i].tup && worth_storing(b->v[i].rhs)) {
    for (long j = i + 1; j < b->n && !whole; j++) whole = folded(b->v[j].rhs, b->v[i].x);
    whole = whole || folded(*tail, b->v[i].x);
    if (whole) m1 = b->v[i].rhs;
  }
  if (!m1) return false;
  const Term *lam = m1->kids[0];
  const Sym *x = m1->kids[1]->sym;
  /* E must read nothing bound by this let or later ones: it stands
     before let i */
  for (long j = i; j < b->n; j++)
    for (int k = 0; k < b->v[j].n; k++)
      if (opt_mentions(lam->kids[0], b->v[j].tup ? b->v[j].xs[k] : b->v[j].x)) return false;
  for (long j = whole ? i + 1 : i; j <= b->n && j <= i + SHARE_WINDOW; j++) {
    Term *rj = j < b->n ? b->v[j].rhs : *tail;
    const Term *m2 = second_map(rj, x, lam, 0);
    if (!m2 || m2 == m1) continue;
    Span sp = m1->span;
    Sym *e = whole ? b->v[i].x : fe_mk_sym("e", m1->type, sp);
    Sym *y = fe_mk_sym("y", fe_ty_real(), sp);
    const Term *l2 = m2->kids[0];
    Term *body = with_elem(l2->kids[0], lam, l2->syms[0], y);
    Term *nm;
    if (!opt_mentions(body, l2->syms[0])) {
      nm = fe_mk_map(m2->span, fe_mk_lam(l2->span, 1, &y, body), fe_mk_var(sp, e));
    } else {
      Sym *ps[2] = {l2->syms[0], y};
      nm = fe_mk_map2(m2->span, fe_mk_lam(l2->span, 2, ps, body), m2->kids[1], fe_mk_var(sp, e));
      nm->b = true; /* e is a map over x */
    }
    if (j < b->n) b->v[j].rhs = opt_replace_at(b->v[j].rhs, m2, nm);
    else *tail = opt_replace_at(*tail, m2, nm);
    if (whole) return true;
    b->v[i].rhs = opt_replace_at(b->v[i].rhs, m1, fe_mk_var(sp, e));
    /* e's let just before let i */
    opt_binds_let(b, sp, e, (Term *)m1);
    OptBind added = b->v[b->n - 1];
    memmove(&b->v[i + 1], &b->v[i], sizeof(OptBind) * (size_t)(b->n - 1 - i));
    b->v[i] = added;
    return true;
  }
  return false;
}

/* The let chain t with its pairs of maps shared. */
static Term *chain(const Term *t) {
  OptBinds b = {0};
  Term *tail = opt_peel_lets((Term *)t, &b);
  bool changed = false;
  for (long i = 0; i < b.n; i++) {
    Term *r = visit(NULL, b.v[i].rhs);
    if (r != b.v[i].rhs) changed = true;
    b.v[i].rhs = r;
  }
  Term *vt = visit(NULL, tail);
  if (vt != tail) changed = true;
  tail = vt;
  int shared = 0;
  for (long i = 0; i < b.n && shared < SHARE_MAX; i++)
    while (shared < SHARE_MAX && share_one(&b, &tail, i)) shared++, changed = true;
  return changed ? opt_build_chain(&b, 0, tail) : (Term *)t;
}

static Term *visit(void *ctx, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return chain(t);
  return opt_map_kids(t, visit, ctx);
}

/* Expensive elementwise values shared between maps over one array. */
Term *opt_share(const Term *t) { return visit(NULL, t); }
