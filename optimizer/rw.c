/* rw.c: the bottom-up rewriting walker and the facts of rw.h. */
#include "rw.h"

#include <math.h>

#include "../frontend/ir/common.h"
#include "../frontend/ir/ptrmap.h"
#include "pe_util.h"

/* A length: root + off, root a Sym (an array or count variable of unknown
   value), a Term (an array of unknown length) or NULL (the constant 0). */
typedef struct Len {
  const void *root;
  long off;
} Len;

/* The length facts in scope, L(a.root) + a.off == L(b.root) + b.off, as
   a union-find with offsets over the roots, L(x) = L(parent[x]) + d[x],
   union by size and no path compression, so that a fact is undone by
   popping its record: scopes end by rolling back to a count of facts.
   Each query is O(log n). */
typedef struct Undo {
  int child, root; /* child was attached under root; -1: no change */
  int old_size;
} Undo;

typedef struct Facts {
  PtrMap ids;    /* root pointer -> node index + 1 */
  const void **key;
  int *parent, *size;
  long *d;
  int n, cap;
  Undo *undo;    /* one record per fact pushed */
  long nundo, capundo;
} Facts;

/* The counts kept per variable in OptRw.sym */
enum { USES, /* occurrences in the input */
       BIND, /* binder lambda depth + 1 */
       AWAY, /* occurrences at another lambda depth */
       ELEM, /* occurrences as an array of a map, map2 or map3 */
       NCOUNTS };
/* and its term: let x = rhs, rewritten (RHS) */
enum { RHS };

/* A condition known where the walk is: an if's condition in its
   branches (value: which branch); an index x of a map over iota n
   (cond NULL, n set: 0 <= x < n, x an integer); an array x a map runs
   over (cond and n NULL: length x == 0 is false). */
typedef struct Known {
  const Term *cond;
  bool value;
  const Sym *x;
  const Term *n;
} Known;

/* The innermost conditions consulted (an else-if ladder of thousands
   stays linear). */
enum { KNOWN_DEPTH = 8 };

struct OptRw {
  OptRule rule;
  OptSymMap *sym;   /* per variable: the counts and the term below */
  OptSymMap *alias; /* let x = a, a a variable or constant: x -> a */
  Facts facts;
  Known *known;     /* the conditions in scope, innermost last */
  int nknown, capknown;
};

/* ---- the input's use counts and lambda depths ---- */

static void census(OptRw *c, const Term *t, long depth) {
  fe_stack_check(t->span);
  for (;;) {
    switch (t->kind) {
    case T_LET:
      opt_map_add_at(c->sym, t->sym, BIND, depth + 1);
      census(c, t->kids[0], depth);
      t = t->kids[1];
      continue;
    case T_LETTUP:
      for (int i = 0; i < t->nsyms; i++) opt_map_add_at(c->sym, t->syms[i], BIND, depth + 1);
      census(c, t->kids[0], depth);
      t = t->kids[1];
      continue;
    case T_LAM:
      for (int i = 0; i < t->nsyms; i++) opt_map_add_at(c->sym, t->syms[i], BIND, depth + 2);
      census(c, t->kids[0], depth + 1);
      return;
    case T_VAR:
      opt_map_add_at(c->sym, t->sym, USES, 1);
      if (opt_map_count_at(c->sym, t->sym, BIND) != depth + 1) opt_map_add_at(c->sym, t->sym, AWAY, 1);
      return;
    default:
      if (t->kind == T_PRIM && (t->prim == PRIM_MAP || t->prim == PRIM_MAP2 || t->prim == PRIM_MAP3))
        for (int i = 1; i < t->nkids; i++)
          if (t->kids[i]->kind == T_VAR) opt_map_add_at(c->sym, t->kids[i]->sym, ELEM, 1);
      for (int i = 0; i < t->nkids; i++) census(c, t->kids[i], depth);
      return;
    }
  }
}

long opt_rw_uses(OptRw *c, const Sym *x) { return opt_map_count_at(c->sym, x, USES); }

long opt_rw_elem_uses(OptRw *c, const Sym *x) { return opt_map_count_at(c->sym, x, ELEM); }

bool opt_rw_unused(OptRw *c, const Sym *x) { return opt_map_count_at(c->sym, x, BIND) > 0 && opt_map_count_at(c->sym, x, USES) == 0; }

bool opt_rw_same_depth(OptRw *c, const Sym *x) { return opt_map_count_at(c->sym, x, AWAY) == 0; }

Term *opt_rw_rhs(OptRw *c, const Sym *x) { return opt_map_term_at(c->sym, x, RHS); }

Term *opt_rw_resolve(OptRw *c, Term *t) {
  for (int i = 0; i < 1000 && t->kind == T_VAR; i++) {
    Term *r = opt_map_term_at(c->sym, t->sym, RHS);
    if (!r) break;
    t = r;
  }
  return t;
}

/* ---- lengths ---- */

static Len len_of(OptRw *c, const Term *t, int fuel);
static bool len_equal(OptRw *c, Len a, Len b);

static bool is_count_literal(double v) { return v >= 0 && v <= 1e9 && v == floor(v); }

/* The length of `replicate n v` / `iota n` as a Len. */
static Len count_len(OptRw *c, Term *n, int fuel) {
  n = opt_rw_resolve(c, n);
  if (n->kind == T_NUM && is_count_literal(n->num)) return (Len){NULL, (long)n->num};
  if (n->kind == T_PRIM && n->prim == PRIM_LENGTH) return len_of(c, n->kids[0], fuel - 1);
  if (n->kind == T_PRIM && n->prim == PRIM_ADD && n->kids[1]->kind == T_NUM &&
      is_count_literal(n->kids[1]->num)) {
    Len l = count_len(c, n->kids[0], fuel - 1);
    l.off += (long)n->kids[1]->num;
    return l;
  }
  if (n->kind == T_VAR) return (Len){n->sym, 0};
  return (Len){n, 0};
}

static Len len_of(OptRw *c, const Term *t, int fuel) {
  if (fuel <= 0) return (Len){t, 0};
  switch (t->kind) {
  case T_VAR: {
    Term *r = opt_map_term_at(c->sym, t->sym, RHS);
    return r ? len_of(c, r, fuel - 1) : (Len){t->sym, 0};
  }
  case T_ARRAY: return (Len){NULL, t->nkids};
  case T_LET:
  case T_LETTUP: return len_of(c, t->kids[1], fuel - 1);
  case T_IF: {
    Len a = len_of(c, t->kids[1], fuel - 1), b = len_of(c, t->kids[2], fuel - 1);
    return len_equal(c, a, b) ? a : (Len){t, 0};
  }
  case T_PRIM:
    switch (t->prim) {
    case PRIM_MAP:
    case PRIM_MAP2:
    case PRIM_MAP3:
    case PRIM_REDUCE_BY_INDEX: /* the length of its destination */
    case PRIM_SAVE: return len_of(c, t->kids[1], fuel - 1);
    case PRIM_TRANSPOSE: return (Len){t, 0};
    case PRIM_LOOP_FOR: {
      /* the initial value's length when the body keeps the state's */
      const Term *lam = t->kids[0];
      if (lam->syms[0]->type->kind != TY_ARRAY) return (Len){t, 0};
      Len e = len_of(c, lam->kids[0], fuel - 1);
      if (e.root != lam->syms[0] || e.off != 0) return (Len){t, 0};
      return len_of(c, t->kids[1], fuel - 1);
    }
    case PRIM_SCANL:
    case PRIM_SCANR: {
      Len l = len_of(c, t->kids[2], fuel - 1);
      l.off++;
      return l;
    }
    case PRIM_SHIFT1L:
    case PRIM_SHIFT1R: {
      Len l = len_of(c, t->kids[0], fuel - 1);
      if (l.off >= 1) {
        l.off--;
        return l;
      }
      if (l.root == NULL) return l; /* [] stays [] */
      return (Len){t, 0};
    }
    case PRIM_REPLICATE:
    case PRIM_IOTA:
    case PRIM_RAND: return count_len(c, t->kids[0], fuel - 1);
    default: return (Len){t, 0};
    }
  default: return (Len){t, 0};
  }
}

/* The root of the literal lengths (Len.root NULL). */
static const char literal_root;

/* The node of root p, made when make is set; -1 when absent. */
static int node(Facts *f, const void *p, bool make) {
  if (!p) p = &literal_root;
  if (!f->ids.cap) ptrmap_init(&f->ids, 64);
  void *v = ptrmap_get(&f->ids, p);
  if (v) return (int)((intptr_t)v - 1);
  if (!make) return -1;
  if (f->n == f->cap) {
    int cap = f->cap ? 2 * f->cap : 64;
    const void **k = NEW_ARRAY(const void *, cap);
    int *par = NEW_ARRAY(int, cap), *sz = NEW_ARRAY(int, cap);
    long *d = NEW_ARRAY(long, cap);
    if (f->n) {
      memcpy(k, f->key, sizeof *k * (size_t)f->n);
      memcpy(par, f->parent, sizeof *par * (size_t)f->n);
      memcpy(sz, f->size, sizeof *sz * (size_t)f->n);
      memcpy(d, f->d, sizeof *d * (size_t)f->n);
    }
    f->key = k, f->parent = par, f->size = sz, f->d = d, f->cap = cap;
  }
  int i = f->n++;
  f->key[i] = p;
  f->parent[i] = i;
  f->size[i] = 1;
  f->d[i] = 0;
  ptrmap_put(&f->ids, p, (void *)(intptr_t)(i + 1));
  return i;
}

/* The root of node i, with *dist = L(i) - L(root). */
static int find(const Facts *f, int i, long *dist) {
  long s = 0;
  while (f->parent[i] != i) {
    s += f->d[i];
    i = f->parent[i];
  }
  *dist = s;
  return i;
}

static void push_fact(OptRw *c, Len a, Len b) {
  Facts *f = &c->facts;
  if (f->nundo == f->capundo) {
    f->capundo = f->capundo ? 2 * f->capundo : 64;
    Undo *u = NEW_ARRAY(Undo, f->capundo);
    if (f->nundo) memcpy(u, f->undo, sizeof *u * (size_t)f->nundo);
    f->undo = u;
  }
  Undo *u = &f->undo[f->nundo++];
  *u = (Undo){-1, -1, 0};
  if (a.root == b.root) return;
  long da, db;
  int ra = find(f, node(f, a.root, true), &da), rb = find(f, node(f, b.root, true), &db);
  if (ra == rb) return;
  /* L(ra) + da + a.off == L(rb) + db + b.off */
  long ra_minus_rb = db + b.off - da - a.off;
  if (f->size[ra] > f->size[rb]) {
    int t = ra;
    ra = rb;
    rb = t;
    ra_minus_rb = -ra_minus_rb;
  }
  *u = (Undo){ra, rb, f->size[rb]};
  f->parent[ra] = rb;
  f->d[ra] = ra_minus_rb;
  f->size[rb] += f->size[ra];
}

/* Back to the first n facts. */
static void pop_facts(OptRw *c, long n) {
  Facts *f = &c->facts;
  while (f->nundo > n) {
    Undo u = f->undo[--f->nundo];
    if (u.child < 0) continue;
    f->parent[u.child] = u.child;
    f->d[u.child] = 0;
    f->size[u.root] = u.old_size;
  }
}

static bool len_equal(OptRw *c, Len a, Len b) {
  if (a.root == b.root) return a.off == b.off;
  Facts *f = &c->facts;
  if (f->nundo == 0) return false;
  int ia = node(f, a.root, false), ib = node(f, b.root, false);
  if (ia < 0 || ib < 0) return false;
  long da, db;
  if (find(f, ia, &da) != find(f, ib, &db)) return false;
  return da + a.off == db + b.off;
}

bool opt_rw_same_length(OptRw *c, Term *a, Term *b) {
  return len_equal(c, len_of(c, a, 64), len_of(c, b, 64));
}

/* ---- safety ---- */

static bool count_ok(OptRw *c, Term *n) {
  Len l = count_len(c, n, 64);
  if (l.root == NULL) return true;
  /* a length (plus a non-negative integer) */
  Term *r = opt_rw_resolve(c, n);
  if (r->kind == T_PRIM && r->prim == PRIM_LENGTH) return true;
  return r->kind == T_PRIM && r->prim == PRIM_ADD && r->kids[1]->kind == T_NUM &&
         is_count_literal(r->kids[1]->num) && count_ok(c, r->kids[0]);
}

bool opt_rw_safe(OptRw *c, const Term *t) {
  fe_stack_check(t->span);
  for (;;) {
    switch (t->kind) {
    case T_NUM:
    case T_BOOL:
    case T_STR:
    case T_VAR:
    case T_GLOBAL: return true;
    case T_LET:
    case T_LETTUP:
      if (!opt_rw_safe(c, t->kids[0])) return false;
      t = t->kids[1];
      continue;
    case T_LAM: t = t->kids[0]; continue;
    case T_TUPLE:
    case T_PROJ:
    case T_IF:
    case T_ARRAY: break;
    case T_PRIM:
      switch (t->prim) { /* what may raise, unless shown not to (prims.def's effect) */
      case PRIM_MAP2:
        if (!t->b && !opt_rw_same_length(c, t->kids[1], t->kids[2])) return false;
        break;
      case PRIM_MAP3:
        if (!t->b && !(opt_rw_same_length(c, t->kids[1], t->kids[2]) && opt_rw_same_length(c, t->kids[1], t->kids[3])))
          return false;
        break;
      case PRIM_ZIP:
        if (!t->b && !opt_rw_same_length(c, t->kids[0], t->kids[1])) return false; /* term.h */
        break;
      case PRIM_REPLICATE:
      case PRIM_IOTA:
        if (!count_ok(c, t->kids[0])) return false;
        break;
      case PRIM_LOOP_FOR: /* raises only for a bad count */
        if (!count_ok(c, t->kids[2])) return false;
        break;
      case PRIM_INDEX:
        if (!t->b) return false; /* term.h: in range by construction */
        break;
      default: /* rand, load, save; a checked replay (reverse/) cannot raise */
        if (fe_prims[t->prim].effect == E_IO || (fe_prims[t->prim].effect == E_RAISES && !t->b)) return false;
        break;
      }
      break;
    default: return false;
    }
    for (int i = 0; i < t->nkids; i++)
      if (!opt_rw_safe(c, t->kids[i])) return false;
    return true;
  }
}

/* ---- known conditions ---- */

static void push_known(OptRw *c, Known k) {
  if (c->nknown == c->capknown) {
    int cap = c->capknown ? 2 * c->capknown : 16;
    Known *n = NEW_ARRAY(Known, cap);
    if (c->nknown) memcpy(n, c->known, sizeof *n * (size_t)c->nknown);
    c->known = n;
    c->capknown = cap;
  }
  c->known[c->nknown++] = k;
}

static bool is_var(const Term *t, const Sym *x) { return t->kind == T_VAR && t->sym == x; }

/* What the index fact k says of the comparison t, when it says. */
static bool index_fact(const Known *k, const Term *t, bool *value) {
  if (t->kind != T_PRIM || t->nkids != 2) return false;
  const Term *a = t->kids[0], *b = t->kids[1];
  switch (t->prim) {
  case PRIM_LE: /* 0 <= x */
  case PRIM_GT: /* 0 > x */
    if (opt_is_num(a, 0) && is_var(b, k->x)) return *value = t->prim == PRIM_LE, true;
    /* x <= n - 1 is not looked for */
    return false;
  case PRIM_GE: /* x >= 0 */
  case PRIM_LT: /* x < 0, x < n */
    if (is_var(a, k->x) && opt_is_num(b, 0)) return *value = t->prim == PRIM_GE, true;
    if (t->prim == PRIM_LT && is_var(a, k->x) && opt_alpha_eq(b, k->n)) return *value = true, true;
    return false;
  case PRIM_EQ: /* floor x == x, x - x == 0 (x finite) */
    if (a->kind == T_PRIM && a->prim == PRIM_FLOOR && is_var(a->kids[0], k->x) && is_var(b, k->x))
      return *value = true, true;
    if (a->kind == T_PRIM && a->prim == PRIM_SUB && is_var(a->kids[0], k->x) && is_var(a->kids[1], k->x) &&
        opt_is_num(b, 0))
      return *value = true, true;
    return false;
  default: return false;
  }
}

/* What the fact that k->x has elements says of t: `length x == 0`
   (false), or its negation. */
static bool empty_fact(const Known *k, const Term *t, bool *value) {
  bool neg = t->kind == T_PRIM && t->prim == PRIM_NOT;
  const Term *e = neg ? t->kids[0] : t;
  if (!(e->kind == T_PRIM && e->prim == PRIM_EQ && opt_is_num(e->kids[1], 0))) return false;
  const Term *l = e->kids[0];
  if (!(l->kind == T_PRIM && l->prim == PRIM_LENGTH && is_var(l->kids[0], k->x))) return false;
  *value = neg;
  return true;
}

bool opt_rw_known(OptRw *c, const Term *t, bool *value) {
  if (c->nknown == 0 || !t->type || t->type->kind != TY_BOOL || t->kind == T_BOOL) return false;
  for (int i = c->nknown - 1; i >= 0 && i >= c->nknown - KNOWN_DEPTH; i--) {
    const Known *k = &c->known[i];
    if (!k->cond) {
      if (k->n ? index_fact(k, t, value) : empty_fact(k, t, value)) return true;
      continue;
    }
    if (opt_alpha_eq(t, k->cond)) return *value = k->value, true;
    if (t->kind == T_PRIM && t->prim == PRIM_NOT && opt_alpha_eq(t->kids[0], k->cond)) return *value = !k->value, true;
  }
  return false;
}

/* ---- small predicates ---- */

bool opt_is_num(const Term *t, double v) {
  if (t->kind != T_NUM) return false;
  double a = t->num;
  return memcmp(&a, &v, sizeof a) == 0;
}

bool opt_mentions(const Term *t, const Sym *x) {
  fe_stack_check(t->span);
  for (;;) {
    if (t->kind == T_VAR) return t->sym == x;
    if (t->nkids == 0) return false;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (opt_mentions(t->kids[i], x)) return true;
    t = t->kids[t->nkids - 1];
  }
}

bool opt_mentions_any(const Term *t, Sym *const *xs, int n) {
  for (int i = 0; i < n; i++)
    if (opt_mentions(t, xs[i])) return true;
  return false;
}

bool opt_is_oplam(const Term *lam, Prim p) {
  if (lam->kind != T_LAM || lam->nsyms != 2) return false;
  const Term *b = lam->kids[0];
  return b->kind == T_PRIM && b->prim == p && b->nkids == 2 && b->kids[0]->kind == T_VAR &&
         b->kids[0]->sym == lam->syms[0] && b->kids[1]->kind == T_VAR &&
         b->kids[1]->sym == lam->syms[1];
}

Term *opt_rw_const_elem(OptRw *c, Term *a) {
  Term *r = opt_rw_resolve(c, a);
  if (r->kind != T_PRIM) return NULL;
  if (r->prim == PRIM_MAP) {
    Term *lam = r->kids[0];
    Term *b = lam->kids[0];
    if (b->kind == T_NUM || (b->kind == T_VAR && b->sym != lam->syms[0])) return b;
  } else if (r->prim == PRIM_REPLICATE) {
    Term *b = r->kids[1];
    if (b->kind == T_NUM || b->kind == T_VAR) return b;
  }
  return NULL;
}

/* ---- the walker ---- */

/* (The walker also drops dead lets: see rw_chain.) */

static Term *apply(OptRw *c, Term *t) {
  for (int i = 0; i < 16; i++) {
    Term *r = c->rule(c, t);
    if (r == t) break;
    t = r;
  }
  return t;
}

static Term *rw(OptRw *c, const Term *t);


static bool scalar(const Term *t) { return t->type->kind == TY_REAL || t->type->kind == TY_BOOL; }

/* let x = a with a a scalar variable or a constant (what the rules make
   of `let x = y * 1`): the let is dropped and x replaced by a in the same walk
   (as the forward pass would, a round later). The census adds x's uses
   to a's variable y, its occurrences at another lambda depth counted for y
   as such (those of x at its let's depth too, when y's binder is at
   another depth), so that the rules that count uses stay right. Array
   variables are left to the forward pass: which maps fuse depends on the
   order in which the passes see their uses; the lets the user wrote are
   left to it too, which keeps their names (optimizer/forward.c). */
static void alias(OptRw *c, Sym *x, Term *a) {
  opt_map_set(c->alias, x, a);
  if (a->kind != T_VAR) return;
  Sym *y = a->sym;
  long ux = opt_map_count_at(c->sym, x, USES), ax = opt_map_count_at(c->sym, x, AWAY);
  bool other = opt_map_count_at(c->sym, y, BIND) != opt_map_count_at(c->sym, x, BIND);
  /* y's occurrences in the let's input rhs go, but a rule may have made
     that rhs y out of others' (t[0] of a literal [y, ...]): they stay
     counted, an over-count that only makes the rules more careful */
  opt_map_add_at(c->sym, y, USES, ux);
  opt_map_add_at(c->sym, y, AWAY, ax + (other ? ux - ax : 0));
  opt_map_add_at(c->sym, y, ELEM, opt_map_count_at(c->sym, x, ELEM));
}

static Term *rw_chain(OptRw *c, const Term *t) {
  long saved = c->facts.nundo;
  const Term **nodes = NULL;
  Term **rhss = NULL;
  long *before = NULL; /* the count of facts before each let's own fact */
  long n = 0, cap = 0;
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      const Term **nn = NEW_ARRAY(const Term *, cap);
      Term **nr = NEW_ARRAY(Term *, cap);
      long *nb = NEW_ARRAY(long, cap);
      if (n) {
        memcpy(nn, nodes, sizeof(Term *) * (size_t)n);
        memcpy(nr, rhss, sizeof(Term *) * (size_t)n);
        memcpy(nb, before, sizeof(long) * (size_t)n);
      }
      nodes = nn;
      rhss = nr;
      before = nb;
    }
    Term *rhs = rw(c, cur->kids[0]);
    if (cur->kind == T_LET && !cur->sym->user && opt_is_atom(rhs) && scalar(rhs)) {
      alias(c, cur->sym, rhs);
      cur = cur->kids[1];
      continue;
    }
    nodes[n] = cur;
    before[n] = c->facts.nundo;
    rhss[n++] = rhs;
    if (cur->kind == T_LET) {
      opt_map_set_at(c->sym, cur->sym, RHS, rhs);
      if (rhs->kind == T_PRIM && rhs->prim == PRIM_MAP2)
        push_fact(c, len_of(c, rhs->kids[1], 64), len_of(c, rhs->kids[2], 64));
    }
    cur = cur->kids[1];
  }
  Term *body = rw(c, cur);
  for (long i = n - 1; i >= 0; i--) {
    pop_facts(c, before[i]); /* only the facts of the lets before this one */
    /* a let unused in the input whose rhs cannot raise is dropped here,
       with the length facts that dce.c does not have (rules only add uses
       of variables that are used already) */
    if (nodes[i]->kind == T_LET && opt_rw_uses(c, nodes[i]->sym) == 0 && opt_rw_safe(c, rhss[i])) continue;
    Term *k[2] = {rhss[i], body};
    body = apply(c, opt_with_kids(nodes[i], k));
  }
  pop_facts(c, saved);
  return body;
}

static Term *rw(OptRw *c, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return rw_chain(c, t);
  if (t->kind == T_VAR && c->alias->n) { /* most walks make no copies: no lookup */
    Term *a = opt_map_term(c->alias, t->sym);
    if (a) return a;
  }
  if (t->nkids == 0) return apply(c, (Term *)t);
  OPT_KIDS(k, t->nkids);
  int saved = c->nknown;
  if (t->kind == T_IF) {
    /* each branch knows the condition's value */
    k[0] = rw(c, t->kids[0]);
    for (int b = 1; b <= 2; b++) {
      push_known(c, (Known){k[0], b == 1, NULL, NULL});
      k[b] = rw(c, t->kids[b]);
      c->nknown = saved;
    }
    return apply(c, opt_with_kids(t, k));
  }
  if (t->kind == T_PRIM && (t->prim == PRIM_MAP || t->prim == PRIM_MAP2 || t->prim == PRIM_MAP3) &&
      t->kids[0]->kind == T_LAM) {
    /* the arrays first: an element of iota n is an index below n */
    for (int i = 1; i < t->nkids; i++) {
      k[i] = rw(c, t->kids[i]);
      Term *a = opt_rw_resolve(c, k[i]);
      if (a->kind == T_PRIM && a->prim == PRIM_IOTA)
        push_known(c, (Known){NULL, true, t->kids[0]->syms[i - 1], a->kids[0]});
      /* and the body runs only when the array has elements */
      if (k[i]->kind == T_VAR) push_known(c, (Known){NULL, false, k[i]->sym, NULL});
    }
    k[0] = rw(c, t->kids[0]);
    c->nknown = saved;
    return apply(c, opt_with_kids(t, k));
  }
  for (int i = 0; i < t->nkids; i++) k[i] = rw(c, t->kids[i]);
  return apply(c, opt_with_kids(t, k));
}

Term *opt_rw_run(const Term *t, OptRule rule) {
  OptRw *c = NEW(OptRw);
  c->rule = rule;
  c->sym = opt_map_new_fields(NCOUNTS, 1);
  c->alias = opt_map_new();
  census(c, t, 0);
  return rw(c, t);
}
