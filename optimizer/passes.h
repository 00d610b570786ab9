/* passes.h: one declaration per optimizer pass, each defined in its own
   file under optimizer/ and listed in optimizer/pipeline.c. */
#ifndef UNA_PASSES_H
#define UNA_PASSES_H

#include "../frontend/ir/term.h"

/* Partial evaluation (section 5.1): beta.c, forward.c, letnorm.c,
   tuples.c, dce.c. */
Term *opt_beta(const Term *t);
Term *opt_forward(const Term *t);
Term *opt_letnorm(const Term *t);
Term *opt_tuples(const Term *t);
Term *opt_dce(const Term *t);

/* Ring laws of the reals and constant folding (optimizer/algebra.c). */
Term *opt_algebra(const Term *t);
/* Figure 12's array rules: OnesLike/ZerosLike, identity maps, projections
   of tuple-building maps (optimizer/arrays.c). */
Term *opt_arrays(const Term *t);
/* map/map2/foldl fusion with a single-use inner map (optimizer/fusion.c). */
Term *opt_hoist(const Term *t);
Term *opt_fusion(const Term *t);
/* Common subexpressions of pure let right-hand sides (optimizer/cse.c). */
Term *opt_cse(const Term *t);
/* An expensive elementwise value computed by two maps over one array,
   computed once (optimizer/share.c). */
Term *opt_share(const Term *t);
/* After the fixpoint, once: single-use array lets that cannot raise
   substituted at their use (optimizer/forward.c), so that ∇prod reads as
   one expression. */
Term *opt_sink(const Term *t);
/* After the fixpoint, once: a for loop whose states a scanl computes again
   is read from the scan (optimizer/loop_states.c). */
Term *opt_loop_states(const Term *t);
/* After the fixpoint: matrix-vector products out of maps' functions, as
   matrix products (optimizer/fission.c); the fixpoint runs again after. */
Term *opt_fission_pass(const Term *t);
/* (passes are declared above this line) */

#endif
