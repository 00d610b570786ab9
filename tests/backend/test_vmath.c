/* test_vmath.c: vmath.h's exp and log: accuracy against long double expl
   and logl over a million arguments each, the edges (overflow, underflow, subnormal results,
   infinities, nan, signed zeros) as libm gives them, and the block loops
   giving the scalar function's bits in every lane, in range or not. */
#include <check.h>
#include <float.h>
#include <math.h>

#include "../../backend/scalar.h"
#include "../../backend/vmath.h"
#include "../suites.h"

static double ulps(double got, long double want) {
  if (got == want) return 0;
  int e;
  frexpl(want, &e);
  return (double)(fabsl((long double)got - want) / ldexpl(1, e - 53));
}

/* A deterministic spread of arguments over the fast path's range. */
static double arg(long i) {
  unsigned long long u = (unsigned long long)i * 6364136223846793005ULL + 1442695040888963407ULL;
  double f = (double)(u >> 11) / 9007199254740992.0; /* [0, 1) */
  switch (i % 3) {
  case 0: return CPU_EXP_FAST_MIN + f * (CPU_EXP_FAST_MAX - CPU_EXP_FAST_MIN);
  case 1: return (f - 0.5) * 20;
  default: return (f - 0.5) * 1e-3;
  }
}

START_TEST(accuracy) {
  double worst = 0;
  for (long i = 0; i < 1000000; i++) {
    double x = arg(i), u = ulps(cpu_exp(x), expl((long double)x));
    if (u > worst) worst = u;
  }
  ck_assert_msg(worst < 0.51, "worst error %.4f ulp", worst);
}
END_TEST

/* Positive arguments over the whole range, and near 1. */
static double log_arg(long i) {
  double f = (arg(i) / CPU_EXP_FAST_MAX + 1) / 2; /* about [0, 1] */
  switch (i % 4) {
  case 0: return exp((f - 0.5) * 1400);
  case 1: return f * 4;
  case 2: return 1 + (f - 0.5) * 0.1;
  default: return 1 + (f - 0.5) * 1e-6;
  }
}

START_TEST(log_accuracy) {
  double worst = 0;
  for (long i = 0; i < 1000000; i++) {
    double x = log_arg(i), u = ulps(cpu_log(x), logl((long double)x));
    if (u > worst) worst = u;
  }
  ck_assert_msg(worst < 0.51, "worst error %.4f ulp", worst);
  /* the edges of the near-1 range and of the subintervals */
  const double xs[] = {1 - 0x1p-5, 1 + 0x1p-5, 1 - 0x1p-5 - 0x1p-50, 1 + 0x1p-5 + 0x1p-50, 0x1.6p-1, 0x1.6p0, 2, 0.5,
                       DBL_MAX, 0x1p-1022, 1e-300, 3, 10};
  for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
    ck_assert_msg(ulps(cpu_log(xs[i]), logl((long double)xs[i])) < 0.51, "log %a", xs[i]);
  ck_assert(cpu_log(1) == 0 && !signbit(cpu_log(1)) && cpu_log(M_E) == 1 && cpu_log(2) == M_LN2);
  ck_assert(cpu_log(0) == -INFINITY && cpu_log(-0.0) == -INFINITY && cpu_log(INFINITY) == INFINITY);
  ck_assert(isnan(cpu_log(-1)) && isnan(cpu_log(NAN)) && isnan(cpu_log(-INFINITY)));
  ck_assert(cpu_log(4e-320) == log(4e-320)); /* subnormal: libm */
}
END_TEST

START_TEST(edges) {
  const double xs[] = {0.0, -0.0, 1.0, -1.0, 708.0, -708.0, 708.5, 709.78, 709.79, 710, 1e300, INFINITY,
                       -669.9, -670.1, -708.5, -720, -745.13, -745.14, -746, -1e300, -INFINITY, 1e-320, -1e-320, DBL_MIN};
  for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
    double x = xs[i];
    if (!cpu_exp_fast_ok(x)) ck_assert_msg(cpu_exp(x) == exp(x), "exp %g: %a, libm %a", x, cpu_exp(x), exp(x));
    else ck_assert_msg(ulps(cpu_exp(x), expl((long double)x)) < 0.51, "exp %g", x);
  }
  ck_assert(cpu_exp(0.0) == 1 && cpu_exp(-0.0) == 1 && cpu_exp(1.0) == M_E);
  ck_assert(isnan(cpu_exp(NAN)));
  ck_assert(cpu_exp(INFINITY) == INFINITY && cpu_exp(-INFINITY) == 0);
  ck_assert(cpu_sigmoid(0) == 0.5 && cpu_sigmoid(1000) == 1 && cpu_sigmoid(-1000) == 0);
  ck_assert(cpu_sigmoid(-740) > 0); /* subnormal, not flushed */
}
END_TEST

START_TEST(blocks_match_scalar) {
  enum { N = 301 };
  static double a[N], d[N], s[N];
  for (int i = 0; i < N; i++) a[i] = i % 37 == 0 ? (i % 2 ? 800.0 : -800.0) : i % 41 == 0 ? NAN : arg(i);
  a[5] = INFINITY;
  a[6] = -INFINITY;
  a[7] = -745.5;
  cpu_exp_block(d, a, N);
  cpu_sigmoid_block(s, a, N);
  static double b[N], l[N];
  for (int i = 0; i < N; i++) b[i] = i % 5 == 0 ? 1 + (i - 150) * 1e-4 : i % 7 == 0 ? -a[i] : fabs(a[i]);
  b[3] = 0;
  b[4] = INFINITY;
  b[8] = 4e-320;
  cpu_log_block(l, b, N);
  for (int i = 0; i < N; i++) {
    double e = cpu_log(b[i]);
    ck_assert_msg(memcmp(&l[i], &e, sizeof e) == 0 || (isnan(l[i]) && isnan(e)), "log lane %d (%g)", i, b[i]);
  }
  for (int i = 0; i < N; i++) {
    double e = cpu_exp(a[i]), g = cpu_sigmoid(a[i]);
    ck_assert_msg(memcmp(&d[i], &e, sizeof e) == 0 || (isnan(d[i]) && isnan(e)), "exp lane %d (%g)", i, a[i]);
    ck_assert_msg(memcmp(&s[i], &g, sizeof g) == 0 || (isnan(s[i]) && isnan(g)), "sigmoid lane %d (%g)", i, a[i]);
  }
}
END_TEST

Suite *suite_vmath(void) {
  Suite *s = suite_create("vmath");
  TCase *tc = tcase_create("vmath");
  tcase_add_test(tc, accuracy);
  tcase_add_test(tc, log_accuracy);
  tcase_add_test(tc, edges);
  tcase_add_test(tc, blocks_match_scalar);
  suite_add_tcase(s, tc);
  return s;
}
