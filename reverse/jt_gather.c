/* jt_gather.c: the gathers of a lambda body from its free arrays (see
   jt_prim.h). A map whose body reads a free array a only as a[e] (or a
   free matrix m only as m[e][e2]), at indices computed from the lambda's
   parameters and free variables, at most once per element each (not in a
   loop or an inner lambda), gets the cotangent of a as reduce_by_index
   updates of one array (of m: of its rows laid end to end,
   jt_map_any.c): the body is differentiated with respect to the values
   read (one scalar per read), and those cotangents go to their indices,
   O(length of the map) in all. A read under an `if`, `&&` or `||` is
   such a read too, with its guard (the conditions on the way to
   it, also over the parameters and free variables): it is read, and its
   cotangent scattered, only where the guard holds. `length a` is no use
   of a's values. Any other use of a makes its cotangent the sum over the
   elements of whole-array cotangents (the map's general rule). Small
   literal for loops and maps over iota are unrolled first (unroll.h). */
#include "jt_prim.h"
#include "jt_util.h"
#include "hoist_rows.h"
#include "unroll.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/subst.h"

static char mark;

typedef struct {
  const RevJt *j;
  bool *bad;        /* per j->fv: a use that is not a gather */
  PtrMap bound;     /* variables bound inside the body */
  PtrMap lets;      /* ... those bound by a let: their right-hand sides */
  const Term **reads;
  const Term **index; /* per read: its index, the body's lets expanded */
  const Term **index2; /* per read of a matrix m[e][e2]: e2, else NULL */
  const Term **guard; /* per read: the condition under which it is made, the body's lets expanded; NULL: always */
  int *read_fv;
  int nreads, cap;
} Scan;

static int fv_of(const Scan *sc, const Term *t) {
  if (t->kind != T_VAR) return -1;
  for (int k = 0; k < sc->j->nfv; k++)
    if (sc->j->fv[k] == t->sym) return k;
  return -1;
}

/* Whether t mentions a variable bound inside the body. */
static bool mentions_bound(const Scan *sc, const Term *t) {
  if (t->kind == T_VAR) return ptrmap_get(&sc->bound, t->sym) != NULL;
  for (int i = 0; i < t->nkids; i++)
    if (mentions_bound(sc, t->kids[i])) return true;
  return false;
}

/* The most nodes an index (or guard) expanded may have: lets that use
   each other twice would otherwise expand exponentially. */
enum { EXPANDED_NODES = 256 };

/* t with the variables bound by the body's lets replaced by their
   right-hand sides (an index written `let j = max (i - 1) 0 in a[j]`, to
   be computed outside the body), of at most *budget nodes (taken from
   it); NULL when it mentions another variable bound inside the body (a
   tuple pattern's, an inner lambda's) or is larger. */
static Term *expand_bound(const Scan *sc, const Term *t, int *budget) {
  fe_stack_check(t->span);
  if (--*budget < 0) return NULL;
  if (t->kind == T_VAR) {
    if (!ptrmap_get(&sc->bound, t->sym)) return (Term *)t;
    const Term *rhs = ptrmap_get(&sc->lets, t->sym);
    return rhs ? expand_bound(sc, rhs, budget) : NULL;
  }
  if (t->nkids == 0) return (Term *)t;
  Term *c = NEW(Term);
  *c = *t;
  c->kids = NEW_ARRAY(Term *, t->nkids);
  for (int i = 0; i < t->nkids; i++)
    if (!(c->kids[i] = expand_bound(sc, t->kids[i], budget))) return NULL;
  return c;
}

static void bind_syms(Scan *sc, const Term *t) {
  if (t->kind == T_LET) {
    ptrmap_put(&sc->bound, t->sym, &mark);
    ptrmap_put(&sc->lets, t->sym, t->kids[0]);
  }
  if (t->kind == T_LETTUP || t->kind == T_LAM)
    for (int i = 0; i < t->nsyms; i++) ptrmap_put(&sc->bound, t->syms[i], &mark);
}

/* Records the read t of the free array fv[k] at ix (and ix2: a matrix's
   element). */
static void add_read(Scan *sc, const Term *t, int k, const Term *ix, const Term *ix2, const Term *guard) {
  if (sc->nreads == sc->cap) {
    sc->cap = sc->cap ? 2 * sc->cap : 8;
    const Term **r = NEW_ARRAY(const Term *, sc->cap);
    int *f = NEW_ARRAY(int, sc->cap);
    const Term **x = NEW_ARRAY(const Term *, sc->cap), **x2 = NEW_ARRAY(const Term *, sc->cap);
    const Term **gd = NEW_ARRAY(const Term *, sc->cap);
    if (sc->nreads) {
      memcpy(r, sc->reads, sizeof(Term *) * (size_t)sc->nreads);
      memcpy(f, sc->read_fv, sizeof(int) * (size_t)sc->nreads);
      memcpy(x, sc->index, sizeof(Term *) * (size_t)sc->nreads);
      memcpy(x2, sc->index2, sizeof(Term *) * (size_t)sc->nreads);
      memcpy(gd, sc->guard, sizeof(Term *) * (size_t)sc->nreads);
    }
    sc->reads = r;
    sc->read_fv = f;
    sc->index = x;
    sc->index2 = x2;
    sc->guard = gd;
  }
  sc->index[sc->nreads] = ix;
  sc->index2[sc->nreads] = ix2;
  sc->guard[sc->nreads] = guard;
  sc->reads[sc->nreads] = t;
  sc->read_fv[sc->nreads++] = k;
}

/* An index of a read, over the parameters and free variables (the body's
   lets expanded), or NULL. */
static const Term *index_of(const Scan *sc, const Term *e) {
  int budget = EXPANDED_NODES;
  return mentions_bound(sc, e) ? expand_bound(sc, e, &budget) : e;
}

/* Where a subterm of the body is evaluated: under the condition cond (a
   term of the body, NULL: always), or at an unknown number of times (lost:
   in a loop or an inner lambda). */
typedef struct {
  const Term *cond;
  bool lost;
} Where;

/* w narrowed by c (negated when neg): the conjunction, with && so that
   the conditions are tested in the order the body tests them. */
static Where narrow(Where w, const Term *c, bool neg) {
  Term *k = neg ? fe_mk_op1(c->span, PRIM_NOT, (Term *)c) : (Term *)c;
  w.cond = w.cond ? fe_mk_op2(c->span, PRIM_AND, (Term *)w.cond, k) : k;
  return w;
}

static void scan(Scan *sc, const Term *t, Where w) {
  fe_stack_check(t->span);
  bind_syms(sc, t);
  /* m[e][e2], m a free [[R]]: an element of the matrix read (with its
     guard under a condition) */
  if (t->kind == T_PRIM && t->prim == PRIM_INDEX && t->type->kind == TY_REAL && t->kids[0]->kind == T_PRIM &&
      t->kids[0]->prim == PRIM_INDEX) {
    const Term *row = t->kids[0];
    int k = fv_of(sc, row->kids[0]);
    if (k >= 0) {
      const Term *ix = w.lost ? NULL : index_of(sc, row->kids[1]);
      const Term *ix2 = ix ? index_of(sc, t->kids[1]) : NULL, *guard = NULL;
      if (ix2 && w.cond && !(guard = index_of(sc, w.cond))) ix2 = NULL;
      if (ix2) add_read(sc, t, k, ix, ix2, guard);
      else sc->bad[k] = true;
      scan(sc, row->kids[1], w);
      scan(sc, t->kids[1], w);
      return;
    }
  }
  if (t->kind == T_PRIM && t->prim == PRIM_INDEX) {
    int k = fv_of(sc, t->kids[0]);
    const Term *ix = NULL, *guard = NULL;
    /* a row (m[e] of a free [[R]]) unguarded only: its cotangent has the
       row's length, and where a guard fails there is no row to add it to
       (hoisted rows come guarded by their matrix's being nonempty:
       rev_jt_gathers) */
    bool row = fe_type_is_real_matrix(t->kids[0]->type) && !w.cond;
    if (k >= 0 && !w.lost && (fe_type_is_real_array(t->kids[0]->type) || row)) {
      ix = index_of(sc, t->kids[1]);
      if (ix && w.cond && !(guard = index_of(sc, w.cond))) ix = NULL;
    }
    if (k >= 0) {
      if (!ix) sc->bad[k] = true;
      else add_read(sc, t, k, ix, NULL, guard);
      scan(sc, t->kids[1], w);
      return;
    }
  }
  /* a[lo : hi] of a free [R] a, unguarded: a window, its cotangent
     added from lo (jt_map_any.c) */
  if (t->kind == T_PRIM && t->prim == PRIM_SLICE && fe_type_is_real_array(t->type)) {
    int k = fv_of(sc, t->kids[0]);
    if (k >= 0) {
      const Term *lo = w.lost || w.cond ? NULL : index_of(sc, t->kids[1]);
      const Term *hi = lo ? index_of(sc, t->kids[2]) : NULL;
      if (hi) add_read(sc, t, k, lo, hi, NULL);
      else sc->bad[k] = true;
      scan(sc, t->kids[1], w);
      scan(sc, t->kids[2], w);
      return;
    }
  }
  /* length a gives a no cotangent: a use that is not a read, but no
     other use either */
  if (t->kind == T_PRIM && t->prim == PRIM_LENGTH && fv_of(sc, t->kids[0]) >= 0) return;
  int k = fv_of(sc, t);
  if (k >= 0) sc->bad[k] = true;
  if (t->kind == T_IF) {
    scan(sc, t->kids[0], w);
    scan(sc, t->kids[1], narrow(w, t->kids[0], false));
    scan(sc, t->kids[2], narrow(w, t->kids[0], true));
    return;
  }
  if (t->kind == T_PRIM && (t->prim == PRIM_AND || t->prim == PRIM_OR)) {
    /* the right side is evaluated when the left does not decide */
    scan(sc, t->kids[0], w);
    scan(sc, t->kids[1], narrow(w, t->kids[0], t->prim == PRIM_OR));
    return;
  }
  /* evaluated maybe not at all, or many times: an inner lambda (map, loop
     bodies) */
  if (t->kind == T_LAM) w.lost = true;
  for (int i = 0; i < t->nkids; i++) scan(sc, t->kids[i], w);
}

/* A copy of t with the reads replaced by their scalars. */
static Term *replace(const Term *t, const PtrMap *to) {
  Sym *r = ptrmap_get(to, t);
  if (r) return fe_mk_var(t->span, r);
  if (t->nkids == 0) return (Term *)t;
  Term *c = NEW(Term);
  *c = *t;
  c->kids = NEW_ARRAY(Term *, t->nkids);
  for (int i = 0; i < t->nkids; i++) c->kids[i] = replace(t->kids[i], to);
  return c;
}

bool rev_jt_gathers(const RevJt *j, const Term *lam, RevGathers *g) {
  memset(g, 0, sizeof *g);
  if (j->nfv == 0) return false;
  Scan sc = {0};
  sc.j = j;
  sc.bad = NEW_ARRAY(bool, j->nfv);
  for (int k = 0; k < j->nfv; k++) sc.bad[k] = j->fv[k]->type->kind != TY_ARRAY;
  RevHoisted hr;
  Term *body = rev_hoist_rows(rev_unroll_small(lam->kids[0]), j->fv, j->nfv, &hr);
  scan(&sc, body, (Where){NULL, false});
  PtrMap to = {0};
  ptrmap_init(&to, 16);
  g->gathered = NEW_ARRAY(bool, j->nfv);
  int most = sc.nreads + hr.n > 0 ? sc.nreads + hr.n : 1;
  g->r = NEW_ARRAY(Sym *, most);
  g->read_fv = NEW_ARRAY(int, most);
  g->index = NEW_ARRAY(const Term *, most);
  g->index2 = NEW_ARRAY(const Term *, most);
  g->guard = NEW_ARRAY(const Term *, most);
  for (int i = 0; i < sc.nreads; i++) {
    int k = sc.read_fv[i];
    if (sc.bad[k]) continue;
    g->gathered[k] = true;
    Sym *r = fe_mk_sym(sc.reads[i]->type->kind == TY_REAL ? "r" : "row", sc.reads[i]->type, sc.reads[i]->span);
    ptrmap_put(&to, sc.reads[i], r);
    g->r[g->nreads] = r;
    g->read_fv[g->nreads] = k;
    g->index2[g->nreads] = sc.index2[i];
    g->guard[g->nreads] = sc.guard[i];
    g->index[g->nreads++] = sc.index[i];
  }
  /* the hoisted rows and windows: reads of their arrays where those are
     gathered, else bound in the body to their safe reads (the windows'
     starts are bound in the body either way: its inner lambdas read
     them) */
  RevHoisted kept = hr;
  kept.n = 0;
  if (hr.n) {
    kept.row = NEW_ARRAY(Sym *, hr.n);
    kept.matrix = NEW_ARRAY(Sym *, hr.n);
    kept.index = NEW_ARRAY(Term *, hr.n);
    kept.count = NEW_ARRAY(Term *, hr.n);
    kept.lo = NEW_ARRAY(Sym *, hr.n);
  }
  for (int i = 0; i < hr.n; i++) {
    int k = 0;
    while (j->fv[k] != hr.matrix[i]) k++;
    if (sc.bad[k]) {
      kept.row[kept.n] = hr.row[i];
      kept.matrix[kept.n] = hr.matrix[i];
      kept.index[kept.n] = hr.index[i];
      kept.count[kept.n] = hr.count[i];
      kept.lo[kept.n++] = hr.lo[i];
      continue;
    }
    Span s = hr.index[i]->span;
    g->gathered[k] = true;
    g->r[g->nreads] = hr.row[i];
    g->read_fv[g->nreads] = k;
    if (hr.count[i]) { /* a window: its bounds */
      Term *lo = rev_hoist_window_lo(s, &hr, i);
      g->index2[g->nreads] = rev_hoist_window_hi(s, &hr, i, fe_copy(lo));
      g->guard[g->nreads] = NULL;
      g->index[g->nreads++] = lo;
      continue;
    }
    g->index2[g->nreads] = NULL;
    g->guard[g->nreads] =
        fe_mk_op1(s, PRIM_NOT, fe_mk_op2(s, PRIM_EQ, fe_mk_length(s, fe_mk_var(s, hr.matrix[i])), fe_mk_num(s, 0)));
    g->index[g->nreads++] = rev_hoist_safe_index(s, &hr, i);
  }
  if (g->nreads == 0) return false;
  g->body = fe_copy(rev_hoist_bind_starts(&hr, rev_hoist_bind(&kept, replace(body, &to))));
  return true;
}
