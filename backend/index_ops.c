/* index_ops.c: the builtins that address elements by index on the CPU:
   a[i] (INDEX), a[i:j] (SLICE, a view) and reduce_by_index. An index is
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

/* a[i:j]: a view of elements i..j-1 */
static Value op_slice(const Exec *ex, const Term *t, Value *frame) {
  Array *a = cpu_eval_array(ex, t->kids[0], frame);
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

enum { SCATTER_BLOCK = 2048 };

/* Whether every x[0..k) is an index of an array of len elements. */
CPU_VECTOR_LOOP static bool indices_hold(const double *x, size_t k, double len) {
  int bad = 0;
  for (size_t j = 0; j < k; j++) bad |= !(x[j] >= 0) | !(x[j] < len) | (x[j] != floor(x[j]));
  return !bad;
}

/* reduce_by_index D f v I V (kids f D v I V): D with each V[k] combined
   into position I[k], in order of k: D itself when the plan found it fresh
   (plan/note.h: in_place; O(length I)), else a copy. A fresh D from the
   GPU has a device copy that a write on the host would leave stale: it is
   copied too. */
static Value op_reduce_by_index(const Exec *ex, const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Array *d = cpu_eval_array(ex, t->kids[1], frame);
  (void)ex->eval(ex, t->kids[2], frame); /* the unit: a sequential fold needs none */
  Array *is = cpu_eval_array(ex, t->kids[3], frame);
  Array *vs = cpu_eval_array(ex, t->kids[4], frame);
  if (is->len != vs->len)
    fe_error(t->span, "reduce_by_index: %zu indices but %zu values", is->len, vs->len);
  if (ex->meter) cpu_meter_array(ex->meter, t, is->len);
  Array *out = d;
  if (!(t->note && t->note->in_place && !d->dev)) {
    out = val_new_array_of(t->type->elem, d->len, t->span);
    if (d->len && d->boxed) memcpy(out->v, d->v, sizeof(Value) * d->len);
    else if (d->len) memcpy(out->r, d->r, sizeof(double) * d->len);
  }
  const MonoidFns *m = d->boxed ? NULL : cpu_monoid_loops(ex, lam);
  size_t k = 0;
  if (m) /* blocks whose indices all hold, in one loop each; a block with a bad one goes on below */
    for (; k < is->len; k += SCATTER_BLOCK) {
      fe_poll_interrupt(t->span);
      size_t c = is->len - k < SCATTER_BLOCK ? is->len - k : SCATTER_BLOCK;
      if (!indices_hold(is->r + k, c, (double)d->len)) break;
      m->scatter(out->r, is->r + k, vs->r + k, c);
    }
  for (; k < is->len; k++) {
    if ((k & 4095) == 0) fe_poll_interrupt(t->span);
    size_t i = cpu_index_arg(t->span, is->r[k], d->len);
    if (m) {
      out->r[i] = m->op(out->r[i], vs->r[k]);
      continue;
    }
    frame[lam->syms[0]->slot] = val_array_get(out, i);
    frame[lam->syms[1]->slot] = val_array_get(vs, k);
    val_array_set(out, i, ex->eval(ex, lam->kids[0], frame));
  }
  return val_array(out);
}

Value cpu_index_prim(const Exec *ex, const Term *t, Value *frame) {
  switch (t->prim) {
  case PRIM_INDEX: return op_index(ex, t, frame);
  case PRIM_SLICE: return op_slice(ex, t, frame);
  case PRIM_REDUCE_BY_INDEX: return op_reduce_by_index(ex, t, frame);
  default: UNREACHABLE();
  }
}
