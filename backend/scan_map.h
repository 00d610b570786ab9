/* scan_map.h: a map2 one of whose arrays is a scan (or a shift of one):
   the scan is computed into the map2's result array, and the map2's
   lambda is then applied there in place, so the scan takes no array of
   its own. ∇prod, map2 (*) (shift1L (scanr (*) 1 a)) (shift1R (scanl (*)
   1 a)), then needs the input, one scan and its result: 1.5 times input
   plus output at its peak. */
#ifndef UNA_SCAN_MAP_H
#define UNA_SCAN_MAP_H

#include "exec.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* Evaluates the map2 term t this way when it qualifies: an array argument
   is scanl/scanr (possibly under shift1L/shift1R) of an array that is not
   an inline map, with a monoid or kernel operator and a real initial
   value, and the map2's lambda is a kernel giving reals. Returns false
   (having evaluated nothing) when it does not qualify. Errors are those of
   the ordinary evaluation, raised in the same order. */
bool cpu_map2_of_scan(const Exec *ex, const Term *t, Value *frame, Value *result);

#endif
