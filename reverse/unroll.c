/* unroll.c: small literal for loops and maps over iota unrolled (see
   unroll.h). */
#include "unroll.h"

#include <string.h>

#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"
#include "../frontend/ir/subst.h"

/* The most trips, and the largest body, unrolled (unroll.h). */
enum { UNROLL_TRIPS = 8, UNROLL_NODES = 200 };

/* A literal count of 1 to UNROLL_TRIPS. */
static bool small_count(const Term *n) {
  return n->kind == T_NUM && n->num >= 1 && n->num <= UNROLL_TRIPS && n->num == (double)(int)n->num;
}

Term *rev_unroll_small(const Term *t) {
  fe_stack_check(t->span);
  if (t->nkids == 0) return (Term *)t;
  Term **kids = NULL;
  for (int i = 0; i < t->nkids; i++) {
    Term *k = rev_unroll_small(t->kids[i]);
    if (k != t->kids[i] && !kids) {
      kids = NEW_ARRAY(Term *, t->nkids);
      memcpy(kids, t->kids, sizeof(Term *) * (size_t)t->nkids);
    }
    if (kids) kids[i] = k;
  }
  const Term *lam = kids ? kids[0] : t->kids[0];
  if (t->kind == T_PRIM && t->prim == PRIM_MAP && lam->kind == T_LAM && lam->nsyms == 1) {
    /* map (j. e) (iota n), n a literal: the array [e[0/j], ..., e[n-1/j]] */
    const Term *ar = t->kids[1], *n = ar->kind == T_PRIM && ar->prim == PRIM_IOTA ? ar->kids[0] : NULL;
    if (n && small_count(n) && fe_term_size_upto(lam->kids[0], UNROLL_NODES) <= UNROLL_NODES) {
      int m = (int)n->num;
      Term **items = NEW_ARRAY(Term *, m);
      for (int k = 0; k < m; k++) {
        Term *to = fe_mk_num(t->span, k);
        items[k] = fe_subst(lam->kids[0], 1, lam->syms, &to);
      }
      return fe_term_kids(t->span, T_ARRAY, t->type, m, items);
    }
  }
  if (t->kind == T_PRIM && t->prim == PRIM_LOOP_FOR && small_count(t->kids[2]) && lam->kind == T_LAM &&
      lam->nsyms == 2 && fe_term_size_upto(lam->kids[0], UNROLL_NODES) <= UNROLL_NODES) {
    const Term *count = t->kids[2];
    int n = (int)count->num;
    Span s = t->span;
    Sym **xs = NEW_ARRAY(Sym *, n + 1);
    for (int k = 0; k <= n; k++) xs[k] = fe_mk_sym(lam->syms[0]->name, lam->syms[0]->type, s);
    Term *r = fe_mk_var(s, xs[n]);
    for (int k = n; k >= 1; k--) {
      Term *to[2] = {fe_mk_var(s, xs[k - 1]), fe_mk_num(s, k - 1)};
      r = fe_mk_let(s, xs[k], fe_subst(lam->kids[0], 2, lam->syms, to), r);
    }
    return fe_mk_let(s, xs[0], kids ? kids[1] : t->kids[1], r);
  }
  return kids ? fe_term_copy_with_kids(t, kids) : (Term *)t;
}

