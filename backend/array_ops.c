/* array_ops.c: the array builtins on the CPU (see array_ops.h).

   Each combinator picks, in order: a dedicated loop when its lambda is a
   builtin monoid (x + y, x * y, max, min; the checker turns (+) into such a
   lambda), the block kernel when the lambda body is scalar (kernel.h), else
   the generic path: the body evaluated per element with the parameters'
   frame slots set.

   reduce's bracketing (the same on every path, so all three agree bit for
   bit): CPU_BLOCK lanes; lane 0 starts as f(v, a[0]), lane j as a[j]; the
   element at i >= CPU_BLOCK is folded into lane i mod CPU_BLOCK; finally the
   lanes are folded left to right. For n <= CPU_BLOCK this is exactly the
   left fold. foldl, scanl and scanr are strictly sequential.

   While the cost meter runs (cost_meter.h), each builtin counts its own
   cost once, from its length, and the monoid loops and kernels are off, so
   that every element runs on the generic path and is counted there. */
#include "array_ops.h"
#include "cost_meter.h"
#include "eval.h"
#include "kernel.h"
#include "npy.h"
#include "rand.h"
#include "scalar.h"

#define B CPU_BLOCK

static bool use_monoid = true, use_kernel = true;

void cpu_set_fast_paths(bool monoid, bool kernel) {
  use_monoid = monoid;
  use_kernel = kernel;
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* ---- monoid detection and loops ---- */

CpuMonoid cpu_monoid_of(const Term *lam, bool *swapped) {
  *swapped = false;
  if (lam->kind != T_LAM || lam->nsyms != 2 || lam->nkids < 1) return CPU_M_NONE;
  const Sym *x = lam->syms[0], *y = lam->syms[1];
  if (!x->type || x->type->kind != TY_REAL || !y->type || y->type->kind != TY_REAL) return CPU_M_NONE;
  const Term *b = lam->kids[0];
  if (b->kind != T_PRIM || b->nkids != 2) return CPU_M_NONE;
  const Term *l = b->kids[0], *r = b->kids[1];
  if (l->kind != T_VAR || r->kind != T_VAR) return CPU_M_NONE;
  if (l->sym == x && r->sym == y) *swapped = false;
  else if (l->sym == y && r->sym == x) *swapped = true;
  else return CPU_M_NONE;
  switch (b->prim) {
  case PRIM_ADD: return CPU_M_ADD;
  case PRIM_MUL: return CPU_M_MUL;
  case PRIM_MAX: return CPU_M_MAX;
  case PRIM_MIN: return CPU_M_MIN;
  default: return CPU_M_NONE;
  }
}

/* OP(l, r): the lambda body with x = l, y = r. */
#define OP_ADD(l, r) ((l) + (r))
#define OP_MUL(l, r) ((l) * (r))
#define OP_MAX(l, r) cpu_max((l), (r))
#define OP_MAXSW(l, r) cpu_max((r), (l))
#define OP_MIN(l, r) cpu_min((l), (r))
#define OP_MINSW(l, r) cpu_min((r), (l))

#define DEFINE_MONOID(NAME, OP)                                                 \
  static double reduce_##NAME(double v, const double *a, size_t n, Span s) {   \
    double acc[B];                                                              \
    size_t lanes = min_size(n, B), i;                                           \
    acc[0] = OP(v, a[0]);                                                       \
    for (size_t j = 1; j < lanes; j++) acc[j] = a[j];                           \
    for (i = lanes; i + B <= n; i += B) {                                       \
      const double *p = a + i;                                                  \
      for (int j = 0; j < B; j++) acc[j] = OP(acc[j], p[j]);                    \
      if ((i & (64 * B - 1)) == 0) fe_poll_interrupt(s);                        \
    }                                                                           \
    for (size_t j = 0; i + j < n; j++) acc[j] = OP(acc[j], a[i + j]);           \
    double r = acc[0];                                                          \
    for (size_t j = 1; j < lanes; j++) r = OP(r, acc[j]);                       \
    return r;                                                                   \
  }                                                                             \
  static double foldl_##NAME(double v, const double *a, size_t n, Span s) {    \
    double acc = v;                                                             \
    for (size_t i = 0; i < n; i++) {                                            \
      if ((i & 16383) == 0) fe_poll_interrupt(s);                               \
      acc = OP(acc, a[i]);                                                      \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  static void scanl_##NAME(double v, const double *a, size_t n, double *out,   \
                           Span s) {                                            \
    double acc = v;                                                             \
    out[0] = acc;                                                               \
    for (size_t i = 0; i < n; i++) {                                            \
      if ((i & 16383) == 0) fe_poll_interrupt(s);                               \
      out[i + 1] = acc = OP(acc, a[i]);                                         \
    }                                                                           \
  }                                                                             \
  static void scanr_##NAME(double v, const double *a, size_t n, double *out,   \
                           Span s) {                                            \
    double acc = v;                                                             \
    out[n] = acc;                                                               \
    for (size_t i = n; i-- > 0;) {                                              \
      if ((i & 16383) == 0) fe_poll_interrupt(s);                               \
      out[i] = acc = OP(a[i], acc);                                             \
    }                                                                           \
  }

DEFINE_MONOID(add, OP_ADD)
DEFINE_MONOID(mul, OP_MUL)
DEFINE_MONOID(max, OP_MAX)
DEFINE_MONOID(maxsw, OP_MAXSW)
DEFINE_MONOID(min, OP_MIN)
DEFINE_MONOID(minsw, OP_MINSW)

typedef struct MonoidFns {
  double (*reduce)(double, const double *, size_t, Span);
  double (*foldl)(double, const double *, size_t, Span);
  void (*scanl)(double, const double *, size_t, double *, Span);
  void (*scanr)(double, const double *, size_t, double *, Span);
} MonoidFns;

static const MonoidFns monoids[6] = {
    {reduce_add, foldl_add, scanl_add, scanr_add},
    {reduce_mul, foldl_mul, scanl_mul, scanr_mul},
    {reduce_max, foldl_max, scanl_max, scanr_max},
    {reduce_maxsw, foldl_maxsw, scanl_maxsw, scanr_maxsw},
    {reduce_min, foldl_min, scanl_min, scanr_min},
    {reduce_minsw, foldl_minsw, scanl_minsw, scanr_minsw},
};

/* The loops for lam when it is a builtin monoid and the loops are enabled.
   x + y and x * y are commutative in IEEE arithmetic, so their order does
   not matter; for max and min it does (signed zeros, nan). */
static const MonoidFns *monoid_loops(const Term *lam) {
  if (!use_monoid || cpu_metering) return NULL;
  bool sw;
  switch (cpu_monoid_of(lam, &sw)) {
  case CPU_M_NONE: return NULL;
  case CPU_M_ADD: return &monoids[0];
  case CPU_M_MUL: return &monoids[1];
  case CPU_M_MAX: return &monoids[sw ? 3 : 2];
  case CPU_M_MIN: return &monoids[sw ? 5 : 4];
  }
  return NULL;
}

/* Binds lam's kernel when it has one and kernels are enabled. */
static bool kernel_bind(const Term *lam, Value *frame, CpuKernelRun *run) {
  if (!use_kernel || cpu_metering) return false;
  const CpuKernel *k = cpu_kernel_for(lam);
  return k && cpu_kernel_bind(k, frame, run);
}

/* The generic path's application of a two-parameter lambda. */
static Value apply2(const Term *lam, Value *frame, Value x, Value y) {
  frame[lam->syms[0]->slot] = x;
  frame[lam->syms[1]->slot] = y;
  return cpu_eval(lam->kids[0], frame);
}

static Array *eval_array(const Term *t, Value *frame) {
  Value v = cpu_eval(t, frame);
  ASSERT(v.kind == V_ARRAY);
  return v.u.a;
}

/* ---- map and map2 ---- */

/* Runs a bound kernel over a (and b) into out. */
static void kernel_map(CpuKernelRun *run, const Term *t, const Array *a, const Array *b, Array *out) {
  size_t n = a->len;
  ASSERT(!a->boxed && (!b || !b->boxed));
  if (!cpu_kernel_returns_bool(run->k)) {
    ASSERT(!out->boxed);
    for (size_t i = 0; i < n; i += B) {
      if ((i & (64 * B - 1)) == 0) fe_poll_interrupt(t->span);
      cpu_kernel_block(run, a->r + i, b ? b->r + i : NULL, min_size(B, n - i), out->r + i);
    }
    return;
  }
  double tmp[B];
  for (size_t i = 0; i < n; i += B) {
    if ((i & (64 * B - 1)) == 0) fe_poll_interrupt(t->span);
    size_t m = min_size(B, n - i);
    cpu_kernel_block(run, a->r + i, b ? b->r + i : NULL, m, tmp);
    for (size_t j = 0; j < m; j++) out->v[i + j] = val_bool(tmp[j] != 0);
  }
}

static Value op_map(const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Array *a = eval_array(t->kids[1], frame);
  size_t n = a->len;
  if (cpu_metering) cpu_meter_array(t, n);
  Array *out = val_new_array_of(t->type->elem, n, t->span);
  CpuKernelRun run;
  if (n > 0 && kernel_bind(lam, frame, &run)) {
    kernel_map(&run, t, a, NULL, out);
    return val_array(out);
  }
  const Sym *x = lam->syms[0];
  const Term *body = lam->kids[0];
  for (size_t i = 0; i < n; i++) {
    if ((i & 255) == 0) fe_poll_interrupt(t->span);
    frame[x->slot] = val_array_get(a, i);
    val_array_set(out, i, cpu_eval(body, frame));
  }
  return val_array(out);
}

static Value op_map2(const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Array *a = eval_array(t->kids[1], frame);
  Array *b = eval_array(t->kids[2], frame);
  if (a->len != b->len) fe_error(t->span, "map2: lengths %zu and %zu differ", a->len, b->len);
  size_t n = a->len;
  if (cpu_metering) cpu_meter_array(t, n);
  Array *out = val_new_array_of(t->type->elem, n, t->span);
  CpuKernelRun run;
  if (n > 0 && kernel_bind(lam, frame, &run)) {
    kernel_map(&run, t, a, b, out);
    return val_array(out);
  }
  for (size_t i = 0; i < n; i++) {
    if ((i & 255) == 0) fe_poll_interrupt(t->span);
    val_array_set(out, i, apply2(lam, frame, val_array_get(a, i), val_array_get(b, i)));
  }
  return val_array(out);
}

/* ---- reduce, foldl, scanl, scanr ---- */

static Value op_reduce(const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Value v = cpu_eval(t->kids[1], frame);
  Array *a = eval_array(t->kids[2], frame);
  size_t n = a->len;
  if (cpu_metering) cpu_meter_array(t, n);
  if (n == 0) return v;
  const MonoidFns *m = monoid_loops(lam);
  if (m) return val_real(m->reduce(v.u.r, a->r, n, t->span));
  size_t lanes = min_size(n, B), i;
  CpuKernelRun run;
  if (kernel_bind(lam, frame, &run)) {
    double acc[B], tmp[B];
    acc[0] = cpu_kernel_call1(&run, v.u.r, a->r[0]);
    for (size_t j = 1; j < lanes; j++) acc[j] = a->r[j];
    for (i = lanes; i < n; i += B) {
      if ((i & (64 * B - 1)) == 0) fe_poll_interrupt(t->span);
      size_t k = min_size(B, n - i);
      cpu_kernel_block(&run, acc, a->r + i, k, tmp);
      memcpy(acc, tmp, sizeof(double) * k);
    }
    double r = acc[0];
    for (size_t j = 1; j < lanes; j++) r = cpu_kernel_call1(&run, r, acc[j]);
    return val_real(r);
  }
  Value acc[B];
  acc[0] = apply2(lam, frame, v, val_array_get(a, 0));
  for (size_t j = 1; j < lanes; j++) acc[j] = val_array_get(a, j);
  for (i = lanes; i < n; i += B) {
    fe_poll_interrupt(t->span);
    size_t k = min_size(B, n - i);
    for (size_t j = 0; j < k; j++) acc[j] = apply2(lam, frame, acc[j], val_array_get(a, i + j));
  }
  Value r = acc[0];
  for (size_t j = 1; j < lanes; j++) r = apply2(lam, frame, r, acc[j]);
  return r;
}

static Value op_foldl(const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Value v = cpu_eval(t->kids[1], frame);
  Array *a = eval_array(t->kids[2], frame);
  size_t n = a->len;
  if (cpu_metering) cpu_meter_array(t, n);
  if (n == 0) return v;
  const MonoidFns *m = monoid_loops(lam);
  if (m) return val_real(m->foldl(v.u.r, a->r, n, t->span));
  CpuKernelRun run;
  if (kernel_bind(lam, frame, &run)) {
    double acc = v.u.r;
    for (size_t i = 0; i < n; i++) {
      if ((i & 4095) == 0) fe_poll_interrupt(t->span);
      acc = cpu_kernel_call1(&run, acc, a->r[i]);
    }
    return val_real(acc);
  }
  Value acc = v;
  for (size_t i = 0; i < n; i++) {
    if ((i & 255) == 0) fe_poll_interrupt(t->span);
    acc = apply2(lam, frame, acc, val_array_get(a, i));
  }
  return acc;
}

/* scanl (right = false) and scanr (right = true). Element k of the walk is
   index i of the input, from the left for scanl and from the right for
   scanr; the accumulator is the lambda's first argument in scanl and its
   second in scanr (section 5). */
static Value op_scan(const Term *t, Value *frame, bool right) {
  const Term *lam = t->kids[0];
  Value v = cpu_eval(t->kids[1], frame);
  Array *a = eval_array(t->kids[2], frame);
  size_t n = a->len;
  if (cpu_metering) cpu_meter_array(t, n);
  Array *out = val_new_array_of(t->type->elem, n + 1, t->span);
  const MonoidFns *m = monoid_loops(lam);
  if (m) {
    (right ? m->scanr : m->scanl)(v.u.r, a->r, n, out->r, t->span);
    return val_array(out);
  }
  CpuKernelRun run;
  if (n > 0 && kernel_bind(lam, frame, &run)) {
    double acc = v.u.r;
    out->r[right ? n : 0] = acc;
    for (size_t k = 0; k < n; k++) {
      if ((k & 4095) == 0) fe_poll_interrupt(t->span);
      size_t i = right ? n - 1 - k : k;
      acc = right ? cpu_kernel_call1(&run, a->r[i], acc) : cpu_kernel_call1(&run, acc, a->r[i]);
      out->r[right ? i : i + 1] = acc;
    }
    return val_array(out);
  }
  Value acc = v;
  val_array_set(out, right ? n : 0, acc);
  for (size_t k = 0; k < n; k++) {
    if ((k & 255) == 0) fe_poll_interrupt(t->span);
    size_t i = right ? n - 1 - k : k;
    Value x = val_array_get(a, i);
    acc = right ? apply2(lam, frame, x, acc) : apply2(lam, frame, acc, x);
    val_array_set(out, right ? i : i + 1, acc);
  }
  return val_array(out);
}

/* ---- constructors ---- */

/* The size argument of iota/replicate/rand: a non-negative integer. */
static size_t size_arg(const Term *t, double n, size_t elem_size) {
  if (!(n >= 0) || n != floor(n) || isinf(n)) {
    char b[40];
    una_format_real(b, sizeof b, n);
    fe_error(t->span, "%s: size must be a non-negative integer, found %s", fe_prims[t->prim].name, b);
  }
  if (n >= 0x1p63) val_alloc_error(n, (double)elem_size, t->span);
  return (size_t)n;
}

static Value op_iota(const Term *t, Value *frame) {
  size_t n = size_arg(t, cpu_eval(t->kids[0], frame).u.r, sizeof(double));
  if (cpu_metering) cpu_meter_array(t, n);
  Array *a = val_new_real_array(n, t->span);
  for (size_t i = 0; i < n; i++) a->r[i] = (double)i;
  return val_array(a);
}

static Value op_replicate(const Term *t, Value *frame) {
  double nr = cpu_eval(t->kids[0], frame).u.r;
  Value v = cpu_eval(t->kids[1], frame);
  const Type *et = t->type->elem;
  size_t n = size_arg(t, nr, et->kind == TY_REAL ? sizeof(double) : sizeof(Value));
  if (cpu_metering) cpu_meter_array(t, n);
  Array *a = val_new_array_of(et, n, t->span);
  if (a->boxed)
    for (size_t i = 0; i < n; i++) a->v[i] = v;
  else
    for (size_t i = 0; i < n; i++) a->r[i] = v.u.r;
  return val_array(a);
}

static Value op_rand(const Term *t, Value *frame) {
  double nr = cpu_eval(t->kids[0], frame).u.r;
  double seed = cpu_eval(t->kids[1], frame).u.r;
  size_t n = size_arg(t, nr, sizeof(double));
  if (cpu_metering) cpu_meter_array(t, n);
  Array *a = val_new_real_array(n, t->span);
  cpu_rand_fill(a->r, n, seed);
  return val_array(a);
}

static const char *file_arg(const Term *t) {
  ASSERT(t->kids[0]->kind == T_STR && t->kids[0]->str);
  return t->kids[0]->str;
}

Value cpu_array_prim(const Term *t, Value *frame) {
  switch (t->prim) {
  case PRIM_MAP: return op_map(t, frame);
  case PRIM_MAP2: return op_map2(t, frame);
  case PRIM_REDUCE: return op_reduce(t, frame);
  case PRIM_FOLDL: return op_foldl(t, frame);
  case PRIM_SCANL: return op_scan(t, frame, false);
  case PRIM_SCANR: return op_scan(t, frame, true);
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R: {
    Array *a = eval_array(t->kids[0], frame);
    if (cpu_metering) cpu_meter_array(t, a->len);
    if (a->len == 0) return val_array(a);
    return val_array(val_view(a, t->prim == PRIM_SHIFT1L ? 1 : 0, a->len - 1));
  }
  case PRIM_LENGTH: {
    Array *a = eval_array(t->kids[0], frame);
    if (cpu_metering) cpu_meter_array(t, a->len);
    return val_real((double)a->len);
  }
  case PRIM_IOTA: return op_iota(t, frame);
  case PRIM_REPLICATE: return op_replicate(t, frame);
  case PRIM_RAND: return op_rand(t, frame);
  case PRIM_LOAD: {
    Array *a = npy_load(file_arg(t), t->span);
    if (cpu_metering) cpu_meter_array(t, a->len);
    return val_array(a);
  }
  case PRIM_SAVE: {
    Value a = cpu_eval(t->kids[1], frame);
    if (cpu_metering) cpu_meter_array(t, a.u.a->len);
    npy_save(file_arg(t), a.u.a, t->span);
    return a;
  }
  default: break;
  }
  una_internal_error(__FILE__, __LINE__, una_sprintf("'%s' is not an array builtin", fe_prims[t->prim].name));
}
