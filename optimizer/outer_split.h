/* outer_split.h: outer products kept whole for the plan
   (optimizer/outer_split.c). */
#ifndef UNA_OUTER_SPLIT_H
#define UNA_OUTER_SPLIT_H

#include "rw.h"

/* Whether t is map (p. map (q. p * q) v) A (or q * p), v a variable or a
   global: an outer product, which the plan runs as one loop over its rows
   (backend/outer.c); fusion.c fuses nothing into it. */
bool opt_outer_rows(const Term *t);

/* map (a. lets in map (q. y * q) v) A, the lets scalar and unable to
   raise, rewritten map (y. map (q. y * q) v) (map (a. lets in y) A); NULL
   when t is not such a map. */
Term *opt_outer_split(OptRw *c, Term *t);

#endif
