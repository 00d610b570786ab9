/* gpu_blas.c: the matrix products of a program run on the GPU (exec.h's
   blas; the products blas.c finds, with blas.c's checks): a matrix's
   rows, which live on the host as every nested array does, copied to the
   device from their one host buffer (once per matrix when they are
   consecutive there, else at each product); a vector where it is; cuBLAS
   (cublas.c); a matrix-vector product's result left on the device, a
   matrix product's (rows: a nested array) brought back. */
#include "gpu_blas.h"
#include "cublas.h"
#include "gpu_array.h"

static size_t products, copies;

size_t gpu_blas_products(void) { return products; }
size_t gpu_blas_copies(void) { return copies; }

/* The n reals of p, the rows of the matrix m, on the device: a new copy,
   kept with m (value.h: dev) when p is m's remembered rows, so that a
   loop's products with one matrix copy it once. */
static DevBuf *on_device(Array *m, const double *p, size_t n, Span s) {
  bool remembered = m->rows_flat == p;
  if (remembered && m->dev && m->dev->bytes == n * sizeof(double)) return m->dev;
  DevBuf *b = cuda_devbuf_new(n * sizeof(double), s);
  cuda_upload(b->ptr, p, n * sizeof(double), s);
  copies++;
  if (remembered) m->dev = b;
  return b;
}

Array *gpu_blas_run(const Exec *ex, const CpuBlasJob *j, Span s) {
  (void)ex;
  fe_poll_interrupt(s);
  DevBuf *a = on_device(j->arows, j->a, j->m * j->k, s);
  products++;
  if (j->kind == PLAN_GEMV) {
    Array *y = gpu_new_array(j->m, s);
    CudaPtr x = gpu_array_ptr(j->vec, s), yp = gpu_array_ptr(y, s);
    cuda_dgemv(a->ptr, j->m, j->k, j->trans, x, yp, s);
    GC_reachable_here(a);
    return y;
  }
  DevBuf *b = on_device(j->brows, j->b, j->n * j->k, s), *c = cuda_devbuf_new(j->m * j->n * sizeof(double), s);
  cuda_dgemm(a->ptr, b->ptr, c->ptr, j->m, j->n, j->k, j->b_kn, s);
  Array *r = val_new_real_array(j->m * j->n, s);
  cuda_download(r->r, c->ptr, j->m * j->n * sizeof(double), s);
  GC_reachable_here(a);
  GC_reachable_here(b);
  GC_reachable_here(c);
  return r;
}
