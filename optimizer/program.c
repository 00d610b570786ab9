/* program.c: the optimizer over a whole program: a Def and, through its
   calls, every Def it reaches (gradient functions included), each
   optimized once (memoized in Def.optimized). */
#include "opt.h"
#include "program.h"
#include "../frontend/inline.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "pe_util.h"

/* Inside lambda bodies (map, reduce, loop bodies, ...), calls of small
   functions are inlined before optimizing: a function of at most
   SMALL_CALL nodes once its own small calls are inlined. The body then
   fuses and simplifies with the caller's, and a map body calling a helper
   over tuples (3-vectors, pairs) or a derived function (a gradient inside
   a map) becomes one scalar kernel. Calls outside lambdas stay calls (as
   :plan and :cost show them), but for a function of at most TINY_CALL
   nodes given a map written inline (`sum (map f x)`), inlined so that the
   map fuses into its builtin; a small function called n >= 2 times with
   n times its size over SMALL_TOTAL stays a call. SMALL_CALL is large
   enough for a gradient of a function of many scalars (the vector-Jacobian
   product of a 16-parameter reprojection error, ba's, is some 600 nodes):
   a call left in a map body runs element by element on the tree
   evaluator, about 30x slower than the kernel its inlined body becomes. */
#define SMALL_CALL 2000
#define SMALL_TOTAL 4000
#define TINY_CALL 8

typedef struct Inliner {
  PtrMap small; /* Def -> its inlined copy when small, else &no */
} Inliner;

static char no;

static bool calls_any(const Term *t) {
  if (t->kind == T_CALL) return true;
  for (int i = 0; i < t->nkids; i++)
    if (calls_any(t->kids[i])) return true;
  return false;
}

/* d with its small calls inlined, when that is small and calls nothing
   more; else NULL. */
static const Def *small_def(Inliner *in, Def *d) {
  void *m = ptrmap_get(&in->small, d);
  if (m) return m == &no ? NULL : m;
  static const FeInlinePolicy small = {SMALL_CALL, SMALL_TOTAL, NULL, NULL};
  Def *r = fe_inline_some(d, &small);
  bool ok = !calls_any(r->body) && fe_term_size_upto(r->body, SMALL_CALL) <= SMALL_CALL;
  ptrmap_put(&in->small, d, ok ? (void *)r : &no);
  return ok ? r : NULL;
}

/* Whether the call t passes a map written inline (`sum (map f x)`): a
   tiny callee is then inlined outside lambdas too, so that the plan fuses
   the map into the callee's builtin instead of computing it first. */
static bool fuses_arg(const Term *t) {
  for (int i = 0; i < t->nkids; i++) {
    const Term *a = t->kids[i];
    if (a->kind == T_PRIM && (a->prim == PRIM_MAP || a->prim == PRIM_MAP2)) return true;
  }
  return false;
}

static Term *inline_in(Inliner *in, const Term *t, int depth) {
  fe_stack_check(t->span);
  if (t->nkids == 0) return (Term *)t;
  OPT_KIDS(kids, t->nkids);
  int inner = depth + (t->kind == T_LAM);
  for (int i = 0; i < t->nkids; i++) kids[i] = inline_in(in, t->kids[i], inner);
  const Def *s = t->kind == T_CALL && (depth > 0 || fuses_arg(t)) ? small_def(in, t->def) : NULL;
  if (s && depth == 0 && fe_term_size_upto(s->body, TINY_CALL) > TINY_CALL) s = NULL;
  if (!s) return opt_with_kids(t, kids);
  /* let p1 = a1 in ... let pn = an in body (fresh binders) */
  Sym **ps = NEW_ARRAY(Sym *, s->nparams + 1);
  for (int i = 0; i < s->nparams; i++) ps[i] = fe_sym_new(s->params[i]->name, s->params[i]->type, t->span);
  Term *body = opt_freshen(s->body, s->nparams, s->params, ps);
  for (int i = s->nparams - 1; i >= 0; i--) body = fe_mk_let(t->span, ps[i], kids[i], body);
  return body;
}

static Def *inline_small(Def *d) {
  if (!calls_any(d->body)) return d;
  Inliner in = {0};
  Term *body = inline_in(&in, d->body, 0);
  if (body == d->body) return d;
  /* fresh binders throughout: the copy shares unchanged parts with d,
     whose Syms' slots must stay d's */
  Sym **ps = NEW_ARRAY(Sym *, d->nparams + 1);
  for (int i = 0; i < d->nparams; i++) ps[i] = fe_sym_new(d->params[i]->name, d->params[i]->type, d->params[i]->span);
  Def *r = fe_mk_def(d->name, d->span, d->nparams, ps, opt_freshen(body, d->nparams, d->params, ps));
  r->ret = d->ret;
  r->derived = d->derived;
  r->vjp_of = d->vjp_of;
  return r;
}

/* t with every T_CALL retargeted to the optimized callee; t itself when no
   callee changes. */
static Term *retarget(const Term *t, const OptOptions *o) {
  fe_stack_check(t->span);
  Def *callee = NULL;
  if (t->kind == T_CALL) callee = opt_optimize_program(t->def, o);
  Term **kids = NULL;
  for (int i = 0; i < t->nkids; i++) {
    Term *k = retarget(t->kids[i], o);
    if (k != t->kids[i] && !kids) {
      kids = NEW_ARRAY(Term *, t->nkids);
      memcpy(kids, t->kids, sizeof(Term *) * (size_t)t->nkids);
    }
    if (kids) kids[i] = k;
  }
  if (!kids && (!callee || callee == t->def)) return (Term *)t;
  Term *c = NEW(Term);
  *c = *t;
  if (kids) c->kids = kids;
  if (callee) c->def = callee;
  return c;
}


Def *opt_optimize_program(Def *d, const OptOptions *o) {
  if (!o || !o->enabled) return d;
  if (d->optimized) return d->optimized;
  Def *opt = opt_optimize_def(inline_small(d), o);
  Term *body = retarget(opt->body, o);
  if (body != opt->body) {
    Def *n = NEW(Def);
    *n = *opt;
    n->body = body;
    opt = n;
  }
  opt->optimized = opt;
  d->optimized = opt;
  return opt;
}

Def *opt_derived(const Def *d, void *ud) {
  OptOptions o = ud ? *(const OptOptions *)ud : (OptOptions){0};
  o.enabled = true;
  return opt_optimize_program((Def *)d, &o);
}
