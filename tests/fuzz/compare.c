/* compare.c: value comparison for the fuzzer's oracles (compare.h). */
#include "compare.h"

#include <math.h>

/* Whether the reals a and b agree at relative 1e-9 (absolute floor
   1e-12 times scale), nan with nan and equal infinities included. */
static bool close_reals(double a, double b, double scale) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-12 * scale;
}

double fz_max_abs(Value v) {
  switch (v.kind) {
  case V_REAL: return isfinite(v.u.r) ? fabs(v.u.r) : 0;
  case V_TUPLE: {
    double m = 0;
    for (int i = 0; i < v.u.t->n; i++) m = fmax(m, fz_max_abs(v.u.t->items[i]));
    return m;
  }
  case V_ARRAY: {
    val_host(v.u.a); /* a GPU result is read on the host */
    double m = 0;
    for (size_t i = 0; i < v.u.a->len; i++) m = fmax(m, fz_max_abs(val_array_get(v.u.a, i)));
    return m;
  }
  default: return 0;
  }
}

bool fz_close_values(Value a, Value b, double scale) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case V_REAL: return close_reals(a.u.r, b.u.r, scale);
  case V_BOOL: return a.u.b == b.u.b;
  case V_TUPLE:
    if (a.u.t->n != b.u.t->n) return false;
    for (int i = 0; i < a.u.t->n; i++)
      if (!fz_close_values(a.u.t->items[i], b.u.t->items[i], scale)) return false;
    return true;
  case V_ARRAY:
    if (a.u.a->len != b.u.a->len) return false;
    val_host(a.u.a);
    val_host(b.u.a);
    for (size_t i = 0; i < a.u.a->len; i++)
      if (!fz_close_values(val_array_get(a.u.a, i), val_array_get(b.u.a, i), scale)) return false;
    return true;
  default: return true;
  }
}
