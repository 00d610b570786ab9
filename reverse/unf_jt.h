/* unf_jt.h: the transpose Jacobians of Source UNF primitives on UNF^-1's
   environments (figure 10's J^T rules, reverse/unf_jt.c): the array of
   cotangents they read and add to, and the hook that UNF^-1's
   continuations call (unf/to_term_int.h). Internal to reverse/ (the UNF
   path's gradient assembly, reverse/unf_grad.c, uses it). */
#ifndef UNA_UNF_JT_H
#define UNA_UNF_JT_H

#include "jt.h"
#include "../unf/to_term_int.h"

/* Cotangents of the entries of a context, the last entry on top; NULL
   is zero (it costs nothing until something is added: 0 + c = c). An
   entry may instead hold a pending sparse term sp[i] (the cotangent of an
   index, reduce_by_index 0_a (+) 0 [i] [z], not yet bound): added into
   the array's cotangent, it becomes an update of that cotangent in place
   rather than a fresh array. */
typedef struct RevCot {
  Term **v;
  Term **sp;
  int len, cap;
} RevCot;

/* Pushes t (NULL: zero) as the cotangent of a new top entry. */
void rev_cot_push(RevCot *c, Term *t);
/* Binds every pending sparse term (before the cotangents are read). */
void rev_cot_flush(UnfTt *st, RevCot *c, Span s);

/* What the J^T rules need beyond UNF^-1's state (UnfTt.jt_ud points to
   one): the ∇ of lambda bodies and branches. */
typedef struct RevUnfJt {
  RevNablaFn nabla;
  void *ud;
} RevUnfJt;

/* The UnfJtHook: applies J^T p (p a Source UNF primitive, env the values
   of its input) to cot, a RevCot holding the cotangents of p's output,
   leaving those of its input; st->jt_ud is a RevUnfJt. Emits its
   bindings into st. */
void rev_unf_jt_apply(UnfTt *st, const Unf *p, const UnfEnv *env, void *cot);

#endif
