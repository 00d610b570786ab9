/* histogram.h: per-index sums of a map over indices as one scatter
   (optimizer/histogram.c). */
#ifndef UNA_HISTOGRAM_H
#define UNA_HISTOGRAM_H

#include "rw.h"

/* The map or map2 t rewritten, or NULL when the rule does not apply. */
Term *opt_histogram(OptRw *c, Term *t);

#endif
