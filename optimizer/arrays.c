/* arrays.c: figure 12's array rules and the array rules the paper's
   examples need.

   "Const(c, B)" is an array whose elements are all c (a literal or a
   variable bound outside): `map (x. c) B` or `replicate n c`; OnesLike and
   ZerosLike are Const(1, _) and Const(0, _). "A ~ B": the lengths are known
   equal (rw.h). "safe": evaluating it cannot raise (rw.h). Rules:
     map (x. x) A                      -> A
     map (x. e) Const(c, B)            -> map (x. e[c/x]) Const(c, B)
     map2 (x, y. e) Const(c, B) C      -> map2 (x, y. e[c/x]) ... (either side)
     map2 (x, y. e) A B, x not in e, A ~ B, A safe -> map (y. e) B (either side)
     map3 (x, y, z. e) A B C checked, x not in e, A safe -> map2 (y, z. e) B C (any side)
     map2 (x, y. e) A A -> map (x. e[x/y]) A,  map3 (x, y, z. e) A A C -> map2 (x, z. e[x/y]) A C
       (A a variable, in any places; map3 checked or A ~ C)
   so that, with optimizer/algebra.c, map2 (*) A OnesLike(B) -> A,
   map2 (+) A ZerosLike(B) -> A, map2 (a, b. b) A B -> B (A ~ B),
   map2 (*) Const(c, A) ZerosLike(B) -> a constant for a finite literal c
   (otherwise kept: 0 * inf is nan);
     map2 (x, y. y OP x) A B, OP + or *, A ~ B -> map2 (y, x. y OP x) B A
     map (x. c) A, x not in c, A = map f B / map2 f B C / map3 f B C D safe -> map (x. c) B
     map (x. c) A, x not in c, A = loop y = B for i < n do e, safe, e as long
       as y -> map (x. c) B
     reduce (*) 1 Const(1, A) -> 1,  reduce (+) 0 Const(0 or -0, A) -> 0
     reduce (max|min) c Const(c, A) -> c        (A safe)
     scanl/scanr (*) 1 Const(1, A) -> replicate (length A + 1) 1, (+) 0 alike
     foldl/scanl/scanr f v (zip A B) checked, f ignoring its element, B a
       variable, A safe -> the same over B
     shift1L/shift1R (replicate (length X + k) v) -> replicate (length X + k-1) v (k >= 1)
     shift1L/shift1R (replicate k v) -> replicate (max(k-1, 0)) v  (k a count literal)
     shift1L/shift1R (map f A) -> map f (shift1L/shift1R A)   (f's body safe)
     replicate (length X) c, X a variable -> map (x. c) X
     length (map f A) -> length A,  length (map2 f A B) -> length A (safe),
     length (scanl/scanr f v A) -> length A + 1 (safe), with A a variable
     length (zip A B) checked and safe -> length B (or A), a variable
     length (iota n) -> n, iota safe, n a variable or a literal
     map (t. t.k) W, W = map/map2 (ps. (e1, ..., en)) As -> map/map2 (ps. ek) As
     (map/map2/map3 (xs. e) As)[i]  -> let xs = As[i] in e   (one element, not all;
       a let-bound map read elsewhere too only when its lambda is small
       and reads no other map: recomputing goes one map deep; not a map
       whose element calls an array builtin, read inside a function)
     [e0, ..., en][k], k a count literal < n+1, the others safe -> ek
     reduce (g, h. map2 (+) g h) ZerosLike(X) (map2 (r, c. map (a. c * a) r) M V)
       -> if length M == 0 then ZerosLike(X) else
          let t = transpose M in map (col. reduce (+) 0 (map2 (*) col V)) t
       (the sum of scaled rows is a transposed matrix-vector product, which
       the plan gives to BLAS; a gradient of matvec has this shape); with M
       let-bound to transpose X, X a variable:
       -> if length X == 0 || length X[0] == 0 then ZerosLike(X) else
          map (col. reduce (+) 0 (map2 (*) col V)) X
       (no transposition: where M has rows, transpose M is X)
     reduce f z (lets in if c then A else B), c small and safe
       -> lets in if c then reduce f z A else reduce f z B
     mapK (ps. lets in if c then e1 else e2) As, c small, safe, free of ps and
       the lets, As variables
       -> if c then mapK (ps. lets in e1) As else mapK (ps. lets in e2) As
     reduce_by_index (reduce_by_index D (+) 0 I V1) (+) 0 I V2, I a variable
     (or a safe term written twice)
       -> reduce_by_index D (+) 0 I (map2 (+) V1 V2)   (one scatter, not two)
     reduce_by_index D (+) 0 I (map (x. 0) B), safe -> D
     map2 (+) [a1, ..., an] [b1, ..., bn] -> [a1 + b1, ..., an + bn]
     map/map2 whose tuple parameter t is used only as t.k, on such a W ->
       the same over map/map2 (ps. ek) As, with t.k replaced by a scalar
     unzip W, on such a W -> (map/map2 (ps. e1) As, map/map2 (ps. e2) As)
   The last three fire when ek is a variable or a literal (no work is
   duplicated), W is used once (inline, or a variable used once in the same
   lambda body), or W's elements are tuples of reals and its body has at
   most NARROW_BODY nodes (each component's map is then a scalar kernel,
   and sibling maps share their lets in one), and W's arrays are
   variables. */
#include "passes.h"

#include <math.h>

#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"
#include "histogram.h"
#include "index_map.h"
#include "row_fold.h"
#include "outer_split.h"
#include "pe_util.h"
#include "rw.h"

/* The largest map body returning a tuple of reals that is split into one
   map per component read (project_array). Splitting copies the body once
   per component (linear: the component maps read W's arrays, never W's
   producers), and sibling maps over the same arrays run as one kernel
   that computes the shared lets once; a body left whole runs element by
   element on the tree evaluator, boxed, about 100x slower (the gradient
   of the bench's lets16, some 500 nodes, was at 400). */
#define NARROW_BODY 2000

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }


/* Whether t mentions the lambda parameter x: never when x is bound in
   the input term and occurs nowhere in it (rewriting does not add an
   occurrence), which saves the walk (a map nested n deep would otherwise
   be walked n times). */
static bool mentions(OptRw *c, const Term *t, const Sym *x) {
  return !opt_rw_unused(c, x) && opt_mentions(t, x);
}

/* A count cheap to compute again: a literal, a variable, `length x`, or
   a sum, difference or product of such (at most a few nodes). */
static bool cheap_count(const Term *t, int depth) {
  if (t->kind == T_NUM || t->kind == T_VAR) return true;
  if (is_prim(t, PRIM_LENGTH)) return t->kids[0]->kind == T_VAR;
  if (depth < 2 && (is_prim(t, PRIM_ADD) || is_prim(t, PRIM_SUB) || is_prim(t, PRIM_MUL)))
    return cheap_count(t->kids[0], depth + 1) && cheap_count(t->kids[1], depth + 1);
  return false;
}

/* An array cheap to compute again: a variable, or iota of a cheap count
   (`iota (length x)`, `iota (2 * p)`). */
static bool cheap_array(const Term *t) {
  return t->kind == T_VAR || (is_prim(t, PRIM_IOTA) && cheap_count(t->kids[0], 0));
}

/* The lambda (xs. body) with the parameters of lam, body replaced. */
static Term *relam(const Term *lam, Term *body) { return fe_mk_lam(lam->span, lam->nsyms, lam->syms, body); }

/* The lambda lam with parameter i replaced by the constant c, its body
   simplified by the algebra at once (so that fusion does not see 0 + y). */
static Term *subst_param(const Term *lam, int i, Term *c) {
  Sym *x = lam->syms[i];
  Term *body = opt_algebra(fe_subst(lam->kids[0], 1, &x, &c));
  return relam(lam, body);
}

/* ---- projections of tuple parameters ---- */

/* True when every occurrence of x in t is the kid of a projection .k (*k
   set by the first, -1 on entry). */
static bool proj_only(const Term *t, const Sym *x, int *k) {
  fe_stack_check(t->span);
  if (t->kind == T_VAR) return t->sym != x;
  if (t->kind == T_PROJ && t->kids[0]->kind == T_VAR && t->kids[0]->sym == x) {
    if (*k < 0) *k = t->index;
    return *k == t->index;
  }
  for (int i = 0; i < t->nkids; i++)
    if (!proj_only(t->kids[i], x, k)) return false;
  return true;
}

/* t with every x.k replaced by y. */
static Term *replace_proj(const Term *t, const Sym *x, int k, Sym *y) {
  fe_stack_check(t->span);
  if (t->kind == T_PROJ && t->kids[0]->kind == T_VAR && t->kids[0]->sym == x && t->index == k)
    return fe_mk_var(t->span, y);
  if (t->nkids == 0) return (Term *)t;
  OPT_KIDS(kids, t->nkids);
  for (int i = 0; i < t->nkids; i++) kids[i] = replace_proj(t->kids[i], x, k, y);
  return opt_with_kids(t, kids);
}

/* The tuple at the end of the let chain t, or NULL. */
static const Term *chain_tail(const Term *t) {
  while (t->kind == T_LET || t->kind == T_LETTUP) t = t->kids[1];
  return t->kind == T_TUPLE ? t : NULL;
}


/* Whether t is a tuple of reals. */
static bool reals_tuple(const Type *t) {
  if (t->kind != TY_TUPLE) return false;
  for (int i = 0; i < t->n; i++)
    if (t->elems[i]->kind != TY_REAL) return false;
  return true;
}

/* When the array w is map/map2 (ps. lets in (e1, ..., en)) As under the
   conditions of the header, the array map/map2 (ps. lets in ek) As; else
   NULL. A short let chain (a vector-Jacobian product's gathers and
   products) may be recomputed for each component read. */
static Term *project_array(OptRw *c, Term *w, int k) {
  Term *r = opt_rw_resolve(c, w);
  if (!(is_prim(r, PRIM_MAP) || is_prim(r, PRIM_MAP2) || is_prim(r, PRIM_MAP3))) return NULL;
  Term *lam = r->kids[0];
  const Term *tail = chain_tail(lam->kids[0]);
  if (!tail) return NULL;
  bool inline_w = w->kind != T_VAR;
  bool once = inline_w || (opt_rw_uses(c, w->sym) == 1 && opt_rw_same_depth(c, w->sym));
  bool cheap = tail == lam->kids[0] ? opt_is_atom(tail->kids[k]) : fe_term_size_upto(lam->kids[0], 33) <= 32;
  /* a tuple of reals: each component's map a scalar kernel (sibling maps
     over the same one or two arrays run as one kernel, their shared lets
     computed once), instead of the whole map on the tree evaluator */
  if (!cheap && reals_tuple(tail->type) && fe_term_size_upto(lam->kids[0], NARROW_BODY) <= NARROW_BODY) cheap = true;
  if (!once && !cheap) return NULL;
  for (int i = 1; i < r->nkids; i++)
    if (!inline_w && !cheap_array(r->kids[i])) return NULL;
  Term *nl = fe_copy(lam);
  nl = relam(nl, opt_with_tail(nl->kids[0], chain_tail(nl->kids[0])->kids[k]));
  Term **as = NEW_ARRAY(Term *, r->nkids);
  for (int i = 1; i < r->nkids; i++) as[i] = inline_w ? r->kids[i] : fe_copy(r->kids[i]);
  if (r->prim == PRIM_MAP) return fe_mk_map(r->span, nl, as[1]);
  if (r->prim == PRIM_MAP3) {
    Term *mk[4] = {nl, as[1], as[2], as[3]};
    Term *m3 = fe_mk_array_prim(r->span, PRIM_MAP3, 4, mk);
    m3->b = r->b;
    return m3;
  }
  return opt_checked_as(fe_mk_map2(r->span, nl, as[1], as[2]), r);
}

/* map/map2 t whose parameter i is a tuple used only as .k, over a
   tuple-building array: the narrowed map/map2, or t. */
static Term *narrow(OptRw *c, Term *t, int i) {
  Term *lam = t->kids[0];
  Sym *x = lam->syms[i];
  if (x->type->kind != TY_TUPLE) return t;
  int k = -1;
  if (!proj_only(lam->kids[0], x, &k) || k < 0) return t;
  Term *arr = project_array(c, t->kids[1 + i], k);
  if (!arr) return t;
  Sym *y = fe_mk_sym("t", x->type->elems[k], x->span);
  Sym **ps = NEW_ARRAY(Sym *, lam->nsyms);
  for (int j = 0; j < lam->nsyms; j++) ps[j] = j == i ? y : lam->syms[j];
  Term *nl = fe_mk_lam(lam->span, lam->nsyms, ps, replace_proj(lam->kids[0], x, k, y));
  if (t->prim == PRIM_MAP) return fe_mk_map(t->span, nl, arr);
  return opt_checked_as(i == 0 ? fe_mk_map2(t->span, nl, arr, t->kids[2]) : fe_mk_map2(t->span, nl, t->kids[1], arr),
                        t);
}

/* ---- the rules ---- */

static Term *rule_map(OptRw *c, Term *t) {
  Term *lam = t->kids[0], *a = t->kids[1];
  Sym *x = lam->syms[0];
  Term *body = lam->kids[0];
  if (body->kind == T_VAR && body->sym == x) return a;
  if (mentions(c, body, x)) {
    Term *ce = opt_rw_const_elem(c, a);
    if (ce) return fe_mk_map(t->span, subst_param(lam, 0, ce), a);
    return narrow(c, t, 0);
  }
  /* a constant body needs only the length of a */
  Term *r = opt_rw_resolve(c, a);
  if ((is_prim(r, PRIM_MAP) || is_prim(r, PRIM_MAP2) || is_prim(r, PRIM_MAP3)) && r->kids[1]->kind == T_VAR &&
      opt_rw_safe(c, r)) {
    Sym *y = fe_mk_sym(x->name, r->kids[1]->type->elem, x->span);
    return fe_mk_map(t->span, fe_mk_lam(lam->span, 1, &y, body), r->kids[1]);
  }
  /* a for loop whose body keeps its state's length: the initial value's */
  if (is_prim(r, PRIM_LOOP_FOR) && r->kids[1]->kind == T_VAR && opt_rw_safe(c, r) &&
      opt_rw_same_length(c, r, r->kids[1])) {
    Sym *y = fe_mk_sym(x->name, r->kids[1]->type->elem, x->span);
    return fe_mk_map(t->span, fe_mk_lam(lam->span, 1, &y, body), fe_copy(r->kids[1]));
  }
  return t;
}

static bool is_plus_rbi(const Term *t) {
  if (!is_prim(t, PRIM_REDUCE_BY_INDEX) || !opt_is_num(t->kids[2], 0)) return false;
  return fe_is_oplam_either(t->kids[0], PRIM_ADD) && t->type->elem->kind == TY_REAL;
}

/* What the variable t stands for when this is its one use and its let can
   then die (its right-hand side cannot raise: a replay, reverse/); t
   itself otherwise. */
static Term *through(OptRw *c, Term *t) {
  if (t->kind != T_VAR || opt_rw_uses(c, t->sym) != 1 || !opt_rw_same_depth(c, t->sym)) return t;
  Term *r = opt_rw_rhs(c, t->sym);
  return r && opt_rw_safe(c, r) ? r : t;
}

/* d with the zero array at the bottom of its chain of reduce_by_index
   (+) 0 replaced by a: NULL when d is not such a chain over an all-zero
   array of a's length (same: known to be). */
static Term *rebase_rbi(OptRw *c, Term *d, Term *a, bool same) {
  d = through(c, d);
  if (!is_plus_rbi(d)) {
    Term *z = opt_rw_const_elem(c, d);
    if (!z || !(opt_is_num(z, 0) || opt_is_num(z, -0.0)) || !opt_rw_safe(c, d) ||
        !(same || opt_rw_same_length(c, d, a)))
      return NULL;
    return a;
  }
  Term *base = rebase_rbi(c, d->kids[1], a, same);
  if (!base) return NULL;
  /* copies: d may be a let's right-hand side, still bound until it dies */
  Term *k[5] = {fe_copy(d->kids[0]), base, fe_copy(d->kids[2]), fe_copy(d->kids[3]), fe_copy(d->kids[4])};
  return fe_mk_array_prim(d->span, PRIM_REDUCE_BY_INDEX, 5, k);
}

/* map2 (+) A (reduce_by_index Z (+) 0 I V), Z all zeros of A's length,
   either side -> reduce_by_index A (+) 0 I V (a chain of them too): a
   sparse cotangent added to a sum, in place when the sum is owned (a
   loop's state in the reverse sweep). */
static Term *add_sparse(OptRw *c, Term *t) {
  if (!fe_is_oplam_either(t->kids[0], PRIM_ADD) || t->type->elem->kind != TY_REAL) return NULL;
  for (int i = 0; i < 2; i++) {
    Term *a = t->kids[1 + i], *d = through(c, t->kids[2 - i]);
    if (!is_plus_rbi(d)) continue;
    Term *r = rebase_rbi(c, d, a, t->b); /* t->b: a's length is d's */
    if (r) return r;
  }
  return NULL;
}

/* The lambda lam (over arrays, its parameters i and j over one array)
   with one parameter for both, fresh, in place i, dropping j: a rewrite
   must not add occurrences of an input's variable, which the walker
   knows as unused when the input never reads it (rw.h). */
static Term *merge_params(const Term *lam, int i, int j) {
  Sym *m = fe_mk_sym(lam->syms[i]->name, lam->syms[i]->type, lam->span);
  Term *v = fe_mk_var(lam->span, m);
  Sym *from[2] = {lam->syms[i], lam->syms[j]};
  Term *to[2] = {v, v};
  Term *body = fe_subst(lam->kids[0], 2, from, to);
  Sym **ps = NEW_ARRAY(Sym *, lam->nsyms - 1);
  for (int k = 0, n = 0; k < lam->nsyms; k++)
    if (k != j) ps[n++] = k == i ? m : lam->syms[k];
  return fe_mk_lam(lam->span, lam->nsyms - 1, ps, body);
}

static Term *rule_map2(OptRw *c, Term *t) {
  Term *sparse = add_sparse(c, t);
  if (sparse) return sparse;
  Term *lam = t->kids[0];
  /* map2 (+) [a1, ...] [b1, ...] -> [a1 + b1, ...] (a merged scatter's
     values of one element each) */
  if (fe_is_oplam_either(lam, PRIM_ADD) && t->kids[1]->kind == T_ARRAY && t->kids[2]->kind == T_ARRAY &&
      t->kids[1]->nkids == t->kids[2]->nkids && t->kids[1]->nkids <= 8 && t->type->elem->kind == TY_REAL) {
    int n = t->kids[1]->nkids;
    Term **items = NEW_ARRAY(Term *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) items[i] = fe_mk_add(t->span, t->kids[1]->kids[i], t->kids[2]->kids[i]);
    return fe_term_kids(t->span, T_ARRAY, t->type, n, items);
  }
  Term *body = lam->kids[0];
  if (t->kids[1]->kind == T_VAR && t->kids[2]->kind == T_VAR && t->kids[1]->sym == t->kids[2]->sym)
    return fe_mk_map(t->span, merge_params(lam, 0, 1), t->kids[1]);
  for (int i = 0; i < 2; i++) {
    Sym *x = lam->syms[i];
    if (!mentions(c, body, x)) continue;
    Term *ce = opt_rw_const_elem(c, t->kids[1 + i]);
    if (ce) return opt_checked_as(fe_mk_map2(t->span, subst_param(lam, i, ce), t->kids[1], t->kids[2]), t);
  }
  for (int i = 0; i < 2; i++) {
    Sym *x = lam->syms[i], *y = lam->syms[1 - i];
    Term *drop = t->kids[1 + i], *keep = t->kids[2 - i];
    if (!mentions(c, body, x) && opt_rw_safe(c, drop) && (t->b || opt_rw_same_length(c, drop, keep)))
      return fe_mk_map(t->span, fe_mk_lam(lam->span, 1, &y, body), keep);
  }
  /* (x, y. y OP x) A B -> (y, x. y OP x) B A for OP : R x R -> R that
     commutes bit for bit (LAW_COMM_BITS in prims.def: + *) */
  if (body->kind == T_PRIM && fe_prims[body->prim].sig == SIG_RR_R &&
      (fe_prims[body->prim].laws & LAW_COMM_BITS) &&
      body->kids[0]->kind == T_VAR && body->kids[0]->sym == lam->syms[1] &&
      body->kids[1]->kind == T_VAR && body->kids[1]->sym == lam->syms[0] &&
      opt_rw_same_length(c, t->kids[1], t->kids[2])) {
    Sym *ps[2] = {lam->syms[1], lam->syms[0]};
    return opt_checked_as(fe_mk_map2(t->span, fe_mk_lam(lam->span, 2, ps, body), t->kids[2], t->kids[1]), t);
  }
  Term *r = narrow(c, t, 0);
  return r != t ? r : narrow(c, t, 1);
}

/* map3 (x, y, z. e) A B C checked by construction (term.h), with e not
   reading one of its parameters: map2 over the other two arrays (their
   lengths are equal, the dropped array is safe to leave unevaluated). */
static Term *rule_map3(OptRw *c, Term *t) {
  Term *lam = t->kids[0];
  Term *body = lam->kids[0];
  for (int i = 0; i < 3; i++) /* an array read twice: map2 over the other two */
    for (int j = i + 1; j < 3; j++) {
      Term *a = t->kids[1 + i], *b = t->kids[1 + j];
      if (a->kind != T_VAR || b->kind != T_VAR || a->sym != b->sym) continue;
      int o = 3 - i - j;
      /* its check may fail: the error would name map2, not map3 */
      if (!t->b && !opt_rw_same_length(c, a, t->kids[1 + o])) continue;
      Term *lam2 = merge_params(lam, i, j); /* parameters in their order */
      Term *r = i < o ? fe_mk_map2(t->span, lam2, t->kids[1 + i], t->kids[1 + o])
                      : fe_mk_map2(t->span, lam2, t->kids[1 + o], t->kids[1 + i]);
      r->b = t->b;
      return r;
    }
  if (!t->b) return t;
  for (int i = 0; i < 3; i++) {
    if (mentions(c, body, lam->syms[i]) || !opt_rw_safe(c, t->kids[1 + i])) continue;
    Sym *ps[2];
    Term *as[2];
    for (int j = 0, k = 0; j < 3; j++)
      if (j != i) {
        ps[k] = lam->syms[j];
        as[k++] = t->kids[1 + j];
      }
    Term *r = fe_mk_map2(t->span, fe_mk_lam(lam->span, 2, ps, body), as[0], as[1]);
    r->b = true;
    return r;
  }
  return t;
}

/* reduce OP v Const(c, A) -> v when folding c into v gives v again. */
static bool is_var(const Term *t, const Sym *x) { return t->kind == T_VAR && t->sym == x; }

/* Whether lam is (g, h. map2 (+) g h) over [R]. */
static bool is_vector_plus(const Term *lam) {
  const Term *b = lam->kids[0];
  if (lam->nsyms != 2 || !is_prim(b, PRIM_MAP2) || !opt_is_oplam(b->kids[0], PRIM_ADD)) return false;
  if (b->type->elem->kind != TY_REAL) return false;
  return (is_var(b->kids[1], lam->syms[0]) && is_var(b->kids[2], lam->syms[1])) ||
         (is_var(b->kids[1], lam->syms[1]) && is_var(b->kids[2], lam->syms[0]));
}

/* The transposed matrix-vector product of the header, or NULL. */
static Term *vecmat(OptRw *c, Term *t) {
  Term *z = t->kids[1], *a = opt_rw_resolve(c, t->kids[2]); /* a let in the same lambda too */
  if (!is_vector_plus(t->kids[0]) || !is_prim(a, PRIM_MAP2)) return NULL;
  Term *ce = opt_rw_const_elem(c, z);
  if (!ce || !opt_is_num(ce, 0)) return NULL;
  const Term *lam = a->kids[0], *b = lam->kids[0];
  if (!is_prim(b, PRIM_MAP) || b->kids[1]->kind != T_VAR) return NULL;
  int j = b->kids[1]->sym == lam->syms[0] ? 0 : b->kids[1]->sym == lam->syms[1] ? 1 : -1;
  if (j < 0 || lam->syms[j]->type->kind != TY_ARRAY) return NULL;
  const Term *il = b->kids[0], *m = il->kids[0]; /* (e. c * e) */
  if (!is_prim(m, PRIM_MUL)) return NULL;
  Sym *e = il->syms[0], *s = lam->syms[1 - j];
  if (!((is_var(m->kids[0], e) && is_var(m->kids[1], s)) || (is_var(m->kids[0], s) && is_var(m->kids[1], e))))
    return NULL;
  Term *mat = a->kids[1 + j], *vec = a->kids[2 - j];
  if (mat->kind != T_VAR || vec->kind != T_VAR || !a->b) return NULL;
  Span sp = t->span;
  Sym *col = fe_mk_sym("col", mat->type->elem, sp);
  Term *prods = fe_mk_map2(sp, fe_mk_oplam(sp, PRIM_MUL), fe_mk_var(sp, col), fe_copy(vec));
  prods->b = true; /* the columns have the rows' count, the length of vec (a->b) */
  Term *dot = fe_mk_reduce(sp, fe_mk_oplam(sp, PRIM_ADD), fe_mk_num(sp, 0), prods);
  Term *dots = fe_mk_lam(sp, 1, &col, dot);
  Term *mr = opt_rw_resolve(c, mat);
  if (is_prim(mr, PRIM_TRANSPOSE) && mr->kids[0]->kind == T_VAR) {
    /* M = transpose X (a gradient's matrix read transposed): where M has
       rows, X is rectangular (M's let raised otherwise) with rows of
       M's length, and transpose M is X itself: no transposition at all */
    Term *x = mr->kids[0];
    Term *ix[2] = {fe_copy(x), fe_mk_num(sp, 0)};
    Term *row0 = fe_mk_array_prim(sp, PRIM_INDEX, 2, ix);
    row0->b = true; /* read only where X has rows */
    Term *none = fe_mk_op2(sp, PRIM_EQ, fe_mk_length(sp, fe_copy(x)), fe_mk_num(sp, 0));
    Term *empty = fe_mk_op2(sp, PRIM_OR, none, fe_mk_op2(sp, PRIM_EQ, fe_mk_length(sp, row0), fe_mk_num(sp, 0)));
    return fe_mk_if(sp, empty, z, fe_mk_map(sp, dots, fe_copy(x)));
  }
  Term *tr = fe_mk_array_prim(sp, PRIM_TRANSPOSE, 1, &mat);
  /* checked by construction (a->b): the rows summed are the rows the
     primal paired elementwise with one vector (a cotangent of that vector
     is their sum), so they have one length where the primal ran */
  tr->b = true;
  Sym *tt = fe_mk_sym("t", tr->type, sp);
  Term *prod = fe_mk_let(sp, tt, tr, fe_mk_map(sp, dots, fe_mk_var(sp, tt)));
  Term *empty = fe_mk_op2(sp, PRIM_EQ, fe_mk_length(sp, fe_copy(mat)), fe_mk_num(sp, 0));
  return fe_mk_if(sp, empty, z, prod);
}

/* Whether lam is (g, h. map2 (x, y. map2 (+) x y) g h) over [[R]]. */
static bool is_matrix_plus(const Term *lam) {
  const Term *b = lam->kids[0];
  if (lam->nsyms != 2 || !is_prim(b, PRIM_MAP2) || b->type->elem->kind != TY_ARRAY) return false;
  if (!is_vector_plus(b->kids[0])) return false;
  return (is_var(b->kids[1], lam->syms[0]) && is_var(b->kids[2], lam->syms[1])) ||
         (is_var(b->kids[1], lam->syms[1]) && is_var(b->kids[2], lam->syms[0]));
}


/* The tail of the let chain t. */
static Term *tail_of(Term *t) {
  while (t->kind == T_LET || t->kind == T_LETTUP) t = t->kids[1];
  return t;
}


/* An outer product u ⊗ v written mapK (ps. lets in map (b. y * b) V) As
   (y a scalar of the lets, V free of ps and of the lets): sets *u to
   mapK (ps. lets in y) As and *v to V. */
static bool outer_of(Term *t, Term **u, Term **v) {
  if (!(is_prim(t, PRIM_MAP) || is_prim(t, PRIM_MAP2) || is_prim(t, PRIM_MAP3))) return false;
  Term *lam = t->kids[0], *chain = lam->kids[0], *m = tail_of(chain);
  if (!is_prim(m, PRIM_MAP) || m->type->elem->kind != TY_REAL) return false;
  Term *il = m->kids[0], *mul = il->kids[0];
  if (!is_prim(mul, PRIM_MUL)) return false;
  Sym *b = il->syms[0];
  Term *y = is_var(mul->kids[1], b) ? mul->kids[0] : is_var(mul->kids[0], b) ? mul->kids[1] : NULL;
  if (!y || opt_mentions(y, b) || y->kind != T_VAR) return false;
  Term *vv = m->kids[1];
  if (opt_mentions_any(vv, lam->syms, lam->nsyms)) return false;
  for (const Term *l = chain; l->kind == T_LET || l->kind == T_LETTUP; l = l->kids[1])
    if (l->kind == T_LET ? opt_mentions(vv, l->sym) : opt_mentions_any(vv, l->syms, l->nsyms)) return false;
  Term *nl = fe_copy(fe_mk_lam(lam->span, lam->nsyms, lam->syms, opt_with_tail(chain, y)));
  Term *k[4] = {nl, t->kids[1], t->nkids > 2 ? t->kids[2] : NULL, t->nkids > 3 ? t->kids[3] : NULL};
  *u = fe_mk_array_prim(t->span, t->prim, t->nkids, k);
  (*u)->b = t->b;
  *v = vv;
  return true;
}

/* U^T V as the map of dot products of the rows of transpose U and
   transpose V (a matrix product, BLAS), or z when U has no rows. */
static Term *gram(Span sp, Term *z, Term *us, Term *vs, Term *count) {
  Term *tu = fe_mk_array_prim(sp, PRIM_TRANSPOSE, 1, &us), *tv = fe_mk_array_prim(sp, PRIM_TRANSPOSE, 1, &vs);
  Sym *ut = fe_mk_sym("ut", tu->type, sp), *vt = fe_mk_sym("vt", tv->type, sp);
  Sym *r = fe_mk_sym("r", tu->type->elem, sp), *q = fe_mk_sym("q", tv->type->elem, sp);
  Term *prods = fe_mk_map2(sp, fe_mk_oplam(sp, PRIM_MUL), fe_mk_var(sp, r), fe_mk_var(sp, q));
  Term *dot = fe_mk_reduce(sp, fe_mk_oplam(sp, PRIM_ADD), fe_mk_num(sp, 0), prods);
  Term *row = fe_mk_map(sp, fe_mk_lam(sp, 1, &q, dot), fe_mk_var(sp, vt));
  Term *prod = fe_mk_map(sp, fe_mk_lam(sp, 1, &r, row), fe_mk_var(sp, ut));
  prod = fe_mk_let(sp, ut, tu, fe_mk_let(sp, vt, tv, prod));
  Term *empty = fe_mk_op2(sp, PRIM_EQ, fe_mk_length(sp, count), fe_mk_num(sp, 0));
  return fe_mk_if(sp, empty, z, prod);
}

/* mapK (xs. body) over a's arrays (copies), a's builtin and check. */
static Term *map_like(const Term *a, const Term *lam, Term *body) {
  Term *k[4] = {fe_copy(fe_mk_lam(lam->span, lam->nsyms, lam->syms, body))};
  for (int i = 1; i < a->nkids; i++) k[i] = fe_copy(a->kids[i]);
  Term *m = fe_mk_array_prim(a->span, a->prim, a->nkids, k);
  m->b = a->b;
  return m;
}

/* reduce (+) over matrices of mapK (es. lets in u_e ⊗ v_e) Xs, the
   weight gradient of a layer over a batch: U^T V with U = mapK (es. lets
   in u_e) Xs and V = mapK (es. lets in v_e) Xs, one matrix product
   (BLAS), instead of one matrix per element summed. */
static Term *outer_sum(OptRw *c, Term *t) {
  Term *z = t->kids[1], *a = t->kids[2];
  if (!is_matrix_plus(t->kids[0]) || !(is_prim(a, PRIM_MAP) || is_prim(a, PRIM_MAP2) || is_prim(a, PRIM_MAP3)))
    return NULL;
  for (int i = 1; i < a->nkids; i++)
    if (a->kids[i]->kind != T_VAR) return NULL;
  Term *zr = opt_rw_resolve(c, z);
  if (!is_prim(zr, PRIM_MAP) || !is_prim(zr->kids[0]->kids[0], PRIM_MAP) || zr->kids[1]->kind != T_VAR) return NULL;
  const Term *zl = zr->kids[0]->kids[0]->kids[0];
  if (!opt_is_num(zl->kids[0], 0)) return NULL;
  Term *lam = a->kids[0], *chain = lam->kids[0], *u, *v;
  if (!outer_of(tail_of(chain), &u, &v)) return NULL;
  Span sp = t->span;
  Term *us = map_like(a, lam, opt_with_tail(chain, u));
  /* v an element itself: V is that array (the lets' errors are U's,
     raised first) */
  Term *vs = NULL;
  for (int i = 0; i < lam->nsyms && !vs; i++)
    if (is_var(v, lam->syms[i])) vs = fe_copy(a->kids[1 + i]);
  if (!vs) vs = map_like(a, lam, opt_with_tail(chain, v));
  return gram(sp, z, us, vs, fe_copy(a->kids[1]));
}

/* reduce (+) over matrices of map2 (u, v. map (x. map (y. x * y) v) u) U V
   (u, v in either role, the product either way round, the outer product
   transposed or not: transpose (u ⊗ v) is v ⊗ u), U and V variables:
   the sum of the outer products of paired rows, U^T V, one matrix
   product (the weight gradient of a matrix product), after the map2's
   length check unless it is checked by construction. */
static Term *outer_rows(OptRw *c, Term *t) {
  Term *z = t->kids[1], *a = opt_rw_resolve(c, t->kids[2]);
  if (!is_matrix_plus(t->kids[0]) || !is_prim(a, PRIM_MAP2)) return NULL;
  if (a->kids[1]->kind != T_VAR || a->kids[2]->kind != T_VAR) return NULL;
  Term *ce = opt_rw_const_elem(c, z);
  Term *zr = opt_rw_resolve(c, z);
  if (ce || !is_prim(zr, PRIM_MAP)) return NULL;
  const Term *zl = zr->kids[0]->kids[0];
  if (!is_prim(zl, PRIM_MAP) || !opt_is_num(zl->kids[0]->kids[0], 0)) return NULL;
  const Term *lam = a->kids[0], *outer = lam->kids[0];
  /* transpose (u ⊗ v) = v ⊗ u: the roles swap */
  bool swap = false;
  if (is_prim(outer, PRIM_TRANSPOSE)) {
    swap = true;
    outer = outer->kids[0];
  } else if (outer->kind == T_LET && is_prim(outer->kids[1], PRIM_TRANSPOSE) &&
             is_var(outer->kids[1]->kids[0], outer->sym)) { /* let o = u ⊗ v in transpose o */
    swap = true;
    outer = outer->kids[0];
  }
  if (!is_prim(outer, PRIM_MAP) || outer->kids[1]->kind != T_VAR) return NULL;
  int i = outer->kids[1]->sym == lam->syms[0] ? 0 : outer->kids[1]->sym == lam->syms[1] ? 1 : -1;
  if (i < 0) return NULL;
  const Term *ol = outer->kids[0], *inner = ol->kids[0];
  if (!is_prim(inner, PRIM_MAP) || !is_var(inner->kids[1], lam->syms[1 - i])) return NULL;
  const Term *il = inner->kids[0], *m = il->kids[0];
  Sym *x = ol->syms[0], *y = il->syms[0];
  if (!is_prim(m, PRIM_MUL) || !((is_var(m->kids[0], x) && is_var(m->kids[1], y)) ||
                                 (is_var(m->kids[0], y) && is_var(m->kids[1], x))))
    return NULL;
  Span sp = t->span;
  if (swap) i = 1 - i;
  Term *g = gram(sp, z, fe_copy(a->kids[1 + i]), fe_copy(a->kids[2 - i]), fe_copy(a->kids[1]));
  if (a->b) return g;
  /* the map2's own error when the numbers of rows differ: its length
     check (a map2 of 0 over the same arrays, at the same place) first */
  Sym *ps[2] = {fe_mk_sym("u", a->kids[1]->type->elem, sp), fe_mk_sym("v", a->kids[2]->type->elem, sp)};
  Term *chk = fe_mk_map2(a->span, fe_mk_lam(sp, 2, ps, fe_mk_num(sp, 0)), fe_copy(a->kids[1]), fe_copy(a->kids[2]));
  return fe_mk_let(sp, fe_mk_sym("chk", chk->type, sp), chk, g);
}

/* reduce f z (lets in if c then A else B), z and c unable to raise, c
   small -> lets in if c then reduce f z A else reduce f z B (z computed in
   the branch taken):
   the rules above see each branch's array (a gradient's sum of outer
   products behind its empty-matrix test, which arrays.c's invariant_if
   lifted out of the map). */
static Term *reduce_over_if(Term *t) {
  Term *a = t->kids[2], *tail = tail_of(a);
  if (tail->kind != T_IF || fe_term_size_upto(tail->kids[0], 16) >= 16 || opt_may_raise(tail->kids[0])) return NULL;
  if (opt_may_raise(t->kids[1])) return NULL; /* z is evaluated after the lets now */
  Term *side[2];
  for (int b = 0; b < 2; b++) {
    Term *k[3] = {fe_copy(t->kids[0]), b ? fe_copy(t->kids[1]) : t->kids[1], tail->kids[1 + b]};
    side[b] = fe_mk_array_prim(t->span, PRIM_REDUCE, 3, k);
  }
  return opt_with_tail(a, fe_mk_if(tail->span, tail->kids[0], side[0], side[1]));
}

static Term *rule_reduce(OptRw *c, Term *t) {
  Term *vm = vecmat(c, t);
  if (vm) return vm;
  Term *ri = reduce_over_if(t);
  if (ri) return ri;
  Term *os = outer_sum(c, t);
  if (os) return os;
  Term *orow = outer_rows(c, t);
  if (orow) return orow;
  Term *rf = opt_row_fold(c, t);
  if (rf) return rf;
  Term *lam = t->kids[0], *v = t->kids[1], *a = t->kids[2];
  Term *ce = opt_rw_const_elem(c, a);
  if (!ce || ce->kind != T_NUM || v->kind != T_NUM || !opt_rw_safe(c, a)) return t;
  bool ok = (opt_is_oplam(lam, PRIM_MUL) && opt_is_num(v, 1) && opt_is_num(ce, 1)) ||
            (opt_is_oplam(lam, PRIM_ADD) && opt_is_num(v, 0) && (opt_is_num(ce, 0) || opt_is_num(ce, -0.0))) ||
            ((opt_is_oplam(lam, PRIM_MAX) || opt_is_oplam(lam, PRIM_MIN)) && opt_is_num(ce, v->num));
  return ok ? v : t;
}

/* scanl/scanr (*) 1 OnesLike(A), (+) 0 ZerosLike(A) -> replicate (length A + 1) v. */
/* A fold or scan whose function ignores its element, over zip A B
   checked (the lengths equal) with B a variable and A safe: the same over
   B, whose length it is (A is then not computed for nothing: the states
   a gradient's backward sweep zips with elements it never reads). */
static Term *ignored_elems(OptRw *c, Term *t) {
  Term *lam = t->kids[0];
  Sym *x = lam->syms[t->prim == PRIM_SCANR ? 0 : 1];
  if (mentions(c, lam->kids[0], x)) return NULL;
  Term *z = opt_rw_resolve(c, t->kids[2]);
  if (!is_prim(z, PRIM_ZIP) || !z->b) return NULL;
  for (int side = 1; side >= 0; side--) {
    Term *keep = z->kids[side], *drop = z->kids[1 - side];
    if (keep->kind != T_VAR || !opt_rw_safe(c, drop)) continue;
    Sym *y = fe_mk_sym(x->name, keep->type->elem, x->span);
    Sym *ps[2] = {lam->syms[0], lam->syms[1]};
    ps[t->prim == PRIM_SCANR ? 0 : 1] = y;
    Term *k[3] = {fe_mk_lam(lam->span, 2, ps, lam->kids[0]), t->kids[1], keep};
    return fe_mk_array_prim(t->span, t->prim, 3, k);
  }
  return NULL;
}

static Term *rule_scan(OptRw *c, Term *t) {
  Term *ie = ignored_elems(c, t);
  if (ie) return ie;
  Term *lam = t->kids[0], *v = t->kids[1], *a = t->kids[2];
  Term *ce = opt_rw_const_elem(c, a);
  if (!ce || ce->kind != T_NUM || v->kind != T_NUM) return t;
  bool ok = (opt_is_oplam(lam, PRIM_MUL) && opt_is_num(v, 1) && opt_is_num(ce, 1)) ||
            (opt_is_oplam(lam, PRIM_ADD) && opt_is_num(v, 0) && (opt_is_num(ce, 0) || opt_is_num(ce, -0.0)));
  if (!ok) return t;
  Term *n = fe_mk_add(t->span, fe_mk_length(t->span, a), fe_mk_num(t->span, 1));
  return fe_mk_replicate(t->span, n, fe_mk_num(t->span, v->num));
}

static bool is_count_literal(double v) { return v >= 0 && v <= 1e9 && v == floor(v); }

static Term *rule_shift(OptRw *c, Term *t) {
  Term *a = t->kids[0];
  if (is_prim(a, PRIM_REPLICATE)) {
    Term *n = a->kids[0];
    if (n->kind == T_NUM && is_count_literal(n->num))
      return fe_mk_replicate(t->span, fe_mk_num(n->span, n->num >= 1 ? n->num - 1 : 0), a->kids[1]);
    if (is_prim(n, PRIM_ADD) && is_prim(n->kids[0], PRIM_LENGTH) && n->kids[1]->kind == T_NUM &&
        is_count_literal(n->kids[1]->num) && n->kids[1]->num >= 1) {
      Term *m = n->kids[1]->num == 1 ? n->kids[0]
                                     : fe_mk_add(n->span, n->kids[0], fe_mk_num(n->span, n->kids[1]->num - 1));
      return fe_mk_replicate(t->span, m, a->kids[1]);
    }
  }
  if (is_prim(a, PRIM_MAP) && opt_rw_safe(c, a->kids[0]))
    return fe_mk_map(a->span, a->kids[0], fe_mk_shift(t->span, t->prim, a->kids[1]));
  return t;
}

static Term *rule_replicate(OptRw *c, Term *t) {
  (void)c;
  Term *n = t->kids[0], *v = t->kids[1];
  if (is_prim(n, PRIM_LENGTH) && n->kids[0]->kind == T_VAR && (v->kind == T_NUM || v->kind == T_VAR)) {
    Term *x = n->kids[0];
    Sym *p = fe_mk_sym("x", x->type->elem, t->span);
    return fe_mk_map(t->span, fe_mk_lam(t->span, 1, &p, v), x);
  }
  return t;
}

static Term *rule_length(OptRw *c, Term *t) {
  Term *r = opt_rw_resolve(c, t->kids[0]);
  /* length (iota n) -> n, a count iota accepts (safe) */
  if (is_prim(r, PRIM_IOTA) && opt_rw_safe(c, r) && opt_is_atom(r->kids[0])) return fe_copy(r->kids[0]);
  if (r->kind != T_PRIM || r->nkids < 2) return t;
  switch (r->prim) {
  case PRIM_ZIP: /* checked: either side's length; a variable's, the other not computed for it */
    if (!r->b || !opt_rw_safe(c, r)) return t;
    for (int i = 1; i >= 0; i--)
      if (r->kids[i]->kind == T_VAR) return fe_mk_length(t->span, r->kids[i]);
    return t;
  case PRIM_MAP:
  case PRIM_MAP2:
    if (r->kids[1]->kind == T_VAR && opt_rw_safe(c, r)) return fe_mk_length(t->span, r->kids[1]);
    return t;
  case PRIM_SCANL:
  case PRIM_SCANR:
    if (r->kids[2]->kind == T_VAR && opt_rw_safe(c, r))
      return fe_mk_add(t->span, fe_mk_length(t->span, r->kids[2]), fe_mk_num(t->span, 1));
    return t;
  default: return t;
  }
}

static bool is_map(const Term *t) {
  return is_prim(t, PRIM_MAP) || is_prim(t, PRIM_MAP2) || is_prim(t, PRIM_MAP3);
}

/* Whether the map r reads another map's result: as one of its arrays, or
   by indexing in its lambda. */
static bool reads_map(OptRw *c, const Term *r) {
  for (int k = 1; k < r->nkids; k++)
    if (r->kids[k]->kind == T_VAR && is_map(opt_rw_resolve(c, r->kids[k]))) return true;
  const Term *stack[64];
  int n = 0;
  stack[n++] = r->kids[0];
  while (n) {
    const Term *u = stack[--n];
    if (is_prim(u, PRIM_INDEX) && u->kids[0]->kind == T_VAR && is_map(opt_rw_resolve(c, u->kids[0]))) return true;
    for (int i = 0; i < u->nkids; i++) {
      if (n == 64) return true; /* deep: say yes */
      stack[n++] = u->kids[i];
    }
  }
  return false;
}

/* Whether t calls an array builtin (work that grows with an array). */
static bool array_work(const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_PRIM && fe_prims[t->prim].cls == P_ARRAY && t->prim != PRIM_INDEX && t->prim != PRIM_LENGTH)
    return true;
  if (t->kind == T_CALL) return true;
  for (int i = 0; i < t->nkids; i++)
    if (array_work(t->kids[i])) return true;
  return false;
}

static Term *rule_index(OptRw *c, Term *t) {
  Term *r = opt_rw_resolve(c, t->kids[0]), *i = t->kids[1];
  if (!opt_is_atom(i)) return t;
  if (is_prim(r, PRIM_MAP) || is_prim(r, PRIM_MAP2) || is_prim(r, PRIM_MAP3)) {
    /* a map bound elsewhere stays there: its arrays are read again, so
       they must be variables, and its element is computed again for this
       read, so the map must be read only here or be cheap (a chain of
       maps each read twice by the next would grow exponentially) */
    if (r != t->kids[0]) {
      for (int k = 1; k < r->nkids; k++)
        if (!cheap_array(r->kids[k])) return t;
      if (t->kids[0]->kind == T_VAR && opt_rw_uses(c, t->kids[0]->sym) != 1 &&
          (fe_term_size_upto(r->kids[0], 33) > 32 || reads_map(c, r)))
        return t;
      /* nor when its element is a whole builtin's work (a row of a
         matrix product, a dot product) and the read is in a function
         (run per element or step: m[a][b] in a map would compute row a
         again for every element) */
      if (t->kids[0]->kind == T_VAR && !opt_rw_same_depth(c, t->kids[0]->sym) && array_work(r->kids[0]->kids[0]))
        return t;
    }
    Term *lam = fe_copy(r->kids[0]);
    /* a map bound by a let that encloses the read was computed first:
       its element computed again cannot raise */
    if (r != t->kids[0]) fe_mark_checked(lam);
    Term *body = lam->kids[0];
    for (int k = lam->nsyms - 1; k >= 0; k--) {
      Term *ix[2] = {r != t->kids[0] ? fe_copy(r->kids[1 + k]) : r->kids[1 + k], fe_copy(i)};
      Term *read = fe_mk_array_prim(t->span, PRIM_INDEX, 2, ix);
      read->b = t->b && r->prim == PRIM_MAP; /* in range when t is (a map's arrays have its length) */
      body = fe_mk_let(t->span, lam->syms[k], read, body);
    }
    return body;
  }
  /* (iota n)[i] is i when the read is in range by construction (term.h) */
  if (is_prim(r, PRIM_IOTA) && t->b) return fe_copy(i);
  if (r->kind == T_ARRAY && i->kind == T_NUM && is_count_literal(i->num) && i->num < r->nkids) {
    for (int k = 0; k < r->nkids; k++)
      if (k != (int)i->num && !opt_rw_safe(c, r->kids[k])) return t;
    return fe_copy(r->kids[(int)i->num]);
  }
  return t;
}


/* reduce_by_index D (+) 0 (iota n) V with D all zeros of length n and V of
   length n -> V: each position gets its own element once, after 0 (the
   cotangent of an array read by a map at its own index); the same for
   rows summed by a checked map2 (a matrix's rows gathered by a map over
   them, reverse/jt_map_any.c). */
/* Whether the array d (followed through lets) is all zeros, at any depth:
   replicate n 0, map (x. 0) B, or a map whose function makes such an
   array (a matrix's zero cotangent, map (r. map (x. 0) r) m). */
static bool all_zeros(OptRw *c, Term *d) {
  Term *z = opt_rw_const_elem(c, d);
  if (z) return opt_is_num(z, 0) || opt_is_num(z, -0.0);
  Term *r = opt_rw_resolve(c, d);
  return is_prim(r, PRIM_MAP) && r->kids[0]->kind == T_LAM && r->type->elem->kind == TY_ARRAY &&
         all_zeros(c, r->kids[0]->kids[0]);
}

/* Whether lam is (g, h. map2 (+) g h) with its map2 checked by
   construction (reverse/: rows of the same lengths), the sum of rows. */
static bool checked_row_sum(const Term *lam) {
  if (lam->kind != T_LAM || lam->nsyms != 2) return false;
  const Term *m = lam->kids[0];
  return is_prim(m, PRIM_MAP2) && m->b && fe_is_oplam_either(m->kids[0], PRIM_ADD) && m->kids[1]->kind == T_VAR &&
         m->kids[2]->kind == T_VAR && m->kids[1]->sym == lam->syms[0] && m->kids[2]->sym == lam->syms[1];
}

static Term *rbi_identity(OptRw *c, Term *t) {
  bool rows = is_prim(t, PRIM_REDUCE_BY_INDEX) && checked_row_sum(t->kids[0]);
  if (!is_plus_rbi(t) && !rows) return NULL;
  Term *d = t->kids[1], *is = t->kids[3], *v = t->kids[4];
  if (!all_zeros(c, d)) return NULL;
  if (!is_prim(opt_rw_resolve(c, is), PRIM_IOTA) || !opt_rw_safe(c, d)) return NULL;
  if (!opt_rw_same_length(c, d, is) || !opt_rw_same_length(c, is, v)) return NULL;
  return v;
}

static Term *rule_rbi(OptRw *c, Term *t) {
  Term *id = rbi_identity(c, t);
  if (id) return id;
  /* zeros added: D (a guarded read's cotangent that its guard leaves 0) */
  if (is_plus_rbi(t)) {
    Term *z = opt_rw_const_elem(c, t->kids[4]);
    if (z && (opt_is_num(z, 0) || opt_is_num(z, -0.0)) && opt_rw_safe(c, t)) return t->kids[1];
  }
  Term *d = t->kids[1];
  if (!is_plus_rbi(t) || !is_plus_rbi(d)) return t;
  Term *i1 = d->kids[3], *i2 = t->kids[3];
  bool same = i1->kind == T_VAR && i2->kind == T_VAR && i1->sym == i2->sym;
  /* or one index array written twice (guarded reads' `map (i. if g then
     e else 0) A`), the second not evaluated */
  if (!same && !(i1->kind != T_VAR && opt_alpha_eq(i1, i2) && opt_rw_safe(c, i2))) return t;
  Term *v = fe_mk_map2(t->span, fe_mk_oplam(t->span, PRIM_ADD), d->kids[4], t->kids[4]);
  Term *k[5] = {t->kids[0], d->kids[1], t->kids[2], i2, v};
  return fe_mk_array_prim(t->span, PRIM_REDUCE_BY_INDEX, 5, k);
}

/* mapK (ps. lets in if c then e1 else e2) As, c small, safe and free of
   ps and the lets, the arrays variables -> if c then mapK (ps. lets in e1)
   As else mapK (ps. lets in e2) As:
   the test once, and each branch a map of its own (a vector-matrix
   product's empty-matrix test in a gradient's map over rows). */
static Term *invariant_if(OptRw *c, Term *t) {
  Term *lam = t->kids[0], *chain = lam->kids[0], *body = tail_of(chain);
  if (body->kind != T_IF) return NULL;
  Term *cond = body->kids[0];
  if (opt_mentions_any(cond, lam->syms, lam->nsyms) || fe_term_size_upto(cond, 16) >= 16 || !opt_rw_safe(c, cond))
    return NULL;
  for (const Term *l = chain; l->kind == T_LET || l->kind == T_LETTUP; l = l->kids[1])
    if (l->kind == T_LET ? opt_mentions(cond, l->sym) : opt_mentions_any(cond, l->syms, l->nsyms)) return NULL;
  for (int i = 1; i < t->nkids; i++)
    if (t->kids[i]->kind != T_VAR) return NULL;
  Term *side[2];
  for (int b = 0; b < 2; b++) {
    Term *k[4] = {fe_copy(relam(lam, opt_with_tail(chain, body->kids[1 + b]))), t->kids[1],
                  t->nkids > 2 ? t->kids[2] : NULL, t->nkids > 3 ? t->kids[3] : NULL};
    side[b] = opt_checked_as(fe_mk_array_prim(t->span, t->prim, t->nkids, k), t);
  }
  return fe_mk_if(body->span, cond, side[0], side[1]);
}

/* unzip W, W map/map2/map3 (ps. lets in (e1, e2)) As under
   project_array's conditions -> (map (ps. lets in e1) As, map (ps. lets in
   e2) As). */
static Term *rule_unzip(OptRw *c, Term *t) {
  /* each map reads W's arrays: variables only (an array computed inline
     would be computed twice, its binders shared) */
  Term *w = t->kids[0], *r = opt_rw_resolve(c, w);
  if (!(is_prim(r, PRIM_MAP) || is_prim(r, PRIM_MAP2) || is_prim(r, PRIM_MAP3))) return t;
  for (int i = 1; i < r->nkids; i++)
    if (r->kids[i]->kind != T_VAR) return t;
  Term *a = project_array(c, w, 0);
  Term *b = a ? project_array(c, w->kind == T_VAR ? w : fe_copy(w), 1) : NULL;
  if (!b) return t;
  Term *items[2] = {a, b};
  return fe_mk_tuple(t->span, 2, items);
}

static Term *arrays_rule(OptRw *c, Term *t) {
  if (t->kind != T_PRIM) return t;
  if (t->prim == PRIM_UNZIP) return rule_unzip(c, t);
  if (t->prim == PRIM_MAP || t->prim == PRIM_MAP2 || t->prim == PRIM_MAP3) {
    Term *h = invariant_if(c, t);
    if (!h && t->prim == PRIM_MAP) h = opt_index_map(c, t);
    if (!h && t->prim != PRIM_MAP3) h = opt_histogram(c, t);
    if (!h) h = opt_outer_split(c, t);
    if (h) return h;
  }
  switch (t->prim) {
  case PRIM_MAP: return rule_map(c, t);
  case PRIM_MAP2: return rule_map2(c, t);
  case PRIM_MAP3: return rule_map3(c, t);
  case PRIM_REDUCE: return rule_reduce(c, t);
  case PRIM_SCANL:
  case PRIM_SCANR: return rule_scan(c, t);
  case PRIM_FOLDL: {
    Term *ie = ignored_elems(c, t);
    return ie ? ie : t;
  }
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R: return rule_shift(c, t);
  case PRIM_REPLICATE: return rule_replicate(c, t);
  case PRIM_LENGTH: return rule_length(c, t);
  case PRIM_INDEX: return rule_index(c, t);
  case PRIM_REDUCE_BY_INDEX: return rule_rbi(c, t);
  default: return t;
  }
}

/* The array rules above, everywhere in t. */
Term *opt_arrays(const Term *t) { return opt_rw_run(t, arrays_rule); }
