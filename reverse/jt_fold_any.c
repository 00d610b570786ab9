/* jt_fold_any.c: the transpose Jacobians of the folds and scans over any
   types (tuple and array accumulators; the reals-only reduce and foldl of
   the paper are jt_reduce.c and jt_foldl.c), shared with the loops
   (jt_loop.c). See jt_prim.h.

   A left fold s_(i+1) = e[s_i/x, A_i/y] from s_0 = v, i < n, with the
   cotangent z of s_n (and, for scanl, z_i of every s_i), runs backwards
   over its saved states:
     let S0 = shift1R (scanl (x, y. e) v A) in            -- s_0 .. s_(n-1)
     let P  = zip S0 A in
     let Cs = scanr (q, c. z_i +^ ∇_x <c, e>[q/(x, y)]) z_n P' in   -- c_0 .. c_n
     let G  = map2 (q, c. ∇_(y, fv) <c, e>[q/(x, y)]) P (shift1L Cs) in
     ( sums of G's fv components...,  Cs[0] (cot v),  map (t. t.0) G (cot A) )
   where c_i is the cotangent of s_i: c_n = z_n, c_i = z_i + J_x(s_i,
   A_i)^T c_(i+1) (z_i = 0 for a fold: P' = P; for scanl P' = zip P
   (shift1R z)). Work: one vjp of the body per element and direction;
   memory: the n states (loop-invariant values are free variables, not
   states, so they are not copied). scanr is the mirror image (r_i =
   e[A_i/x, r_(i+1)/y], the cotangents flow left to right with a scanl). */
#include "jt_prim.h"
#include "jt_util.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"

static Term *use(const Term *t) { return rev_jt_use(t); }
static Term *var(Span s, Sym *x) { return fe_mk_var(s, x); }

/* A chain of lets being built: wrap(body) nests them, first outermost. */
typedef struct {
  Sym *x[8];
  Term *rhs[8];
  int n;
} Lets;

static Sym *let(Lets *l, Span s, const char *name, Term *rhs) {
  ASSERT(l->n < 8);
  Sym *x = fe_mk_sym(name, rhs->type, s);
  l->x[l->n] = x;
  l->rhs[l->n++] = rhs;
  return x;
}

static Term *wrap(Lets *l, Span s, Term *body) {
  if (!body) return NULL;
  for (int i = l->n - 1; i >= 0; i--) body = fe_mk_let(s, l->x[i], l->rhs[i], body);
  return body;
}

static Term *prim(Span s, Prim p, int n, Term *a, Term *b, Term *c) {
  Term *k[3] = {a, b, c};
  return fe_mk_array_prim(s, p, n, k);
}

/* a[i] for an a known to have an element i (a scan's result) */
static Term *at(Span s, Term *a, Term *i) {
  Term *e = prim(s, PRIM_INDEX, 2, a, i, NULL);
  e->b = true;
  return e;
}

static Term *last(Span s, Term *a) {
  return at(s, use(a), fe_mk_op2(s, PRIM_SUB, fe_mk_length(s, use(a)), fe_mk_num(s, 1)));
}

/* The body of a lambda over q (a pair (u, w), or ((u, w), zi) with zs)
   that binds u and w, and zi. */
static Term *open_q(Span s, Sym *q, Sym *u, Sym *w, Sym *zi, Term *body) {
  Sym *uw[2] = {u, w};
  if (!zi) return fe_mk_lettup(s, 2, uw, var(s, q), body);
  Sym *pr = fe_mk_sym("p", q->type->elems[0], s);
  Sym *pz[2] = {pr, zi};
  return fe_mk_lettup(s, 2, pz, var(s, q), fe_mk_lettup(s, 2, uw, var(s, pr), body));
}

/* The cotangents of a fold (see above) or, with flip, of scanr's mirror
   image, in which the state is the lambda's second parameter.
   lam: the body's lambda (state parameter `si`, element the other one);
   states: the n states fed to the body, as an array term; a: the array;
   want_a: whether A gets a cotangent; zn: the cotangent that starts the
   backward sweep; zs: the extra cotangent of each state (scans), an array
   aligned with `states`, or NULL.
   Out: *cots (the array of the state cotangents, c_0..c_n for a fold),
   *g (the array of vjp results for the element and fv, or NULL), its
   component count in *ng. The lets go to l. */
static void sweep(const RevJtPrim *p, Lets *l, const Term *lam, int si, Term *states, Term *a,
                  bool want_a, Term *zn, Term *zs, Sym **cots, Sym **g, int *ng) {
  Span s = p->j.span;
  int ei = 1 - si;
  const Type *st = lam->syms[si]->type, *et = lam->syms[ei]->type;
  Sym *pairs = let(l, s, "P", rev_checked(prim(s, PRIM_ZIP, 2, states, a, NULL)));
  Term *sweep_over = var(s, pairs);
  if (zs) sweep_over = rev_checked(prim(s, PRIM_ZIP, 2, var(s, pairs), zs, NULL));

  /* the backward (or, flipped, forward) sweep of the state cotangents */
  RevJt jx = p->j;
  jx.nfv = 0;
  Sym *u = fe_mk_sym("s", st, s), *w = fe_mk_sym("a", et, s), *c = fe_mk_sym("c", st, s);
  Sym *params[2];
  params[si] = u;
  params[ei] = w;
  bool want_x[2];
  want_x[si] = true;
  want_x[ei] = false;
  Term *dx = rev_jt_vjp(&jx, lam, params, want_x, var(s, c));
  Sym *zi = zs ? fe_mk_sym("zi", st, s) : NULL;
  if (zi) dx = rev_gadd(s, var(s, zi), dx);
  Sym *q = fe_mk_sym("q", sweep_over->type->elem, s);
  Term *step = open_q(s, q, u, w, zi, dx);
  Term *scan;
  if (si == 0) { /* fold: scanr (q, c. ...) zn P', element first */
    Sym *ps[2] = {q, c};
    scan = fe_mk_scanr(s, fe_mk_lam(s, 2, ps, step), zn, sweep_over);
  } else { /* scanr's mirror: scanl (c, q. ...) zn P', accumulator first */
    Sym *ps[2] = {c, q};
    scan = fe_mk_scanl(s, fe_mk_lam(s, 2, ps, step), zn, sweep_over);
  }
  *cots = let(l, s, "Cs", scan);

  /* the element's and the free variables' cotangents, each state's
     outgoing cotangent paired with its step */
  bool want_g[2];
  want_g[si] = false;
  want_g[ei] = want_a;
  *ng = rev_jt_vjp_count(&p->j, 2, want_g);
  *g = NULL;
  if (*ng == 0) return;
  Sym *u2 = fe_mk_sym("s", st, s), *w2 = fe_mk_sym("a", et, s), *c2 = fe_mk_sym("c", st, s);
  Sym *params2[2];
  params2[si] = u2;
  params2[ei] = w2;
  Term *dg = rev_jt_vjp(&p->j, lam, params2, want_g, var(s, c2));
  Sym *q2 = fe_mk_sym("q", pairs->type->elem, s);
  Term *body = open_q(s, q2, u2, w2, NULL, dg);
  /* step i's outgoing cotangent: c_(i+1) for a fold (shift1L), the
     mirror's c_i (shift1R) */
  Term *outgoing = fe_mk_shift(s, si == 0 ? PRIM_SHIFT1L : PRIM_SHIFT1R, var(s, *cots));
  Sym *ps[2] = {q2, c2};
  *g = let(l, s, "G", rev_checked(fe_mk_map2(s, fe_mk_lam(s, 2, ps, body), var(s, pairs), outgoing)));
}

/* The backward sweep of a fold whose elements get no cotangent (a loop's
   iteration numbers, an inactive array), with free variables: one loop
   from the last step to the first carries the state's cotangent and the
   free variables' cotangents together, each step one vector-Jacobian
   product of the body at its saved state:
     let P = zip S0 A in
     loop (c, f1, ..., fk) = (zn, 0, ..., 0) for k < n do
       let (s, a) = P[n - 1 - k] in
       let g = ∇_(x, fv) <c, e>[s/x, a/y] in
       (g.0, f1 +^ g.1, ..., fk +^ g.k)
   The free variables' cotangents are sums kept in the loop's state, not
   one per step summed afterwards: a step that reads a free array at one
   index adds one value in place (reduce_by_index of the state, which the
   loop owns), so the sweep is linear in the steps and the array, not
   their product. With zs (a scan, whose every state has a cotangent),
   the step's state cotangent is z_i +^ g.0. si: the lambda's state
   parameter; 1 for scanr's mirror image, whose loop runs forward over
   its pairs (r_(i+1), A_i), d_(i+1) = z_(i+1) +^ J_y^T d_i. Sets *cot_v
   and fvc; the lets go to l. */
static void loop_sweep(const RevJtPrim *p, Lets *l, const Term *lam, int si, Term *states, Term *a, Term *zn,
                       Term *zs, Term **cot_v, Term **fvc) {
  Span s = p->j.span;
  const RevJt *j = &p->j;
  const Type *st = lam->syms[si]->type, *et = lam->syms[1 - si]->type, *R = fe_ty_real();
  Sym *pairs = let(l, s, "P", rev_checked(prim(s, PRIM_ZIP, 2, states, a, NULL)));
  Sym *zsv = zs ? let(l, s, "Zs", zs) : NULL;
  int ns = 1 + j->nfv;
  const Type **tys = NEW_ARRAY(const Type *, ns);
  Term **init = NEW_ARRAY(Term *, ns);
  tys[0] = st;
  init[0] = zn;
  for (int k = 0; k < j->nfv; k++) {
    tys[k + 1] = j->fv[k]->type;
    init[k + 1] = fe_mk_zero_like(s, var(s, j->fv[k]));
  }
  const Type *qt = ns == 1 ? st : fe_ty_tuple(ns, tys);
  Sym *q = fe_mk_sym("acc", qt, s), *k = fe_mk_sym("k", R, s);
  Sym **parts = NEW_ARRAY(Sym *, ns);
  parts[0] = fe_mk_sym("c", st, s);
  for (int m = 0; m < j->nfv; m++) parts[m + 1] = fe_mk_sym(j->fv[m]->name, tys[m + 1], s);
  /* the step's saved state and element */
  Sym *u = fe_mk_sym("s", st, s), *w = fe_mk_sym("a", et, s), *i = fe_mk_sym("i", R, s);
  Term *last = fe_mk_op2(s, PRIM_SUB, fe_mk_length(s, var(s, pairs)), fe_mk_num(s, 1));
  Term *pi = at(s, var(s, pairs), var(s, i));
  Sym *params[2];
  bool want[2];
  params[si] = u;
  params[1 - si] = w;
  want[si] = true;
  want[1 - si] = false;
  Term *g = rev_jt_vjp(j, lam, params, want, var(s, parts[0]));
  Sym *gs = fe_mk_sym("g", g->type, s);
  Term **next = NEW_ARRAY(Term *, ns);
  for (int m = 0; m < ns; m++) {
    Term *gm = ns == 1 ? var(s, gs) : fe_mk_proj(s, var(s, gs), m);
    /* a scan's state i has a cotangent of its own, z_i */
    if (m == 0 && zsv) gm = rev_gadd(s, at(s, var(s, zsv), var(s, i)), gm);
    next[m] = m == 0 ? gm : rev_gadd(s, var(s, parts[m]), gm);
  }
  Term *body = ns == 1 ? next[0] : fe_mk_tuple(s, ns, next);
  body = fe_mk_let(s, gs, g, body);
  Sym *uw[2] = {u, w};
  body = fe_mk_lettup(s, 2, uw, pi, body);
  /* a fold's sweep runs from the last step back, scanr's mirror forward */
  body = fe_mk_let(s, i, si == 0 ? fe_mk_op2(s, PRIM_SUB, last, var(s, k)) : var(s, k), body);
  if (ns > 1) body = fe_mk_lettup(s, ns, parts, var(s, q), body);
  else body = fe_mk_let(s, parts[0], var(s, q), body);
  Sym *lp[2] = {q, k};
  Term *lk[3] = {fe_mk_lam(s, 2, lp, body), ns == 1 ? init[0] : fe_mk_tuple(s, ns, init),
                 fe_mk_length(s, var(s, pairs))};
  Sym *res = let(l, s, "Q", fe_mk_array_prim(s, PRIM_LOOP_FOR, 3, lk));
  *cot_v = ns == 1 ? var(s, res) : fe_mk_proj(s, var(s, res), 0);
  for (int m = 0; m < j->nfv; m++) fvc[m] = fe_mk_proj(s, var(s, res), m + 1);
}

/* The fold of lam (state first) from v over a (which gets a cotangent
   when want_a), with the cotangent z of the last state and, for scanl,
   zs of each of the first n states. Sets *cot_v, *cot_a (NULL: none) and
   fvc; the lets go to l. */
static void fold_cots(const RevJtPrim *p, Lets *l, const Term *lam, Term *v, Term *a, bool want_a,
                      Term *zn, Term *zs, Term **cot_v, Term **cot_a, Term **fvc) {
  Span s = p->j.span;
  Term *states = fe_mk_shift(s, PRIM_SHIFT1R, rev_jt_replayed(fe_mk_scanl(s, fe_copy(lam), use(v), use(a))));
  if (!want_a && p->j.nfv > 0) {
    loop_sweep(p, l, lam, 0, states, use(a), zn, zs, cot_v, fvc);
    *cot_a = NULL;
    return;
  }
  Sym *cots, *g;
  int ng;
  sweep(p, l, lam, 0, states, use(a), want_a, zn, zs, &cots, &g, &ng);
  *cot_v = at(s, var(s, cots), fe_mk_num(s, 0));
  *cot_a = want_a && g ? rev_jt_column(s, g, ng, 0) : NULL;
  for (int k = 0; k < p->j.nfv; k++) fvc[k] = NULL;
  if (g) rev_jt_prim_fv_sums(p, g, ng, want_a ? 1 : 0, fvc);
  else
    for (int k = 0; k < p->j.nfv; k++) fvc[k] = fe_mk_zero_like(s, var(s, p->j.fv[k]));
}

/* Whether lam is (u, v. map2 (+) u v) (either order): the sum of arrays,
   whose reduce passes its cotangent unchanged to every element. */
static bool array_sum(const Term *lam) {
  if (lam->nsyms != 2) return false;
  const Term *b = lam->kids[0];
  if (b->kind != T_PRIM || b->prim != PRIM_MAP2 || !fe_is_oplam_either(b->kids[0], PRIM_ADD)) return false;
  const Term *x = b->kids[1], *y = b->kids[2];
  if (x->kind != T_VAR || y->kind != T_VAR) return false;
  return (x->sym == lam->syms[0] && y->sym == lam->syms[1]) ||
         (x->sym == lam->syms[1] && y->sym == lam->syms[0]);
}

Term *rev_jt_fold_any(const RevJtPrim *p) {
  Span s = p->j.span;
  if (p->t->prim == PRIM_REDUCE && p->j.nfv == 0 && array_sum(p->t->kids[0])) {
    /* reduce (+^) v A: cot v = z, cot A_i = z */
    Term **fvc = NEW_ARRAY(Term *, 1);
    Sym *e = fe_mk_sym("e", p->ops[1]->type->elem, s);
    Term *opc[2] = {use(p->z), fe_mk_map(s, fe_mk_lam(s, 1, &e, use(p->z)), use(p->ops[1]))};
    return rev_jt_prim_result(p, fvc, opc);
  }
  Term *minmax = rev_jt_reduce_minmax(p);
  if (minmax) return minmax;
  Lets l = {0};
  Term **fvc = NEW_ARRAY(Term *, p->j.nfv + 1);
  Term *opc[2] = {NULL, NULL};
  fold_cots(p, &l, p->t->kids[0], p->ops[0], p->ops[1], p->active[1], use(p->z), NULL, &opc[0], &opc[1], fvc);
  return wrap(&l, s, rev_jt_prim_result(p, fvc, opc));
}

Term *rev_jt_scanl(const RevJtPrim *p) {
  Span s = p->j.span;
  Lets l = {0};
  Term **fvc = NEW_ARRAY(Term *, p->j.nfv + 1);
  Term *opc[2] = {NULL, NULL};
  Term *zs = fe_mk_shift(s, PRIM_SHIFT1R, use(p->z));
  fold_cots(p, &l, p->t->kids[0], p->ops[0], p->ops[1], p->active[1], last(s, p->z), zs, &opc[0], &opc[1],
            fvc);
  return wrap(&l, s, rev_jt_prim_result(p, fvc, opc));
}

/* scanr (x, y. e) v A: r_n = v, r_i = e[A_i/x, r_(i+1)/y], result
   r_0 .. r_n; d_0 = z_0 and d_(i+1) = z_(i+1) + J_y(A_i, r_(i+1))^T d_i
   (a scanl), cot v = d_n, cot A_i = J_x(A_i, r_(i+1))^T d_i. */
Term *rev_jt_scanr(const RevJtPrim *p) {
  Span s = p->j.span;
  Lets l = {0};
  const Term *lam = p->t->kids[0];
  Term *v = p->ops[0], *a = p->ops[1];
  Term *states = fe_mk_shift(s, PRIM_SHIFT1L, rev_jt_replayed(fe_mk_scanr(s, fe_copy(lam), use(v), use(a))));
  Term *z0 = at(s, use(p->z), fe_mk_num(s, 0));
  Term *zs = fe_mk_shift(s, PRIM_SHIFT1L, use(p->z));
  Term **fvc = NEW_ARRAY(Term *, p->j.nfv + 1);
  if (!p->active[1] && p->j.nfv > 0) { /* the mirror of the fold's loop, forward */
    Term *opc[2] = {NULL, NULL};
    loop_sweep(p, &l, lam, 1, states, use(a), z0, zs, &opc[0], fvc);
    return wrap(&l, s, rev_jt_prim_result(p, fvc, opc));
  }
  /* sweep pairs (state, element) by zip states A; the mirror wants
     (A_i, r_(i+1)), so the lambda's parameter 1 is the state */
  Sym *cots, *g;
  int ng;
  sweep(p, &l, lam, 1, states, use(a), p->active[1], z0, zs, &cots, &g, &ng);
  Term *opc[2] = {last(s, fe_mk_var(s, cots)), NULL};
  if (g && p->active[1]) opc[1] = rev_jt_column(s, g, ng, 0);
  if (g) rev_jt_prim_fv_sums(p, g, ng, p->active[1] ? 1 : 0, fvc);
  else
    for (int k = 0; k < p->j.nfv; k++) fvc[k] = fe_mk_zero_like(s, var(s, p->j.fv[k]));
  return wrap(&l, s, rev_jt_prim_result(p, fvc, opc));
}

Term *rev_jt_fold_loop(const RevJtPrim *p, const Term *lam, Term *idx) {
  Span s = p->j.span;
  Lets l = {0};
  Sym *ix = let(&l, s, "I", idx);
  Term **fvc = NEW_ARRAY(Term *, p->j.nfv + 1);
  Term **opc = NEW_ARRAY(Term *, p->nops);
  Term *cot_a;
  fold_cots(p, &l, lam, p->ops[0], var(s, ix), false, use(p->z), NULL, &opc[0], &cot_a, fvc);
  return wrap(&l, s, rev_jt_prim_result(p, fvc, opc));
}
