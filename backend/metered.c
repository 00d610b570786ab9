/* metered.c: a call under the cost meter (metered.h). */
#include "metered.h"
#include "eval.h"

Value cpu_metered_call(const Def *d, const Value *args, CpuCost *cost) {
  CpuCost counts = {0, 0, 0, 0};
  Exec ex = cpu_exec_default;
  ex.meter = &counts;
  ex.monoid = ex.kernel = false; /* every element on the generic path, counted there */
  FeTry t;
  if (fe_try(&t)) {
    Value v = cpu_call_in(&ex, d, args);
    fe_untry(&t);
    *cost = counts;
    return v;
  }
  *cost = counts;
  fe_raise(t.err);
}
