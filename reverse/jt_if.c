/* jt_if.c: the transpose Jacobian of if c then e1 else e2 (paper section
   7.2, the "Solution" with a linear continuation; see jt.h). */
#include "jt_util.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"

/* With z the cotangent of the result (ground type T) and fv the free
   variables that receive cotangents:
     if c then ∇_fv <z, e1> else ∇_fv <z, e2>
   where <z, e> is the inner product (z * e for R, reduce (+) 0 (map2 (*)
   z e) for [R], the sum over the components for tuples) and z is a
   constant for ∇: the vector-Jacobian product of the taken branch. Only
   the taken branch's gradient is evaluated (never b * J1 + (1 - b) * J2:
   the other branch may be nan or costly). Needs nfv >= 1 (with no free
   variable there is no cotangent to return). */
Term *rev_jt_if(const RevJt *j, Term *c, const Term *e1, const Term *e2, Term *z) {
  Span s = j->span;
  ASSERT(j->nfv >= 1);
  ASSERT(c->type->kind == TY_BOOL && fe_type_eq(e1->type, e2->type));
  ASSERT(fe_type_eq(z->type, e1->type) && fe_type_is_ground(z->type));
  Term *g1 = j->nabla(j->fv, j->nfv, rev_jt_inner(s, z, fe_copy(e1)), j->ud);
  Term *g2 = j->nabla(j->fv, j->nfv, rev_jt_inner(s, z, fe_copy(e2)), j->ud);
  return fe_mk_if(s, c, fe_copy(g1), fe_copy(g2));
}
