/* jit.h: kernels compiled to native code. A kernel's block program
   (kernel_int.h) that does a lot of work is given to the system's C
   compiler (jit_emit.c writes its source); from then on each block runs
   the compiled function, whose runs of arithmetic are one loop each with
   their temporaries in registers, where the engine runs one loop per
   instruction through memory. The bits are the engine's (same operations,
   same order, no contraction), so a kernel may switch from one to the
   other between blocks.

   When: a kernel's source is made once it has run 256 block-instructions
   (its blocks times its instructions; a loop's at its first run); a compiled
   function for the same source (in this process, or on disk in
   cache_dir()/cpu, filecache.h) is used at once; otherwise the source is
   compiled, in a thread of its own, once kernels with that source have
   together run 16,384 block-instructions, and the engine goes on
   interpreting until the function is there. A kernel with no run of at
   least two arithmetic instructions gets no compiled block program (its
   range, a map's whole array in one loop, is compiled all the same: the
   block runner costs as much as a block of one operation).

   $UNA_JIT: unset or "on", as above; "off" (or "0"), never; "sync", every
   kernel's source made at its first block and compiled there and then
   (for the tests). $UNA_JIT_CC names the compiler (default cc); when it
   cannot be run, or a compile fails, the engine interprets, silently
   unless $UNA_JIT_VERBOSE is set (then the compiler's messages and the
   reason go to standard error); after three failures and no success, no
   more compiles are started. */
#ifndef UNA_JIT_H
#define UNA_JIT_H

#include <stddef.h>

#include "kernel.h"

/* The compiled block program: what exec_block (kernel_run.c) does over the
   block registers p; an instruction it does not compile is done by
   one(run, n, p, pc). */
typedef void (*CpuJitOne)(const void *run, size_t n, double **p, int pc);
typedef void (*CpuJitBlockFn)(double **p, const void *run, size_t n, CpuJitOne one);

/* k's compiled block program, or NULL (interpret this block); counts the
   block's work towards compiling it. Safe from several threads. */
CpuJitBlockFn cpu_jit_block(const CpuKernel *k);

/* The compiled one-element program: what run_code (kernel_run.c) does over
   the registers r (the run's sregs); an instruction it does not compile is
   done by one(run, r, pc). cpu_jit_scalar as cpu_jit_block. */
typedef void (*CpuJitOne1)(const void *run, double *r, int pc);
typedef void (*CpuJitScalarFn)(double *r, const void *run, CpuJitOne1 one);
CpuJitScalarFn cpu_jit_scalar(const CpuKernel *k);

/* A whole scalar loop (loop_ops.c): `for` (cond NULL) count times, the
   body's parameters the state s[0..w) then the index, or `while` the
   condition holds; rc and rb the runs' registers (copied), crun and brun
   the runs for one(), poll(pt) every poll_mask + 1 iterations.
   cpu_jit_loop returns it for the kernels, or NULL; iterations: those
   the engine ran since the last call (0 before a run), counted towards
   compiling it. */
typedef void (*CpuJitPoll)(const void *pt);
typedef void (*CpuJitLoopFn)(double *s, double count, double *rc, double *rb, const void *crun, const void *brun,
                             CpuJitOne1 one, CpuJitPoll poll, const void *pt);
CpuJitLoopFn cpu_jit_loop(const CpuKernel *cond, const CpuKernel *body, int w, int poll_mask, double iterations);

/* A kernel whose every instruction is compiled (no exp, gather or loop)
   and whose result is one real, over a whole range: out[i] = f(x[i],
   y[i]) for i < n, no blocks; out may be x or y; sr the run's sregs.
   cpu_jit_range returns it (n: the elements about to run, counted as
   work), or NULL: then run blocks. */
typedef void (*CpuJitRangeFn)(const double *x, const double *y, double *out, const double *sr, size_t n);
CpuJitRangeFn cpu_jit_range(const CpuKernel *k, size_t n);

/* A map with maps fused into its arrays (the plan's kernel, plan.h:
   PlanSrc), run as one compiled pass: its maps' kernels in post-order
   (an array's map before the map that reads it; the last the map
   itself), map q reading in[q][j]: a leaf (>= 0: the pass's input
   in[q][j]) or -1 - p, the element map p < q computed. Made by the plan
   (lower.c) when each kernel qualifies (cpu_jit_inline_kernel); the
   JIT's fields as a kernel's: the work run before the pass had an entry,
   and its entry. */
typedef struct CpuJitTree {
  int n;
  const CpuKernel **k;
  int (*in)[2];
  _Atomic long work;
  struct JitEntry *_Atomic entry;
} CpuJitTree;

/* Whether k's whole program compiles inline (no exp, gather or loop),
   with one real result and at most two parameters: a map's range
   (cpu_jit_range) or a map of a compiled pass (cpu_jit_tree). */
bool cpu_jit_inline_kernel(const CpuKernel *k);

/* The compiled pass over the elements i < n: out[i] = the last map's
   element, from in[leaf][i]; sr[q] map q's run's sregs (its inputs' and
   constants' values). out may be one of the inputs (each element is read
   before it is written). cpu_jit_tree as cpu_jit_range (n counted as
   work). */
typedef void (*CpuJitTreeFn)(const double *const *in, double *out, const double *const *sr, size_t n);
CpuJitTreeFn cpu_jit_tree(CpuJitTree *t, size_t n);
char *cpu_jit_tree_source(const CpuJitTree *t);

/* The C source of k's block program and of its one-element program
   (jit_emit.c), or NULL when it has no run of two arithmetic
   instructions to compile. */
char *cpu_jit_block_source(const CpuKernel *k);
char *cpu_jit_scalar_source(const CpuKernel *k);
char *cpu_jit_loop_source(const CpuKernel *cond, const CpuKernel *body, int w, int poll_mask);
char *cpu_jit_range_source(const CpuKernel *k);

/* Overrides $UNA_JIT (tests): CPU_JIT_ENV goes back to it. And the
   compiler ($UNA_JIT_CC when NULL). */
typedef enum { CPU_JIT_ENV = -1, CPU_JIT_ON, CPU_JIT_OFF, CPU_JIT_SYNC } CpuJitMode;
void cpu_jit_set_mode(CpuJitMode m);
void cpu_jit_set_compiler(const char *cc);

/* Waits for the compiles under way (tests and benchmarks). */
void cpu_jit_wait(void);

/* What the JIT did in this process: sources made, functions found in
   memory, on disk, compiled, and compiles that failed. */
typedef struct CpuJitStats {
  long sources, memory, disk, compiled, failed;
} CpuJitStats;
CpuJitStats cpu_jit_stats(void);

#endif
