/* cuda_host.h: enough of CUDA C++ to compile Una's emitted kernels
   (backend/cuda/emit.c) for the host, so that the tests run them without a
   GPU. The stand-in NVRTC (fake_nvrtc.c) compiles a translation unit with
   this header forced in front of it; the stand-in driver (fake_libcuda.c,
   fake_blocks.c) loads the result and runs each launch's blocks one after
   another, a block's threads as coroutines that switch at every
   __syncthreads and warp shuffle.

   The part outside `#ifdef __cplusplus` is the interface between the two
   sides, read by fake_blocks.c too: a kernel module defines one UnaHostRt
   (`una_host_rt`), whose indices the driver sets before it resumes a thread
   and whose functions the kernels call to synchronise. */
#ifndef UNA_CUDA_HOST_H
#define UNA_CUDA_HOST_H

typedef struct UnaHostDim {
  unsigned x, y, z;
} UnaHostDim;

enum { UNA_SHFL_UP, UNA_SHFL_DOWN, UNA_SHFL_XOR, UNA_SHFL_IDX };

typedef struct UnaHostRt {
  UnaHostDim thread_idx, block_idx, block_dim, grid_dim;
  /* __syncthreads(): returns when every thread of the block still running
     has called it */
  void (*syncthreads)(void);
  /* the warp shuffles: returns the bits `bits` of the lane that kind and
     arg name (or the caller's own where there is none); every lane of mask
     must call it */
  unsigned long long (*shfl)(int kind, unsigned mask, unsigned long long bits, int arg);
} UnaHostRt;

#ifdef __cplusplus
#include <math.h>
#include <string.h>
#include <utility>

extern "C" UnaHostRt una_host_rt;
UnaHostRt una_host_rt;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static /* blocks run one at a time: a static is the block's */
#define threadIdx (una_host_rt.thread_idx)
#define blockIdx (una_host_rt.block_idx)
#define blockDim (una_host_rt.block_dim)
#define gridDim (una_host_rt.grid_dim)

static inline void __syncthreads(void) { una_host_rt.syncthreads(); }
static inline void __threadfence(void) {}
/* threads switch only at __syncthreads and shuffles: a compare-and-swap
   cannot be interrupted */
static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long v) {
  unsigned long long old = *p;
  if (old == cmp) *p = v;
  return old;
}

static inline double atomicAdd(double *p, double v) {
  double old = *p;
  *p = old + v;
  return old;
}
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
  unsigned long long old = *p;
  if (v < old) *p = v;
  return old;
}

static inline double __longlong_as_double(long long x) {
  double d;
  memcpy(&d, &x, sizeof d);
  return d;
}
static inline long long __double_as_longlong(double d) {
  long long x;
  memcpy(&x, &d, sizeof x);
  return x;
}

template <typename T> static inline T una_host_shfl(int kind, unsigned mask, T x, int arg, int width) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "a shuffled value has at most 64 bits");
  if (width != 32) __builtin_trap(); /* sub-warp widths: not needed by Una's kernels */
  unsigned long long bits = 0;
  memcpy(&bits, &x, sizeof x);
  bits = una_host_rt.shfl(kind, mask, bits, arg);
  memcpy(&x, &bits, sizeof x);
  return x;
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T x, unsigned d, int width = 32) {
  return una_host_shfl(UNA_SHFL_UP, mask, x, (int)d, width);
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T x, unsigned d, int width = 32) {
  return una_host_shfl(UNA_SHFL_DOWN, mask, x, (int)d, width);
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T x, int m, int width = 32) {
  return una_host_shfl(UNA_SHFL_XOR, mask, x, m, width);
}
template <typename T> static inline T __shfl_sync(unsigned mask, T x, int lane, int width = 32) {
  return una_host_shfl(UNA_SHFL_IDX, mask, x, lane, width);
}

/* The launch entry the stand-in NVRTC writes for each __global__ function
   f: `una_host_entry_f(params)` calls f with cuLaunchKernel's parameters
   (params[i] points to argument i). */
template <typename... A, size_t... I>
static inline void una_host_call_(void (*f)(A...), void **p, std::index_sequence<I...>) {
  f(*(A *)p[I]...);
}
template <typename... A> static inline void una_host_call(void (*f)(A...), void **p) {
  una_host_call_(f, p, std::index_sequence_for<A...>{});
}
#endif

#endif
