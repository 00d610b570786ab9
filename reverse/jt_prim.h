/* jt_prim.h: the transpose Jacobians of the builtins that the UNF path
   carries as generic prim nodes (unf_kinds.def's PRIM): one rule per
   builtin, in a table (reverse/jt_prim.c), written in the files named
   after their constructs:
     jt_index.c     index, slice, reduce_by_index
     jt_shape.c     transpose, concat, zip, unzip, shift1L, shift1R
     jt_map_any.c   map, map2, map3 over any element types
     jt_fold_any.c  reduce, foldl, scanl, scanr over any types
     jt_reduce_minmax.c  reduce of rows by an elementwise min or max
     jt_loop.c      loop ... for, loop ... while
   Every rule is an ordinary Una term built from builtins of the language
   (the reverse of indexing is a reduce_by_index, a loop's saved states are
   a scanl), so printed gradients re-parse and run on every backend.

   The convention of jt.h holds: the result is ONE term with the
   cotangents of the active free variables of the lambdas first (j->fv),
   then those of the active operands in order (ops[k] with active[k]);
   one component: that term itself; none: NULL. */
#ifndef UNA_JT_PRIM_H
#define UNA_JT_PRIM_H

#include "jt.h"

typedef struct RevJtPrim {
  RevJt j;            /* span, the active free variables, ∇ */
  const Term *t;      /* the primal PRIM term over atoms: lambdas with
                         their free variables substituted, operands atoms */
  Term **ops;         /* the operands (the kids that are not lambdas), atoms */
  const bool *active; /* which operands get a cotangent */
  int nops;
  Term *z;            /* the cotangent of the result, a variable */
} RevJtPrim;

/* The J^T of a kept call of g (jt_call.c): vjp_g (ops..., z), the
   cotangents of the active operands (a tuple, the single one when one is
   active; NULL when none is). */
Term *rev_jt_call(Span s, const Def *g, Term **ops, const bool *active, int nops, Term *z);

/* The rule of builtin p, or NULL when it has none. */
typedef Term *(*RevJtPrimRule)(const RevJtPrim *p);
RevJtPrimRule rev_jt_prim_rule(Prim p);

/* The rules, one per construct file. */
Term *rev_jt_index(const RevJtPrim *p);
Term *rev_jt_slice(const RevJtPrim *p);
Term *rev_jt_reduce_by_index(const RevJtPrim *p);
Term *rev_jt_transpose(const RevJtPrim *p);
Term *rev_jt_concat(const RevJtPrim *p);
Term *rev_jt_zip(const RevJtPrim *p);
Term *rev_jt_unzip(const RevJtPrim *p);
Term *rev_jt_shift(const RevJtPrim *p);
Term *rev_jt_map_any(const RevJtPrim *p);
Term *rev_jt_fold_any(const RevJtPrim *p);
/* reduce of rows by an elementwise min or max (jt_reduce_minmax.c), or
   NULL when p is not one */
Term *rev_jt_reduce_minmax(const RevJtPrim *p);
Term *rev_jt_scanl(const RevJtPrim *p);
Term *rev_jt_scanr(const RevJtPrim *p);
Term *rev_jt_loop_for(const RevJtPrim *p);
Term *rev_jt_loop_while(const RevJtPrim *p);

/* The fold of a loop (jt_fold_any.c): lam (x, i. e) run from ops[0] over
   the index array idx (a term; no cotangent); the other operands get
   zero. */
Term *rev_jt_fold_loop(const RevJtPrim *p, const Term *lam, Term *idx);

/* The gathers of lam's body from the free arrays j->fv (jt_gather.c):
   the reads a[e] of a free [R] a (m[e][e2] of a free [[R]] m), at indices e over the parameters and
   free variables, each evaluated at most once per element (not in a loop
   or an inner lambda; an [R]'s read under an if, && or || with its
   guard), for the free arrays used only so. */
typedef struct RevGathers {
  bool *gathered;       /* per j->fv: its cotangent comes from the reads */
  int nreads;
  Sym **r;              /* per read: a fresh scalar standing for the value read */
  int *read_fv;         /* per read: which j->fv it reads */
  const Term **index;   /* per read: its index, over lam's parameters */
  const Term **index2;  /* per read of a matrix's element m[e][e2]: e2, else NULL */
  const Term **guard;   /* per read: the condition (over lam's parameters) under which the body reads it, else NULL */
  Term *body;           /* lam's body with each read replaced by its scalar */
} RevGathers;
/* False when there is none. */
bool rev_jt_gathers(const RevJt *j, const Term *lam, RevGathers *g);

/* ---- shared by the rules ---- */

/* The vector-Jacobian product of a lambda body: with the body e of lam
   read with its parameters renamed params[0..n) and c a variable of e's
   type (the cotangent, a constant here), ∇ <c, e> with respect to the
   params[k] with want[k] (want NULL: all), then j->fv: a term of
   rev_jt_vjp_count components (a tuple, or the single one), NULL when
   there are none. */
Term *rev_jt_vjp(const RevJt *j, const Term *lam, Sym **params, const bool *want, Term *c);

/* t (a term of its own, shared with nothing) with every builtin that may
   raise marked checked (term.h), for a replay of what the primal evaluated
   (a body's vector-Jacobian product at an element or a saved state, the
   scan that saves a fold's states): the primal ran the same computation
   without error, and the cotangents follow its shapes, so none can raise
   there, and the optimizer may drop what is not used. Effects (load,
   save) are not marked. rev_jt_vjp's results are marked. */
Term *rev_jt_replayed(Term *t);
int rev_jt_vjp_count(const RevJt *j, int n, const bool *want);

/* The result of a rule from its parts: fv cotangents fvc[0..j->nfv)
   (entries may not be NULL) and the operand cotangents opc[k] of the
   active operands (NULL: zero, built like ops[k]). */
Term *rev_jt_prim_result(const RevJtPrim *p, Term **fvc, Term **opc);

/* For the cotangents of the free variables from an array W of vjp
   results whose components first.. are theirs: fvc[k] = the sum of
   component first + k over W (fvc needs room for j->nfv). */
void rev_jt_prim_fv_sums(const RevJtPrim *p, Sym *w, int ncomp, int first, Term **fvc);

/* map (t. pick(t, i)) w: component i of each element of w. */
Term *rev_jt_column(Span s, Sym *w, int ncomp, int i);

/* A fresh use of the atom t (a variable or a constant). */
Term *rev_jt_use(const Term *t);

#endif
