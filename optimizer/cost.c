/* cost.c: NAO(e) of section 5.3 and the cost-vector helpers (cost.h). */
#include "cost.h"

#include <math.h>

/* The NAO of the defs met so far (each def's body is walked once). */
typedef struct NaoMemo {
  const Def **defs;
  int *vals;
  int n, cap;
} NaoMemo;

static int nao(const Term *t, NaoMemo *m);

static int imax(int a, int b) { return a > b ? a : b; }

static int nao_def(const Def *d, NaoMemo *m) {
  for (int i = 0; i < m->n; i++)
    if (m->defs[i] == d) return m->vals[i];
  int v = d->body ? nao(d->body, m) : 0;
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 16;
    const Def **defs = NEW_ARRAY(const Def *, cap);
    int *vals = NEW_ARRAY(int, cap);
    for (int i = 0; i < m->n; i++) {
      defs[i] = m->defs[i];
      vals[i] = m->vals[i];
    }
    m->defs = defs;
    m->vals = vals;
    m->cap = cap;
  }
  m->defs[m->n] = d;
  m->vals[m->n++] = v;
  return v;
}

/* NAO(t); let chains are walked in a loop (they may be thousands long). */
static int nao(const Term *t, NaoMemo *m) {
  fe_stack_check(t->span);
  int r = 0;
  for (;;) {
    switch (t->kind) {
    case T_LET:
    case T_LETTUP:
      r = imax(r, nao(t->kids[0], m));
      t = t->kids[1];
      continue;
    case T_PRIM:
      for (int i = 0; i < t->nkids; i++) {
        const Term *k = t->kids[i];
        /* a lambda argument of map, map2, reduce, foldl, scanl, scanr */
        if (k->kind == T_LAM && fe_prims[t->prim].cls == P_ARRAY) r = imax(r, 1 + nao(k->kids[0], m));
        else r = imax(r, nao(k, m));
      }
      return r;
    case T_CALL:
    case T_GRAD:
      if (t->def) r = imax(r, nao_def(t->def, m));
      for (int i = 0; i < t->nkids; i++) r = imax(r, nao(t->kids[i], m));
      return r;
    default:
      /* constants, variables, tuples, projections, if, array literals,
         closures (their body) and applications */
      for (int i = 0; i < t->nkids; i++) r = imax(r, nao(t->kids[i], m));
      return r;
    }
  }
}

/* NAO(t) as defined in cost.h. */
int opt_nao(const Term *t) {
  NaoMemo m = {NULL, NULL, 0, 0};
  return nao(t, &m);
}

/* NAO of d's body. */
int opt_nao_def(const Def *d) {
  NaoMemo m = {NULL, NULL, 0, 0};
  return nao_def(d, &m);
}

/* The component-wise sum. */
CpuCost opt_cost_add(CpuCost a, CpuCost b) {
  CpuCost c = {a.moves + b.moves, a.adds + b.adds, a.mults + b.mults, a.nlops + b.nlops};
  return c;
}

/* MOVES + ADDS + MULTS + NLOPS. */
uint64_t opt_cost_total(CpuCost c) { return c.moves + c.adds + c.mults + c.nlops; }

/* "(MOVES, ADDS, MULTS, NLOPS)". */
char *opt_cost_str(CpuCost c) {
  return una_sprintf("(%llu, %llu, %llu, %llu)", (unsigned long long)c.moves, (unsigned long long)c.adds,
                     (unsigned long long)c.mults, (unsigned long long)c.nlops);
}

/* 4 * 3^nao. */
double opt_cheap_gradient_factor(int nao_) { return 4.0 * pow(3.0, nao_); }

/* Theorem 5.4's inequality on the scalar costs. */
bool opt_cost_within(CpuCost gradient, CpuCost primal, int nao_) {
  return (double)opt_cost_total(gradient) <= opt_cheap_gradient_factor(nao_) * (double)opt_cost_total(primal);
}
