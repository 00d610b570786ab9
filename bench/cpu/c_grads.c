/* c_grads.c: the benchmark programs (see c_grads.h): their Una text, their
   inputs, and hand-written C for the value and the gradient, the loops an
   expert would write: one or two passes, no temporary arrays beyond the
   results, which are allocated with malloc in every call (Una allocates its
   results too). The inputs are formulas of the index i, written the same
   way in peers.py so that every system sees the same numbers.

   The file is compiled twice (Makefile): with gcc -O3 -march=native
   -fopenmp and C_GRADS_OMP, defining bench_programs_omp, the baseline of
   the table, where the maps and reductions run on all cores with OpenMP
   and prod and Horner's rule by chunks (the #ifdef _OPENMP versions below);
   and with gcc -O2 alone, single-threaded, defining bench_programs, the
   baseline of the earlier tables (and the programs' text and inputs for the
   drivers). */
#ifdef C_GRADS_OMP
#define bench_programs bench_programs_omp
#define bench_nprograms bench_nprograms_omp
#define bench_u bench_omp_u
#define bench_v bench_omp_v
#endif
#include "c_grads.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The most threads the chunked loops use. */
#define MAX_THREADS 64

double bench_u(size_t i) { return (double)(((int64_t)i * 7919) % 10007) / 10007.0; }
double bench_v(size_t i) { return (double)(((int64_t)i * 104729 + 12345) % 10009) / 10009.0; }

static double *new_array(size_t n) {
  double *p = malloc((n ? n : 1) * sizeof *p);
  if (!p) {
    fprintf(stderr, "c_grads: out of memory (%zu doubles)\n", n);
    exit(2);
  }
  return p;
}

/* Una's sigmoid (backend/scalar.h): no overflow for large |x|. */
static double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

/* ---- 1. prod: def f (a: [R]) = prod a ---------------------------------- */

static void prod_inputs(size_t n, BenchArg *g) {
  for (size_t i = 0; i < n; i++) g[0].a[i] = 1.0 + (bench_u(i) - 0.5) * 1e-6;
}

static double prod_primal(size_t n, const BenchArg *g) {
  const double *a = g[0].a;
  double p = 1;
#pragma omp parallel for reduction(* : p)
  for (size_t i = 0; i < n; i++) p *= a[i];
  return p;
}

#ifdef _OPENMP
/* On all cores: the array cut into one chunk per thread; each thread writes
   its chunk's suffix products (within the chunk) into the result and keeps
   the chunk's product; after a barrier, each multiplies in the products of
   the chunks before and after its own and sweeps forward with the prefix
   products. Two passes, as single-threaded. */
static void prod_grad(size_t n, const BenchArg *g, BenchArg *out) {
  const double *a = g[0].a;
  double *d = new_array(n), tot[MAX_THREADS];
  int maxt = omp_get_max_threads();
#pragma omp parallel num_threads(maxt < MAX_THREADS ? maxt : MAX_THREADS)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    size_t lo = n * (size_t)t / (size_t)nt, hi = n * (size_t)(t + 1) / (size_t)nt;
    double s = 1;
    for (size_t i = hi; i-- > lo;) {
      d[i] = s;
      s = a[i] * s;
    }
    tot[t] = s;
#pragma omp barrier
    double p = 1;
    for (int c = 0; c < nt; c++)
      if (c != t) p *= tot[c];
    for (size_t i = lo; i < hi; i++) {
      d[i] = d[i] * p;
      p = p * a[i];
    }
  }
  out[0].a = d;
}
#else

/* d/da_i = (a_0 ... a_{i-1}) (a_{i+1} ... a_{n-1}): suffix products into the
   result, then a forward sweep multiplying in the prefix products. Exact
   with zeros (no division). */
static void prod_grad(size_t n, const BenchArg *g, BenchArg *out) {
  const double *a = g[0].a;
  double *d = new_array(n);
  double s = 1;
  for (size_t i = n; i-- > 0;) {
    d[i] = s;
    s = a[i] * s;
  }
  double p = 1;
  for (size_t i = 0; i < n; i++) {
    d[i] = d[i] * p;
    p = p * a[i];
  }
  out[0].a = d;
}
#endif

/* ---- 2. dot: def f (a: [R]) (b: [R]) = dot a b -------------------------- */

static void dot_inputs(size_t n, BenchArg *g) {
  for (size_t i = 0; i < n; i++) {
    g[0].a[i] = bench_u(i);
    g[1].a[i] = bench_v(i);
  }
}

static double dot_primal(size_t n, const BenchArg *g) {
  const double *a = g[0].a, *b = g[1].a;
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static void dot_grad(size_t n, const BenchArg *g, BenchArg *out) {
  double *da = new_array(n), *db = new_array(n);
#ifdef _OPENMP
  const double *a = g[0].a, *b = g[1].a;
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) {
    da[i] = b[i];
    db[i] = a[i];
  }
#else
  memcpy(da, g[1].a, n * sizeof *da);
  memcpy(db, g[0].a, n * sizeof *db);
#endif
  out[0].a = da;
  out[1].a = db;
}

/* ---- 3. logsumexp: def f (a: [R]) = logsumexp a ------------------------- */

static void lse_inputs(size_t n, BenchArg *g) {
  for (size_t i = 0; i < n; i++) g[0].a[i] = 10.0 * bench_u(i);
}

static double max_of(size_t n, const double *a) {
  double m = -INFINITY;
#pragma omp parallel for reduction(max : m)
  for (size_t i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
  return m;
}

static double lse_primal(size_t n, const BenchArg *g) {
  const double *a = g[0].a;
  double m = max_of(n, a), s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) s += exp(a[i] - m);
  return m + log(s);
}

/* softmax a: exp (a_i - m) into the result, then scaled by 1 / sum. */
static void softmax_into(size_t n, const double *a, double *d) {
  double m = max_of(n, a), s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) {
    d[i] = exp(a[i] - m);
    s += d[i];
  }
  double r = 1 / s;
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) d[i] *= r;
}

static void lse_grad(size_t n, const BenchArg *g, BenchArg *out) {
  double *d = new_array(n);
  softmax_into(n, g[0].a, d);
  out[0].a = d;
}

/* ---- 4. softmax cross-entropy: logsumexp z - dot y z --------------------- */

static void xent_inputs(size_t n, BenchArg *g) {
  double s = 0;
  for (size_t i = 0; i < n; i++) {
    g[0].a[i] = 4.0 * bench_u(i) - 2.0;
    g[1].a[i] = bench_v(i);
    s += g[1].a[i];
  }
  for (size_t i = 0; i < n; i++) g[1].a[i] = g[1].a[i] / s; /* y sums to 1 */
}

static double xent_primal(size_t n, const BenchArg *g) {
  const double *z = g[0].a, *y = g[1].a;
  double m = max_of(n, z), s = 0, d = 0;
#pragma omp parallel for reduction(+ : s, d)
  for (size_t i = 0; i < n; i++) {
    s += exp(z[i] - m);
    d += y[i] * z[i];
  }
  return m + log(s) - d;
}

/* d/dz = softmax z - y, d/dy = -z. */
static void xent_grad(size_t n, const BenchArg *g, BenchArg *out) {
  const double *z = g[0].a, *y = g[1].a;
  double *dz = new_array(n), *dy = new_array(n);
  double m = max_of(n, z), s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) {
    dz[i] = exp(z[i] - m);
    s += dz[i];
    dy[i] = -z[i];
  }
  double r = 1 / s;
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) dz[i] = dz[i] * r - y[i];
  out[0].a = dz;
  out[1].a = dy;
}

/* ---- 5. binary cross-entropy --------------------------------------------
   def f (w: [R]) (y: [R]) =
     -(sum (map2 (p, q. q * log (sigmoid p) + (1 - q) * log (1 - sigmoid p)) w y)) */

static void bce_inputs(size_t n, BenchArg *g) {
  for (size_t i = 0; i < n; i++) {
    g[0].a[i] = 8.0 * bench_u(i) - 4.0;
    g[1].a[i] = bench_v(i);
  }
}

static double bce_primal(size_t n, const BenchArg *g) {
  const double *w = g[0].a, *y = g[1].a;
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) {
    double p = sigmoid(w[i]);
    s += y[i] * log(p) + (1 - y[i]) * log(1 - p);
  }
  return -s;
}

/* d/dw_i = sigmoid w_i - y_i; d/dy_i = -(log sigmoid w_i - log (1 - sigmoid
   w_i)) = -w_i. */
static void bce_grad(size_t n, const BenchArg *g, BenchArg *out) {
  const double *w = g[0].a, *y = g[1].a;
  double *dw = new_array(n), *dy = new_array(n);
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) {
    dw[i] = sigmoid(w[i]) - y[i];
    dy[i] = -w[i];
  }
  out[0].a = dw;
  out[1].a = dy;
}

/* ---- 6. linear-regression loss ------------------------------------------
   def f (w: R) (b: R) (x: [R]) (y: [R]) =
     sum (map2 (xi, yi. (w * xi + b - yi) ^ 2) x y) / length x */

static void linreg_inputs(size_t n, BenchArg *g) {
  g[0].x = 0.7;
  g[1].x = -0.3;
  for (size_t i = 0; i < n; i++) {
    g[2].a[i] = 4.0 * bench_u(i) - 2.0;
    g[3].a[i] = 0.5 * g[2].a[i] + (bench_v(i) - 0.5);
  }
}

static double linreg_primal(size_t n, const BenchArg *g) {
  double w = g[0].x, b = g[1].x, s = 0;
  const double *x = g[2].a, *y = g[3].a;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) {
    double r = w * x[i] + b - y[i];
    s += r * r;
  }
  return s / (double)n;
}

/* With r_i = w x_i + b - y_i and c = 2 / n: d/dw = c sum r_i x_i,
   d/db = c sum r_i, d/dx_i = c w r_i, d/dy_i = -c r_i; one pass. */
static void linreg_grad(size_t n, const BenchArg *g, BenchArg *out) {
  double w = g[0].x, b = g[1].x, c = 2.0 / (double)n, sw = 0, sb = 0;
  const double *x = g[2].a, *y = g[3].a;
  double *dx = new_array(n), *dy = new_array(n);
#pragma omp parallel for reduction(+ : sw, sb)
  for (size_t i = 0; i < n; i++) {
    double r = w * x[i] + b - y[i];
    sw += r * x[i];
    sb += r;
    dx[i] = c * w * r;
    dy[i] = -c * r;
  }
  out[0].x = c * sw;
  out[1].x = c * sb;
  out[2].a = dx;
  out[3].a = dy;
}

/* ---- 7. Horner's rule: def f (x: R) (cs: [R]) = foldl (acc, c. acc * x + c) 0 cs */

static void horner_inputs(size_t n, BenchArg *g) {
  g[0].x = 0.99;
  for (size_t i = 0; i < n; i++) g[1].a[i] = bench_u(i) - 0.5;
}

static double horner_primal(size_t n, const BenchArg *g) {
  double x = g[0].x, acc = 0;
  const double *cs = g[1].a;
  for (size_t i = 0; i < n; i++) acc = acc * x + cs[i];
  return acc;
}

#ifdef _OPENMP
/* On all cores: one chunk [lo, hi) of cs per thread, Horner's recurrence
   (with its derivative by forward mode, as below) over the chunk alone,
   giving the chunk's polynomial P_t and P_t'; the whole polynomial is
   sum_t P_t x^k_t with k_t = n - hi, its derivative sum_t (P_t' x^k_t +
   P_t k_t x^(k_t - 1)). d/dcs_i = x^(n-1-i) by a backward sweep per chunk
   from x^k_t. */
static void horner_grad(size_t n, const BenchArg *g, BenchArg *out) {
  double x = g[0].x, dx = 0;
  const double *cs = g[1].a;
  double *dc = new_array(n);
  int maxt = omp_get_max_threads();
#pragma omp parallel num_threads(maxt < MAX_THREADS ? maxt : MAX_THREADS) reduction(+ : dx)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    size_t lo = n * (size_t)t / (size_t)nt, hi = n * (size_t)(t + 1) / (size_t)nt;
    double acc = 0, d = 0;
    for (size_t i = lo; i < hi; i++) {
      d = d * x + acc;
      acc = acc * x + cs[i];
    }
    double k = (double)(n - hi), xk = pow(x, k);
    dx += d * xk + (k > 0 ? acc * k * pow(x, k - 1) : 0);
    double p = xk;
    for (size_t i = hi; i-- > lo;) {
      dc[i] = p;
      p = x * p;
    }
  }
  out[0].x = dx;
  out[1].a = dc;
}
#else
/* d/dx by forward mode alongside Horner's recurrence (d' = d x + acc, the
   derivative of the polynomial, no stored intermediates); d/dcs_i =
   x^(n-1-i), by a backward sweep. */
static void horner_grad(size_t n, const BenchArg *g, BenchArg *out) {
  double x = g[0].x, acc = 0, d = 0;
  const double *cs = g[1].a;
  for (size_t i = 0; i < n; i++) {
    d = d * x + acc;
    acc = acc * x + cs[i];
  }
  double *dc = new_array(n), p = 1;
  for (size_t i = n; i-- > 0;) {
    dc[i] = p;
    p = x * p;
  }
  out[0].x = d;
  out[1].a = dc;
}
#endif

/* ---- 8. a map with a heavy scalar body ----------------------------------
   def f (a: [R]) = sum (map (x. exp (sin x) * log (1 + x * x) + tanh x * pow (1 + x * x) 0.75) a) */

static void heavy_inputs(size_t n, BenchArg *g) {
  for (size_t i = 0; i < n; i++) g[0].a[i] = 4.0 * bench_u(i) - 2.0;
}

static double heavy_primal(size_t n, const BenchArg *g) {
  const double *a = g[0].a;
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) {
    double x = a[i], t = 1 + x * x;
    s += exp(sin(x)) * log(t) + tanh(x) * pow(t, 0.75);
  }
  return s;
}

static void heavy_grad(size_t n, const BenchArg *g, BenchArg *out) {
  const double *a = g[0].a;
  double *d = new_array(n);
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) {
    double x = a[i], t = 1 + x * x, e = exp(sin(x)), th = tanh(x), p = pow(t, 0.75);
    /* (e log t)' = cos x e log t + e 2x / t; (th p)' = (1 - th^2) p + th 0.75 p / t 2x */
    d[i] = cos(x) * e * log(t) + e * 2 * x / t + (1 - th * th) * p + th * 1.5 * x * p / t;
  }
  out[0].a = d;
}

/* ---- 9. example 1.1 as 16 lets, element-wise ---------------------------- */

#define LETS 16

static void lets_inputs(size_t n, BenchArg *g) {
  for (size_t i = 0; i < n; i++) {
    g[0].a[i] = 0.5 + 0.5 * bench_u(i);
    g[1].a[i] = 0.5 + 0.5 * bench_v(i);
  }
}

static double lets_primal(size_t n, const BenchArg *g) {
  const double *x1 = g[0].a, *x2 = g[1].a;
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (size_t i = 0; i < n; i++) {
    double a = x1[i], b = x2[i], w[LETS + 1];
    w[1] = a * b;
    w[2] = w[1] * a;
#pragma GCC unroll 16
    for (int k = 3; k <= LETS; k++) w[k] = (w[k - 1] * a + w[k - 2] * b) * 0.5;
    s += w[LETS];
  }
  return s;
}

/* Per element: the forward sweep keeps w1..w16 in locals, the reverse sweep
   accumulates their adjoints and those of a and b; both loops unrolled
   (straight-line code, as one would write it out by hand: without the
   unrolling gcc -O2 keeps w and dw in memory and is 1.3x slower). */
static void lets_grad(size_t n, const BenchArg *g, BenchArg *out) {
  const double *x1 = g[0].a, *x2 = g[1].a;
  double *d1 = new_array(n), *d2 = new_array(n);
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) {
    double a = x1[i], b = x2[i], w[LETS + 1], dw[LETS + 1] = {0};
    w[1] = a * b;
    w[2] = w[1] * a;
#pragma GCC unroll 16
    for (int k = 3; k <= LETS; k++) w[k] = (w[k - 1] * a + w[k - 2] * b) * 0.5;
    double da = 0, db = 0;
    dw[LETS] = 1;
#pragma GCC unroll 16
    for (int k = LETS; k >= 3; k--) {
      double t = 0.5 * dw[k];
      dw[k - 1] += t * a;
      dw[k - 2] += t * b;
      da += t * w[k - 1];
      db += t * w[k - 2];
    }
    dw[1] += a * dw[2];
    da += w[1] * dw[2];
    da += b * dw[1];
    db += a * dw[1];
    d1[i] = da;
    d2[i] = db;
  }
  out[0].a = d1;
  out[1].a = d2;
}

/* ---- the table ----------------------------------------------------------- */

const BenchProgram bench_programs[] = {
    {"prod", "def f (a: [R]) = prod a\n", 1, {true}, prod_inputs, prod_primal, prod_grad},
    {"dot", "def f (a: [R]) (b: [R]) = dot a b\n", 2, {true, true}, dot_inputs, dot_primal,
     dot_grad},
    {"logsumexp", "def f (a: [R]) = logsumexp a\n", 1, {true}, lse_inputs, lse_primal, lse_grad},
    {"softmax_xent", "def f (z: [R]) (y: [R]) = logsumexp z - dot y z\n", 2, {true, true},
     xent_inputs, xent_primal, xent_grad},
    {"bce",
     "def f (w: [R]) (y: [R]) =\n"
     "  -(sum (map2 (p, q. q * log (sigmoid p) + (1 - q) * log (1 - sigmoid p)) w y))\n",
     2, {true, true}, bce_inputs, bce_primal, bce_grad},
    {"linreg",
     "def f (w: R) (b: R) (x: [R]) (y: [R]) =\n"
     "  sum (map2 (xi, yi. (w * xi + b - yi) ^ 2) x y) / length x\n",
     4, {false, false, true, true}, linreg_inputs, linreg_primal, linreg_grad},
    {"horner", "def f (x: R) (cs: [R]) = foldl (acc, c. acc * x + c) 0 cs\n", 2, {false, true},
     horner_inputs, horner_primal, horner_grad},
    {"map_heavy",
     "def f (a: [R]) =\n"
     "  sum (map (x. exp (sin x) * log (1 + x * x) + tanh x * pow (1 + x * x) 0.75) a)\n",
     1, {true}, heavy_inputs, heavy_primal, heavy_grad},
    {"lets16",
     "def f (x1: [R]) (x2: [R]) =\n"
     "  sum (map2 (a, b.\n"
     "    let w1 = a * b in\n"
     "    let w2 = w1 * a in\n"
     "    let w3 = (w2 * a + w1 * b) * 0.5 in\n"
     "    let w4 = (w3 * a + w2 * b) * 0.5 in\n"
     "    let w5 = (w4 * a + w3 * b) * 0.5 in\n"
     "    let w6 = (w5 * a + w4 * b) * 0.5 in\n"
     "    let w7 = (w6 * a + w5 * b) * 0.5 in\n"
     "    let w8 = (w7 * a + w6 * b) * 0.5 in\n"
     "    let w9 = (w8 * a + w7 * b) * 0.5 in\n"
     "    let w10 = (w9 * a + w8 * b) * 0.5 in\n"
     "    let w11 = (w10 * a + w9 * b) * 0.5 in\n"
     "    let w12 = (w11 * a + w10 * b) * 0.5 in\n"
     "    let w13 = (w12 * a + w11 * b) * 0.5 in\n"
     "    let w14 = (w13 * a + w12 * b) * 0.5 in\n"
     "    let w15 = (w14 * a + w13 * b) * 0.5 in\n"
     "    let w16 = (w15 * a + w14 * b) * 0.5 in\n"
     "    w16) x1 x2)\n",
     2, {true, true}, lets_inputs, lets_primal, lets_grad},
};
const int bench_nprograms = (int)(sizeof bench_programs / sizeof bench_programs[0]);
