/* c_arrays.h: the array programs of the CPU benchmark suite
   (bench/cpu/README.md, "Array programs"): programs that are timed as they
   are, with no gradient, each at one size: a matrix-vector and a matrix
   product (run with BLAS by Una), a gather, an RK4 integrator written with
   `loop`, and a `while` loop over a scalar state. For each: its Una
   definition of f, its inputs (formulas of the index, the same in
   peers.py) and the C an expert would write (OpenBLAS for the products).
   Then the gradient programs (bench_array_grad_programs): scalar losses
   of these programs (and of a small MLP), each timed as f and as its
   gradient, against a hand-written C gradient.

   c_arrays.c is compiled on its own with gcc -O3 -march=native -fopenmp
   and OpenBLAS's header (Makefile), like c_grads_omp.o; only una_bench
   links it. */
#ifndef UNA_BENCH_C_ARRAYS_H
#define UNA_BENCH_C_ARRAYS_H

#include <stdbool.h>
#include <stddef.h>

#define BENCH_ARRAY_MAX_ARGS 5

typedef enum { BA_REAL, BA_VECTOR, BA_MATRIX } BenchArrayKind;

/* An argument: a real, a vector of cols reals, or a rows x cols matrix
   (row-major, one buffer; Una gets it as an [[R]] whose rows are views
   into that buffer, as an n-D load gives). */
typedef struct BenchArray {
  BenchArrayKind kind;
  size_t rows, cols;
  double *a; /* VECTOR, MATRIX: malloc'd by the program's inputs */
  double x;  /* REAL */
} BenchArray;

typedef struct BenchArrayProgram {
  const char *name;   /* matvec, matmul, gather, rk4, while; matvec_grad, ... (BENCH_PROGRAMS) */
  size_t n;           /* the size that names it in the peers' lines */
  const char *size;   /* the size in words, for the table */
  const char *una;    /* the Una text defining f */
  const char *c_what; /* what the C baseline is, for the table */
  int nargs;
  /* Allocates and fills the arguments. */
  void (*inputs)(BenchArray *args);
  /* The C baseline: f's value as *len reals (a matrix row after row),
     malloc'd here. For a gradient program: the hand-written gradient, its
     components (the arguments in wrt, in order) one after the other, each
     as f's value would be. */
  double *(*run)(const BenchArray *args, size_t *len);
  /* Gradient programs only (NULL and 0 for the others): the Una function
     that is applied to the arguments for the gradient ("grad f", "(grad f
     wrt a)"), the arguments it differentiates (bit k: argument k), and the
     C value of f (a real: f is a scalar loss). */
  const char *grad;
  unsigned wrt;
  double (*primal)(const BenchArray *args);
  /* Timed in ALTERNATE_PAIRS pairs of runs, C's then Una's, each in its
     own process, the median of each side reported (matvec and matmul,
     whose target is a ratio near 1 to the same OpenBLAS call: one run's
     time moves with the memory traffic of whatever else the machine runs). */
  bool alternate;
} BenchArrayProgram;

extern const BenchArrayProgram bench_array_programs[];
extern const int bench_narray_programs;
/* The gradient programs: matvec_grad, gather_grad, rk4_grad, mlp_grad. */
extern const BenchArrayProgram bench_array_grad_programs[];
extern const int bench_narray_grad_programs;

#endif
