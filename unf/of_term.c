/* of_term.c: UNF, checked source Term -> Source UNF (the paper's figure 9).

   Every subterm is generated in the current context, which grows by one
   entry per value computed, so the weakening (e~)_A of the paper is
   implicit: the second operand of e1 op2 e2 is generated in the context
   Gamma, A where A is e1's value. After each construct, proj hides the
   intermediate values, keeping the invariant of lemma 4.4:
   Gamma |- UNF(e) : Gamma, B.

     UNF(c)                 = c[G]                      (a 0-ary operator)
     UNF(x)                 = var[G;i]                  (x the i-th in G)
     UNF(let x = e1 in e2)  = UNF(e1); UNF(e2); proj[G;A;B]
     UNF(let (x1..xk) = e1 in e2)
                            = UNF(e1); (var; pi_i; proj[..;A;A_i]) for each i;
                              UNF(e2); proj[G;A,A1..Ak;B]
     UNF((e1, ..., en))     = UNF(e1); ...; UNF(en); pair[G;A1x..xAn]
     UNF(e.i)               = UNF(e); pi_i; proj[G;A;A_i]
     UNF(op e1 .. en)       = UNF(e1); ...; UNF(en); op[G]; proj[G;R^n;R]
     UNF(map (x.e) e1)      = UNF(e1); map[G;x.e]; proj[G;[R];[R]]
     UNF(map2 f e1 e2)      = UNF(e1); UNF(e2); map2[G;f]; proj[G;[R],[R];[R]]
     UNF(reduce f e1 e2)    = UNF(e1); UNF(e2); reduce[G;f]; proj[G;R,[R];R]
                              (the initial value is UNF'd like foldl's: it
                              may depend on the context and gets a
                              cotangent; the paper keeps it as an index)
     UNF(foldl f e1 e2)     = likewise
     UNF(if c then a else b)= UNF(c); if[G;a;b]; proj[G;B;A]
                              (the branches are source terms over G)
     UNF(replicate n v), UNF([e1..en]), comparisons, !, length, iota, rand:
                              their operands, the primitive, proj
     &&, ||, load, globals, free constants: cst[G;e] (no derivative) */
#include "unf.h"
#include "activity.h"
#include "../frontend/ir/subst.h"

/* A map from Sym (by pointer) to its position in the context. */
typedef struct {
  Sym **keys;
  int *vals;
  int n, cap; /* cap: a power of two */
} PosMap;

static size_t hash_ptr(const void *p, int cap) {
  return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 11) & (size_t)(cap - 1);
}

static void pos_put(PosMap *m, Sym *x, int pos);

static void pos_grow(PosMap *m) {
  PosMap old = *m;
  m->cap = old.cap ? old.cap * 2 : 16;
  m->n = 0;
  m->keys = NEW_ARRAY(Sym *, m->cap);
  m->vals = GC_MALLOC_ATOMIC(sizeof(int) * (size_t)m->cap);
  if (!m->vals) una_internal_error(__FILE__, __LINE__, "out of memory");
  for (int i = 0; i < old.cap; i++)
    if (old.keys[i]) pos_put(m, old.keys[i], old.vals[i]);
}

static void pos_put(PosMap *m, Sym *x, int pos) {
  if (2 * (m->n + 1) > m->cap) pos_grow(m);
  size_t h = hash_ptr(x, m->cap);
  while (m->keys[h] && m->keys[h] != x) h = (h + 1) & (size_t)(m->cap - 1);
  if (!m->keys[h]) m->n++;
  m->keys[h] = x;
  m->vals[h] = pos;
}

static int pos_get(const PosMap *m, const Sym *x) {
  if (m->cap == 0) return -1;
  size_t h = hash_ptr(x, m->cap);
  while (m->keys[h]) {
    if (m->keys[h] == x) return m->vals[h];
    h = (h + 1) & (size_t)(m->cap - 1);
  }
  return -1;
}

typedef struct {
  const UnfCtx *cur; /* the current context */
  Unf **steps;       /* the primitives generated so far, in order */
  int n, cap;
  PosMap pos;
  const UnfActivity *act; /* what depends on the context */
} Gen;

static void emit(Gen *g, Unf *u) {
  ASSERT(unf_ctx_eq(g->cur, u->in));
  if (g->n == g->cap) {
    g->cap = g->cap ? g->cap * 2 : 8;
    Unf **a = NEW_ARRAY(Unf *, g->cap);
    if (g->n) memcpy(a, g->steps, sizeof(Unf *) * (size_t)g->n);
    g->steps = a;
  }
  g->steps[g->n++] = u;
  g->cur = u->out;
}

/* proj[base; n2 entries; 1]: hides the n2 values below the top one. */
static void hide(Gen *g, Span s, int n2) {
  if (n2 > 0) emit(g, unf_proj(s, g->cur, n2, 1));
}

/* Names the top entry x (a let binding) and records its position. */
static void bind_top(Gen *g, Sym *x) {
  ASSERT(fe_type_eq(g->cur->type, x->type));
  g->cur = unf_ctx_name(g->cur, x);
  pos_put(&g->pos, x, g->cur->len - 1);
  int i = g->n - 1; /* the step that computed the value: the last one but proj */
  while (i > 0 && g->steps[i]->kind == U_PROJ) i--;
  Unf *last = g->steps[i];
  if (last->kind != U_VAR && last->kind != U_PROJ && !last->hint) {
    last->hint = x->name;
    last->user = x->user;
  }
}

/* The free variables of ts[0..nts) that have a position in the context,
   each once, in order of first occurrence. */
static int free_in_ctx_of(Gen *g, const Term *const *ts, int nts, Sym ***fv, int **fv_pos) {
  Sym **all = NULL;
  int nall = 0;
  for (int k = 0; k < nts; k++) {
    Sym **a = NULL;
    int na = fe_free_vars(ts[k], &a);
    Sym **both = NEW_ARRAY(Sym *, nall + na > 0 ? nall + na : 1);
    if (nall) memcpy(both, all, sizeof(Sym *) * (size_t)nall);
    if (na) memcpy(both + nall, a, sizeof(Sym *) * (size_t)na);
    all = both;
    nall += na;
  }
  *fv = NEW_ARRAY(Sym *, nall > 0 ? nall : 1);
  *fv_pos = NEW_ARRAY(int, nall > 0 ? nall : 1);
  int m = 0;
  for (int i = 0; i < nall; i++) {
    Sym *x = all[i];
    int p = pos_get(&g->pos, x);
    if (p < 0) continue;
    bool seen = false;
    for (int k = 0; k < m && !seen; k++) seen = (*fv)[k] == x;
    if (seen) continue;
    (*fv)[m] = x;
    (*fv_pos)[m] = p;
    m++;
  }
  return m;
}

/* The same for t1 and t2 (t2 may be NULL). */
static int free_in_ctx(Gen *g, const Term *t1, const Term *t2, Sym ***fv, int **fv_pos) {
  const Term *ts[2] = {t1, t2};
  return free_in_ctx_of(g, ts, t2 ? 2 : 1, fv, fv_pos);
}

static void cst(Gen *g, const Term *t) {
  Sym **fv;
  int *fv_pos;
  int nfv = free_in_ctx(g, t, NULL, &fv, &fv_pos);
  emit(g, unf_cst(t->span, g->cur, t, nfv, fv, fv_pos));
}

static void unf_term(Gen *g, const Term *t);

static void operands(Gen *g, const Term *t, int from) {
  for (int i = from; i < t->nkids; i++) unf_term(g, t->kids[i]);
}

static void combinator(Gen *g, const Term *t, UnfKind k) {
  int nops = t->nkids - 1;
  operands(g, t, 1);
  Sym **fv;
  int *fv_pos;
  int nfv = free_in_ctx(g, t->kids[0], NULL, &fv, &fv_pos);
  Unf *u = unf_combinator(t->span, k, g->cur, t->kids[0], nfv, fv, fv_pos);
  u->checked = t->b;
  emit(g, u);
  hide(g, t->span, nops);
}

/* prim[G; lambdas]: a builtin with its own J^T rule, its operands (the
   kids that are not lambdas) first. */
static void generic(Gen *g, const Term *t) {
  int nops = 0, nlams = 0;
  const Term **lams = NEW_ARRAY(const Term *, t->nkids);
  for (int i = 0; i < t->nkids; i++) {
    if (t->kids[i]->kind == T_LAM) {
      lams[nlams++] = t->kids[i];
      continue;
    }
    unf_term(g, t->kids[i]);
    nops++;
  }
  Sym **fv = NULL;
  int *fv_pos = NULL;
  int nfv = nlams ? free_in_ctx_of(g, lams, nlams, &fv, &fv_pos) : 0;
  emit(g, unf_prim(t->span, g->cur, t, nops, nfv, fv, fv_pos));
  hide(g, t->span, nops);
}

static bool is_R(const Type *t) { return t->kind == TY_REAL; }

/* Whether the combinator t is in the paper's base language: its lambda
   over reals, returning a real (map, map2, reduce, foldl of figure 9). */
static bool has_index(const Term *t) {
  if (t->kind == T_PRIM && (t->prim == PRIM_INDEX || t->prim == PRIM_SLICE)) return true;
  for (int i = 0; i < t->nkids; i++)
    if (has_index(t->kids[i])) return true;
  return false;
}

static bool paper_combinator(const Term *t) {
  const Term *lam = t->kids[0];
  if (has_index(lam->kids[0])) return false; /* gathers: reverse/jt_gather.c */
  for (int i = 0; i < lam->nsyms; i++)
    if (!is_R(lam->syms[i]->type)) return false;
  return is_R(lam->kids[0]->type);
}

static void unf_builtin(Gen *g, const Term *t) {
  Span s = t->span;
  switch (fe_prims[t->prim].cls) {
  case P_SCALAR1:
  case P_SCALAR2:
    operands(g, t, 0);
    emit(g, unf_op(s, g->cur, t->prim));
    hide(g, s, t->nkids);
    return;
  case P_CMP:
  case P_NOT:
    operands(g, t, 0);
    emit(g, unf_ndop(s, g->cur, t, t->nkids));
    hide(g, s, t->nkids);
    return;
  case P_LOGIC: /* short-circuit: the right operand may not be evaluated */
    cst(g, t);
    return;
  case P_ARRAY: break;
  }
  switch (t->prim) {
  case PRIM_MAP:
  case PRIM_MAP2:
  case PRIM_REDUCE:
  case PRIM_FOLDL:
    if (!paper_combinator(t)) {
      generic(g, t);
      return;
    }
    combinator(g, t, t->prim == PRIM_MAP ? U_MAP : t->prim == PRIM_MAP2 ? U_MAP2 : t->prim == PRIM_REDUCE ? U_REDUCE : U_FOLDL);
    return;
  case PRIM_REPLICATE:
    operands(g, t, 0);
    emit(g, unf_replicate(s, g->cur));
    hide(g, s, 2);
    return;
  case PRIM_LOAD: cst(g, t); return;
  case PRIM_SAVE:
    unf_term(g, t->kids[1]);
    emit(g, unf_save(s, g->cur, t));
    hide(g, s, 1);
    return;
  default:
    /* prims.def: a builtin with no derivative (length, iota, rand) is a
       non-differentiable operation on its operands */
    if (fe_prims[t->prim].grad == G_CONST) {
      operands(g, t, 0);
      emit(g, unf_ndop(s, g->cur, t, t->nkids));
      hide(g, s, t->nkids);
      return;
    }
    if (fe_prims[t->prim].grad == G_NONE)
      fe_error(s, "grad: %s is not supported under grad yet", fe_prims[t->prim].name);
    generic(g, t);
    return;
  }
  UNREACHABLE();
}

/* A term that is not a let. */
static void unf_nonlet(Gen *g, const Term *t) {
  Span s = t->span;
  switch (t->kind) {
  case T_NUM:
  case T_BOOL: emit(g, unf_const(s, g->cur, t)); return;
  case T_VAR: {
    int p = pos_get(&g->pos, t->sym);
    if (p >= 0 && unf_sym_active(g->act, t->sym))
      emit(g, unf_var(s, g->cur, p));
    else
      cst(g, t);
    return;
  }
  case T_GLOBAL:
  case T_STR: cst(g, t); return;
  case T_IF: {
    unf_term(g, t->kids[0]);
    Sym **fv;
    int *fv_pos;
    int nfv = free_in_ctx(g, t->kids[1], t->kids[2], &fv, &fv_pos);
    emit(g, unf_if(s, g->cur, t, nfv, fv, fv_pos));
    hide(g, s, 1);
    return;
  }
  case T_TUPLE:
    operands(g, t, 0);
    emit(g, unf_pair(s, g->cur, t->nkids));
    return;
  case T_PROJ:
    unf_term(g, t->kids[0]);
    emit(g, unf_pi(s, g->cur, t->index));
    hide(g, s, 1);
    return;
  case T_ARRAY:
    operands(g, t, 0);
    emit(g, unf_array(s, g->cur, t->nkids));
    hide(g, s, t->nkids);
    return;
  case T_PRIM: unf_builtin(g, t); return;
  case T_GRAD: fe_error(s, "grad of a function that itself computes a gradient is not supported yet");
  case T_CALL: generic(g, t); return; /* a kept call: its J^T calls vjp_NAME */
  default: break;
  }
  fe_error(s, "grad: internal: unexpected %s node in a source term", fe_term_kind_names[t->kind]);
}

/* Let chains are walked in a loop (a program may have thousands of lets);
   the projections that hide the let-bound values are emitted innermost
   first once the final body is done. */
static void unf_term(Gen *g, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind != T_VAR && t->kind != T_NUM && t->kind != T_BOOL &&
      (!unf_term_active(g->act, t) || !fe_type_has_reals(t->type))) {
    cst(g, t); /* no derivative, whatever its type */
    return;
  }
  Span *spans = NULL;
  int *drops = NULL;
  int nlets = 0, cap = 0;
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    unf_term(g, t->kids[0]);
    int drop = 1;
    if (t->kind == T_LET) {
      bind_top(g, t->sym);
    } else {
      int p = g->cur->len - 1; /* the tuple */
      for (int i = 0; i < t->nsyms; i++) {
        emit(g, unf_var(t->span, g->cur, p));
        emit(g, unf_pi(t->span, g->cur, i));
        hide(g, t->span, 1);
        bind_top(g, t->syms[i]);
      }
      drop += t->nsyms;
    }
    if (nlets == cap) {
      cap = cap ? cap * 2 : 16;
      Span *ns = NEW_ARRAY(Span, cap);
      int *nd = NEW_ARRAY(int, cap);
      if (nlets) {
        memcpy(ns, spans, sizeof(Span) * (size_t)nlets);
        memcpy(nd, drops, sizeof(int) * (size_t)nlets);
      }
      spans = ns;
      drops = nd;
    }
    spans[nlets] = t->span;
    drops[nlets] = drop;
    nlets++;
    t = t->kids[1];
  }
  unf_nonlet(g, t);
  while (nlets > 0) {
    nlets--;
    hide(g, spans[nlets], drops[nlets]);
  }
}

Unf *unf_of_term(Sym **ctx, int n, const Term *body) {
  Gen g = {0};
  g.cur = unf_ctx_of_syms(ctx, n);
  g.act = unf_activity(body, ctx, n);
  for (int i = 0; i < n; i++) pos_put(&g.pos, ctx[i], i);
  unf_term(&g, body);
  ASSERT(g.cur->len == n + 1 && fe_type_eq(g.cur->type, body->type));
  return unf_seq(g.n, g.steps);
}
