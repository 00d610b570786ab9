/* histogram.c: sums over an array selected by equality with a map's
   index, computed for every index at once (arrays.c calls it on every map
   and map2):

     map (j. ..reduce (+) 0 (map (c. if c == j then e else 0) A)..) (iota k)
       ->  let H = reduce_by_index (replicate (k + 1) 0) (+) 0
                     (map (c. if 0 <= c && c < k && floor c == c then c else k) A)
                     (map (c. e) A) in
           map (j. ..H[j]..) (iota k)

   (`j == c` too; the map may be a map2 whose other array is anything)
   when A is a variable bound outside the map and e is free of j and
   cannot raise. The sum for index j takes the elements c of A equal to j;
   j is an integer of [0, k), so they are the ones scattered to place j,
   and every other element goes to place k, which no j reads. One pass
   over A for all the k sums instead of k passes: a gradient's count of the
   points nearest each centroid (kmeans: the reverse of its minimum over
   rows, jt_reduce_minmax.c), in the gradient and again in its tangent.
   The sums add in scatter order, not reduce's: the last bits may differ
   for non-integer e. */
#include "histogram.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/subst.h"
#include "pe_util.h"

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

enum { MAX_SUMS = 4, MAX_BODY = 2000 };

typedef struct {
  const Sym *j;         /* the map's index */
  OptSymMap *bound;     /* binders inside the map's function */
  PtrMap lets;          /* their lets' right-hand sides */
  const Term *sum[MAX_SUMS]; /* the sums found (one per distinct A and e) */
  Sym *h[MAX_SUMS];     /* their histograms */
  int n;
} Sums;

static void binders(Sums *s, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET) {
    opt_map_add(s->bound, t->sym, 1);
    ptrmap_put(&s->lets, t->sym, t->kids[0]);
  }
  if (t->kind == T_LETTUP || t->kind == T_LAM)
    for (int k = 0; k < t->nsyms; k++) opt_map_add(s->bound, t->syms[k], 1);
  for (int k = 0; k < t->nkids; k++) binders(s, t->kids[k]);
}

/* Whether t is `x == y` with x the variable c and y the variable j, or
   the other way round. */
static bool equal_test(const Term *t, const Sym *c, const Sym *j) {
  if (!is_prim(t, PRIM_EQ) || t->kids[0]->kind != T_VAR || t->kids[1]->kind != T_VAR) return false;
  const Sym *a = t->kids[0]->sym, *b = t->kids[1]->sym;
  return (a == c && b == j) || (a == j && b == c);
}

/* The map that t, the array of a sum, is: written there, or a let of the
   function's (`let y = map .. in .. reduce (+) 0 y`, then dead). */
static const Term *summed(const Sums *s, const Term *t) {
  if (t->kind != T_VAR) return t;
  const Term *r = ptrmap_get(&s->lets, t->sym);
  return r ? r : t;
}

/* Whether t is reduce (+) 0 (map (c. if c == j then e else 0) A) under the
   header's conditions. */
static bool is_sum(const Sums *s, const Term *t) {
  if (!is_prim(t, PRIM_REDUCE) || !fe_is_oplam_either(t->kids[0], PRIM_ADD) || !opt_is_num(t->kids[1], 0)) return false;
  const Term *m = summed(s, t->kids[2]);
  if (!is_prim(m, PRIM_MAP) || m->kids[1]->kind != T_VAR || opt_map_count(s->bound, m->kids[1]->sym) ||
      m->kids[1]->sym == s->j || !fe_type_is_real_array(m->kids[1]->type))
    return false;
  const Term *lam = m->kids[0], *b = lam->kids[0];
  if (lam->nsyms != 1 || b->kind != T_IF || !opt_is_num(b->kids[2], 0) || !equal_test(b->kids[0], lam->syms[0], s->j))
    return false;
  const Term *e = b->kids[1];
  return !opt_mentions(e, s->j) && !opt_may_raise(e);
}

/* The histogram of the sum t (found before, or new). */
static Sym *histogram_of(Sums *s, const Term *t) {
  for (int i = 0; i < s->n; i++)
    if (opt_alpha_eq(summed(s, s->sum[i]->kids[2]), summed(s, t->kids[2]))) return s->h[i];
  if (s->n == MAX_SUMS) return NULL;
  s->sum[s->n] = t;
  s->h[s->n] = fe_mk_sym("H", fe_ty_array(fe_ty_real()), t->span);
  return s->h[s->n++];
}

/* t with every sum replaced by its histogram read at j. */
static Term *replace(Sums *s, Term *t) {
  fe_stack_check(t->span);
  if (is_sum(s, t)) {
    Sym *h = histogram_of(s, t);
    if (h) {
      Term *ix[2] = {fe_mk_var(t->span, h), fe_mk_var(t->span, (Sym *)s->j)};
      Term *r = fe_mk_array_prim(t->span, PRIM_INDEX, 2, ix);
      r->b = true; /* j < k < length H */
      return r;
    }
  }
  if (t->nkids == 0) return t;
  OPT_KIDS(kids, t->nkids);
  bool changed = false;
  for (int k = 0; k < t->nkids; k++) {
    kids[k] = replace(s, t->kids[k]);
    changed |= kids[k] != t->kids[k];
  }
  return changed ? opt_with_kids(t, kids) : t;
}

/* H for the sum t over iota k: the scatter of the header. */
static Term *scatter(const Sums *s, const Term *t, const Term *k) {
  Span sp = t->span;
  const Term *m = summed(s, t->kids[2]), *lam = m->kids[0];
  Term *a = m->kids[1];
  const Type *R = fe_ty_real();
  /* the places: c itself when it is an index of [0, k), else k */
  Sym *c = fe_mk_sym("c", R, sp);
  Term *cv = fe_mk_var(sp, c);
  Term *in = fe_mk_op2(sp, PRIM_AND,
                       fe_mk_op2(sp, PRIM_AND, fe_mk_op2(sp, PRIM_LE, fe_mk_num(sp, 0), cv),
                                 fe_mk_op2(sp, PRIM_LT, fe_copy(cv), fe_copy(k))),
                       fe_mk_op2(sp, PRIM_EQ, fe_mk_op1(sp, PRIM_FLOOR, fe_copy(cv)), fe_copy(cv)));
  Term *places = fe_mk_map(sp, fe_mk_lam(sp, 1, &c, fe_mk_if(sp, in, fe_copy(cv), fe_copy(k))), fe_copy(a));
  /* the values: e at every element (a parameter of its own: binders are
     unique) */
  Sym *x = fe_mk_sym(lam->syms[0]->name, R, sp);
  Term *xv = fe_mk_var(sp, x);
  Term *e = fe_subst(lam->kids[0]->kids[1], 1, (Sym **)&lam->syms[0], &xv);
  Term *values = fe_mk_map(sp, fe_mk_lam(sp, 1, &x, e), fe_copy(a));
  Term *n = fe_mk_add(sp, fe_copy(k), fe_mk_num(sp, 1));
  Term *args[5] = {fe_mk_oplam(sp, PRIM_ADD), fe_mk_replicate(sp, n, fe_mk_num(sp, 0)), fe_mk_num(sp, 0), places,
                   values};
  return fe_mk_array_prim(sp, PRIM_REDUCE_BY_INDEX, 5, args);
}

Term *opt_histogram(OptRw *c, Term *t) {
  if (!is_prim(t, PRIM_MAP) && !is_prim(t, PRIM_MAP2)) return NULL;
  Term *lam = t->kids[0];
  int at = -1; /* the parameter over iota k */
  for (int i = 0; i < lam->nsyms && at < 0; i++)
    if (is_prim(opt_rw_resolve(c, t->kids[1 + i]), PRIM_IOTA)) at = i;
  if (at < 0) return NULL;
  Term *iota = opt_rw_resolve(c, t->kids[1 + at]), *k = iota->kids[0];
  /* k a length or a whole literal: H's count, computed before iota k,
     cannot raise where iota would not (or raise otherwise) */
  bool whole = k->kind == T_NUM && k->num >= 0 && k->num == (double)(long long)k->num;
  if (!whole && !(is_prim(k, PRIM_LENGTH) && k->kids[0]->kind == T_VAR)) return NULL;
  /* the walks below, for every map over indices of every pass: bounded */
  if (fe_term_size_upto(lam, MAX_BODY + 1) > MAX_BODY) return NULL;
  Sums s = {.j = lam->syms[at], .bound = opt_map_new()};
  binders(&s, lam->kids[0]);
  Term *body = replace(&s, lam->kids[0]);
  if (s.n == 0) return NULL;
  Term *kids[3] = {fe_mk_lam(lam->span, lam->nsyms, lam->syms, body), t->kids[1], t->nkids > 2 ? t->kids[2] : NULL};
  Term *r = opt_checked_as(fe_mk_array_prim(t->span, t->prim, t->nkids, kids), t);
  for (int i = s.n - 1; i >= 0; i--) r = fe_mk_let(t->span, s.h[i], scatter(&s, s.sum[i], k), r);
  return r;
}
