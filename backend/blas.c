/* blas.c: matrix products with BLAS on the CPU (blas.h).

   The plan's PlanMatrix (plan/note.h) names the map's second operand; the
   map's own array X is already evaluated. For the map `map (p. dot p v) X`
   the result is X v, one cblas_dgemv; for `map (p. map (q. dot p q) Y) X`
   it is X Y^T, one cblas_dgemm with Y transposed (Y's rows are the
   columns of the product). The prelude's matmul a b is that map over
   `let bt = transpose b`: the plan leaves that let to the product, which
   gives BLAS b itself (c = a b), so no transpose is computed at all; when
   the map runs as written instead, cpu_blas_as_written computes the
   let's transpose first.

   Anything the map as written would raise (a row of another length than
   the vector, map2's error) or that BLAS does not do the same way (an
   empty dimension: BLAS leaves its result alone) goes back to the map as
   written, which raises or computes it: cpu_blas_map returns false before
   anything is computed.

   Chunks (parallel.h): the rows of the result (or, for a product with
   more columns than rows, its columns) are cut into chunks of whole
   ROW_BLOCK-row blocks, their number a function of the sizes only; each
   chunk is one single-threaded BLAS call, made on Una's threads. OpenBLAS
   itself runs on one thread (its own threads would make the bits depend
   on their number: its partition of the work changes the order of the
   additions). With OpenBLAS's kernels, a chunk whose bounds are multiples
   of 64 rows gives the same bits as one call over the whole matrix (tests
   and docs/cpu.md), so the result does not depend on the number of
   threads, nor on whether the rows were gathered. */
#include "blas.h"
#include "array_int.h"
#include "parallel.h"
#include "plan/note.h"

#include <limits.h>
#include <stdint.h>

#ifndef UNA_NO_BLAS
#include <cblas.h>
#endif

enum {
  ROW_BLOCK = 64,   /* chunks are whole blocks of this many rows */
  GEMV_ROWS = 64,   /* rows per chunk at least, matrix-vector */
  GEMM_ROWS = 128   /* rows (columns) per chunk at least, matrix product:
                       each chunk packs the whole other matrix again */
};
/* Products with fewer multiplications than this run as one call. */
#define GEMM_PAR_MIN ((size_t)1 << 21)

static size_t products;

size_t cpu_blas_products(void) { return products; }

void cpu_blas_as_written(const Exec *ex, const Term *t, Value *frame) {
  const PlanMatrix *pm = t->note->matrix;
  if (pm->let) frame[pm->let->sym->slot] = ex->eval(ex, pm->let->kids[0], frame);
}

/* The rows of the [[R]] a as one row-major buffer of k elements a row
   (value.h: val_rows_flat, remembered when found consecutive). */
static const double *rows_of(Array *a, size_t k) { return val_rows_flat(a, k); }

static bool fits_int(size_t n) { return n <= (size_t)INT_MAX; }

/* B^T v for `let t = transpose B in map (p. dot p v) t` (PlanMatrix.x_let):
   B of k rows of m, v of k; false when the map as written would raise or
   treat an empty dimension its own way. */
static bool job_transposed(const Exec *ex, const PlanMatrix *pm, Value *frame, CpuBlasJob *j) {
  Array *bm = cpu_eval_array(ex, pm->untransposed, frame);
  if (!bm->boxed || bm->len == 0) return false;
  j->kind = PLAN_GEMV;
  j->trans = true;
  j->k = bm->len;
  j->m = bm->v[0].u.a->len;
  if (j->m == 0 || !fits_int(j->m) || !fits_int(j->k)) return false;
  if (!(j->a = rows_of(bm, j->m))) return false; /* ragged: transpose raises */
  j->arows = bm;
  Array *v = cpu_eval_array(ex, pm->other, frame);
  if (v->boxed || v->len != j->k) return false;
  j->vec = v;
  return true;
}

/* The product of the map t over the rows x (NULL for x_let), its
   operands evaluated in frame; false when the map must run as written. */
static bool job_of(const Exec *ex, const Term *t, Value *frame, Array *x, CpuBlasJob *j) {
  const PlanMatrix *pm = t->note->matrix;
  memset(j, 0, sizeof *j);
  if (pm->kind == PLAN_OUTER) return false; /* outer.c's */
  if (pm->x_let) return job_transposed(ex, pm, frame, j);
  if (x->len == 0 || !x->boxed) return false;
  j->kind = pm->kind;
  j->m = x->len;
  /* the other operand: evaluated once, as every row would evaluate it (or,
     for a let left to the product, the matrix it would transpose) */
  Array *v = cpu_eval_array(ex, pm->untransposed ? pm->untransposed : pm->other, frame);
  if (pm->kind == PLAN_GEMV) {
    if (v->boxed) return false;
    j->k = v->len;
    j->vec = v;
  } else if (pm->untransposed) {
    /* v is B, k rows of n: its transpose, n rows of k, is the map's Y */
    if (!v->boxed || v->len == 0) return false;
    j->b_kn = true;
    j->k = v->len;
    j->n = v->v[0].u.a->len;
    if (j->n == 0 || x->v[0].u.a->len != j->k) return false;
  } else {
    if (!v->boxed || v->len == 0) return false;
    j->n = v->len;
    j->k = x->v[0].u.a->len;
  }
  if (j->k == 0 || !fits_int(j->m) || !fits_int(j->n) || !fits_int(j->k)) return false;
  if (!(j->a = rows_of(x, j->k))) return false;
  j->arows = x;
  if (pm->kind == PLAN_GEMM && !(j->b = rows_of(v, j->b_kn ? j->n : j->k))) return false;
  if (pm->kind == PLAN_GEMM) j->brows = v;
  return pm->kind == PLAN_GEMV || j->m <= SIZE_MAX / sizeof(double) / j->n;
}

static Array *run_cpu(const Exec *ex, const CpuBlasJob *j, Span s);

bool cpu_blas_map(const Exec *ex, const Term *t, Value *frame, Array *x, Value *out) {
  const PlanMatrix *pm = t->note ? t->note->matrix : NULL;
  if (!pm || !ex->kernel || ex->meter || (ex->gpu ? !ex->blas : !cpu_blas_available())) return false;
  CpuBlasJob j;
  if (!job_of(ex, t, frame, x, &j)) return false;
  Array *c = ex->gpu ? ex->blas(ex, &j, t->span) : run_cpu(ex, &j, t->span);
  if (!c) return false;
  if (j.kind == PLAN_GEMV) {
    *out = val_array(c);
    return true;
  }
  Array *r = val_new_boxed_array(j.m, t->span);
  for (size_t i = 0; i < j.m; i++) r->v[i] = val_array(val_view(c, i * j.n, j.n));
  *out = val_array(r);
  return true;
}

#ifdef UNA_NO_BLAS

bool cpu_blas_available(void) { return false; }

static Array *run_cpu(const Exec *ex, const CpuBlasJob *j, Span s) { return NULL; }

Array *cpu_blas_rows_times(const Exec *ex, Array *a, Array *m, Span s) { return NULL; }

#else

bool cpu_blas_available(void) { return true; }

/* A product cut into chunks: of a's rows, or of b's when by_cols. */
typedef struct Job {
  const CpuBlasJob *p;
  const double *b; /* p's b, or GEMV's vector on the host */
  double *c;
  bool by_cols;
  int nchunks;
} Job;

static void run_chunk(void *ctx, int thread, int chunk) {
  const Job *jb = ctx;
  const CpuBlasJob *j = jb->p;
  size_t lo, hi;
  cpu_chunk_bounds(jb->by_cols ? j->n : j->m, ROW_BLOCK, jb->nchunks, chunk, &lo, &hi);
  if (hi <= lo) return;
  int k = (int)j->k, n = (int)j->n;
  if (j->kind == PLAN_GEMV && j->trans)
    cblas_dgemv(CblasRowMajor, CblasTrans, k, (int)(hi - lo), 1.0, j->a + lo, (int)j->m, jb->b, 1, 0.0, jb->c + lo, 1);
  else if (j->kind == PLAN_GEMV)
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)(hi - lo), k, 1.0, j->a + lo * j->k, k, jb->b, 1, 0.0, jb->c + lo, 1);
  else if (!jb->by_cols)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, j->b_kn ? CblasNoTrans : CblasTrans, (int)(hi - lo), n, k, 1.0,
                j->a + lo * j->k, k, jb->b, j->b_kn ? n : k, 0.0, jb->c + lo * j->n, n);
  else if (!j->b_kn)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)j->m, (int)(hi - lo), k, 1.0, j->a, k, jb->b + lo * j->k,
                k, 0.0, jb->c + lo, n);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)j->m, (int)(hi - lo), k, 1.0, j->a, k, jb->b + lo, n,
                0.0, jb->c + lo, n);
}

/* The largest power of two <= n (n >= 1), at most CPU_CHUNKS. */
static int chunks_pow2(size_t n) {
  int c = 1;
  while (c < CPU_CHUNKS && (size_t)c * 2 <= n) c *= 2;
  return c;
}

/* The chunks of jb, from its sizes only. */
static void plan_chunks(Job *jb) {
  const CpuBlasJob *j = jb->p;
  jb->by_cols = false;
  jb->nchunks = 1;
  if (j->kind == PLAN_GEMV) {
    if (j->m * j->k >= CPU_PAR_MIN) jb->nchunks = chunks_pow2(j->m / GEMV_ROWS);
    return;
  }
  if ((double)j->m * (double)j->n * (double)j->k < (double)GEMM_PAR_MIN) return;
  jb->by_cols = j->n > j->m;
  jb->nchunks = chunks_pow2((jb->by_cols ? j->n : j->m) / GEMM_ROWS);
}

/* OpenBLAS on one thread, checked at each product: a program that links
   libuna and calls OpenBLAS itself (bench/cpu's C baselines) may have set
   another number since. */
static void one_thread(void) {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

/* Runs the product j into a new array of its reals, on all cores. */
static Array *run_cpu(const Exec *ex, const CpuBlasJob *j, Span s) {
  fe_poll_interrupt(s);
  Array *c = val_new_real_array(j->kind == PLAN_GEMV ? j->m : j->m * j->n, s);
  Job jb = {j, j->b, c->r, false, 1};
  if (j->vec) {
    val_host(j->vec);
    jb.b = j->vec->r;
  }
  one_thread();
  plan_chunks(&jb);
  cpu_parallel_chunks(cpu_exec_threads(ex), jb.nchunks, run_chunk, &jb, s);
  products++;
  return c;
}

Array *cpu_blas_rows_times(const Exec *ex, Array *a, Array *m, Span s) {
  if (!a->boxed || !m->boxed || a->len == 0 || m->len == 0) return NULL;
  CpuBlasJob j;
  memset(&j, 0, sizeof j);
  j.kind = PLAN_GEMM;
  j.m = a->len;
  j.n = m->len;
  j.k = m->v[0].u.a->len;
  if (j.k == 0 || !fits_int(j.m) || !fits_int(j.n) || !fits_int(j.k) || j.m > SIZE_MAX / sizeof(double) / j.n)
    return NULL;
  if (!(j.a = rows_of(a, j.k)) || !(j.b = rows_of(m, j.k))) return NULL;
  return run_cpu(ex, &j, s);
}

#endif
