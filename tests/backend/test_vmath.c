/* test_vmath.c: vmath.h's exp and log: accuracy against long double expl
   and logl over a million arguments each, the edges (overflow, underflow, subnormal results,
   infinities, nan, signed zeros) as libm gives them, and the block loops
   giving the scalar function's bits in every lane, in range or not. Its
   SLEEF functions (sin, cos, tan, tanh): within 1 ulp (SLEEF's bound; the
   C library's are about 0.5, tanh's 2), C99's values at the edges, and
   block loops of 4 (AVX) and 2 (SSE2) lanes giving the one-element
   function's bits. */
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

/* The SLEEF functions against long double: over [-10, 10] and up to 1e6. */
START_TEST(sleef_accuracy) {
  double w[4] = {0};
  for (long i = 0; i < 300000; i++) {
    unsigned long long u = (unsigned long long)i * 6364136223846793005ULL + 1442695040888963407ULL;
    double f = (double)(u >> 11) / 9007199254740992.0;
    double x = i % 10 ? (f - 0.5) * 20 : (f - 0.5) * 2e6;
    double e[4] = {ulps(cpu_sin(x), sinl(x)), ulps(cpu_cos(x), cosl(x)), ulps(cpu_tan(x), tanl(x)),
                   ulps(cpu_tanh(x), tanhl(x))};
    for (int k = 0; k < 4; k++)
      if (e[k] > w[k]) w[k] = e[k];
  }
  ck_assert_msg(w[0] < 1 && w[1] < 1 && w[2] < 1 && w[3] < 1, "worst errors: sin %.3f cos %.3f tan %.3f tanh %.3f ulp",
                w[0], w[1], w[2], w[3]);
}
END_TEST

START_TEST(sleef_edges) {
  ck_assert(cpu_sin(0.0) == 0 && !signbit(cpu_sin(0.0)) && signbit(cpu_sin(-0.0)) && cpu_cos(-0.0) == 1);
  ck_assert(isnan(cpu_sin(INFINITY)) && isnan(cpu_cos(-INFINITY)) && isnan(cpu_tan(INFINITY)) && isnan(cpu_sin(NAN)));
  ck_assert(cpu_tanh(INFINITY) == 1 && cpu_tanh(-INFINITY) == -1 && cpu_tanh(800) == 1 && signbit(cpu_tanh(-0.0)));
  ck_assert(cpu_sin(1e-320) == 1e-320 && cpu_tanh(-1e-320) == -1e-320); /* subnormals, not flushed */
  ck_assert(cpu_tan(0x1p-30) == 0x1p-30 && cpu_cos(0x1p-30) == 1);
}
END_TEST

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

/* Every lane of the 4-lane, 2-lane and leftover loops, on arguments in
   range, large and at the edges, gives the one-lane function's bits. */
START_TEST(sleef_blocks_match_scalar) {
  enum { N = 303 };
  static double a[N], d[N];
  static const double xs[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-320, -1e-320, 1e300, -1e300, 20, -20,
                                 800, 1e22, 3.141592653589793, 2, 0.5, -8, 1e15};
  int ne = (int)(sizeof xs / sizeof xs[0]);
  for (int i = 0; i < N; i++) a[i] = i < ne ? xs[i] : i % 3 ? arg(i) / 70 : arg(i) * 1e3;
  const int ns[] = {N, 256, 6, 3, 1};
  for (int w = 0; w < 2; w++) {
    bool was = cpu_vmath_use_avx(w == 0);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      int n = ns[k];
      cpu_sin_block(d, a, n);
      for (int i = 0; i < n; i++) ck_assert_msg(same_bits(d[i], cpu_sin(a[i])), "sin lane %d of %d (%g)", i, n, a[i]);
      cpu_cos_block(d, a, n);
      for (int i = 0; i < n; i++) ck_assert_msg(same_bits(d[i], cpu_cos(a[i])), "cos lane %d of %d (%g)", i, n, a[i]);
      cpu_tan_block(d, a, n);
      for (int i = 0; i < n; i++) ck_assert_msg(same_bits(d[i], cpu_tan(a[i])), "tan lane %d of %d (%g)", i, n, a[i]);
      cpu_tanh_block(d, a, n);
      for (int i = 0; i < n; i++) ck_assert_msg(same_bits(d[i], cpu_tanh(a[i])), "tanh lane %d of %d (%g)", i, n, a[i]);
    }
    cpu_vmath_use_avx(was);
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
  tcase_add_test(tc, sleef_accuracy);
  tcase_add_test(tc, sleef_edges);
  tcase_add_test(tc, sleef_blocks_match_scalar);
  suite_add_tcase(s, tc);
  return s;
}
