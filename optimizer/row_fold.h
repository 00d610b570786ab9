/* row_fold.h: a minimum or maximum of the rows a map makes, folded as
   they are made (optimizer/row_fold.c). */
#ifndef UNA_ROW_FOLD_H
#define UNA_ROW_FOLD_H

#include "rw.h"

/* The reduce t rewritten, or NULL when the rule does not apply. */
Term *opt_row_fold(OptRw *c, Term *t);

#endif
