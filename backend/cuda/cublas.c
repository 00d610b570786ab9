/* cublas.c: cuBLAS behind cublas.h, opened with dlopen (libcublas.so.13,
   .12, .11 or libcublas.so, or $UNA_LIBCUBLAS), one handle on the
   driver's stream, so its products are ordered with Una's kernels and
   copies.

   cuBLAS reads column-major matrices: a row-major A of m rows of k is,
   to it, the k x m matrix A^T with leading dimension k. So
     y = A x      is  dgemv(T, k, m, A, k, x, y)       (A^T as stored, transposed)
     y = A^T x    is  dgemv(N, m, k, A, m, x, y)       (A of k rows of m)
     C = A B^T    is  C^T = B A^T: dgemm(T, N, n, m, k, B, k, A, k, C, n)
     C = A B      is  C^T = B^T A^T: dgemm(N, N, n, m, k, B, n, A, k, C, n)
   with C row-major, m rows of n (C^T column-major, n x m, leading
   dimension n). */
#include "cublas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

typedef void *CublasHandle;
typedef int CublasStatus; /* 0: CUBLAS_STATUS_SUCCESS */
enum { OP_N = 0, OP_T = 1 };

static struct {
  CublasStatus (*create)(CublasHandle *h);
  CublasStatus (*set_stream)(CublasHandle h, void *stream);
  CublasStatus (*dgemv)(CublasHandle h, int trans, int m, int n, const double *alpha, const double *a, int lda,
                        const double *x, int incx, const double *beta, double *y, int incy);
  CublasStatus (*dgemm)(CublasHandle h, int ta, int tb, int m, int n, int k, const double *alpha, const double *a,
                        int lda, const double *b, int ldb, const double *beta, double *c, int ldc);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool opened;
static CublasHandle handle;

static void *open_lib(void) {
  const char *forced = getenv("UNA_LIBCUBLAS");
  if (forced && *forced) return dlopen(forced, RTLD_NOW | RTLD_LOCAL);
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  return NULL;
}

static void open_blas(void) {
  if (!cuda_ready()) return;
  void *lib = open_lib();
  if (!lib) return;
  *(void **)&api.create = dlsym(lib, "cublasCreate_v2");
  *(void **)&api.set_stream = dlsym(lib, "cublasSetStream_v2");
  *(void **)&api.dgemv = dlsym(lib, "cublasDgemv_v2");
  *(void **)&api.dgemm = dlsym(lib, "cublasDgemm_v2");
  if (!api.create || !api.set_stream || !api.dgemv || !api.dgemm) return;
  FeTry t;
  if (!fe_try(&t)) return; /* the GPU cannot be used: no cuBLAS either */
  void *stream = cuda_stream(fe_nospan);
  fe_untry(&t);
  if (api.create(&handle) != 0 || api.set_stream(handle, stream) != 0) return;
  opened = true;
}

bool cuda_blas_open(void) {
  pthread_once(&once, open_blas);
  return opened;
}

static void check(CublasStatus st, Span s, const char *what) {
  if (st != 0) fe_error(s, "cuBLAS failed (status %d) in %s", st, what);
}

static const double one = 1.0, zero = 0.0;

static const double *dev(CudaPtr p) { return (const double *)(uintptr_t)p; }

void cuda_dgemv(CudaPtr a, size_t m, size_t k, bool trans, CudaPtr x, CudaPtr y, Span s) {
  (void)cuda_stream(s); /* the context current on this thread */
  int rows = trans ? (int)m : (int)k, cols = trans ? (int)k : (int)m; /* column-major, as stored */
  check(api.dgemv(handle, trans ? OP_N : OP_T, rows, cols, &one, dev(a), rows, dev(x), 1, &zero, (double *)dev(y), 1),
        s, "a matrix-vector product");
}

void cuda_dgemm(CudaPtr a, CudaPtr b, CudaPtr c, size_t m, size_t n, size_t k, bool b_kn, Span s) {
  (void)cuda_stream(s);
  check(api.dgemm(handle, b_kn ? OP_N : OP_T, OP_N, (int)n, (int)m, (int)k, &one, dev(b), b_kn ? (int)n : (int)k,
                  dev(a), (int)k, &zero, (double *)dev(c), (int)n),
        s, "a matrix product");
}
