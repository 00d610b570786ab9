/* gpu_blas.c: the matrix products of a program run on the GPU (exec.h's
   blas; the products blas.c finds, with blas.c's checks): a matrix's
   rows, which live on the host as every nested array does, copied to the
   device at each product from their one host buffer; a vector where it
   is; cuBLAS (cublas.c); a matrix-vector product's result left on the
   device, a matrix product's (rows: a nested array) brought back. */
#include "gpu_blas.h"
#include "cublas.h"
#include "gpu_array.h"

static size_t products;

size_t gpu_blas_products(void) { return products; }

/* n reals of the host buffer p in a new device buffer. */
static DevBuf *upload(const double *p, size_t n, Span s) {
  DevBuf *b = cuda_devbuf_new(n * sizeof(double), s);
  cuda_upload(b->ptr, p, n * sizeof(double), s);
  return b;
}

Array *gpu_blas_run(const Exec *ex, const CpuBlasJob *j, Span s) {
  (void)ex;
  fe_poll_interrupt(s);
  DevBuf *a = upload(j->a, j->m * j->k, s);
  products++;
  if (j->kind == PLAN_GEMV) {
    Array *y = gpu_new_array(j->m, s);
    CudaPtr x = gpu_array_ptr(j->vec, s), yp = gpu_array_ptr(y, s);
    if (j->trans) cuda_dgemv_t(a->ptr, j->k, j->m, x, yp, s);
    else cuda_dgemv(a->ptr, j->m, j->k, x, yp, s);
    GC_reachable_here(a);
    return y;
  }
  DevBuf *b = upload(j->b, j->n * j->k, s), *c = cuda_devbuf_new(j->m * j->n * sizeof(double), s);
  cuda_dgemm(a->ptr, b->ptr, c->ptr, j->m, j->n, j->k, j->b_kn, s);
  Array *r = val_new_real_array(j->m * j->n, s);
  cuda_download(r->r, c->ptr, j->m * j->n * sizeof(double), s);
  GC_reachable_here(a);
  GC_reachable_here(b);
  GC_reachable_here(c);
  return r;
}
