/* inline.c: the inliner (see inline.h).

   Two phases. First `expand` rewrites the body into a DAG in which each call
   f(a1, ..., an) becomes let p1 = a1 in ... let pn = an in B_f, where p_i
   are f's own parameter Syms and B_f is f's expanded body, computed once per
   callee and shared by all its call sites. Then one fe_copy turns the DAG
   into a tree: copying gives every binder occurrence a fresh Sym and maps
   the uses inside its scope to it, so each pasted B_f gets its own
   parameters and lets. Both phases are linear in the size of the result.

   Scoping is sound: an argument a_i never mentions f's parameters (there is
   no recursion, so a call of f never occurs inside B_f), hence binding p_1
   before evaluating a_2 captures nothing. */
#include "inline.h"
#include "ir/build.h"
#include "ir/subst.h"

/* Def* -> expanded body and inlined size, open addressing; with the
   policy of the inlining. */
typedef struct Memo {
  const Def **keys;
  Term **vals;
  long *sizes; /* -1: not yet computed */
  long *sites; /* calls of the Def in the inlined Def's own body */
  size_t cap, n;
  const FeInlinePolicy *policy; /* NULL: inline every call */
} Memo;

static size_t memo_slot(const Memo *m, const Def *d) {
  size_t i = ((uintptr_t)d >> 4) * 0x9E3779B97F4A7C15ull >> 17 & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != d) i = (i + 1) & (m->cap - 1);
  return i;
}

/* The slot of d, added (body NULL, size -1) when absent. */
static size_t memo_entry(Memo *m, const Def *d) {
  if ((m->n + 1) * 2 > m->cap) {
    Memo g = *m;
    g.cap = m->cap ? m->cap * 2 : 16;
    g.n = m->n;
    g.keys = NEW_ARRAY(const Def *, g.cap);
    g.vals = NEW_ARRAY(Term *, g.cap);
    g.sizes = NEW_ARRAY(long, g.cap);
    g.sites = NEW_ARRAY(long, g.cap);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = memo_slot(&g, m->keys[i]);
        g.keys[j] = m->keys[i];
        g.vals[j] = m->vals[i];
        g.sizes[j] = m->sizes[i];
        g.sites[j] = m->sites[i];
      }
    *m = g;
  }
  size_t i = memo_slot(m, d);
  if (!m->keys[i]) {
    m->n++;
    m->keys[i] = d;
    m->vals[i] = NULL;
    m->sizes[i] = -1;
    m->sites[i] = 0;
  }
  return i;
}

/* ---- the policy: which calls stay calls ---- */

static bool keeps(Memo *m, const Def *d);

/* The node count of t with the calls that are inlined counted as their
   callees' inlined bodies, saturating at cap (no need to count further). */
static long inlined_size(Memo *m, const Term *t, long cap) {
  long n = 0;
  while (t && n <= cap) {
    fe_stack_check(t->span);
    n++;
    if (t->kind == T_CALL && !keeps(m, t->def)) {
      size_t i = memo_entry(m, t->def);
      n += m->sizes[i];
    }
    if (t->nkids == 0) break;
    for (int i = 0; i + 1 < t->nkids && n <= cap; i++) n += inlined_size(m, t->kids[i], cap - n);
    t = t->kids[t->nkids - 1];
  }
  return n;
}

/* Whether calls of d stay calls: the policy allows it and d's body,
   inlined, is over the limit. Sizes are memoized per Def, so deciding is
   linear in the number of Defs and their own sizes (not in the size of
   the inlined program, which may be exponential). */
static bool keeps(Memo *m, const Def *d) {
  const FeInlinePolicy *p = m->policy;
  if (!p) return false;
  size_t i = memo_entry(m, d);
  if (m->sizes[i] < 0) {
    long n = inlined_size(m, d->body, p->limit + 1);
    i = memo_entry(m, d); /* the table may have grown */
    m->sizes[i] = n;
  }
  long n = m->sites[i];
  bool big = m->sizes[i] > p->limit || (n >= 2 && n * m->sizes[i] > p->total);
  return big && (!p->can_keep || p->can_keep(d, p->ud));
}

/* Counts the call sites of each callee in t (the root's own body). */
static void count_sites(Memo *m, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_CALL) {
      size_t i = memo_entry(m, t->def);
      m->sites[i]++;
    }
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) count_sites(m, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

static Term *expand(Memo *m, Term *t);
static Term *rebuild(Term *t, Term **ks);

/* The expanded body of d, computed on first use. */
static Term *callee_body(Memo *m, const Def *d) {
  size_t i = memo_entry(m, d);
  if (!m->vals[i]) {
    Term *b = expand(m, d->body);
    i = memo_entry(m, d); /* the table may have grown */
    m->vals[i] = b;
  }
  return m->vals[i];
}

/* let p1 = a1 in ... let pn = an in B_f, for the call t (args expanded). */
static Term *expand_call(Memo *m, Term *t) {
  const Def *d = t->def;
  ASSERT(d && d->nparams == t->nkids);
  Term **args = NEW_ARRAY(Term *, t->nkids > 0 ? t->nkids : 1);
  for (int i = 0; i < t->nkids; i++) args[i] = expand(m, t->kids[i]);
  if (keeps(m, d)) return rebuild(t, args);
  Term *body = callee_body(m, d);
  ASSERT(fe_type_eq(body->type, t->type));
  for (int i = t->nkids - 1; i >= 0; i--) body = fe_mk_let(t->span, d->params[i], args[i], body);
  return body;
}

/* t with its kids replaced by ks (t itself when none changed). */
static Term *rebuild(Term *t, Term **ks) {
  bool same = true;
  for (int i = 0; i < t->nkids; i++) same = same && ks[i] == t->kids[i];
  if (same) return t;
  Term *c = NEW(Term);
  *c = *t;
  c->kids = ks;
  return c;
}

/* The let spine t = let .. in let .. in tail is walked in a loop (bodies
   may hold tens of thousands of lets), only the right-hand sides and the
   other kids recursively. */
static Term *expand(Memo *m, Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) {
    int n = 0, cap = 16;
    Term **spine = NEW_ARRAY(Term *, cap);
    Term *e = t;
    while (e->kind == T_LET || e->kind == T_LETTUP) {
      if (n == cap) {
        Term **ns = NEW_ARRAY(Term *, cap * 2);
        memcpy(ns, spine, sizeof(Term *) * (size_t)n);
        spine = ns;
        cap *= 2;
      }
      spine[n++] = e;
      e = e->kids[1];
    }
    Term *r = expand(m, e);
    for (int i = n - 1; i >= 0; i--) {
      Term **ks = NEW_ARRAY(Term *, 2);
      ks[0] = expand(m, spine[i]->kids[0]);
      ks[1] = r;
      r = rebuild(spine[i], ks);
    }
    return r;
  }
  if (t->kind == T_CALL) return expand_call(m, t);
  if (t->nkids == 0) return t;
  Term **ks = NEW_ARRAY(Term *, t->nkids);
  for (int i = 0; i < t->nkids; i++) ks[i] = expand(m, t->kids[i]);
  return rebuild(t, ks);
}

Def *fe_inline(const Def *d) { return fe_inline_some(d, NULL); }

Def *fe_inline_some(const Def *d, const FeInlinePolicy *p) {
  Memo m = {0};
  m.policy = p;
  if (p) count_sites(&m, d->body);
  Term *body = fe_copy(expand(&m, d->body));
  Def *r = fe_mk_def(d->name, d->span, d->nparams, d->params, body);
  r->ret = d->ret;
  return r;
}
