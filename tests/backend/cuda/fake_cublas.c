/* fake_cublas.c: a stand-in for libcublas that runs on the host, beside
   the stand-in driver (fake_libcuda.c, whose device memory is host memory
   and whose launches finish before they return), for check_gpu on a
   machine without a GPU. Built on its own as $(B)/fake/libcublas.so and
   opened through $UNA_LIBCUBLAS. Its products are the reference
   definitions, column-major, as cuBLAS documents them:
     dgemv: y = alpha op(A) x + beta y, A m x n with leading dimension lda
     dgemm: C = alpha op(A) op(B) + beta C, C m x n, op(A) m x k, op(B) k x n
   so that a row-major product given to cuBLAS the wrong way round gives
   wrong numbers here too. FAKE_CUDA_TRACE set: each call is printed on
   stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define API __attribute__((visibility("default")))

enum { SUCCESS = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7 };
static int handle_dummy;
static void *bound_stream;

API int cublasCreate_v2(void **h);
int cublasCreate_v2(void **h) {
  *h = &handle_dummy;
  return SUCCESS;
}

API int cublasSetStream_v2(void *h, void *stream);
int cublasSetStream_v2(void *h, void *stream) {
  if (h != &handle_dummy) return NOT_INITIALIZED;
  bound_stream = stream;
  return SUCCESS;
}

static void trace(const char *what, int ta, int tb, int m, int n, int k) {
  if (getenv("FAKE_CUDA_TRACE")) fprintf(stderr, "fake cuBLAS: %s %c%c m=%d n=%d k=%d\n", what, ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k);
}

API int cublasDgemv_v2(void *h, int trans, int m, int n, const double *alpha, const double *a, int lda,
                       const double *x, int incx, const double *beta, double *y, int incy);
int cublasDgemv_v2(void *h, int trans, int m, int n, const double *alpha, const double *a, int lda, const double *x,
                   int incx, const double *beta, double *y, int incy) {
  if (h != &handle_dummy || !bound_stream) return NOT_INITIALIZED;
  if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0 || (trans != 0 && trans != 1)) return INVALID_VALUE;
  trace("dgemv", trans, 0, m, n, 0);
  int ny = trans ? n : m, nx = trans ? m : n;
  for (int i = 0; i < ny; i++) {
    double s = 0;
    for (int j = 0; j < nx; j++) s += (trans ? a[j + (size_t)i * lda] : a[i + (size_t)j * lda]) * x[(size_t)j * incx];
    y[(size_t)i * incy] = *alpha * s + (*beta == 0 ? 0 : *beta * y[(size_t)i * incy]);
  }
  return SUCCESS;
}

API int cublasDgemm_v2(void *h, int ta, int tb, int m, int n, int k, const double *alpha, const double *a, int lda,
                       const double *b, int ldb, const double *beta, double *c, int ldc);
int cublasDgemm_v2(void *h, int ta, int tb, int m, int n, int k, const double *alpha, const double *a, int lda,
                   const double *b, int ldb, const double *beta, double *c, int ldc) {
  if (h != &handle_dummy || !bound_stream) return NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || lda < ((ta ? k : m) > 1 ? (ta ? k : m) : 1) ||
      ldb < ((tb ? n : k) > 1 ? (tb ? n : k) : 1) || ldc < (m > 1 ? m : 1))
    return INVALID_VALUE;
  trace("dgemm", ta, tb, m, n, k);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < k; l++) {
        double av = ta ? a[l + (size_t)i * lda] : a[i + (size_t)l * lda];
        double bv = tb ? b[j + (size_t)l * ldb] : b[l + (size_t)j * ldb];
        s += av * bv;
      }
      c[i + (size_t)j * ldc] = *alpha * s + (*beta == 0 ? 0 : *beta * c[i + (size_t)j * ldc]);
    }
  return SUCCESS;
}
