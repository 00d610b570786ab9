/* vmath.h: exp, log and sigmoid written so that a loop over a block
   vectorizes; sin, cos, tan and tanh from SLEEF, whose vector
   functions the block loops call; and the mark of such loops (CPU_VECTOR_LOOP)
   (AVX2: four lanes, the tables read by gathers), with the same bits on
   every path: the block loops, the one-element kernel, the tree evaluator
   and the optimizer's constant folding all use these.

   ---- exp ----

   Method (as in the exp of ARM's optimized-routines, which glibc uses):
   x = k ln2/128 + r with |r| <= ln2/256, k = 128 m + j; exp x = 2^m
   2^(j/128) e^r, 2^(j/128) from a table of 128 entries (the double nearest
   it and the tail of its error), e^r - 1 by its Taylor polynomial to r^5
   (truncation below 2^-60). The error is about 0.502 ulp (measured over
   2e7 arguments against expl), as libm's exp; about 1 argument in 800
   rounds to the other neighbour than libm's does. Outside [-670, 708]
   (results near or beyond the limits of normal numbers) and for nan,
   libm's exp is used. */
#ifndef UNA_VMATH_H
#define UNA_VMATH_H

#include <math.h>
#include <sleef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Marks a loop over blocks to be built twice, for AVX2 (4 doubles a
   vector) and for the baseline (SSE2); the machine's version is picked
   when the program loads. No FMA: each operation rounds on its own, as on
   every other path. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CPU_VECTOR_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define CPU_VECTOR_LOOP
#endif

#define CPU_EXP_N 128
/* x in [CPU_EXP_FAST_MIN, CPU_EXP_FAST_MAX]: exp x and the terms that
   make it are normal numbers (below, scale * tmp would be subnormal and
   round coarsely), so the fast path keeps its accuracy */
#define CPU_EXP_FAST_MIN (-670.0)
#define CPU_EXP_FAST_MAX 708.0

/* Whether x is in that range (false for nan). The fast-path tests use &,
   not &&: a branch in the block loop would stop it vectorizing. */
static inline bool cpu_exp_fast_ok(double x) { return (x >= CPU_EXP_FAST_MIN) & (x <= CPU_EXP_FAST_MAX); }

/* per j: the bits of the double nearest 2^(j/128) minus j << 45, and the
   relative error of that double (filled when the program loads) */
extern uint64_t cpu_exp_bits[CPU_EXP_N];
extern double cpu_exp_tail[CPU_EXP_N];

static inline uint64_t cpu_bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline double cpu_double_of(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* exp x for x in the fast range; meaningless elsewhere (but no
   undefined behaviour, so that a block computes it for every lane). */
static inline double cpu_exp_fast(double x) {
  const double inv_ln2_n = 0x1.71547652b82fep+7, shift = 0x1.8p52;
  const double ln2hi_n = 0x1.62e42fefap-8, ln2lo_n = 0x1.cf79abc9e3b3ap-47; /* ln2/128 = hi + lo, hi * k exact */
  double kd = x * inv_ln2_n + shift; /* k = round(x 128/ln2) in the low bits */
  uint64_t ki = cpu_bits_of(kd);
  kd -= shift;
  double r = (x - kd * ln2hi_n) - kd * ln2lo_n;
  uint64_t j = ki & (CPU_EXP_N - 1);
  double scale = cpu_double_of(cpu_exp_bits[j] + (ki << 45)); /* 2^(k/128), rounded */
  double r2 = r * r;
  double tmp = cpu_exp_tail[j] + r + r2 * (0.5 + r * (1.0 / 6)) + r2 * r2 * (1.0 / 24 + r * (1.0 / 120));
  return scale + scale * tmp;
}

static inline double cpu_exp(double x) { return cpu_exp_fast_ok(x) ? cpu_exp_fast(x) : exp(x); }

/* ---- log ----

   x = 2^k z with z in [0.6875, 1.375), z in one of 128 subintervals of
   centre c: log x = k ln2 + log c + log(1 + r), r = (z - c)/c, computed
   as (z - c) * (1/c) plus that product's rounding error (Dekker's exact
   product, and the error of 1/c from the table), log c as a multiple of
   2^-43 (so that k ln2hi + log c is exact) plus a tail, log(1 + r) by its
   Taylor polynomial to r^7 (|r| <= 2^-8). Near 1 (|x - 1| < 2^-5), where
   log x is small and that sum would cancel, the Taylor polynomial of
   log(1 + r) to r^13 in r = x - 1 with r^2 exact. Error about 0.501 ulp
   (2e7 arguments against logl); 1 argument in 1300 rounds differently
   from libm's log, almost always to the nearer neighbour. Subnormal, zero,
   negative, infinite and nan arguments go to libm's log. */

#define CPU_LOG_N 128
/* per subinterval: c, 1/c (also split into 26-bit halves), the error of
   1/c, log c rounded to a multiple of 2^-43, and the rest of log c */
extern double cpu_log_c[CPU_LOG_N], cpu_log_invc[CPU_LOG_N], cpu_log_ih[CPU_LOG_N], cpu_log_il[CPU_LOG_N],
    cpu_log_ie[CPU_LOG_N], cpu_log_hi[CPU_LOG_N], cpu_log_lo[CPU_LOG_N];

/* Whether cpu_log_fast serves x: a normal positive finite x away from 1. */
static inline bool cpu_log_fast_ok(double x) {
  return (x >= 0x1p-1022) & (x <= 0x1.fffffffffffffp1023) & (fabs(x - 1) >= 0x1p-5);
}

/* Veltkamp's split of a into hi + lo, 26 bits each. */
static inline void cpu_split(double a, double *hi, double *lo) {
  double t = a * 134217729.0;
  *hi = t - (t - a);
  *lo = a - *hi;
}

static inline double cpu_log_fast(double x) {
  const double ln2hi = 0x1.62e42fefa3800p-1, ln2lo = 0x1.ef35793c76730p-45;
  uint64_t ix = cpu_bits_of(x), tmp = ix - 0x3fe6000000000000ULL;
  uint64_t i = (tmp >> 45) & (CPU_LOG_N - 1);
  /* k = tmp >> 52 as a signed 12-bit number, as a double without integer
     conversions (which AVX2 lacks) */
  double kd = cpu_double_of(0x4330000000000000ULL | ((tmp >> 52) ^ 0x800)) - 0x1.0000000000800p52;
  double z = cpu_double_of(ix - (tmp & (0xfffULL << 52)));
  double d = z - cpu_log_c[i]; /* exact */
  double r = d * cpu_log_invc[i], dh, dl;
  cpu_split(d, &dh, &dl);
  double rlo = ((dh * cpu_log_ih[i] - r) + dh * cpu_log_il[i] + dl * cpu_log_ih[i]) + dl * cpu_log_il[i] +
               d * cpu_log_ie[i];
  double w = kd * ln2hi + cpu_log_hi[i]; /* exact */
  double hi = w + r;
  double lo = w - hi + r + (kd * ln2lo + cpu_log_lo[i]) + rlo;
  double r2 = r * r;
  double p = r2 * (-0.5 + r * (1.0 / 3 + r * (-0.25 + r * (0.2 + r * (-1.0 / 6 + r * (1.0 / 7))))));
  return lo + p + hi;
}

/* log x for |x - 1| < 2^-5. */
static inline double cpu_log_near1(double x) {
  double r = x - 1, r2 = r * r, q = 1.0 / 13;
  q = -1.0 / 12 + r * q;
  q = 1.0 / 11 + r * q;
  q = -1.0 / 10 + r * q;
  q = 1.0 / 9 + r * q;
  q = -1.0 / 8 + r * q;
  q = 1.0 / 7 + r * q;
  q = -1.0 / 6 + r * q;
  q = 1.0 / 5 + r * q;
  q = -1.0 / 4 + r * q;
  q = 1.0 / 3 + r * q;
  /* r - r^2/2 (r^2 exact, the sum by Fast2Sum), then the rest r^3 q */
  double rh, rl;
  cpu_split(r, &rh, &rl);
  double r2l = ((rh * rh - r2) + 2 * rh * rl) + rl * rl;
  double a = -0.5 * r2, s = r + a, e = (r - s) + a;
  return s + (e + (-0.5 * r2l + r2 * r * q));
}

static inline double cpu_log(double x) {
  if (fabs(x - 1) < 0x1p-5) return cpu_log_near1(x);
  return cpu_log_fast_ok(x) ? cpu_log_fast(x) : log(x);
}

/* d[i] = cpu_log(a[i]) for i < n. */
void cpu_log_block(double *restrict d, const double *restrict a, int n);

/* d[i] = cpu_exp(a[i]) for i < n (d and a must not overlap). */
void cpu_exp_block(double *restrict d, const double *restrict a, int n);

/* d[i] = cpu_sigmoid(a[i]) (scalar.h) for i < n. */
void cpu_sigmoid_block(double *restrict d, const double *restrict a, int n);

/* ---- sin, cos, tan, tanh: SLEEF ----

   SLEEF's functions of 1 ulp (u10) in their "cinz" form (no FMA: the same
   bits for every vector width, 1 lane, 2 with SSE2, 4 with AVX). The block
   loops (vmath.c) run the widest the machine has; every other path runs
   one element in the 2-lane function (about 1.25x faster than SLEEF's
   1-lane C, and 1.3x (tanh) to 2.2x (sin, cos) slower than the C
   library's, where the block loops are 2x to 2.4x (sin, cos, tan) and
   1.5x (tanh) faster). Error at most about 0.74 ulp (sin, cos), 0.62
   (tan) and 0.50 (tanh) over 2e6 arguments against long double (the C
   library's: 0.52, 0.55 and 2.07). pow stays the C library's: SLEEF's is
   no faster in blocks and several times slower alone, and exp and log
   stay Una's own (bench/cpu/RESULTS.md). */

#if defined(__x86_64__)
#include <emmintrin.h>
#define CPU_SLEEF1(F, x) _mm_cvtsd_f64(Sleef_cinz_##F##d2_u10sse2(_mm_set1_pd(x)))
#else
#define CPU_SLEEF1(F, x) Sleef_cinz_##F##d1_u10purec(x)
#endif
static inline double cpu_sin(double x) { return CPU_SLEEF1(sin, x); }
static inline double cpu_cos(double x) { return CPU_SLEEF1(cos, x); }
static inline double cpu_tan(double x) { return CPU_SLEEF1(tan, x); }
static inline double cpu_tanh(double x) { return CPU_SLEEF1(tanh, x); }

/* d[i] = f(a[i]) for i < n, f = cpu_sin, cpu_cos, cpu_tan or cpu_tanh. */
void cpu_sin_block(double *restrict d, const double *restrict a, int n);
void cpu_cos_block(double *restrict d, const double *restrict a, int n);
void cpu_tan_block(double *restrict d, const double *restrict a, int n);
void cpu_tanh_block(double *restrict d, const double *restrict a, int n);

/* The same with 4 lanes, for n a multiple of 4, on a processor with AVX
   (vmath_avx.c; vmath.c's block loops call them). */
void cpu_sin_block_avx(double *restrict d, const double *restrict a, int n);
void cpu_cos_block_avx(double *restrict d, const double *restrict a, int n);
void cpu_tan_block_avx(double *restrict d, const double *restrict a, int n);
void cpu_tanh_block_avx(double *restrict d, const double *restrict a, int n);

/* Whether the block loops use 4 lanes (AVX; the default where the
   processor has it) or 2 (SSE2); returns the previous setting, and
   ignores true where there is no AVX. For the tests: not thread-safe. */
bool cpu_vmath_use_avx(bool on);

/* ---- sigmoid ---- */

/* 1 / (1 + exp(-x)) with one exp (of -|x|, which cannot overflow) and one
   division. */
static inline double cpu_sigmoid(double x) {
  double e = cpu_exp(-fabs(x));
  return (x >= 0 ? 1.0 : e) / (1.0 + e);
}

#endif
