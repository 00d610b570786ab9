/* driver.h: the CUDA driver API, opened at run time with dlopen so that the
   binary builds and runs where no driver exists. One device (device 0), its
   primary context and one stream; every call's status is checked, and a
   failure becomes a located FeError (or, for cuda_open, a reason string).

   Device memory: cuda_alloc takes memory from the stream-ordered pool
   (cuMemAllocAsync; cuMemAlloc where the driver lacks it). Array payloads
   live in a DevBuf, a GC object whose finaliser frees the memory, so a
   device array is freed when it becomes unreachable. Because the collector
   does not see device memory, cuda_alloc runs a collection (and the
   finalisers) when the bytes allocated since the last one pass a quarter of
   the device's memory, and once more before it reports "out of memory". */
#ifndef UNA_CUDA_DRIVER_H
#define UNA_CUDA_DRIVER_H

#include "../../frontend/ir/error.h"
#include <stddef.h>
#include <stdint.h>

typedef uint64_t CudaPtr; /* CUdeviceptr */

/* Opens the driver (libcuda.so.1, or the path in $UNA_LIBCUDA for tests),
   initialises it, takes device 0's primary context and makes a stream.
   Returns true when all of that worked; otherwise *why (when why is not
   NULL) says what is missing in one clause without a trailing period, e.g.
   "no CUDA driver found (libcuda.so.1: cannot open shared object file: No
   such file or directory)" or "no CUDA device found (the driver reports
   none)". The first call does the work; later calls return its result. */
bool cuda_open(const char **why);

/* True once cuda_open has succeeded and no sticky error has happened since. */
bool cuda_ready(void);

/* Facts about the open device (cuda_open must have succeeded). */
int cuda_arch(void);             /* compute capability as 10*major+minor: 90 */
int cuda_driver_version(void);   /* cuDriverGetVersion: 13000 */
const char *cuda_device_name(void);
size_t cuda_total_memory(void);

/* Device memory of `bytes` bytes (bytes > 0). Raises a located FeError at s:
   "device out of memory: cannot allocate N bytes on the GPU (M bytes free)". */
CudaPtr cuda_alloc(size_t bytes, Span s);
void cuda_free(CudaPtr p); /* stream-ordered; never raises (errors ignored) */

/* Runs a collection and the finalisers it queued (freeing the device
   memory of unreachable arrays), waits for the frees, and restarts the
   count of bytes that triggers the next collection. */
void cuda_collect(void);

/* A GC object owning device memory; the finaliser calls cuda_free. */
typedef struct DevBuf {
  CudaPtr ptr;
  size_t bytes;
} DevBuf;
DevBuf *cuda_devbuf_new(size_t bytes, Span s);

/* Copies (on the stream; download waits for the copy). Raise at s. */
void cuda_upload(CudaPtr dst, const void *src, size_t bytes, Span s);
void cuda_download(void *dst, CudaPtr src, size_t bytes, Span s);
void cuda_copy(CudaPtr dst, CudaPtr src, size_t bytes, Span s);

/* Loads a compiled image (cubin or PTX text, NUL-terminated for PTX) as a
   module; NULL never returned: raises at s with the driver's message and,
   for PTX, the JIT's error log. */
typedef struct CudaModule CudaModule;
CudaModule *cuda_module_load(const void *image, size_t size, Span s);

/* A __global__ function of the module by its (extern "C") name. */
typedef struct CudaFunction CudaFunction;
CudaFunction *cuda_function(CudaModule *m, const char *name, Span s);

/* Launches f on the stream with grid x block threads (1-D), dynamic shared
   memory shmem bytes, and args as cuLaunchKernel's kernelParams. Raises at
   s when the launch is refused; errors inside the kernel surface at the next
   cuda_sync or download. */
void cuda_launch(CudaFunction *f, unsigned grid, unsigned block, unsigned shmem, void **args, Span s);

/* The stream (a CUstream), the context made current on this thread: for
   a library that queues its own work on it (cuBLAS, cublas.c). Raises at
   s when the GPU cannot be used. */
void *cuda_stream(Span s);

/* Waits for the stream; raises at s on a kernel failure. After a sticky
   error (an illegal address, say) the context is unusable: cuda_ready()
   turns false and the message says that the session goes on on the CPU. */
void cuda_sync(Span s);

/* Events, for benchmarks: milliseconds between two points on the stream. */
typedef struct CudaTimer CudaTimer;
CudaTimer *cuda_timer_start(void);
double cuda_timer_stop_ms(CudaTimer *t); /* waits for the stream */

/* The driver's name and description of status code rc ("CUDA_ERROR_OUT_OF_MEMORY: out of memory"). */
const char *cuda_error_string(int rc);

#endif
