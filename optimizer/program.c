/* program.c: the optimizer over a whole program: a Def and, through its
   calls, every Def it reaches (gradient functions included), each
   optimized once (memoized in Def.optimized). */
#include "opt.h"
#include "program.h"
#include "../frontend/inline.h"

/* Calls of small functions are inlined before optimizing (a function of
   at most SMALL_CALL nodes, its own small calls inlined): their bodies
   then fuse and simplify with the caller's, and a map body calling a
   helper over tuples (3-vectors, pairs) becomes one scalar kernel. A
   small function called n >= 2 times with n times its size over
   SMALL_TOTAL stays a call, so that code does not grow without bound. */
#define SMALL_CALL 200
#define SMALL_TOTAL 4000

static bool calls_any(const Term *t) {
  if (t->kind == T_CALL) return true;
  for (int i = 0; i < t->nkids; i++)
    if (calls_any(t->kids[i])) return true;
  return false;
}

static Def *inline_small(Def *d) {
  if (!calls_any(d->body)) return d;
  static const FeInlinePolicy small = {SMALL_CALL, SMALL_TOTAL, NULL, NULL};
  Def *r = fe_inline_some(d, &small);
  r->derived = d->derived;
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
