/* inline.h: the inliner: replaces every call of a user function by the
   callee's body, so that the AD pipeline sees one call-free body. */
#ifndef UNA_INLINE_H
#define UNA_INLINE_H

#include "ir/term.h"

/* A new Def with d's name, span and parameters (the same Syms) whose body
   is d's body with every T_CALL replaced by the callee's body (its own calls
   inlined first), the arguments bound by lets to fresh variables in order
   (each argument is computed once, as before). Every binder of the result
   is fresh (d's body is not shared or changed) and slots are assigned, so
   the result can be evaluated at once. T_GRAD nodes stay as they are (their
   arguments are inlined). Linear in the size of the result. */
Def *fe_inline(const Def *d);

#endif
