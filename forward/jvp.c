/* jvp.c: the tangent transformation (jvp.h).

   The output is in A-normal form: fwd(e) emits let bindings into the
   current scope and returns two atoms (variables or constants), e's value
   and its tangent, NULL for a tangent that is zero. Each binder of the
   source is bound again in the output, with the same Sym, to its value,
   so a subterm that depends on no tangent (no free variable with one) is
   used as it is, and the value of a combinator is the combinator itself
   over the values of its operands. One fe_copy of the result at the end
   makes every binder unique again (the source's lambdas appear both in
   the value and, transformed, in the tangent).

   Rules (x' the tangent of x; a tangent that is zero drops out):
     op a b                 op a b,  ∂1 op a b * a' + ∂2 op a b * b'
     if c then a else b     one `if` returning (value, tangent)
     map f xs               map f xs,  map2 (x, x'. (f x)') xs xs'
                            (map over iota with reads past three arrays)
     foldl, loops, general reduce, scans
                            one fold over (state, state'); the value is
                            the first component
     map2 (+), reduce/scanl/scanr (+)
                            the same builtin over the tangents
     index, slices, shapes  the same builtin on the tangent
     reduce_by_index (+)    reduce_by_index d' (+) 0 is vs'               */
#include "jvp.h"
#include "../frontend/inline.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/subst.h"
#include "../reverse/partials.h"
#include "../reverse/reverse.h"

typedef struct Bind {
  Sym *x;    /* let x = rhs, or */
  int n;     /* let (xs[0], ..., xs[n-1]) = rhs when n > 0 */
  Sym **xs;
  Term *rhs;
} Bind;

typedef struct Scope {
  Bind *v;
  int n, cap;
} Scope;

typedef struct Fwd {
  PtrMap tan;    /* source Sym -> its tangent (an atom); absent: zero */
  Scope *sc;     /* where bindings go */
  int recompute; /* > 0: inside the tangent of a map or reduce, whose
                    values the value's own map or reduce computed first
                    (their errors raised there): the checks of the values
                    recomputed here cannot fail */
} Fwd;

typedef struct Dual {
  Term *p, *t; /* atoms; t NULL: the tangent is zero */
} Dual;

/* A marker tangent for the activity probes. */
static Term probe_mark;

static Dual fwd(Fwd *f, const Term *e);

/* ---- bindings ---- */

static bool is_atom(const Term *t) {
  return t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL || t->kind == T_GLOBAL ||
         t->kind == T_STR;
}

static void push(Scope *sc, Bind b) {
  if (sc->n == sc->cap) {
    int cap = sc->cap ? sc->cap * 2 : 16;
    Bind *v = NEW_ARRAY(Bind, cap);
    if (sc->n) memcpy(v, sc->v, sizeof(Bind) * (size_t)sc->n);
    sc->v = v;
    sc->cap = cap;
  }
  sc->v[sc->n++] = b;
}

/* rhs as an atom: itself, or a variable bound to it. */
static Term *emit(Fwd *f, Span s, const char *name, Term *rhs) {
  if (is_atom(rhs)) return rhs;
  Sym *x = fe_mk_sym(name, rhs->type, s);
  push(f->sc, (Bind){x, 0, NULL, rhs});
  return fe_mk_var(s, x);
}

static void bind_sym(Fwd *f, Sym *x, Term *rhs) { push(f->sc, (Bind){x, 0, NULL, rhs}); }

static void bind_tuple(Fwd *f, int n, Sym **xs, Term *rhs) { push(f->sc, (Bind){NULL, n, xs, rhs}); }

/* The bindings of sc around body. */
static Term *close_scope(Span s, const Scope *sc, Term *body) {
  for (int i = sc->n - 1; i >= 0; i--) {
    const Bind *b = &sc->v[i];
    body = b->n > 0 ? fe_mk_lettup(s, b->n, b->xs, b->rhs, body) : fe_mk_let(s, b->x, b->rhs, body);
  }
  return body;
}

static Term *tan_of(const Fwd *f, const Sym *x) { return ptrmap_get(&f->tan, x); }
static void set_tan(Fwd *f, const Sym *x, Term *t) { ptrmap_put(&f->tan, x, t); }

/* ---- activity ---- */

/* Whether t reads a variable that has a tangent. */
static bool reads_active(const Fwd *f, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_VAR) return tan_of(f, t->sym) != NULL;
    if (t->nkids == 0) return false;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (reads_active(f, t->kids[i])) return true;
    t = t->kids[t->nkids - 1];
  }
  return false;
}

/* Whether e's value depends on a tangent: it has reals and reads an
   active variable. (A boolean inside its type has the tangent false:
   tau(B) is empty, fe_mk_zero_like.) */
static bool active(const Fwd *f, const Term *e) {
  return e->type && fe_type_has_reals(e->type) && reads_active(f, e);
}

/* Whether lam's body is active when its parameters have the tangents
   marked in with[] (true: has one). */
static bool lam_active(Fwd *f, const Term *lam, const bool *with) {
  for (int i = 0; i < lam->nsyms; i++) set_tan(f, lam->syms[i], with[i] ? &probe_mark : NULL);
  bool a = active(f, lam->kids[0]);
  for (int i = 0; i < lam->nsyms; i++) set_tan(f, lam->syms[i], NULL);
  return a;
}

/* ---- helpers ---- */

static Dual konst(Fwd *f, const Term *e) { return (Dual){emit(f, e->span, "v", (Term *)e), NULL}; }

static Term *zero_like(Fwd *f, Span s, Term *p) { return emit(f, s, "dz", fe_mk_zero_like(s, p)); }

/* t, or the zero shaped like p when t is zero. */
static Term *tan_or_zero(Fwd *f, Span s, Dual d) { return d.t ? d.t : zero_like(f, s, d.p); }

static Term *prim(Span s, Prim p, int n, Term **args) { return fe_mk_array_prim(s, p, n, args); }

/* A value's builtin t, marked checked by construction (term.h) when it
   recomputes a value already computed (Fwd.recompute): any builtin that
   may raise (a transpose, a loop's count, an index), its function's
   included, as reverse/ marks
   its replays (rev_jt_replayed), but rand, whose value a replay would
   not reproduce. */
static Term *value_prim(const Fwd *f, Term *t) {
  if (f->recompute == 0) return t;
  return fe_mark_checked(fe_copy(t)); /* its function is the source's own lambda: marked in a copy */
}

static Term *prim1(Span s, Prim p, Term *a) { return prim(s, p, 1, &a); }

/* a[i], known to be in bounds. */
static Term *read_at(Span s, Term *a, Term *i) {
  Term *args[2] = {a, i};
  Term *r = prim(s, PRIM_INDEX, 2, args);
  r->b = true;
  return r;
}

/* map2 (x, dx. dx) a da: raises when the tangent da does not have a's
   length (its value is not used). */
static Term *same_length(Span s, Term *a, Term *da) {
  Sym *xs[2] = {fe_mk_sym("x", a->type->elem, s), fe_mk_sym("dx", da->type->elem, s)};
  return fe_mk_map2(s, fe_mk_lam(s, 2, xs, fe_mk_var(s, xs[1])), a, da);
}

static Term *iota_of(Span s, Term *a) { return prim1(s, PRIM_IOTA, fe_mk_length(s, a)); }

static Scope *enter(Fwd *f, Scope *inner) {
  Scope *outer = f->sc;
  *inner = (Scope){0};
  f->sc = inner;
  return outer;
}

/* e in a scope of its own: its bindings around the term that make
   returns from the Dual (value only, tangent only, or the pair). */
typedef enum { WANT_P, WANT_T, WANT_PAIR } Want;

static Term *scoped(Fwd *f, const Term *e, Want w) {
  Scope sc;
  Scope *outer = enter(f, &sc);
  Dual d = fwd(f, e);
  Term *r;
  if (w == WANT_P) {
    r = d.p;
  } else {
    Term *t = tan_or_zero(f, e->span, d);
    Term *items[2] = {d.p, t};
    r = w == WANT_T ? t : fe_mk_tuple(e->span, 2, items);
  }
  f->sc = outer;
  return close_scope(e->span, &sc, r);
}

/* ---- rules ---- */

static Dual fwd_scalar(Fwd *f, const Term *e) {
  Span s = e->span;
  int n = e->nkids;
  Dual d[2];
  Term *ps[2];
  for (int i = 0; i < n; i++) {
    d[i] = fwd(f, e->kids[i]);
    ps[i] = d[i].p;
  }
  Term *p = emit(f, s, "v", n == 1 ? fe_mk_op1(s, e->prim, ps[0]) : fe_mk_op2(s, e->prim, ps[0], ps[1]));
  if (e->prim == PRIM_STOPGRAD) return (Dual){p, NULL};
  Term *t = NULL;
  for (int i = 0; i < n; i++) {
    if (!d[i].t) continue;
    Term *term = fe_mk_mul(s, rev_partial(s, e->prim, i, ps), d[i].t);
    t = t ? fe_mk_add(s, t, term) : term;
  }
  return (Dual){p, t ? emit(f, s, "dv", t) : NULL};
}

static Dual fwd_if(Fwd *f, const Term *e) {
  Span s = e->span;
  Term *c = fwd(f, e->kids[0]).p;
  /* the branches' tangents, when either has one */
  bool any = active(f, e->kids[1]) || active(f, e->kids[2]);
  if (!any) return konst(f, e);
  Term *a = scoped(f, e->kids[1], WANT_PAIR), *b = scoped(f, e->kids[2], WANT_PAIR);
  Term *r = emit(f, s, "r", fe_mk_if(s, c, a, b));
  return (Dual){emit(f, s, "v", fe_mk_proj(s, r, 0)), emit(f, s, "dv", fe_mk_proj(s, r, 1))};
}

static Dual fwd_tuple(Fwd *f, const Term *e) {
  Span s = e->span;
  int n = e->nkids;
  Dual *d = NEW_ARRAY(Dual, n);
  Term **ps = NEW_ARRAY(Term *, n), **ts = NEW_ARRAY(Term *, n);
  bool any = false;
  for (int i = 0; i < n; i++) {
    d[i] = fwd(f, e->kids[i]);
    ps[i] = d[i].p;
    any |= d[i].t != NULL;
  }
  Term *p = emit(f, s, "v", e->kind == T_TUPLE ? fe_mk_tuple(s, n, ps)
                                               : fe_term_kids(s, T_ARRAY, e->type, n, ps));
  if (!any) return (Dual){p, NULL};
  for (int i = 0; i < n; i++) ts[i] = tan_or_zero(f, s, d[i]);
  return (Dual){p, emit(f, s, "dv", e->kind == T_TUPLE ? fe_mk_tuple(s, n, ts)
                                                      : fe_term_kids(s, T_ARRAY, e->type, n, ts))};
}

/* A call that the inlining kept (reverse.h's rev_inline_policy): g's own
   jvp, with respect to the arguments that have a tangent, derived once
   and called; it returns (value, tangent). */
static Dual fwd_call(Fwd *f, const Term *e) {
  Span s = e->span;
  int n = e->nkids;
  Dual *d = NEW_ARRAY(Dual, n > 0 ? n : 1);
  int *wrt = NEW_ARRAY(int, n > 0 ? n : 1), nwrt = 0;
  for (int i = 0; i < n; i++) {
    d[i] = fwd(f, e->kids[i]);
    if (d[i].t) wrt[nwrt++] = i;
  }
  if (nwrt == 0) return konst(f, e);
  Def *j = fwd_jvp_def(e->def, wrt, nwrt);
  Term **args = NEW_ARRAY(Term *, n + nwrt);
  for (int i = 0; i < n; i++) args[i] = d[i].p;
  for (int k = 0; k < nwrt; k++) args[n + k] = d[wrt[k]].t;
  Term *c = fe_term_kids(s, T_CALL, j->ret, n + nwrt, args);
  c->def = j;
  Sym **xs = NEW_ARRAY(Sym *, 2);
  xs[0] = fe_mk_sym("v", e->type, s);
  xs[1] = fe_mk_sym("dv", e->type, s);
  bind_tuple(f, 2, xs, c);
  return (Dual){fe_mk_var(s, xs[0]), fe_mk_var(s, xs[1])};
}

static Dual fwd_proj(Fwd *f, const Term *e) {
  Span s = e->span;
  Dual d = fwd(f, e->kids[0]);
  Term *p = emit(f, s, "v", fe_mk_proj(s, d.p, e->index));
  return (Dual){p, d.t ? emit(f, s, "dv", fe_mk_proj(s, d.t, e->index)) : NULL};
}

/* map, map2, map3: the value is the map itself; the tangent maps the
   tangent of the body over the arrays and their tangents. */
static Dual fwd_map(Fwd *f, const Term *e) {
  Span s = e->span;
  const Term *lam = e->kids[0];
  int k = e->nkids - 1;
  Dual a[3];
  Term *args[4] = {(Term *)lam};
  bool with[3];
  int narr = k;
  for (int i = 0; i < k; i++) {
    a[i] = fwd(f, e->kids[1 + i]);
    args[1 + i] = a[i].p;
    with[i] = a[i].t != NULL;
    narr += with[i];
  }
  Term *p = emit(f, s, "v", value_prim(f, prim(s, e->prim, k + 1, args)));
  if (!lam_active(f, lam, with)) return (Dual){p, NULL};
  if (e->prim == PRIM_MAP2 && fe_is_oplam_either(lam, PRIM_ADD) && e->type->elem->kind == TY_REAL) {
    /* (+) is linear: the tangents added (one alone is the tangent) */
    if (!a[0].t || !a[1].t) return (Dual){p, a[0].t ? a[0].t : a[1].t};
    Term *targs[3] = {fe_mk_oplam(s, PRIM_ADD), a[0].t, a[1].t};
    Term *t = prim(s, PRIM_MAP2, 3, targs);
    t->b = true;
    return (Dual){p, emit(f, s, "dv", t)};
  }
  Scope sc;
  Scope *outer = enter(f, &sc);
  Term *body;
  Sym *params[6];
  Term *arrays[6];
  int np = 0;
  Sym *idx = NULL;
  if (narr <= 3) {
    for (int i = 0; i < k; i++) {
      params[np] = lam->syms[i];
      arrays[np++] = a[i].p;
    }
    for (int i = 0; i < k; i++) {
      set_tan(f, lam->syms[i], NULL);
      if (!with[i]) continue;
      Sym *dx = fe_mk_sym("dx", lam->syms[i]->type, s);
      set_tan(f, lam->syms[i], fe_mk_var(s, dx));
      params[np] = dx;
      arrays[np++] = a[i].t;
    }
  } else {
    idx = fe_mk_sym("i", fe_ty_real(), s);
    Term *i = fe_mk_var(s, idx);
    for (int j = 0; j < k; j++) {
      bind_sym(f, lam->syms[j], read_at(s, a[j].p, i));
      set_tan(f, lam->syms[j], with[j] ? emit(f, s, "dx", read_at(s, a[j].t, i)) : NULL);
    }
  }
  f->recompute++;
  Dual d = fwd(f, lam->kids[0]);
  f->recompute--;
  body = close_scope(s, &sc, tan_or_zero(f, s, d));
  f->sc = outer;
  Term *t;
  if (idx) {
    t = fe_mk_map(s, fe_mk_lam(s, 1, &idx, body), iota_of(s, a[0].p));
  } else {
    /* checked by construction: the arrays have the lengths the value's map
       checked (so the optimizer drops those the tangent does not read) */
    Term *margs[4] = {fe_mk_lam(s, np, params, body), arrays[0], arrays[1], arrays[2]};
    Prim mp = np == 1 ? PRIM_MAP : np == 2 ? PRIM_MAP2 : PRIM_MAP3;
    t = prim(s, mp, np + 1, margs);
    t->b = true;
  }
  return (Dual){p, emit(f, s, "dv", t)};
}

/* The fold of lam over (state, state') from z, the elements of xs (with
   their tangents when xs has some): the builtin fp (foldl, scanl, scanr
   or a loop) over the pairs. acc is the index of lam's state parameter
   (scanr: 1), or -1 for the loops, whose lambdas are (x, i. e) and (x. e).
   Returns the result of fp (a pair, or an array of pairs for the scans). */
static Term *fold_pair(Fwd *f, const Term *e, Prim fp, const Term *lam, Dual z, Dual xs, Term *count,
                       const Term *cond) {
  Span s = e->span;
  bool loop = fp == PRIM_LOOP_FOR || fp == PRIM_LOOP_WHILE;
  int acc = loop ? 0 : fp == PRIM_SCANR ? 1 : 0;
  int el = loop ? (fp == PRIM_LOOP_FOR ? 1 : -1) : 1 - acc;
  Sym *st = lam->syms[acc];
  Term *zt = tan_or_zero(f, s, z);
  Term *init_items[2] = {z.p, zt};
  Term *init = emit(f, s, "z", fe_mk_tuple(s, 2, init_items));
  Sym *q = fe_mk_sym("q", init->type, s);
  Scope sc;
  Scope *outer = enter(f, &sc);
  Sym *dst = fe_mk_sym(una_sprintf("d%s", st->name), st->type, s);
  Sym **pair = NEW_ARRAY(Sym *, 2);
  pair[0] = st;
  pair[1] = dst;
  bind_tuple(f, 2, pair, fe_mk_var(s, q));
  set_tan(f, st, fe_mk_var(s, dst));
  Sym *elem = NULL;
  Term *over = NULL;
  if (el >= 0) {
    Sym *x = lam->syms[el];
    if (loop || !xs.t) {
      elem = x; /* the loop index, or the element itself */
      set_tan(f, x, NULL);
      over = loop ? NULL : xs.p;
    } else {
      elem = fe_mk_sym("i", fe_ty_real(), s);
      Term *i = fe_mk_var(s, elem);
      bind_sym(f, x, read_at(s, xs.p, i));
      set_tan(f, x, emit(f, s, "dx", read_at(s, xs.t, i)));
      over = iota_of(s, xs.p);
    }
  }
  Dual d = fwd(f, lam->kids[0]);
  Term *items[2] = {d.p, tan_or_zero(f, s, d)};
  Term *body = close_scope(s, &sc, fe_mk_tuple(s, 2, items));
  f->sc = outer;
  Sym *ps[2];
  int np = 0;
  if (el < 0 || acc == 0) ps[np++] = q;
  if (el >= 0) ps[np++] = elem;
  if (el >= 0 && acc == 1) ps[np++] = q;
  Term *step = fe_mk_lam(s, np, ps, body);
  if (fp == PRIM_LOOP_FOR) {
    Term *args[3] = {step, init, count};
    return emit(f, s, "r", prim(s, fp, 3, args));
  }
  if (fp == PRIM_LOOP_WHILE) {
    Sym *qc = fe_mk_sym("q", init->type, s), *dx = fe_mk_sym("dx", st->type, s);
    Sym **xc = NEW_ARRAY(Sym *, 2);
    xc[0] = cond->syms[0];
    xc[1] = dx;
    Term *test = fe_mk_lam(s, 1, &qc, fe_mk_lettup(s, 2, xc, fe_mk_var(s, qc), cond->kids[0]));
    Term *args[3] = {step, init, test};
    return emit(f, s, "r", prim(s, fp, 3, args));
  }
  Term *args[3] = {step, init, over};
  return emit(f, s, "r", prim(s, fp, 3, args));
}

static Dual split_pair(Fwd *f, Span s, Term *r) {
  return (Dual){emit(f, s, "v", fe_mk_proj(s, r, 0)), emit(f, s, "dv", fe_mk_proj(s, r, 1))};
}

/* foldl, reduce, scanl, scanr. */
static Dual fwd_fold(Fwd *f, const Term *e) {
  Span s = e->span;
  const Term *lam = e->kids[0];
  Dual z = fwd(f, e->kids[1]), xs = fwd(f, e->kids[2]);
  Term *args[3] = {(Term *)lam, z.p, xs.p};
  bool scan = e->prim == PRIM_SCANL || e->prim == PRIM_SCANR;
  int acc = e->prim == PRIM_SCANR ? 1 : 0;
  bool with[2];
  with[acc] = false;
  with[1 - acc] = xs.t != NULL;
  bool state = z.t || lam_active(f, lam, with);
  if (!state) return (Dual){emit(f, s, "v", prim(s, e->prim, 3, args)), NULL};
  bool plus = e->type->kind == (scan ? TY_ARRAY : TY_REAL) && fe_type_eq(z.p->type, fe_ty_real()) &&
              fe_is_oplam_either(lam, PRIM_ADD);
  if (plus) { /* linear: the same builtin over the tangents */
    Term *p = emit(f, s, "v", prim(s, e->prim, 3, args));
    Term *targs[3] = {fe_mk_oplam(s, PRIM_ADD), e->prim == PRIM_REDUCE ? fe_mk_num(s, 0) : tan_or_zero(f, s, z),
                      tan_or_zero(f, s, xs)};
    return (Dual){p, emit(f, s, "dv", prim(s, e->prim, 3, targs))};
  }
  if (e->prim == PRIM_REDUCE) { /* as the left fold it equals */
    Term *p = emit(f, s, "v", prim(s, e->prim, 3, args));
    f->recompute++;
    Term *r = fold_pair(f, e, PRIM_FOLDL, lam, z, xs, NULL, NULL);
    f->recompute--;
    return (Dual){p, emit(f, s, "dv", fe_mk_proj(s, r, 1))};
  }
  Term *r = fold_pair(f, e, e->prim, lam, z, xs, NULL, NULL);
  if (!scan) return split_pair(f, s, r);
  return split_pair(f, s, emit(f, s, "u", prim1(s, PRIM_UNZIP, r)));
}

static Dual fwd_loop(Fwd *f, const Term *e) {
  Span s = e->span;
  const Term *lam = e->kids[0];
  Dual z = fwd(f, e->kids[1]);
  bool with[2] = {false, false};
  bool state = z.t || lam_active(f, lam, with);
  if (!state) {
    Term *args[3] = {(Term *)lam, z.p, (Term *)e->kids[2]};
    if (e->prim == PRIM_LOOP_FOR) args[2] = fwd(f, e->kids[2]).p;
    return (Dual){emit(f, s, "v", prim(s, e->prim, 3, args)), NULL};
  }
  Term *count = e->prim == PRIM_LOOP_FOR ? fwd(f, e->kids[2]).p : NULL;
  Dual none = {NULL, NULL};
  return split_pair(f, s, fold_pair(f, e, e->prim, lam, z, none, count, e->kids[2]));
}

/* Builtins that are linear in their operands in the bit set lin: the
   same builtin on the tangents (zeros for operands that have none); the
   other operands (indices, counts, the unit of a reduce_by_index, its
   operator) are taken as they are. */
static Dual fwd_linear(Fwd *f, const Term *e, unsigned lin) {
  Span s = e->span;
  int n = e->nkids;
  Dual *d = NEW_ARRAY(Dual, n);
  Term **ps = NEW_ARRAY(Term *, n), **ts = NEW_ARRAY(Term *, n);
  bool any = false;
  for (int i = 0; i < n; i++) {
    d[i] = e->kids[i]->kind == T_LAM ? (Dual){(Term *)e->kids[i], NULL} : fwd(f, e->kids[i]);
    ps[i] = d[i].p;
    if (lin >> i & 1) any |= d[i].t != NULL;
  }
  Term *p = emit(f, s, "v", value_prim(f, prim(s, e->prim, n, ps)));
  if (!any) return (Dual){p, NULL};
  for (int i = 0; i < n; i++) ts[i] = lin >> i & 1 ? tan_or_zero(f, s, d[i]) : ps[i];
  Term *t = prim(s, e->prim, n, ts);
  if (e->prim == PRIM_INDEX) t->b = true; /* read after the value's own check */
  return (Dual){p, emit(f, s, "dv", t)};
}

static Dual fwd_array(Fwd *f, const Term *e) {
  switch (e->prim) {
  case PRIM_MAP:
  case PRIM_MAP2:
  case PRIM_MAP3: return fwd_map(f, e);
  case PRIM_REDUCE:
  case PRIM_FOLDL:
  case PRIM_SCANL:
  case PRIM_SCANR: return fwd_fold(f, e);
  case PRIM_LOOP_FOR:
  case PRIM_LOOP_WHILE: return fwd_loop(f, e);
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R:
  case PRIM_TRANSPOSE:
  case PRIM_UNZIP:
  case PRIM_INDEX:
  case PRIM_SLICE: return fwd_linear(f, e, 1u);
  case PRIM_CONCAT:
  case PRIM_ZIP: return fwd_linear(f, e, 3u);
  case PRIM_REPLICATE: return fwd_linear(f, e, 2u);
  case PRIM_SAVE: {
    Dual a = fwd(f, e->kids[1]);
    Term *args[2] = {(Term *)e->kids[0], a.p};
    return (Dual){emit(f, e->span, "v", prim(e->span, PRIM_SAVE, 2, args)), a.t};
  }
  case PRIM_REDUCE_BY_INDEX: {
    if (!fe_is_gadd_lam(e->kids[0]))
      fe_error(e->span, "jvp: reduce_by_index has a tangent only with the operator (+)");
    /* kids: f D v I V; v is the unit 0, whose tangent is 0 */
    return fwd_linear(f, e, 1u << 1 | 1u << 4);
  }
  default: break;
  }
  if (fe_prims[e->prim].grad == G_CONST) return konst(f, e);
  fe_error(e->span, "jvp: internal: no tangent rule for %s", fe_prims[e->prim].name);
}

static Dual fwd(Fwd *f, const Term *e) {
  fe_stack_check(e->span);
  /* the let spine in a loop */
  while (e->kind == T_LET || e->kind == T_LETTUP) {
    Dual r = fwd(f, e->kids[0]);
    if (e->kind == T_LET) {
      bind_sym(f, e->sym, r.p);
      set_tan(f, e->sym, r.t);
    } else {
      bind_tuple(f, e->nsyms, e->syms, r.p);
      for (int i = 0; i < e->nsyms; i++)
        set_tan(f, e->syms[i],
                r.t && fe_type_has_reals(e->syms[i]->type)
                    ? emit(f, e->span, "dv", fe_mk_proj(e->span, r.t, i))
                    : NULL);
    }
    e = e->kids[1];
  }
  switch (e->kind) {
  case T_VAR: return (Dual){(Term *)e, tan_of(f, e->sym)};
  case T_NUM:
  case T_BOOL:
  case T_STR:
  case T_GLOBAL: return (Dual){(Term *)e, NULL};
  case T_GRAD:
  case T_APP:
  case T_LAM: fe_error(e->span, "jvp: internal: %s in a source term", fe_term_kind_names[e->kind]);
  default: break;
  }
  if (!active(f, e)) return konst(f, e);
  switch (e->kind) {
  case T_IF: return fwd_if(f, e);
  case T_TUPLE:
  case T_ARRAY: return fwd_tuple(f, e);
  case T_PROJ: return fwd_proj(f, e);
  case T_CALL: return fwd_call(f, e);
  case T_PRIM: break;
  default: fe_error(e->span, "jvp: internal: no tangent rule for %s", fe_term_kind_names[e->kind]);
  }
  PrimClass cls = fe_prims[e->prim].cls;
  if (cls == P_SCALAR1 || cls == P_SCALAR2) return fwd_scalar(f, e);
  if (cls == P_ARRAY) return fwd_array(f, e);
  return konst(f, e); /* comparisons and logic: booleans */
}

Term *fwd_jvp(Sym **params, Sym **tangents, int n, const Term *body) {
  Fwd f = {0};
  ptrmap_init(&f.tan, 64);
  Span s = body->span;
  for (int i = 0; i < n; i++)
    if (tangents[i]) set_tan(&f, params[i], fe_mk_var(s, tangents[i]));
  if (!fe_type_has_reals(body->type))
    fe_error(s, "jvp needs a function whose result has reals; this one returns %s",
             fe_type_str(body->type));
  Scope top = {0};
  f.sc = &top;
  /* an array's tangent must have its length: checked once here (a wrong
     tangent raises at the start rather than wherever a read would fail),
     which also tells the optimizer that the two lengths are one (the maps
     over indices that the tangents of maps read become maps over arrays) */
  for (int i = 0; i < n; i++)
    if (tangents[i] && params[i]->type->kind == TY_ARRAY)
      emit(&f, s, "check", same_length(s, fe_mk_var(s, params[i]), fe_mk_var(s, tangents[i])));
  Dual d = fwd(&f, body);
  Term *items[2] = {d.p, tan_or_zero(&f, s, d)};
  return fe_copy(close_scope(s, &top, fe_mk_tuple(s, 2, items)));
}

/* The jvp Defs built so far, by wrt, kept on their function (Def.jvps) so
   that they go with it. */
typedef struct Built {
  int *wrt, nwrt;
  Def *d;
  struct Built *next;
} Built;

Def *fwd_jvp_def(const Def *f, const int *wrt, int nwrt) {
  for (Built *b = f->jvps; b; b = b->next)
    if (b->nwrt == nwrt && memcmp(b->wrt, wrt, sizeof(int) * (size_t)nwrt) == 0) return b->d;
  Def *inl = fe_inline_some(f, rev_inline_policy());
  int n = inl->nparams;
  Sym **params = NEW_ARRAY(Sym *, n + nwrt + 1);
  Sym **tangents = NEW_ARRAY(Sym *, n + 1);
  for (int i = 0; i < n; i++) params[i] = inl->params[i];
  /* a tangent has the parameter's tangent type (fe_ty_tangent); inside, the
     parameter's type with false at its booleans */
  Sym **inner = NEW_ARRAY(Sym *, nwrt > 0 ? nwrt : 1);
  for (int k = 0; k < nwrt; k++) {
    Sym *x = inl->params[wrt[k]];
    if (!fe_type_tau_injective(x->type))
      fe_error(x->span, "jvp: parameter '%s' has type %s: an array of booleans beside reals takes no "
                        "tangent yet", x->name, fe_type_str(x->type));
    const Type *tt = fe_ty_tangent(x->type);
    Sym *t = fe_mk_sym(fe_fresh_param_name(una_sprintf("d%s", x->name), params, n + k), tt, x->span);
    params[n + k] = t;
    inner[k] = tt == x->type ? t : fe_mk_sym(t->name, x->type, x->span);
    tangents[wrt[k]] = inner[k];
  }
  Term *body = fwd_jvp(inl->params, tangents, n, inl->body);
  const Type *rt = body->type->elems[1];
  if (fe_ty_tangent(rt) != rt) { /* the result's tangent as its tangent type */
    Span s = f->span;
    Sym *yd[2] = {fe_mk_sym("y", body->type->elems[0], s), fe_mk_sym("dy", rt, s)};
    Term *items[2] = {fe_mk_var(s, yd[0]), fe_mk_tau_project(s, fe_mk_var(s, yd[1]))};
    body = fe_mk_lettup(s, 2, yd, body, fe_mk_tuple(s, 2, items));
  }
  for (int k = nwrt - 1; k >= 0; k--)
    if (inner[k] != params[n + k])
      body = fe_mk_let(f->span, inner[k], fe_mk_tau_inject(f->span, fe_mk_var(f->span, params[n + k]),
                                                            inner[k]->type), body);
  Def *d = fe_mk_def(rev_derived_name("jvp", f, wrt, nwrt), f->span, n + nwrt, params, body);
  d->derived = true;
  Def *owner = (Def *)f; /* the field is a cache */
  Built *b = NEW(Built);
  *b = (Built){NEW_ARRAY(int, nwrt > 0 ? nwrt : 1), nwrt, d, owner->jvps};
  memcpy(b->wrt, wrt, sizeof(int) * (size_t)nwrt);
  owner->jvps = b;
  return d;
}
