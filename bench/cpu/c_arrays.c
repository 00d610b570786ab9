/* c_arrays.c: the array programs (c_arrays.h): their Una text, their
   inputs, and the C baseline of each, as an expert writes it with the
   machine's tools: OpenBLAS (cblas_dgemv, cblas_dgemm) on its own threads,
   one per core, for the products; OpenMP loops on all cores for the
   gather and the integrator; a plain loop for the scalar recurrence. The
   inputs are formulas of the index, written the same way in peers.py. */
#include "c_arrays.h"

#include <cblas.h>
#include <math.h>
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
     matvec_inputs, matvec_run, NULL, 0, NULL, true},
    {"matmul", MM_N, "1000 x 1000", "def f (a: [[R]]) (b: [[R]]) = matmul a b\n", "OpenBLAS cblas_dgemm", 2,
     matmul_inputs, matmul_run, NULL, 0, NULL, true},
    {"gather", GATHER_N, "10^7 of 10^6", "def f (a: [R]) (idx: [R]) = map (i. a[i]) idx\n", "OpenMP loop", 2,
     gather_inputs, gather_run, NULL, 0, NULL},
    {"rk4", RK4_N, "10^5 x 100 steps",
     "def rhs (v: R) : R = v * (1 - v)\n"
     "def f (y0: [R]) (h: R) =\n"
     "  loop y = y0 for step < 100 do\n"
     "    let k1 = map (v. rhs v) y in\n"
     "    let k2 = map2 (v, k. rhs (v + 0.5 * h * k)) y k1 in\n"
     "    let k3 = map2 (v, k. rhs (v + 0.5 * h * k)) y k2 in\n"
     "    let k4 = map2 (v, k. rhs (v + h * k)) y k3 in\n"
     "    map3 (v, s, d. v + h / 6 * (s + d)) y (map3 (a, b, c. a + 2 * b + 2 * c) k1 k2 k3) k4\n",
     "OpenMP loop per step", 2, rk4_inputs, rk4_run, NULL, 0, NULL},
    {"while", WHILE_N, "10^7 iterations",
     "def f (x0: R) (n: R) = (loop (x, k) = (x0, 0) while k < n do (0.9 * x + 0.1 / (1 + x * x), k + 1)).1\n",
     "plain loop", 2, while_inputs, while_run, NULL, 0, NULL},
};
const int bench_narray_programs = (int)(sizeof bench_array_programs / sizeof bench_array_programs[0]);

/* ==== the gradient programs ================================================

   Scalar losses of the array programs above (and a small MLP), each timed
   as f and as its gradient. The C is the gradient an expert derives by
   hand and writes with the same tools as above: OpenBLAS for the
   products, OpenMP loops for the rest. */

/* Sums a[0..n) on all cores. */
static double sum_of(const double *a, size_t n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) s += a[i];
  return s;
}

/* ---- matvec_grad: sum (map (h. h * h) (matvec m x)), 2000 x 2000 -------- */

static double matvec_loss(const BenchArray *g) {
  size_t len;
  double *y = matvec_run(g, &len), s = 0;
  for (size_t i = 0; i < len; i++) s += y[i] * y[i];
  free(y);
  return s;
}

/* With ybar = 2 m x: dm = ybar x^T (one pass writing the matrix), dx =
   m^T ybar (cblas_dgemv on the transpose). */
static double *matvec_grad_run(const BenchArray *g, size_t *len) {
  blas_threads();
  const size_t n = MV_N;
  const double *m = g[0].a, *x = g[1].a;
  double *out = new_array(n * n + n), *dm = out, *dx = out + n * n;
  double *yb = new_array(n);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, MV_N, MV_N, 2.0, m, MV_N, x, 1, 0.0, yb, 1);
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) {
    double y = yb[i];
    double *row = dm + i * n;
    for (size_t j = 0; j < n; j++) row[j] = y * x[j];
  }
  cblas_dgemv(CblasRowMajor, CblasTrans, MV_N, MV_N, 1.0, m, MV_N, yb, 1, 0.0, dx, 1);
  free(yb);
  *len = n * n + n;
  return out;
}

/* ---- gather_grad: sum (map (i. a[i] * a[i]) idx), wrt a ------------------ */

static double gather_loss(const BenchArray *g) {
  const double *a = g[0].a, *idx = g[1].a;
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t k = 0; k < GATHER_N; k++) {
    double v = a[(size_t)idx[k]];
    s += v * v;
  }
  return s;
}

/* The adjoint of the gather: a scatter-add of 2 a[i] into da[i] for every
   index, each thread into its own zeroed copy of da (the first thread into
   da itself), then the copies added into da on all cores. */
static double *gather_grad_run(const BenchArray *g, size_t *len) {
  const double *a = g[0].a, *idx = g[1].a;
  double *da = new_array(GATHER_FROM);
  int nt = 1;
#ifdef _OPENMP
  nt = omp_get_max_threads();
#endif
  double **part = malloc((size_t)nt * sizeof *part);
  part[0] = da;
  for (int t = 1; t < nt; t++) part[t] = new_array(GATHER_FROM);
#pragma omp parallel num_threads(nt)
  {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    double *mine = part[t];
    memset(mine, 0, GATHER_FROM * sizeof *mine);
#pragma omp barrier
#pragma omp for schedule(static)
    for (size_t k = 0; k < GATHER_N; k++) {
      size_t i = (size_t)idx[k];
      mine[i] += 2 * a[i];
    }
    /* the implicit barrier of the loop, then the copies into da */
    if (nt > 1) {
#pragma omp for schedule(static)
      for (size_t i = 0; i < GATHER_FROM; i++) {
        double s = da[i];
        for (int u = 1; u < nt; u++) s += part[u][i];
        da[i] = s;
      }
    }
  }
  for (int t = 1; t < nt; t++) free(part[t]);
  free(part);
  *len = GATHER_FROM;
  return da;
}

/* ---- rk4_grad: sum of rk4's final state, wrt y0 -------------------------- */

static double rk4_loss(const BenchArray *g) {
  size_t len;
  double *y = rk4_run(g, &len);
  double s = sum_of(y, len);
  free(y);
  return s;
}

/* The adjoint a general integrator needs (its right-hand side may couple
   the elements): the forward sweep keeps every step's state (100 x 10^5
   reals), then the backward sweep, steps outermost, takes each step's
   adjoint from its stored state, recomputing that step's stages; each
   element's stages in registers. */
static double *rk4_grad_run(const BenchArray *g, size_t *len) {
  const double h = g[1].x;
  double *traj = new_array((size_t)RK4_STEPS * RK4_N);
  double *yb = new_array(RK4_N);
  memcpy(traj, g[0].a, RK4_N * sizeof *traj);
  /* the states before each step (the final one is not needed) */
  for (int s = 0; s + 1 < RK4_STEPS; s++) {
    const double *y = traj + (size_t)s * RK4_N;
    double *next = traj + (size_t)(s + 1) * RK4_N;
#pragma omp parallel for
    for (size_t i = 0; i < RK4_N; i++) {
      double v = y[i];
      double k1 = rhs(v);
      double k2 = rhs(v + 0.5 * h * k1);
      double k3 = rhs(v + 0.5 * h * k2);
      double k4 = rhs(v + h * k3);
      next[i] = v + h / 6 * ((k1 + 2 * k2 + 2 * k3) + k4);
    }
  }
#pragma omp parallel for
  for (size_t i = 0; i < RK4_N; i++) yb[i] = 1;
  for (int s = RK4_STEPS - 1; s >= 0; s--) {
    const double *y = traj + (size_t)s * RK4_N;
#pragma omp parallel for
    for (size_t i = 0; i < RK4_N; i++) {
      double v = y[i];
      double k1 = rhs(v);
      double u2 = v + 0.5 * h * k1, k2 = rhs(u2);
      double u3 = v + 0.5 * h * k2, k3 = rhs(u3);
      double u4 = v + h * k3;
      double b = yb[i];
      double vb = b, k1b = h / 6 * b, k2b = 2 * (h / 6) * b, k3b = 2 * (h / 6) * b, k4b = h / 6 * b;
      double u4b = k4b * (1 - 2 * u4); /* rhs'(u) = 1 - 2u */
      vb += u4b;
      k3b += h * u4b;
      double u3b = k3b * (1 - 2 * u3);
      vb += u3b;
      k2b += 0.5 * h * u3b;
      double u2b = k2b * (1 - 2 * u2);
      vb += u2b;
      k1b += 0.5 * h * u2b;
      vb += k1b * (1 - 2 * v);
      yb[i] = vb;
    }
  }
  free(traj);
  *len = RK4_N;
  return yb;
}

/* ---- mlp_grad: 784-128-10, batch 256, sum of squares of the outputs ------ */

enum { MLP_B = 256, MLP_IN = 784, MLP_HID = 128, MLP_OUT = 10 };

static void mlp_inputs(BenchArray *g) {
  matrix(&g[0], MLP_HID, MLP_IN);
  vector(&g[1], MLP_HID);
  matrix(&g[2], MLP_OUT, MLP_HID);
  vector(&g[3], MLP_OUT);
  matrix(&g[4], MLP_B, MLP_IN);
  for (size_t i = 0; i < (size_t)MLP_HID * MLP_IN; i++) g[0].a[i] = 0.1 * (u_of(i) - 0.5);
  for (size_t i = 0; i < MLP_HID; i++) g[1].a[i] = 0.1 * (v_of(i) - 0.5);
  for (size_t i = 0; i < (size_t)MLP_OUT * MLP_HID; i++) g[2].a[i] = 0.5 * (u_of(i + 1) - 0.5);
  for (size_t i = 0; i < MLP_OUT; i++) g[3].a[i] = 0.1 * (v_of(i + 1) - 0.5);
  for (size_t i = 0; i < (size_t)MLP_B * MLP_IN; i++) g[4].a[i] = v_of(i);
}

/* The forward pass for the whole batch: hid = tanh (x w1^T + b1) (batch x
   128), out = hid w2^T + b2 (batch x 10), both malloc'd. The loops between
   the products are plain loops: they are small (32K elements at most), and
   OpenMP's threads, spinning beside OpenBLAS's between the calls, cost more
   than they save (2.3 ms against 3.4 ms for the gradient on 2 vCPUs). */
static void mlp_forward(const BenchArray *g, double **hid_out, double **out_out) {
  blas_threads();
  const double *w1 = g[0].a, *b1 = g[1].a, *w2 = g[2].a, *b2 = g[3].a, *x = g[4].a;
  double *hid = new_array((size_t)MLP_B * MLP_HID), *out = new_array((size_t)MLP_B * MLP_OUT);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, MLP_B, MLP_HID, MLP_IN, 1.0, x, MLP_IN, w1, MLP_IN, 0.0, hid,
              MLP_HID);
  for (size_t b = 0; b < MLP_B; b++)
    for (size_t j = 0; j < MLP_HID; j++) hid[b * MLP_HID + j] = tanh(hid[b * MLP_HID + j] + b1[j]);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, MLP_B, MLP_OUT, MLP_HID, 1.0, hid, MLP_HID, w2, MLP_HID, 0.0,
              out, MLP_OUT);
  for (size_t b = 0; b < MLP_B; b++)
    for (size_t j = 0; j < MLP_OUT; j++) out[b * MLP_OUT + j] += b2[j];
  *hid_out = hid;
  *out_out = out;
}

static double mlp_loss(const BenchArray *g) {
  double *hid, *out, s = 0;
  mlp_forward(g, &hid, &out);
  for (size_t i = 0; i < (size_t)MLP_B * MLP_OUT; i++) s += out[i] * out[i];
  free(hid);
  free(out);
  return s;
}

/* Backpropagation over the batch with three products: dout = 2 out; db2 =
   its column sums; dw2 = dout^T hid; dz = (dout w2) (1 - hid^2); db1 = its
   column sums; dw1 = dz^T x. */
static double *mlp_grad_run(const BenchArray *g, size_t *len) {
  const double *w2 = g[2].a, *x = g[4].a;
  double *hid, *out;
  mlp_forward(g, &hid, &out);
  const size_t n1 = (size_t)MLP_HID * MLP_IN, n2 = (size_t)MLP_OUT * MLP_HID;
  *len = n1 + MLP_HID + n2 + MLP_OUT;
  double *res = new_array(*len);
  double *dw1 = res, *db1 = dw1 + n1, *dw2 = db1 + MLP_HID, *db2 = dw2 + n2;
  for (size_t i = 0; i < (size_t)MLP_B * MLP_OUT; i++) out[i] *= 2; /* dout */
  for (size_t j = 0; j < MLP_OUT; j++) db2[j] = 0;
  for (size_t b = 0; b < MLP_B; b++)
    for (size_t j = 0; j < MLP_OUT; j++) db2[j] += out[b * MLP_OUT + j];
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, MLP_OUT, MLP_HID, MLP_B, 1.0, out, MLP_OUT, hid, MLP_HID, 0.0,
              dw2, MLP_HID);
  double *dz = new_array((size_t)MLP_B * MLP_HID);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, MLP_B, MLP_HID, MLP_OUT, 1.0, out, MLP_OUT, w2, MLP_HID, 0.0,
              dz, MLP_HID);
  for (size_t i = 0; i < (size_t)MLP_B * MLP_HID; i++) dz[i] *= 1 - hid[i] * hid[i];
  for (size_t j = 0; j < MLP_HID; j++) db1[j] = 0;
  for (size_t b = 0; b < MLP_B; b++)
    for (size_t j = 0; j < MLP_HID; j++) db1[j] += dz[b * MLP_HID + j];
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, MLP_HID, MLP_IN, MLP_B, 1.0, dz, MLP_HID, x, MLP_IN, 0.0, dw1,
              MLP_IN);
  free(dz);
  free(hid);
  free(out);
  return res;
}

#define RK4_UNA_LOOP                                                                        \
  "  loop y = y0 for step < 100 do\n"                                                       \
  "    let k1 = map (v. rhs v) y in\n"                                                      \
  "    let k2 = map2 (v, k. rhs (v + 0.5 * h * k)) y k1 in\n"                               \
  "    let k3 = map2 (v, k. rhs (v + 0.5 * h * k)) y k2 in\n"                               \
  "    let k4 = map2 (v, k. rhs (v + h * k)) y k3 in\n"                                     \
  "    map3 (v, s, d. v + h / 6 * (s + d)) y (map3 (a, b, c. a + 2 * b + 2 * c) k1 k2 k3) k4\n"

const BenchArrayProgram bench_array_grad_programs[] = {
    {"matvec_grad", MV_N, "2000 x 2000",
     "def f (m: [[R]]) (x: [R]) : R = sum (map (h. h * h) (matvec m x))\n",
     "OpenBLAS dgemv, 2 y x^T, dgemv on m^T", 2, matvec_inputs, matvec_grad_run, "grad f", 3u, matvec_loss},
    {"gather_grad", GATHER_N, "10^7 of 10^6",
     "def f (a: [R]) (idx: [R]) : R = sum (map (i. a[i] * a[i]) idx)\n",
     "OpenMP scatter-add, a copy of da per thread", 2, gather_inputs, gather_grad_run, "(grad f wrt a)", 1u,
     gather_loss},
    {"rk4_grad", RK4_N, "10^5 x 100 steps",
     "def rhs (v: R) : R = v * (1 - v)\n"
     "def f (y0: [R]) (h: R) : R = sum (\n" RK4_UNA_LOOP "  )\n",
     "OpenMP loops per step, states kept, backward sweep", 2, rk4_inputs, rk4_grad_run, "(grad f wrt y0)", 1u,
     rk4_loss},
    {"mlp_grad", MLP_B, "784-128-10, batch 256",
     "def f (w1: [[R]]) (b1: [R]) (w2: [[R]]) (b2: [R]) (x: [[R]]) : R =\n"
     "  sum (map (xi. let hid = map2 (z, b. tanh (z + b)) (matvec w1 xi) b1 in\n"
     "               sum (map2 (z, b. (z + b) * (z + b)) (matvec w2 hid) b2)) x)\n",
     "OpenBLAS dgemm (5 products), plain loops", 5, mlp_inputs, mlp_grad_run, "(grad f wrt w1 b1 w2 b2)", 15u,
     mlp_loss},
};
const int bench_narray_grad_programs = (int)(sizeof bench_array_grad_programs / sizeof bench_array_grad_programs[0]);
