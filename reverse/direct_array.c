/* direct_array.c: the direct transform's rules for the array constructs
   (figure 5's map2 and reduce, figure 16's map and foldl, section 7.1's
   free variables, replicate and array literals), derived anew; figure 5
   and figure 13 as printed are wrong in places (see each rule).

   Notation: Δ = the free variables of the lambda body that carry a
   gradient (its "Gamma" in the paper), ∇_{ctx} e = the gradient of e with
   respect to ctx as a tuple, computed by a run of the transform of its
   own (rev_dx_nabla); z / Z the cotangent of the construct's value.

   map (x. e) A, map2 (x, y. e) A B:
     let (A, Y1) = D(A) in let (B, Y2) = D(B) in
     (map2 (x, y. e) A B, fun (d_K, Z) ->
        let G = map2 (a, b. ∇_{Δ, a, b} e[a/x, b/y]) A B in    -- one pass
        Y2(d_K, A += map2 (g, w. w * g.a) G Z, B += ... g.b ...,
                Δ_j += sum_i Z_i *^ G_i.Δj))
     Figure 5's printed rule takes ∇_Gamma e1 outside the map (x and y
     free there) and substitutes only [a/x] in the ∇_{y} map; the paper's
     text version is right but computes three gradients per element.

   reduce (x, y. e) v A and foldl alike, as the left fold they are
   (s_0 = v, s_i = e[s_(i-1)/x, a_i/y]):
     let (v, Y1) = D(v) in let (A, Y2) = D(A) in
     let S = scanl (x, y. e) v A in                 -- [s_0 .. s_n]
     (last S, fun (d_K, z) ->                       -- (reduce: its own value,
                                                    -- S in the continuation)
        let G = map2 (s, a. ∇_{s, a, Δ} e) (shift1R S) A in  -- (P_i, Q_i, DΔ_i)
        let P = map (g. g.s) G in
        let W = map (w. z * w) (shift1L (scanr (*) 1 P)) in   -- W_i = z Π_{j>i} P_j
        Y2(d_K, v += z * reduce (*) 1 P,             -- z Π_j P_j
                A += map2 (g, w. w * g.a) G W,         -- W_i Q_i
                Δ += sum_i W_i *^ G_i.Δ))
     Derivation: c_n = z, c_(i-1) = c_i P_i; cot a_i = c_i Q_i, cot Δ =
     sum_i c_i ∇_Δ e(s_(i-1), a_i), cot v = c_0; c_i = W_i. No division,
     so zeros are exact (prod). Figure 13 (section 7.1) instead takes the
     scanr product of the Γ-gradients themselves (B1 = scanr 1 ×^ B0),
     drops the factor z and the suffix products of ∂_x e, and passes 0 for
     v; figure 5 passes no cotangent for v at all (Y2 gets one argument too
     few). Dropping v's cotangent is right only for a unit that does not
     depend on the parameters (Lemma A.2), not for foldl nor for reduce
     (x, y. x + y + s) (-s) A (tests/reverse/test_direct.c). */
#include "direct_int.h"
#include "../frontend/ir/build.h"

static Term *V(Span s, Sym *x) { return fe_mk_var(s, x); }
static Term *CL(Span s, const Term *a) { return rev_dx_clone_atom(s, a); }
static const Type *R(void) { return fe_ty_real(); }

/* Δ (the slots of the lambda body's free variables, in Y's order) and
   K ∪ Δ. */
static void body_slots(RevDx *st, const Term *lam, RevCont Y, Sym **K, int nK, Sym ***delta,
                       int *nd, Sym ***kext, int *nk) {
  if (st->dense) {
    *delta = *kext = Y.dom;
    *nd = *nk = Y.n;
    return;
  }
  RevSyms *fb = rev_dx_fvd(st, lam->kids[0]);
  RevPMap keep = {0};
  rev_dx_map_init(&keep, (size_t)(fb->n + nK));
  for (int i = 0; i < fb->n; i++) {
    bool param = false;
    for (int k = 0; k < lam->nsyms; k++) param = param || fb->v[i] == lam->syms[k];
    Sym *s = param ? NULL : rev_dx_slot(st, fb->v[i]);
    if (s) rev_dx_map_put(&keep, s, (void *)1);
  }
  *nd = rev_dx_filter(Y.dom, Y.n, &keep, delta);
  for (int k = 0; k < nK; k++) rev_dx_map_put(&keep, K[k], (void *)1);
  *nk = rev_dx_filter(Y.dom, Y.n, &keep, kext);
}

/* map2 (g, w. w *^ g.k) G W: component k of each element of G (elements of
   ncomp components) scaled by the matching weight. */
static Term *scaled(Span s, Sym *G, int ncomp, int k, Term *W) {
  Sym *ps[2] = {fe_mk_sym("g", G->type->elem, s), fe_mk_sym("w", R(), s)};
  Term *body = fe_mk_gscale(s, V(s, ps[1]), rev_dx_pick(s, V(s, ps[0]), ncomp, k));
  return fe_mk_map2(s, fe_mk_lam(s, 2, ps, body), V(s, G), W);
}

/* The monoid sum of an array of ground values, zero its unit. */
static Term *gsum(Span s, Term *arr, Term *zero) {
  const Type *t = arr->type->elem;
  if (t->kind == TY_REAL) return fe_mk_reduce(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), arr);
  Sym *ps[2] = {fe_mk_sym("acc", t, s), fe_mk_sym("u", t, s)};
  Term *body = fe_mk_gadd(s, V(s, ps[0]), V(s, ps[1]));
  return fe_mk_foldl(s, fe_mk_lam(s, 2, ps, body), zero, arr);
}

static void need_real_param(const Term *e, const Sym *p, bool acc) {
  if (p->type->kind == TY_REAL) return;
  if (acc)
    fe_error(e->span, "grad: an accumulator of type %s in %s is not supported under grad yet",
             fe_type_str(p->type), fe_prims[e->prim].name);
  if (p->type->kind == TY_TUPLE) rev_dx_unsupported(e->span, "arrays of tuples");
  if (p->type->kind == TY_ARRAY) rev_dx_unsupported(e->span, "nested arrays");
}

RevRes rev_dx_map(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  const Term *lam = e->kids[0];
  int na = e->nkids - 1;
  ASSERT(na == 1 || na == 2);
  Sym **delta, **kext;
  int nd, nk;
  body_slots(st, lam, Y, K, nK, &delta, &nd, &kext, &nk);
  Term *arr[2];
  RevCont C = rev_dx_seq(st, e->kids + 1, na, Y, kext, nk, arr);
  Term *lc = rev_dx_copy(st, lam);
  Term *value = na == 1 ? fe_mk_map(s, lc, CL(s, arr[0])) : fe_mk_map2(s, lc, CL(s, arr[0]), CL(s, arr[1]));

  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, C);
  Sym *p[2];
  int pidx[2] = {-1, -1};
  Sym **ctx = NEW_ARRAY(Sym *, nd + 2);
  int nc = 0;
  for (int j = 0; j < nd; j++) ctx[nc++] = delta[j];
  for (int i = 0; i < na; i++) {
    p[i] = fe_mk_sym(lam->syms[i]->name, lam->syms[i]->type, s);
    if (rev_dx_back_wants(&b, rev_dx_atom_slot(arr[i]))) {
      need_real_param(e, lam->syms[i], false);
      pidx[i] = nc;
      ctx[nc++] = p[i];
    }
    rev_dx_map_put(&st->env, lam->syms[i], V(s, p[i]));
  }
  ASSERT(nc > 0);
  Term *g = rev_dx_nabla(st, s, ctx, nc, rev_dx_copy(st, lam->kids[0]), NULL);
  Term *gl = fe_mk_lam(s, na, p, g);
  Sym *G = rev_dx_bind(st, "G", na == 1 ? fe_mk_map(s, gl, CL(s, arr[0]))
                                        : fe_mk_map2(s, gl, CL(s, arr[0]), CL(s, arr[1])), s);
  for (int i = 0; i < na; i++)
    if (pidx[i] >= 0)
      rev_dx_back_add(&b, rev_dx_atom_slot(arr[i]), scaled(s, G, nc, pidx[i], V(s, b.z)));
  for (int j = 0; j < nd; j++)
    rev_dx_back_add(&b, delta[j],
                    gsum(s, scaled(s, G, nc, j, V(s, b.z)), fe_mk_zero_like(s, V(s, delta[j]))));
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}

RevRes rev_dx_fold(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  const Term *lam = e->kids[0];
  need_real_param(e, lam->syms[0], true);
  Sym **delta, **kext;
  int nd, nk;
  body_slots(st, lam, Y, K, nK, &delta, &nd, &kext, &nk);
  Term *vals[2];
  RevCont C = rev_dx_seq(st, e->kids + 1, 2, Y, kext, nk, vals);
  Term *v = vals[0], *A = vals[1];
  /* foldl: the scan in the forward pass, the value its last element
     (bitwise foldl's value); reduce: the value by reduce itself (the
     evaluator's bracketing), the scan in the continuation. */
  bool red = e->prim == PRIM_REDUCE;
  Sym *SA = NULL;
  Term *value;
  if (red) {
    value = fe_mk_reduce(s, rev_dx_copy(st, lam), CL(s, v), CL(s, A));
  } else {
    SA = rev_dx_bind(st, "S", fe_mk_scanl(s, rev_dx_copy(st, lam), CL(s, v), CL(s, A)), s);
    Sym *pq[2] = {fe_mk_sym("p", R(), s), fe_mk_sym("q", R(), s)};
    value = fe_mk_foldl(s, fe_mk_lam(s, 2, pq, V(s, pq[1])), CL(s, v), V(s, SA));
  }

  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, C);
  if (red) SA = rev_dx_bind(st, "S", fe_mk_scanl(s, rev_dx_copy(st, lam), CL(s, v), CL(s, A)), s);
  Sym *S = rev_dx_bind(st, "S", fe_mk_shift(s, PRIM_SHIFT1R, V(s, SA)), s);
  Sym *ps[2] = {fe_mk_sym(lam->syms[0]->name, R(), s),
                fe_mk_sym(lam->syms[1]->name, lam->syms[1]->type, s)};
  Sym **ctx = NEW_ARRAY(Sym *, nd + 2);
  int nc = 0, aidx = -1;
  ctx[nc++] = ps[0];
  if (rev_dx_back_wants(&b, rev_dx_atom_slot(A))) {
    need_real_param(e, lam->syms[1], false);
    aidx = nc;
    ctx[nc++] = ps[1];
  }
  int d0 = nc;
  for (int j = 0; j < nd; j++) ctx[nc++] = delta[j];
  rev_dx_map_put(&st->env, lam->syms[0], V(s, ps[0]));
  rev_dx_map_put(&st->env, lam->syms[1], V(s, ps[1]));
  Term *g = rev_dx_nabla(st, s, ctx, nc, rev_dx_copy(st, lam->kids[0]), NULL);
  Sym *G = rev_dx_bind(st, "G", fe_mk_map2(s, fe_mk_lam(s, 2, ps, g), V(s, S), CL(s, A)), s);
  Sym *P = G;
  if (nc > 1) {
    Sym *t = fe_mk_sym("g", G->type->elem, s);
    P = rev_dx_bind(st, "P", fe_mk_map(s, fe_mk_lam(s, 1, &t, fe_mk_proj(s, V(s, t), 0)), V(s, G)), s);
  }
  Sym *Rs = rev_dx_bind(st, "R", fe_mk_scanr(s, fe_mk_oplam(s, PRIM_MUL), fe_mk_num(s, 1), V(s, P)), s);
  Sym *w = fe_mk_sym("w", R(), s);
  Term *wl = fe_mk_lam(s, 1, &w, fe_mk_mul(s, V(s, b.z), V(s, w)));
  Sym *W = rev_dx_bind(st, "W", fe_mk_map(s, wl, fe_mk_shift(s, PRIM_SHIFT1L, V(s, Rs))), s);
  Sym *vs = rev_dx_atom_slot(v);
  if (rev_dx_back_wants(&b, vs))
    rev_dx_back_add(&b, vs, fe_mk_mul(s, V(s, b.z), fe_mk_reduce(s, fe_mk_oplam(s, PRIM_MUL),
                                                                  fe_mk_num(s, 1), V(s, P))));
  if (aidx >= 0) rev_dx_back_add(&b, rev_dx_atom_slot(A), scaled(s, G, nc, aidx, V(s, W)));
  for (int j = 0; j < nd; j++)
    rev_dx_back_add(&b, delta[j],
                    gsum(s, scaled(s, G, nc, d0 + j, V(s, W)), fe_mk_zero_like(s, V(s, delta[j]))));
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}

/* replicate n v: (replicate n v, fun (d_K, Z) -> Y1(d_K, v += reduce (+) 0 Z)). */
RevRes rev_dx_replicate(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  Term *v;
  RevCont C = rev_dx_seq(st, e->kids + 1, 1, Y, K, nK, &v);
  Term *value = fe_mk_replicate(s, rev_dx_copy(st, e->kids[0]), CL(s, v));
  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, C);
  rev_dx_back_add(&b, rev_dx_atom_slot(v),
                  fe_mk_reduce(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), V(s, b.z)));
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}

/* [e1, ..., en]: D(e1) .. D(en), then ([y1, ..., yn], fun (d_K, Z) ->
   Yn(d_K, yi += Z_i)) where Z_i = reduce (+) 0 (map2 (w, k. if k == i
   then w else 0) Z I), I = [0, .., n-1] (there is no indexing; O(n) per
   element, so O(n^2) for a literal of n elements). */
RevRes rev_dx_array_lit(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  int n = e->nkids;
  Term **vals = NEW_ARRAY(Term *, n);
  RevCont C = rev_dx_seq(st, e->kids, n, Y, K, nK, vals);
  Term **items = NEW_ARRAY(Term *, n);
  for (int i = 0; i < n; i++) items[i] = CL(s, vals[i]);
  Term *value = fe_term_kids(s, T_ARRAY, e->type, n, items);
  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, C);
  Sym *I = NULL;
  for (int i = 0; i < n; i++) {
    Sym *vs = rev_dx_atom_slot(vals[i]);
    if (!rev_dx_back_wants(&b, vs)) continue;
    if (!I) {
      /* I = shift1R (scanl (+) 0 (replicate (length Z) 1)) = [0, .., n-1] */
      Term *ones = fe_mk_replicate(s, fe_mk_length(s, V(s, b.z)), fe_mk_num(s, 1));
      Term *sc = fe_mk_scanl(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), ones);
      I = rev_dx_bind(st, "I", fe_mk_shift(s, PRIM_SHIFT1R, sc), s);
    }
    Sym *wk[2] = {fe_mk_sym("w", R(), s), fe_mk_sym("k", R(), s)};
    Term *pick = fe_mk_if(s, fe_mk_op2(s, PRIM_EQ, V(s, wk[1]), fe_mk_num(s, i)), V(s, wk[0]),
                          fe_mk_num(s, 0));
    Term *m = fe_mk_map2(s, fe_mk_lam(s, 2, wk, pick), V(s, b.z), V(s, I));
    rev_dx_back_add(&b, vs, fe_mk_reduce(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), m));
  }
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}

/* save "f" A: the identity on A (the file is written in the forward pass). */
RevRes rev_dx_save(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK) {
  Span s = e->span;
  Term *a;
  RevCont C = rev_dx_seq(st, e->kids + 1, 1, Y, K, nK, &a);
  Term *kids[2] = {rev_dx_copy(st, e->kids[0]), CL(s, a)};
  Term *value = fe_term_prim(s, e->type, PRIM_SAVE, 2, kids);
  RevBack b;
  rev_dx_back_begin(&b, st, s, K, nK, e->type, C);
  rev_dx_back_add(&b, rev_dx_atom_slot(a), V(s, b.z));
  return rev_dx_pair(st, s, value, rev_dx_back_lam(&b), K, nK);
}
