/* vmath.c: the exp table and the block loops of vmath.h. */
#include "vmath.h"

#include "kernel.h" /* CPU_VECTOR_LOOP */
#include "scalar.h"

uint64_t cpu_exp_bits[CPU_EXP_N];
double cpu_exp_tail[CPU_EXP_N];

/* 2^(j/128) in long double (64 bits of mantissa): the double nearest it
   and the tail, good to about 2^-64. */
__attribute__((constructor)) static void exp_table(void) {
  for (int j = 0; j < CPU_EXP_N; j++) {
    long double e = exp2l((long double)j / CPU_EXP_N);
    double s = (double)e;
    cpu_exp_bits[j] = cpu_bits_of(s) - ((uint64_t)j << 45);
    cpu_exp_tail[j] = (double)(e / s - 1);
  }
}

/* Every lane takes the fast path (a loop without branches vectorizes); the
   few lanes out of its range are then done again one by one. */
CPU_VECTOR_LOOP void cpu_exp_block(double *restrict d, const double *restrict a, int n) {
  int out = 0;
  for (int i = 0; i < n; i++) {
    out |= !cpu_exp_fast_ok(a[i]);
    d[i] = cpu_exp_fast(a[i]);
  }
  if (out)
    for (int i = 0; i < n; i++)
      if (!cpu_exp_fast_ok(a[i])) d[i] = exp(a[i]);
}

/* sigmoid x = 1/(1+e) for x >= 0, e/(1+e) below, e = exp(-|x|) */
CPU_VECTOR_LOOP void cpu_sigmoid_block(double *restrict d, const double *restrict a, int n) {
  int out = 0;
  for (int i = 0; i < n; i++) {
    double x = a[i], e = cpu_exp_fast(-fabs(x));
    out |= !cpu_exp_fast_ok(-fabs(x));
    d[i] = (x >= 0 ? 1.0 : e) / (1.0 + e);
  }
  if (out)
    for (int i = 0; i < n; i++)
      if (!cpu_exp_fast_ok(-fabs(a[i]))) d[i] = cpu_sigmoid(a[i]);
}
