/* parallel.c: chunked loops on threads (parallel.h): the calling thread
   and extra threads started once and kept (the pool below). */
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
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

/* The cores this process may run on: those of its affinity mask (taskset,
   a container's cpuset), else the machine's. */
static long usable_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return sysconf(_SC_NPROCESSORS_ONLN);
}

int cpu_threads(void) {
  if (nthreads == 0) {
    const char *e = getenv("UNA_THREADS");
    long n = e && *e ? strtol(e, NULL, 10) : usable_cores();
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

/* The extra threads: started on first need and kept, each waiting for
   the next loop (a loop posts its job and a new generation; the threads
   it wants run it and count themselves done). Starting threads for every
   loop cost more than a loop of 10^5 elements (RK4's steps). A child
   process (fork) has none of them: pthread_atfork forgets them there. */
typedef struct Pool {
  pthread_mutex_t mu;
  pthread_cond_t go, done_cv;
  int nworkers;       /* started: threads 1 .. nworkers */
  unsigned long gen;  /* the loop being posted */
  Job *job;
  int nt;             /* its threads, the caller included */
  int done;           /* its extra threads that have finished */
} Pool;

static Pool pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, 0, 0};
static pthread_mutex_t call_mu = PTHREAD_MUTEX_INITIALIZER; /* one loop at a time */
static _Thread_local bool worker_thread, in_loop;

bool cpu_in_worker(void) { return worker_thread; }

/* A new extra thread: its number, and the generation it was started in
   (the loop being posted then is its first). */
typedef struct Start {
  int t;
  unsigned long gen;
} Start;

static void *worker_main(void *arg) {
  Start st = *(Start *)arg;
  free(arg);
  int t = st.t;
  worker_thread = true;
  pthread_mutex_lock(&pool.mu);
  unsigned long seen = st.gen;
  for (;;) {
    while (pool.gen == seen) pthread_cond_wait(&pool.go, &pool.mu);
    seen = pool.gen;
    Job *job = pool.job;
    int nt = pool.nt;
    pthread_mutex_unlock(&pool.mu);
    if (t < nt) work(job, t);
    pthread_mutex_lock(&pool.mu);
    if (t < nt && ++pool.done == nt - 1) pthread_cond_signal(&pool.done_cv);
  }
  return NULL;
}

static void forget_workers(void) {
  pthread_mutex_init(&pool.mu, NULL);
  pthread_cond_init(&pool.go, NULL);
  pthread_cond_init(&pool.done_cv, NULL);
  pthread_mutex_init(&call_mu, NULL);
  pool.nworkers = 0;
  pool.job = NULL;
}

/* Starts extra threads up to n - 1 (pool.mu held); returns how many
   threads a loop may use (fewer when one cannot be started). */
static int ensure_workers(int n) {
  while (pool.nworkers < n - 1) {
    Start *st = malloc(sizeof *st);
    if (!st) break;
    st->t = pool.nworkers + 1;
    st->gen = pool.gen; /* the loop about to be posted is gen + 1 */
    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&tid, &attr, worker_main, st);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      free(st);
      break;
    }
    pool.nworkers++;
  }
  return pool.nworkers + 1 < n ? pool.nworkers + 1 : n;
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, forget_workers); }

void cpu_parallel_chunks(int nthreads_wanted, int nchunks, CpuChunkFn fn, void *ctx, Span s) {
  Job job;
  job.fn = fn;
  job.ctx = ctx;
  job.nchunks = nchunks;
  atomic_init(&job.next, 0);
  int nt = clamp_threads(nthreads_wanted);
  if (nt > nchunks) nt = nchunks;
  if (nt <= 1 || in_loop || worker_thread) { /* one thread (a loop inside a loop's chunk, too) */
    work(&job, 0);
    fe_poll_interrupt(s);
    return;
  }
  static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
  pthread_once(&atfork_once, register_atfork);
  pthread_mutex_lock(&call_mu);
  pthread_mutex_lock(&pool.mu);
  nt = ensure_workers(nt);
  pool.job = &job;
  pool.nt = nt;
  pool.done = 0;
  pool.gen++;
  pthread_cond_broadcast(&pool.go);
  pthread_mutex_unlock(&pool.mu);
  in_loop = true;
  work(&job, 0);
  in_loop = false;
  pthread_mutex_lock(&pool.mu);
  while (pool.done < nt - 1) pthread_cond_wait(&pool.done_cv, &pool.mu);
  pool.job = NULL;
  pthread_mutex_unlock(&pool.mu);
  pthread_mutex_unlock(&call_mu);
  fe_poll_interrupt(s);
}
