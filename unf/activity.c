/* activity.c: activity analysis (see activity.h). */
#include "activity.h"

static char mark;

static bool walk(UnfActivity *a, const Term *t);

/* The let chain from t: the right-hand sides first (a let-bound variable
   is active when its value is), iteratively (programs have thousands of
   lets). */
static bool walk_lets(UnfActivity *a, const Term *t) {
  const Term **chain = NULL;
  int n = 0, cap = 0;
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    bool act = walk(a, t->kids[0]);
    if (act) {
      if (t->kind == T_LET)
        ptrmap_put(&a->syms, t->sym, &mark);
      else
        for (int i = 0; i < t->nsyms; i++) ptrmap_put(&a->syms, t->syms[i], &mark);
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      const Term **c = NEW_ARRAY(const Term *, cap);
      if (n) memcpy(c, chain, sizeof(Term *) * (size_t)n);
      chain = c;
    }
    chain[n++] = t;
    t = t->kids[1];
  }
  bool body = walk(a, t);
  /* A let is active when its value or its body is. */
  for (int i = n - 1; i >= 0; i--) {
    bool act = body || ptrmap_get(&a->terms, chain[i]->kids[0]);
    if (act) ptrmap_put(&a->terms, chain[i], &mark);
    body = act;
  }
  return body;
}

static bool walk(UnfActivity *a, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return walk_lets(a, t);
  bool act = false;
  switch (t->kind) {
  case T_VAR: act = ptrmap_get(&a->syms, t->sym) != NULL; break;
  default:
    for (int i = 0; i < t->nkids; i++) act |= walk(a, t->kids[i]);
    /* a builtin that carries no derivative (length, iota, stop_gradient)
       is a constant, whatever its arguments: `length x` does not make
       what it feeds active */
    if (t->kind == T_PRIM && fe_prims[t->prim].grad == G_CONST) act = false;
    break;
  }
  if (act) ptrmap_put(&a->terms, t, &mark);
  return act;
}

UnfActivity *unf_activity(const Term *body, Sym **ctx, int n) {
  UnfActivity *a = NEW(UnfActivity);
  /* small to start with: the branches of an if are analysed each on its
     own, thousands of them in an else-if ladder (the maps grow) */
  ptrmap_init(&a->terms, 8);
  ptrmap_init(&a->syms, (size_t)n + 8);
  for (int i = 0; i < n; i++) ptrmap_put(&a->syms, ctx[i], &mark);
  walk(a, body);
  return a;
}

bool unf_term_active(const UnfActivity *a, const Term *t) { return ptrmap_get(&a->terms, t) != NULL; }

bool unf_sym_active(const UnfActivity *a, const Sym *x) { return ptrmap_get(&a->syms, x) != NULL; }
