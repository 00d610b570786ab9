/* test_outer.c: the outer products of backend/outer.c: which maps the
   plan takes for one (its print), that they run there only on the CPU
   with the fast paths on, that their bits are those of the map as
   written (signed zeros, infinities, NaN, both operand orders, more rows
   than one chunk), their rows one buffer, and that an empty operand is
   left to the map as written. */
#include <check.h>
#include <string.h>

#include "../../backend/eval.h"
#include "../../backend/outer.h"
#include "../suites.h"
#include "../testlib.h"

static void setup(void) { tl_setup(); }
static void teardown(void) { tl_teardown(); }

static const char *const data =
    "let u = [1.5, -0, 0, -2, inf, -inf, nan, 1e300, 5e-324, 3]\n"
    "let v = [0, -0, 2, -1e10, nan, 7, inf, 1e10, -3]\n"
    "let U = map (i. sin (i * 7)) (iota 400)\n"
    "let V = map (i. cos (i * 3)) (iota 450)\n";

/* text evaluated with the fast paths (one outer product made) and as
   written (kernels off): the same bits. */
static Value outer_vs_written(const char *text) {
  size_t before = cpu_outer_products();
  Value o = tl_ev(text);
  ck_assert_msg(cpu_outer_products() == before + 1, "%s: the outer product did not run", text);
  Exec written = tl_exec_paths(true, false);
  Value w = tl_ev_with(&written, text);
  ck_assert_int_eq(cpu_outer_products(), before + 1);
  ck_assert_msg(tl_same_bits(o, w, true), "%s: the outer product and the map as written differ", text);
  return o;
}

START_TEST(recognized_and_printed) {
  tl_run(data);
  char *out = tl_capture(tl_session, ":plan map (c. map (b. c * b) v) u\n", true).out;
  ck_assert_ptr_nonnull(strstr(out, "outer product, element (i, j) = L0[i] * L1[j]"));
  out = tl_capture(tl_session, ":plan map (c. map (b. b * c) v) u\n", true).out;
  ck_assert_ptr_nonnull(strstr(out, "outer product, element (i, j) = L1[j] * L0[i]"));
  /* not an outer product: a sum, the vector not a variable, the element
     multiplied by itself */
  const char *not[] = {"map (c. map (b. c + b) v) u", "map (c. map (b. c * b) (map (y. y * c) v)) u",
                       "map (c. map (b. b * b) v) u"};
  for (int i = 0; i < 3; i++) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, ":plan %s\n", not[i]);
    ck_assert_msg(!strstr(tl_capture(tl_session, cmd, true).out, "outer product"), "%s", not[i]);
  }
}
END_TEST

START_TEST(same_bits_as_the_map_as_written) {
  tl_run(data);
  outer_vs_written("map (c. map (b. c * b) v) u");
  outer_vs_written("map (c. map (b. b * c) v) u");
  /* 180,000 elements: chunks of rows on the threads */
  Value big = outer_vs_written("map (c. map (b. c * b) V) U");
  const Array *a = big.u.a;
  ck_assert(a->boxed && a->len == 400);
  for (size_t i = 0; i < a->len; i++) ck_assert_ptr_eq(a->v[i].u.a->r, a->v[0].u.a->r + i * 450);
  /* a gradient's outer product: grad of a matrix-vector product's sum of
     squares with respect to the matrix */
  tl_run("def f (m: [[R]]) (x: [R]) : R = sum (map (h. h * h) (matvec m x))\n");
  size_t before = cpu_outer_products();
  Value g = tl_ev("(grad f wrt m) [[1, 2], [3, 4]] [1, -1]");
  ck_assert_str_eq(val_to_string(g), "[[-2, 2], [-2, 2]]");
  ck_assert_int_eq(cpu_outer_products(), before + 1);
}
END_TEST

START_TEST(empty_and_slow_paths_as_written) {
  tl_run(data);
  size_t before = cpu_outer_products();
  ck_assert_str_eq(val_to_string(tl_ev("map (c. map (b. c * b) v) ([] : [R])")), "[]");
  ck_assert_str_eq(val_to_string(tl_ev("map (c. map (b. c * b) ([] : [R])) [1, 2]")), "[[], []]");
  Exec off = tl_exec_paths(true, false);
  tl_ev_with(&off, "map (c. map (b. c * b) v) u");
  ck_assert_int_eq(cpu_outer_products(), before);
}
END_TEST

Suite *suite_outer(void) {
  Suite *s = suite_create("outer");
  TCase *tc = tcase_create("outer");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, recognized_and_printed);
  tcase_add_test(tc, same_bits_as_the_map_as_written);
  tcase_add_test(tc, empty_and_slow_paths_as_written);
  suite_add_tcase(s, tc);
  return s;
}
