/* beta.c: β-reduction of continuations (paper section 5.1): a let-bound
   lambda used once (lemma 5.1) is inlined at its use, and an application
   of a lambda becomes lets binding its parameters to the arguments. A
   let-tuple whose right-hand side is a tuple holding lambdas
   (`let (y, K) = (v, fun ...) in ...`) is split into lets first. */
#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"
#include "passes.h"
#include "pe_util.h"

typedef struct Ctx {
  OptSymMap *uses; /* occurrences of each variable in the input */
  OptSymMap *lams; /* let-bound lambdas (already reduced) waiting for their one use */
} Ctx;

static Term *visit(void *ctx, const Term *t);

/* The lambda that the head of an application stands for, or NULL. */
static Term *applied_lambda(Ctx *c, const Term *head) {
  if (head->kind == T_VAR) {
    Term *lam = opt_map_term(c->lams, head->sym);
    if (lam) opt_map_set(c->lams, head->sym, NULL);
    return lam;
  }
  if (head->kind == T_LAM) return visit(c, head);
  return NULL;
}

/* Binds x to r: a lambda used at most once is kept aside (inlined at its
   use, or dropped); anything else becomes a binding. Returns true when the
   binding was taken out. */
static bool bind(Ctx *c, OptBinds *b, Span s, Sym *x, Term *r) {
  if (r->kind == T_LAM && opt_map_count(c->uses, x) <= 1) {
    if (opt_map_count(c->uses, x) == 1) opt_map_set(c->lams, x, r);
    return true;
  }
  opt_binds_let(b, s, x, r);
  return false;
}

/* True when some component of the tuple term t is a lambda. */
static bool holds_lambda(const Term *t) {
  for (int i = 0; i < t->nkids; i++)
    if (t->kids[i]->kind == T_LAM) return true;
  return false;
}

/* A let chain (lets, let-tuples and β-redexes in tail position), with a
   loop along the chain. */
static Term *chain(Ctx *c, const Term *t) {
  OptBinds b = {0};
  bool changed = false;
  const Term *cur = t;
  Term *tail;
  for (;;) {
    if (cur->kind == T_LET) {
      Term *r = visit(c, cur->kids[0]);
      if (bind(c, &b, cur->span, cur->sym, r) || r != cur->kids[0]) changed = true;
      cur = cur->kids[1];
      continue;
    }
    if (cur->kind == T_LETTUP) {
      const Term *rhs = cur->kids[0];
      if (rhs->kind == T_TUPLE && holds_lambda(rhs)) {
        for (int i = 0; i < rhs->nkids; i++) bind(c, &b, cur->span, cur->syms[i], visit(c, rhs->kids[i]));
        changed = true;
      } else {
        Term *r = visit(c, rhs);
        if (r != rhs) changed = true;
        opt_binds_node(&b, cur, r);
      }
      cur = cur->kids[1];
      continue;
    }
    if (cur->kind == T_APP) {
      fe_stack_check(cur->span);
      Term *lam = applied_lambda(c, cur->kids[0]);
      if (lam) {
        for (int i = 1; i < cur->nkids; i++) opt_binds_let(&b, cur->span, lam->syms[i - 1], visit(c, cur->kids[i]));
        tail = lam->kids[0]; /* already reduced */
        changed = true;
        break;
      }
      tail = opt_map_kids(cur, visit, c);
    } else {
      tail = visit(c, cur);
    }
    if (tail != cur) changed = true;
    break;
  }
  return changed ? opt_build_chain(&b, 0, tail) : (Term *)t;
}

static Term *visit(void *ctx, const Term *t) {
  Ctx *c = ctx;
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_LET:
  case T_LETTUP:
  case T_APP: return chain(c, t);
  case T_VAR: {
    Term *lam = opt_map_term(c->lams, t->sym);
    if (lam) {
      opt_map_set(c->lams, t->sym, NULL);
      return lam;
    }
    return (Term *)t;
  }
  default: return opt_map_kids(t, visit, c);
  }
}

/* Whether t has something for the pass: an application, or a lambda
   bound by a let (or in a let-tuple's tuple). A walk without a map or an
   allocation, so that the rounds that confirm the fixpoint are cheap (a
   gradient's continuations are all gone after the first round). */
static bool has_redex(const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_APP) return true;
    if (t->kind == T_LET && t->kids[0]->kind == T_LAM) return true;
    if (t->kind == T_LETTUP && t->kids[0]->kind == T_TUPLE && holds_lambda(t->kids[0])) return true;
    if (t->nkids == 0) return false;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (has_redex(t->kids[i])) return true;
    t = t->kids[t->nkids - 1]; /* a let chain's body: no recursion */
  }
  return false;
}

/* β-reduction of continuations: let-bound lambdas used once are inlined
   and applications of lambdas become lets. */
Term *opt_beta(const Term *t) {
  if (!has_redex(t)) return (Term *)t;
  OptSymMap *m = opt_map_new(); /* uses in its count, lams in its term: one slot per variable */
  Ctx c = {m, m};
  opt_count_uses(t, c.uses, 1);
  return visit(&c, t);
}
