/* pe_util.c: helpers shared by the partial-evaluation passes. */
#include "pe_util.h"
#include "rw.h"

#include <string.h>

#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"

/* A map's table: cap slots of stride words each, a slot being the key
   (a Sym *, NULL when empty), then the terms, then the counts (32 bits
   each, two to a word: use counts and depths). */
OptSymMap *opt_map_new_fields(int ncounts, int nterms) {
  OptSymMap *m = NEW(OptSymMap);
  m->cap = 64;
  m->nterms = nterms;
  m->stride = 1 + nterms + (ncounts + 1) / 2;
  m->w = NEW_ARRAY(uintptr_t, m->cap * m->stride);
  return m;
}

OptSymMap *opt_map_new(void) { return opt_map_new_fields(1, 1); }

/* A symbol's hash, which keeps the symbols of one page of memory in one
   run of slots (the low 8 bits: the address within its 4 KiB page, in
   16-byte granules) and spreads pages over the table (the high bits: the
   page number's Fibonacci hash). A pass walks a let chain in the order
   its symbols were made, mostly one page after another, so its lookups
   go to neighbouring slots rather than to a cache line each. */
static unsigned long hash_ptr(const void *p) {
  uint64_t a = (uint64_t)(uintptr_t)p;
  uint64_t page = (a >> 12) * 0x9E3779B97F4A7C15ull;
  return (unsigned long)((page >> 24) << 8 | ((a >> 4) & 0xFF));
}

/* The slot of x, or the empty slot where it would go. */
static uintptr_t *find(const OptSymMap *m, const Sym *x) {
  long mask = m->cap - 1, i = (long)(hash_ptr(x) & (unsigned long)mask);
  for (;;) {
    uintptr_t *e = m->w + i * m->stride;
    if (!e[0] || e[0] == (uintptr_t)x) return e;
    i = (i + 1) & mask;
  }
}

/* The load stays at most 5/8 (linear probing). */
static uintptr_t *entry(OptSymMap *m, Sym *x) {
  if (8 * (m->n + 1) > 5 * m->cap) {
    OptSymMap old = *m;
    m->cap *= 2;
    m->w = NEW_ARRAY(uintptr_t, m->cap * m->stride);
    for (long i = 0; i < old.cap; i++) {
      const uintptr_t *e = old.w + i * old.stride;
      if (e[0]) memcpy(find(m, (const Sym *)e[0]), e, sizeof *e * (size_t)m->stride);
    }
  }
  uintptr_t *e = find(m, x);
  if (!e[0]) {
    e[0] = (uintptr_t)x;
    m->n++;
  }
  return e;
}

static int32_t *counts(const OptSymMap *m, uintptr_t *e) { return (int32_t *)(e + 1 + m->nterms); }

long opt_map_count_at(const OptSymMap *m, const Sym *x, int k) { return counts(m, find(m, x))[k]; }

void opt_map_add_at(OptSymMap *m, Sym *x, int k, long delta) { counts(m, entry(m, x))[k] += (int32_t)delta; }

Term *opt_map_term_at(const OptSymMap *m, const Sym *x, int k) { return (Term *)find(m, x)[1 + k]; }

void opt_map_set_at(OptSymMap *m, Sym *x, int k, Term *t) {
  if (!t && !find(m, x)[0]) return;
  entry(m, x)[1 + k] = (uintptr_t)t;
}

long opt_map_count(const OptSymMap *m, const Sym *x) { return opt_map_count_at(m, x, 0); }

void opt_map_add(OptSymMap *m, Sym *x, long delta) { opt_map_add_at(m, x, 0, delta); }

Term *opt_map_term(const OptSymMap *m, const Sym *x) { return opt_map_term_at(m, x, 0); }

void opt_map_set(OptSymMap *m, Sym *x, Term *t) { opt_map_set_at(m, x, 0, t); }

/* An explicit stack of terms for the iterative walks. */
/* An explicit stack whose first entries are in the struct itself (on the
   C stack of its walk): most walks are of small terms, run once per let,
   and must not allocate. */
typedef struct Stack {
  const Term **v;
  long n, cap;
  const Term *local[32];
} Stack;

#define STACK_INIT(s) ((s).v = (s).local, (s).n = 0, (s).cap = 32)

static void push(Stack *s, const Term *t) {
  if (s->n == s->cap) {
    long cap = 2 * s->cap;
    const Term **v = NEW_ARRAY(const Term *, cap);
    if (s->n) memcpy(v, s->v, sizeof *v * (size_t)s->n);
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = t;
}

void opt_count_uses(const Term *t, OptSymMap *m, long sign) {
  Stack s;
  STACK_INIT(s);
  push(&s, t);
  while (s.n) {
    const Term *u = s.v[--s.n];
    if (u->kind == T_VAR) opt_map_add(m, u->sym, sign);
    for (int i = 0; i < u->nkids; i++) push(&s, u->kids[i]);
  }
}

/* True when the builtin p may raise or has an effect by itself (its
   effect in prims.def). */
static bool prim_may_raise(const Term *t) {
  if (fe_prims[t->prim].effect == E_PURE) return false;
  switch (t->prim) { /* term.h: checked by construction */
  case PRIM_INDEX:
  case PRIM_MAP2:
  case PRIM_MAP3:
  case PRIM_ZIP: return !t->b;
  case PRIM_IOTA: /* iota (length a): a count that is a length */
    return !t->b && !(t->kids[0]->kind == T_PRIM && t->kids[0]->prim == PRIM_LENGTH);
  default: /* checked: a replay of what the primal evaluated (reverse/) */
    return fe_prims[t->prim].effect == E_IO || !t->b;
  }
}

Term *opt_checked_as(Term *n, const Term *from) {
  if (n->kind == T_PRIM && n->prim == PRIM_MAP2 && from->kind == T_PRIM &&
      (from->prim == PRIM_MAP2 || from->prim == PRIM_MAP3 || from->prim == PRIM_ZIP))
    n->b = from->b;
  return n;
}

/* The effects of calling d, memoized in d->effects. */
enum { EFF_KNOWN = 1, EFF_RAISES = 2, EFF_IO = 4 };

static bool has_io(const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    switch (t->kind) {
    case T_GRAD: return true; /* not expanded: treated as opaque */
    case T_CALL:
      if (opt_def_io(t->def)) return true;
      break;
    case T_PRIM:
      if (fe_prims[t->prim].effect == E_IO) return true;
      break;
    default: break;
    }
    if (t->nkids == 0) return false;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (has_io(t->kids[i])) return true;
    t = t->kids[t->nkids - 1];
  }
  return false;
}

static unsigned effects(Def *d) {
  if (!d->effects) {
    unsigned e = EFF_KNOWN;
    if (has_io(d->body)) e |= EFF_IO | EFF_RAISES;
    else if (opt_may_raise(d->body)) e |= EFF_RAISES;
    d->effects = (unsigned char)e;
  }
  return d->effects;
}

bool opt_def_io(Def *d) { return effects(d) & EFF_IO; }
bool opt_def_may_raise(Def *d) { return effects(d) & EFF_RAISES; }

bool opt_may_raise(const Term *t) {
  Stack s;
  STACK_INIT(s);
  push(&s, t);
  while (s.n) {
    const Term *u = s.v[--s.n];
    switch (u->kind) {
    case T_CALL:
      if (opt_def_may_raise(u->def)) return true;
      break;
    case T_GRAD:
    case T_APP:
    case T_APPLY:
    case T_GRADREF: return true;
    case T_LAM: continue; /* a closure value; combinator bodies are pushed below */
    case T_PRIM:
      if (prim_may_raise(u)) return true;
      for (int i = 0; i < u->nkids; i++)
        push(&s, u->kids[i]->kind == T_LAM ? u->kids[i]->kids[0] : u->kids[i]);
      continue;
    default: break;
    }
    for (int i = 0; i < u->nkids; i++) push(&s, u->kids[i]);
  }
  return false;
}

Term *opt_with_kids(const Term *t, Term **kids) {
  int i = 0;
  while (i < t->nkids && kids[i] == t->kids[i]) i++;
  if (i == t->nkids) return (Term *)t;
  return fe_term_copy_with_kids(t, kids);
}

static OptBind *bind_slot(OptBinds *b) {
  if (b->n == b->cap) {
    long cap = b->cap ? 2 * b->cap : 8;
    OptBind *v = NEW_ARRAY(OptBind, cap);
    if (b->n) memcpy(v, b->v, sizeof *v * (size_t)b->n);
    b->v = v;
    b->cap = cap;
  }
  return &b->v[b->n++];
}

void opt_binds_let(OptBinds *b, Span s, Sym *x, Term *rhs) {
  OptBind *e = bind_slot(b);
  e->tup = false;
  e->x = x;
  e->xs = NULL;
  e->n = 1;
  e->span = s;
  e->rhs = rhs;
}

void opt_binds_node(OptBinds *b, const Term *t, Term *rhs) {
  OptBind *e = bind_slot(b);
  e->tup = t->kind == T_LETTUP;
  e->x = t->sym;
  e->xs = t->syms;
  e->n = e->tup ? t->nsyms : 1;
  e->span = t->span;
  e->rhs = rhs;
}

Term *opt_build_chain(const OptBinds *b, long from, Term *tail) {
  for (long i = b->n - 1; i >= from; i--) {
    const OptBind *e = &b->v[i];
    tail = e->tup ? fe_mk_lettup(e->span, e->n, e->xs, e->rhs, tail) : fe_mk_let(e->span, e->x, e->rhs, tail);
  }
  return tail;
}

Term *opt_replace_at(const Term *t, const Term *at, Term *r) {
  if (t == at) return r;
  if (t->kind == T_LAM) return (Term *)t;
  OPT_KIDS(k, t->nkids);
  for (int i = 0; i < t->nkids; i++) k[i] = opt_replace_at(t->kids[i], at, r);
  return opt_with_kids(t, k);
}

Term *opt_peel_lets(Term *t, OptBinds *b) {
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    opt_binds_node(b, t, t->kids[0]);
    t = t->kids[1];
  }
  return t;
}

Term *opt_map_kids(const Term *t, Term *(*visit)(void *ctx, const Term *k), void *ctx) {
  if (t->nkids == 0) return (Term *)t;
  OPT_KIDS(kids, t->nkids);
  for (int i = 0; i < t->nkids; i++) kids[i] = visit(ctx, t->kids[i]);
  return opt_with_kids(t, kids);
}

/* The fresh copy of the binder x, recorded in m. */
static Sym *fresh(OptSymMap *m, Sym *x) {
  Sym *y = fe_sym_new(x->name, x->type, x->span);
  y->user = x->user;
  opt_map_set(m, x, fe_term_var(x->span, y));
  return y;
}

static Term *freshen(OptSymMap *m, const Term *t);

/* Copies the let chain t (a loop along it). */
static Term *freshen_chain(OptSymMap *m, const Term *t) {
  OptBinds b = {0};
  OptBinds saved = {0}; /* the map's previous entries, restored at the end */
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    Term *rhs = freshen(m, cur->kids[0]);
    int n = cur->kind == T_LET ? 1 : cur->nsyms;
    Sym *one, **xs = cur->kind == T_LET ? &one : NEW_ARRAY(Sym *, n);
    for (int i = 0; i < n; i++) {
      Sym *x = cur->kind == T_LET ? cur->sym : cur->syms[i];
      Term *outer = opt_map_term(m, x);
      if (outer) opt_binds_let(&saved, cur->span, x, outer); /* x shadows itself */
      xs[i] = fresh(m, x);
    }
    if (cur->kind == T_LET) opt_binds_let(&b, cur->span, one, rhs);
    else {
      opt_binds_node(&b, cur, rhs);
      b.v[b.n - 1].xs = xs;
    }
    cur = cur->kids[1];
  }
  Term *tail = freshen(m, cur);
  for (long i = saved.n - 1; i >= 0; i--) opt_map_set(m, saved.v[i].x, saved.v[i].rhs);
  return opt_build_chain(&b, 0, tail);
}

static Term *freshen(OptSymMap *m, const Term *t) {
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_VAR: {
    Term *r = opt_map_term(m, t->sym);
    return r ? r : (Term *)t; /* the copy's variable node, shared by its uses */
  }
  case T_LET:
  case T_LETTUP: return freshen_chain(m, t);
  case T_LAM: {
    Term **saved = NEW_ARRAY(Term *, t->nsyms + 1);
    Sym **xs = NEW_ARRAY(Sym *, t->nsyms + 1);
    for (int i = 0; i < t->nsyms; i++) {
      saved[i] = opt_map_term(m, t->syms[i]);
      xs[i] = fresh(m, t->syms[i]);
    }
    Term *body = freshen(m, t->kids[0]);
    for (int i = t->nsyms - 1; i >= 0; i--) opt_map_set(m, t->syms[i], saved[i]);
    return fe_mk_lam(t->span, t->nsyms, xs, body);
  }
  default: {
    if (t->nkids == 0) return (Term *)t;
    OPT_KIDS(kids, t->nkids);
    for (int i = 0; i < t->nkids; i++) kids[i] = freshen(m, t->kids[i]);
    return fe_term_copy_with_kids(t, kids);
  }
  }
}

Term *opt_freshen(const Term *t, int n, Sym **from, Sym **to) {
  OptSymMap *m = opt_map_new();
  for (int i = 0; i < n; i++) opt_map_set(m, from[i], fe_term_var(from[i]->span, to[i]));
  return freshen(m, t);
}

Term *opt_with_tail(const Term *t, Term *e) {
  if (t->kind == T_LET) return fe_mk_let(t->span, t->sym, t->kids[0], opt_with_tail(t->kids[1], e));
  if (t->kind == T_LETTUP) return fe_mk_lettup(t->span, t->nsyms, t->syms, t->kids[0], opt_with_tail(t->kids[1], e));
  return e;
}

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

const Term *opt_row_product(const Term *r) {
  if (!is_prim(r, PRIM_MAP)) return NULL;
  const Term *lam = r->kids[0], *b = lam->kids[0];
  const Sym *p = lam->syms[0];
  /* an inlined dot binds its parameters and its map2 first:
     let a = p in let b = v in let t = map2 (*) a b in reduce (+) 0 t */
  const Sym *bound[8];
  const Term *rhs[8];
  int nb = 0;
  while (b->kind == T_LET && nb < 8) {
    bound[nb] = b->sym;
    rhs[nb++] = b->kids[0];
    b = b->kids[1];
  }
  if (!is_prim(b, PRIM_REDUCE) || !opt_is_oplam(b->kids[0], PRIM_ADD) || !opt_is_num(b->kids[1], 0)) return NULL;
  const Term *m = b->kids[2];
  for (int k = nb - 1; k >= 0; k--)
    if (m->kind == T_VAR && m->sym == bound[k]) m = rhs[k];
  if (!is_prim(m, PRIM_MAP2) || !opt_is_oplam(m->kids[0], PRIM_MUL)) return NULL;
  for (int i = 0; i < 2; i++) {
    const Term *x = m->kids[1 + i], *v = m->kids[2 - i];
    for (int k = nb - 1; k >= 0; k--) {
      if (x->kind == T_VAR && x->sym == bound[k]) x = rhs[k];
      if (v->kind == T_VAR && v->sym == bound[k]) v = rhs[k];
    }
    if (x->kind == T_VAR && x->sym == p && !opt_mentions(v, p)) return v;
  }
  return NULL;
}
