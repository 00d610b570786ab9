/* scatter.c: reduce_by_index D f v I V on the CPU: D with each V[k]
   combined into position I[k] by f, in order of k.

   When f is a builtin monoid that commutes (+ * max min) and there are
   many more values than places, the values are cut into one chunk per
   SCATTER_SPREAD values a place, up to CPU_CHUNKS (a number that depends
   only on the lengths, never on the threads, so the bits are the same
   with 1 thread or 16): chunk 0 goes into the result, chunk c > 0 into
   its own buffer of f's unit, and the buffers are then combined into the
   result in chunk order. Otherwise one pass combines them in order.

   V written as a map or map2 (the gradient of a gather's usual shape,
   `map (i. g a[i]) I`) is fused by the plan (plan/note.h: fused): its
   elements are computed block by block into the scatter, never stored.
   Its faults come before any bad index, as when it is stored first: a
   chunk that meets a bad index stops combining but goes on computing its
   values, and the first bad index in order is raised once they are all
   done. */
#include "array_ops.h"
#include "array_int.h"
#include "cost_meter.h"
#include "plan/note.h"

#include <gc.h>
#include <stdint.h>

enum {
  SCATTER_BLOCK = 2048, /* values per pass of a monoid's scatter loop */
  SCATTER_SPREAD = 4    /* values per place for each chunk (10^7 values into 10^6 places: 2 chunks) */
};

/* Whether every x[0..k) is an index of an array of len elements. */
CPU_VECTOR_LOOP static bool indices_hold(const double *x, size_t k, double len) {
  int bad = 0;
  for (size_t j = 0; j < k; j++) bad |= !(x[j] >= 0) | !(x[j] < len) | (x[j] != floor(x[j]));
  return !bad;
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

typedef struct ScatterJob {
  const MonoidFns *m;
  const double *is, *vs; /* vs NULL: computed by g (a fused map) */
  const CpuFusedMap *f;
  CpuKernelRun g[CPU_MAX_THREADS];
  double *part[CPU_CHUNKS]; /* part[0]: the result */
  size_t len, n;
  int nchunks;
  size_t bad[CPU_CHUNKS]; /* the first block of a chunk with a bad index, or SIZE_MAX */
} ScatterJob;

/* Values k .. k + c - 1 of the fused map into buf, by the run g. */
static void fused_values(const ScatterJob *j, CpuKernelRun *g, size_t k, size_t c, double *buf) {
  for (size_t q = 0; q < c; q += CPU_BLOCK) cpu_fused_map_block(j->f, g, k + q, min_size(CPU_BLOCK, c - q), buf + q);
}

static void scatter_chunk(void *ctx, int thread, int c) {
  ScatterJob *j = ctx;
  size_t lo, hi;
  cpu_chunk_bounds(j->n, SCATTER_BLOCK, j->nchunks, c, &lo, &hi);
  double *d = j->part[c];
  if (c > 0)
    for (size_t i = 0; i < j->len; i++) d[i] = j->m->unit;
  double buf[SCATTER_BLOCK];
  for (size_t k = lo; k < hi && !fe_stopping(); k += SCATTER_BLOCK) {
    size_t cnt = min_size(SCATTER_BLOCK, hi - k);
    const double *v = j->vs ? j->vs + k : buf;
    if (!j->vs) fused_values(j, &j->g[thread], k, cnt, buf);
    if (j->bad[c] != SIZE_MAX) continue; /* the values only, for their faults */
    if (!indices_hold(j->is + k, cnt, (double)j->len)) {
      j->bad[c] = k;
      continue;
    }
    j->m->scatter(d, j->is + k, v, cnt);
  }
}

typedef struct CombineJob {
  const ScatterJob *s;
  size_t len;
  int nchunks;
} CombineJob;

/* result[i] = OP(result[i], part[c][i]) for c = 1, 2, ... in order (OP
   commutes, so zipr's OP(x, acc) is the same bits) */
static void combine_chunk(void *ctx, int thread, int c) {
  CombineJob *j = ctx;
  size_t lo, hi;
  cpu_chunk_bounds(j->len, CPU_BLOCK, j->nchunks, c, &lo, &hi);
  for (int p = 1; p < j->s->nchunks; p++) j->s->m->zipr(j->s->part[0] + lo, j->s->part[p] + lo, hi - lo);
}

/* The number of chunks for n values into len places. */
static int scatter_chunks(const MonoidFns *m, size_t n, size_t len) {
  if (!m->commutes || n < CPU_PAR_MIN) return 1;
  size_t c = n / ((size_t)SCATTER_SPREAD * (len ? len : 1));
  return c < 1 ? 1 : c > CPU_CHUNKS ? CPU_CHUNKS : (int)c;
}

/* Combines n values into out with the monoid m (values vs, or the fused
   map f), raising the first bad index at t. */
static void scatter_monoid(const Exec *ex, const Term *t, const MonoidFns *m, Array *out, const Array *is,
                           const double *vs, CpuFusedMap *f) {
  ScatterJob j;
  j.m = m;
  j.is = is->r;
  j.vs = vs;
  j.f = f;
  j.len = out->len;
  j.n = is->len;
  j.nchunks = scatter_chunks(m, j.n, j.len);
  j.part[0] = out->r;
  for (int c = 1; c < j.nchunks; c++) j.part[c] = GC_MALLOC_ATOMIC(sizeof(double) * (j.len ? j.len : 1));
  for (int c = 0; c < CPU_CHUNKS; c++) j.bad[c] = SIZE_MAX;
  int nthreads = cpu_exec_threads(ex);
  if (f) cpu_kernel_runs(nthreads, j.g, &f->g, j.nchunks);
  cpu_parallel_chunks(nthreads, j.nchunks, scatter_chunk, &j, t->span); /* the values' faults */
  for (int c = 0; c < j.nchunks; c++) /* the first bad index: in the first block found with one */
    if (j.bad[c] != SIZE_MAX)
      for (size_t k = j.bad[c];; k++) cpu_index_arg(t->span, is->r[k], out->len);
  if (j.nchunks > 1) {
    CombineJob cj = {&j, j.len, cpu_chunks_for(j.len)};
    cpu_parallel_chunks(nthreads, cj.nchunks, combine_chunk, &cj, t->span);
  }
}

/* One by one through the tree of t's function f: out[I[k]] = f out[I[k]] V[k]. */
static void scatter_generic(const Exec *ex, const Term *t, Value *frame, Array *out, const Array *is,
                            const Array *vs) {
  const Term *lam = t->kids[0];
  for (size_t k = 0; k < is->len; k++) {
    if ((k & 4095) == 0) fe_poll_interrupt(t->span);
    size_t i = cpu_index_arg(t->span, is->r[k], out->len);
    frame[lam->syms[0]->slot] = val_array_get(out, i);
    frame[lam->syms[1]->slot] = val_array_get(vs, k);
    val_array_set(out, i, ex->eval(ex, lam->kids[0], frame));
  }
}

/* The result is D itself when the plan found it fresh (plan/note.h:
   in_place; O(length I)), else a copy. A fresh D from the GPU has a device
   copy that a write on the host would leave stale: it is copied too. */
Value cpu_reduce_by_index(const Exec *ex, const Term *t, Value *frame) {
  const Term *vt = t->kids[4];
  Array *d = cpu_eval_array(ex, t->kids[1], frame);
  (void)ex->eval(ex, t->kids[2], frame); /* the unit: a sequential fold needs none */
  Array *is = cpu_eval_array(ex, t->kids[3], frame);
  const MonoidFns *m = d->boxed ? NULL : cpu_monoid_loops(ex, t->kids[0]);
  CpuFusedMap f;
  bool fused = m && vt->note && vt->note->fused && cpu_kernels_enabled(ex);
  Array *vs = NULL;
  if (fused && !cpu_fused_map_bind(ex, vt, frame, 0, &f)) {
    vs = cpu_fused_map_array(ex, vt, frame, &f);
    fused = false;
  } else if (!fused) {
    vs = cpu_eval_array(ex, vt, frame);
  }
  size_t nv = fused ? f.n : vs->len;
  if (is->len != nv) fe_error(t->span, "reduce_by_index: %zu indices but %zu values", is->len, nv);
  if (ex->meter) cpu_meter_array(ex->meter, t, is->len);
  Array *out = d;
  if (!(t->note && t->note->in_place && !d->dev)) {
    out = val_new_array_of(t->type->elem, d->len, t->span);
    if (d->len && d->boxed) memcpy(out->v, d->v, sizeof(Value) * d->len);
    else if (d->len) memcpy(out->r, d->r, sizeof(double) * d->len);
  }
  if (nv == 0) return val_array(out);
  if (m && (fused || !vs->boxed)) scatter_monoid(ex, t, m, out, is, fused ? NULL : vs->r, fused ? &f : NULL);
  else scatter_generic(ex, t, frame, out, is, vs);
  return val_array(out);
}
