/* parallel.c: chunked loops on threads (parallel.h). A thread is created
   per loop and per extra core: loops this long (CPU_PAR_MIN elements) take
   far longer than starting a thread. */
#include "parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static int nthreads = 0; /* 0: not decided yet */

int cpu_chunks_for(size_t n) { return n >= CPU_PAR_MIN ? CPU_CHUNKS : 1; }

void cpu_chunk_bounds(size_t n, size_t block, int nchunks, int c, size_t *lo, size_t *hi) {
  size_t nb = (n + block - 1) / block;
  size_t b0 = nb * (size_t)c / (size_t)nchunks, b1 = nb * (size_t)(c + 1) / (size_t)nchunks;
  *lo = b0 * block; /* <= n: b0 < nb */
  *hi = c == nchunks - 1 ? n : b1 * block;
}

static int clamp_threads(long n) { return n < 1 ? 1 : n > CPU_MAX_THREADS ? CPU_MAX_THREADS : (int)n; }

int cpu_clamp_threads(int n) { return clamp_threads(n); }

int cpu_threads(void) {
  if (nthreads == 0) {
    const char *e = getenv("UNA_THREADS");
    long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = clamp_threads(n);
  }
  return nthreads;
}


typedef struct Job {
  CpuChunkFn fn;
  void *ctx;
  int nchunks;
  atomic_int next; /* the next chunk to take */
} Job;

typedef struct Worker {
  Job *job;
  int thread;
} Worker;

/* Chunks are taken in order, so when a fault stops the taking, every
   chunk before the faulting one has been taken and runs on (error.h). */
static void work(Job *job, int thread) {
  size_t outer = fe_fault_rank(0);
  for (;;) {
    if (fe_interrupted) break;
    int c = atomic_fetch_add(&job->next, 1);
    if (c >= job->nchunks) break;
    fe_fault_rank((size_t)c + 1);
    job->fn(job->ctx, thread, c);
  }
  fe_fault_rank(outer);
}

static _Thread_local bool worker_thread;

bool cpu_in_worker(void) { return worker_thread; }

static void *worker_main(void *arg) {
  Worker *w = arg;
  worker_thread = true;
  work(w->job, w->thread);
  return NULL;
}

void cpu_parallel_chunks(int nthreads_wanted, int nchunks, CpuChunkFn fn, void *ctx, Span s) {
  Job job;
  job.fn = fn;
  job.ctx = ctx;
  job.nchunks = nchunks;
  atomic_init(&job.next, 0);
  int nt = clamp_threads(nthreads_wanted);
  if (nt > nchunks) nt = nchunks;
  pthread_t tid[CPU_MAX_THREADS];
  Worker w[CPU_MAX_THREADS];
  int started = 0;
  for (int t = 1; t < nt; t++) {
    w[t].job = &job;
    w[t].thread = t;
    if (pthread_create(&tid[t], NULL, worker_main, &w[t]) != 0) break; /* fewer threads */
    started = t;
  }
  work(&job, 0);
  for (int t = 1; t <= started; t++) pthread_join(tid[t], NULL);
  fe_poll_interrupt(s);
}
