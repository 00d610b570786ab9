/* expand.c: rev_expand_grads, which turns every `grad f args` of a checked
   Def into a call of the gradient function grad_f (reverse.h). */
#include "reverse.h"

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

/* The gradient Def for a T_GRAD node. An error raised while deriving it at
   another place than the grad itself (inside f, or inside a function f
   calls, maybe in the prelude) names the grad that led there. */
static Def *grad_def(const Term *t) {
  FeTry h;
  if (fe_try(&h)) {
    Def *g = rev_grad(t->def, t->wrt, t->nwrt, REV_UNF);
    fe_untry(&h);
    return g;
  }
  FeError e = h.err;
  if (!same_place(e.span, t->span) && t->span.line > 0) {
    bool same_file = e.span.file && t->span.file && strcmp(e.span.file, t->span.file) == 0;
    const char *at = same_file ? "" : una_sprintf("%s:", t->span.file ? t->span.file : "una");
    e.msg = una_sprintf("%s (in grad %s at %s%d:%d)", e.msg, t->def->name, at, t->span.line,
                        t->span.col);
  }
  fe_raise(e);
}

/* t with its T_GRAD nodes replaced; t itself when it has none. */
static Term *expand(Term *t) {
  fe_stack_check(t->span);
  if (t->nkids == 0) return t;
  Term **kids = NEW_ARRAY(Term *, t->nkids);
  bool changed = false;
  for (int i = 0; i < t->nkids; i++) {
    kids[i] = expand(t->kids[i]);
    changed |= kids[i] != t->kids[i];
  }
  if (t->kind == T_GRAD) {
    Def *g = grad_def(t);
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

Def *rev_expand_grads(Def *d) {
  if (!has_grad(d->body)) return d;
  Def *n = NEW(Def);
  *n = *d;
  n->body = expand(d->body);
  return n;
}
