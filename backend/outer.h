/* outer.h: outer products that the plan recognized (plan/note.h: OUTER),
   computed by one loop over their rows (outer.c). */
#ifndef UNA_OUTER_H
#define UNA_OUTER_H

#include "exec.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* The outer product that the map t's note says it is, computed into
   *out; false when it must run as written: on the GPU, under the cost
   meter or with the kernels off, or when an array is empty. */
bool cpu_outer_map(const Exec *ex, const Term *t, Value *frame, Value *out);

/* How many outer products cpu_outer_map has computed in this process
   (the tests read it to see which path ran). */
size_t cpu_outer_products(void);

#endif
