/* jt_index.c: the transpose Jacobians of indexing, slicing and
   reduce_by_index (see jt_prim.h). Indices carry no derivative (their
   cotangents are zero).

     a[i]                      cot a += reduce_by_index 0_a (+) 0 [i] [z]
                               (z added into position i; no other element
                               is touched)
     a[i:j]                    cot a += concat 0_(a[:i]) (concat z 0_(a[i + length z:]))
     reduce_by_index D (+) v I V
                               cot D += z, cot V += map (k. z[k]) I
                               (v is the operator's unit: no cotangent)
   The same holds for (+) componentwise over tuples and elementwise over
   arrays (fe_is_gadd_lam), the operator of this file's own rule for a[i]
   over such elements: a gradient of a gradient meets it. reduce_by_index
   with another operator is a located error. */
#include <math.h>

#include "jt_prim.h"
#include "jt_util.h"
#include "../frontend/ir/build.h"

static Term *use(const Term *t) { return rev_jt_use(t); }

/* The one-element array literal [e]. */
static Term *singleton(Span s, Term *e) {
  Term **items = NEW_ARRAY(Term *, 1);
  items[0] = e;
  return fe_term_kids(s, T_ARRAY, fe_ty_array(e->type), 1, items);
}

static Term *slice(Span s, Term *a, Term *from, Term *to) {
  Term *k[3] = {a, from, to};
  return fe_mk_array_prim(s, PRIM_SLICE, 3, k);
}

static Term *concat(Span s, Term *a, Term *b) {
  Term *k[2] = {a, b};
  return fe_mk_array_prim(s, PRIM_CONCAT, 2, k);
}

Term *rev_jt_index(const RevJtPrim *p) {
  Span s = p->j.span;
  Term *opc[2] = {NULL, NULL};
  if (p->active[0]) {
    Term *a = p->ops[0], *i = p->ops[1], *z = p->z;
    Term *k[5] = {rev_jt_gplus(s, z->type), fe_mk_zero_like(s, use(a)), fe_mk_zero_like(s, use(z)),
                  singleton(s, use(i)), singleton(s, use(z))};
    opc[0] = fe_mk_array_prim(s, PRIM_REDUCE_BY_INDEX, 5, k);
  }
  return rev_jt_prim_result(p, NULL, opc);
}

Term *rev_jt_slice(const RevJtPrim *p) {
  Span s = p->j.span;
  Term *opc[3] = {NULL, NULL, NULL};
  if (p->active[0]) {
    Term *a = p->ops[0], *i = p->ops[1], *z = p->z;
    Term *before = fe_mk_zero_like(s, slice(s, use(a), fe_mk_num(s, 0), use(i)));
    Term *end = fe_mk_add(s, use(i), fe_mk_length(s, use(z)));
    Term *after = fe_mk_zero_like(s, slice(s, use(a), end, fe_mk_num(s, INFINITY)));
    opc[0] = concat(s, before, concat(s, use(z), after));
  }
  return rev_jt_prim_result(p, NULL, opc);
}


/* ops: D, v, I, V (the lambda is kid 0 of the term) */
Term *rev_jt_reduce_by_index(const RevJtPrim *p) {
  Span s = p->j.span;
  const Term *lam = p->t->kids[0];
  if (!fe_is_gadd_lam(lam))
    fe_error(s, "grad: reduce_by_index is differentiable with the operator (+) only");
  Term *opc[4] = {NULL, NULL, NULL, NULL};
  if (p->active[0]) opc[0] = use(p->z);
  if (p->active[3]) {
    Sym *k = fe_mk_sym("k", fe_ty_real(), s);
    Term *ix[2] = {use(p->z), fe_mk_var(s, k)};
    Term *pick = fe_mk_array_prim(s, PRIM_INDEX, 2, ix);
    opc[3] = fe_mk_map(s, fe_mk_lam(s, 1, &k, pick), use(p->ops[2]));
  }
  return rev_jt_prim_result(p, NULL, opc);
}
