/* direct.c: figure 5's direct reverse-mode transform D_{Gamma;Y} (Term ->
   Term with continuations, no UNF): the driver (∇ = pi_2 D(e)(0, 1) with
   the projection continuation of section 3.3), normalization, contexts,
   continuations, and the rules for constants, variables and projections,
   let, tuples, scalar operators and if. Array rules: direct_array.c.

   The rules, as implemented (Gamma = Y's domain, K = the live-out slots,
   d_K their cotangent parameters; "Y(... s += c ...)" passes the
   accumulated cotangent of slot s plus c, 0 when nothing reached it):

   c                 let (y, Y') = (c, fun (d_K, z) -> Y(d_K)) in       (dense)
                     c itself, continuation Y unchanged                 (live)
   x, x.i.j          let (y, Y') = (x.i.j, fun (d_K, z) ->
                         Y(d_K, x += (0, .. (z at i.j) .., 0))) in
                     (the fused var and projection rules: the other
                     components are taken from d_x, zeros only when x
                     had no cotangent yet)
   e.i               let (t, Y1) = D(e) in
                     let (y, Y') = (t.i, fun (d_K, z) -> Y1(d_K, t += (.., z, ..)))
   let x = e1 in e2  let (x, Y1) = D_{Gamma;Y}(e1) in D_{Gamma,x;Y1}(e2)
                     (dense: then (y, fun (d_Gamma, z) -> Y2(d_Gamma, 0_x, z)))
   (e1, .., en)      D(e1) .. D(en) left to right, then
                     (t, fun (d_K, z) -> Yn(d_K, y1 += z.1, .., yn += z.n))
   op e1 .. ek       D(e1) .. D(ek), then
                     (op y1 .. yk, fun (d_K, z) -> Yk(d_K, yi += ∂_i op(y) * z))
   if c then e1 else e2
                     let b = c in
                     (if b then e1 else e2, fun (d_K, z) ->
                        let g = if b then ∇_Δ(e1)[z] else ∇_Δ(e2)[z] in
                        Y(d_K, Δ_j += g.j))
                     (section 7.2's Solution: Y used once, only the taken
                     branch's gradient computed; ∇[z] is the gradient
                     against the seed z, Δ the branches' free variables)

   Errata of figure 5 as printed (checked against finite differences):
   the pair rule ends in Y(x, pi_1 z, pi_2 z) where Y2 is meant (with Y the
   cotangents of e1 and e2 are lost), and both projection rules call Y
   where Y1 (e's continuation) is meant. Example 3.1 elides the inner
   let's epilogue and gives Y3 four parameters in a five-variable context.
   Section 7.2's Solution multiplies both branches' gradients by b and
   1 - b: 0 * nan = nan when the other branch is undefined, and both are
   computed; we branch instead. Array rules: see direct_array.c.

   Each continuation variable is used exactly once. Gamma: in the live
   mode (the default) the slots that are live (used later), so that n
   straight-line lets cost O(n); in the dense mode every ground variable
   in scope, exactly as the paper writes it. */
#include "direct.h"
#include "direct_int.h"
#include "partials.h"
#include "paths.h"
#include "../frontend/ir/build.h"

/* ---- marks in pointer maps (frontend/ir/ptrmap.h) ---- */

static char yes_mark;
#define YES ((void *)&yes_mark)

/* ---- symbol sets ---- */

static RevSyms EMPTY_SET;

static RevSyms *set_one(Sym *x) {
  RevSyms *s = NEW(RevSyms);
  s->v = NEW_ARRAY(Sym *, 1);
  s->v[0] = x;
  s->n = 1;
  return s;
}

static RevSyms *set_union(RevSyms *a, RevSyms *b) {
  if (b->n == 0) return a;
  if (a->n == 0) return b;
  RevSyms *r = NEW(RevSyms);
  r->v = NEW_ARRAY(Sym *, a->n + b->n);
  int i = 0, j = 0;
  while (i < a->n || j < b->n) {
    if (j == b->n || (i < a->n && a->v[i]->id < b->v[j]->id)) r->v[r->n++] = a->v[i++];
    else if (i == a->n || b->v[j]->id < a->v[i]->id) r->v[r->n++] = b->v[j++];
    else {
      r->v[r->n++] = a->v[i++];
      j++;
    }
  }
  return r;
}

static bool set_has(const RevSyms *a, const Sym *x) {
  int lo = 0, hi = a->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (a->v[mid] == x) return true;
    if (a->v[mid]->id < x->id) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/* a without xs[0..k). */
static RevSyms *set_minus(RevSyms *a, Sym *const *xs, int k) {
  int hits = 0;
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < k; j++)
      if (a->v[i] == xs[j]) hits++;
  if (hits == 0) return a;
  RevSyms *r = NEW(RevSyms);
  r->v = NEW_ARRAY(Sym *, a->n > hits ? a->n - hits : 1);
  for (int i = 0; i < a->n; i++) {
    bool drop = false;
    for (int j = 0; j < k; j++) drop = drop || a->v[i] == xs[j];
    if (!drop) r->v[r->n++] = a->v[i];
  }
  return r;
}

/* ---- small helpers ---- */

void rev_dx_unsupported(Span s, const char *what) {
  fe_error(s, "grad: the direct path does not cover %s (the UNF path does)", what);
}


/* Raises unless t is R, [R] or a tuple of those (what carries gradients). */
static void check_differentiable_type(Span s, const Type *t) {
  switch (t->kind) {
  case TY_REAL: return;
  case TY_ARRAY:
    if (t->elem->kind == TY_REAL) return;
    if (t->elem->kind == TY_TUPLE) rev_dx_unsupported(s, "arrays of tuples");
    rev_dx_unsupported(s, "nested arrays");
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++) {
      if (t->elems[i]->kind == TY_BOOL) rev_dx_unsupported(s, "tuples mixing booleans and numbers");
      check_differentiable_type(s, t->elems[i]);
    }
    return;
  case TY_BOOL:
  case TY_FUN: break;
  }
  UNREACHABLE();
}

static bool is_atom(const Term *t) {
  return t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL || t->kind == T_GLOBAL;
}

static Term *clone_node(const Term *t) {
  Term *c = NEW(Term);
  *c = *t;
  if (t->nkids > 0) {
    c->kids = NEW_ARRAY(Term *, t->nkids);
    memcpy(c->kids, t->kids, sizeof(Term *) * (size_t)t->nkids);
  }
  return c;
}

Term *rev_dx_clone_atom(Span s, const Term *a) {
  switch (a->kind) {
  case T_VAR: return fe_mk_var(s, a->sym);
  case T_NUM: return fe_mk_num(s, a->num);
  case T_BOOL: return fe_mk_bool(s, a->b);
  case T_GLOBAL: return clone_node(a);
  default: break;
  }
  UNREACHABLE();
}

Sym *rev_dx_atom_slot(const Term *a) { return a->kind == T_VAR ? a->sym : NULL; }

Term *rev_dx_pick(Span s, Term *t, int ncomp, int i) {
  return ncomp == 1 ? t : fe_mk_proj(s, t, i);
}

static bool is_zero(const Term *t) { return t->kind == T_NUM && t->num == 0; }

/* a +^ b, dropping literal zeros. */
static Term *cot_add(Span s, Term *a, Term *b) {
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  return fe_mk_gadd(s, a, b);
}

/* ---- blocks ---- */

static void block_push(RevBlock *b, RevBind x) {
  if (b->n == b->cap) {
    int cap = b->cap ? b->cap * 2 : 16;
    RevBind *nb = NEW_ARRAY(RevBind, cap);
    if (b->n) memcpy(nb, b->b, sizeof(RevBind) * (size_t)b->n);
    b->b = nb;
    b->cap = cap;
  }
  b->b[b->n++] = x;
}

Sym *rev_dx_bind(RevDx *st, const char *name, Term *rhs, Span s) {
  Sym *x = fe_mk_sym(name, rhs->type, s);
  RevBind b = {x, NULL, 0, rhs, s};
  block_push(st->blk, b);
  return x;
}

Term *rev_dx_atomize(RevDx *st, const char *name, Term *rhs, Span s) {
  if (is_atom(rhs)) return rhs;
  return fe_mk_var(s, rev_dx_bind(st, name, rhs, s));
}

/* Wraps final in the bindings of b, the first outermost. Iterative: a
   block may hold tens of thousands of bindings. */
Term *rev_dx_close(const RevBlock *b, Term *final) {
  for (int i = b->n - 1; i >= 0; i--) {
    const RevBind *x = &b->b[i];
    final = x->xs ? fe_mk_lettup(x->span, x->nxs, x->xs, x->rhs, final)
                  : fe_mk_let(x->span, x->x, x->rhs, final);
  }
  return final;
}

/* ---- normalization ----
   let (a, b) = e1 in e2    ->  let t = e1 in let a = t.1 in let b = t.2 in e2
                                (let a = x in let b = y in e2 when e1 is a
                                literal (x, y), lets of e1 floated out first)
   OP (x. ..p.i.j..) A      ->  let q = p.i.j in OP (x. ..q..) A
                                (projection chains of tuple variables free in
                                a combinator's lambda are taken out of it, so
                                that the per-element gradients of the body
                                never build zeros for the unused components) */

typedef struct Chain {
  Sym *root;
  int *path;
  int depth;
  const Type *type;
  Sym *q;
} Chain;

typedef struct Chains {
  Chain *v;
  int n, cap;
} Chains;

/* The base of a projection chain, with the path from the base outwards. */
static const Term *chain_base(const Term *t, int **path, int *depth) {
  int d = 0;
  const Term *b = t;
  while (b->kind == T_PROJ) {
    d++;
    b = b->kids[0];
  }
  int *p = NEW_ARRAY(int, d > 0 ? d : 1);
  const Term *c = t;
  for (int i = d - 1; i >= 0; i--) {
    p[i] = c->index;
    c = c->kids[0];
  }
  *path = p;
  *depth = d;
  return b;
}

static Chain *chain_find(const Chains *cs, const Sym *root, const int *path, int depth) {
  for (int i = 0; i < cs->n; i++) {
    Chain *c = &cs->v[i];
    if (c->root == root && c->depth == depth && memcmp(c->path, path, sizeof(int) * (size_t)depth) == 0)
      return c;
  }
  return NULL;
}

static void collect_binders(const Term *t, RevPMap *bound) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_LET) rev_dx_map_put(bound, t->sym, YES);
    if (t->kind == T_LETTUP || t->kind == T_LAM)
      for (int i = 0; i < t->nsyms; i++) rev_dx_map_put(bound, t->syms[i], YES);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) collect_binders(t->kids[i], bound);
    t = t->kids[t->nkids - 1];
  }
}

/* The maximal projection chains in t whose base variable is not in bound. */
static void collect_chains(const Term *t, const RevPMap *bound, Chains *cs) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_PROJ) {
      int *path, depth;
      const Term *b = chain_base(t, &path, &depth);
      if (b->kind == T_VAR && !rev_dx_map_get(bound, b->sym)) {
        if (!chain_find(cs, b->sym, path, depth)) {
          if (cs->n == cs->cap) {
            int cap = cs->cap ? cs->cap * 2 : 8;
            Chain *nv = NEW_ARRAY(Chain, cap);
            if (cs->n) memcpy(nv, cs->v, sizeof(Chain) * (size_t)cs->n);
            cs->v = nv;
            cs->cap = cap;
          }
          Chain c = {b->sym, path, depth, t->type, NULL};
          cs->v[cs->n++] = c;
        }
        return;
      }
    }
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) collect_chains(t->kids[i], bound, cs);
    t = t->kids[t->nkids - 1];
  }
}

/* t with every chain of cs replaced by its variable q. */
static Term *replace_chains(const Term *t, const Chains *cs) {
  fe_stack_check(t->span);
  if (t->kind == T_PROJ) {
    int *path, depth;
    const Term *b = chain_base(t, &path, &depth);
    if (b->kind == T_VAR) {
      Chain *c = chain_find(cs, b->sym, path, depth);
      if (c) return fe_mk_var(t->span, c->q);
    }
  }
  if (t->nkids == 0) return (Term *)t;
  Term *c = NULL;
  for (int i = 0; i < t->nkids; i++) {
    Term *k = replace_chains(t->kids[i], cs);
    if (k != t->kids[i]) {
      if (!c) c = clone_node(t);
      c->kids[i] = k;
    }
  }
  return c ? c : (Term *)t;
}

static Term *norm(RevDx *st, const Term *t);

/* A chain of lets and let-tuples, iteratively. */
static Term *norm_spine(RevDx *st, const Term *t) {
  RevBlock b = {0};
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    fe_stack_check(t->span);
    if (t->kind == T_LET) {
      RevBind x = {t->sym, NULL, 0, norm(st, t->kids[0]), t->span};
      block_push(&b, x);
    } else {
      Term *r = norm(st, t->kids[0]);
      while (r->kind == T_LET) { /* float: its binder is fresh, nothing is captured */
        RevBind x = {r->sym, NULL, 0, r->kids[0], r->span};
        block_push(&b, x);
        r = r->kids[1];
      }
      if (r->kind == T_TUPLE && r->nkids == t->nsyms) {
        for (int i = 0; i < t->nsyms; i++) {
          RevBind x = {t->syms[i], NULL, 0, r->kids[i], t->span};
          block_push(&b, x);
        }
      } else {
        Sym *tv = fe_mk_sym("t", r->type, t->span);
        RevBind x = {tv, NULL, 0, r, t->span};
        block_push(&b, x);
        for (int i = 0; i < t->nsyms; i++) {
          RevBind c = {t->syms[i], NULL, 0, fe_mk_proj(t->span, fe_mk_var(t->span, tv), i), t->span};
          block_push(&b, c);
        }
      }
    }
    t = t->kids[1];
  }
  return rev_dx_close(&b, norm(st, t));
}

static Term *norm(RevDx *st, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return norm_spine(st, t);
  if (t->kind == T_PRIM && t->nkids > 0 && t->kids[0]->kind == T_LAM) {
    const Term *lam = t->kids[0];
    RevPMap bound = {0};
    for (int i = 0; i < lam->nsyms; i++) rev_dx_map_put(&bound, lam->syms[i], YES);
    collect_binders(lam->kids[0], &bound);
    Chains cs = {0};
    collect_chains(lam->kids[0], &bound, &cs);
    if (cs.n > 0) {
      RevBlock b = {0};
      for (int i = 0; i < cs.n; i++) {
        Chain *c = &cs.v[i];
        c->q = fe_mk_sym(c->root->name, c->type, lam->span);
        Term *v = fe_mk_var(t->span, c->root);
        for (int k = 0; k < c->depth; k++) v = fe_mk_proj(t->span, v, c->path[k]);
        RevBind x = {c->q, NULL, 0, v, t->span};
        block_push(&b, x);
      }
      Term *np = clone_node(t);
      np->kids[0] = fe_mk_lam(lam->span, lam->nsyms, lam->syms, replace_chains(lam->kids[0], &cs));
      return norm(st, rev_dx_close(&b, np));
    }
  }
  if (t->nkids == 0) return (Term *)t;
  Term *c = NULL;
  for (int i = 0; i < t->nkids; i++) {
    Term *k = norm(st, t->kids[i]);
    if (k != t->kids[i]) {
      if (!c) c = clone_node(t);
      c->kids[i] = k;
    }
  }
  return c ? c : (Term *)t;
}

/* ---- copying source terms into the output ---- */

static Sym *fresh_like(const Sym *x, Span s) { return fe_mk_sym(x->name, x->type, s); }

static Term *copy_spine(RevDx *st, const Term *t) {
  int n = 0, cap = 16;
  const Term **nodes = NEW_ARRAY(const Term *, cap);
  Term **rhs = NEW_ARRAY(Term *, cap);
  Sym ***binders = NEW_ARRAY(Sym **, cap);
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    fe_stack_check(t->span);
    if (n == cap) {
      cap *= 2;
      const Term **nn = NEW_ARRAY(const Term *, cap);
      Term **nr = NEW_ARRAY(Term *, cap);
      Sym ***nb = NEW_ARRAY(Sym **, cap);
      memcpy(nn, nodes, sizeof(Term *) * (size_t)n);
      memcpy(nr, rhs, sizeof(Term *) * (size_t)n);
      memcpy(nb, binders, sizeof(Sym **) * (size_t)n);
      nodes = nn;
      rhs = nr;
      binders = nb;
    }
    nodes[n] = t;
    rhs[n] = rev_dx_copy(st, t->kids[0]);
    int k = t->kind == T_LET ? 1 : t->nsyms;
    binders[n] = NEW_ARRAY(Sym *, k);
    for (int i = 0; i < k; i++) {
      Sym *x = t->kind == T_LET ? t->sym : t->syms[i];
      binders[n][i] = fresh_like(x, t->span);
      rev_dx_map_put(&st->env, x, fe_mk_var(t->span, binders[n][i]));
    }
    n++;
    t = t->kids[1];
  }
  Term *body = rev_dx_copy(st, t);
  for (int i = n - 1; i >= 0; i--) {
    const Term *x = nodes[i];
    body = x->kind == T_LET ? fe_mk_let(x->span, binders[i][0], rhs[i], body)
                            : fe_mk_lettup(x->span, x->nsyms, binders[i], rhs[i], body);
  }
  return body;
}

Term *rev_dx_copy(RevDx *st, const Term *t) {
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_LET:
  case T_LETTUP: return copy_spine(st, t);
  case T_VAR: {
    const Term *m = rev_dx_map_get(&st->env, t->sym);
    return m ? rev_dx_clone_atom(t->span, m) : fe_mk_var(t->span, t->sym);
  }
  case T_LAM: {
    Sym **ps = NEW_ARRAY(Sym *, t->nsyms > 0 ? t->nsyms : 1);
    for (int i = 0; i < t->nsyms; i++) {
      ps[i] = fresh_like(t->syms[i], t->span);
      rev_dx_map_put(&st->env, t->syms[i], fe_mk_var(t->span, ps[i]));
    }
    return fe_mk_lam(t->span, t->nsyms, ps, rev_dx_copy(st, t->kids[0]));
  }
  default: break;
  }
  Term *c = clone_node(t);
  for (int i = 0; i < t->nkids; i++) c->kids[i] = rev_dx_copy(st, t->kids[i]);
  return c;
}

/* ---- analysis: differentiable free variables and activity ----
   fvd(e): the variables of e, free in e, that carry a gradient and occur
   in a differentiable position (not under length, iota, rand, a
   comparison, a condition, replicate's count, a term without reals, the
   right-hand side of a let whose body does not use its variable). A
   let-bound variable carries a gradient when its type is ground and (in
   the live mode) its right-hand side has such variables; lambda
   parameters of R always do. */

static RevSyms *fvd_spine(RevDx *st, const Term *t) {
  int n = 0, cap = 16;
  const Term **lets = NEW_ARRAY(const Term *, cap);
  RevSyms **f = NEW_ARRAY(RevSyms *, cap);
  while (t->kind == T_LET) {
    fe_stack_check(t->span);
    if (n == cap) {
      cap *= 2;
      const Term **nl = NEW_ARRAY(const Term *, cap);
      RevSyms **nf = NEW_ARRAY(RevSyms *, cap);
      memcpy(nl, lets, sizeof(Term *) * (size_t)n);
      memcpy(nf, f, sizeof(RevSyms *) * (size_t)n);
      lets = nl;
      f = nf;
    }
    lets[n] = t;
    f[n] = rev_dx_fvd(st, t->kids[0]);
    if (fe_type_is_ground(t->sym->type) && (st->dense || f[n]->n > 0))
      rev_dx_map_put(&st->active, t->sym, YES);
    n++;
    t = t->kids[1];
  }
  RevSyms *cur = rev_dx_fvd(st, t);
  for (int i = n - 1; i >= 0; i--) {
    /* the right-hand side counts only when the body uses its variable */
    if (set_has(cur, lets[i]->sym)) cur = set_union(f[i], set_minus(cur, &lets[i]->sym, 1));
    rev_dx_map_put(&st->fvd, lets[i], cur);
  }
  return cur;
}

static RevSyms *fvd_kids(RevDx *st, const Term *t, int from) {
  RevSyms *r = &EMPTY_SET;
  for (int i = from; i < t->nkids; i++) r = set_union(r, rev_dx_fvd(st, t->kids[i]));
  return r;
}

static RevSyms *fvd_compute(RevDx *st, const Term *t) {
  fe_stack_check(t->span);
  if (t->type && !fe_type_has_reals(t->type)) return &EMPTY_SET;
  switch (t->kind) {
  case T_VAR: return rev_dx_map_get(&st->active, t->sym) ? set_one(t->sym) : &EMPTY_SET;
  case T_LET: return fvd_spine(st, t);
  case T_PROJ:
  case T_TUPLE:
  case T_ARRAY:
  case T_CALL: return fvd_kids(st, t, 0);
  case T_IF: return fvd_kids(st, t, 1);
  case T_PRIM:
    switch (fe_prims[t->prim].cls) {
    case P_SCALAR1:
    case P_SCALAR2: return fvd_kids(st, t, 0);
    case P_ARRAY: break;
    default: return &EMPTY_SET;
    }
    switch (t->prim) {
    case PRIM_MAP:
    case PRIM_MAP2:
    case PRIM_REDUCE:
    case PRIM_FOLDL:
    case PRIM_SCANL:
    case PRIM_SCANR: {
      const Term *lam = t->kids[0];
      for (int i = 0; i < lam->nsyms; i++)
        if (lam->syms[i]->type->kind == TY_REAL) rev_dx_map_put(&st->active, lam->syms[i], YES);
      RevSyms *b = set_minus(rev_dx_fvd(st, lam->kids[0]), lam->syms, lam->nsyms);
      return set_union(b, fvd_kids(st, t, 1));
    }
    case PRIM_SHIFT1L:
    case PRIM_SHIFT1R: return fvd_kids(st, t, 0);
    case PRIM_REPLICATE:
    case PRIM_SAVE: return rev_dx_fvd(st, t->kids[1]);
    default:
      /* a builtin this path does not cover (prims.def G_RULE): active
         when its operands are, so that the dispatch raises */
      return fe_prims[t->prim].grad == G_RULE ? fvd_kids(st, t, 0) : &EMPTY_SET;
    }
  default: return &EMPTY_SET;
  }
}

RevSyms *rev_dx_fvd(RevDx *st, const Term *t) {
  RevSyms *m = rev_dx_map_get(&st->fvd, t);
  if (m) return m;
  m = fvd_compute(st, t);
  rev_dx_map_put(&st->fvd, t, m);
  return m;
}

Sym *rev_dx_slot(RevDx *st, Sym *x) {
  const Term *m = rev_dx_map_get(&st->env, x);
  if (m) return m->kind == T_VAR && rev_dx_map_get(&st->active, m->sym) ? m->sym : NULL;
  return rev_dx_map_get(&st->active, x) ? x : NULL;
}

void rev_dx_mark_slots(RevDx *st, const RevSyms *set, RevPMap *keep) {
  for (int i = 0; i < set->n; i++) {
    Sym *s = rev_dx_slot(st, set->v[i]);
    if (s) rev_dx_map_put(keep, s, YES);
  }
}

int rev_dx_filter(Sym **dom, int n, const RevPMap *keep, Sym ***out) {
  Sym **r = NEW_ARRAY(Sym *, n > 0 ? n : 1);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (rev_dx_map_get(keep, dom[i])) r[k++] = dom[i];
  *out = r;
  return k;
}

/* ---- continuations ---- */

void rev_dx_back_begin(RevBack *b, RevDx *st, Span s, Sym **K, int nK, const Type *ztype,
                       RevCont callee) {
  memset(b, 0, sizeof *b);
  b->st = st;
  b->span = s;
  b->K = K;
  b->nK = nK;
  b->callee = callee;
  rev_dx_map_init(&b->idx, (size_t)callee.n);
  for (int j = 0; j < callee.n; j++) rev_dx_map_put(&b->idx, callee.dom[j], (void *)(intptr_t)(j + 1));
  b->args = NEW_ARRAY(Term *, callee.n > 0 ? callee.n : 1);
  b->np = nK + (ztype ? 1 : 0);
  b->params = NEW_ARRAY(Sym *, b->np > 0 ? b->np : 1);
  for (int i = 0; i < nK; i++) {
    b->params[i] = fe_mk_sym(una_sprintf("d%s", K[i]->name), K[i]->type, s);
    intptr_t j = (intptr_t)rev_dx_map_get(&b->idx, K[i]);
    ASSERT(j > 0); /* a live cotangent is never dropped */
    b->args[j - 1] = fe_mk_var(s, b->params[i]);
  }
  if (ztype) {
    b->z = fe_mk_sym("z", ztype, s);
    b->params[nK] = b->z;
  }
  b->saved = st->blk;
  st->blk = &b->blk;
}

static int back_index(const RevBack *b, const Sym *slot) {
  if (!slot) return -1;
  return (int)(intptr_t)rev_dx_map_get(&b->idx, slot) - 1;
}

bool rev_dx_back_wants(const RevBack *b, const Sym *slot) { return back_index(b, slot) >= 0; }

void rev_dx_back_add(RevBack *b, Sym *slot, Term *cot) {
  int j = back_index(b, slot);
  if (j < 0) return; /* the slot of a constant: nothing to pass on */
  b->args[j] = b->args[j] ? cot_add(b->span, b->args[j], cot) : cot;
}

Term *rev_dx_back_lam(RevBack *b) {
  Span s = b->span;
  RevCont c = b->callee;
  Term **args = NEW_ARRAY(Term *, c.n > 0 ? c.n : 1);
  for (int j = 0; j < c.n; j++)
    args[j] = b->args[j] ? b->args[j] : fe_mk_zero_like(s, fe_mk_var(s, c.dom[j]));
  Term *app = fe_mk_app(s, fe_mk_var(s, c.fn), c.n, args);
  b->st->blk = b->saved;
  return fe_mk_lam(s, b->np, b->params, rev_dx_close(&b->blk, app));
}

RevRes rev_dx_pair(RevDx *st, Span s, Term *value, Term *lam, Sym **K, int nK) {
  Sym **xs = NEW_ARRAY(Sym *, 2);
  xs[0] = fe_mk_sym("y", value->type, s);
  xs[1] = fe_mk_sym("Y", lam->type, s);
  Term *items[2] = {value, lam};
  RevBind b = {NULL, xs, 2, fe_mk_tuple(s, 2, items), s};
  block_push(st->blk, b);
  rev_dx_map_put(&st->active, xs[0], YES);
  RevRes r;
  r.val = fe_mk_var(s, xs[0]);
  r.c.fn = xs[1];
  r.c.n = nK + 1;
  r.c.dom = NEW_ARRAY(Sym *, nK + 1);
  if (nK) memcpy(r.c.dom, K, sizeof(Sym *) * (size_t)nK);
  r.c.dom[nK] = xs[0];
  return r;
}

RevCont rev_dx_seq(RevDx *st, Term *const *es, int m, RevCont Y, Sym **K, int nK, Term **vals) {
  RevCont cur = Y;
  if (st->dense) {
    for (int i = 0; i < m; i++) {
      RevRes r = rev_dx_D(st, es[i], cur, cur.dom, cur.n);
      vals[i] = r.val;
      cur = r.c;
    }
    return cur;
  }
  /* suf[i]: what es[i..m) need */
  RevSyms **suf = NEW_ARRAY(RevSyms *, m + 1);
  suf[m] = &EMPTY_SET;
  for (int i = m - 1; i >= 0; i--) suf[i] = set_union(rev_dx_fvd(st, es[i]), suf[i + 1]);
  for (int i = 0; i < m; i++) {
    RevPMap keep = {0};
    rev_dx_map_init(&keep, (size_t)(nK + suf[i + 1]->n + i));
    for (int k = 0; k < nK; k++) rev_dx_map_put(&keep, K[k], YES);
    rev_dx_mark_slots(st, suf[i + 1], &keep);
    for (int k = 0; k < i; k++) {
      Sym *s = rev_dx_atom_slot(vals[k]);
      if (s) rev_dx_map_put(&keep, s, YES);
    }
    Sym **Ki;
    int nKi = rev_dx_filter(cur.dom, cur.n, &keep, &Ki);
    RevRes r = rev_dx_D(st, es[i], cur, Ki, nKi);
    vals[i] = r.val;
    cur = r.c;
  }
  return cur;
}

/* ---- rules ---- */

static Term *V(Span s, Sym *x) { return fe_mk_var(s, x); }
static Term *CL(Span s, const Term *a) { return rev_dx_clone_atom(s, a); }

static RevRes d_const(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Term *c = rev_dx_copy(st, e);
  if (st->dense && fe_type_has_reals(e->type)) {
    check_differentiable_type(e->span, e->type);
    RevBack b;
    rev_dx_back_begin(&b, st, e->span, K, nK, e->type, Y);
    return rev_dx_pair(st, e->span, c, rev_dx_back_lam(&b), K, nK);
  }
  RevRes r;
  r.val = rev_dx_atomize(st, "c", c, e->span);
  r.c = Y;
  return r;
}

/* A fresh copy of an atom or a projection chain of one. */
static Term *dup_chain(Span s, const Term *t) {
  if (t->kind == T_PROJ) return fe_mk_proj(s, dup_chain(s, t->kids[0]), t->index);
  return CL(s, t);
}

/* acc +^ [path]z where like is the primal value of the slot (for zeros)
   and acc its cotangent so far (an atom, or NULL for none). */
static Term *add_at_path(Span s, Term *acc, Term *like, const int *path, int depth, Term *z) {
  if (depth == 0) return acc ? cot_add(s, acc, z) : z;
  const Type *t = like->type;
  ASSERT(t->kind == TY_TUPLE);
  Term **items = NEW_ARRAY(Term *, t->n);
  for (int k = 0; k < t->n; k++) {
    Term *a = acc ? fe_mk_proj(s, dup_chain(s, acc), k) : NULL;
    Term *l = fe_mk_proj(s, dup_chain(s, like), k);
    items[k] = k == path[0] ? add_at_path(s, a, l, path + 1, depth - 1, z)
                            : (a ? a : fe_mk_zero_like(s, l));
  }
  return fe_mk_tuple(s, t->n, items);
}

/* Adds [path]z to the cotangent of slot in the continuation b. */
static void back_add_path(RevBack *b, Sym *slot, const int *path, int depth) {
  int j = back_index(b, slot);
  ASSERT(j >= 0);
  Term *acc = b->args[j];
  if (acc && depth > 0 && !is_atom(acc)) acc = rev_dx_atomize(b->st, "d", acc, b->span);
  b->args[j] = add_at_path(b->span, acc, V(b->span, slot), path, depth, V(b->span, b->z));
}

/* x or x.i.j...: the variable rule fused with the projections. */
static RevRes d_path(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  int *path, depth;
  const Term *base = chain_base(e, &path, &depth);
  Sym *slot = rev_dx_slot(st, base->sym);
  ASSERT(slot);
  Term *value = V(e->span, slot);
  for (int i = 0; i < depth; i++) value = fe_mk_proj(e->span, value, path[i]);
  RevBack b;
  rev_dx_back_begin(&b, st, e->span, K, nK, e->type, Y);
  back_add_path(&b, slot, path, depth);
  return rev_dx_pair(st, e->span, value, rev_dx_back_lam(&b), K, nK);
}

static RevRes d_proj(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  RevRes r = rev_dx_D(st, e->kids[0], Y, K, nK);
  Term *value = fe_mk_proj(e->span, CL(e->span, r.val), e->index);
  RevBack b;
  rev_dx_back_begin(&b, st, e->span, K, nK, e->type, r.c);
  Sym *ts = rev_dx_atom_slot(r.val);
  if (rev_dx_back_wants(&b, ts)) back_add_path(&b, ts, &e->index, 1);
  return rev_dx_pair(st, e->span, value, rev_dx_back_lam(&b), K, nK);
}

/* In the dense mode, the paper's let epilogue: (y, fun (d_Gamma, z) ->
   Y2(d_Gamma, 0_x, z)), dropping the slots outside Gamma. */
static RevRes adapt(RevDx *st, Span s, RevRes r, Sym **G, int nG) {
  Sym *vs = rev_dx_atom_slot(r.val);
  bool in_dom = false;
  for (int j = 0; j < r.c.n; j++) in_dom = in_dom || r.c.dom[j] == vs;
  if (!vs || !in_dom) return r;
  RevBack b;
  rev_dx_back_begin(&b, st, s, G, nG, r.val->type, r.c);
  rev_dx_back_add(&b, vs, V(s, b.z));
  return rev_dx_pair(st, s, CL(s, r.val), rev_dx_back_lam(&b), G, nG);
}

static RevRes d_let(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  int n = 0, cap = 16;
  RevCont *outer = NEW_ARRAY(RevCont, cap);
  Span *spans = NEW_ARRAY(Span, cap);
  while (e->kind == T_LET) {
    fe_stack_check(e->span);
    const Term *e1 = e->kids[0], *e2 = e->kids[1];
    Sym **K1 = Y.dom;
    int nK1 = Y.n;
    if (!st->dense) {
      RevPMap keep = {0};
      RevSyms *f2 = rev_dx_fvd(st, e2);
      rev_dx_map_init(&keep, (size_t)(nK + f2->n));
      for (int k = 0; k < nK; k++) rev_dx_map_put(&keep, K[k], YES);
      rev_dx_mark_slots(st, f2, &keep);
      nK1 = rev_dx_filter(Y.dom, Y.n, &keep, &K1);
    }
    RevRes r1;
    if (!st->dense && !set_has(rev_dx_fvd(st, e2), e->sym)) {
      /* a dead right-hand side (no gradient flows through x): a constant */
      r1.val = rev_dx_atomize(st, e->sym->name, rev_dx_copy(st, e1), e->span);
      r1.c = Y;
    } else {
      r1 = rev_dx_D(st, e1, Y, K1, nK1);
    }
    rev_dx_map_put(&st->env, e->sym, r1.val);
    if (st->dense) {
      if (n == cap) {
        cap *= 2;
        RevCont *no = NEW_ARRAY(RevCont, cap);
        Span *ns = NEW_ARRAY(Span, cap);
        memcpy(no, outer, sizeof(RevCont) * (size_t)n);
        memcpy(ns, spans, sizeof(Span) * (size_t)n);
        outer = no;
        spans = ns;
      }
      outer[n] = Y;
      spans[n] = e->span;
      n++;
    }
    Y = r1.c;
    e = e2;
  }
  RevRes r = rev_dx_D(st, e, Y, K, nK);
  for (int i = n - 1; i >= 0; i--) r = adapt(st, spans[i], r, outer[i].dom, outer[i].n);
  return r;
}

static RevRes d_tuple(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  Term **vals = NEW_ARRAY(Term *, e->nkids);
  RevCont C = rev_dx_seq(st, e->kids, e->nkids, Y, K, nK, vals);
  Term **items = NEW_ARRAY(Term *, e->nkids);
  for (int i = 0; i < e->nkids; i++) items[i] = CL(s, vals[i]);
  Term *value = fe_mk_tuple(s, e->nkids, items);
  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, C);
  for (int i = 0; i < e->nkids; i++) {
    Sym *vs = rev_dx_atom_slot(vals[i]);
    if (rev_dx_back_wants(&b, vs)) rev_dx_back_add(&b, vs, fe_mk_proj(s, V(s, b.z), i));
  }
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}

static RevRes d_scalar(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  int n = e->nkids;
  Term *vals[2];
  ASSERT(n == 1 || n == 2);
  RevCont C = rev_dx_seq(st, e->kids, n, Y, K, nK, vals);
  Term *value = n == 1 ? fe_mk_op1(s, e->prim, CL(s, vals[0]))
                       : fe_mk_op2(s, e->prim, CL(s, vals[0]), CL(s, vals[1]));
  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, C);
  for (int i = 0; i < n; i++) {
    Sym *vs = rev_dx_atom_slot(vals[i]);
    if (!rev_dx_back_wants(&b, vs)) continue;
    Term *args[2];
    for (int k = 0; k < n; k++) args[k] = CL(s, vals[k]);
    rev_dx_back_add(&b, vs, fe_mk_mul(s, rev_partial(s, e->prim, i, args), V(s, b.z)));
  }
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}

static RevRes d_if(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  Sym *c = rev_dx_bind(st, "b", rev_dx_copy(st, e->kids[0]), s);
  Sym **D = Y.dom;
  int nD = Y.n;
  if (!st->dense) {
    RevPMap keep = {0};
    rev_dx_mark_slots(st, rev_dx_fvd(st, e->kids[1]), &keep);
    rev_dx_mark_slots(st, rev_dx_fvd(st, e->kids[2]), &keep);
    nD = rev_dx_filter(Y.dom, Y.n, &keep, &D);
  }
  Term *value = fe_mk_if(s, V(s, c), rev_dx_copy(st, e->kids[1]), rev_dx_copy(st, e->kids[2]));
  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, Y);
  Term *g1 = rev_dx_nabla(st, s, D, nD, rev_dx_copy(st, e->kids[1]), V(s, b.z));
  Term *g2 = rev_dx_nabla(st, s, D, nD, rev_dx_copy(st, e->kids[2]), V(s, b.z));
  Sym *g = rev_dx_bind(st, "g", fe_mk_if(s, V(s, c), g1, g2), s);
  for (int j = 0; j < nD; j++) rev_dx_back_add(&b, D[j], rev_dx_pick(s, V(s, g), nD, j));
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}

RevRes rev_dx_D(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  fe_stack_check(e->span);
  if (st->dense) {
    K = Y.dom;
    nK = Y.n;
  }
  if (!fe_type_has_reals(e->type) || rev_dx_fvd(st, e)->n == 0) return d_const(st, e, Y, K, nK);
  check_differentiable_type(e->span, e->type);
  switch (e->kind) {
  case T_VAR: return d_path(st, e, Y, K, nK);
  case T_PROJ: {
    int *path, depth;
    const Term *base = chain_base(e, &path, &depth);
    return base->kind == T_VAR ? d_path(st, e, Y, K, nK) : d_proj(st, e, Y, K, nK);
  }
  case T_LET: return d_let(st, e, Y, K, nK);
  case T_TUPLE: return d_tuple(st, e, Y, K, nK);
  case T_ARRAY: return rev_dx_array_lit(st, e, Y, K, nK);
  case T_IF: return d_if(st, e, Y, K, nK);
  case T_PRIM:
    switch (fe_prims[e->prim].cls) {
    case P_SCALAR1:
    case P_SCALAR2: return d_scalar(st, e, Y, K, nK);
    case P_ARRAY: break;
    default: UNREACHABLE();
    }
    switch (e->prim) {
    case PRIM_MAP:
    case PRIM_MAP2: return rev_dx_map(st, e, Y, K, nK);
    case PRIM_REDUCE:
    case PRIM_FOLDL: return rev_dx_fold(st, e, Y, K, nK);
    case PRIM_REPLICATE: return rev_dx_replicate(st, e, Y, K, nK);
    case PRIM_SAVE: return rev_dx_save(st, e, Y, K, nK);
    default:
      /* prims.def: the language-2 builtins are the UNF path's only */
      fe_error(e->span, "grad: the direct path does not cover %s (the UNF path does)", fe_prims[e->prim].name);
    }
  case T_CALL: fe_error(e->span, "grad: internal: the call of '%s' was not inlined", e->def->name);
  default: break;
  }
  una_internal_error(__FILE__, __LINE__,
                     una_sprintf("direct: unexpected '%s' term", fe_term_kind_names[e->kind]));
}

/* ---- the driver ---- */

/* pi_2 D(body)(0, seed) with the root continuation
   Y = fun (d_dom...) -> (d_ctx[out[0]], ..., d_ctx[out[nout-1]]), where
   dom = the ctx variables that carry a gradient (all of them when dense). */
static Term *drive(bool dense, Span s, Sym **ctx, int n, const bool *act, const int *out,
                   int nout, const Term *body, Term *seed) {
  RevDx st;
  memset(&st, 0, sizeof st);
  st.dense = dense;
  RevBlock top = {0};
  st.blk = &top;
  rev_dx_map_init(&st.env, 64);
  rev_dx_map_init(&st.fvd, 256);
  rev_dx_map_init(&st.active, 64);
  Sym **dom = NEW_ARRAY(Sym *, n > 0 ? n : 1);
  Sym **ps = NEW_ARRAY(Sym *, n > 0 ? n : 1);
  int *pos = NEW_ARRAY(int, n > 0 ? n : 1);
  int nd = 0;
  for (int i = 0; i < n; i++) {
    ASSERT(fe_type_is_ground(ctx[i]->type));
    pos[i] = -1;
    if (!dense && !act[i]) continue;
    rev_dx_map_put(&st.active, ctx[i], YES);
    pos[i] = nd;
    ps[nd] = fe_mk_sym(una_sprintf("d%s", ctx[i]->name), ctx[i]->type, s);
    dom[nd++] = ctx[i];
  }
  Term *nb = norm(&st, body);
  rev_dx_fvd(&st, nb);
  Term **items = NEW_ARRAY(Term *, nout > 0 ? nout : 1);
  for (int k = 0; k < nout; k++) {
    ASSERT(out[k] >= 0 && out[k] < n && pos[out[k]] >= 0);
    items[k] = V(s, ps[pos[out[k]]]);
  }
  Term *res = nout == 1 ? items[0] : fe_mk_tuple(s, nout, items);
  RevCont root;
  root.fn = rev_dx_bind(&st, "Y", fe_mk_lam(s, nd, ps, res), s);
  root.dom = dom;
  root.n = nd;
  RevRes r = rev_dx_D(&st, nb, root, NULL, 0);
  Sym *vs = rev_dx_atom_slot(r.val);
  Term **args = NEW_ARRAY(Term *, r.c.n > 0 ? r.c.n : 1);
  for (int j = 0; j < r.c.n; j++)
    args[j] = r.c.dom[j] == vs ? (seed ? seed : fe_mk_num(s, 1))
                               : fe_mk_zero_like(s, V(s, r.c.dom[j]));
  return rev_dx_close(&top, fe_mk_app(s, V(s, r.c.fn), r.c.n, args));
}

Term *rev_dx_nabla(RevDx *st, Span s, Sym **ctx, int n, Term *body, Term *seed) {
  ASSERT(n >= 1);
  bool *act = NEW_ARRAY(bool, n);
  int *out = NEW_ARRAY(int, n);
  for (int i = 0; i < n; i++) {
    act[i] = true;
    out[i] = i;
  }
  return drive(st->dense, s, ctx, n, act, out, n, body, seed);
}

Term *rev_direct_gradient_mode(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body,
                               RevDirectMode mode) {
  ASSERT(nwrt >= 1);
  bool *act = NEW_ARRAY(bool, n > 0 ? n : 1);
  for (int k = 0; k < nwrt; k++) {
    ASSERT(wrt[k] >= 0 && wrt[k] < n);
    act[wrt[k]] = true;
  }
  return drive(mode == REV_DIRECT_DENSE, body->span, ctx, n, act, wrt, nwrt, body, NULL);
}

Term *rev_direct_gradient(Sym **ctx, int n, const int *wrt, int nwrt, const Term *body) {
  return rev_direct_gradient_mode(ctx, n, wrt, nwrt, body, REV_DIRECT_LIVE);
}
