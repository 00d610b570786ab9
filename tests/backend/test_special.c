/* test_special.c: lgamma, digamma and trigamma (backend/special.h): their
   values against 50-digit references (mpmath, scripts/special-coeffs.py
   --refs) on a grid over both signs, small and large arguments, around
   the roots of ψ and the switches between methods; the poles, infinities
   and nan as SciPy gives them; identities at many more points (the
   recurrences, the reflections, trigamma as digamma's slope); and lgamma
   leaving C's global signgam alone (thread-safety). How far from SciPy:
   over 26,000 random arguments, digamma is within 2 ulp of the 50-digit
   value for x > 0 and 3 in (-1, 0), where scipy.special.psi (1.17) is
   within 3 and, near -0.5 and in (-10, -1), far worse; trigamma within 2
   for x > 0 and 4 for x < 0, polygamma(1, x) 5. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "../../backend/special.h"
#include "../suites.h"

/* x, lgamma x, digamma x, trigamma x */
static const double refs[][4] = {
    {1e-300, 690.7755278982137, -9.999999999999999e+299, INFINITY},
    {1e-20, 46.051701859880914, -1e+20, 1.0000000000000002e+40},
    {1e-08, 18.42068073818021, -100000000.57721564, 1.0000000000000002e+16},
    {0.001, 6.907178885383853, -1000.5755719318103, 1000001.6425331958},
    {0.1, 2.252712651734206, -10.423754940411076, 101.43329915079275},
    {0.25, 1.2880225246980774, -4.2274535333762655, 17.19732915450711},
    {0.46, 0.6550437884949889, -2.175493605465344, 5.695017542114802},
    {0.5, 0.5723649429247001, -1.9635100260214235, 4.934802200544679},
    {0.75, 0.20328095143129538, -1.0858608797864722, 2.5418796476716063},
    {0.9999, 5.7729791561193866e-05, -0.5773801703298691, 1.6451745107027036},
    {1.0, 0.0, -0.5772156649015329, 1.6449340668482264},
    {1.0000001, -5.772155829918507e-08, -0.5772155004081381, 1.6449338264368782},
    {1.2, -0.08537409000331583, -0.2890398965921884, 1.2673772054237793},
    {1.4616321449683622, -0.12148629053584961, -9.241265521729427e-17, 0.9676722454476212},
    {1.4616321449683625, -0.12148629053584961, 1.2245374622004068e-16, 0.9676722454476211},
    {1.47, -0.121452498007656, 0.008066489011364869, 0.9603162090511507},
    {1.5, -0.12078223763524522, 0.03648997397857652, 0.9348022005446793},
    {1.75, -0.08440112102048555, 0.24747245354686118, 0.7641018698938287},
    {1.9999999, -4.2278430309861296e-08, 0.4227842706050584, 0.6449341072596095},
    {2.0, 0.0, 0.42278433509846713, 0.6449340668482264},
    {2.0000001, 4.227843666532498e-08, 0.4227843995918717, 0.6449340264368484},
    {2.5, 0.2846828704729192, 0.7031566406452432, 0.49035775610023485},
    {3.0, 0.6931471805599453, 0.9227843350984671, 0.39493406684822646},
    {3.7, 1.428072326665388, 1.1671535393615113, 0.3100378576700383},
    {5.0, 3.1780538303479458, 1.5061176684318005, 0.22132295573711533},
    {6.25, 5.219603986990229, 1.750453526883736, 0.17347923315893218},
    {9.5, 11.689333420797269, 2.1977378764029494, 0.11099728846909904},
    {9.999999, 12.801825228328935, 2.25175248390038, 0.10516634673152186},
    {10.0, 12.801827480081469, 2.251752589066721, 0.10516633568168575},
    {10.000001, 12.80182973183411, 2.2517526942330512, 0.10516632463185194},
    {12.5, 18.734347511936445, 2.4851956512749123, 0.08328522460157838},
    {30.0, 71.25703896716801, 3.384438132685525, 0.033895060357739946},
    {100.25, 360.28455963776423, 4.602671243274712, 0.010024978698123367},
    {1000.0, 5905.220423209181, 6.907255195648812, 0.0010005001666666333},
    {12345.678, 103959.91990554606, 9.421020820741761, 8.100328723111207e-05},
    {1000000.0, 12815504.569147611, 13.815510057964191, 1.0000005000001667e-06},
    {10000000000.0, 220258509288.81058, 23.025850929890456, 1.00000000005e-10},
    {1e+17, 3.8143946580898775e+18, 39.14394658089878, 1e-17},
    {1e+20, 4.505170185988091e+21, 46.051701859880914, 1e-20},
    {1e+100, 2.2925850929940456e+102, 230.25850929940458, 1e-100},
    {1e+300, 6.897755278982137e+302, 690.7755278982137, 1e-300},
    {-1e-08, 18.42068074972452, 99999999.42278431, 1.0000000000000002e+16},
    {-0.1, 2.3689613327287886, 9.245073050052948, 101.92253995947719},
    {-0.3, 1.4648400508576025, 2.113309779635399, 13.945160267805722},
    {-0.5, 1.2655121234846454, 0.03648997397857652, 8.934802200544679},
    {-0.504083008264455, 1.2654376221108656, 4.042965717222496e-15, 8.939798558792134},
    {-0.5040830082644554, 1.2654376221108656, 7.289763902976895e-17, 8.939798558792134},
    {-0.51, 1.2655941825990327, -0.05293173696963593, 8.952767608833344},
    {-0.6, 1.3075034414677744, -0.8947178779184493, 10.053134368307374},
    {-0.9, 2.3580731673920323, -9.312643829299969, 102.66786705202738},
    {-1.5, 0.860047015376481, 0.7031566406452432, 9.379246644989124},
    {-2.25, 0.5555015450206475, 4.158583564657972, 19.37941051186914},
    {-2.75, 0.004487897535955773, -1.959055264977997, 19.433868949488463},
    {-3.3, -0.8243558050174264, 3.620353460592126, 14.817739525515929},
    {-7.6, -8.56298627582828, 1.071732116277544, 10.788265451054698},
    {-10.5, -15.147270590717842, 2.3982391295357814, 9.778757739814813},
    {-17.25, -32.731130981025686, 6.018110345069104, 19.68288565878102},
    {-99.5, -360.2908105819282, 4.605174352581845, 9.859604484419776},
    {-1234.4, -7555.762532131964, 8.139510632137505, 10.910756479305583},
};

static double ulps(double got, double want) {
  if (got == want || (isnan(got) && isnan(want))) return 0;
  if (isinf(want) || isinf(got)) return INFINITY;
  int e;
  frexp(want, &e);
  return fabs(got - want) / ldexp(1.0, e - 53);
}

START_TEST(reference_values) {
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
    double x = refs[i][0];
    double lg = ulps(cpu_lgamma(x), refs[i][1]), dg = ulps(cpu_digamma(x), refs[i][2]),
           tg = ulps(cpu_trigamma(x), refs[i][3]);
    ck_assert_msg(lg <= 4, "lgamma %.17g: %.17g, want %.17g (%g ulp)", x, cpu_lgamma(x), refs[i][1], lg);
    ck_assert_msg(dg <= 3, "digamma %.17g: %.17g, want %.17g (%g ulp)", x, cpu_digamma(x), refs[i][2], dg);
    ck_assert_msg(tg <= 3, "trigamma %.17g: %.17g, want %.17g (%g ulp)", x, cpu_trigamma(x), refs[i][3], tg);
  }
}
END_TEST

static bool same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

/* As scipy.special: gammaln, psi, polygamma(1, .); lgamma (-inf) is inf
   as C's lgamma (SciPy says -inf). */
START_TEST(poles_and_infinities) {
  const double poles[] = {0.0, -0.0, -1.0, -2.0, -17.0, -0x1p52, -1e300};
  for (size_t i = 0; i < sizeof poles / sizeof poles[0]; i++) {
    double x = poles[i];
    ck_assert_msg(same(cpu_lgamma(x), INFINITY), "lgamma %g", x);
    ck_assert_msg(same(cpu_trigamma(x), INFINITY), "trigamma %g", x);
    if (x != 0) ck_assert_msg(isnan(cpu_digamma(x)), "digamma %g", x);
  }
  ck_assert(same(cpu_digamma(0.0), -INFINITY));
  ck_assert(same(cpu_digamma(-0.0), INFINITY));
  ck_assert(same(cpu_lgamma(INFINITY), INFINITY));
  ck_assert(same(cpu_lgamma(-INFINITY), INFINITY));
  ck_assert(same(cpu_digamma(INFINITY), INFINITY));
  ck_assert(isnan(cpu_digamma(-INFINITY)));
  ck_assert(same(cpu_trigamma(INFINITY), 0.0));
  ck_assert(same(cpu_trigamma(-INFINITY), INFINITY));
  ck_assert(isnan(cpu_lgamma(NAN)) && isnan(cpu_digamma(NAN)) && isnan(cpu_trigamma(NAN)));
  /* the smallest arguments: ψ(x) ~ -1/x, ψ'(x) ~ 1/x² overflows */
  ck_assert(same(cpu_digamma(0x1p-1074), -INFINITY));
  ck_assert(same(cpu_digamma(1e-300), -1 / 1e-300));
  ck_assert(same(cpu_trigamma(1e-200), INFINITY));
  ck_assert(same(cpu_digamma(1), -0.5772156649015329)); /* -γ */
}
END_TEST

/* A deterministic spread of arguments in (lo, hi). */
static double arg(long i, double lo, double hi) {
  unsigned long long u = (unsigned long long)i * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * ((double)(u >> 11) / 9007199254740992.0);
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(a), fabs(b)); }

/* ψ(x + 1) = ψ(x) + 1/x and ψ'(x + 1) = ψ'(x) - 1/x² where no term
   cancels much; the reflections ψ(1 - x) - ψ(x) = π cot(π x) and
   ψ'(1 - x) + ψ'(x) = π² / sin²(π x); ψ' the slope of ψ, and ψ the slope
   of lgamma (central differences). */
START_TEST(identities) {
  for (long i = 0; i < 20000; i++) {
    double x = arg(i, 2, 40);
    ck_assert_msg(rel(cpu_digamma(x + 1), cpu_digamma(x) + 1 / x) < 4e-16, "digamma recurrence at %.17g", x);
    ck_assert_msg(rel(cpu_trigamma(x + 1), cpu_trigamma(x) - 1 / (x * x)) < 8e-15, "trigamma recurrence at %.17g", x);
    double y = arg(i, -30, 30);
    if (y == floor(y)) continue;
    double t = y - round(y); /* exact: π t rounds as π y would not */
    double c = 3.141592653589793 / tan(3.141592653589793 * t), s = sin(3.141592653589793 * t);
    ck_assert_msg(fabs(cpu_digamma(1 - y) - cpu_digamma(y) - c) < 1e-13 * fmax(1, fabs(c)), "digamma reflection at %.17g",
                  y);
    ck_assert_msg(rel(cpu_trigamma(1 - y) + cpu_trigamma(y), 9.869604401089358 / (s * s)) < 1e-13,
                  "trigamma reflection at %.17g", y);
  }
  for (long i = 0; i < 2000; i++) {
    double x = arg(i, -6, 20), h = 1e-5;
    if (fabs(x - round(x)) < 0.05) continue;
    double dl = (cpu_lgamma(x + h) - cpu_lgamma(x - h)) / (2 * h);
    double dd = (cpu_digamma(x + h) - cpu_digamma(x - h)) / (2 * h);
    ck_assert_msg(fabs(dl - cpu_digamma(x)) < 1e-7 * fmax(1, fabs(dl)), "lgamma' at %.17g: %.17g vs %.17g", x, dl,
                  cpu_digamma(x));
    ck_assert_msg(fabs(dd - cpu_trigamma(x)) < 1e-6 * fmax(1, fabs(dd)), "digamma' at %.17g: %.17g vs %.17g", x, dd,
                  cpu_trigamma(x));
  }
}
END_TEST

/* C's lgamma stores the sign of Γ in the global signgam, a data race when
   blocks run on several threads; lgamma here does not touch it. */
START_TEST(lgamma_leaves_signgam) {
  signgam = 7;
  ck_assert(ulps(cpu_lgamma(-0.5), 1.2655121234846454) <= 4); /* Γ(-1/2) < 0 */
  ck_assert(ulps(cpu_lgamma(-2.5), -0.05624371649767405) <= 4);
  ck_assert_int_eq(signgam, 7);
}
END_TEST

Suite *suite_special(void) {
  Suite *s = suite_create("special");
  TCase *tc = tcase_create("special");
  tcase_add_test(tc, reference_values);
  tcase_add_test(tc, poles_and_infinities);
  tcase_add_test(tc, identities);
  tcase_add_test(tc, lgamma_leaves_signgam);
  suite_add_tcase(s, tc);
  return s;
}
