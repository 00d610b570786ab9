/* hoist_rows.c: rows read in inner lambdas, read once at the body's top
   (see hoist_rows.h). */
#include "hoist_rows.h"

#include <string.h>

#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/subst.h"

static char inner_mark;

/* An inner lambda's index j, running over [0, n) (a for loop's counter,
   the parameter of a map over iota n), n hoisted. */
typedef struct Counter {
  const Sym *j;
  Term *n;
} Counter;

typedef struct {
  Sym *const *fv;
  int nfv;
  PtrMap lets;  /* the body's lets outside inner lambdas: their right-hand sides */
  PtrMap bound; /* every other variable bound in the body */
  int n, cap;
  Sym **row;     /* per hoisted row or window: its variable */
  Sym **matrix;  /* ... the matrix, or the vector */
  Term **index;  /* ... the row's index, the window's base, the lets expanded */
  Term **count;  /* ... a window's length; NULL for a row */
  Sym **lo;      /* ... a window's start */
  Counter *counters; /* the inner lambdas' indices around the walk */
  int ncounters, capcounters;
  const PtrMap *prefix; /* the vectors whose reads a[j] are windows too */
} Hoist;

static Sym *free_array(const Hoist *h, const Term *t, bool matrix) {
  if (t->kind != T_VAR || !(matrix ? fe_type_is_real_matrix(t->sym->type) : fe_type_is_real_array(t->sym->type))) return NULL;
  for (int k = 0; k < h->nfv; k++)
    if (h->fv[k] == t->sym) return t->sym;
  return NULL;
}

/* The most nodes an expanded index may have (lets that use each other
   twice would otherwise expand exponentially). */
enum { INDEX_NODES = 64 };

/* e over the parameters and free variables, the body's lets expanded,
   built of arithmetic that cannot fail, of at most *budget nodes (taken
   from it); NULL when it is not. */
static Term *expand(const Hoist *h, const Term *e, int *budget) {
  fe_stack_check(e->span);
  if (--*budget < 0) return NULL;
  switch (e->kind) {
  case T_NUM: return (Term *)e;
  case T_VAR: {
    if (ptrmap_get(&h->bound, e->sym)) return NULL;
    const Term *rhs = ptrmap_get(&h->lets, e->sym);
    return rhs ? expand(h, rhs, budget) : (Term *)e;
  }
  case T_PRIM:
    switch (e->prim) {
    case PRIM_LENGTH:
      /* of a parameter or free variable: its value is there */
      return e->kids[0]->kind == T_VAR && !ptrmap_get(&h->bound, e->kids[0]->sym) &&
                     !ptrmap_get(&h->lets, e->kids[0]->sym)
                 ? (Term *)e
                 : NULL;
    case PRIM_ADD:
    case PRIM_SUB:
    case PRIM_MUL:
    case PRIM_NEG:
    case PRIM_MIN:
    case PRIM_MAX:
    case PRIM_FLOOR:
    case PRIM_ABS: {
      Term **kids = NEW_ARRAY(Term *, e->nkids);
      for (int i = 0; i < e->nkids; i++)
        if (e->kids[i]->type->kind != TY_REAL || !(kids[i] = expand(h, e->kids[i], budget))) return NULL;
      return fe_term_copy_with_kids(e, kids);
    }
    default: return NULL;
    }
  default: return NULL;
  }
}

static bool same(const Term *a, const Term *b) {
  if (a->kind != b->kind || a->nkids != b->nkids) return false;
  if (a->kind == T_NUM && a->num != b->num) return false;
  if (a->kind == T_VAR && a->sym != b->sym) return false;
  if (a->kind == T_PRIM && a->prim != b->prim) return false;
  for (int i = 0; i < a->nkids; i++)
    if (!same(a->kids[i], b->kids[i])) return false;
  return true;
}

/* ---- a row's index and a window's base, simplified ----

   A sum of multiples of atoms (variables, lengths, anything else) and a
   constant. Rows and windows are read at integers (a read at any other
   index raised in the primal, which a gradient's replays follow), where
   this arithmetic is exact: `i + k - 1 - (k - 1)` is `i`, and the printed
   gradient shows it so. */
enum { LIN_ATOMS = 8 };
typedef struct {
  const Term *atom[LIN_ATOMS];
  double coef[LIN_ATOMS];
  int n;
  double c;
  bool ok;
} Lin;

static void lin_add(Lin *l, const Term *t, double s) {
  if (!l->ok) return;
  if (t->kind == T_NUM) {
    l->c += s * t->num;
    return;
  }
  if (t->kind == T_PRIM && (t->prim == PRIM_ADD || t->prim == PRIM_SUB)) {
    lin_add(l, t->kids[0], s);
    lin_add(l, t->kids[1], t->prim == PRIM_ADD ? s : -s);
    return;
  }
  if (t->kind == T_PRIM && t->prim == PRIM_NEG) {
    lin_add(l, t->kids[0], -s);
    return;
  }
  if (t->kind == T_PRIM && t->prim == PRIM_MUL && (t->kids[0]->kind == T_NUM || t->kids[1]->kind == T_NUM)) {
    int k = t->kids[0]->kind == T_NUM ? 0 : 1;
    lin_add(l, t->kids[1 - k], s * t->kids[k]->num);
    return;
  }
  for (int i = 0; i < l->n; i++)
    if (same(l->atom[i], t)) {
      l->coef[i] += s;
      return;
    }
  if (l->n == LIN_ATOMS) {
    l->ok = false;
    return;
  }
  l->atom[l->n] = t;
  l->coef[l->n++] = s;
}

static Term *simplified(Term *e) {
  Lin l = {.ok = true};
  lin_add(&l, e, 1);
  if (!l.ok) return e;
  Span s = e->span;
  Term *r = NULL;
  for (int i = 0; i < l.n; i++) {
    double c = l.coef[i];
    if (c == 0) continue;
    Term *a = fe_copy(l.atom[i]), *m = c == 1 || c == -1 ? a : fe_mk_mul(s, fe_mk_num(s, c < 0 ? -c : c), a);
    if (!r) r = c < 0 ? fe_mk_op1(s, PRIM_NEG, m) : m;
    else r = fe_mk_op2(s, c < 0 ? PRIM_SUB : PRIM_ADD, r, m);
  }
  if (!r) return fe_mk_num(s, l.c);
  if (l.c != 0) r = fe_mk_op2(s, l.c < 0 ? PRIM_SUB : PRIM_ADD, r, fe_mk_num(s, l.c < 0 ? -l.c : l.c));
  return r;
}

/* The entry for m[ix] (count NULL: a row of the matrix m) or for the
   window of count elements from ix of the vector m: an earlier one of
   the same, or new. */
static int entry_for(Hoist *h, Span s, Sym *m, Term *ix, Term *count) {
  for (int i = 0; i < h->n; i++)
    if (h->matrix[i] == m && same(h->index[i], ix) && !h->count[i] == !count && (!count || same(h->count[i], count)))
      return i;
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 4;
    Sym **r = NEW_ARRAY(Sym *, cap), **mx = NEW_ARRAY(Sym *, cap), **lo = NEW_ARRAY(Sym *, cap);
    Term **x = NEW_ARRAY(Term *, cap), **c = NEW_ARRAY(Term *, cap);
    if (h->n) {
      memcpy(r, h->row, sizeof *r * (size_t)h->n);
      memcpy(mx, h->matrix, sizeof *mx * (size_t)h->n);
      memcpy(x, h->index, sizeof *x * (size_t)h->n);
      memcpy(c, h->count, sizeof *c * (size_t)h->n);
      memcpy(lo, h->lo, sizeof *lo * (size_t)h->n);
    }
    h->row = r;
    h->matrix = mx;
    h->index = x;
    h->count = c;
    h->lo = lo;
    h->cap = cap;
  }
  h->matrix[h->n] = m;
  h->index[h->n] = ix;
  h->count[h->n] = count;
  h->lo[h->n] = count ? fe_mk_sym("lo", fe_ty_real(), s) : NULL;
  h->row[h->n] = fe_mk_sym(count ? "win" : "row", count ? m->type : m->type->elem, s);
  return h->n++;
}

/* The counter whose index is the variable t, or NULL. */
static const Counter *counter_of(const Hoist *h, const Term *t) {
  if (t->kind != T_VAR) return NULL;
  for (int i = h->ncounters - 1; i >= 0; i--)
    if (h->counters[i].j == t->sym) return &h->counters[i];
  return NULL;
}

/* a[e], a a free vector, e = base + j (or j + base) with j an inner
   lambda's index over [0, n) and base hoisted: win[e - lo] of the
   window win of a from base (hoist_rows.h); e = base - j (a convolution
   written as its definition, a[i - j] w[j]) reads the window from
   base - (n - 1); NULL when it is not. */
static Term *window_read(Hoist *h, const Term *t) {
  Sym *a = free_array(h, t->kids[0], false);
  if (!a) return NULL;
  /* a[j] alone is left to the inner lambda (its window would start at 0
     for every element: a filter's weights, read whole, where the inner
     map's reads at its own index are plain elementwise reads), unless a
     is read at base + j too */
  const Term *e = t->kids[1];
  const Counter *c = h->prefix->n && ptrmap_get(h->prefix, a) ? counter_of(h, e) : NULL;
  Term *base = c ? fe_mk_num(e->span, 0) : NULL;
  if (!c && e->kind == T_PRIM && e->prim == PRIM_ADD) {
    for (int side = 0; side < 2 && !c; side++) {
      c = counter_of(h, e->kids[side]);
      int budget = INDEX_NODES;
      if (c && !(base = expand(h, e->kids[1 - side], &budget))) c = NULL;
    }
  }
  if (!c && e->kind == T_PRIM && e->prim == PRIM_SUB && (c = counter_of(h, e->kids[1]))) {
    int budget = INDEX_NODES;
    Term *top = expand(h, e->kids[0], &budget);
    Span s = e->span;
    if (top) base = fe_mk_op2(s, PRIM_SUB, top, fe_mk_op2(s, PRIM_SUB, fe_copy(c->n), fe_mk_num(s, 1)));
    else c = NULL;
  }
  if (!c) return NULL;
  int i = entry_for(h, t->span, a, simplified(base), c->n);
  Term *ix[2] = {fe_mk_var(t->span, h->row[i]),
                 fe_mk_op2(t->span, PRIM_SUB, (Term *)e, fe_mk_var(t->span, h->lo[i]))};
  Term *r = fe_mk_array_prim(t->span, PRIM_INDEX, 2, ix);
  r->b = t->b;
  return r;
}

static void push_counter(Hoist *h, const Sym *j, const Term *n) {
  int budget = INDEX_NODES;
  Term *c = expand(h, n, &budget);
  if (h->ncounters == h->capcounters) {
    int cap = h->capcounters ? 2 * h->capcounters : 4;
    Counter *nc = NEW_ARRAY(Counter, cap);
    if (h->ncounters) memcpy(nc, h->counters, sizeof *nc * (size_t)h->ncounters);
    h->counters = nc;
    h->capcounters = cap;
  }
  h->counters[h->ncounters++] = (Counter){c ? j : NULL, c};
}

static void bind(Hoist *h, const Term *t, bool inner) {
  if (t->kind == T_LET) {
    if (inner) ptrmap_put(&h->bound, t->sym, &inner_mark);
    else ptrmap_put(&h->lets, t->sym, t->kids[0]);
  }
  if (t->kind == T_LETTUP || t->kind == T_LAM)
    for (int i = 0; i < t->nsyms; i++) ptrmap_put(&h->bound, t->syms[i], &inner_mark);
}

static Term *walk(Hoist *h, const Term *t, bool inner) {
  fe_stack_check(t->span);
  bind(h, t, inner);
  if (inner && t->kind == T_PRIM && t->prim == PRIM_INDEX) {
    Sym *m = free_array(h, t->kids[0], true);
    int budget = INDEX_NODES;
    Term *ix = m ? expand(h, t->kids[1], &budget) : NULL;
    if (ix) {
      int e = entry_for(h, t->span, m, simplified(ix), NULL); /* may move h->row */
      return fe_mk_var(t->span, h->row[e]);
    }
    Term *w = window_read(h, t);
    if (w) return w;
  }
  if (t->nkids == 0) return (Term *)t;
  bool in = inner || t->kind == T_LAM;
  /* the index of a for loop, or of a map over iota n, is a counter in
     its function */
  int saved = h->ncounters;
  const Term *lam = t->kind == T_PRIM ? t->kids[0] : NULL;
  if (t->kind == T_PRIM && t->prim == PRIM_LOOP_FOR && lam->kind == T_LAM && lam->nsyms == 2)
    push_counter(h, lam->syms[1], t->kids[2]);
  if (t->kind == T_PRIM && t->prim == PRIM_MAP && lam->kind == T_LAM && lam->nsyms == 1 &&
      t->kids[1]->kind == T_PRIM && t->kids[1]->prim == PRIM_IOTA)
    push_counter(h, lam->syms[0], t->kids[1]->kids[0]);
  Term **kids = NULL;
  for (int i = 0; i < t->nkids; i++) {
    Term *k = walk(h, t->kids[i], in);
    if (k != t->kids[i] && !kids) {
      kids = NEW_ARRAY(Term *, t->nkids);
      memcpy(kids, t->kids, sizeof(Term *) * (size_t)t->nkids);
    }
    if (kids) kids[i] = k;
  }
  h->ncounters = saved;
  return kids ? fe_term_copy_with_kids(t, kids) : (Term *)t;
}

Term *rev_hoist_safe_index(Span s, const RevHoisted *h, int i) {
  Term *e = h->index[i];
  Term *len = fe_mk_length(s, fe_mk_var(s, h->matrix[i]));
  Term *in = fe_mk_op2(s, PRIM_AND, fe_mk_op2(s, PRIM_LE, fe_mk_num(s, 0), fe_copy(e)),
                       fe_mk_op2(s, PRIM_AND, fe_mk_op2(s, PRIM_LT, fe_copy(e), len),
                                 fe_mk_op2(s, PRIM_EQ, fe_mk_op1(s, PRIM_FLOOR, fe_copy(e)), fe_copy(e))));
  return fe_mk_if(s, in, fe_copy(e), fe_mk_num(s, 0));
}

Term *rev_hoist_safe_read(Span s, const RevHoisted *h, int i) {
  Sym *m = h->matrix[i];
  Term *ix[2] = {fe_mk_var(s, m), rev_hoist_safe_index(s, h, i)};
  Term *read = fe_mk_array_prim(s, PRIM_INDEX, 2, ix);
  read->b = true; /* in range: m is not empty there */
  Term *empty = fe_mk_replicate(s, fe_mk_num(s, 0), fe_mk_num(s, 0));
  Term *none = fe_mk_op2(s, PRIM_EQ, fe_mk_length(s, fe_mk_var(s, m)), fe_mk_num(s, 0));
  return fe_mk_if(s, none, empty, read);
}

/* floor x == x && x - x == 0: x an integer (finite) */
static Term *whole(Span s, Term *x) {
  return fe_mk_op2(s, PRIM_AND, fe_mk_op2(s, PRIM_EQ, fe_mk_op1(s, PRIM_FLOOR, fe_copy(x)), fe_copy(x)),
                   fe_mk_op2(s, PRIM_EQ, fe_mk_op2(s, PRIM_SUB, fe_copy(x), fe_copy(x)), fe_mk_num(s, 0)));
}

Term *rev_hoist_window_lo(Span s, const RevHoisted *h, int i) {
  Term *base = h->index[i], *len = fe_mk_length(s, fe_mk_var(s, h->matrix[i]));
  Term *in = fe_mk_op2(s, PRIM_MAX, fe_mk_num(s, 0), fe_mk_op2(s, PRIM_MIN, len, fe_copy(base)));
  return fe_mk_if(s, whole(s, base), in, fe_mk_num(s, 0));
}

Term *rev_hoist_window_hi(Span s, const RevHoisted *h, int i, Term *lo) {
  Term *base = h->index[i], *n = h->count[i], *len = fe_mk_length(s, fe_mk_var(s, h->matrix[i]));
  Term *end = fe_mk_op2(s, PRIM_MAX, fe_copy(lo), fe_mk_op2(s, PRIM_MIN, len, fe_mk_add(s, fe_copy(base), fe_copy(n))));
  return fe_mk_if(s, fe_mk_op2(s, PRIM_AND, whole(s, base), whole(s, n)), end, lo);
}

/* a[lo : hi] of window i, lo its variable */
static Term *window_read_at(Span s, const RevHoisted *h, int i) {
  Term *lo = fe_mk_var(s, h->lo[i]);
  Term *k[3] = {fe_mk_var(s, h->matrix[i]), lo, rev_hoist_window_hi(s, h, i, fe_mk_var(s, h->lo[i]))};
  Term *r = fe_mk_array_prim(s, PRIM_SLICE, 3, k);
  r->b = true; /* 0 <= lo <= hi <= length a by construction */
  return r;
}

Term *rev_hoist_bind(const RevHoisted *h, Term *body) {
  for (int i = h->n - 1; i >= 0; i--) {
    Span s = h->index[i]->span;
    body = fe_mk_let(s, h->row[i], h->count[i] ? window_read_at(s, h, i) : rev_hoist_safe_read(s, h, i), body);
  }
  return body;
}

Term *rev_hoist_bind_starts(const RevHoisted *h, Term *body) {
  for (int i = h->n - 1; i >= 0; i--)
    if (h->count[i]) {
      Span s = h->index[i]->span;
      body = fe_mk_let(s, h->lo[i], rev_hoist_window_lo(s, h, i), body);
    }
  return body;
}

static Term *hoist(const Term *body, Sym *const *fv, int nfv, const PtrMap *prefix, Hoist *h) {
  memset(h, 0, sizeof *h);
  h->fv = fv;
  h->nfv = nfv;
  h->prefix = prefix;
  ptrmap_init(&h->lets, 8);
  ptrmap_init(&h->bound, 8);
  return walk(h, body, false);
}

Term *rev_hoist_rows(const Term *body, Sym *const *fv, int nfv, RevHoisted *out) {
  memset(out, 0, sizeof *out);
  bool any = false;
  for (int k = 0; k < nfv; k++) any |= fv[k]->type->kind == TY_ARRAY;
  if (!any) return (Term *)body;
  Hoist h;
  PtrMap prefix = {0};
  Term *r = hoist(body, fv, nfv, &prefix, &h);
  /* a vector with a window from base + j: its reads a[j] are windows
     too (else they would make its cotangent the general rule's) */
  for (int i = 0; i < h.n; i++)
    if (h.count[i]) ptrmap_put(&prefix, h.matrix[i], &inner_mark);
  if (prefix.n) r = hoist(body, fv, nfv, &prefix, &h);
  out->n = h.n;
  out->row = h.row;
  out->matrix = h.matrix;
  out->index = h.index;
  out->count = h.count;
  out->lo = h.lo;
  return r;
}
