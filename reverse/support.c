/* support.c: rev_check_supported, what reverse mode can differentiate
   (paths.h). Every construct of the language is differentiable, and a
   value of any type may depend on the variables differentiated: a boolean
   inside it has the empty tangent type (its cotangent is the constant
   false, fe_mk_zero_like). What is left is internal errors for terms that
   no source program holds (derivative operators are expanded before, and
   source terms have no applications). */
#include "paths.h"

void rev_check_supported(const Term *body, Sym **ctx, int n) {
  (void)ctx;
  (void)n;
  for (const Term *t = body; t;) {
    fe_stack_check(t->span);
    if (t->kind == T_GRAD) fe_error(t->span, "grad: internal: a derivative operator was not expanded");
    if (t->kind == T_APP) fe_error(t->span, "grad: internal: an application in a source term");
    if (t->nkids == 0) break;
    for (int i = 0; i + 1 < t->nkids; i++) rev_check_supported(t->kids[i], ctx, n);
    t = t->kids[t->nkids - 1];
  }
}
