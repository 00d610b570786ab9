/* support.c: rev_check_supported, what reverse mode can differentiate
   (paths.h). Every construct of the language is differentiable; what is
   left is located errors for what has no cotangent type yet: an active
   value (one that depends on the variables differentiated, unf/activity.h)
   whose type mixes booleans and numbers in a tuple. Inactive values may have any type:
   they are constants. */
#include "paths.h"
#include "../unf/activity.h"

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


/* Raises when an active value of type t has no cotangent type yet. */
static void check_type(Span s, const Type *t) {
  if (t->kind == TY_TUPLE && has_bool(t) && fe_type_has_reals(t))
    fe_error(s, "grad: tuples mixing booleans and numbers are not supported under grad yet");
  if (t->kind == TY_ARRAY) check_type(s, t->elem);
  if (t->kind == TY_TUPLE)
    for (int i = 0; i < t->n; i++) check_type(s, t->elems[i]);
}

/* The parameters of a lambda of an active combinator are active when its
   operands are: checked as such (conservatively, all of them). */
static void check(const UnfActivity *a, const Term *t, bool in_lambda) {
  while (t) {
    fe_stack_check(t->span);
    switch (t->kind) {
    case T_GRAD: fe_error(t->span, "grad: internal: a derivative operator was not expanded");
    case T_APP: fe_error(t->span, "grad: internal: an application in a source term");
    default: break;
    }
    bool active = in_lambda || unf_term_active(a, t);
    if (!active) return;
    if (t->type && t->kind != T_LAM) check_type(t->span, t->type);
    if (t->kind == T_LAM)
      for (int i = 0; i < t->nsyms; i++) check_type(t->span, t->syms[i]->type);
    if (t->nkids == 0) return;
    in_lambda |= t->kind == T_LAM;
    for (int i = 0; i + 1 < t->nkids; i++) check(a, t->kids[i], in_lambda);
    t = t->kids[t->nkids - 1];
  }
}

void rev_check_supported(const Term *body, Sym **ctx, int n) {
  check(unf_activity(body, ctx, n), body, false);
}
