/* test_prelude.c: the value of every prelude function on a few inputs,
   including the empty array and values that would overflow without the
   max shift. */
#include "../../frontend/repl/session.h"
#include "../suites.h"
#include "../testlib.h"
#include <math.h>

/* Evaluates expr in the fixture's session (with the prelude); returns the
   printed value without its newline. Fails the test on an error. */
static char *eval(const char *expr) {
  TlRun r = tl_capture(tl_session, expr, true);
  ck_assert_msg(r.ok, "%s: %s", expr, r.err);
  size_t n = strlen(r.out);
  ck_assert_msg(n > 0 && r.out[n - 1] == '\n', "%s printed '%s'", expr, r.out);
  r.out[n - 1] = '\0';
  return r.out;
}

/* Evaluates expr; expects an error whose message contains what. */
static void eval_fails(const char *expr, const char *what) {
  TlRun r = tl_capture(tl_session, expr, true);
  ck_assert_msg(!r.ok, "%s succeeded", expr);
  ck_assert_msg(strstr(r.err, what), "%s: error '%s' lacks '%s'", expr, r.err, what);
}

#define EXPECT(expr, value) ck_assert_str_eq(eval(expr), value)

/* expr must print the real x exactly (shortest round-trip text). */
static void expect_real(const char *expr, double x) {
  char buf[32];
  una_format_real(buf, sizeof buf, x);
  ck_assert_str_eq(eval(expr), buf);
}

/* expr must print a real within tol of x. */
static void expect_near(const char *expr, double x, double tol) {
  double got = strtod(eval(expr), NULL);
  ck_assert_msg(fabs(got - x) <= tol, "%s = %.17g, expected %.17g", expr, got, x);
}

START_TEST(sum_and_prod) {
  EXPECT("sum [1, 2, 3]", "6");
  EXPECT("sum []", "0");
  EXPECT("sum [0.5]", "0.5");
  EXPECT("sum (iota 101)", "5050");
  EXPECT("prod [1, 2, 3, 4]", "24");
  EXPECT("prod []", "1");
  EXPECT("prod [2, -0.5]", "-1");
}
END_TEST

START_TEST(dot_mean_sumsq_norm) {
  EXPECT("dot [1, 2, 3] [4, 5, 6]", "32");
  EXPECT("dot [] []", "0");
  eval_fails("dot [1, 2] [1, 2, 3]", "map2: lengths 2 and 3 differ");
  EXPECT("mean [1, 2, 3, 4]", "2.5");
  EXPECT("mean []", "nan");
  EXPECT("sumsq [1, 2, 3]", "14");
  EXPECT("sumsq []", "0");
  EXPECT("norm [3, 4]", "5");
  EXPECT("norm []", "0");
  expect_real("norm [1, 1]", sqrt(2.0));
}
END_TEST

START_TEST(maximum_and_minimum) {
  EXPECT("maximum [3, 1, 4, 1, 5]", "5");
  EXPECT("maximum [-3, -1]", "-1");
  EXPECT("maximum []", "-inf");
  EXPECT("minimum [3, 1, 4, 1, 5]", "1");
  EXPECT("minimum [-3, -1]", "-3");
  EXPECT("minimum []", "inf");
  EXPECT("maximum [-inf]", "-inf");
}
END_TEST

START_TEST(logsumexp_is_stable) {
  expect_real("logsumexp [0, 0]", log(2.0));
  expect_real("logsumexp [1000, 1000]", 1000 + log(2.0));
  expect_real("logsumexp [-1000, -1000]", -1000 + log(2.0));
  expect_near("logsumexp [1, 2, 3]", log(exp(1.0) + exp(2.0) + exp(3.0)), 1e-14);
  EXPECT("logsumexp [5]", "5");
  EXPECT("logsumexp []", "-inf");
  EXPECT("logsumexp [-inf, -inf]", "-inf");
  EXPECT("logsumexp [inf, 1]", "inf");
}
END_TEST

START_TEST(softmax_is_stable) {
  EXPECT("softmax [0, 0]", "[0.5, 0.5]");
  EXPECT("softmax [1000, 1000]", "[0.5, 0.5]");
  EXPECT("softmax [-1000, -1000, -1000, -1000]", "[0.25, 0.25, 0.25, 0.25]");
  EXPECT("softmax [7]", "[1]");
  EXPECT("softmax []", "[]");
  EXPECT("abs (sum (softmax [1, 2, 3]) - 1) < 1e-15", "true");
  double z = exp(1.0) + exp(2.0) + exp(3.0);
  expect_near("fst (foldl (acc, x. (acc.2, x)) (0, 0) (softmax [1, 2, 3]))", exp(2.0) / z, 1e-15);
  expect_near("foldl (acc, x. x) 0 (softmax [1, 2, 3])", exp(3.0) / z, 1e-15);
}
END_TEST

START_TEST(variance_stddev) {
  EXPECT("variance [1, 2, 3, 4]", "1.25");
  EXPECT("variance [5, 5, 5]", "0");
  EXPECT("stddev [2, 4, 4, 4, 5, 5, 7, 9]", "2");
  EXPECT("variance []", "nan");
}
END_TEST

START_TEST(cumsum_relu) {
  EXPECT("cumsum [1, 2, 3, 4]", "[1, 3, 6, 10]");
  EXPECT("cumsum [5]", "[5]");
  EXPECT("cumsum []", "[]");
  EXPECT("map relu [-1, 0, 2.5]", "[0, 0, 2.5]");
  EXPECT("relu (-3)", "0");
}
END_TEST

START_TEST(prelude_types) {
  EXPECT(":type sum", "[R] -> R");
  EXPECT(":type dot", "[R] -> [R] -> R");
  EXPECT(":type softmax", "[R] -> [R]");
  EXPECT(":type cumsum", "[R] -> [R]");
  EXPECT(":type relu", "R -> R");
}
END_TEST

Suite *suite_prelude(void) {
  Suite *s = suite_create("prelude");
  TCase *tc = tcase_create("prelude");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_add_test(tc, sum_and_prod);
  tcase_add_test(tc, dot_mean_sumsq_norm);
  tcase_add_test(tc, maximum_and_minimum);
  tcase_add_test(tc, logsumexp_is_stable);
  tcase_add_test(tc, softmax_is_stable);
  tcase_add_test(tc, variance_stddev);
  tcase_add_test(tc, cumsum_relu);
  tcase_add_test(tc, prelude_types);
  suite_add_tcase(s, tc);
  return s;
}
