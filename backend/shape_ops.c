/* shape_ops.c: the builtins that rearrange whole arrays on the CPU:
   transpose, concat, zip, unzip, map3, and stop_gradient of a value that
   is not an R (the value itself: it only matters to differentiation).

   map3 of reals whose lambda is scalar runs its program (kernel.h:
   cpu_kernel_compile_params) one element at a time; otherwise the tree
   evaluator does.

   transpose of a [[R]] writes one buffer, block by block so that both
   sides stay in cache, and returns rows that are views into it: the
   result is contiguous, row after row. */
#include "array_ops.h"
#include "array_int.h"
#include "cost_meter.h"
#include "kernel.h"
#include "plan/note.h"

enum { TILE = 32 };

/* The rows of m, checked to be of one length (returned in *k). */
static void rows_of(const Term *t, const Array *m, size_t *k) {
  *k = 0;
  for (size_t i = 0; i < m->len; i++) {
    size_t li = m->v[i].u.a->len;
    if (i == 0) *k = li;
    else if (li != *k)
      fe_error(t->span, "transpose: the rows differ in length: row 0 has %zu elements, row %zu has %zu",
               *k, i, li);
  }
}

static Value op_transpose(const Exec *ex, const Term *t, Value *frame) {
  Array *m = cpu_eval_array(ex, t->kids[0], frame);
  size_t k;
  rows_of(t, m, &k);
  size_t n = m->len;
  if (ex->meter) cpu_meter_array(ex->meter, t, n * k);
  const Type *et = t->type->elem->elem;
  Array *out = val_new_boxed_array(k, t->span);
  if (n == 0) return val_array(out); /* no rows: no columns either */
  if (et->kind != TY_REAL) {
    for (size_t j = 0; j < k; j++) {
      Array *r = val_new_array_of(et, n, t->span);
      for (size_t i = 0; i < n; i++) val_array_set(r, i, val_array_get(m->v[i].u.a, j));
      out->v[j] = val_array(r);
    }
    return val_array(out);
  }
  if (k > 0 && n > SIZE_MAX / sizeof(double) / k) val_alloc_error((double)n * (double)k, sizeof(double), t->span);
  Array *flat = val_new_real_array(n * k, t->span);
  const double **src = NEW_ARRAY(const double *, n);
  for (size_t i = 0; i < n; i++) {
    val_host(m->v[i].u.a);
    src[i] = m->v[i].u.a->r;
  }
  for (size_t i0 = 0; i0 < n; i0 += TILE) {
    fe_poll_interrupt(t->span);
    size_t i1 = i0 + TILE < n ? i0 + TILE : n;
    for (size_t j0 = 0; j0 < k; j0 += TILE) {
      size_t j1 = j0 + TILE < k ? j0 + TILE : k;
      for (size_t i = i0; i < i1; i++)
        for (size_t j = j0; j < j1; j++) flat->r[j * n + i] = src[i][j];
    }
  }
  for (size_t j = 0; j < k; j++) out->v[j] = val_array(val_view(flat, j * n, n));
  return val_array(out);
}

/* d[0..n) = s[0..n), arrays that do not overlap. Large arrays start on a
   page boundary, so a destination a few elements past the start of a page
   (concat [x] a: a copied one element further on) is "4K aliased" with
   its source: a forward copy loads each element just after storing to an
   address with the same low 12 bits, and stalls on every one (memcpy ran
   at a tenth of its speed in GradBench's ode). Such a copy runs backward. */
/* (a loop the compiler must not turn back into a call of memmove) */
CPU_VECTOR_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns"))) static void copy_back(
    double *restrict d, const double *restrict s, size_t n) {
  for (size_t i = n; i-- > 0;) d[i] = s[i];
}

static void copy_reals(double *d, const double *s, size_t n) {
  uintptr_t ahead = ((uintptr_t)d - (uintptr_t)s) & 4095;
  if (n >= 512 && ahead > 0 && ahead < 512) copy_back(d, s, n);
  else memcpy(d, s, sizeof(double) * n);
}

/* The arrays of a tree of concats (concat (concat a b) (concat c d)),
   evaluated left to right, the order the nested concats take: n of them
   into v (grown as needed); fetch: their elements brought to the host. */
static void concat_leaves(const Exec *ex, const Term *t, Value *frame, bool fetch, Array ***v, int *n, int *cap) {
  fe_stack_check(t->span);
  for (int i = 0; i < 2; i++) {
    const Term *k = t->kids[i];
    if (k->kind == T_PRIM && k->prim == PRIM_CONCAT) {
      concat_leaves(ex, k, frame, fetch, v, n, cap);
      continue;
    }
    if (*n == *cap) {
      Array **g = NEW_ARRAY(Array *, 2 * *cap);
      memcpy(g, *v, sizeof(Array *) * (size_t)*n);
      *v = g;
      *cap *= 2;
    }
    Value a = ex->eval(ex, k, frame);
    ASSERT(a.kind == V_ARRAY);
    if (fetch) val_host(a.u.a);
    (*v)[(*n)++] = a.u.a;
  }
}

Array **cpu_concat_leaves(const Exec *ex, const Term *t, Value *frame, bool fetch, int *n) {
  int cap = 4;
  Array **v = NEW_ARRAY(Array *, cap);
  *n = 0;
  concat_leaves(ex, t, frame, fetch, &v, n, &cap);
  return v;
}

Array *cpu_concat_join(const Term *t, Array *const *leaves, int n) {
  size_t len = 0;
  for (int i = 0; i < n; i++) len += leaves[i]->len;
  Array *out = val_new_array_of(t->type->elem, len, t->span);
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    const Array *a = leaves[i];
    if (!a->len) continue;
    if (out->boxed) memcpy(out->v + at, a->v, sizeof(Value) * a->len);
    else copy_reals(out->r + at, a->r, a->len);
    at += a->len;
  }
  return out;
}

/* A concat, or a tree of them (GradBench's ba lays out its Jacobian's
   columns so), made in one array: each element copied once. Under :cost,
   each concat is counted as written. */
static Value op_concat(const Exec *ex, const Term *t, Value *frame) {
  Array *two[2], **leaves = two;
  int n = 0, cap = 2;
  if (ex->meter) {
    two[0] = cpu_eval_array(ex, t->kids[0], frame);
    two[1] = cpu_eval_array(ex, t->kids[1], frame);
    n = 2;
    cpu_meter_array(ex->meter, t, two[0]->len + two[1]->len);
  } else {
    concat_leaves(ex, t, frame, true, &leaves, &n, &cap);
  }
  return val_array(cpu_concat_join(t, leaves, n));
}

static Value op_zip(const Exec *ex, const Term *t, Value *frame) {
  Array *a = cpu_eval_array(ex, t->kids[0], frame);
  Array *b = cpu_eval_array(ex, t->kids[1], frame);
  if (a->len != b->len) fe_error(t->span, "zip: lengths %zu and %zu differ", a->len, b->len);
  if (ex->meter) cpu_meter_array(ex->meter, t, a->len);
  Array *out = val_new_boxed_array(a->len, t->span);
  for (size_t i = 0; i < a->len; i++) {
    Value p[2] = {val_array_get(a, i), val_array_get(b, i)};
    out->v[i] = val_tuple(2, p);
  }
  return val_array(out);
}

static Value op_unzip(const Exec *ex, const Term *t, Value *frame) {
  Array *p = cpu_eval_array(ex, t->kids[0], frame);
  if (ex->meter) cpu_meter_array(ex->meter, t, p->len);
  Value r[2];
  for (int c = 0; c < 2; c++) {
    Array *out = val_new_array_of(t->type->elems[c]->elem, p->len, t->span);
    for (size_t i = 0; i < p->len; i++) val_array_set(out, i, p->v[i].u.t->items[c]);
    r[c] = val_array(out);
  }
  return val_tuple(2, r);
}

static Value op_map3(const Exec *ex, const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Array *a[3];
  for (int c = 0; c < 3; c++) a[c] = cpu_eval_array(ex, t->kids[c + 1], frame);
  cpu_check_map3_lengths(t, a[0]->len, a[1]->len, a[2]->len);
  size_t n = a[0]->len;
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  Array *out = val_new_array_of(t->type->elem, n, t->span);
  CpuKernelRun run;
  const CpuKernel *ik = lam->note ? lam->note->indexed : NULL;
  if (ik && n > 0 && ex->kernel && !ex->meter && !ex->gpu && !a[0]->boxed && !a[1]->boxed && !a[2]->boxed &&
      cpu_kernel_bind(ex, ik, frame, &run)) { /* by blocks: the index, and the arrays read there */
    cpu_map_indices(ex, &run, t, n, out);
    return val_array(out);
  }
  const CpuKernel *k = ex->kernel && !ex->meter && !out->boxed && !a[0]->boxed && !a[1]->boxed && !a[2]->boxed
                           ? cpu_step_kernel_for(lam)
                           : NULL;
  if (k && cpu_kernel_bind(ex, k, frame, &run)) { /* compiled, element by element */
    for (size_t i = 0; i < n; i++) {
      if ((i & 4095) == 0) fe_poll_interrupt(t->span);
      double p[3] = {a[0]->r[i], a[1]->r[i], a[2]->r[i]};
      cpu_kernel_step(&run, p, &out->r[i]);
    }
    fe_poll_interrupt(t->span);
    return val_array(out);
  }
  for (size_t i = 0; i < n; i++) {
    if ((i & 255) == 0) fe_poll_interrupt(t->span);
    for (int c = 0; c < 3; c++) frame[lam->syms[c]->slot] = val_array_get(a[c], i);
    val_array_set(out, i, ex->eval(ex, lam->kids[0], frame));
  }
  return val_array(out);
}

Value cpu_shape_prim(const Exec *ex, const Term *t, Value *frame) {
  switch (t->prim) {
  case PRIM_TRANSPOSE: return op_transpose(ex, t, frame);
  case PRIM_CONCAT: return op_concat(ex, t, frame);
  case PRIM_ZIP: return op_zip(ex, t, frame);
  case PRIM_UNZIP: return op_unzip(ex, t, frame);
  case PRIM_MAP3: return op_map3(ex, t, frame);
  case PRIM_STOPGRAD_ANY: return ex->eval(ex, t->kids[0], frame);
  default: UNREACHABLE();
  }
}
