/* raises.h: a value kept only for its errors, reduced to what raises them
   (optimizer/raises.c; dce.c calls it on dead lets that may raise). */
#ifndef UNA_RAISES_H
#define UNA_RAISES_H

#include "../frontend/ir/term.h"

/* A term that raises what t raises, in the same order and word for word,
   and does no more work than t (its value is not t's: only its errors
   count); NULL when t cannot raise. */
Term *opt_errors_of(const Term *t);

#endif
