/* outer.c: an outer product that the plan recognized (plan/note.h:
   OUTER), `map (p. map (q. p * q) v) x` over the reals of x: the [[R]]
   whose row i is x[i] * v, written into one buffer by a loop over the
   rows, cut into chunks of whole rows on the CPU's threads. Each element
   is the one multiplication the map as written makes, its operands in the
   written order, so the bits are the same; the rows are views of the
   buffer, consecutive, as a matrix product's are (BLAS reads them in
   place). */
#include "outer.h"
#include "array_int.h"

#include "plan/note.h"
#include "../frontend/ir/common.h"

static _Atomic size_t products;

size_t cpu_outer_products(void) { return products; }

typedef struct {
  const double *x, *v;
  double *c;
  size_t m, n;
  bool swapped;
  int nchunks;
} Outer;

static void outer_chunk(void *ctx, int thread, int chunk) {
  const Outer *o = ctx;
  size_t lo, hi;
  cpu_chunk_bounds(o->m, 1, o->nchunks, chunk, &lo, &hi);
  for (size_t i = lo; i < hi; i++) {
    double xi = o->x[i], *ci = o->c + i * o->n;
    const double *v = o->v;
    if (o->swapped)
      for (size_t j = 0; j < o->n; j++) ci[j] = v[j] * xi;
    else
      for (size_t j = 0; j < o->n; j++) ci[j] = xi * v[j];
  }
}

bool cpu_outer_map(const Exec *ex, const Term *t, Value *frame, Value *out) {
  const PlanMatrix *pm = t->note->matrix;
  if (!ex->kernel || ex->meter || ex->gpu) return false;
  Array *x = cpu_eval_array(ex, t->kids[1], frame);
  Value vv = ex->eval(ex, pm->other, frame);
  if (x->boxed || vv.kind != V_ARRAY || vv.u.a->boxed) return false;
  Array *v = vv.u.a;
  size_t m = x->len, n = v->len;
  if (m == 0 || n == 0 || m > SIZE_MAX / sizeof(double) / n) return false;
  val_host(x);
  val_host(v);
  fe_poll_interrupt(t->span);
  Array *c = val_new_real_array(m * n, t->span);
  Outer o = {x->r, v->r, c->r, m, n, pm->swapped, 1};
  if (m * n >= CPU_PAR_MIN) o.nchunks = m < CPU_CHUNKS ? (int)m : CPU_CHUNKS;
  cpu_parallel_chunks(cpu_exec_threads(ex), o.nchunks, outer_chunk, &o, t->span);
  Array *r = val_new_boxed_array(m, t->span);
  for (size_t i = 0; i < m; i++) r->v[i] = val_array(val_view(c, i * n, n));
  *out = val_array(r);
  products++;
  return true;
}
