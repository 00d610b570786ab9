/* subst.c: capture-free substitution, copying and free variables. */
#include "subst.h"

/* A map from Sym to Term, scoped by truncation (binders push; leaving a
   scope pops back to the saved length). A hash index on the Sym pointer
   finds the newest entry for a Sym; each entry remembers the entry it
   shadows, so popping restores the index. Linear in the term's size. */
typedef struct {
  Sym **from;
  Term **to;
  int *shadowed; /* index of the entry for the same Sym below, or -1 */
  int n, cap;
  int *index; /* hash slots: entry index or -1 */
  int nindex; /* power of two */
} Map;

static size_t hash_sym(const Sym *x, int nindex) {
  return ((uintptr_t)x >> 4) * 0x9E3779B97F4A7C15ull >> 7 & (size_t)(nindex - 1);
}

/* The hash slot that holds x, or the empty slot where x would go. */
static int *slot_of(const Map *m, const Sym *x) {
  size_t h = hash_sym(x, m->nindex);
  for (;;) {
    int *p = &m->index[h];
    if (*p < 0 || m->from[*p] == x) return p;
    h = (h + 1) & (size_t)(m->nindex - 1);
  }
}

static void map_reindex(Map *m, int nindex) {
  m->nindex = nindex;
  m->index = GC_MALLOC_ATOMIC(sizeof(int) * (size_t)nindex);
  if (!m->index) una_internal_error(__FILE__, __LINE__, "out of memory");
  for (int i = 0; i < nindex; i++) m->index[i] = -1;
  for (int i = 0; i < m->n; i++) *slot_of(m, m->from[i]) = i; /* newest wins */
}

static void map_push(Map *m, Sym *from, Term *to) {
  if (m->n == m->cap) {
    int cap = m->cap ? m->cap * 2 : 16;
    Sym **f = NEW_ARRAY(Sym *, cap);
    Term **t = NEW_ARRAY(Term *, cap);
    int *sh = GC_MALLOC_ATOMIC(sizeof(int) * (size_t)cap);
    if (!sh) una_internal_error(__FILE__, __LINE__, "out of memory");
    if (m->n) {
      memcpy(f, m->from, sizeof(Sym *) * (size_t)m->n);
      memcpy(t, m->to, sizeof(Term *) * (size_t)m->n);
      memcpy(sh, m->shadowed, sizeof(int) * (size_t)m->n);
    }
    m->from = f;
    m->to = t;
    m->shadowed = sh;
    m->cap = cap;
    map_reindex(m, cap * 4);
  }
  int *p = slot_of(m, from);
  m->from[m->n] = from;
  m->to[m->n] = to;
  m->shadowed[m->n] = *p;
  *p = m->n;
  m->n++;
}

/* Pops entries back to length n, restoring what they shadowed. */
static void map_pop(Map *m, int n) {
  while (m->n > n) {
    m->n--;
    int *p = slot_of(m, m->from[m->n]);
    *p = m->shadowed[m->n];
    if (*p < 0) {
      /* Deleting from linear probing: re-insert the rest of the cluster. */
      size_t h = (size_t)(p - m->index);
      for (;;) {
        h = (h + 1) & (size_t)(m->nindex - 1);
        int e = m->index[h];
        if (e < 0) break;
        m->index[h] = -1;
        *slot_of(m, m->from[e]) = e;
      }
    }
  }
}

static Term *map_find(const Map *m, const Sym *x) {
  if (m->n == 0) return NULL;
  int e = *slot_of(m, x);
  return e < 0 ? NULL : m->to[e];
}

static Sym *rebind(Map *m, Span s, Sym *x) {
  Sym *y = fe_sym_new(x->name, x->type, x->span);
  y->user = x->user;
  Term *v = fe_term_var(s, y);
  map_push(m, x, v);
  return y;
}

static Term *copy(const Term *t, Map *m) {
  fe_stack_check(t->span);
  if (t->kind == T_VAR) {
    Term *r = map_find(m, t->sym);
    if (r) return r;
  }
  Term *c = NEW(Term);
  *c = *t;
  int saved = m->n;
  switch (t->kind) {
  case T_LET:
    /* rhs is outside the binder's scope */
    c->kids = NEW_ARRAY(Term *, 2);
    c->kids[0] = copy(t->kids[0], m);
    c->sym = rebind(m, t->span, t->sym);
    c->kids[1] = copy(t->kids[1], m);
    map_pop(m, saved);
    return c;
  case T_LETTUP:
    c->kids = NEW_ARRAY(Term *, 2);
    c->kids[0] = copy(t->kids[0], m);
    c->syms = NEW_ARRAY(Sym *, t->nsyms);
    for (int i = 0; i < t->nsyms; i++) c->syms[i] = rebind(m, t->span, t->syms[i]);
    c->kids[1] = copy(t->kids[1], m);
    map_pop(m, saved);
    return c;
  case T_LAM:
    c->syms = NEW_ARRAY(Sym *, t->nsyms > 0 ? t->nsyms : 1);
    for (int i = 0; i < t->nsyms; i++) c->syms[i] = rebind(m, t->span, t->syms[i]);
    c->kids = NEW_ARRAY(Term *, 1);
    c->kids[0] = copy(t->kids[0], m);
    map_pop(m, saved);
    return c;
  default:
    break;
  }
  if (t->nkids > 0) {
    c->kids = NEW_ARRAY(Term *, t->nkids);
    for (int i = 0; i < t->nkids; i++) c->kids[i] = copy(t->kids[i], m);
  }
  return c;
}

Term *fe_subst(const Term *t, int n, Sym **from, Term **to) {
  Map m = {0};
  for (int i = 0; i < n; i++) {
    ASSERT(fe_type_eq(from[i]->type, to[i]->type));
    map_push(&m, from[i], to[i]);
  }
  return copy(t, &m);
}

Term *fe_copy(const Term *t) { return fe_subst(t, 0, NULL, NULL); }

typedef struct {
  Sym **v;
  int n, cap;
} SymVec;

static bool sv_has(const SymVec *v, const Sym *x) {
  for (int i = 0; i < v->n; i++)
    if (v->v[i] == x) return true;
  return false;
}

static void sv_push(SymVec *v, Sym *x) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    Sym **nv = NEW_ARRAY(Sym *, cap);
    if (v->n) memcpy(nv, v->v, sizeof(Sym *) * (size_t)v->n);
    v->v = nv;
    v->cap = cap;
  }
  v->v[v->n++] = x;
}

/* bound: the binders in scope (a stack); out: free variables found. */
static void free_vars(const Term *t, SymVec *bound, SymVec *out) {
  fe_stack_check(t->span);
  int saved = bound->n;
  switch (t->kind) {
  case T_VAR:
    if (!sv_has(bound, t->sym) && !sv_has(out, t->sym)) sv_push(out, t->sym);
    return;
  case T_LET:
    free_vars(t->kids[0], bound, out);
    sv_push(bound, t->sym);
    free_vars(t->kids[1], bound, out);
    bound->n = saved;
    return;
  case T_LETTUP:
    free_vars(t->kids[0], bound, out);
    for (int i = 0; i < t->nsyms; i++) sv_push(bound, t->syms[i]);
    free_vars(t->kids[1], bound, out);
    bound->n = saved;
    return;
  case T_LAM:
    for (int i = 0; i < t->nsyms; i++) sv_push(bound, t->syms[i]);
    free_vars(t->kids[0], bound, out);
    bound->n = saved;
    return;
  default:
    for (int i = 0; i < t->nkids; i++) free_vars(t->kids[i], bound, out);
  }
}

int fe_free_vars(const Term *t, Sym ***out) {
  SymVec bound = {0}, found = {0};
  free_vars(t, &bound, &found);
  *out = found.v;
  return found.n;
}
