/* c_grads.h: the programs of the CPU benchmark suite (bench/cpu/README.md):
   for each, its Una definition, its inputs (a formula of the index i, the
   same in peers.py) and hand-written C for its value and its gradient.

   c_grads.c is plain C11 with no dependency on Una; the Makefile compiles it
   on its own, whatever CFLAGS the library is built with, twice: with gcc -O2,
   single-threaded (bench_programs, the baseline of the earlier tables) and
   with gcc -O3 -march=native -fopenmp (bench_programs_omp: the same
   programs in the same order, on all cores where they parallelize; only
   una_bench links it). */
#ifndef UNA_BENCH_C_GRADS_H
#define UNA_BENCH_C_GRADS_H

#include <stdbool.h>
#include <stddef.h>

#define BENCH_MAX_ARGS 4

/* An argument or a gradient component: an array of n reals (a != NULL) or
   the real x (a == NULL). */
typedef struct BenchArg {
  double *a;
  double x;
} BenchArg;

typedef struct BenchProgram {
  const char *name;  /* short name: prod, dot, ... (BENCH_PROGRAMS) */
  const char *una;   /* the Una text defining f */
  int nargs;         /* parameters of f, all differentiated */
  bool is_array[BENCH_MAX_ARGS];
  /* Fills the arguments for size n: every array argument's buffer of n
     doubles is already allocated by the caller; scalars are set here. */
  void (*inputs)(size_t n, BenchArg *args);
  /* f at the arguments. */
  double (*primal)(size_t n, const BenchArg *args);
  /* The gradient: out[k] is the gradient with respect to argument k. Array
     components are allocated with malloc here (the caller frees them). */
  void (*grad)(size_t n, const BenchArg *args, BenchArg *out);
} BenchProgram;

extern const BenchProgram bench_programs[];
extern const int bench_nprograms;
extern const BenchProgram bench_programs_omp[];
extern const int bench_nprograms_omp;

/* The two base sequences of the inputs, in [0, 1): u(i) = (7919 i mod 10007)
   / 10007 and v(i) = ((104729 i + 12345) mod 10009) / 10009. */
double bench_u(size_t i);
double bench_v(size_t i);

#endif
