/* cublas.h: the matrix products on the GPU with cuBLAS, loaded with
   dlopen as the driver is (cublas.c). Una's matrices are row-major;
   cuBLAS is column-major, so each product is given as its transpose
   (cublas.c says how). */
#ifndef UNA_CUBLAS_H
#define UNA_CUBLAS_H

#include "driver.h"

/* Whether cuBLAS is there (libcublas from $UNA_LIBCUBLAS, else the
   system's), with a handle on the driver's context and stream. Tried
   once; false after that when it is not. */
bool cuda_blas_open(void);

/* y (m elements) = A x for A of m rows of k, or, trans, A^T x for A of k
   rows of m (row-major, rows consecutive); x of k. */
void cuda_dgemv(CudaPtr a, size_t m, size_t k, bool trans, CudaPtr x, CudaPtr y, Span s);
/* C = A B^T (b_kn false: B of n rows of k) or C = A B (b_kn: B of k rows
   of n), A of m rows of k, C of m rows of n, all row-major. */
void cuda_dgemm(CudaPtr a, CudaPtr b, CudaPtr c, size_t m, size_t n, size_t k, bool b_kn, Span s);

#endif
