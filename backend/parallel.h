/* parallel.h: loops over large arrays split into a fixed number of chunks
   and run on several threads (the cores of the machine).

   The chunks depend only on the array's length, never on the number of
   threads, so a parallel reduce brackets the same way on every machine and
   gives the same bits with 1 thread or 16 (array_ops.c says how reduce
   brackets). Chunk functions run on threads the collector does not know:
   they must not allocate from the GC heap, raise, or poll for interrupts;
   they read and write buffers that the calling thread keeps alive. */
#ifndef UNA_PARALLEL_H
#define UNA_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

#include "../frontend/ir/error.h"

/* Arrays of at least this many elements are processed in CPU_CHUNKS chunks
   (in parallel where there are cores); shorter ones in one. */
#define CPU_PAR_MIN ((size_t)1 << 17)
#define CPU_CHUNKS 8
/* The most threads a loop uses. */
#define CPU_MAX_THREADS CPU_CHUNKS

/* The number of chunks for an array of n elements: 1 or CPU_CHUNKS. */
int cpu_chunks_for(size_t n);

/* The bounds [*lo, *hi) of chunk c of nchunks over n elements: whole blocks
   of block elements, the last chunk taking the remainder. */
void cpu_chunk_bounds(size_t n, size_t block, int nchunks, int c, size_t *lo, size_t *hi);

/* The threads a loop uses when its context does not say (exec.h): the
   cores online, or UNA_THREADS from the environment (1 ..
   CPU_MAX_THREADS). */
int cpu_threads(void);

/* n clamped to 1 .. CPU_MAX_THREADS. */
int cpu_clamp_threads(int n);

/* fn(ctx, thread, chunk) for every chunk 0 .. nchunks-1, on up to
   nthreads threads (thread is 0 .. nthreads-1, the calling thread being 0;
   a thread runs its chunks one after another). Returns when all
   are done; then raises "interrupted" at s if Ctrl-C came meanwhile (chunks
   not yet started are skipped once it has). */
typedef void (*CpuChunkFn)(void *ctx, int thread, int chunk);
void cpu_parallel_chunks(int nthreads, int nchunks, CpuChunkFn fn, void *ctx, Span s);

/* Whether the calling thread is one of the loops' extra threads (which
   the collector does not know: code that allocates from it, such as
   jit.c making a kernel's source, leaves the work to thread 0). */
bool cpu_in_worker(void);

#endif
