/* matrix.c: recognizing matrix products in the host program (plan.h's
   plan_matrix_of; note.h's PlanMatrix says what is recognized).

   A matrix-vector product is a map over the rows of a matrix whose body is
   the dot product of the row with a vector that does not depend on it; a
   matrix product is a map over the rows of X whose body is a map over the
   rows of Y whose body is the dot product of the two rows. The shape is
   recognized, not the names: the prelude's matvec and matmul
   (`map (row. dot row x) m`, `map (row. map (col. dot row col) bt) a`),
   the same written by hand, with dot inlined as
   `reduce (+) 0 (map2 (*) row x)` or written `sum (map2 ...)`, or a
   matrix product written `map (row. matvec bt row) a`. Calls are followed
   into the called Def's body (parameters bound to the argument terms, each
   in its caller's context, as a substitution would), so a user's own dot
   qualifies when it computes the same thing, and a redefined `dot` or
   `sum` that computes something else does not.

   Nothing here decides that BLAS runs: the engine does (backend/blas.c),
   on the CPU only, with the fast paths on and no meter; otherwise the map
   runs as written, so a decision here never changes a result but for the
   order of the additions. */
#include "plan.h"

enum { MAX_DEPTH = 16, MAX_EVALUATED = 16 };

/* The arguments of the calls followed whose evaluation could cost or
   raise something (not a variable, a literal or a global). Each must be
   part of the product (used: a parameter was replaced by it): the dot's
   map2, or the operand that BLAS evaluates once, as every row would. One
   that the called Def does not use would be evaluated by every row and
   skipped by BLAS, and with it its errors: no product then. */
typedef struct Evaluated {
  const Term *t[MAX_EVALUATED];
  bool used[MAX_EVALUATED];
  int n;
  bool overflow;
} Evaluated;

static void note_args(Evaluated *ev, const Term *call) {
  for (int i = 0; i < call->nkids; i++) {
    const Term *a = call->kids[i];
    if (a->kind == T_VAR || a->kind == T_NUM || a->kind == T_GLOBAL) continue;
    if (ev->n == MAX_EVALUATED) {
      ev->overflow = true;
    } else {
      ev->used[ev->n] = false;
      ev->t[ev->n++] = a;
    }
  }
}

static void note_use(Evaluated *ev, const Term *a) {
  for (int i = 0; i < ev->n; i++)
    if (ev->t[i] == a) ev->used[i] = true;
}

/* Whether every argument noted in ev was used. */
static bool all_used(const Evaluated *ev) {
  if (ev->overflow) return false;
  for (int i = 0; i < ev->n; i++)
    if (!ev->used[i]) return false;
  return true;
}

/* The arguments of a call being followed: d's parameter i is args[i], a
   term of the caller's context, which is `caller` (NULL: the map's body). */
typedef struct Env {
  const Def *d;
  Term *const *args;
  const struct Env *caller;
} Env;

/* A term and the context it is in (env NULL: the map's own body). */
typedef struct At {
  const Term *t;
  const Env *env;
} At;

/* t with the parameters of the calls being followed replaced by their
   arguments (noted as used in ev), repeatedly; a variable that is not a
   parameter (a let's, a lambda's) stays as it is, in its context. */
static At resolve_in(const Term *t, const Env *env, Evaluated *ev) {
  while (t->kind == T_VAR && env) {
    int i = 0;
    while (i < env->d->nparams && env->d->params[i] != t->sym) i++;
    if (i == env->d->nparams) break;
    t = env->args[i];
    env = env->caller;
    note_use(ev, t);
  }
  return (At){t, env};
}

/* Whether t reads the variable x. */
static bool reads(const Term *t, const Sym *x) {
  while (t) {
    if (t->kind == T_VAR && t->sym == x) return true;
    if (t->nkids == 0) return false;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (reads(t->kids[i], x)) return true;
    t = t->kids[t->nkids - 1];
  }
  return false;
}

static bool real_array(const Type *t) { return t && t->kind == TY_ARRAY && t->elem->kind == TY_REAL; }
static bool real_matrix(const Type *t) { return t && t->kind == TY_ARRAY && real_array(t->elem); }

/* Whether t (in env) is the dot product of two arrays, through calls:
   reduce (+) 0 (map2 (*) a b), (+) and (*) in either order of their
   parameters, the map2 maybe let-bound just before (let p = map2 (*) a b
   in reduce (+) 0 p, as gradients have it). *a and *b are then the
   arrays, resolved. */
static bool dot_of(const Term *t, const Env *env, int depth, Evaluated *ev, At *a, At *b) {
  At r = resolve_in(t, env, ev);
  t = r.t;
  env = r.env;
  if (t->kind == T_CALL) {
    if (depth >= MAX_DEPTH || !t->def || t->def->nparams != t->nkids) return false;
    note_args(ev, t);
    Env inner = {t->def, t->kids, env};
    return dot_of(t->def->body, &inner, depth + 1, ev, a, b);
  }
  bool swapped;
  const Term *let = NULL;
  if (t->kind == T_LET) {
    let = t;
    t = t->kids[1];
  }
  if (t->kind != T_PRIM || t->prim != PRIM_REDUCE || cpu_monoid_of(t->kids[0], &swapped) != CPU_M_ADD) return false;
  At z = resolve_in(t->kids[1], env, ev);
  if (z.t->kind != T_NUM || z.t->num != 0 || signbit(z.t->num)) return false;
  At m;
  if (let) {
    if (t->kids[2]->kind != T_VAR || t->kids[2]->sym != let->sym) return false;
    m = (At){let->kids[0], env};
  } else {
    m = resolve_in(t->kids[2], env, ev);
  }
  if (m.t->kind != T_PRIM || m.t->prim != PRIM_MAP2 || cpu_monoid_of(m.t->kids[0], &swapped) != CPU_M_MUL)
    return false;
  *a = resolve_in(m.t->kids[1], m.env, ev);
  *b = resolve_in(m.t->kids[2], m.env, ev);
  return true;
}

/* Whether x is the variable s (in any context: symbols are unique). */
static bool is_var(At x, const Sym *s) { return x.t->kind == T_VAR && x.t->sym == s; }

/* A term of the map's body that does not read p: evaluated once, in the
   map's frame, it has the value every row would give it. */
static bool outer_of(At x, const Sym *p) { return !x.env && !is_var(x, p) && !reads(x.t, p); }

/* The map (through calls) that t is, with its context; NULL t when none. */
static At map_of(const Term *t, const Env *env, int depth, Env *frames, Evaluated *ev) {
  At r = resolve_in(t, env, ev);
  if (r.t->kind == T_CALL && depth < MAX_DEPTH && r.t->def && r.t->def->nparams == r.t->nkids) {
    note_args(ev, r.t);
    frames[depth] = (Env){r.t->def, r.t->kids, r.env};
    return map_of(r.t->def->body, &frames[depth], depth + 1, frames, ev);
  }
  if (r.t->kind == T_PRIM && r.t->prim == PRIM_MAP && r.t->kids[0]->kind == T_LAM && r.t->kids[0]->nsyms == 1)
    return r;
  return (At){NULL, NULL};
}

/* map (p. map (q. p * q) v) X over the reals of X, v a variable or a
   global: an outer product (note.h: OUTER); NULL otherwise. */
static PlanMatrix *outer_product(const Term *t) {
  const Term *lam = t->kids[0], *in = lam->kids[0];
  if (lam->kind != T_LAM || lam->nsyms != 1 || in->kind != T_PRIM || in->prim != PRIM_MAP) return NULL;
  const Term *lam2 = in->kids[0], *v = in->kids[1];
  if (lam2->kind != T_LAM || lam2->nsyms != 1) return NULL;
  if (!(v->kind == T_GLOBAL || (v->kind == T_VAR && v->sym != lam->syms[0]))) return NULL;
  const Term *m = lam2->kids[0];
  if (m->kind != T_PRIM || m->prim != PRIM_MUL) return NULL;
  const Sym *p = lam->syms[0], *q = lam2->syms[0];
  bool pq = is_var((At){m->kids[0], NULL}, p) && is_var((At){m->kids[1], NULL}, q);
  bool qp = is_var((At){m->kids[0], NULL}, q) && is_var((At){m->kids[1], NULL}, p);
  if (!pq && !qp) return NULL;
  PlanMatrix *r = NEW(PlanMatrix);
  r->kind = PLAN_OUTER;
  r->swapped = qp;
  r->other = v;
  return r;
}

PlanMatrix *plan_matrix_of(const Term *t) {
  if (t->kind == T_PRIM && t->prim == PRIM_MAP && real_array(t->kids[1]->type) && real_matrix(t->type))
    return outer_product(t);
  if (t->kind != T_PRIM || t->prim != PRIM_MAP || !real_matrix(t->kids[1]->type)) return NULL;
  const Term *lam = t->kids[0];
  if (lam->kind != T_LAM || lam->nsyms != 1) return NULL;
  const Sym *p = lam->syms[0];
  At a, b;
  Evaluated ev = {0};
  if (real_array(t->type)) {
    /* map (p. dot p v) X */
    if (!dot_of(lam->kids[0], NULL, 0, &ev, &a, &b)) return NULL;
    if (!is_var(a, p)) {
      At s = a;
      a = b;
      b = s;
    }
    if (!is_var(a, p) || a.env || !outer_of(b, p) || !all_used(&ev)) return NULL;
    PlanMatrix *m = NEW(PlanMatrix);
    m->kind = PLAN_GEMV;
    m->other = b.t;
    return m;
  }
  if (!real_matrix(t->type)) return NULL;
  /* map (p. map (q. dot p q) Y) X, the inner map possibly in a called Def */
  Env frames[MAX_DEPTH];
  At inner = map_of(lam->kids[0], NULL, 0, frames, &ev);
  if (!inner.t || !real_array(inner.t->type)) return NULL;
  At y = resolve_in(inner.t->kids[1], inner.env, &ev);
  if (!outer_of(y, p)) return NULL;
  const Term *lam2 = inner.t->kids[0];
  const Sym *q = lam2->syms[0];
  if (!dot_of(lam2->kids[0], inner.env, 0, &ev, &a, &b)) return NULL;
  if (!is_var(a, q)) {
    At s = a;
    a = b;
    b = s;
  }
  if (!is_var(a, q) || !is_var(b, p) || b.env || !all_used(&ev)) return NULL;
  PlanMatrix *m = NEW(PlanMatrix);
  m->kind = PLAN_GEMM;
  m->other = y.t;
  m->inner = inner.env ? NULL : inner.t;
  return m;
}
