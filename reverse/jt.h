/* jt.h: transpose Jacobians (J^T) of the array and control constructs, as
   builders of target terms (the paper's figure 10 expansions of J^T map2
   and J^T reduce, figure 13 for reduce with free variables, figure 16 for
   foldl and map, section 7.2 for if), used by the UNF path's J^T rules
   (reverse/unf_jt.c, applied by UNF^-1); the direct path
   (reverse/direct_array.c) keeps its own rules, so that the two paths
   check each other. The gradients of lambda bodies and branches
   come from the ∇ callback (rev_nabla on the UNF path).

   Conventions for every builder:
   - fv[0..nfv) are the free variables of the construct's lambda bodies (or
     branches) that receive cotangents (ground types); other free
     variables are constants.
   - Primal inputs are passed as terms that may be used several times:
     pass variables (or constants).
   - z is the cotangent of the construct's result (a variable).
   - The result is ONE term evaluating to a tuple of cotangents, in this
     order: (fv cotangents..., then the inputs' cotangents as documented
     per builder); the caller binds it with a let-tuple. When the tuple
     would have one component, the term is that component itself. */
#ifndef UNA_JT_H
#define UNA_JT_H

#include "../frontend/ir/term.h"

/* ∇ callback: the gradient of body (type R) with respect to ctx[0..n),
   as rev_nabla documents. */
typedef Term *(*RevNablaFn)(Sym **ctx, int n, const Term *body, void *ud);

typedef struct RevJt {
  Span span;       /* the construct's source span, for the new nodes */
  Sym **fv;
  int nfv;
  RevNablaFn nabla;
  void *ud;
} RevJt;

/* map (x. e) A, A : [R], e : R.          -> (fv..., cotA) */
Term *rev_jt_map(const RevJt *j, const Term *lam, Term *a, Term *z);
/* map2 (x, y. e) A B, A B : [R].         -> (fv..., cotA, cotB) */
Term *rev_jt_map2(const RevJt *j, const Term *lam, Term *a, Term *b, Term *z);
/* reduce (x, y. e) v A, v : R, A : [R].  -> (fv..., cotv, cotA) */
Term *rev_jt_reduce(const RevJt *j, const Term *lam, Term *v, Term *a, Term *z);
/* foldl (acc, y. e) v A, v : R, A : [R]. -> (fv..., cotv, cotA) */
Term *rev_jt_foldl(const RevJt *j, const Term *lam, Term *v, Term *a, Term *z);
/* if c then e1 else e2 (c : B a variable; e1, e2 of ground type T in the
   context of fv).                         -> (fv...)                    */
Term *rev_jt_if(const RevJt *j, Term *c, const Term *e1, const Term *e2, Term *z);

#endif
