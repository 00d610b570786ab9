/* support.c: rev_check_supported, what reverse mode can differentiate
   (paths.h). Under grad: scalars, tuples of them and arrays of R (arrays
   of B as non-differentiable data); lambda parameters and accumulators of
   R. Builtins whose row in prims.def says G_NONE (scans, shifts), arrays
   of tuples, nested arrays, tuple accumulators and nested gradients are
   located errors naming the construct. */
#include "paths.h"

/* True when t has a B somewhere (arrays and tuples included). */
static bool has_bool(const Type *t) {
  switch (t->kind) {
  case TY_BOOL: return true;
  case TY_ARRAY: return has_bool(t->elem);
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++)
      if (has_bool(t->elems[i])) return true;
    return false;
  default: return false;
  }
}

static bool has_real(const Type *t) {
  switch (t->kind) {
  case TY_REAL: return true;
  case TY_ARRAY: return has_real(t->elem);
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++)
      if (has_real(t->elems[i])) return true;
    return false;
  default: return false;
  }
}

/* Raises when a value of type t cannot appear under grad. */
static void check_type(Span s, const Type *t) {
  switch (t->kind) {
  case TY_ARRAY:
    if (t->elem->kind == TY_TUPLE) fe_error(s, "grad: arrays of tuples are not supported under grad yet");
    if (t->elem->kind == TY_ARRAY) fe_error(s, "grad: nested arrays are not supported under grad yet");
    return;
  case TY_TUPLE:
    if (has_bool(t) && has_real(t))
      fe_error(s, "grad: tuples mixing booleans and numbers are not supported under grad yet");
    for (int i = 0; i < t->n; i++) check_type(s, t->elems[i]);
    return;
  default: return;
  }
}

/* The lambda of map, map2, reduce or foldl: parameters of R. */
static void check_lambda(const Term *t) {
  const Term *lam = t->kids[0];
  const char *who = fe_prims[t->prim].name;
  bool fold = t->prim == PRIM_REDUCE || t->prim == PRIM_FOLDL;
  ASSERT(lam->kind == T_LAM);
  for (int i = 0; i < lam->nsyms; i++) {
    const Type *pt = lam->syms[i]->type;
    if (pt->kind == TY_REAL) continue;
    bool acc = fold && i == 0;
    if (pt->kind == TY_TUPLE && acc)
      fe_error(t->span, "grad: a tuple accumulator in %s is not supported under grad yet", who);
    if (acc)
      fe_error(t->span, "grad: an accumulator of type %s in %s is not supported under grad yet",
               fe_type_str(pt), who);
    if (pt->kind == TY_TUPLE)
      fe_error(t->span, "grad: arrays of tuples are not supported under grad yet");
    if (pt->kind == TY_ARRAY) fe_error(t->span, "grad: nested arrays are not supported under grad yet");
    fe_error(t->span, "grad: %s over arrays of %s is not supported under grad yet", who,
             fe_type_str(pt));
  }
  const Type *bt = lam->kids[0]->type;
  if (bt->kind != TY_REAL && !(bt->kind == TY_BOOL && !fold))
    check_type(t->span, fe_ty_array(bt));
}

static void check(const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->type) check_type(t->span, t->type);
    switch (t->kind) {
    case T_PRIM:
      if (fe_prims[t->prim].grad == G_NONE) /* prims.def */
        fe_error(t->span, "grad: %s is not supported under grad yet", fe_prims[t->prim].name);
      switch (t->prim) {
      case PRIM_MAP:
      case PRIM_MAP2:
      case PRIM_REDUCE:
      case PRIM_FOLDL: check_lambda(t); break;
      default: break;
      }
      break;
    case T_GRAD:
      fe_error(t->span, "grad of a function that itself computes a gradient is not supported yet");
    case T_CALL:
      fe_error(t->span, "grad: internal: the call of '%s' was not inlined", t->def->name);
    case T_APP: fe_error(t->span, "grad: internal: an application in a source term");
    default: break;
    }
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) check(t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

void rev_check_supported(const Term *body) { check(body); }
