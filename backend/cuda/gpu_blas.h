/* gpu_blas.h: the matrix products on the GPU, with cuBLAS (gpu_blas.c). */
#ifndef UNA_CUDA_GPU_BLAS_H
#define UNA_CUDA_GPU_BLAS_H

#include "../blas.h"

/* exec.h's blas on the GPU: the product j into a new array of its reals
   (on the device for a matrix-vector product). Raises at s. */
Array *gpu_blas_run(const Exec *ex, const CpuBlasJob *j, Span s);

/* How many products it has run, and how many matrices it has copied to
   the device, in this process (the tests read them). */
size_t gpu_blas_products(void);
size_t gpu_blas_copies(void);

#endif
