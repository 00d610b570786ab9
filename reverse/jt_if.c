/* jt_if.c: the transpose Jacobian of if c then e1 else e2 (paper section
   7.2, the "Solution" with a linear continuation; see jt.h). */
#include "jt_prim.h"
#include "jt_util.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"

/* ∇_fv <z, e>. A branch that is itself an if (an else-if ladder) is
   taken apart here rather than by ∇, whose forward pass would compute
   the inner if's value only to drop it: each level would then hold a
   copy of every level below it (quadratic size, cubic time). The
   conditions are evaluated again, at the values the primal saw (so they
   cannot raise here when they did not there). */
static Term *branch(const RevJt *j, const Term *e, Term *z) {
  Span s = j->span;
  int n = 0, cap = 8;
  const Term **conds = NEW_ARRAY(const Term *, cap);
  Term **thens = NEW_ARRAY(Term *, cap);
  while (e->kind == T_IF) {
    if (n == cap) {
      cap *= 2;
      const Term **nc = NEW_ARRAY(const Term *, cap);
      Term **nt = NEW_ARRAY(Term *, cap);
      memcpy(nc, conds, sizeof *nc * (size_t)n);
      memcpy(nt, thens, sizeof *nt * (size_t)n);
      conds = nc;
      thens = nt;
    }
    conds[n] = e->kids[0];
    thens[n++] = branch(j, e->kids[1], z);
    e = e->kids[2];
  }
  Term *g = j->nabla(j->fv, j->nfv, rev_jt_inner(s, rev_jt_use(z), fe_copy(e)), j->ud);
  for (int i = n - 1; i >= 0; i--) g = fe_mk_if(s, fe_copy(conds[i]), thens[i], g);
  return g;
}

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
  ASSERT(fe_type_eq(z->type, e1->type) && fe_type_has_reals(z->type));
  return fe_copy(fe_mk_if(s, c, branch(j, e1, z), branch(j, e2, z)));
}
