/* gpu_oracle.c: the GPU oracle (gpu_oracle.h). */
#include "gpu_oracle.h"

#include <math.h>

#include "../../backend/cuda/gpu_eval.h"
#include "../../backend/eval.h"
#include "../../frontend/ir/error.h"
#include "../testlib.h"
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

/* v with each real x moved to x (1 + 1e-12 s), s alternating +1 and -1
   from *sign on (arrays copied). */
static Value perturbed(Value v, double *sign) {
  switch (v.kind) {
  case V_REAL:
    *sign = -*sign;
    return val_real(v.u.r * (1 + 1e-12 * *sign));
  case V_TUPLE: {
    Value t = tl_copy_value(v);
    for (int i = 0; i < t.u.t->n; i++) t.u.t->items[i] = perturbed(t.u.t->items[i], sign);
    return t;
  }
  case V_ARRAY: {
    Value a = tl_copy_value(v);
    for (size_t i = 0; i < a.u.a->len; i++) val_array_set(a.u.a, i, perturbed(val_array_get(a.u.a, i), sign));
    return a;
  }
  default: return v;
  }
}

/* Whether d is ill-conditioned at args: its CPU value c moves beyond the
   tolerance when the arguments move by relative 1e-12 (a reassociated
   reduce is amplified as much). */
static bool ill_conditioned(const Def *d, const Value *args, Value c) {
  double sign = 1;
  Value *pa = NEW_ARRAY(Value, d->nparams + 1);
  for (int i = 0; i < d->nparams; i++) pa[i] = perturbed(args[i], &sign);
  Value p;
  char *pe;
  return !call(d, pa, false, &p, &pe) || !fz_close_values(c, p, fmax(1, fz_max_abs(c)));
}

char *fz_gpu_check(const Def *d, const Value *args, long *ill) {
  Value c, g;
  char *ce, *ge;
  call(d, args, false, &c, &ce);
  call(d, args, true, &g, &ge);
  if (ce || ge) {
    if (ce && ge && strcmp(ce, ge) == 0) return NULL;
    return una_sprintf("CPU: %s; GPU: %s", ce ? ce : val_to_string(c), ge ? ge : val_to_string(g));
  }
  if (!fz_close_values(c, g, fmax(1, fz_max_abs(c)))) {
    if (ill_conditioned(d, args, c)) {
      (*ill)++;
      return NULL;
    }
    return una_sprintf("CPU gives %s; GPU gives %s", val_to_string(c), val_to_string(g));
  }
  return NULL;
}
