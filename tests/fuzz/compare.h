/* compare.h: how the fuzzer's oracles compare two values (tests/fuzz/README.md,
   "Oracles and tolerances"). */
#ifndef UNA_FUZZ_COMPARE_H
#define UNA_FUZZ_COMPARE_H

#include "../../backend/value.h"

/* The largest finite magnitude among the reals of v (0 when none). */
double fz_max_abs(Value v);

/* Whether a and b have the same shape and close reals (booleans equal):
   relative 1e-9 with an absolute floor of 1e-12 times scale, nan with
   nan, infinities equal. */
bool fz_close_values(Value a, Value b, double scale);

#endif
