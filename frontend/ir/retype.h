/* retype.h: an independent re-check of checked and target Defs, run after
   every pass in the tests (the "type checker after every pass" of test
   builds): catches a pass that builds an ill-typed or ill-scoped tree. */
#ifndef UNA_RETYPE_H
#define UNA_RETYPE_H

#include "term.h"

/* Re-checks d: every node has a type that agrees with its children's by the
   checker's rules (plus T_LAM values of TY_FUN type and T_APP); every
   variable is bound in scope (parameters, let, let-tuple and lambda
   parameters); every binder is bound once in the Def and has its own slot
   below d->nslots; the body's type is d->ret. Returns normally when all
   holds; otherwise raises FeError "internal: ..." at the offending node,
   naming its kind and the mismatch. */
void fe_retype(const Def *d);

#endif
