/* jt_util.h: helpers shared by the transpose-Jacobian builders
   (reverse/jt_*.c): the ∇ of a lambda body, pasting with fresh binders,
   cotangent tuples, weighted sums over the elements, the inner product
   <z, e> of the vector-Jacobian trick, and the common J^T of reduce and
   foldl. Internal to reverse/; jt.h is the public interface. */
#ifndef UNA_JT_UTIL_H
#define UNA_JT_UTIL_H

#include "jt.h"

/* The ∇ of lam's body (type R) with respect to the context
   ctx = (lam's parameters..., j->fv[0..nfv)), in that order: a term with
   lam->nsyms + j->nfv components (a tuple, or the single partial when
   there is one component) in which lam's parameters are free. */
Term *rev_jt_body_grad(const RevJt *j, const Term *lam);

/* A copy of t (fresh binders) with each free from[i] replaced by the
   variable to[i]. */
Term *rev_jt_paste(Span s, const Term *t, int n, Sym **from, Sym **to);

/* Component i of t, a value with ncomp components: t itself when
   ncomp == 1, else the projection t.i. */
Term *rev_jt_pick(Span s, Term *t, int ncomp, int i);

/* The cotangent result: the tuple of items[0..n), or items[0] when n == 1
   (n >= 1). */
Term *rev_jt_pack(Span s, int n, Term **items);

/* map2 (t, w. w *^ pick(t, i)) W wts: component i of every element of W
   (an array whose elements have ncomp components) scaled by the matching
   real of wts (type [R]). W and wts must be variables. */
Term *rev_jt_scaled(Span s, Sym *w_arr, int ncomp, int i, Sym *wts);

/* The monoid sum of the elements of arr (an array of a ground type T):
   reduce (g, h. g +^ h) zero arr, where zero is 0_T (for T = R the
   builtin (+) with 0). */
Term *rev_jt_gsum(Span s, Term *arr, Term *zero);

/* The cotangents of the free variables fv[0..nfv) of a per-element
   gradient: items[k] = gsum (rev_jt_scaled(W, ncomp, first + k, wts)),
   with the zero of fv[k]'s type. */
void rev_jt_fv_cots(const RevJt *j, Sym *w_arr, int ncomp, int first, Sym *wts, Term **items);

/* t (an index, map2, map3 or zip the reverse pass builds) marked checked
   by construction (term.h): a gradient re-reads where its primal read and
   pairs arrays its primal paired, or a value with its cotangent. */
Term *rev_checked(Term *t);
/* fe_mk_gadd of two cotangents of the same value, its map2s checked. */
Term *rev_gadd(Span s, Term *a, Term *b);

/* The operator (g, h. g +^ h) over T ((+) over R), its map2s checked:
   the sum of two cotangents of one value. */
Term *rev_jt_gplus(Span s, const Type *t);

/* The inner product <z, e> of two terms of the same ground type, of type
   R: z * e for R, the sum of the element-wise products for arrays, the
   sum over the components for tuples. z must be a variable (or built from
   projections of one); e is used once. */
Term *rev_jt_inner(Span s, Term *z, Term *e);

/* The J^T of the left fold with lambda lam (x, y. e) over R, initial
   value v and array a, against the cotangent z of its result; returns
   (fv cotangents..., cot v, cot a). Shared by rev_jt_reduce and
   rev_jt_foldl (see jt_foldl.c for the formulas). */
Term *rev_jt_fold(const RevJt *j, const Term *lam, Term *v, Term *a, Term *z);

#endif
