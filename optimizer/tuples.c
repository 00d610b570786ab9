/* tuples.c: tuple partial evaluation (paper section 5.1):
   `let (a, b) = (e1, e2) in e` -> `let a = e1 in let b = e2 in e`;
   π_i ⟨e1, ..., en⟩ -> e_i when the other components cannot raise (else
   they are let-bound, in order, for dce to keep); `let t = (e1, e2) in e`
   where t is only projected or destructured -> lets of the components
   (scalar replacement); ⟨π_1 t, ..., π_n t⟩ -> t; a tuple of ifs on one
   condition -> one if of tuples; π_i (if c then a else b) -> if c then
   π_i a else π_i b (and through a let chain's tail), also for `let t = if
   ...` whose every use is π_i t for one i: the other components of the
   branches are then dead (a derivative's tuple of value and tangent,
   where only one is read); `let (..) = if c then (..) else (..) in e`, e
   small -> an if of two such lets (lettup_into_if). */
#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"
#include "../frontend/ir/subst.h"
#include "passes.h"
#include "pe_util.h"

typedef struct Ctx {
  OptSymMap *uses;    /* occurrences of each variable */
  OptSymMap *destr;   /* occurrences as π_i x or as `let (..) = x` */
  OptSymMap *tuples;  /* x -> the tuple of fresh variables replacing it */
  OptSymMap *index;   /* x -> i + 1 when every destructuring of x is π_i x, < 0: mixed */
  OptSymMap *single;  /* x -> the variable replacing π_i x (its one component read) */
} Ctx;

static Term *visit(void *ctx, const Term *t);

/* Notes that x is destructured by u (π_i x or `let (..) = x`) in idx. */
static void note_index(OptSymMap *idx, Sym *x, const Term *u) {
  long have = opt_map_count(idx, x), want = u->kind == T_PROJ ? u->index + 1 : -1;
  if (have == 0) opt_map_add(idx, x, want);
  else if (have > 0 && have != want) opt_map_add(idx, x, -have - 1);
}

/* Counts the destructuring occurrences in t (iteratively). */
static void count_destr(const Term *t, OptSymMap *m, OptSymMap *idx) {
  const Term **st = NEW_ARRAY(const Term *, 256);
  long n = 0, cap = 256;
  st[n++] = t;
  while (n) {
    const Term *u = st[--n];
    if ((u->kind == T_PROJ || u->kind == T_LETTUP) && u->kids[0]->kind == T_VAR) {
      opt_map_add(m, u->kids[0]->sym, 1);
      note_index(idx, u->kids[0]->sym, u);
    }
    for (int i = 0; i < u->nkids; i++) {
      if (n == cap) {
        const Term **v = NEW_ARRAY(const Term *, 2 * cap);
        memcpy(v, st, sizeof *v * (size_t)n);
        st = v;
        cap *= 2;
      }
      st[n++] = u->kids[i];
    }
  }
}

/* π_i of the tuple term k. */
static Term *proj_tuple(const Term *t, Term *k) {
  int i = t->index;
  bool others_pure = true;
  for (int j = 0; j < k->nkids && others_pure; j++)
    if (j != i && opt_may_raise(k->kids[j])) others_pure = false;
  if (others_pure) return k->kids[i];
  OptBinds b = {0};
  Sym *keep = NULL;
  for (int j = 0; j < k->nkids; j++) {
    Sym *y = fe_mk_sym("p", k->kids[j]->type, k->kids[j]->span);
    opt_binds_let(&b, t->span, y, k->kids[j]);
    if (j == i) keep = y;
  }
  return opt_build_chain(&b, 0, fe_mk_var(t->span, keep));
}

/* π_i r pushed into r's branches and let chains, to its tuples. */
static Term *push_proj(Span sp, Term *r, int i) {
  switch (r->kind) {
  case T_TUPLE: {
    Term *p = fe_mk_proj(sp, r, i);
    return proj_tuple(p, r);
  }
  case T_IF: return fe_mk_if(r->span, r->kids[0], push_proj(sp, r->kids[1], i), push_proj(sp, r->kids[2], i));
  case T_LET: return fe_mk_let(r->span, r->sym, r->kids[0], push_proj(sp, r->kids[1], i));
  case T_LETTUP: return fe_mk_lettup(r->span, r->nsyms, r->syms, r->kids[0], push_proj(sp, r->kids[1], i));
  default: return fe_mk_proj(sp, r, i);
  }
}

/* Whether r is an if, or a let chain ending in one or in a tuple. */
static bool pushable(const Term *r) {
  while (r->kind == T_LET || r->kind == T_LETTUP) r = r->kids[1];
  return r->kind == T_IF || r->kind == T_TUPLE;
}

/* ⟨π_1 x, ..., π_n x⟩ -> x when x has n components. */
static Term *eta_tuple(Term *t) {
  const Term *k0 = t->kids[0];
  if (k0->kind != T_PROJ || k0->kids[0]->kind != T_VAR) return t;
  Sym *x = k0->kids[0]->sym;
  if (x->type->kind != TY_TUPLE || x->type->n != t->nkids) return t;
  for (int i = 0; i < t->nkids; i++) {
    const Term *k = t->kids[i];
    if (k->kind != T_PROJ || k->index != i || k->kids[0]->kind != T_VAR || k->kids[0]->sym != x) return t;
  }
  return fe_mk_var(t->span, x);
}

/* ⟨if c then a1 else b1, ..., if c then an else bn⟩ -> if c then ⟨a1, ...,
   an⟩ else ⟨b1, ..., bn⟩ for one condition c (alpha-equal) that cannot
   raise: the branches of each side then share their work (cse), as in
   value_and_grad, whose value and gradient branch on the same test. */
static Term *if_tuple(Term *t) {
  const Term *k0 = t->kids[0];
  if (k0->kind != T_IF || opt_may_raise(k0->kids[0])) return t;
  for (int i = 1; i < t->nkids; i++)
    if (t->kids[i]->kind != T_IF || !opt_alpha_eq(t->kids[i]->kids[0], k0->kids[0])) return t;
  Term **a = NEW_ARRAY(Term *, t->nkids), **b = NEW_ARRAY(Term *, t->nkids);
  for (int i = 0; i < t->nkids; i++) {
    a[i] = t->kids[i]->kids[1];
    b[i] = t->kids[i]->kids[2];
  }
  return fe_mk_if(t->span, k0->kids[0], fe_mk_tuple(t->span, t->nkids, a), fe_mk_tuple(t->span, t->nkids, b));
}

/* The tail of r's let chain. */
static const Term *chain_tail(const Term *r) {
  while (r->kind == T_LET || r->kind == T_LETTUP) r = r->kids[1];
  return r;
}

/* `let (x1, ..., xn) = if c then A else B in rest`, A and B (through their
   lets) tuples and rest small -> `if c then let (x1, ...) = A in rest else
   let (y1, ...) = B in rest[y/x]`: each branch's tuple then meets the
   pattern (the reverse sweep of a loop whose body is an if: `let (g, g_2)
   = if c then (..., reduce_by_index ...) else (..., 0_a) in (g, map2 (+)
   f g_2)` becomes one in-place update or none); NULL otherwise. */
static Term *lettup_into_if(Ctx *c, const Term *cur, Term *r) {
  if (cur->kind != T_LETTUP || r->kind != T_IF || chain_tail(r->kids[1])->kind != T_TUPLE ||
      chain_tail(r->kids[2])->kind != T_TUPLE || fe_term_size_upto(cur->kids[1], 25) > 24)
    return NULL;
  /* rest as this pass leaves it: it may read variables whose lets the
     chain has replaced (scalar replacement) */
  const Term *rest = visit(c, cur->kids[1]);
  int n = cur->nsyms;
  Sym **ys = NEW_ARRAY(Sym *, n);
  Term **vs = NEW_ARRAY(Term *, n);
  for (int i = 0; i < n; i++) {
    ys[i] = fe_mk_sym(cur->syms[i]->name, cur->syms[i]->type, cur->syms[i]->span);
    ys[i]->user = cur->syms[i]->user; /* a name the user wrote stays in both branches */
    vs[i] = fe_mk_var(cur->syms[i]->span, ys[i]);
  }
  Term *a = fe_mk_lettup(cur->span, n, cur->syms, r->kids[1], (Term *)rest);
  Term *b = fe_mk_lettup(cur->span, n, ys, r->kids[2], fe_subst(rest, n, cur->syms, vs));
  return fe_mk_if(r->span, r->kids[0], a, b);
}

/* A let chain, with a loop along it. */
static Term *chain(Ctx *c, const Term *t) {
  OptBinds b = {0};
  bool changed = false;
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    Term *r = visit(c, cur->kids[0]);
    if (r != cur->kids[0]) changed = true;
    Term *split = lettup_into_if(c, cur, r);
    if (split) return opt_build_chain(&b, 0, split);
    if (cur->kind == T_LETTUP && r->kind == T_TUPLE) {
      for (int i = 0; i < r->nkids; i++) opt_binds_let(&b, cur->span, cur->syms[i], r->kids[i]);
      changed = true;
    } else if (cur->kind == T_LET && r->kind == T_TUPLE && opt_map_count(c->uses, cur->sym) > 0 &&
               opt_map_count(c->uses, cur->sym) == opt_map_count(c->destr, cur->sym)) {
      Term **vars = NEW_ARRAY(Term *, r->nkids);
      for (int i = 0; i < r->nkids; i++) {
        Sym *y = fe_mk_sym(cur->sym->name, r->kids[i]->type, cur->sym->span);
        opt_binds_let(&b, cur->span, y, r->kids[i]);
        vars[i] = fe_mk_var(cur->sym->span, y);
      }
      opt_map_set(c->tuples, cur->sym, fe_mk_tuple(r->span, r->nkids, vars));
      changed = true;
    } else if (cur->kind == T_LET && r->type->kind == TY_TUPLE && r->kind != T_TUPLE && pushable(r) &&
               opt_map_count(c->uses, cur->sym) > 0 &&
               opt_map_count(c->uses, cur->sym) == opt_map_count(c->destr, cur->sym) &&
               opt_map_count(c->index, cur->sym) > 0) {
      int i = (int)opt_map_count(c->index, cur->sym) - 1;
      Term *ri = push_proj(cur->span, r, i);
      Sym *y = fe_mk_sym(cur->sym->name, ri->type, cur->sym->span);
      opt_binds_let(&b, cur->span, y, ri);
      opt_map_set(c->single, cur->sym, fe_mk_var(cur->sym->span, y));
      changed = true;
    } else {
      opt_binds_node(&b, cur, r);
    }
    cur = cur->kids[1];
  }
  Term *tail = visit(c, cur);
  if (tail != cur) changed = true;
  return changed ? opt_build_chain(&b, 0, tail) : (Term *)t;
}

static Term *visit(void *ctx, const Term *t) {
  Ctx *c = ctx;
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_LET:
  case T_LETTUP: return chain(c, t);
  case T_VAR: {
    Term *r = opt_map_term(c->tuples, t->sym);
    return r ? r : (Term *)t;
  }
  case T_PROJ: {
    if (t->kids[0]->kind == T_VAR) {
      Term *y = opt_map_term(c->single, t->kids[0]->sym);
      if (y) return y;
    }
    Term *k = visit(c, t->kids[0]);
    if (k->kind == T_TUPLE) return proj_tuple(t, k);
    if (k->kind == T_IF && pushable(k)) return push_proj(t->span, k, t->index);
    return k == t->kids[0] ? (Term *)t : fe_mk_proj(t->span, k, t->index);
  }
  case T_TUPLE: {
    Term *r = eta_tuple(opt_map_kids(t, visit, c));
    return r->kind == T_TUPLE ? if_tuple(r) : r;
  }
  default: return opt_map_kids(t, visit, c);
  }
}

/* Tuple partial evaluation. */
Term *opt_tuples(const Term *t) {
  Ctx c = {opt_map_new(), opt_map_new(), opt_map_new(), opt_map_new(), opt_map_new()};
  opt_count_uses(t, c.uses, 1);
  count_destr(t, c.destr, c.index);
  return visit(&c, t);
}
