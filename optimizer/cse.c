/* cse.c: common subexpressions of pure terms: hash-consing of let
   right-hand sides in a scope. In `let x = e in ... let y = e' in ...`
   with e' equal to e up to renaming of bound variables, and x in scope
   (x's let encloses y's, possibly through lambda bodies), y's right-hand
   side becomes x (forward substitution then removes y). Only pure
   right-hand sides are shared: no load, save, calls of functions that
   do either, gradients, applications or closures (a call of a function
   without them is shared like a builtin: the language has no other
   effects); an rhs that may raise is fine (the second
   evaluation would raise where the first already did). Variables and
   literals are left to forward substitution. Operands are not reordered
   (x1 * x2 and x2 * x1 stay distinct). An array builtin or a small scalar
   one inside an expression that equals an enclosing let's right-hand side
   becomes that let's variable too. */
#include "passes.h"

#include <string.h>

#include "../frontend/ir/build.h"
#include "pe_util.h"

typedef struct Entry {
  unsigned long hash;
  Term *rhs;
  Sym *x;
  int comp;  /* 0: rhs is x's; k + 1: rhs is component k of x's elements */
  long next; /* previous head of the bucket */
} Entry;

typedef struct Cse {
  Entry *v;
  long n, cap;
  long *heads; /* nbuckets, -1 when empty */
  long nbuckets;
  long roots[PRIM__COUNT]; /* entries in scope whose right-hand side is that builtin */
} Cse;

static unsigned long mix(unsigned long h, unsigned long v) { return (h ^ v) * 0x100000001b3UL; }

/* Binders inside the term being hashed, innermost last. */
typedef struct HashScope {
  const Sym **v;
  int n, cap;
} HashScope;

static void scope_push(HashScope *sc, const Sym *x) {
  if (sc->n == sc->cap) {
    sc->cap = sc->cap ? 2 * sc->cap : 16;
    const Sym **v = NEW_ARRAY(const Sym *, sc->cap);
    if (sc->n) memcpy(v, sc->v, sizeof(Sym *) * (size_t)sc->n);
    sc->v = v;
  }
  sc->v[sc->n++] = x;
}

/* A hash that agrees with alpha_eq: a variable bound inside the term hashes
   by its binder's position, a free one by its identity (so that `x1 * x2`
   and `x3 * x4` land in different buckets and lookups stay O(1)). */
static unsigned long hash_in(const Term *t, HashScope *sc) {
  fe_stack_check(t->span);
  unsigned long h = 0xcbf29ce484222325UL;
  int saved = sc->n;
  for (;;) {
    h = mix(h, (unsigned long)t->kind);
    switch (t->kind) {
    case T_NUM: {
      unsigned long bits;
      memcpy(&bits, &t->num, sizeof bits);
      h = mix(h, bits);
      break;
    }
    case T_BOOL: h = mix(h, t->b); break;
    case T_PRIM: h = mix(h, (unsigned long)t->prim); break;
    case T_CALL: h = mix(h, (unsigned long)(size_t)t->def); break;
    case T_PROJ: h = mix(h, (unsigned long)t->index); break;
    case T_VAR: {
      int i = sc->n - 1;
      while (i >= 0 && sc->v[i] != t->sym) i--;
      h = mix(h, i >= 0 ? (unsigned long)(sc->n - i) : 0x9e3779b97f4a7c15UL ^ (unsigned long)t->sym->id);
      break;
    }
    case T_GLOBAL: h = mix(h, (unsigned long)(size_t)t->global); break;
    case T_LAM:
    case T_LETTUP:
      for (int i = 0; i < t->nsyms; i++) scope_push(sc, t->syms[i]);
      break;
    default: break;
    }
    if (t->nkids == 0) break;
    for (int i = 0; i + 1 < t->nkids; i++) h = mix(h, hash_in(t->kids[i], sc));
    if (t->kind == T_LET) scope_push(sc, t->sym); /* the body sees the binder, the rhs does not */
    t = t->kids[t->nkids - 1];
  }
  sc->n = saved;
  return h;
}

static unsigned long hash_term(const Term *t) {
  HashScope sc = {0};
  return hash_in(t, &sc);
}

/* Binder correspondences of an alpha-equality test. */
typedef struct Pairs {
  Sym **a, **b;
  long n, cap;
} Pairs;

static void pairs_push(Pairs *p, Sym *a, Sym *b) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 16;
    Sym **na = NEW_ARRAY(Sym *, p->cap), **nb = NEW_ARRAY(Sym *, p->cap);
    if (p->n) {
      memcpy(na, p->a, sizeof(Sym *) * (size_t)p->n);
      memcpy(nb, p->b, sizeof(Sym *) * (size_t)p->n);
    }
    p->a = na;
    p->b = nb;
  }
  p->a[p->n] = a;
  p->b[p->n++] = b;
}

static bool sym_eq(const Pairs *p, const Sym *a, const Sym *b) {
  for (long i = p->n - 1; i >= 0; i--)
    if (p->a[i] == a || p->b[i] == b) return p->a[i] == a && p->b[i] == b;
  return a == b;
}

static bool alpha_eq(const Term *a, const Term *b, Pairs *p) {
  fe_stack_check(a->span);
  if (a->kind != b->kind || a->nkids != b->nkids || !fe_type_eq(a->type, b->type)) return false;
  switch (a->kind) {
  case T_NUM:
    if (memcmp(&a->num, &b->num, sizeof a->num) != 0) return false;
    break;
  case T_BOOL:
    if (a->b != b->b) return false;
    break;
  case T_STR:
    if (strcmp(a->str, b->str) != 0) return false;
    break;
  case T_VAR: return sym_eq(p, a->sym, b->sym);
  case T_GLOBAL:
    if (a->global != b->global) return false;
    break;
  case T_PRIM:
    if (a->prim != b->prim) return false;
    break;
  case T_CALL:
    if (a->def != b->def) return false;
    break;
  case T_PROJ:
    if (a->index != b->index) return false;
    break;
  case T_LET:
  case T_LETTUP:
  case T_LAM: {
    if (a->kind != T_LET && a->nsyms != b->nsyms) return false;
    long saved = p->n;
    int body = a->kind == T_LAM ? 0 : 1;
    if (body == 1 && !alpha_eq(a->kids[0], b->kids[0], p)) return false;
    if (a->kind == T_LET)
      pairs_push(p, a->sym, b->sym);
    else
      for (int i = 0; i < a->nsyms; i++) pairs_push(p, a->syms[i], b->syms[i]);
    bool r = alpha_eq(a->kids[body], b->kids[body], p);
    p->n = saved;
    return r;
  }
  case T_TUPLE:
  case T_IF:
  case T_ARRAY: break;
  default: return false; /* GRAD, APP: not shared */
  }
  for (int i = 0; i < a->nkids; i++)
    if (!alpha_eq(a->kids[i], b->kids[i], p)) return false;
  return true;
}

/* True when a and b are the same term up to the names of their bound
   variables (pe_util.h). */
bool opt_alpha_eq(const Term *a, const Term *b) {
  Pairs p = {0};
  return alpha_eq(a, b, &p);
}

/* True when t calls nothing impure (load, save, calls of functions that
   do, gradients, applications), anywhere inside. */
static bool pure(const Term *t) {
  fe_stack_check(t->span);
  for (;;) {
    switch (t->kind) {
    case T_CALL:
      if (opt_def_io(t->def)) return false;
      break;
    case T_GRAD:
    case T_APP: return false;
    case T_PRIM:
      if (fe_prims[t->prim].effect == E_IO) return false; /* load, save */
      break;
    default: break;
    }
    if (t->nkids == 0) return true;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (!pure(t->kids[i])) return false;
    t = t->kids[t->nkids - 1];
  }
}

/* True when t may be shared: pure, not a closure, not a variable or literal. */
static bool shareable(const Term *t) {
  if (t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL || t->kind == T_GLOBAL ||
      t->kind == T_STR)
    return false;
  return t->type->kind != TY_FUN && pure(t);
}

/* map (p. p.k) x, for an x whose elements are tuples. */
static Term *component(Span s, Sym *x, int k) {
  Sym *p = fe_mk_sym("p", x->type->elem, s);
  return fe_mk_map(s, fe_mk_lam(s, 1, &p, fe_mk_proj(s, fe_mk_var(s, p), k)), fe_mk_var(s, x));
}

static Term *find(Cse *c, unsigned long h, const Term *rhs) {
  for (long i = c->heads[h % (unsigned long)c->nbuckets]; i >= 0; i = c->v[i].next) {
    Pairs p = {0};
    const Entry *e = &c->v[i];
    if (e->hash == h && alpha_eq(e->rhs, rhs, &p))
      return e->comp ? component(rhs->span, e->x, e->comp - 1) : fe_mk_var(rhs->span, e->x);
  }
  return NULL;
}

static void add_comp(Cse *c, unsigned long h, Term *rhs, Sym *x, int comp) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 64;
    Entry *v = NEW_ARRAY(Entry, c->cap);
    if (c->n) memcpy(v, c->v, sizeof(Entry) * (size_t)c->n);
    c->v = v;
  }
  long b = (long)(h % (unsigned long)c->nbuckets);
  c->v[c->n] = (Entry){h, rhs, x, comp, c->heads[b]};
  c->heads[b] = c->n++;
  if (rhs->kind == T_PRIM) c->roots[rhs->prim]++;
}

static void add(Cse *c, unsigned long h, Term *rhs, Sym *x) { add_comp(c, h, rhs, x, 0); }

/* The largest array builtin looked up inside an expression. */
#define ARRAY_PRIM_MAX 4096

/* ---- components of a map of tuples ----

   `let W = map2 (a, b. let g = e in (d1 * g, g)) X Y` is a vector-Jacobian
   product's map: each element a tuple of cotangents. A map that computes
   one of the components again, `map2 (c, d. let g2 = e' in d1' * g2) X Y`
   (the same up to renaming), is `map (p. p.1) W`: W's let encloses it, so
   W was evaluated first (with any error of the map's) over the same
   arrays. The component's map drops the lets that only the other
   components read before it is compared. Maps of tuples of reals are
   left alone: tuples.c splits them into a map per component. */

/* The let chain t with its tail replaced by v and the lets that v does
   not need (directly or through later lets) dropped. */
static Term *chain_for(const Term *t, Term *v) {
  OptBinds b = {0};
  opt_peel_lets((Term *)t, &b);
  OptSymMap *uses = opt_map_new();
  opt_count_uses(v, uses, 1);
  for (long i = b.n - 1; i >= 0; i--) {
    const OptBind *e = &b.v[i];
    bool keep = false;
    for (int k = 0; k < e->n && !keep; k++) keep = opt_map_count(uses, e->tup ? e->xs[k] : e->x) > 0;
    if (!keep) continue;
    opt_count_uses(e->rhs, uses, 1);
    v = e->tup ? fe_mk_lettup(e->span, e->n, e->xs, e->rhs, v) : fe_mk_let(e->span, e->x, e->rhs, v);
  }
  return v;
}

enum { COMPONENTS_MAX = 8 };

/* Entries for the components of the map of tuples rhs bound to x. */
static void add_components(Cse *c, const Term *rhs, Sym *x) {
  if (rhs->kind != T_PRIM || (rhs->prim != PRIM_MAP && rhs->prim != PRIM_MAP2 && rhs->prim != PRIM_MAP3) ||
      rhs->kids[0]->kind != T_LAM || rhs->type->elem->kind != TY_TUPLE || rhs->type->elem->n > COMPONENTS_MAX ||
      fe_term_size_upto(rhs, ARRAY_PRIM_MAX + 1) > ARRAY_PRIM_MAX)
    return;
  const Term *lam = rhs->kids[0], *tail = lam->kids[0];
  while (tail->kind == T_LET || tail->kind == T_LETTUP) tail = tail->kids[1];
  if (tail->kind != T_TUPLE) return;
  /* tuples of reals: the tuples pass splits such maps into one per
     component (tuples.c), which this would undo */
  bool reals = true;
  for (int k = 0; k < tail->nkids; k++) reals = reals && tail->kids[k]->type->kind == TY_REAL;
  if (reals) return;
  for (int k = 0; k < tail->nkids; k++) {
    Term *kids[4];
    kids[0] = fe_mk_lam(lam->span, lam->nsyms, lam->syms, chain_for(lam->kids[0], tail->kids[k]));
    for (int i = 1; i < rhs->nkids; i++) kids[i] = rhs->kids[i];
    Term *m = opt_checked_as(fe_mk_array_prim(rhs->span, rhs->prim, rhs->nkids, kids), rhs);
    add_comp(c, hash_term(m), m, x, k + 1);
  }
}

static void pop_to(Cse *c, long n) {
  while (c->n > n) {
    Entry *e = &c->v[--c->n];
    c->heads[e->hash % (unsigned long)c->nbuckets] = e->next;
    if (e->rhs->kind == T_PRIM) c->roots[e->rhs->prim]--;
  }
}

static Term *walk(Cse *c, const Term *t);

/* ---- calls inside expressions ----

   A call is often an operand rather than a let's right-hand side
   (`a x + a x`). Such calls are named: in one statement (a let's
   right-hand side, a chain's tail, a branch or a lambda body), a call
   that repeats one of the statement or one already bound in scope is
   bound by a let before the statement, when evaluating it earlier
   changes nothing: it cannot raise, has no effect, and is evaluated
   whenever the statement is (not under a branch, a lambda or the right
   operand of && or ||). Calls that occur once stay where they are. */

static bool nameable(const Term *t) {
  return t->kind == T_CALL && t->type->kind != TY_FUN && !opt_def_io(t->def) && !opt_may_raise(t);
}

/* The kids of t that are evaluated whenever t is: kids[0..*n). */
static int strict_kids(const Term *t) {
  switch (t->kind) {
  case T_LAM:
  case T_LET:
  case T_LETTUP: return 0;
  case T_IF: return 1;
  case T_PRIM: return fe_prims[t->prim].cls == P_LOGIC ? 1 : t->nkids;
  default: return t->nkids;
  }
}

typedef struct Counts {
  unsigned long *h;
  long n, cap;
} Counts;

static void count_calls(Counts *k, const Term *t) {
  fe_stack_check(t->span);
  int n = strict_kids(t);
  for (int i = 0; i < n; i++)
    if (t->kids[i]->kind != T_LAM) count_calls(k, t->kids[i]);
  if (!nameable(t)) return;
  if (k->n == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 16;
    unsigned long *v = NEW_ARRAY(unsigned long, k->cap);
    if (k->n) memcpy(v, k->h, sizeof *v * (size_t)k->n);
    k->h = v;
  }
  k->h[k->n++] = hash_term(t);
}

static bool repeats(const Counts *k, unsigned long h) {
  int seen = 0;
  for (long i = 0; i < k->n && seen < 2; i++) seen += k->h[i] == h;
  return seen >= 2;
}

/* t with its repeated calls named (their lets appended to b); root: t is
   the statement itself (a call there is bound by the caller). */
static Term *name_calls(Cse *c, const Counts *k, OptBinds *b, Term *t, bool root) {
  fe_stack_check(t->span);
  int n = strict_kids(t);
  Term **kids = NULL;
  for (int i = 0; i < n; i++) {
    if (t->kids[i]->kind == T_LAM) continue;
    Term *u = name_calls(c, k, b, t->kids[i], false);
    if (u != t->kids[i] && !kids) {
      kids = NEW_ARRAY(Term *, t->nkids);
      memcpy(kids, t->kids, sizeof(Term *) * (size_t)t->nkids);
    }
    if (kids) kids[i] = u;
  }
  if (kids) t = opt_with_kids(t, kids);
  if (root || !nameable(t)) return t;
  unsigned long h = hash_term(t);
  Term *hit = find(c, h, t);
  if (hit) return hit;
  if (!repeats(k, h)) return t;
  Sym *x = fe_mk_sym(t->def->name, t->type, t->span);
  opt_binds_let(b, t->span, x, t);
  add(c, h, t, x);
  return fe_mk_var(t->span, x);
}

/* A statement's term after walking it: its repeated calls named (lets
   appended to b, *named set when there is one). */
static Term *statement(Cse *c, OptBinds *b, Term *t, bool *named) {
  Counts k = {0};
  count_calls(&k, t);
  if (k.n == 0) return t;
  long before = b->n;
  t = name_calls(c, &k, b, t, true);
  if (b->n != before) *named = true;
  return t;
}

/* A let chain (maybe of no let: any statement). */
static Term *walk_chain(Cse *c, const Term *t) {
  long saved = c->n;
  OptBinds b = {0};
  const Term **nodes = NULL;
  long cap = 0;
  bool named = false;
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    Term *rhs = statement(c, &b, walk(c, cur->kids[0]), &named);
    if (cur->kind == T_LET && shareable(rhs)) {
      unsigned long h = hash_term(rhs);
      Term *hit = find(c, h, rhs);
      if (hit) {
        rhs = hit;
      } else {
        add(c, h, rhs, cur->sym);
        add_components(c, rhs, cur->sym);
      }
    }
    if (b.n >= cap) { /* named calls may have added bindings */
      long old = cap;
      while (cap <= b.n) cap = cap ? 2 * cap : 16;
      const Term **nn = NEW_ARRAY(const Term *, cap);
      if (old) memcpy(nn, nodes, sizeof(Term *) * (size_t)old);
      nodes = nn;
    }
    nodes[b.n] = cur;
    opt_binds_node(&b, cur, rhs);
    cur = cur->kids[1];
  }
  Term *body = statement(c, &b, walk(c, cur), &named);
  pop_to(c, saved);
  if (named) return opt_build_chain(&b, 0, body);
  for (long i = b.n - 1; i >= 0; i--) {
    Term *k[2] = {b.v[i].rhs, body};
    body = opt_with_kids(nodes[i], k);
  }
  return body;
}

/* A scalar builtin applied to variables and literals (sqrt x, a * b):
   inside an expression, it is replaced by the variable of an enclosing
   let of the same right-hand side (a derivative rule writes sqrt x again
   beside the let that holds it). Checking only such small terms keeps the
   walk linear. */
static bool atomic_prim(const Term *t) {
  if (t->kind != T_PRIM || t->type->kind != TY_REAL) return false;
  PrimClass cls = fe_prims[t->prim].cls;
  if (cls != P_SCALAR1 && cls != P_SCALAR2) return false;
  for (int i = 0; i < t->nkids; i++)
    if (t->kids[i]->kind != T_VAR && t->kids[i]->kind != T_NUM) return false;
  return true;
}


/* An array builtin (a map, a scan, ...) inside an expression: replaced
   too by the variable of an enclosing let of the same right-hand side (a
   gradient's replay of a primal scan, written again as an operand of its
   backward sweep). Hashing one walks its whole term, so only builtins of
   at most ARRAY_PRIM_MAX nodes are looked up, and only when a let in
   scope binds the same builtin (20,000 maps nested in one another are
   not hashed 20,000 times). */
static bool array_prim(const Cse *c, const Term *t) {
  return t->kind == T_PRIM && t->type->kind == TY_ARRAY && fe_prims[t->prim].cls == P_ARRAY &&
         c->roots[t->prim] > 0 && fe_term_size_upto(t, ARRAY_PRIM_MAX + 1) <= ARRAY_PRIM_MAX && shareable(t);
}

/* Lambda bodies and branches are statements; other kids are operands. */
static Term *walk(Cse *c, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return walk_chain(c, t);
  if (t->nkids == 0) return (Term *)t;
  OPT_KIDS(k, t->nkids);
  for (int i = 0; i < t->nkids; i++) {
    bool stmt = t->kind == T_LAM || (t->kind == T_IF && i > 0);
    k[i] = stmt ? walk_chain(c, t->kids[i]) : walk(c, t->kids[i]);
  }
  Term *r = opt_with_kids(t, k);
  if (atomic_prim(r) || array_prim(c, r)) {
    Term *hit = find(c, hash_term(r), r);
    if (hit) return hit;
  }
  return r;
}

/* t with each pure let right-hand side that repeats an enclosing one
   replaced by that let's variable, and repeated calls inside
   expressions named. */
Term *opt_cse(const Term *t) {
  Cse *c = NEW(Cse);
  c->nbuckets = 4093;
  c->heads = NEW_ARRAY(long, c->nbuckets);
  for (long i = 0; i < c->nbuckets; i++) c->heads[i] = -1;
  return walk_chain(c, t);
}
