/* unroll.h: small loops and maps unrolled before differentiation. In a
   map body, `loop x = e0 for j < n do e` with a literal count n of at
   most 8 and a body of at most 200 nodes becomes the lets
   x0 = e0, x1 = e[x0/x, 0/j], ..., its value x_n; `map (j. e) (iota n)`
   the array literal [e[0/j], ..., e[n-1/j]]: the same evaluations in the
   same order, and their reads (a[i + j] in a stencil) are reads of the
   body at indices over the parameters, no longer lost in a loop or an
   inner lambda.

   Used by the gathers of a map body (jt_gather.c). */
#ifndef UNA_REV_UNROLL_H
#define UNA_REV_UNROLL_H

#include "../frontend/ir/term.h"

/* t with every such loop and map unrolled (t itself when it has none). */
Term *rev_unroll_small(const Term *t);

#endif
