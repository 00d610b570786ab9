/* test_partials.c: the scalar derivative table is complete (every scalar
   builtin has its partials) and each partial agrees with a central finite
   difference of the builtin itself, at points away from kinks. */
#include <math.h>

#include "../../backend/eval.h"
#include "../../backend/scalar.h"
#include "../../frontend/ir/build.h"
#include "../../reverse/partials.h"
#include "../suites.h"

static bool is_scalar(Prim p) {
  return fe_prims[p].cls == P_SCALAR1 || fe_prims[p].cls == P_SCALAR2;
}

/* ∂_i p at (x, y), evaluated from the table's term. */
static double partial_at(Prim p, int i, double x, double y) {
  Span s = fe_span("<partials>", 1, 1);
  Sym *xs[2] = {fe_mk_sym("x", fe_ty_real(), s), fe_mk_sym("y", fe_ty_real(), s)};
  Term *args[2] = {fe_mk_var(s, xs[0]), fe_mk_var(s, xs[1])};
  Def *d = fe_mk_def("d", s, 2, xs, rev_partial(s, p, i, args));
  Value in[2] = {val_real(x), val_real(y)};
  return cpu_call(d, in).u.r;
}

static double prim_at(Prim p, double x, double y) {
  return fe_prims[p].arity == 1 ? cpu_scalar1(p, x) : cpu_scalar2(p, x, y);
}

START_TEST(every_scalar_builtin_has_partials) {
  for (int p = 0; p < PRIM__COUNT; p++)
    if (is_scalar((Prim)p))
      ck_assert_msg(rev_has_partials((Prim)p), "no partial derivative for '%s'",
                    fe_prims[p].name);
}
END_TEST

START_TEST(partials_match_finite_differences) {
  /* Points inside every builtin's domain and off its kinks (x != y for
     max/min, no integers for floor, x > 0 for log, sqrt and pow). */
  const double pts[][2] = {{0.3, 1.9}, {1.7, 0.6}, {2.5, 1.3}};
  for (int p = 0; p < PRIM__COUNT; p++) {
    /* stop_gradient's derivative is 0 by definition; trigamma has none
       (test_prims.c) */
    if (!is_scalar((Prim)p) || p == PRIM_STOPGRAD || p == PRIM_TRIGAMMA) continue;
    for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
      for (int i = 0; i < fe_prims[p].arity; i++) {
        double x = pts[k][0], y = pts[k][1], h = 1e-6;
        double lo = i == 0 ? prim_at((Prim)p, x - h, y) : prim_at((Prim)p, x, y - h);
        double hi = i == 0 ? prim_at((Prim)p, x + h, y) : prim_at((Prim)p, x, y + h);
        double fd = (hi - lo) / (2 * h);
        double got = partial_at((Prim)p, i, x, y);
        ck_assert_msg(fabs(got - fd) <= 1e-6 * fmax(1, fabs(fd)),
                      "d%d %s at (%g, %g): table %.17g, finite difference %.17g", i,
                      fe_prims[p].name, x, y, got, fd);
      }
    }
  }
}
END_TEST

START_TEST(stop_gradient_has_derivative_zero) {
  ck_assert_double_eq(prim_at(PRIM_STOPGRAD, 1.25, 0), 1.25);
  for (double x = -2; x <= 2; x += 0.5) ck_assert_double_eq(partial_at(PRIM_STOPGRAD, 0, x, 0), 0);
}
END_TEST

/* lgamma' = digamma and digamma' = trigamma, exactly (the rules are those
   builtins), on both sides of 0; finite differences agree off the poles. */
START_TEST(lgamma_and_digamma_partials) {
  const double xs[] = {-7.3, -2.5, -0.3, 0.2, 1.4616321449683622, 3, 12.5, 1e4};
  for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
    double x = xs[k], h = 1e-6 * fmax(1, fabs(x));
    ck_assert_double_eq(partial_at(PRIM_LGAMMA, 0, x, 0), cpu_digamma(x));
    ck_assert_double_eq(partial_at(PRIM_DIGAMMA, 0, x, 0), cpu_trigamma(x));
    double fd = (prim_at(PRIM_DIGAMMA, x + h, 0) - prim_at(PRIM_DIGAMMA, x - h, 0)) / (2 * h);
    ck_assert_msg(fabs(fd - cpu_trigamma(x)) <= 1e-6 * fmax(1, fabs(fd)), "digamma' at %g: %.17g vs %.17g", x, fd,
                  cpu_trigamma(x));
  }
}
END_TEST

Suite *suite_partials(void) {
  Suite *s = suite_create("partials");
  TCase *tc = tcase_create("partials");
  tcase_add_test(tc, every_scalar_builtin_has_partials);
  tcase_add_test(tc, partials_match_finite_differences);
  tcase_add_test(tc, stop_gradient_has_derivative_zero);
  tcase_add_test(tc, lgamma_and_digamma_partials);
  suite_add_tcase(s, tc);
  return s;
}
