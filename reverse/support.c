/* support.c: rev_check_supported, what reverse mode can differentiate
   (paths.h). Every construct of the language is differentiable, and a
   value of any type may be active (depend on the variables differentiated,
   unf/activity.h): a boolean inside it has the empty tangent type (its
   cotangent is the constant false, fe_mk_zero_like). What is left is
   internal errors for terms that no source program holds. */
#include "paths.h"
#include "../unf/activity.h"

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
    if (t->nkids == 0) return;
    in_lambda |= t->kind == T_LAM;
    for (int i = 0; i + 1 < t->nkids; i++) check(a, t->kids[i], in_lambda);
    t = t->kids[t->nkids - 1];
  }
}

void rev_check_supported(const Term *body, Sym **ctx, int n) {
  check(unf_activity(body, ctx, n), body, false);
}
