/* jt_reduce.c: the transpose Jacobian of reduce (x, y. e) v A (paper
   figure 10, J^T reduce, and section 7.1 for free variables in e; see
   jt.h). */
#include "jt_util.h"

/* reduce's value is the left fold of e from v over A in any bracketing
   (e is associative with unit v), so its J^T is the fold's
   (rev_jt_fold in jt_foldl.c): the paper's scanl/scanr formulation
     A0 = shift1R (scanl (x, y. e) v A), the partials along the prefix
     results, suffix products scanr (*) 1, cot A_i = z S_i ∂e/∂y,
   extended with the cotangent of v (z times the product of the ∂e/∂x;
   zero for a true unit by the paper's lemma A.2, but v may depend on the
   parameters, e.g. reduce (x, y. x * y * s) (1 / s) A) and of the free
   variables of e (sum_i z S_i ∂e/∂fv at step i; figure 13's printed rule
   is wrong). Every scan in it is either the primal's own lambda or the
   associative (*), so it parallelises as the primal does. */
Term *rev_jt_reduce(const RevJt *j, const Term *lam, Term *v, Term *a, Term *z) {
  return rev_jt_fold(j, lam, v, a, z);
}
