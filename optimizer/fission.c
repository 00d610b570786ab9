/* fission.c: the matrix-vector products of a map's function taken out of
   the map, so that those of all its elements are one matrix product
   (BLAS level 3), as a batch of examples through a layer is:

     mapK (ps. let y = map (r. dot r p) M in B) As        (p among ps, M
                                                           free of ps)
       -> let Y = map (p. map (r. dot r p) M) A_p in mapK+1 (ps, y. B) As Y
     mapK (ps. let h = E in B) As     (E an elementwise map over ps and
                                       free arrays, h the vector of a
                                       matrix-vector product in B)
       -> let H = mapK (ps. E) As in mapK+1 (ps, h. B) As H

   so that `map (x. let t = matvec w1 x in let h = map tanh t in matvec w2
   h) xs` becomes two matrix products with an elementwise map between
   (the plan gives `map (p. map (r. dot r p) M) A` to BLAS's dgemm). A
   product inside a right-hand side or the tail is taken out too, from
   under an `if` or a let that is the same for every element (a
   gradient's `if length w == 0 then zeros else let t = transpose w in
   map (c. dot c g) t`: the let substituted into the product taken out),
   and a product of what was just taken out is taken out at once (a
   layer's output cotangent, then its product with the weights). A
   map of up to two arrays takes one more (map3 at most); the arrays must
   be variables (read twice), and the let's right-hand side must not
   raise (computed for every element before the rest of the body, it
   would otherwise raise before an error of an earlier element's body).
   fusion.c leaves the matrix products alone (opt_row_product). The
   pipeline runs it once the other passes are done (the dead lets gone,
   the bodies simplified), then the passes again (optimizer/pipeline.c). */
#include "fission.h"
#include "passes.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"
#include "pe_util.h"

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

/* Whether t mentions a variable bound by the lets of chain before stop. */
static bool mentions_lets(const Term *t, const Term *chain, const Term *stop) {
  for (const Term *l = chain; l != stop && (l->kind == T_LET || l->kind == T_LETTUP); l = l->kids[1]) {
    if (l->kind == T_LET ? opt_mentions(t, l->sym) : opt_mentions_any(t, l->syms, l->nsyms)) return true;
  }
  return false;
}

/* An elementwise map over arrays that are parameters or free of them:
   map/map2 of a scalar function of at most ELEMENTWISE_MAX nodes. */
enum { ELEMENTWISE_MAX = 64 };
static bool elementwise(const Term *r) {
  if (!(is_prim(r, PRIM_MAP) || is_prim(r, PRIM_MAP2)) || r->type->elem->kind != TY_REAL) return false;
  for (int i = 1; i < r->nkids; i++)
    if (r->kids[i]->kind != T_VAR) return false;
  const Term *f = r->kids[0];
  for (int i = 0; i < f->nsyms; i++)
    if (f->syms[i]->type->kind != TY_REAL) return false;
  return fe_term_size_upto(f, ELEMENTWISE_MAX + 1) <= ELEMENTWISE_MAX;
}

/* The matrix-vector product of the variable y that the let right-hand
   side r is, or takes as an array (map/map2 f (matvec M y) ...); NULL. */
static const Term *product_in(const Term *r, const Sym *y) {
  for (int i = 0; i < (is_prim(r, PRIM_MAP) || is_prim(r, PRIM_MAP2) ? r->nkids : 1); i++) {
    const Term *m = i == 0 ? r : r->kids[i];
    const Term *v = opt_row_product(m);
    if (v && v->kind == T_VAR && v->sym == y) return m;
  }
  return NULL;
}

/* Whether the condition c of an `if` in the function lam's body chain is
   the same for every element: it mentions no parameter and no let of
   the chain. */
static bool invariant(const Term *c, Sym *const *ps, int nps, const Term *chain) {
  return !opt_mentions_any(c, ps, nps) && !mentions_lets(c, chain, NULL);
}

/* A matrix-vector product of one of the parameters ps (its index in *p)
   inside t, its matrix free of the parameters and of chain's lets:
   looked for in t's operands, in the branches of an `if` whose condition
   is the same for every element (the empty-matrix test a gradient puts
   around a transposed product), and in the bodies of lets whose
   right-hand side is the same for every element (`let t = transpose w
   in ...`: recorded in b, to be substituted into the product taken
   out); not in lambdas, nor under an `if` or a let that depends on the
   element. NULL when there is none. */
enum { DEEP_MAX = 8 };
typedef struct Crossed {
  Sym *x[DEEP_MAX];
  Term *rhs[DEEP_MAX];
  int n;
} Crossed;

static const Term *deep_product(const Term *t, Sym *const *ps, int nps, const Term *chain, int *p, Crossed *b,
                                int depth) {
  if (depth > DEEP_MAX || t->kind == T_LAM) return NULL;
  const Term *v = opt_row_product(t);
  if (v && v->kind == T_VAR)
    for (int i = 0; i < nps; i++)
      if (v->sym == ps[i] && invariant(t->kids[1], ps, nps, chain)) {
        *p = i;
        return t;
      }
  if (t->kind == T_IF && !invariant(t->kids[0], ps, nps, chain)) return NULL;
  if (t->kind == T_LETTUP) return NULL;
  if (t->kind == T_LET) { /* the body, past a right-hand side the same for every element */
    if (b->n == DEEP_MAX || !invariant(t->kids[0], ps, nps, chain)) return NULL;
    for (int i = 0; i < b->n; i++)
      if (opt_mentions(t->kids[0], b->x[i])) return NULL;
    b->x[b->n] = t->sym;
    b->rhs[b->n++] = t->kids[0];
    const Term *m = deep_product(t->kids[1], ps, nps, chain, p, b, depth + 1);
    if (!m) b->n--;
    return m;
  }
  for (int i = t->kind == T_IF ? 1 : 0; i < t->nkids; i++) {
    const Term *m = deep_product(t->kids[i], ps, nps, chain, p, b, depth + 1);
    if (m) return m;
  }
  return NULL;
}

/* Whether y is the vector of a matrix-vector product in t: a let's
   right-hand side, an array of one, or (deep_product) one inside a let's
   right-hand side or the chain's tail. */
static bool feeds(const Term *t, const Sym *y) {
  Sym *ys[1] = {(Sym *)y};
  const Term *chain = t;
  int p;
  for (; t->kind == T_LET || t->kind == T_LETTUP; t = t->kids[1]) {
    Crossed b = {.n = 0};
    if (t->kind == T_LET && (product_in(t->kids[0], y) || deep_product(t->kids[0], ys, 1, chain, &p, &b, 0))) return true;
  }
  Crossed b = {.n = 0};
  return product_in(t, y) != NULL || deep_product(t, ys, 1, chain, &p, &b, 0) != NULL;
}

bool opt_feeds_product(const Term *t, const Sym *y) { return feeds(t, y); }

/* chain with the let node `at` (one of its lets) dropped (to NULL) or
   its right-hand side's array kid `from` replaced by the variable to. */
static Term *with_var(const Term *r, const Term *from, Sym *to) {
  Term **k = NEW_ARRAY(Term *, r->nkids);
  for (int i = 0; i < r->nkids; i++) k[i] = r->kids[i] == from ? fe_mk_var(from->span, to) : r->kids[i];
  return opt_with_kids(r, k);
}

static Term *edit(const Term *chain, const Term *at, const Term *from, Sym *to) {
  if (chain == at) {
    if (at->kind != T_LET) return with_var(at, from, to); /* the chain's tail */
    if (!to) return chain->kids[1];
    Term *nk[2] = {with_var(chain->kids[0], from, to), chain->kids[1]};
    return opt_with_kids(chain, nk);
  }
  Term *k[2] = {chain->kids[0], edit(chain->kids[1], at, from, to)};
  return opt_with_kids(chain, k);
}

Term *opt_fission(OptRw *c, Term *t) {
  if (!(is_prim(t, PRIM_MAP) || is_prim(t, PRIM_MAP2))) return NULL;
  int k = t->nkids - 1;
  for (int i = 1; i <= k; i++)
    if (t->kids[i]->kind != T_VAR) return NULL;
  /* map2's arrays of lengths known equal: the map3 made checks them again,
     with its own word (map3) in the error */
  if (k == 2 && !t->b && !opt_rw_same_length(c, t->kids[1], t->kids[2])) return NULL;
  const Term *lam = t->kids[0], *chain = lam->kids[0];
  for (const Term *l = chain;; l = l->kids[1]) {
    /* each let, then the chain's tail (an inline product in it) */
    bool tail = l->kind != T_LET && l->kind != T_LETTUP;
    if (!tail && (l->kind != T_LET || l->kids[0]->type->kind != TY_ARRAY)) continue;
    const Term *r = tail ? l : l->kids[0];
    /* (a dead let is dead-code elimination's) */
    if (mentions_lets(r, chain, l) || !opt_mentions_any(r, lam->syms, lam->nsyms) || (!tail && !opt_mentions(l->kids[1], l->sym))) {
      if (tail) break;
      continue;
    }
    Term *over = NULL; /* the builtin Y's map, and its arrays */
    Sym *ps[3];
    /* r a matrix-vector product of a parameter, or an elementwise map
       taking one as an array */
    const Term *m = NULL;
    int p = -1;
    for (int i = 0; i < k && !m; i++)
      if ((m = product_in(r, lam->syms[i])) && !opt_mentions_any(m->kids[1], lam->syms, lam->nsyms) && !(tail && m == r)) p = i;
      else m = NULL;
    /* or one inside r, the lets it is under in b */
    bool deep = false;
    Crossed b = {.n = 0};
    if (!m) {
      const Term *d = deep_product(r, lam->syms, k, chain, &p, &b, 0);
      if (d && d != r) m = d, deep = true;
    }
    if (tail && !m) break;
    if (m) {
      /* Y = map (p. map (r. dot r p) M) A_p, M with the lets it was
         under substituted */
      Term *mm = b.n ? fe_subst(m, b.n, b.x, b.rhs) : (Term *)m;
      Term *f = fe_copy(fe_mk_lam(lam->span, 1, &lam->syms[p], mm));
      over = fe_mk_map(t->span, f, t->kids[1 + p]);
    } else if (elementwise(r) && opt_feeds_product(l->kids[1], l->sym)) {
      for (int i = 0; i < lam->nsyms; i++) ps[i] = lam->syms[i];
      Term *f = fe_copy(fe_mk_lam(lam->span, lam->nsyms, ps, (Term *)r));
      over = k == 1 ? fe_mk_map(t->span, f, t->kids[1]) : fe_mk_map2(t->span, f, t->kids[1], t->kids[2]);
      over->b = true; /* the lengths are checked (or known equal) above */
    } else {
      continue;
    }
    if (!opt_rw_safe(c, m ? over->kids[0]->kids[0] : r)) {
      if (tail) break;
      continue;
    }
    Span sp = t->span;
    Sym *Y = fe_mk_sym(tail ? "y" : l->sym->name, over->type, sp);
    for (int i = 0; i < k; i++) ps[i] = lam->syms[i];
    /* the let's variable becomes the new parameter, or (an inline
       product) a fresh one stands where the product was */
    bool whole = !m || m == r;
    ps[k] = whole ? l->sym : fe_mk_sym("y", m->type, m->span);
    Term *nl = fe_mk_lam(lam->span, k + 1, ps, deep ? opt_replace_at(chain, m, fe_mk_var(m->span, ps[k])) : edit(chain, l, m, whole ? NULL : ps[k]));
    Term *args[4] = {nl, t->kids[1], k == 2 ? t->kids[2] : fe_mk_var(sp, Y), fe_mk_var(sp, Y)};
    Term *mk = k == 1 ? fe_mk_map2(sp, nl, args[1], args[2]) : fe_mk_array_prim(sp, PRIM_MAP3, 4, args);
    mk->b = true; /* Y has the length of the arrays */
    return fe_mk_let(sp, Y, over, mk);
  }
  return NULL;
}

/* t with its products taken out, again on the map that results (a
   product of what was just taken out: the output cotangent of a layer,
   then its product with the weights), up to FISSION_ROUNDS times. */
enum { FISSION_ROUNDS = 4 };
static Term *fission_rule(OptRw *c, Term *t) {
  Term *f = opt_fission(c, t);
  if (!f) return t;
  Term *lets[FISSION_ROUNDS];
  int n = 0;
  lets[n++] = f;
  while (n < FISSION_ROUNDS) {
    Term *g = opt_fission(c, lets[n - 1]->kids[1]);
    if (!g) break;
    lets[n++] = g;
  }
  Term *r = lets[n - 1]->kids[1];
  for (int i = n - 1; i >= 0; i--) r = fe_mk_let(lets[i]->span, lets[i]->sym, lets[i]->kids[0], r);
  return r;
}

Term *opt_fission_pass(const Term *t) { return opt_rw_run(t, fission_rule); }
