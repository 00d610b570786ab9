/* vmath.h: exp written so that a loop over a block vectorizes (AVX2: four
   lanes, the table read by a gather), with the same bits on every path:
   the block loops, the one-element kernel, the tree evaluator and the
   optimizer's constant folding all use cpu_exp or cpu_exp_block.

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
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CPU_EXP_N 128
/* x in [CPU_EXP_FAST_MIN, CPU_EXP_FAST_MAX]: exp x and the terms that
   make it are normal numbers (below, scale * tmp would be subnormal and
   round coarsely), so the fast path keeps its accuracy */
#define CPU_EXP_FAST_MIN (-670.0)
#define CPU_EXP_FAST_MAX 708.0

/* Whether x is in that range (false for nan). */
static inline bool cpu_exp_fast_ok(double x) { return x >= CPU_EXP_FAST_MIN && x <= CPU_EXP_FAST_MAX; }

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

/* d[i] = cpu_exp(a[i]) for i < n (d and a must not overlap). */
void cpu_exp_block(double *restrict d, const double *restrict a, int n);

/* d[i] = cpu_sigmoid(a[i]) (scalar.h) for i < n. */
void cpu_sigmoid_block(double *restrict d, const double *restrict a, int n);

#endif
