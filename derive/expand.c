/* expand.c: deriv_expand and deriv_function (derive.h): every derivative
   operator of a checked Def becomes a call of its derived function. */
#include "derive.h"
#include "../forward/jvp.h"
#include "../frontend/inline.h"
#include "../frontend/ir/build.h"
#include "../reverse/reverse.h"

/* True when t contains a T_GRAD node. */
static bool has_grad(const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_GRAD) return true;
    if (t->nkids == 0) return false;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (has_grad(t->kids[i])) return true;
    t = t->kids[t->nkids - 1];
  }
  return false;
}

static bool same_place(Span a, Span b) {
  return a.line == b.line && a.col == b.col &&
         (a.file == b.file || (a.file && b.file && strcmp(a.file, b.file) == 0));
}

/* ---- the derived functions ---- */

/* Derived Defs by (operator, wrt), kept on their function (Def.deriv_ops),
   so that they go with it: each derivative is built and optimized once. */
typedef struct Derived {
  int op, nwrt;
  int *wrt;
  Def *d;
  struct Derived *next;
} Derived;

static Def *derived_find(const Def *f, int op, const int *wrt, int nwrt) {
  for (Derived *e = f->deriv_ops; e; e = e->next)
    if (e->op == op && e->nwrt == nwrt && memcmp(e->wrt, wrt, sizeof(int) * (size_t)nwrt) == 0) return e->d;
  return NULL;
}

static void derived_add(const Def *f, int op, const int *wrt, int nwrt, Def *d) {
  Def *owner = (Def *)f; /* the field is a cache */
  Derived *e = NEW(Derived);
  *e = (Derived){op, nwrt, NEW_ARRAY(int, nwrt > 0 ? nwrt : 1), d, owner->deriv_ops};
  memcpy(e->wrt, wrt, sizeof(int) * (size_t)nwrt);
  owner->deriv_ops = e;
}

static Def *expand_def(const DerivOpt *o, const Def *d);


/* The derived Def of the operator t (optimized: first-order, so that it
   can be inlined into a function that is differentiated in turn). */
Def *deriv_function(const Def *f0, DerivOp op, const int *wrt, int nwrt, const DerivOpt *o) {
  Def *f = expand_def(o, f0);
  Def *hit = derived_find(f, op, wrt, nwrt);
  if (hit) return hit;
  Def *r = NULL;
  switch (op) {
  case DOP_GRAD: r = rev_grad(f, wrt, nwrt, REV_UNF); break;
  case DOP_VJP: r = rev_vjp(f, wrt, nwrt, REV_UNF); break;
  case DOP_JVP: r = fwd_jvp_def(f, wrt, nwrt); break;
  case DOP_VALUE_AND_GRAD: r = rev_value_and_grad(f, wrt, nwrt); break; /* one forward pass */
  }
  r->derived = true;
  r = deriv_split_calls(o->run(r, o->ud), o);
  derived_add(f, op, wrt, nwrt, r);
  return r;
}

/* The Def of a derivative operator. An error raised while deriving it at
   another place than the operator itself (inside f, or inside a function
   f calls, maybe in the prelude) names the operator that led there. */
static Def *grad_def(const DerivOpt *o, const Term *t) {
  FeTry h;
  if (fe_try(&h)) {
    Def *g = deriv_function(t->def, (DerivOp)t->index, t->wrt, t->nwrt, o);
    fe_untry(&h);
    return g;
  }
  FeError e = h.err;
  if (!same_place(e.span, t->span) && t->span.line > 0) {
    bool same_file = e.span.file && t->span.file && strcmp(e.span.file, t->span.file) == 0;
    const char *at = same_file ? "" : una_sprintf("%s:", t->span.file ? t->span.file : "una");
    e.msg = una_sprintf("%s (in %s %s at %s%d:%d)", e.msg, fe_deriv_op_names[t->index], t->def->name, at,
                        t->span.line, t->span.col);
  }
  fe_raise(e);
}

/* t with its T_GRAD nodes replaced; t itself when it has none. */
static Term *expand(const DerivOpt *o, Term *t) {
  fe_stack_check(t->span);
  if (t->nkids == 0) return t;
  Term **kids = NEW_ARRAY(Term *, t->nkids);
  bool changed = false;
  for (int i = 0; i < t->nkids; i++) {
    kids[i] = expand(o, t->kids[i]);
    changed |= kids[i] != t->kids[i];
  }
  if (t->kind == T_GRAD) {
    Def *g = grad_def(o, t);
    ASSERT(fe_type_eq(g->ret, t->type));
    Term *c = fe_term_kids(t->span, T_CALL, g->ret, t->nkids, kids);
    c->def = g;
    return c;
  }
  if (!changed) return t;
  Term *c = NEW(Term);
  *c = *t;
  c->kids = kids;
  return c;
}

static Def *expand_def(const DerivOpt *o, const Def *d) {
  if (!has_grad(d->body)) return (Def *)d;
  Def *n = NEW(Def);
  *n = *d;
  n->body = expand(o, d->body);
  n->optimized = NULL;
  n->plan = NULL;
  return n;
}

Def *deriv_expand(Def *d, const DerivOpt *o) { return expand_def(o, d); }
