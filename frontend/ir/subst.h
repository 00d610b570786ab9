/* subst.h: capture-free substitution on checked and target Terms. The
   copy gives every binder in t a fresh Sym, so a term may be pasted at
   several places and every binder stays unique. */
#ifndef UNA_SUBST_H
#define UNA_SUBST_H

#include "term.h"

/* A copy of t with each free occurrence of from[i] replaced by to[i]
   (to[i]'s type must equal from[i]'s), binders renamed fresh. */
Term *fe_subst(const Term *t, int n, Sym **from, Term **to);

/* A copy of t with fresh binders and nothing substituted. */
Term *fe_copy(const Term *t);

/* Appends to *out (grown with GC) the distinct free variables of t, in
   order of first occurrence; returns their count. Lambda parameters and
   let-bound names inside t are not free. */
int fe_free_vars(const Term *t, Sym ***out);

#endif
