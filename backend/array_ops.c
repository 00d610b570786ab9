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
   left fold. From CPU_PAR_MIN elements on (parallel.h) the array is cut into
   CPU_CHUNKS chunks of whole blocks, each with lanes of its own as above
   (only chunk 0 starts with v), run on all cores; the chunks' lanes are
   then combined lane by lane in chunk order, and the lanes folded. The
   chunks depend on n only, so the bits do not depend on the number of
   threads, and every path brackets the same way. Lanes put the elements
   out of order, which only an operator that commutes allows (reduce's
   contract is associativity): a builtin monoid, or a lambda whose kernel
   is symmetric in its parameters (kernel.h). Any other operator gets one
   lane, so each chunk is a left fold and the chunks are combined in order. foldl, scanl and scanr
   are strictly sequential.

   Fusion, as the execution plan decided it (backend/plan/plan.h: the map's
   note says fused): `reduce f v (map g A)` and `reduce f v (map2 g A B)`
   written inline, with g a kernel, compute g block by block into the reduce's
   lanes, and scanl/scanr of such a map into the scan, block by block in
   the scan's direction: the mapped array is never allocated. foldl and
   scanl of the linear recurrence acc * k + y run as a plain loop. map and map2 over large
   arrays run their kernels on all cores, chunk by chunk. A map that the
   plan found to be a matrix-vector or matrix product runs with BLAS
   (blas.h), fast paths on and no meter, on the CPU.

   While the cost meter runs (cost_meter.h), each builtin counts its own
   cost once, from its length, and the monoid loops and kernels are off, so
   that every element runs on the generic path and is counted there. */
#include "array_ops.h"
#include "array_int.h"
#include "blas.h"
#include "cost_meter.h"
#include "kernel.h"
#include "jit.h"
#include "npy.h"
#include "parallel.h"
#include "outer.h"
#include "plan/note.h"
#include "plan/plan.h"
#include "rand.h"
#include "scan_map.h"
#include "scalar.h"

#define B CPU_BLOCK


static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The linear recurrence acc * k + y (Horner's rule, exponential
   smoothing): true when lam is (acc, y. acc * k + y) or (acc, y. k * acc +
   y) with k a literal or a variable of type R other than acc and y; *k is
   then k's value in frame. foldl and scanl run it as a plain loop, with
   the same two roundings per element as the kernel. */
static bool affine_of(const Exec *ex, const Term *lam, Value *frame, double *k) {
  if (!ex->kernel || ex->meter || lam->kind != T_LAM || lam->nsyms != 2) return false;
  const Sym *acc = lam->syms[0], *y = lam->syms[1];
  const Term *b = lam->kids[0];
  if (b->kind != T_PRIM || b->prim != PRIM_ADD || b->kids[1]->kind != T_VAR || b->kids[1]->sym != y) return false;
  const Term *m = b->kids[0];
  if (m->kind != T_PRIM || m->prim != PRIM_MUL) return false;
  const Term *f = NULL;
  if (m->kids[0]->kind == T_VAR && m->kids[0]->sym == acc) f = m->kids[1];
  else if (m->kids[1]->kind == T_VAR && m->kids[1]->sym == acc) f = m->kids[0];
  if (!f) return false;
  if (f->kind == T_NUM) {
    *k = f->num;
    return true;
  }
  if (f->kind != T_VAR || f->sym == acc || f->sym == y || !f->type || f->type->kind != TY_REAL) return false;
  *k = frame[f->sym->slot].u.r;
  return true;
}

/* The generic path's application of a two-parameter lambda. */
static Value apply2(const Exec *ex, const Term *lam, Value *frame, Value x, Value y) {
  frame[lam->syms[0]->slot] = x;
  frame[lam->syms[1]->slot] = y;
  return ex->eval(ex, lam->kids[0], frame);
}

/* ---- map and map2 ---- */

/* A map's array as the pieces it is made of, read where they are: one
   array, or the arrays a concat joins (map_pieces), never joined. */
typedef struct MapIn {
  int n; /* 0: none (the map's indices, or map's second array) */
  const Array *const *p;
} MapIn;

typedef struct MapJob {
  CpuKernelRun runs[CPU_MAX_THREADS];
  MapIn a, b; /* a with no pieces: over the indices 0 .. n - 1 (iota n) */
  size_t n;
  Array *out;
  int nchunks;
  bool boolean;
} MapJob;

/* Element i of in, where it is: a pointer to it in its piece, *end lowered
   to where that piece ends (NULL for no array). */
static const double *piece_at(MapIn in, size_t i, size_t *end) {
  size_t at = 0;
  for (int k = 0; k < in.n; k++) {
    size_t len = in.p[k]->len;
    if (i < at + len) {
      if (at + len < *end) *end = at + len;
      return in.p[k]->r + (i - at);
    }
    at += len;
  }
  return NULL;
}

/* Elements lo .. hi - 1 of the job, x and y pointing at element lo of its
   arrays (x NULL: over the indices). */
static void map_span(MapJob *j, CpuKernelRun *run, size_t lo, size_t hi, const double *x, const double *y) {
  CpuJitRangeFn range = x && j->out && !j->boolean ? cpu_jit_range(run->k, hi - lo) : NULL;
  if (range) { /* compiled, with no fault to raise: the span in loops of 64 Ki elements (Ctrl-C between) */
    for (size_t i = lo; i < hi && !fe_stopping(); i += 65536)
      range(x + (i - lo), y ? y + (i - lo) : NULL, j->out->r + i, run->sregs, min_size(65536, hi - i));
    return;
  }
  double tmp[B];
  /* Ctrl-C, or a kernel's fault, ends the span at the next block */
  for (size_t i = lo; i < hi && !fe_stopping(); i += B) {
    size_t m = min_size(B, hi - i);
    double *out = j->boolean || !j->out ? tmp : j->out->r + i;
    if (x) cpu_kernel_block(run, x + (i - lo), y ? y + (i - lo) : NULL, m, out);
    else cpu_kernel_block_indices(run, i, m, &out);
    if (j->boolean && j->out)
      for (size_t q = 0; q < m; q++) j->out->v[i + q] = val_bool(tmp[q] != 0);
  }
}

/* A chunk: spans within one piece of each array (a map's elements do not
   depend on its blocks, so the pieces' boundaries change no bit). */
static void map_chunk(void *ctx, int thread, int c) {
  MapJob *j = ctx;
  size_t lo, hi;
  cpu_chunk_bounds(j->n, B, j->nchunks, c, &lo, &hi);
  for (size_t i = lo; i < hi && !fe_stopping();) {
    size_t end = hi;
    const double *x = piece_at(j->a, i, &end), *y = piece_at(j->b, i, &end);
    map_span(j, &j->runs[thread], i, end, x, y);
    i = end;
  }
}

/* Runs a bound kernel over a (and b) into out (n elements; a with no
   pieces: over the indices 0 .. n - 1; out NULL: for the faults only, the
   elements dropped), on all cores when large. */
static void kernel_map_in(int nthreads, CpuKernelRun *run, const Term *t, MapIn a, MapIn b, size_t n, Array *out) {
  for (int k = 0; k < a.n; k++) ASSERT(!a.p[k]->boxed);
  for (int k = 0; k < b.n; k++) ASSERT(!b.p[k]->boxed);
  MapJob j;
  j.a = a;
  j.b = b;
  j.n = n;
  j.out = out;
  j.nchunks = cpu_chunks_for(n);
  /* a function of many instructions is worth the threads from fewer
     elements (a map's elements do not depend on its chunks) */
  if (j.nchunks == 1 && n >= CPU_PAR_MIN / 16 && n * (size_t)cpu_kernel_block_size(run->k) >= 8 * CPU_PAR_MIN)
    j.nchunks = CPU_CHUNKS;
  j.boolean = cpu_kernel_returns_bool(run->k);
  ASSERT(!out || j.boolean == out->boxed);
  if (n <= CPU_SMALL_ARRAY) { /* element by element: no blocks to set up */
    for (size_t i = 0; i < n; i++) {
      size_t end = n;
      const double *x = piece_at(a, i, &end), *y = piece_at(b, i, &end);
      double r = cpu_kernel_call1(run, x ? *x : (double)i, y ? *y : 0);
      if (!out) continue;
      if (j.boolean) out->v[i] = val_bool(r != 0);
      else out->r[i] = r;
    }
    fe_poll_interrupt(t->span);
    return;
  }
  cpu_kernel_runs(nthreads, j.runs, run, j.nchunks);
  cpu_parallel_chunks(nthreads, j.nchunks, map_chunk, &j, t->span);
}

static MapIn map_in(const Array *const *a) { return (MapIn){*a ? 1 : 0, a}; }

static void kernel_map(int nthreads, CpuKernelRun *run, const Term *t, const Array *a, const Array *b, size_t n,
                       Array *out) {
  kernel_map_in(nthreads, run, t, map_in(&a), map_in(&b), n, out);
}

void cpu_map_kernel(const Exec *ex, CpuKernelRun *run, const Term *t, const Array *a, const Array *b, size_t n,
                    Array *out) {
  kernel_map(cpu_exec_threads(ex), run, t, a, b, n, out);
}

void cpu_map_indices(const Exec *ex, CpuKernelRun *run, const Term *t, size_t n, Array *out) {
  cpu_map_kernel(ex, run, t, NULL, NULL, n, out);
}

/* map (b NULL) or map2 of the map/map2 term t over the evaluated arrays a
   and b (of equal lengths). */
/* A map or map2 over arrays of tuples of reals (or returning them), by
   its function's program over their reals (cpu_elem_kernel_for, decided
   by the plan), one element at a time; false when it has none. */
static bool map_elements(const Exec *ex, const Term *t, Value *frame, const Array *a, const Array *b, Array *out) {
  const Term *lam = t->kids[0];
  if (!ex->kernel || ex->meter || (!a->boxed && (!b || !b->boxed) && !out->boxed)) return false;
  const Type *ta = t->kids[1]->type->elem, *tb = b ? t->kids[2]->type->elem : NULL, *rt = t->type->elem;
  int wa = cpu_state_width(ta), wb = b ? cpu_state_width(tb) : 0, wr = cpu_state_width(rt);
  if (wa == 0 || (b && wb == 0) || wr == 0) return false;
  const CpuKernel *k = cpu_elem_kernel_for(lam);
  CpuKernelRun run;
  if (!k || !cpu_kernel_bind(ex, k, frame, &run)) return false;
  double p[2 * CPU_MAX_STATE], r[CPU_MAX_STATE];
  for (size_t i = 0; i < a->len; i++) {
    if ((i & 4095) == 0) fe_poll_interrupt(t->span);
    if (a->boxed) cpu_state_in(a->v[i], ta, p);
    else p[0] = a->r[i];
    if (b && b->boxed) cpu_state_in(b->v[i], tb, p + wa);
    else if (b) p[wa] = b->r[i];
    cpu_kernel_step(&run, p, r);
    if (out->boxed) val_array_set(out, i, cpu_state_out(r, rt));
    else out->r[i] = r[0];
  }
  fe_poll_interrupt(t->span);
  return true;
}

/* The fresh array of n elements that the map t makes: its place in the
   rows' buffer when t is the tail of a map's function computing a row of
   that length (CpuRowSlot), else new memory. */
static Array *map_result(const Exec *ex, const Term *t, size_t n) {
  CpuRowSlot *row = ex->row;
  if (row && row->term == t && !row->used && row->len == n && t->type->elem->kind == TY_REAL) {
    row->used = true;
    return val_view(row->whole, row->off, n);
  }
  return val_new_array_of(t->type->elem, n, t->span);
}

/* The builtin whose array lam's body returns (through its lets), when it
   is a map that map_result can place; NULL otherwise. */
static const Term *row_tail(const Term *lam) {
  const Term *t = lam->kids[0];
  while (t->kind == T_LET || t->kind == T_LETTUP) t = t->kids[1];
  return t->kind == T_PRIM && (t->prim == PRIM_MAP || t->prim == PRIM_MAP2) ? t : NULL;
}

/* The map t over n elements whose function returns rows of reals, by the
   tree evaluator, into out: row 0 as it comes; when it has L > 0
   elements, a buffer of n L reals holds it and the function's map writes
   every later row of L elements in its place there, so that the rows are
   consecutive (a matrix product then reads them in place, blas.c). A row
   of another length gets its own memory; so do the rows after one that
   the function's map did not make (a matrix product's, say). */
/* Sets inner's batch (exec.h) for the map t over the rows a when its plan
   found a matrix-vector product M p of its function to compute for all
   rows at once (plan/note.h: batch) and no element's product can raise:
   a's rows and M's are all of one length (blas.c lays both out flat). M is
   a variable, so evaluating it here raises nothing the map would not. */
static void batch_bind(const Exec *ex, const Term *t, Value *frame, Array *a, CpuBatch *b, Exec *inner) {
  const Term *m = t->note ? t->note->batch : NULL;
  if (!m || !ex->kernel || ex->meter || ex->gpu || !a->boxed || a->len < 2) return;
  Array *mm = cpu_eval_array(ex, m->kids[1], frame);
  Array *whole = cpu_blas_rows_times(ex, a, mm, m->span);
  if (!whole) return;
  *b = (CpuBatch){m, whole, 0, mm->len};
  inner->batch = b;
}

static void map_rows(const Exec *ex, const Term *t, Value *frame, Array *a, const Array *b, Array *out) {
  const Term *lam = t->kids[0];
  size_t n = a->len;
  CpuRowSlot slot = {row_tail(lam), NULL, 0, 0, false};
  Exec inner = *ex;
  CpuBatch batch;
  if (!b) batch_bind(ex, t, frame, a, &batch, &inner);
  for (size_t i = 0; i < n; i++) {
    if ((i & 255) == 0) fe_poll_interrupt(t->span);
    batch.i = i;
    frame[lam->syms[0]->slot] = val_array_get(a, i);
    if (b) frame[lam->syms[1]->slot] = val_array_get(b, i);
    slot.used = false;
    slot.off = i * slot.len;
    inner.row = slot.whole ? &slot : NULL;
    Value r = ex->eval(&inner, lam->kids[0], frame);
    if (inner.row && !slot.used && r.kind == V_ARRAY && r.u.a->len == slot.len)
      slot.whole = NULL; /* a row of L made elsewhere (a product, say): so will the rest be */
    if (i == 0 && slot.term && r.kind == V_ARRAY && !r.u.a->boxed && r.u.a->len > 0 &&
        r.u.a->len <= SIZE_MAX / sizeof(double) / n) {
      slot.len = r.u.a->len;
      slot.whole = val_new_real_array(n * slot.len, t->span);
      val_host(r.u.a);
      memcpy(slot.whole->r, r.u.a->r, sizeof(double) * slot.len);
      r = val_array(val_view(slot.whole, 0, slot.len));
    }
    val_array_set(out, i, r);
  }
}

/* The array of the map t that its kernel may write over, element after
   element: a loop's state that nothing else holds (own: plan/note.h's
   state_map), or the array the plan lets it write over (note.h: over);
   when it is a whole buffer of the collector's of n reals on the host
   (not a view). NULL otherwise. */
static Array *over_array(const CpuLoopOwn *own, const Term *t, Array *a, Array *b, size_t n) {
  int k = t->note ? t->note->over : 0;
  Array *c = own && own->owned == a ? a : k == 1 ? a : k == 2 ? b : NULL;
  if (!c || n < B || c->len != n || c->boxed || !c->r || c->dev) return NULL;
  return val_whole_buffer(c) ? c : NULL;
}

Array *cpu_map_out(const Exec *ex, const Term *t, Array *a, Array *b, size_t n) {
  /* the loop state that t may write over, when t is its loop's state map */
  CpuLoopOwn *own = ex->loop_own && ex->loop_own->map == t && !(ex->row && ex->row->term == t) ? ex->loop_own : NULL;
  Array *out = over_array(own, t, a, b, n);
  if (!out) out = map_result(ex, t, n);
  if (own) own->fresh = out;
  return out;
}

static Array *map_arrays(const Exec *ex, const Term *t, Value *frame, Array *a, Array *b) {
  const Term *lam = t->kids[0];
  size_t n = a->len;
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  CpuKernelRun run;
  bool kernel = n > 0 && cpu_lam_kernel(ex, lam, frame, &run);
  /* only a kernel writes over an array, element after element */
  Array *out = cpu_map_out(ex, t, kernel ? a : NULL, kernel ? b : NULL, n);
  if (kernel) {
    kernel_map(cpu_exec_threads(ex), &run, t, a, b, n, out);
    return out;
  }
  if (n > 0 && (map_elements(ex, t, frame, a, b, out) || cpu_map_checks_only(ex, t, frame, a, b, out))) return out;
  const Type *rt = t->type->elem;
  if (n > 1 && ex->kernel && !ex->meter && !ex->gpu && rt->kind == TY_ARRAY && rt->elem->kind == TY_REAL) {
    map_rows(ex, t, frame, a, b, out);
    return out;
  }
  Exec inner = *ex;
  CpuBatch batch;
  if (!b) batch_bind(ex, t, frame, a, &batch, &inner);
  for (size_t i = 0; i < n; i++) {
    if ((i & 255) == 0) fe_poll_interrupt(t->span);
    Value r;
    if (b) {
      r = apply2(ex, lam, frame, val_array_get(a, i), val_array_get(b, i));
    } else {
      batch.i = i;
      frame[lam->syms[0]->slot] = val_array_get(a, i);
      r = ex->eval(&inner, lam->kids[0], frame);
    }
    val_array_set(out, i, r);
  }
  return out;
}

/* 0, 1, ..., n - 1: the value of the iota term t. */
static Array *iota_array(const Term *t, size_t n) {
  Array *a = val_new_real_array(n, t->span);
  for (size_t i = 0; i < n; i++) a->r[i] = (double)i;
  return a;
}

/* Whether t is a map over `iota e` that runs as a kernel over the indices
   themselves, never materialised (the fast paths on, not metering): then
   *n is e, checked as iota checks it (an iota made of *n stands for it
   where the kernel cannot run). */
static bool over_indices(const Exec *ex, const Term *t, Value *frame, size_t *n) {
  const Term *a = t->kids[1];
  if (t->prim != PRIM_MAP || a->kind != T_PRIM || a->prim != PRIM_IOTA || !ex->kernel || ex->meter) return false;
  *n = cpu_size_arg(a, ex->eval(ex, a->kids[0], frame).u.r, sizeof(double));
  return true;
}

/* The arrays of the map/map2 term t, evaluated (map2's lengths checked). */
static void map_args(const Exec *ex, const Term *t, Value *frame, Array **a, Array **b) {
  *a = cpu_eval_array(ex, t->kids[1], frame);
  *b = NULL;
  if (t->prim == PRIM_MAP2) {
    *b = cpu_eval_array(ex, t->kids[2], frame);
    cpu_check_map2_lengths(t, (*a)->len, (*b)->len);
  }
}

/* After the map t made out from its arrays a and b: an array written
   as a map in place (`map2 f y (map2 (+) k1 k4)`: read by t alone, dead
   now) is given back to the collector, so that the next array of its
   size gets its memory, still in the cache (value.h: val_give_back),
   unless t's result was written over it. */
static void give_back_args(const Exec *ex, const Term *t, const Array *out, Array *a, Array *b) {
  if (!ex->kernel || ex->gpu) return;
  Array *ab[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    const Term *kid = k + 1 < t->nkids ? t->kids[k + 1] : NULL;
    if (ab[k] && kid && kid->kind == T_PRIM && (kid->prim == PRIM_MAP || kid->prim == PRIM_MAP2) &&
        ab[k]->r != out->r)
      val_give_back(ab[k]);
  }
}

/* Whether kid, an array of a map, is a concat of reals that the map's
   kernel may read as the pieces it joins (the fast paths on, the CPU's
   engine). */
static bool concat_of_reals(const Exec *ex, const Term *kid) {
  return kid->kind == T_PRIM && kid->prim == PRIM_CONCAT && kid->type->elem->kind == TY_REAL && ex->kernel &&
         !ex->meter && !ex->gpu;
}

/* The map or map2 t one of whose arrays is a concat of reals (`concat [1]
   (shift1R y)`: GradBench ode's state shifted one place with a value in
   front; `concat g (replicate 1 0)` in its gradient): its arrays
   evaluated as map_args and the concat evaluate them, and, when t's
   function has a kernel, the kernel reads the concat's pieces where they
   are, so that the concat is never made (each of ode's stages made one,
   a copy of the state). False, with nothing evaluated, when neither
   array is such a concat. */
static bool map_pieces(const Exec *ex, const Term *t, Value *frame, Value *r) {
  int nk = t->prim == PRIM_MAP2 ? 2 : 1;
  bool cat[2] = {concat_of_reals(ex, t->kids[1]), nk == 2 && concat_of_reals(ex, t->kids[2])};
  if (!cat[0] && !cat[1]) return false;
  Array *one[2] = {NULL, NULL}, **p[2] = {NULL, NULL};
  int np[2] = {0, 0};
  size_t len[2] = {0, 0};
  bool boxed = false;
  for (int k = 0; k < nk; k++) {
    if (cat[k]) {
      p[k] = cpu_concat_leaves(ex, t->kids[k + 1], frame, true, &np[k]);
    } else {
      one[k] = cpu_eval_array(ex, t->kids[k + 1], frame);
      p[k] = &one[k];
      np[k] = 1;
    }
    for (int q = 0; q < np[k]; q++) {
      len[k] += p[k][q]->len;
      boxed |= p[k][q]->boxed;
    }
  }
  if (nk == 2) cpu_check_map2_lengths(t, len[0], len[1]);
  size_t n = len[0];
  CpuKernelRun run;
  if (n > 0 && !boxed && cpu_lam_kernel(ex, t->kids[0], frame, &run)) {
    Array *out = cpu_map_out(ex, t, one[0], one[1], n);
    MapIn a = {np[0], (const Array *const *)p[0]}, b = {np[1], (const Array *const *)p[1]};
    kernel_map_in(cpu_exec_threads(ex), &run, t, a, b, n, out);
    give_back_args(ex, t, out, one[0], one[1]);
    *r = val_array(out);
    return true;
  }
  for (int k = 0; k < nk; k++)
    if (cat[k]) one[k] = cpu_concat_join(t->kids[k + 1], p[k], np[k]);
  Array *out = map_arrays(ex, t, frame, one[0], one[1]);
  give_back_args(ex, t, out, cat[0] ? NULL : one[0], cat[1] ? NULL : one[1]);
  *r = val_array(out);
  return true;
}

/* A dead let's map or map2 (the plan's PK_CHECK) with a kernel: what it
   may raise (its arrays, map2's lengths, binding its kernel, and, when its
   kernel gathers or loops, its elements' faults or Ctrl-C in a loop that
   does not end: its check kernel then runs, the gathers and loops and
   what they read, a gather's indices checked without reading the array
   when nothing reads its element) without storing its elements. Its value, never read, is an array of its length
   with no elements, as on the GPU. */
static bool map_check(const Exec *ex, const Term *t, Value *frame, Value *r) {
  const PlanKernel *pk = t->note ? t->note->kernel : NULL;
  if (!pk || pk->kind != PK_CHECK || !ex->kernel || ex->meter) return false;
  /* the errors' kernel (plan.h: check) binds what the function's binds,
     the same parts with their errors, so it is bound alone */
  const CpuKernel *k = pk->check ? pk->check : cpu_kernel_for(t->kids[0]);
  if (!k) return false;
  Array *a, *b;
  map_args(ex, t, frame, &a, &b);
  if (a->boxed || (b && b->boxed)) return false;
  CpuKernelRun run;
  if (a->len > 0 && !cpu_kernel_bind(ex, k, frame, &run)) return false;
  if (a->len > 0 && pk->check) kernel_map(cpu_exec_threads(ex), &run, t, a, b, a->len, NULL);
  *r = val_array(val_hollow_array(a->len));
  return true;
}

static Value op_map(const Exec *ex, const Term *t, Value *frame) {
  Value r;
  if (ex->batch && ex->batch->term == t) /* computed with the other rows' (map_rows, map_arrays) */
    return val_array(val_view(ex->batch->whole, ex->batch->i * ex->batch->len, ex->batch->len));
  if (map_check(ex, t, frame, &r) || cpu_map2_of_scan(ex, t, frame, &r)) return r;
  Array *a, *b;
  const PlanMatrix *pm = t->note ? t->note->matrix : NULL;
  if (pm && pm->kind == PLAN_OUTER) {
    if (cpu_outer_map(ex, t, frame, &r)) return r;
    pm = NULL; /* as written */
  }
  if (pm && pm->x_let) { /* X is a transpose left to the product */
    if (cpu_blas_map(ex, t, frame, NULL, &r)) return r;
    cpu_blas_as_written(ex, t, frame);
  }
  size_t n;
  if (!pm && over_indices(ex, t, frame, &n)) {
    CpuKernelRun run;
    if (n > 0 && cpu_lam_kernel(ex, t->kids[0], frame, &run)) {
      Array *out = map_result(ex, t, n);
      kernel_map(cpu_exec_threads(ex), &run, t, NULL, NULL, n, out);
      return val_array(out);
    }
    return val_array(map_arrays(ex, t, frame, iota_array(t->kids[1], n), NULL));
  }
  if (!pm && (cpu_map_tree(ex, t, frame, &r) || map_pieces(ex, t, frame, &r))) return r;
  map_args(ex, t, frame, &a, &b);
  if (pm && !pm->x_let) {
    if (cpu_blas_map(ex, t, frame, a, &r)) return r;
    cpu_blas_as_written(ex, t, frame);
  }
  Array *out = map_arrays(ex, t, frame, a, b);
  give_back_args(ex, t, out, a, b);
  return val_array(out);
}

/* ---- reduce, foldl, scanl, scanr ---- */

/* True when arg, the array of a reduce or scan with initial value v, is a
   map or map2 written inline that the plan fused into it (plan.h; fast
   paths on, not metering, reals). */
static bool fusable_map(const Exec *ex, const Term *arg, Value v) {
  return arg->note && arg->note->fused && !ex->meter && ex->kernel && v.kind == V_REAL;
}

/* Binds g to the kernel of the map/map2 arg over its evaluated arrays x
   and y; false when it has none, returns booleans, or an array is empty or
   boxed (then the map is materialised). */
static bool map_kernel(const Exec *ex, const Term *arg, Value *frame, const Array *x, const Array *y, CpuKernelRun *g) {
  return x->len > 0 && !x->boxed && (!y || !y->boxed) && cpu_lam_kernel(ex, arg->kids[0], frame, g) &&
         !cpu_kernel_returns_bool(g->k);
}


static void red_chunk(void *ctx, int thread, int c) {
  RedJob *j = ctx;
  size_t lo, hi;
  cpu_chunk_bounds(j->n, B, j->nchunks, c, &lo, &hi);
  for (size_t i = lo; i < hi && !fe_stopping(); i += B) cpu_red_block(j, thread, c, lo, i, min_size(B, hi - i));
}

/* Runs the job (n > 0): the chunks, then their lanes combined and folded. */
static double red_run(RedJob *j, Span s) {
  cpu_parallel_chunks(j->nthreads, j->nchunks, red_chunk, j, s);
  return cpu_red_finish(j);
}

/* Whether reduce may put lam's elements in lanes, out of order. */
static bool lanes_allowed(const Term *lam) {
  bool swapped;
  if (cpu_monoid_of(lam, &swapped) != CPU_M_NONE) return true;
  const CpuKernel *k = cpu_kernel_for(lam);
  return k && cpu_kernel_commutes(k);
}

/* The generic reduce, bracketed in the same way, one chunk after another. */
static Value reduce_generic(const Exec *ex, const Term *t, Value *frame, Value v, const Array *a) {
  const Term *lam = t->kids[0];
  size_t n = a->len, width = lanes_allowed(lam) ? B : 1;
  int nchunks = cpu_chunks_for(n);
  Value *acc = NEW_ARRAY(Value, (size_t)nchunks * B);
  size_t nlanes[CPU_CHUNKS];
  for (int c = 0; c < nchunks; c++) {
    size_t lo, hi;
    cpu_chunk_bounds(n, B, nchunks, c, &lo, &hi);
    Value *ac = acc + (size_t)c * B;
    nlanes[c] = min_size(width, hi - lo);
    for (size_t q = 0; q < nlanes[c]; q++) ac[q] = val_array_get(a, lo + q);
    if (c == 0) ac[0] = apply2(ex, lam, frame, v, ac[0]);
    for (size_t i = lo + width; i < hi; i += width) {
      if ((i & (B - 1)) < width) fe_poll_interrupt(t->span);
      size_t k = min_size(width, hi - i);
      for (size_t q = 0; q < k; q++) ac[q] = apply2(ex, lam, frame, ac[q], val_array_get(a, i + q));
    }
  }
  for (int c = 1; c < nchunks; c++)
    for (size_t l = 0; l < nlanes[c]; l++) acc[l] = apply2(ex, lam, frame, acc[l], acc[(size_t)c * B + l]);
  Value r = acc[0];
  for (size_t l = 1; l < nlanes[0]; l++) r = apply2(ex, lam, frame, r, acc[l]);
  return r;
}

/* reduce (u, v. map2 f u v) z A (or map2 f v u) over at most B rows of
   reals, f a scalar kernel: the rows folded into one accumulator from the
   left, f's kernel over each row block by block, two buffers in turn (the
   generic path makes one array per row and applies the lambda through the
   tree). With at most B rows the generic reduce folds from the left too
   (one lane per row), so the results are the same bit for bit. False
   when it does not apply. */
static bool rows_fold(const Exec *ex, const Term *t, Value *frame, Value v, const Array *a, Value *r) {
  const Term *lam = t->kids[0];
  if (lam->kind != T_LAM || lam->nsyms != 2 || a->len > B || v.kind != V_ARRAY || v.u.a->boxed) return false;
  const Term *m = lam->kids[0];
  if (m->kind != T_PRIM || m->prim != PRIM_MAP2 || m->kids[1]->kind != T_VAR || m->kids[2]->kind != T_VAR) return false;
  bool acc_first = m->kids[1]->sym == lam->syms[0] && m->kids[2]->sym == lam->syms[1];
  if (!acc_first && !(m->kids[1]->sym == lam->syms[1] && m->kids[2]->sym == lam->syms[0])) return false;
  for (size_t i = 0; i < a->len; i++)
    if (a->v[i].kind != V_ARRAY || a->v[i].u.a->boxed) return false;
  CpuKernelRun run;
  if (!cpu_lam_kernel(ex, m->kids[0], frame, &run) || cpu_kernel_returns_bool(run.k)) return false;
  val_host(v.u.a); /* (on the GPU path, z may be on the device) */
  size_t len = v.u.a->len;
  Array *bufs[2] = {val_new_real_array(len, m->span), val_new_real_array(len, m->span)};
  const double *acc = v.u.a->r;
  for (size_t i = 0; i < a->len; i++) {
    const Array *row = a->v[i].u.a;
    val_host(row);
    cpu_check_map2_lengths(m, acc_first ? len : row->len, acc_first ? row->len : len);
    double *out = bufs[i & 1]->r;
    for (size_t o = 0; o < len; o += B) {
      size_t nb = len - o < B ? len - o : B;
      cpu_kernel_block(&run, acc_first ? acc + o : row->r + o, acc_first ? row->r + o : acc + o, nb, out + o);
    }
    acc = out;
    fe_poll_interrupt(t->span);
  }
  *r = val_array(bufs[(a->len - 1) & 1]);
  return true;
}

bool cpu_fused_map_bind(const Exec *ex, const Term *arg, Value *frame, size_t min, CpuFusedMap *f) {
  f->x = f->y = NULL;
  if (!over_indices(ex, arg, frame, &f->n)) {
    map_args(ex, arg, frame, &f->x, &f->y);
    f->n = f->x->len;
  }
  return f->n > min && (f->x ? map_kernel(ex, arg, frame, f->x, f->y, &f->g)
                             : cpu_lam_kernel(ex, arg->kids[0], frame, &f->g) && !cpu_kernel_returns_bool(f->g.k));
}

Array *cpu_fused_map_array(const Exec *ex, const Term *arg, Value *frame, const CpuFusedMap *f) {
  return map_arrays(ex, arg, frame, f->x ? f->x : iota_array(arg->kids[1], f->n), f->y);
}

void cpu_fused_map_block(const CpuFusedMap *f, CpuKernelRun *g, size_t i, size_t n, double *out) {
  if (f->x) cpu_kernel_block(g, f->x->r + i, f->y ? f->y->r + i : NULL, n, out);
  else cpu_kernel_block_indices(g, i, n, &out);
}

static Value op_reduce(const Exec *ex, const Term *t, Value *frame) {
  const Term *lam = t->kids[0], *arg = t->kids[2];
  Value v = ex->eval(ex, t->kids[1], frame);
  RedJob j;
  cpu_red_job_init(&j);
  j.v = v.u.r;
  Array *a;
  if (fusable_map(ex, arg, v)) {
    /* fusion: the mapped elements go straight into the lanes */
    CpuFusedMap f;
    if (cpu_fused_map_bind(ex, arg, frame, CPU_SMALL_ARRAY, &f)) {
      j.n = f.n;
      j.nchunks = cpu_chunks_for(f.n);
      if (cpu_red_operator(ex, &j, lam, frame)) {
        j.x = f.x ? f.x->r : NULL;
        j.y = f.y ? f.y->r : NULL;
        cpu_kernel_runs(j.nthreads, j.g, &f.g, j.nchunks);
        return val_real(red_run(&j, t->span));
      }
    }
    a = cpu_fused_map_array(ex, arg, frame, &f);
  } else {
    a = cpu_eval_array(ex, arg, frame);
  }
  size_t n = a->len;
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  if (n == 0) return v;
  if (!a->boxed && v.kind == V_REAL) {
    j.n = n;
    j.nchunks = cpu_chunks_for(n);
    j.r = a->r;
    if (cpu_red_operator(ex, &j, lam, frame)) return val_real(red_run(&j, t->span));
  }
  Value r;
  if (a->boxed && rows_fold(ex, t, frame, v, a, &r)) return r;
  return reduce_generic(ex, t, frame, v, a);
}

/* foldl, scanl or scanr (right; out: its n + 1 states, v at out[0], or
   at out[n] for scanr) of a function whose accumulator and elements are
   reals or (nested) tuples of reals, not both reals, by the function's
   step program (kernel.h: cpu_fold_kernel_for, decided by the plan), one
   element at a time; false when it has none. Sets *last to the last
   state. */
static bool fold_steps(const Exec *ex, const Term *t, Value *frame, Value v, const Array *a, Array *out, bool right,
                       Value *last) {
  const Term *lam = t->kids[0];
  const Type *st = t->kids[1]->type, *et = t->kids[2]->type->elem;
  int w = cpu_state_width(st), we = cpu_state_width(et);
  if (w == 0 || we == 0 || (w == 1 && we == 1) || !ex->kernel || ex->meter) return false;
  const CpuKernel *k = cpu_fold_kernel_for(lam, right ? 1 : 0);
  CpuKernelRun run;
  if (!k || !cpu_kernel_bind(ex, k, frame, &run)) return false;
  double s[2 * CPU_MAX_STATE];
  cpu_state_in(v, st, s);
  size_t n = a->len;
  if (out) val_array_set(out, right ? n : 0, v);
  for (size_t j = 0; j < n; j++) {
    if ((j & 4095) == 0) fe_poll_interrupt(t->span);
    size_t i = right ? n - 1 - j : j;
    if (we == 1) s[w] = a->r[i];
    else cpu_state_in(a->v[i], et, s + w);
    cpu_kernel_step(&run, s, s);
    if (out) val_array_set(out, right ? i : i + 1, cpu_state_out(s, st));
  }
  fe_poll_interrupt(t->span);
  *last = cpu_state_out(s, st);
  return true;
}

static Value op_foldl(const Exec *ex, const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Value v = ex->eval(ex, t->kids[1], frame);
  Array *a = cpu_eval_array(ex, t->kids[2], frame);
  size_t n = a->len;
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  if (n == 0) return v;
  Value last;
  if (fold_steps(ex, t, frame, v, a, NULL, false, &last)) return last;
  const MonoidFns *m = cpu_monoid_loops(ex, lam);
  if (m) return val_real(m->foldl(v.u.r, a->r, n, t->span));
  double k;
  if (!a->boxed && v.kind == V_REAL && affine_of(ex, lam, frame, &k)) {
    double acc = v.u.r;
    for (size_t i = 0; i < n; i++) {
      if ((i & 65535) == 0) fe_poll_interrupt(t->span);
      acc = acc * k + a->r[i];
    }
    return val_real(acc);
  }
  CpuKernelRun run;
  if (cpu_lam_kernel(ex, lam, frame, &run)) {
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
    acc = apply2(ex, lam, frame, acc, val_array_get(a, i));
  }
  return acc;
}

/* The generic scan of a builtin monoid lam over at least CPU_PAR_MIN
   elements, bracketed by chunks as scan_map.h says (one chunk after
   another). */
static void scan_generic_chunked(const Exec *ex, const Term *t, Value *frame, bool right, Value v, const Array *a, Array *out) {
  const Term *lam = t->kids[0];
  size_t n = a->len, lo[CPU_CHUNKS + 1];
  int K = CPU_CHUNKS;
  for (int c = 0; c < K; c++) {
    size_t hi;
    cpu_chunk_bounds(n, B, K, c, &lo[c], &hi);
  }
  lo[K] = n;
  /* the chunks' totals: segments in lanes */
  Value T[CPU_CHUNKS], lanes[B], carry[CPU_CHUNKS];
  for (int c = 0; c < K; c++) {
    for (size_t ss = lo[c]; ss < lo[c + 1]; ss += CPU_SCAN_SEG) {
      size_t se = min_size(ss + CPU_SCAN_SEG, lo[c + 1]), k0 = min_size(B, se - ss);
      for (size_t q = 0; q < k0; q++) lanes[q] = val_array_get(a, ss + q);
      for (size_t i = ss + B; i < se; i += B) {
        fe_poll_interrupt(t->span);
        for (size_t q = 0; q < min_size(B, se - i); q++) lanes[q] = apply2(ex, lam, frame, lanes[q], val_array_get(a, i + q));
      }
      Value r = lanes[0];
      for (size_t q = 1; q < k0; q++) r = apply2(ex, lam, frame, r, lanes[q]);
      T[c] = ss == lo[c] ? r : apply2(ex, lam, frame, T[c], r);
    }
  }
  if (!right) {
    carry[1] = apply2(ex, lam, frame, v, T[0]);
    for (int c = 1; c + 1 < K; c++) carry[c + 1] = apply2(ex, lam, frame, carry[c], T[c]);
  } else {
    carry[K - 2] = apply2(ex, lam, frame, T[K - 1], v);
    for (int c = K - 2; c > 0; c--) carry[c - 1] = apply2(ex, lam, frame, T[c], carry[c]);
  }
  /* the elements: the sequential chunk from v, the others from their own
     first (last) element, combined with the carry */
  val_array_set(out, right ? n : 0, v);
  for (int c = 0; c < K; c++) {
    bool seq = right ? c == K - 1 : c == 0;
    Value acc = v;
    for (size_t k = 0; k < lo[c + 1] - lo[c]; k++) {
      if ((k & 255) == 0) fe_poll_interrupt(t->span);
      size_t i = right ? lo[c + 1] - 1 - k : lo[c] + k;
      Value x = val_array_get(a, i), r;
      if (seq) {
        acc = r = right ? apply2(ex, lam, frame, x, acc) : apply2(ex, lam, frame, acc, x);
      } else {
        acc = k == 0 ? x : right ? apply2(ex, lam, frame, x, acc) : apply2(ex, lam, frame, acc, x);
        r = right ? apply2(ex, lam, frame, acc, carry[c]) : apply2(ex, lam, frame, carry[c], acc);
      }
      val_array_set(out, right ? i : i + 1, r);
    }
  }
}

/* A scan of reals: its operator (a monoid loop or the bound kernel op). */
static CpuScanArg scan_arg(const Term *lam, bool right, const MonoidFns *m, const CpuKernelRun *op, double v,
                           const double *x, size_t n) {
  CpuScanArg s;
  memset(&s, 0, sizeof s);
  bool sw;
  s.scan = true;
  s.right = right;
  s.x = x;
  s.n = n;
  s.v = v;
  s.m = m;
  s.op = m ? NULL : op;
  s.monoid = cpu_monoid_of(lam, &sw) != CPU_M_NONE;
  return s;
}

/* scanl (right = false) and scanr (right = true). Element k of the walk is
   index i of the input, from the left for scanl and from the right for
   scanr; the accumulator is the lambda's first argument in scanl and its
   second in scanr (section 5). A builtin monoid brackets by chunks from
   CPU_PAR_MIN elements on, on every path (scan_map.h). */
static Value op_scan(const Exec *ex, const Term *t, Value *frame, bool right) {
  const Term *lam = t->kids[0], *arg = t->kids[2];
  Value v = ex->eval(ex, t->kids[1], frame);
  Array *a;
  if (fusable_map(ex, arg, v)) {
    /* fusion: the map's kernel g computed a block at a time, in the
       scan's direction, and scanned from there */
    Array *x, *y;
    map_args(ex, arg, frame, &x, &y);
    CpuKernelRun g, op;
    const MonoidFns *m = cpu_monoid_loops(ex, lam);
    if (map_kernel(ex, arg, frame, x, y, &g) && (m || cpu_lam_kernel(ex, lam, frame, &op))) {
      CpuScanArg s = scan_arg(lam, right, m, &op, v.u.r, x->r, x->len);
      s.gmap = &g;
      s.y = y ? y->r : NULL;
      Array *out = val_new_array_of(t->type->elem, x->len + 1, t->span);
      cpu_scan(cpu_exec_threads(ex), &s, out->r, t->span);
      return val_array(out);
    }
    a = map_arrays(ex, arg, frame, x, y);
  } else {
    a = cpu_eval_array(ex, arg, frame);
  }
  size_t n = a->len;
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  Array *out = val_new_array_of(t->type->elem, n + 1, t->span);
  const MonoidFns *m = cpu_monoid_loops(ex, lam);
  if (m) {
    CpuScanArg s = scan_arg(lam, right, m, NULL, v.u.r, a->r, n);
    cpu_scan(cpu_exec_threads(ex), &s, out->r, t->span);
    return val_array(out);
  }
  Value last;
  if (n > 0 && fold_steps(ex, t, frame, v, a, out, right, &last)) return val_array(out);
  double coef;
  if (!right && !a->boxed && v.kind == V_REAL && affine_of(ex, lam, frame, &coef)) {
    double acc = v.u.r;
    out->r[0] = acc;
    for (size_t i = 0; i < n; i++) {
      if ((i & 65535) == 0) fe_poll_interrupt(t->span);
      out->r[i + 1] = acc = acc * coef + a->r[i];
    }
    return val_array(out);
  }
  CpuKernelRun run;
  if (n > 0 && cpu_lam_kernel(ex, lam, frame, &run)) {
    CpuScanArg s = scan_arg(lam, right, NULL, &run, v.u.r, a->r, n);
    cpu_scan(cpu_exec_threads(ex), &s, out->r, t->span);
    return val_array(out);
  }
  bool sw;
  if (n >= CPU_PAR_MIN && cpu_monoid_of(lam, &sw) != CPU_M_NONE) {
    scan_generic_chunked(ex, t, frame, right, v, a, out);
    return val_array(out);
  }
  Value acc = v;
  val_array_set(out, right ? n : 0, acc);
  for (size_t k = 0; k < n; k++) {
    if ((k & 255) == 0) fe_poll_interrupt(t->span);
    size_t i = right ? n - 1 - k : k;
    Value x = val_array_get(a, i);
    acc = right ? apply2(ex, lam, frame, x, acc) : apply2(ex, lam, frame, acc, x);
    val_array_set(out, right ? i : i + 1, acc);
  }
  return val_array(out);
}

/* ---- constructors ---- */

size_t cpu_size_arg(const Term *t, double n, size_t elem_size) {
  if (!(n >= 0) || n != floor(n) || isinf(n)) {
    char b[40];
    una_format_real(b, sizeof b, n);
    fe_error(t->span, "%s: size must be a non-negative integer, found %s", fe_prims[t->prim].name, b);
  }
  if (n >= 0x1p63) val_alloc_error(n, (double)elem_size, t->span);
  return (size_t)n;
}

static Value op_iota(const Exec *ex, const Term *t, Value *frame) {
  size_t n = cpu_size_arg(t, ex->eval(ex, t->kids[0], frame).u.r, sizeof(double));
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  return val_array(iota_array(t, n));
}

static Value op_replicate(const Exec *ex, const Term *t, Value *frame) {
  double nr = ex->eval(ex, t->kids[0], frame).u.r;
  Value v = ex->eval(ex, t->kids[1], frame);
  const Type *et = t->type->elem;
  size_t n = cpu_size_arg(t, nr, et->kind == TY_REAL ? sizeof(double) : sizeof(Value));
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  Array *a = val_new_array_of(et, n, t->span);
  if (a->boxed)
    for (size_t i = 0; i < n; i++) a->v[i] = v;
  else
    for (size_t i = 0; i < n; i++) a->r[i] = v.u.r;
  return val_array(a);
}

static Value op_rand(const Exec *ex, const Term *t, Value *frame) {
  double nr = ex->eval(ex, t->kids[0], frame).u.r;
  double seed = ex->eval(ex, t->kids[1], frame).u.r;
  size_t n = cpu_size_arg(t, nr, sizeof(double));
  if (ex->meter) cpu_meter_array(ex->meter, t, n);
  Array *a = val_new_real_array(n, t->span);
  cpu_rand_fill(a->r, n, seed);
  return val_array(a);
}

static const char *file_arg(const Term *t) {
  ASSERT(t->kids[0]->kind == T_STR && t->kids[0]->str);
  return t->kids[0]->str;
}

/* The rank of the array that load or save t reads or writes: its type,
   [R] or nested deeper (checked: fe_type_real_rank). */
static int file_rank(const Term *t) {
  int k = fe_type_real_rank(t->type);
  ASSERT(k >= 1);
  return k;
}

/* The number of reals in a, an array of reals nested rank deep: what load
   and save move, for the cost meter. */
static size_t count_reals(const Array *a, int rank) {
  if (rank == 1) return a->len;
  size_t n = 0;
  for (size_t i = 0; i < a->len; i++) n += count_reals(a->v[i].u.a, rank - 1);
  return n;
}

Value cpu_array_prim(const Exec *ex, const Term *t, Value *frame) {
  switch (t->prim) {
  case PRIM_MAP: return op_map(ex, t, frame);
  case PRIM_MAP2: return op_map(ex, t, frame);
  case PRIM_REDUCE: return op_reduce(ex, t, frame);
  case PRIM_FOLDL: return op_foldl(ex, t, frame);
  case PRIM_SCANL: return op_scan(ex, t, frame, false);
  case PRIM_SCANR: return op_scan(ex, t, frame, true);
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R: {
    Array *a = cpu_eval_array(ex, t->kids[0], frame);
    if (ex->meter) cpu_meter_array(ex->meter, t, a->len);
    if (a->len == 0) return val_array(a);
    return val_array(val_view(a, t->prim == PRIM_SHIFT1L ? 1 : 0, a->len - 1));
  }
  case PRIM_LENGTH: {
    Array *a = cpu_eval_array(ex, t->kids[0], frame);
    if (ex->meter) cpu_meter_array(ex->meter, t, a->len);
    return val_real((double)a->len);
  }
  case PRIM_IOTA: return op_iota(ex, t, frame);
  case PRIM_REPLICATE: return op_replicate(ex, t, frame);
  case PRIM_RAND: return op_rand(ex, t, frame);
  case PRIM_LOAD: {
    int rank = file_rank(t);
    Array *a = npy_load(file_arg(t), rank, t->span);
    if (ex->meter) cpu_meter_array(ex->meter, t, count_reals(a, rank));
    return val_array(a);
  }
  case PRIM_SAVE: {
    int rank = file_rank(t);
    Value a = ex->eval(ex, t->kids[1], frame);
    if (ex->meter) cpu_meter_array(ex->meter, t, count_reals(a.u.a, rank));
    npy_save(file_arg(t), a.u.a, rank, t->span);
    return a;
  }
  case PRIM_INDEX:
  case PRIM_SLICE:
  case PRIM_REDUCE_BY_INDEX: return cpu_index_prim(ex, t, frame);
  case PRIM_LOOP_FOR:
  case PRIM_LOOP_WHILE: return cpu_loop_prim(ex, t, frame);
  case PRIM_TRANSPOSE:
  case PRIM_CONCAT:
  case PRIM_ZIP:
  case PRIM_UNZIP:
  case PRIM_MAP3:
  case PRIM_STOPGRAD_ANY: return cpu_shape_prim(ex, t, frame);
  default: break;
  }
  una_internal_error(__FILE__, __LINE__, una_sprintf("'%s' is not an array builtin", fe_prims[t->prim].name));
}
