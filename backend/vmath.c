/* vmath.c: the exp and log tables and the block loops of vmath.h. */
#include "vmath.h"

uint64_t cpu_exp_bits[CPU_EXP_N];
double cpu_exp_tail[CPU_EXP_N];

double cpu_log_c[CPU_LOG_N], cpu_log_invc[CPU_LOG_N], cpu_log_ih[CPU_LOG_N], cpu_log_il[CPU_LOG_N],
    cpu_log_ie[CPU_LOG_N], cpu_log_hi[CPU_LOG_N], cpu_log_lo[CPU_LOG_N];

/* Subinterval i is z in [a, b), a and b the doubles whose bits are
   0x3fe6000000000000 + (i << 45) and + ((i + 1) << 45); c its centre.
   log c and 1/c in long double (64 bits), good to about 2^-65. */
__attribute__((constructor)) static void log_table(void) {
  for (int i = 0; i < CPU_LOG_N; i++) {
    double a = cpu_double_of(0x3fe6000000000000ULL + ((uint64_t)i << 45));
    double b = cpu_double_of(0x3fe6000000000000ULL + ((uint64_t)(i + 1) << 45));
    double c = (a + b) / 2;
    cpu_log_c[i] = c;
    cpu_log_invc[i] = 1 / c;
    cpu_split(cpu_log_invc[i], &cpu_log_ih[i], &cpu_log_il[i]);
    cpu_log_ie[i] = (double)(1.0L / c - cpu_log_invc[i]);
    long double l = logl((long double)c);
    cpu_log_hi[i] = nearbyint((double)l * 0x1p43) * 0x1p-43;
    cpu_log_lo[i] = (double)(l - cpu_log_hi[i]);
  }
}

CPU_VECTOR_LOOP void cpu_log_block(double *restrict d, const double *restrict a, int n) {
  int out = 0;
  for (int i = 0; i < n; i++) {
    out |= !cpu_log_fast_ok(a[i]);
    d[i] = cpu_log_fast(a[i]);
  }
  if (out)
    for (int i = 0; i < n; i++)
      if (!cpu_log_fast_ok(a[i])) d[i] = cpu_log(a[i]);
}

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

/* ---- sin, cos, tan, tanh: SLEEF's vector functions ----

   4 lanes with AVX (vmath_avx.c, built with -mavx, called only where the
   processor has AVX), else 2 with SSE2, the rest one at a time; all are
   SLEEF's cinz functions, which give the same bits at every width. */

#if defined(__x86_64__)
#include <emmintrin.h>

static bool have_avx, cpu_has_avx;

__attribute__((constructor)) static void pick_width(void) {
  __builtin_cpu_init();
  have_avx = cpu_has_avx = __builtin_cpu_supports("avx");
}

bool cpu_vmath_use_avx(bool on) {
  bool was = have_avx;
  have_avx = on && cpu_has_avx;
  return was;
}

/* d[i] = f(a[i]): the most elements that are a multiple of 4 by AVX (when
   on), then pairs by SSE2, then the last one alone by ONE */
#define SLEEF_BLOCK1(NAME, AVX, SSE2, ONE)                                                       \
  void NAME(double *restrict d, const double *restrict a, int n) {                               \
    int i = 0;                                                                                   \
    if (have_avx) {                                                                              \
      i = n & ~3;                                                                                \
      AVX(d, a, i);                                                                              \
    }                                                                                            \
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(d + i, SSE2(_mm_loadu_pd(a + i)));                  \
    for (; i < n; i++) d[i] = ONE(a[i]);                                                         \
  }
SLEEF_BLOCK1(cpu_sin_block, cpu_sin_block_avx, Sleef_cinz_sind2_u10sse2, cpu_sin)
SLEEF_BLOCK1(cpu_cos_block, cpu_cos_block_avx, Sleef_cinz_cosd2_u10sse2, cpu_cos)
SLEEF_BLOCK1(cpu_tan_block, cpu_tan_block_avx, Sleef_cinz_tand2_u10sse2, cpu_tan)
SLEEF_BLOCK1(cpu_tanh_block, cpu_tanh_block_avx, Sleef_cinz_tanhd2_u10sse2, cpu_tanh)

#else /* one lane at a time */

bool cpu_vmath_use_avx(bool on) { return false; }

#define SLEEF_BLOCK1(NAME, ONE)                                                                  \
  void NAME(double *restrict d, const double *restrict a, int n) {                               \
    for (int i = 0; i < n; i++) d[i] = ONE(a[i]);                                                \
  }
SLEEF_BLOCK1(cpu_sin_block, cpu_sin)
SLEEF_BLOCK1(cpu_cos_block, cpu_cos)
SLEEF_BLOCK1(cpu_tan_block, cpu_tan)
SLEEF_BLOCK1(cpu_tanh_block, cpu_tanh)

#endif
