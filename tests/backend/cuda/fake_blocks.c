/* fake_blocks.c: runs a kernel compiled for the host (cuda_host.h) over its
   grid, for the stand-in driver (fake_libcuda.c). The blocks run one after
   another; a block's threads are coroutines on stacks of their own, each
   run until it reaches __syncthreads or a warp shuffle, or returns.
   __syncthreads releases the block when every thread that has not returned
   is waiting at it; a shuffle releases its mask's lanes when all of them
   have arrived. Within a round, threads run in a different order each time
   (a stride through the block), so that a kernel which reads shared memory
   without the barrier that orders it sees the wrong value here as it might
   on a GPU. A block where no thread can go on (a barrier that some threads
   never reach, a shuffle with a lane that returned) fails the launch. */
#include "fake_blocks.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MAX_THREADS = 1024, STACK_BYTES = 64 << 10 };
enum { READY, AT_BARRIER, AT_SHUFFLE, DONE };

/* ---- coroutines: a context switch that saves the callee-saved registers ---- */

#if defined(__x86_64__)
/* fake_switch(save, to): pushes the callee-saved registers, stores the
   stack pointer in *save, switches to `to` and pops the registers saved
   there. A new stack is laid out as if fake_switch had saved it (below). */
__asm__(".text\n"
        ".globl fake_switch\n"
        ".hidden fake_switch\n"
        ".type fake_switch, @function\n"
        "fake_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size fake_switch, .-fake_switch\n");
__attribute__((visibility("hidden"))) void fake_switch(void **save, void *to);

typedef struct Ctx {
  void *sp;
} Ctx;

/* A context that starts fn on the stack ending at top (16-byte aligned). */
static void ctx_init(Ctx *c, char *top, void (*fn)(void)) {
  uintptr_t *sp = (uintptr_t *)(void *)top;
  *--sp = 0;                 /* fn's return address: fn never returns */
  *--sp = (uintptr_t)fn;     /* where fake_switch's ret goes */
  for (int i = 0; i < 6; i++) *--sp = 0; /* rbp rbx r12 r13 r14 r15 */
  c->sp = sp;
}
static void ctx_switch(Ctx *from, Ctx *to) { fake_switch(&from->sp, to->sp); }
#else
#include <ucontext.h>
typedef struct Ctx {
  ucontext_t uc;
} Ctx;
static void ctx_init(Ctx *c, char *top, void (*fn)(void)) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = top - (STACK_BYTES - 4096);
  c->uc.uc_stack.ss_size = STACK_BYTES - 4096;
  c->uc.uc_link = NULL;
  makecontext(&c->uc, fn, 0);
}
static void ctx_switch(Ctx *from, Ctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

/* ---- the block ---- */

typedef struct Thread {
  Ctx ctx;
  int state;
  unsigned mask;            /* AT_SHUFFLE: the shuffle's lanes */
  unsigned long long bits;  /* the value it offers */
} Thread;

static Thread threads[MAX_THREADS];
static char *stacks; /* MAX_THREADS stacks, each above a guard page */
static Ctx sched;
static unsigned nthreads, cur;
static UnaHostRt *rt;
static void (*entry)(void **);
static void **params;
static const char *failure;

static void yield(int state) {
  threads[cur].state = state;
  ctx_switch(&threads[cur].ctx, &sched);
}

/* Ends the launch: the scheduler drops every thread of it. */
static void fail(const char *why) {
  failure = why;
  yield(DONE);
  __builtin_unreachable();
}

static void thread_main(void) {
  entry(params);
  yield(DONE);
  __builtin_unreachable();
}

static void sync_threads(void) { yield(AT_BARRIER); }

static unsigned long long shuffle(int kind, unsigned mask, unsigned long long bits, int arg) {
  unsigned lane = cur & 31, base = cur & ~31u;
  if (!(mask >> lane & 1)) fail("a warp shuffle whose mask leaves out the calling lane");
  threads[cur].mask = mask;
  threads[cur].bits = bits;
  yield(AT_SHUFFLE); /* every lane of mask has offered its value */
  int src = kind == UNA_SHFL_UP ? (int)lane - arg
            : kind == UNA_SHFL_DOWN ? (int)lane + arg
            : kind == UNA_SHFL_XOR ? (int)(lane ^ (unsigned)arg)
                                   : arg & 31;
  unsigned long long r = bits;
  if (src >= 0 && src < 32) {
    if (!(mask >> src & 1) || base + (unsigned)src >= nthreads) fail("a warp shuffle reads a lane outside its mask");
    r = threads[base + (unsigned)src].bits;
  }
  yield(AT_SHUFFLE); /* every lane has read before any offers again */
  return r;
}

/* Releases the lanes of each warp whose shuffle every lane of its mask has
   reached; false when none could be released. */
static bool release_shuffles(void) {
  bool any = false;
  for (unsigned w = 0; w < nthreads; w += 32) {
    unsigned mask = 0, arrived = 0, exist = 0;
    for (unsigned l = 0; l < 32 && w + l < nthreads; l++) {
      exist |= 1u << l;
      if (threads[w + l].state != AT_SHUFFLE) continue;
      if (arrived && threads[w + l].mask != mask) {
        failure = "the lanes of a warp shuffle disagree on its mask";
        return false;
      }
      mask = threads[w + l].mask;
      arrived |= 1u << l;
    }
    if (!arrived || (mask & exist) != arrived) continue;
    for (unsigned l = 0; l < 32 && w + l < nthreads; l++)
      if (arrived >> l & 1) threads[w + l].state = READY;
    any = true;
  }
  return any;
}

static bool alloc_stacks(void) {
  if (stacks) return true;
  size_t bytes = (size_t)MAX_THREADS * STACK_BYTES;
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  long page = sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < MAX_THREADS; i++) mprotect((char *)p + i * STACK_BYTES, (size_t)page, PROT_NONE);
  stacks = p;
  return true;
}

static unsigned gcd(unsigned a, unsigned b) {
  while (b) {
    unsigned t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Runs one block to its end; false (failure set) when it cannot end. */
static bool run_block(unsigned *seed) {
  for (unsigned t = 0; t < nthreads; t++) {
    ctx_init(&threads[t].ctx, stacks + (size_t)(t + 1) * STACK_BYTES, thread_main);
    threads[t].state = READY;
  }
  for (;;) {
    /* one round: every ready thread, in the order of a stride coprime with the block */
    *seed = *seed * 1103515245u + 12345u;
    unsigned stride = (*seed >> 16) % nthreads + 1;
    while (gcd(stride, nthreads) != 1) stride++;
    unsigned start = (*seed >> 8) % nthreads;
    for (unsigned k = 0; k < nthreads; k++) {
      cur = (start + k * stride) % nthreads;
      if (threads[cur].state != READY) continue;
      rt->thread_idx.x = cur;
      ctx_switch(&sched, &threads[cur].ctx);
      if (failure) return false;
    }
    unsigned live = 0, waiting = 0;
    for (unsigned t = 0; t < nthreads; t++) {
      live += threads[t].state != DONE;
      waiting += threads[t].state == AT_BARRIER;
    }
    if (live == 0) return true;
    if (release_shuffles()) continue;
    if (failure) return false;
    if (waiting == live) {
      for (unsigned t = 0; t < nthreads; t++)
        if (threads[t].state == AT_BARRIER) threads[t].state = READY;
      continue;
    }
    failure = waiting ? "__syncthreads that some threads of the block never reach"
                      : "a warp shuffle that some lanes of its mask never reach";
    return false;
  }
}

bool fake_blocks_run(UnaHostRt *r, void (*fn)(void **), unsigned grid, unsigned block, void **args,
                     const char **why) {
  if (block == 0 || block > MAX_THREADS || grid == 0) {
    *why = "a launch of no blocks or of more than 1024 threads per block";
    return false;
  }
  if (!alloc_stacks()) {
    *why = "no memory for the threads' stacks";
    return false;
  }
  rt = r;
  entry = fn;
  params = args;
  nthreads = block;
  failure = NULL;
  rt->syncthreads = sync_threads;
  rt->shfl = shuffle;
  rt->block_dim = (UnaHostDim){block, 1, 1};
  rt->grid_dim = (UnaHostDim){grid, 1, 1};
  rt->thread_idx = (UnaHostDim){0, 0, 0};
  unsigned seed = 2463534242u;
  for (unsigned b = 0; b < grid; b++) {
    rt->block_idx = (UnaHostDim){b, 0, 0};
    if (!run_block(&seed)) {
      *why = failure;
      return false;
    }
  }
  return true;
}
