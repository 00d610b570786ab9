/* fusion.c: map/map2 fusion. An inner map that is used once (written
   inline, or a let-bound variable used once, in the same lambda body as
   its let, so that no work moves into a loop) is fused into its consumer:
     map f (map g A)        -> map (x. let y = g x in f y) A
     map f (map2 g A B)     -> map2 (a, b. let y = g a b in f y) A B
     map2 f (map g A) B     -> map2 (x, b. let y = g x in f y b) A B   (either side)
     foldl f v (map g A)    -> foldl (acc, x. let y = g x in f acc y) v A
   The lengths and errors are unchanged (map keeps its array's length; the
   map2 check sees the same lengths). The inner array's let is left in place
   for dead-code elimination; the copied body gets fresh binders. reduce is
   not fused (its operator must stay associative).

   More generally (fuse_slot), a map, or a map2/map3 whose check cannot
   fail, is fused into any array of a map, map2 or map3, its arrays taking
   that array's place, an array variable read twice given one parameter:
     map2 f (map2 g A B) A  -> map2 (a, b. let y = g a b in f y a) A B
     map3 f A (map g A) C   -> map2 (a, c. let y = g a in f a y c) A C
   as long as no more arrays remain than the consumer had (or two), and,
   when the consumer's check may fail, its arrays stay the same in number
   and the producer is a map (its error reads the same) whose function
   cannot raise (its errors came before the check). A map2 of two
   producers over the same arrays takes both at once (both_slots). A
   producer let-bound and used several times is fused into each reader
   when every use is as an array of a map (SHARED_FUSE_USES below).

   Arrays of tuples are the exception to "used once": the gradient of a
   map builds `W = map (x. (d1, d2)) A` and reads its components by
   separate maps, and an array of tuples is boxed, element by element, in
   the evaluator. A let-bound W whose elements are tuples is fused into
   each of its consumers (all at its lambda depth), which then compute
   only the component they read (tuples.c projects it), and W dies, as
   long as W's lambda is small and computes no matrix-vector product
   (TUPLE_FUSE_MAX: the consumers share nothing, so a chain of such maps would grow exponentially). When
   the consumer is a map2 of such a W made by a map2, which cannot take a
   third array, and reads a single component k of its elements, that
   component is made its own unboxed array first:
     map2 (t, u. e[t.k]) W B  ->  map2 (p, u. e[p]) (map2 (a, b. (g a b).k) A B) B
   with W = map2 g A B. */
#include "passes.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"
#include "pe_util.h"
#include "rw.h"
#include "fission.h"
#include "outer_split.h"

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

/* The inner map/map2 that the array term a stands for when it may be
   fused (see the header), or NULL. */
/* True when the array term a has tuples as elements. */
static bool of_tuples(const Term *a) {
  return a->type && a->type->kind == TY_ARRAY && a->type->elem->kind == TY_TUPLE;
}

/* Whether r is map (x. lets in map (r. dot r x) M): rows of a matrix
   product, which the plan gives to BLAS (fission.c makes them); fused
   into a consumer or fed by a fused map, each would be a matrix-vector
   product per element. */
static bool gemm_rows(const Term *r) {
  if (!is_prim(r, PRIM_MAP)) return false;
  const Term *lam = r->kids[0], *b = lam->kids[0];
  while (b->kind == T_LET) b = b->kids[1];
  const Term *v = opt_row_product(b);
  return v && v->kind == T_VAR && v->sym == lam->syms[0];
}

/* A map of tuples used several times is fused into each consumer only
   while its lambda is at most this big: each consumer recomputes the
   part of the body that its component needs, so a chain of such maps
   (the gradient of a loop unrolled by hand, whose steps read the previous
   state twice) would otherwise grow exponentially. */
enum { TUPLE_FUSE_MAX = 120 };

/* A map or map2 whose every use is as an array of a map, map2 or map3
   (at most SHARED_FUSE_USES of them, at its lambda depth) is fused into
   each of them while its lambda is at most SHARED_FUSE_MAX nodes: each
   reader computes the element again instead of loading it, and the array
   is never stored. A chain of such maps over one array (the stages of a
   Runge-Kutta step) becomes one map, whose body CSE then computes each
   stage once. Where the readers stay apart, the element is computed
   once per reader: the bounds keep that small. */
enum { SHARED_FUSE_USES = 8, SHARED_FUSE_MAX = 200 };

/* Whether t is a tuple of reals. */
static bool tuple_of_reals(const Type *t) {
  for (int i = 0; i < t->n; i++)
    if (t->elems[i]->kind != TY_REAL) return false;
  return true;
}

/* Whether t holds a matrix-vector product (opt_row_product) anywhere. */
static bool has_row_product(const Term *t) {
  if (opt_row_product(t)) return true;
  for (int i = 0; i < t->nkids; i++)
    if (has_row_product(t->kids[i])) return true;
  return false;
}

static Term *fusable(OptRw *c, Term *a, bool map_only) {
  Term *r = a;
  if (a->kind == T_VAR) {
    long uses = opt_rw_uses(c, a->sym);
    bool once = uses == 1;
    r = opt_rw_rhs(c, a->sym);
    if (!r || !opt_rw_same_depth(c, a->sym)) return NULL;
    bool shared = !once && !of_tuples(a) && uses <= SHARED_FUSE_USES && opt_rw_elem_uses(c, a->sym) == uses &&
                  (is_prim(r, PRIM_MAP) || is_prim(r, PRIM_MAP2)) &&
                  fe_term_size_upto(r->kids[0], SHARED_FUSE_MAX) <= SHARED_FUSE_MAX;
    if (!once && !of_tuples(a) && !shared) return NULL;
    /* a map of tuples fused into each reader: small, and no
       matrix-vector product per element (each reader would compute the
       products again, and fission.c make each a matrix product) */
    if (!once && !shared && r->kind == T_PRIM && r->nkids > 0 && r->kids[0]->kind == T_LAM &&
        (fe_term_size_upto(r->kids[0], TUPLE_FUSE_MAX) > TUPLE_FUSE_MAX || has_row_product(r->kids[0])))
      return NULL;
    /* tuples holding arrays (boxed whether fused or not) read more times
       than they have components: some component is read twice, and
       would be computed twice (a layer's input cotangent, read by its
       weights' product and summed for its bias) */
    if (!once && !shared && !tuple_of_reals(a->type->elem) && uses > a->type->elem->n) return NULL;
  }
  if (!(is_prim(r, PRIM_MAP) || (!map_only && (is_prim(r, PRIM_MAP2) || is_prim(r, PRIM_MAP3))))) return NULL;
  if (opt_row_product(r) || gemm_rows(r)) return NULL;
  if (a->kind == T_VAR) {
    /* the let stays until dead-code elimination drops it: its arrays are
       shared, not copied, and it must be droppable (no duplicated work) */
    for (int i = 1; i < r->nkids; i++)
      if (r->kids[i]->kind != T_VAR) return NULL;
    if (!opt_rw_safe(c, r)) return NULL;
  }
  return r;
}

/* The lambda over inner's parameters (fresh) computing
   `let y = inner body in outer body` where outer's parameter i is y;
   outer's other parameters are kept and placed after (or, for i == 1 of a
   two-parameter outer, before) inner's. */
static Term *compose(const Term *inner_lam, const Term *outer_lam, int i, int *nparams, Sym ***params) {
  Term *il = fe_copy(inner_lam);
  Sym *y = fe_mk_sym("y", outer_lam->syms[i]->type, outer_lam->span);
  Term *yv = fe_mk_var(outer_lam->span, y);
  Sym *from = outer_lam->syms[i];
  Term *ob = fe_subst(outer_lam->kids[0], 1, &from, &yv);
  Term *body = fe_mk_let(outer_lam->span, y, il->kids[0], ob);
  int n = 0;
  Sym **ps = NEW_ARRAY(Sym *, il->nsyms + outer_lam->nsyms);
  for (int j = 0; j < outer_lam->nsyms; j++) {
    if (j == i)
      for (int q = 0; q < il->nsyms; q++) ps[n++] = il->syms[q];
    else
      ps[n++] = outer_lam->syms[j];
  }
  *nparams = n;
  *params = ps;
  return body;
}

/* Whether the arrays of the mapK t are known to have one length (its
   check cannot fail). */
static bool one_length(OptRw *c, const Term *t) {
  if (t->prim == PRIM_MAP || t->b) return true;
  for (int i = 2; i < t->nkids; i++)
    if (!opt_rw_same_length(c, t->kids[1], t->kids[i])) return false;
  return true;
}

/* The mapK consumer t with the producer in (a map, or a map2/map3 whose
   check cannot fail) fused into its array i: in's arrays in its place, an
   array variable read twice given one parameter. NULL when in's check may
   fail, when more than max arrays remain, or when t's check may fail and
   its arrays would change in number or kind (its error would read
   otherwise) or in's function may raise (its error, first unfused, would
   come after the check). */
static Term *fuse_slot(OptRw *c, Term *t, int i, Term *in, int max) {
  if (in->prim != PRIM_MAP && !in->b && !opt_rw_safe(c, in)) return NULL;
  int np;
  Sym **ps;
  Term *body = compose(in->kids[0], t->kids[0], i, &np, &ps);
  Term *arrs[6];
  int na = 0;
  for (int j = 1; j < t->nkids; j++)
    if (j == 1 + i)
      for (int q = 1; q < in->nkids; q++) arrs[na++] = in->kids[q];
    else
      arrs[na++] = t->kids[j];
  ASSERT(na == np);
  for (int a = 0; a < na; a++)
    for (int b = a + 1; b < na;) {
      if (arrs[a]->kind != T_VAR || arrs[b]->kind != T_VAR || arrs[a]->sym != arrs[b]->sym) {
        b++;
        continue;
      }
      /* a fresh parameter for both: no input variable gains an occurrence
         (rw.h: opt_rw_unused) */
      Sym *m = fe_mk_sym(ps[a]->name, ps[a]->type, t->span);
      Sym *from[2] = {ps[a], ps[b]};
      Term *v = fe_mk_var(t->span, m), *to[2] = {v, v};
      body = fe_subst(body, 2, from, to);
      ps[a] = m;
      for (int q = b; q + 1 < na; q++) {
        arrs[q] = arrs[q + 1];
        ps[q] = ps[q + 1];
      }
      na--;
    }
  int arity = t->nkids - 1;
  if (na > max) return NULL;
  bool checked = one_length(c, t);
  /* a check that may fail comes before the fused producer's elements: so
     the producer's function must not raise (it raised first unfused) */
  if (!checked && (na != arity || in->prim != PRIM_MAP || opt_may_raise(in->kids[0]->kids[0]))) return NULL;
  Term *k[4] = {fe_mk_lam(t->kids[0]->span, na, ps, body)};
  for (int q = 0; q < na; q++) k[1 + q] = arrs[q];
  Term *r = fe_mk_array_prim(t->span, na == 1 ? PRIM_MAP : na == 2 ? PRIM_MAP2 : PRIM_MAP3, na + 1, k);
  r->b = na > 1 && checked;
  return r;
}

/* True when every occurrence of x in t is a projection x.k with one and
   the same k (stored in *k, a projection's index from 0; *k is -1 on
   entry and stays -1 when x does not occur). */
static bool only_proj(const Term *t, const Sym *x, int *k) {
  if (t->kind == T_PROJ && t->kids[0]->kind == T_VAR && t->kids[0]->sym == x) {
    if (*k >= 0 && *k != t->index) return false;
    *k = t->index;
    return true;
  }
  if (t->kind == T_VAR) return t->sym != x;
  for (int i = 0; i < t->nkids; i++)
    if (!only_proj(t->kids[i], x, k)) return false;
  return true;
}

typedef struct ProjTo {
  const Sym *x;
  Sym *p;
} ProjTo;

/* t with every x.k replaced by the variable p. */
static Term *proj_to(void *ctx, const Term *t) {
  ProjTo *pt = ctx;
  if (t->kind == T_PROJ && t->kids[0]->kind == T_VAR && t->kids[0]->sym == pt->x) return fe_mk_var(t->span, pt->p);
  return opt_map_kids(t, proj_to, ctx);
}

/* The narrowing of the header: map2 f ... W ... with W = map2 g A B of
   tuples and f reading one component of W's elements; NULL otherwise. */
static Term *narrow(OptRw *c, Term *t) {
  Term *lam = t->kids[0];
  for (int i = 0; i < 2; i++) {
    Term *w = t->kids[1 + i];
    if (w->kind != T_VAR || !of_tuples(w)) continue;
    Term *in = fusable(c, w, false);
    if (!in || !is_prim(in, PRIM_MAP2)) continue;
    int k = -1;
    if (!only_proj(lam->kids[0], lam->syms[i], &k) || k < 0) continue;
    Term *il = fe_copy(in->kids[0]);
    Sym *q = fe_mk_sym("q", il->kids[0]->type, il->span);
    Term *qk = fe_mk_proj(il->span, fe_mk_var(il->span, q), k);
    Term *part = opt_checked_as(
        fe_mk_map2(in->span, fe_mk_lam(il->span, il->nsyms, il->syms, fe_mk_let(il->span, q, il->kids[0], qk)),
                   in->kids[1], in->kids[2]),
        in);
    Sym **ps = NEW_ARRAY(Sym *, 2);
    ps[0] = lam->syms[0];
    ps[1] = lam->syms[1];
    ps[i] = fe_mk_sym(lam->syms[i]->name, qk->type, lam->span);
    ProjTo pt = {lam->syms[i], ps[i]};
    Term *body = proj_to(&pt, lam->kids[0]);
    Term *nl = fe_mk_lam(lam->span, 2, ps, body);
    return opt_checked_as(i == 0 ? fe_mk_map2(t->span, nl, part, t->kids[2]) : fe_mk_map2(t->span, nl, t->kids[1], part),
                          t);
  }
  return NULL;
}

/* map2 f X Y whose producers X and Y read the same arrays (the sum of two
   cotangents over one pair of arrays): both fused at once, when neither
   alone leaves at most two arrays; t itself otherwise. */
static Term *both_slots(OptRw *c, Term *t) {
  for (int i = 0; i < 2; i++)
    if (opt_feeds_product(t->kids[0]->kids[0], t->kids[0]->syms[i])) return t;
  Term *in0 = fusable(c, t->kids[1], false), *in1 = in0 ? fusable(c, t->kids[2], false) : NULL;
  Term *r3 = in1 ? fuse_slot(c, t, 0, in0, 3) : NULL;
  Term *r = r3 && r3->prim == PRIM_MAP3 ? fuse_slot(c, r3, 2, in1, 2) : NULL;
  return r ? r : t;
}

static Term *fusion_rule(OptRw *c, Term *t) {
  if (t->kind != T_PRIM) return t;
  int np;
  Sym **ps;
  switch (t->prim) {
  case PRIM_MAP: {
    /* a matrix product's rows: what it reads stays an array */
    if (gemm_rows(t) || opt_outer_rows(t) || opt_feeds_product(t->kids[0]->kids[0], t->kids[0]->syms[0])) return t;
    Term *in = fusable(c, t->kids[1], false);
    if (!in) return t;
    if (is_prim(in, PRIM_MAP3)) {
      Term *r = fuse_slot(c, t, 0, in, 3);
      return r ? r : t;
    }
    Term *body = compose(in->kids[0], t->kids[0], 0, &np, &ps);
    Term *lam = fe_mk_lam(t->kids[0]->span, np, ps, body);
    if (in->prim == PRIM_MAP) return fe_mk_map(t->span, lam, in->kids[1]);
    return opt_checked_as(fe_mk_map2(in->span, lam, in->kids[1], in->kids[2]), in);
  }
  case PRIM_MAP2: {
    Term *n = narrow(c, t);
    if (n) return n;
    for (int i = 0; i < 2; i++) {
      /* the rows a matrix product of the function reads (fission.c) */
      if (opt_feeds_product(t->kids[0]->kids[0], t->kids[0]->syms[i])) continue;
      Term *in = fusable(c, t->kids[1 + i], false);
      Term *r = in ? fuse_slot(c, t, i, in, 2) : NULL;
      if (r) return r;
    }
    return both_slots(c, t);
  }
  case PRIM_MAP3:
    for (int i = 0; i < 3; i++) {
      if (opt_feeds_product(t->kids[0]->kids[0], t->kids[0]->syms[i])) continue;
      Term *in = fusable(c, t->kids[1 + i], false);
      Term *r = in ? fuse_slot(c, t, i, in, 3) : NULL;
      if (r) return r;
    }
    return t;
  case PRIM_FOLDL: {
    Term *in = fusable(c, t->kids[2], true);
    if (!in) return t;
    Term *body = compose(in->kids[0], t->kids[0], 1, &np, &ps);
    return fe_mk_foldl(t->span, fe_mk_lam(t->kids[0]->span, np, ps, body), t->kids[1], in->kids[1]);
  }
  default: return t;
  }
}

/* The fusions above, everywhere in t. */
Term *opt_fusion(const Term *t) { return opt_rw_run(t, fusion_rule); }
