/* letnorm.c: let normalisation (paper section 5.1):
   `let x = (let y = a in b) in c` -> `let y = a in let x = b in c`, and
   lets floated out of tuples, array literals, projections, conditions and
   operator arguments where that keeps the order of anything that may
   raise: the lets of an argument move before the earlier arguments only
   when those cannot raise. Lets never leave a branch or a lambda body. */
#include "../frontend/ir/common.h"
#include "passes.h"
#include "pe_util.h"

static Term *visit(void *ctx, const Term *t);

static bool is_let(const Term *t) { return t->kind == T_LET || t->kind == T_LETTUP; }

/* A let chain, flattened with a loop. */
static Term *chain(const Term *t) {
  OptBinds b = {0};
  bool changed = false;
  const Term *cur = t;
  while (is_let(cur)) {
    Term *r = visit(NULL, cur->kids[0]);
    if (is_let(r)) {
      r = opt_peel_lets(r, &b);
      changed = true;
    } else if (r != cur->kids[0]) {
      changed = true;
    }
    opt_binds_node(&b, cur, r);
    cur = cur->kids[1];
  }
  Term *tail = visit(NULL, cur);
  if (tail != cur) changed = true;
  if (is_let(tail)) tail = opt_peel_lets(tail, &b);
  return changed ? opt_build_chain(&b, 0, tail) : (Term *)t;
}

/* How many leading kids of t may give up their lets: all for tuples,
   arrays and strict operators, the first only for conditions and
   short-circuit operators, none elsewhere. */
static int floatable(const Term *t) {
  switch (t->kind) {
  case T_TUPLE:
  case T_ARRAY: return t->nkids;
  case T_PROJ:
  case T_IF: return 1;
  case T_PRIM:
    switch (fe_prims[t->prim].cls) {
    case P_SCALAR1:
    case P_SCALAR2:
    case P_CMP:
    case P_NOT: return t->nkids;
    case P_LOGIC: return 1;
    case P_ARRAY: return 0;
    }
    return 0;
  default: return 0;
  }
}

/* t with its kids visited and the lets of its floatable kids moved in
   front of it (in order); the lets of kid i move only when the kids before
   it cannot raise. */
static Term *float_kids(const Term *t) {
  int n = t->nkids, k = floatable(t);
  Term *small[8];
  Term **kids = n <= 8 ? small : NEW_ARRAY(Term *, n);
  bool any = false;
  for (int i = 0; i < n; i++) {
    kids[i] = visit(NULL, t->kids[i]);
    if (i < k && is_let(kids[i])) any = true;
  }
  if (!any) return opt_with_kids(t, kids);
  OptBinds b = {0};
  for (int i = 0; i < k; i++) {
    if (is_let(kids[i])) kids[i] = opt_peel_lets(kids[i], &b);
    if (i + 1 < k && opt_may_raise(kids[i])) break;
  }
  Term *r = opt_with_kids(t, kids);
  return opt_build_chain(&b, 0, r);
}

static Term *visit(void *ctx, const Term *t) {
  fe_stack_check(t->span);
  if (is_let(t)) return chain(t);
  return float_kids(t);
}

/* Let normalisation: nested lets flattened, lets floated out of tuples
   and operands where safe. */
Term *opt_letnorm(const Term *t) { return visit(NULL, t); }
