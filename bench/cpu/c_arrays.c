/* c_arrays.c: the array programs (c_arrays.h): their Una text, their
   inputs, and the C baseline of each, as an expert writes it with the
   machine's tools: OpenBLAS (cblas_dgemv, cblas_dgemm) on its own threads,
   one per core, for the products; OpenMP loops on all cores for the
   gather and the integrator; a plain loop for the scalar recurrence. The
   inputs are formulas of the index, written the same way in peers.py. */
#include "c_arrays.h"

#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double u_of(size_t i) { return (double)(((int64_t)i * 7919) % 10007) / 10007.0; }
static double v_of(size_t i) { return (double)(((int64_t)i * 104729 + 12345) % 10009) / 10009.0; }

static double *new_array(size_t n) {
  double *p = malloc((n ? n : 1) * sizeof *p);
  if (!p) {
    fprintf(stderr, "c_arrays: out of memory (%zu doubles)\n", n);
    exit(2);
  }
  return p;
}

static void vector(BenchArray *a, size_t n) {
  a->kind = BA_VECTOR;
  a->cols = n;
  a->a = new_array(n);
}

static void matrix(BenchArray *a, size_t rows, size_t cols) {
  a->kind = BA_MATRIX;
  a->rows = rows;
  a->cols = cols;
  a->a = new_array(rows * cols);
}

/* OpenBLAS on one thread per core, as OpenMP's loops. */
static void blas_threads(void) {
#ifdef _OPENMP
  openblas_set_num_threads(omp_get_max_threads());
#endif
}

/* ---- matvec: a 2000 x 2000 matrix times a vector ------------------------ */

enum { MV_N = 2000, MM_N = 1000, GATHER_N = 10000000, GATHER_FROM = 1000000, RK4_N = 100000, RK4_STEPS = 100,
       WHILE_N = 10000000 };

static void matvec_inputs(BenchArray *g) {
  matrix(&g[0], MV_N, MV_N);
  vector(&g[1], MV_N);
  for (size_t i = 0; i < (size_t)MV_N * MV_N; i++) g[0].a[i] = u_of(i) - 0.5;
  for (size_t i = 0; i < MV_N; i++) g[1].a[i] = v_of(i);
}

static double *matvec_run(const BenchArray *g, size_t *len) {
  blas_threads();
  double *y = new_array(MV_N);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, MV_N, MV_N, 1.0, g[0].a, MV_N, g[1].a, 1, 0.0, y, 1);
  *len = MV_N;
  return y;
}

/* ---- matmul: two 1000 x 1000 matrices ----------------------------------- */

static void matmul_inputs(BenchArray *g) {
  matrix(&g[0], MM_N, MM_N);
  matrix(&g[1], MM_N, MM_N);
  for (size_t i = 0; i < (size_t)MM_N * MM_N; i++) {
    g[0].a[i] = u_of(i) - 0.5;
    g[1].a[i] = v_of(i) - 0.5;
  }
}

static double *matmul_run(const BenchArray *g, size_t *len) {
  blas_threads();
  double *c = new_array((size_t)MM_N * MM_N);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, MM_N, MM_N, MM_N, 1.0, g[0].a, MM_N, g[1].a, MM_N, 0.0, c,
              MM_N);
  *len = (size_t)MM_N * MM_N;
  return c;
}

/* ---- gather: 10^7 random indices into 10^6 elements --------------------- */

/* splitmix64's output function: the indices are mix(k) mod 10^6. */
static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void gather_inputs(BenchArray *g) {
  vector(&g[0], GATHER_FROM);
  vector(&g[1], GATHER_N);
  for (size_t i = 0; i < GATHER_FROM; i++) g[0].a[i] = u_of(i);
  for (size_t k = 0; k < GATHER_N; k++) g[1].a[k] = (double)(mix(k) % GATHER_FROM);
}

/* The indices are Una's: reals (converted here, as Una converts them). */
static double *gather_run(const BenchArray *g, size_t *len) {
  const double *a = g[0].a, *idx = g[1].a;
  double *out = new_array(GATHER_N);
#pragma omp parallel for
  for (size_t k = 0; k < GATHER_N; k++) out[k] = a[(size_t)idx[k]];
  *len = GATHER_N;
  return out;
}

/* ---- rk4: y' = y (1 - y) on 10^5 reals, 100 steps of h = 0.01 ------------ */

static void rk4_inputs(BenchArray *g) {
  vector(&g[0], RK4_N);
  for (size_t i = 0; i < RK4_N; i++) g[0].a[i] = 0.1 + 0.8 * u_of(i);
  g[1].kind = BA_REAL;
  g[1].x = 0.01;
}

static inline double rhs(double v) { return v * (1 - v); }

/* One pass per step, every stage of an element in registers (the
   right-hand side couples no elements, but a general integrator's does,
   so the steps stay the outer loop). */
static double *rk4_run(const BenchArray *g, size_t *len) {
  double h = g[1].x;
  double *y = new_array(RK4_N);
  memcpy(y, g[0].a, RK4_N * sizeof *y);
  for (int s = 0; s < RK4_STEPS; s++) {
#pragma omp parallel for
    for (size_t i = 0; i < RK4_N; i++) {
      double v = y[i];
      double k1 = rhs(v);
      double k2 = rhs(v + 0.5 * h * k1);
      double k3 = rhs(v + 0.5 * h * k2);
      double k4 = rhs(v + h * k3);
      y[i] = v + h / 6 * ((k1 + 2 * k2 + 2 * k3) + k4);
    }
  }
  *len = RK4_N;
  return y;
}

/* ---- while: 10^7 iterations of a scalar recurrence ----------------------- */

static void while_inputs(BenchArray *g) {
  g[0].kind = BA_REAL;
  g[0].x = 0.5;
  g[1].kind = BA_REAL;
  g[1].x = WHILE_N;
}

static double *while_run(const BenchArray *g, size_t *len) {
  double x = g[0].x, n = g[1].x;
  for (double k = 0; k < n; k = k + 1) x = 0.9 * x + 0.1 / (1 + x * x);
  double *out = new_array(1);
  out[0] = x;
  *len = 1;
  return out;
}

const BenchArrayProgram bench_array_programs[] = {
    {"matvec", MV_N, "2000 x 2000", "def f (m: [[R]]) (x: [R]) = matvec m x\n", "OpenBLAS cblas_dgemv", 2,
     matvec_inputs, matvec_run},
    {"matmul", MM_N, "1000 x 1000", "def f (a: [[R]]) (b: [[R]]) = matmul a b\n", "OpenBLAS cblas_dgemm", 2,
     matmul_inputs, matmul_run},
    {"gather", GATHER_N, "10^7 of 10^6", "def f (a: [R]) (idx: [R]) = map (i. a[i]) idx\n", "OpenMP loop", 2,
     gather_inputs, gather_run},
    {"rk4", RK4_N, "10^5 x 100 steps",
     "def rhs (v: R) : R = v * (1 - v)\n"
     "def f (y0: [R]) (h: R) =\n"
     "  loop y = y0 for step < 100 do\n"
     "    let k1 = map (v. rhs v) y in\n"
     "    let k2 = map2 (v, k. rhs (v + 0.5 * h * k)) y k1 in\n"
     "    let k3 = map2 (v, k. rhs (v + 0.5 * h * k)) y k2 in\n"
     "    let k4 = map2 (v, k. rhs (v + h * k)) y k3 in\n"
     "    map3 (v, s, d. v + h / 6 * (s + d)) y (map3 (a, b, c. a + 2 * b + 2 * c) k1 k2 k3) k4\n",
     "OpenMP loop per step", 2, rk4_inputs, rk4_run},
    {"while", WHILE_N, "10^7 iterations",
     "def f (x0: R) (n: R) = (loop (x, k) = (x0, 0) while k < n do (0.9 * x + 0.1 / (1 + x * x), k + 1)).1\n",
     "plain loop", 2, while_inputs, while_run},
};
const int bench_narray_programs = (int)(sizeof bench_array_programs / sizeof bench_array_programs[0]);
