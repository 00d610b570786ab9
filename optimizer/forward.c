/* forward.c: forward substitution (paper section 5.1): `let x = y in e`
   and `let x = c in e` for a variable y or a constant c become e with x
   replaced, in one walk with a map (no quadratic substitution). */
#include "../frontend/common.h"
#include "passes.h"
#include "pe_util.h"

static Term *visit(void *ctx, const Term *t);

/* True for the right-hand sides that are substituted forward. */
static bool trivial(const Term *r) { return r->kind == T_VAR || r->kind == T_NUM || r->kind == T_BOOL; }

/* A let chain, with a loop along it. */
static Term *chain(OptSymMap *sub, const Term *t) {
  OptBinds b = {0};
  bool changed = false;
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    Term *r = visit(sub, cur->kids[0]);
    if (cur->kind == T_LET && trivial(r)) {
      opt_map_set(sub, cur->sym, r);
      changed = true;
    } else {
      if (r != cur->kids[0]) changed = true;
      opt_binds_node(&b, cur, r);
    }
    cur = cur->kids[1];
  }
  Term *tail = visit(sub, cur);
  if (tail != cur) changed = true;
  return changed ? opt_build_chain(&b, 0, tail) : (Term *)t;
}

static Term *visit(void *ctx, const Term *t) {
  OptSymMap *sub = ctx;
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_LET:
  case T_LETTUP: return chain(sub, t);
  case T_VAR: {
    Term *r = opt_map_term(sub, t->sym);
    return r ? r : (Term *)t;
  }
  default: return opt_map_kids(t, visit, sub);
  }
}

/* Forward substitution of variables and constants. */
Term *opt_forward(const Term *t) { return visit(opt_map_new(), t); }
