/* program.c: the optimizer over a whole program: a Def and, through its
   calls, every Def it reaches (gradient functions included), each
   optimized once (memoized in Def.optimized). */
#include "opt.h"
#include "program.h"


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
  Def *opt = opt_optimize_def(d, o);
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
