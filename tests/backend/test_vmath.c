/* test_vmath.c: vmath.h's exp: accuracy against long double expl over a
   million arguments, the edges (overflow, underflow, subnormal results,
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
  tcase_add_test(tc, edges);
  tcase_add_test(tc, blocks_match_scalar);
  suite_add_tcase(s, tc);
  return s;
}
