/* jt_shape.c: the transpose Jacobians of the builtins that move elements
   without computing (see jt_prim.h):
     transpose M   cot M += transpose z (M's zeros when z is empty: M's
                   rows may be empty)
     concat A B    cot A += z[:length A], cot B += z[length A:]
     zip A B       (cot A, cot B) += unzip z
     unzip P       cot P += zip z.0 z.1
     shift1L A     cot A += concat 0_(A[:length A - length z]) z
     shift1R A     cot A += concat z 0_(A[length z:])
   (the shifts drop one element, none of the empty array). */
#include <math.h>

#include "jt_prim.h"
#include "jt_util.h"
#include "../frontend/ir/build.h"

static Term *use(const Term *t) { return rev_jt_use(t); }

static Term *prim(Span s, Prim p, int n, Term *a, Term *b, Term *c) {
  Term *k[3] = {a, b, c};
  return fe_mk_array_prim(s, p, n, k);
}

static Term *inf(Span s) { return fe_mk_num(s, INFINITY); }

Term *rev_jt_transpose(const RevJtPrim *p) {
  /* transpose z, or M's zeros when z has no rows: transpose M has none
     when M's rows are empty, and transpose z could not give them back */
  Span s = p->j.span;
  Term *tz = prim(s, PRIM_TRANSPOSE, 1, use(p->z), NULL, NULL);
  /* M has no rows, or rows of none: length M == 0 || length M[0] == 0
     (M is rectangular: its transpose did not raise) */
  Term *row0 = prim(s, PRIM_INDEX, 2, use(p->ops[0]), fe_mk_num(s, 0), NULL);
  row0->b = true; /* read only where M has rows */
  Term *none = fe_mk_op2(s, PRIM_EQ, fe_mk_length(s, use(p->ops[0])), fe_mk_num(s, 0));
  Term *empty = fe_mk_op2(s, PRIM_OR, none, fe_mk_op2(s, PRIM_EQ, fe_mk_length(s, row0), fe_mk_num(s, 0)));
  Term *opc[1] = {fe_mk_if(s, empty, fe_mk_zero_like(s, use(p->ops[0])), tz)};
  return rev_jt_prim_result(p, NULL, opc);
}

Term *rev_jt_concat(const RevJtPrim *p) {
  Span s = p->j.span;
  Term *opc[2] = {NULL, NULL};
  if (p->active[0])
    opc[0] = prim(s, PRIM_SLICE, 3, use(p->z), fe_mk_num(s, 0), fe_mk_length(s, use(p->ops[0])));
  if (p->active[1]) opc[1] = prim(s, PRIM_SLICE, 3, use(p->z), fe_mk_length(s, use(p->ops[0])), inf(s));
  return rev_jt_prim_result(p, NULL, opc);
}

Term *rev_jt_zip(const RevJtPrim *p) {
  Span s = p->j.span;
  Term *opc[2];
  for (int k = 0; k < 2; k++) opc[k] = fe_mk_proj(s, prim(s, PRIM_UNZIP, 1, use(p->z), NULL, NULL), k);
  return rev_jt_prim_result(p, NULL, opc);
}

Term *rev_jt_unzip(const RevJtPrim *p) {
  Span s = p->j.span;
  Term *opc[1] = {rev_checked(prim(s, PRIM_ZIP, 2, fe_mk_proj(s, use(p->z), 0), fe_mk_proj(s, use(p->z), 1), NULL))};
  return rev_jt_prim_result(p, NULL, opc);
}

/* The zero of type t when it has no arrays in it (a real, a tuple of
   reals), else NULL: its zero needs an element's shape. */
static Term *const_zero(Span s, const Type *t) {
  if (t->kind == TY_REAL) return fe_mk_num(s, 0);
  if (t->kind != TY_TUPLE) return NULL;
  Term **items = NEW_ARRAY(Term *, t->n);
  for (int i = 0; i < t->n; i++)
    if (!(items[i] = const_zero(s, t->elems[i]))) return NULL;
  return fe_mk_tuple(s, t->n, items);
}

/* The zeros of the elements of a from position `from` to `to` (in range:
   the shift dropped them): `replicate (to - from) 0` when the zero has no
   shape, which then needs only a's length, not a itself (a replayed scan
   the cotangent would otherwise keep alive); else zeros shaped like the
   slice. */
static Term *zeros_of(Span s, Term *a, Term *from, Term *to) {
  Term *c = const_zero(s, a->type->elem);
  if (c) return fe_mk_replicate(s, fe_mk_op2(s, PRIM_SUB, to, from), c);
  Term *slice = prim(s, PRIM_SLICE, 3, a, from, to);
  slice->b = true;
  return fe_mk_zero_like(s, slice);
}

Term *rev_jt_shift(const RevJtPrim *p) {
  Span s = p->j.span;
  Term *a = p->ops[0], *z = p->z;
  Term *opc[1];
  if (p->t->prim == PRIM_SHIFT1L) {
    Term *drop = fe_mk_op2(s, PRIM_SUB, fe_mk_length(s, use(a)), fe_mk_length(s, use(z)));
    Term *head = zeros_of(s, use(a), fe_mk_num(s, 0), drop);
    opc[0] = prim(s, PRIM_CONCAT, 2, head, use(z), NULL);
  } else {
    Term *tail = zeros_of(s, use(a), fe_mk_length(s, use(z)), fe_mk_length(s, use(a)));
    opc[0] = prim(s, PRIM_CONCAT, 2, use(z), tail, NULL);
  }
  return rev_jt_prim_result(p, NULL, opc);
}
