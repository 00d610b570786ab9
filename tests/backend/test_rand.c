/* test_rand.c: the counter-based generator of `rand n seed`: pinned values
   for seeds 0 and 42 (computed once, also by an independent Python
   implementation of the formula), range, determinism, -0 == +0. */
#include <check.h>
#include <math.h>

#include "../../backend/rand.h"
#include "../../frontend/ir/common.h"
#include "../suites.h"

START_TEST(mix_values) {
  ck_assert_uint_eq(cpu_rand_mix(0), 0);
  ck_assert_uint_eq(cpu_rand_mix(1), UINT64_C(0x5692161d100b05e5));
  ck_assert_uint_eq(cpu_rand_key(0.0), 0);
  ck_assert_uint_eq(cpu_rand_key(-0.0), 0);
  ck_assert_uint_eq(cpu_rand_key(42.0), UINT64_C(0x525ba2e08eadc1b));
}
END_TEST

START_TEST(seed_0) {
  double r[5];
  cpu_rand_fill(r, 5, 0);
  /* exact: the top 53 bits of mix(key + (i+1) * golden) times 2^-53 */
  ck_assert(r[0] == (double)UINT64_C(0x1c4415072f63b9) * 0x1p-53);
  ck_assert(r[1] == (double)UINT64_C(0xdcf13cd54372c) * 0x1p-53);
  ck_assert(r[2] == (double)UINT64_C(0xd88ba3100128) * 0x1p-53);
  ck_assert(r[0] == 0.8833108082136426);
  ck_assert(r[1] == 0.43152799704850997);
  ck_assert(r[2] == 0.026433771592597743);
  ck_assert(r[3] == 0.9708819781538285);
  ck_assert(r[4] == 0.10634669156721244);
}
END_TEST

START_TEST(seed_42) {
  double r[5];
  cpu_rand_fill(r, 5, 42);
  ck_assert(r[0] == (double)UINT64_C(0xbba4251d8b41b) * 0x1p-53);
  ck_assert(r[1] == (double)UINT64_C(0xada04d683de80) * 0x1p-53);
  ck_assert(r[2] == (double)UINT64_C(0x159dd91d31af20) * 0x1p-53);
  ck_assert(r[0] == 0.36648670182842424);
  ck_assert(r[1] == 0.339113635039169);
  ck_assert(r[2] == 0.6755185671040387);
  ck_assert(r[3] == 0.9216104705350268);
  ck_assert(r[4] == 0.4498920746960561);
}
END_TEST

START_TEST(negative_zero_is_zero) {
  double a[8], b[8];
  cpu_rand_fill(a, 8, 0.0);
  cpu_rand_fill(b, 8, -0.0);
  ck_assert(memcmp(a, b, sizeof a) == 0);
}
END_TEST

START_TEST(range_and_determinism) {
  enum { N = 100000 };
  static double a[N], b[N], c[N];
  cpu_rand_fill(a, N, 7);
  cpu_rand_fill(b, N, 7);
  cpu_rand_fill(c, N, 8);
  ck_assert(memcmp(a, b, sizeof a) == 0);
  double lo = 1, hi = 0, sum = 0;
  int same = 0;
  for (int i = 0; i < N; i++) {
    ck_assert(a[i] >= 0 && a[i] < 1);
    lo = fmin(lo, a[i]);
    hi = fmax(hi, a[i]);
    sum += a[i];
    same += a[i] == c[i];
  }
  ck_assert(lo < 1e-3 && hi > 1 - 1e-3);
  ck_assert(fabs(sum / N - 0.5) < 0.01);
  ck_assert_int_lt(same, 3);
  /* counter-based: a prefix of a longer stream, element by element */
  uint64_t key = cpu_rand_key(7);
  for (int i = 0; i < 100; i++) ck_assert(cpu_rand_at(key, (uint64_t)i) == a[i]);
  ck_assert(cpu_rand_at(key, N - 1) == a[N - 1]);
}
END_TEST

START_TEST(odd_seeds) {
  double a[2], b[2];
  cpu_rand_fill(a, 2, NAN);
  cpu_rand_fill(b, 2, INFINITY);
  ck_assert(a[0] >= 0 && a[0] < 1 && b[0] >= 0 && b[0] < 1);
  cpu_rand_fill(a, 2, 0.5);
  ck_assert(a[0] == 0.5635815638241477 && a[1] == 0.4906977721966955);
  cpu_rand_fill(a, 0, 1); /* nothing written, nothing read */
}
END_TEST

Suite *suite_rand(void) {
  Suite *s = suite_create("rand");
  TCase *tc = tcase_create("rand");
  tcase_add_test(tc, mix_values);
  tcase_add_test(tc, seed_0);
  tcase_add_test(tc, seed_42);
  tcase_add_test(tc, negative_zero_is_zero);
  tcase_add_test(tc, range_and_determinism);
  tcase_add_test(tc, odd_seeds);
  suite_add_tcase(s, tc);
  return s;
}
