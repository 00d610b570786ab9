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

/* Which calls fe_inline_some keeps: the calls of a Def whose body, with
   the calls inside it that are inlined, has more than `limit` nodes, or
   that the inlined Def's own body calls n >= 2 times with n times that
   size over `total`; and for which can_keep (when not NULL) says yes. */
typedef struct FeInlinePolicy {
  long limit, total;
  bool (*can_keep)(const Def *callee, void *ud);
  void *ud;
} FeInlinePolicy;

/* fe_inline, keeping the calls that p says to keep (with their arguments
   inlined). Deciding is linear in the Defs' own sizes, so a program whose
   full inlining would be exponential (each function calling the previous
   one twice) stays linear. p NULL: every call is inlined. */
Def *fe_inline_some(const Def *d, const FeInlinePolicy *p);

#endif
