/* index_ops.c: the builtins that address elements by index on the CPU:
   a[i] (INDEX), a[i:j] (SLICE, a view) and reduce_by_index (scatter.c). An index is
   an R that must be an integer in bounds; anything else is a run-time
   error at the term's span (the '[' of a[i]), worded as LANGUAGE.md
   section 4 says. */
#include "array_ops.h"
#include "array_int.h"
#include "cost_meter.h"
#include "plan/note.h"

void cpu_bad_index(Span s, double i, double len) {
  char b[40];
  una_format_real(b, sizeof b, i);
  if (i != floor(i) || isinf(i)) fe_error(s, "index %s is not an integer", b);
  fe_error(s, "index %s out of bounds for an array of length %.0f", b, len);
}

size_t cpu_index_arg(Span s, double i, size_t len) {
  if (__builtin_expect(!(i >= 0 && i < (double)len && i == floor(i)), 0)) cpu_bad_index(s, i, (double)len);
  return (size_t)i;
}

/* a[i] */
static Value op_index(const Exec *ex, const Term *t, Value *frame) {
  Array *a = cpu_eval_array(ex, t->kids[0], frame);
  double i = ex->eval(ex, t->kids[1], frame).u.r;
  if (ex->meter) cpu_meter_array(ex->meter, t, 1);
  return val_array_get(a, cpu_index_arg(t->span, i, a->len));
}

/* A slice bound: an integer in 0..len (+inf, the parser's omitted end,
   is len). */
static bool bound_ok(double x, size_t len) {
  return x == floor(x) && x >= 0 && x <= (double)len;
}

Value cpu_slice(const Exec *ex, const Term *t, Value *frame, bool fetch) {
  Value v = ex->eval(ex, t->kids[0], frame);
  ASSERT(v.kind == V_ARRAY);
  Array *a = v.u.a;
  if (fetch) val_host(a);
  double i = ex->eval(ex, t->kids[1], frame).u.r;
  double j = ex->eval(ex, t->kids[2], frame).u.r;
  if (ex->meter) cpu_meter_array(ex->meter, t, 1);
  if (j == INFINITY) j = (double)a->len;
  char bi[40], bj[40];
  una_format_real(bi, sizeof bi, i);
  una_format_real(bj, sizeof bj, j);
  if (i != floor(i) || isinf(i)) fe_error(t->span, "index %s is not an integer", bi);
  if (j != floor(j) || isinf(j)) fe_error(t->span, "index %s is not an integer", bj);
  if (i > j) fe_error(t->span, "slice %s:%s is empty backwards", bi, bj);
  if (!bound_ok(i, a->len) || !bound_ok(j, a->len))
    fe_error(t->span, "slice %s:%s out of bounds for an array of length %zu", bi, bj, a->len);
  return val_array(val_view(a, (size_t)i, (size_t)(j - i)));
}

/* a[i:j]: a view of elements i..j-1 */
static Value op_slice(const Exec *ex, const Term *t, Value *frame) { return cpu_slice(ex, t, frame, true); }

Value cpu_index_prim(const Exec *ex, const Term *t, Value *frame) {
  switch (t->prim) {
  case PRIM_INDEX: return op_index(ex, t, frame);
  case PRIM_SLICE: return op_slice(ex, t, frame);
  case PRIM_REDUCE_BY_INDEX: return cpu_reduce_by_index(ex, t, frame);
  default: UNREACHABLE();
  }
}
