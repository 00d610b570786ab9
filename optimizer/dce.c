/* dce.c: dead-let elimination: a let (or let-tuple) none of whose
   variables is used is dropped when its right-hand side cannot raise and
   has no effect (opt_may_raise). Chains are processed from their end, and
   the uses inside a dropped right-hand side are discounted at once, so a
   whole chain of dead lets goes in one pass. */
#include "../frontend/common.h"
#include "passes.h"
#include "pe_util.h"

static Term *visit(void *ctx, const Term *t);

/* True when no variable bound by the let node t is used. */
static bool dead(OptSymMap *uses, const Term *t) {
  if (t->kind == T_LET) return opt_map_count(uses, t->sym) == 0;
  for (int i = 0; i < t->nsyms; i++)
    if (opt_map_count(uses, t->syms[i]) != 0) return false;
  return true;
}

/* A let chain, from its end back to its start. */
static Term *chain(OptSymMap *uses, const Term *t) {
  long n = 0, cap = 64;
  const Term **lets = NEW_ARRAY(const Term *, cap);
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    if (n == cap) {
      const Term **v = NEW_ARRAY(const Term *, 2 * cap);
      memcpy(v, lets, sizeof *v * (size_t)n);
      lets = v;
      cap *= 2;
    }
    lets[n++] = cur;
    cur = cur->kids[1];
  }
  Term *tail = visit(uses, cur);
  bool changed = tail != cur;
  Term **rhs = NEW_ARRAY(Term *, n);
  for (long i = n - 1; i >= 0; i--) {
    const Term *l = lets[i];
    if (dead(uses, l) && !opt_may_raise(l->kids[0])) {
      opt_count_uses(l->kids[0], uses, -1);
      rhs[i] = NULL;
      changed = true;
    } else {
      rhs[i] = visit(uses, l->kids[0]);
      if (rhs[i] != l->kids[0]) changed = true;
    }
  }
  if (!changed) return (Term *)t;
  OptBinds b = {0};
  for (long i = 0; i < n; i++)
    if (rhs[i]) opt_binds_node(&b, lets[i], rhs[i]);
  return opt_build_chain(&b, 0, tail);
}

static Term *visit(void *ctx, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return chain(ctx, t);
  return opt_map_kids(t, visit, ctx);
}

/* Dead-let elimination. */
Term *opt_dce(const Term *t) {
  OptSymMap *uses = opt_map_new();
  opt_count_uses(t, uses, 1);
  return visit(uses, t);
}
