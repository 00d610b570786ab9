/* build.c: typed constructors for checked and target Terms (see build.h). */
#include "build.h"
#include "subst.h"
#include "prim_type.h"

static const Type *R(void) { return fe_ty_real(); }

Term *fe_mk_num(Span s, double v) { return fe_term_num(s, v); }
Term *fe_mk_bool(Span s, bool v) { return fe_term_bool(s, v); }
Term *fe_mk_var(Span s, Sym *x) { return fe_term_var(s, x); }

Sym *fe_mk_sym(const char *name, const Type *type, Span s) {
  return fe_sym_new(name, type, s);
}

/* A scalar builtin: its type by prim_type.h's rule, which the operands
   must fit. */
static Term *scalar_prim(Span s, Prim p, int n, Term **args) {
  ASSERT(fe_prims[p].arity == n && fe_prims[p].cls != P_ARRAY);
  const Type *ts[2] = {args[0]->type, n == 2 ? args[1]->type : NULL};
  PrimMismatch m;
  const Type *type = fe_prim_scalar_type(p, ts, &m);
  ASSERT(type);
  return fe_term_prim(s, type, p, n, args);
}

Term *fe_mk_op1(Span s, Prim p, Term *a) { return scalar_prim(s, p, 1, &a); }

Term *fe_mk_op2(Span s, Prim p, Term *a, Term *b) {
  Term *args[2] = {a, b};
  return scalar_prim(s, p, 2, args);
}

Term *fe_mk_add(Span s, Term *a, Term *b) { return fe_mk_op2(s, PRIM_ADD, a, b); }
Term *fe_mk_mul(Span s, Term *a, Term *b) { return fe_mk_op2(s, PRIM_MUL, a, b); }

Term *fe_mk_if(Span s, Term *c, Term *a, Term *b) {
  ASSERT(c->type->kind == TY_BOOL && fe_type_eq(a->type, b->type));
  Term *k[3] = {c, a, b};
  return fe_term_kids(s, T_IF, a->type, 3, k);
}

Term *fe_mk_let(Span s, Sym *x, Term *rhs, Term *body) {
  ASSERT(fe_type_eq(x->type, rhs->type));
  Term *k[2] = {rhs, body};
  Term *t = fe_term_kids(s, T_LET, body->type, 2, k);
  t->sym = x;
  t->str = x->name;
  return t;
}

Term *fe_mk_lettup(Span s, int n, Sym **xs, Term *rhs, Term *body) {
  ASSERT(rhs->type->kind == TY_TUPLE && rhs->type->n == n);
  for (int i = 0; i < n; i++) ASSERT(fe_type_eq(xs[i]->type, rhs->type->elems[i]));
  Term *k[2] = {rhs, body};
  Term *t = fe_term_kids(s, T_LETTUP, body->type, 2, k);
  t->syms = NEW_ARRAY(Sym *, n);
  memcpy(t->syms, xs, sizeof(Sym *) * (size_t)n);
  t->nsyms = n;
  return t;
}

Term *fe_mk_tuple(Span s, int n, Term **items) {
  ASSERT(n >= 2);
  const Type **ts = NEW_ARRAY(const Type *, n);
  for (int i = 0; i < n; i++) ts[i] = items[i]->type;
  return fe_term_kids(s, T_TUPLE, fe_ty_tuple(n, ts), n, items);
}

Term *fe_mk_proj(Span s, Term *e, int index) {
  ASSERT(e->type->kind == TY_TUPLE && index >= 0 && index < e->type->n);
  Term *t = fe_term_kids(s, T_PROJ, e->type->elems[index], 1, &e);
  t->index = index;
  return t;
}

Term *fe_mk_lam(Span s, int n, Sym **xs, Term *body) {
  const Type **pt = NEW_ARRAY(const Type *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) pt[i] = xs[i]->type;
  Term *t = fe_term_kids(s, T_LAM, fe_ty_fun(n, pt, body->type), 1, &body);
  t->syms = NEW_ARRAY(Sym *, n > 0 ? n : 1);
  if (n > 0) memcpy(t->syms, xs, sizeof(Sym *) * (size_t)n);
  t->nsyms = n;
  return t;
}

Term *fe_mk_app(Span s, Term *f, int n, Term **args) {
  ASSERT(f->type->kind == TY_FUN && f->type->n == n);
  for (int i = 0; i < n; i++) ASSERT(fe_type_eq(f->type->elems[i], args[i]->type));
  Term **k = NEW_ARRAY(Term *, n + 1);
  k[0] = f;
  if (n > 0) memcpy(k + 1, args, sizeof(Term *) * (size_t)n);
  return fe_term_kids(s, T_APP, f->type->elem, n + 1, k);
}

/* An array builtin: its type by prim_type.h's rules, which the arguments
   (the function argument a LAM) must fit. */
static Term *array_prim(Span s, Prim p, int n, Term **args) {
  ASSERT(fe_prims[p].arity == n && fe_prims[p].cls == P_ARRAY);
  const Type *ts[5] = {NULL};
  Term *lam = NULL;
  ASSERT(n <= 5);
  for (int i = 0; i < n; i++) {
    if (fe_prim_arg_kind(p, i) == ARG_FUN) {
      lam = args[i];
      continue;
    }
    if (fe_prim_arg_kind(p, i) == ARG_COND) {
      ASSERT(args[i]->kind == T_LAM && args[i]->nsyms == 1 && args[i]->kids[0]->type->kind == TY_BOOL);
      continue;
    }
    ts[i] = args[i]->type;
    ASSERT(!fe_prim_arg_want(p, i, ts));
  }
  if (lam) {
    const Type *pt[3], *ret;
    int np = fe_prim_fun_sig(p, ts, pt, &ret);
    ASSERT(lam->kind == T_LAM && lam->nsyms == np);
    for (int i = 0; i < np; i++) ASSERT(fe_type_eq(lam->syms[i]->type, pt[i]));
    ts[0] = lam->kids[0]->type;
    ASSERT(!ret || fe_type_eq(ts[0], ret));
  }
  return fe_term_prim(s, fe_prim_array_result(p, ts), p, n, args);
}

Term *fe_mk_array_prim(Span s, Prim p, int n, Term **args) { return array_prim(s, p, n, args); }

Term *fe_mk_map(Span s, Term *lam, Term *a) {
  Term *k[2] = {lam, a};
  return array_prim(s, PRIM_MAP, 2, k);
}

Term *fe_mk_map2(Span s, Term *lam, Term *a, Term *b) {
  Term *k[3] = {lam, a, b};
  return array_prim(s, PRIM_MAP2, 3, k);
}

static Term *fold_prim(Span s, Prim p, Term *lam, Term *v, Term *a) {
  Term *k[3] = {lam, v, a};
  return array_prim(s, p, 3, k);
}

Term *fe_mk_reduce(Span s, Term *lam, Term *v, Term *a) { return fold_prim(s, PRIM_REDUCE, lam, v, a); }
Term *fe_mk_foldl(Span s, Term *lam, Term *v, Term *a) { return fold_prim(s, PRIM_FOLDL, lam, v, a); }
Term *fe_mk_scanl(Span s, Term *lam, Term *v, Term *a) { return fold_prim(s, PRIM_SCANL, lam, v, a); }
Term *fe_mk_scanr(Span s, Term *lam, Term *v, Term *a) { return fold_prim(s, PRIM_SCANR, lam, v, a); }

Term *fe_mk_shift(Span s, Prim p, Term *a) {
  ASSERT(p == PRIM_SHIFT1L || p == PRIM_SHIFT1R);
  return array_prim(s, p, 1, &a);
}

Term *fe_mk_length(Span s, Term *a) { return array_prim(s, PRIM_LENGTH, 1, &a); }

Term *fe_mk_replicate(Span s, Term *n, Term *v) {
  Term *k[2] = {n, v};
  return array_prim(s, PRIM_REPLICATE, 2, k);
}

bool fe_is_oplam_either(const Term *lam, Prim op) {
  if (lam->kind != T_LAM || lam->nsyms != 2) return false;
  const Term *b = lam->kids[0];
  if (b->kind != T_PRIM || b->prim != op || b->nkids != 2) return false;
  if (b->kids[0]->kind != T_VAR || b->kids[1]->kind != T_VAR) return false;
  Sym *u = b->kids[0]->sym, *v = b->kids[1]->sym;
  return (u == lam->syms[0] && v == lam->syms[1]) || (u == lam->syms[1] && v == lam->syms[0]);
}

Prim fe_rows_extremum(const Term *lam, bool *acc_first) {
  if (lam->kind != T_LAM || lam->nsyms != 2) return PRIM__COUNT;
  const Term *m = lam->kids[0];
  if (m->kind != T_PRIM || m->prim != PRIM_MAP2) return PRIM__COUNT;
  Prim op = fe_is_oplam_either(m->kids[0], PRIM_MIN)   ? PRIM_MIN
            : fe_is_oplam_either(m->kids[0], PRIM_MAX) ? PRIM_MAX
                                                        : PRIM__COUNT;
  const Term *x = m->kids[1], *y = m->kids[2];
  if (op == PRIM__COUNT || x->kind != T_VAR || y->kind != T_VAR) return PRIM__COUNT;
  if (x->sym == lam->syms[0] && y->sym == lam->syms[1]) *acc_first = true;
  else if (x->sym == lam->syms[1] && y->sym == lam->syms[0]) *acc_first = false;
  else return PRIM__COUNT;
  return op;
}

/* The names a gadd lambda's body binds to components of its parameters
   (`let g1 = g.1 in`, `let (a, b) = h in`, as the optimizer writes
   them): each stands for the component at path of base. */
#define GADD_DEPTH 16
#define GADD_ALIASES 32
typedef struct GaddAlias {
  const Sym *sym, *base;
  int path[GADD_DEPTH];
  int n;
} GaddAlias;
typedef struct GaddEnv {
  GaddAlias a[GADD_ALIASES];
  int n;
} GaddEnv;

/* The variable and path that e reads (a projection chain, aliases
   resolved): true and *base, path[0..*n), or false. */
static bool access_of(const Term *e, const GaddEnv *env, const Sym **base, int *path, int *n) {
  int rev[GADD_DEPTH], k = 0;
  while (e->kind == T_PROJ) {
    if (k == GADD_DEPTH) return false;
    rev[k++] = e->index;
    e = e->kids[0];
  }
  if (e->kind != T_VAR) return false;
  *base = e->sym;
  *n = 0;
  for (int i = env->n - 1; i >= 0; i--)
    if (env->a[i].sym == e->sym) {
      *base = env->a[i].base;
      *n = env->a[i].n;
      memcpy(path, env->a[i].path, sizeof(int) * (size_t)*n);
      break;
    }
  if (*n + k > GADD_DEPTH) return false;
  while (k > 0) path[(*n)++] = rev[--k];
  return true;
}

/* Whether e reads the component at path[0..n) of the variable x. */
static bool is_access(const Term *e, const GaddEnv *env, const Sym *x, const int *path, int n) {
  const Sym *b;
  int p[GADD_DEPTH], m;
  return access_of(e, env, &b, p, &m) && b == x && m == n && memcmp(p, path, sizeof(int) * (size_t)n) == 0;
}

/* Records x as the component i (or the whole, i < 0) of what rhs reads. */
static bool alias(GaddEnv *env, const Sym *x, const Term *rhs, int i) {
  GaddAlias *al = &env->a[env->n];
  if (env->n == GADD_ALIASES || !access_of(rhs, env, &al->base, al->path, &al->n)) return false;
  if (i >= 0) {
    if (al->n == GADD_DEPTH) return false;
    al->path[al->n++] = i;
  }
  al->sym = x;
  env->n++;
  return true;
}

/* Whether e is g' +^ h' for g' and h' the components at path of g and h. */
static bool is_gadd(const Term *e, const Type *t, const Sym *g, const Sym *h, int *path, int n, GaddEnv *env) {
  int mark = env->n;
  bool ok = true;
  while (ok && (e->kind == T_LET || e->kind == T_LETTUP)) {
    if (e->kind == T_LET) ok = alias(env, e->sym, e->kids[0], -1);
    else
      for (int i = 0; ok && i < e->nsyms; i++) ok = alias(env, e->syms[i], e->kids[0], i);
    e = e->kids[1];
  }
  if (ok) {
    switch (t->kind) {
    case TY_REAL:
    case TY_ARRAY: {
      bool real = t->kind == TY_REAL;
      ok = e->kind == T_PRIM && e->prim == (real ? PRIM_ADD : PRIM_MAP2) && (real || fe_is_gadd_lam(e->kids[0]));
      if (ok) {
        const Term *a = e->kids[real ? 0 : 1], *b = e->kids[real ? 1 : 2];
        ok = (is_access(a, env, g, path, n) && is_access(b, env, h, path, n)) ||
             (is_access(a, env, h, path, n) && is_access(b, env, g, path, n));
      }
      break;
    }
    case TY_TUPLE:
      ok = e->kind == T_TUPLE && e->nkids == t->n && n < GADD_DEPTH;
      for (int i = 0; ok && i < t->n; i++) {
        path[n] = i;
        ok = is_gadd(e->kids[i], t->elems[i], g, h, path, n + 1, env);
      }
      break;
    case TY_BOOL: ok = e->kind == T_BOOL && !e->b; break; /* tau(B) is empty: fe_mk_gadd's false */
    default: ok = false;
    }
  }
  env->n = mark;
  return ok;
}

bool fe_is_gadd_lam(const Term *lam) {
  if (lam->kind != T_LAM || lam->nsyms != 2) return false;
  int path[GADD_DEPTH];
  GaddEnv env;
  env.n = 0;
  const Type *t = lam->syms[0]->type;
  return fe_type_eq(t, lam->syms[1]->type) && is_gadd(lam->kids[0], t, lam->syms[0], lam->syms[1], path, 0, &env);
}

Term *fe_mk_oplam(Span s, Prim op) {
  Sym *xs[2] = {fe_mk_sym("x", R(), s), fe_mk_sym("y", R(), s)};
  return fe_mk_lam(s, 2, xs, fe_mk_op2(s, op, fe_mk_var(s, xs[0]), fe_mk_var(s, xs[1])));
}

bool fe_type_is_ground(const Type *t) {
  switch (t->kind) {
  case TY_REAL: return true;
  case TY_ARRAY: return fe_type_is_ground(t->elem);
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++)
      if (!fe_type_is_ground(t->elems[i])) return false;
    return true;
  case TY_BOOL:
  case TY_FUN: return false;
  }
  UNREACHABLE();
}

/* Binds e to a fresh variable unless it is already a variable or a
   constant, so that it may be used several times; wrap() finishes the
   binding around the term built from the returned use. */
static Term *share(Span s, Term *e, Sym **bound) {
  *bound = NULL;
  if (e->kind == T_VAR || e->kind == T_NUM) return e;
  *bound = fe_mk_sym("g", e->type, s);
  return fe_mk_var(s, *bound);
}

static Term *wrap(Span s, Sym *bound, Term *rhs, Term *body) {
  return bound ? fe_mk_let(s, bound, rhs, body) : body;
}

/* lam's body with its parameter replaced by the variable x (a copy). */
static Term *body_at(Span s, const Term *lam, Sym *x) {
  Term *v = fe_mk_var(s, x);
  Sym *p = lam->syms[0];
  return fe_subst(lam->kids[0], 1, &p, &v);
}

Term *fe_mk_counting_loop(Span s, const Term *body, Term *init, const Term *cond) {
  const Type *st = body->syms[0]->type, *R = fe_ty_real();
  Sym *x = fe_mk_sym(body->syms[0]->name, st, s), *k = fe_mk_sym("k", R, s);
  Term *items[2] = {fe_mk_var(s, x), fe_mk_num(s, 0)};
  Term *pair_t = fe_mk_tuple(s, 2, items);
  Sym *q = fe_mk_sym("q", pair_t->type, s);
  Sym *xk[2] = {x, k};
  Term *next[2] = {body_at(s, body, x), fe_mk_add(s, fe_mk_var(s, k), fe_mk_num(s, 1))};
  Term *step = fe_mk_lam(s, 1, &q, fe_mk_lettup(s, 2, xk, fe_mk_var(s, q), fe_mk_tuple(s, 2, next)));
  Sym *x2 = fe_mk_sym(body->syms[0]->name, st, s), *k2 = fe_mk_sym("k", R, s);
  Sym *q2 = fe_mk_sym("q", pair_t->type, s);
  Sym *xk2[2] = {x2, k2};
  Term *test = fe_mk_lam(s, 1, &q2, fe_mk_lettup(s, 2, xk2, fe_mk_var(s, q2), body_at(s, cond, x2)));
  Term *start[2] = {init, fe_mk_num(s, 0)};
  Term *lk[3] = {step, fe_mk_tuple(s, 2, start), test};
  return fe_mk_array_prim(s, PRIM_LOOP_WHILE, 3, lk);
}

Term *fe_mark_checked(Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_PRIM && fe_prims[t->prim].effect == E_RAISES && t->prim != PRIM_RAND) t->b = true;
  for (int i = 0; i < t->nkids; i++) fe_mark_checked(t->kids[i]);
  return t;
}

Term *fe_mk_zero_like(Span s, Term *like) {
  const Type *t = like->type;
  switch (t->kind) {
  case TY_REAL: return fe_mk_num(s, 0);
  case TY_ARRAY: {
    Sym *x = fe_mk_sym("x", t->elem, s);
    return fe_mk_map(s, fe_mk_lam(s, 1, &x, fe_mk_zero_like(s, fe_mk_var(s, x))), like);
  }
  case TY_TUPLE: {
    Sym *b;
    Term *v = share(s, like, &b);
    Term **items = NEW_ARRAY(Term *, t->n);
    for (int i = 0; i < t->n; i++) items[i] = fe_mk_zero_like(s, fe_mk_proj(s, v, i));
    return wrap(s, b, like, fe_mk_tuple(s, t->n, items));
  }
  case TY_BOOL: return fe_mk_bool(s, false); /* tau(B) is empty: its one value */
  case TY_FUN: break;
  }
  UNREACHABLE();
}

Term *fe_mk_tau_project(Span s, Term *e) {
  const Type *t = e->type, *tt = fe_ty_tangent(t);
  ASSERT(tt);
  if (tt == t) return e;
  if (t->kind == TY_ARRAY) {
    Sym *x = fe_mk_sym("x", t->elem, s);
    return fe_mk_map(s, fe_mk_lam(s, 1, &x, fe_mk_tau_project(s, fe_mk_var(s, x))), e);
  }
  ASSERT(t->kind == TY_TUPLE);
  Sym *b;
  Term *v = share(s, e, &b);
  Term **items = NEW_ARRAY(Term *, t->n);
  int m = 0;
  for (int i = 0; i < t->n; i++)
    if (fe_ty_tangent(t->elems[i])) items[m++] = fe_mk_tau_project(s, fe_mk_proj(s, v, i));
  return wrap(s, b, e, m == 1 ? items[0] : fe_mk_tuple(s, m, items));
}

/* Whether the booleans-only type t has a value without a length: B or
   tuples of such (no array). */
static bool fillable(const Type *t) {
  if (t->kind == TY_BOOL) return true;
  if (t->kind != TY_TUPLE) return false;
  for (int i = 0; i < t->n; i++)
    if (!fillable(t->elems[i])) return false;
  return true;
}

/* That value of the fillable type t: false at every boolean. */
static Term *empty_value(Span s, const Type *t) {
  if (t->kind == TY_BOOL) return fe_mk_bool(s, false);
  Term **items = NEW_ARRAY(Term *, t->n);
  for (int i = 0; i < t->n; i++) items[i] = empty_value(s, t->elems[i]);
  return fe_mk_tuple(s, t->n, items);
}

bool fe_type_tau_injective(const Type *t) {
  switch (t->kind) {
  case TY_REAL:
  case TY_BOOL: return true;
  case TY_ARRAY: return fe_ty_tangent(t->elem) && fe_type_tau_injective(t->elem);
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++) {
      const Type *e = t->elems[i];
      if (fe_ty_tangent(e) ? !fe_type_tau_injective(e) : !fillable(e)) return false;
    }
    return true;
  default: return false;
  }
}

Term *fe_mk_tau_inject(Span s, Term *e, const Type *t) {
  const Type *tt = fe_ty_tangent(t);
  ASSERT(tt && fe_type_eq(e->type, tt) && fe_type_tau_injective(t));
  if (tt == t) return e;
  if (t->kind == TY_ARRAY) {
    Sym *x = fe_mk_sym("x", tt->elem, s);
    return fe_mk_map(s, fe_mk_lam(s, 1, &x, fe_mk_tau_inject(s, fe_mk_var(s, x), t->elem)), e);
  }
  ASSERT(t->kind == TY_TUPLE);
  int m = 0;
  for (int i = 0; i < t->n; i++) m += fe_ty_tangent(t->elems[i]) != NULL;
  Sym *b;
  Term *v = share(s, e, &b);
  Term **items = NEW_ARRAY(Term *, t->n);
  for (int i = 0, k = 0; i < t->n; i++) {
    const Type *ti = t->elems[i];
    if (!fe_ty_tangent(ti)) items[i] = empty_value(s, ti);
    else items[i] = fe_mk_tau_inject(s, m == 1 ? v : fe_mk_proj(s, v, k++), ti);
  }
  return wrap(s, b, e, fe_mk_tuple(s, t->n, items));
}

Term *fe_mk_gadd(Span s, Term *a, Term *b) {
  const Type *t = a->type;
  ASSERT(fe_type_eq(t, b->type));
  switch (t->kind) {
  case TY_REAL: return fe_mk_add(s, a, b);
  case TY_ARRAY: {
    Sym *xs[2] = {fe_mk_sym("x", t->elem, s), fe_mk_sym("y", t->elem, s)};
    Term *body = fe_mk_gadd(s, fe_mk_var(s, xs[0]), fe_mk_var(s, xs[1]));
    return fe_mk_map2(s, fe_mk_lam(s, 2, xs, body), a, b);
  }
  case TY_TUPLE: {
    Sym *ba, *bb;
    Term *va = share(s, a, &ba), *vb = share(s, b, &bb);
    Term **items = NEW_ARRAY(Term *, t->n);
    for (int i = 0; i < t->n; i++)
      items[i] = fe_mk_gadd(s, fe_mk_proj(s, va, i), fe_mk_proj(s, vb, i));
    return wrap(s, ba, a, wrap(s, bb, b, fe_mk_tuple(s, t->n, items)));
  }
  case TY_BOOL: return fe_mk_bool(s, false);
  case TY_FUN: break;
  }
  UNREACHABLE();
}

Term *fe_mk_gscale(Span s, Term *z, Term *e) {
  const Type *t = e->type;
  ASSERT(z->type->kind == TY_REAL);
  switch (t->kind) {
  case TY_REAL: return fe_mk_mul(s, z, e);
  case TY_ARRAY: {
    Sym *bz;
    Term *vz = share(s, z, &bz);
    Sym *x = fe_mk_sym("x", t->elem, s);
    Term *m = fe_mk_map(s, fe_mk_lam(s, 1, &x, fe_mk_gscale(s, vz, fe_mk_var(s, x))), e);
    return wrap(s, bz, z, m);
  }
  case TY_TUPLE: {
    Sym *bz, *be;
    Term *vz = share(s, z, &bz), *ve = share(s, e, &be);
    Term **items = NEW_ARRAY(Term *, t->n);
    for (int i = 0; i < t->n; i++) items[i] = fe_mk_gscale(s, vz, fe_mk_proj(s, ve, i));
    return wrap(s, bz, z, wrap(s, be, e, fe_mk_tuple(s, t->n, items)));
  }
  case TY_BOOL: return fe_mk_bool(s, false);
  case TY_FUN: break;
  }
  UNREACHABLE();
}

/* ---- slots ---- */

static void bind_slot(Sym *x, int *n) {
  if (x->slot < 0) x->slot = (*n)++;
}

static void reset_slots(Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_LET) t->sym->slot = -1;
    if (t->kind == T_LETTUP || t->kind == T_LAM)
      for (int i = 0; i < t->nsyms; i++) t->syms[i]->slot = -1;
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) reset_slots(t->kids[i]);
    t = t->kids[t->nkids - 1]; /* the last child in a loop: let chains are long */
  }
}

static void give_slots(Term *t, int *n) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_LET) bind_slot(t->sym, n);
    if (t->kind == T_LETTUP || t->kind == T_LAM)
      for (int i = 0; i < t->nsyms; i++) bind_slot(t->syms[i], n);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) give_slots(t->kids[i], n);
    t = t->kids[t->nkids - 1];
  }
}

void fe_assign_slots(Def *d) {
  for (int i = 0; i < d->nparams; i++) d->params[i]->slot = -1;
  reset_slots(d->body);
  int n = 0;
  for (int i = 0; i < d->nparams; i++) bind_slot(d->params[i], &n);
  give_slots(d->body, &n);
  d->nslots = n;
}

const char *fe_fresh_param_name(const char *want, Sym *const *params, int n) {
  const char *name = want;
  for (int k = 2;; k++) {
    bool taken = false;
    for (int i = 0; i < n && !taken; i++) taken = strcmp(params[i]->name, name) == 0;
    if (!taken) return name;
    name = una_sprintf("%s%d", want, k);
  }
}

Def *fe_mk_def(const char *name, Span s, int nparams, Sym **params, Term *body) {
  Def *d = NEW(Def);
  d->name = name;
  d->span = s;
  d->nparams = nparams;
  d->params = NEW_ARRAY(Sym *, nparams > 0 ? nparams : 1);
  if (nparams > 0) memcpy(d->params, params, sizeof(Sym *) * (size_t)nparams);
  d->ret = body->type;
  d->body = body;
  fe_assign_slots(d);
  return d;
}
