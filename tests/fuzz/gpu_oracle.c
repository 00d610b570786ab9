/* gpu_oracle.c: the GPU oracle (gpu_oracle.h). */
#include "gpu_oracle.h"

#include <math.h>

#include "../../backend/cuda/gpu_eval.h"
#include "../../backend/eval.h"
#include "../../frontend/ir/error.h"
#include "compare.h"

/* d on args on the GPU path (gpu) or the CPU: true and *out, or false
   and *err. */
static bool call(const Def *d, const Value *args, bool gpu, Value *out, char **err) {
  FeTry t;
  if (fe_try(&t)) {
    if (gpu) {
      Value *dargs = NEW_ARRAY(Value, d->nparams + 1);
      for (int i = 0; i < d->nparams; i++) dargs[i] = gpu_to_device(args[i], fe_nospan);
      *out = gpu_call(d, dargs);
    } else {
      *out = cpu_call(d, args);
    }
    fe_untry(&t);
    *err = NULL;
    return true;
  }
  *err = fe_error_text(t.err);
  return false;
}

char *fz_gpu_check(const Def *d, const Value *args) {
  Value c, g;
  char *ce, *ge;
  call(d, args, false, &c, &ce);
  call(d, args, true, &g, &ge);
  if (ce || ge) {
    if (ce && ge && strcmp(ce, ge) == 0) return NULL;
    return una_sprintf("CPU: %s; GPU: %s", ce ? ce : val_to_string(c), ge ? ge : val_to_string(g));
  }
  if (!fz_close_values(c, g, fmax(1, fz_max_abs(c))))
    return una_sprintf("CPU gives %s; GPU gives %s", val_to_string(c), val_to_string(g));
  return NULL;
}
