/* test_scan_map.c: map2 of a scan fused (backend/scan_map.c): the same
   bits as the generic path for scanl and scanr, with and without shifts,
   on either side of the map2, with monoid and kernel operators, at sizes
   around the block; the ordinary errors in the ordinary order. */
#include <check.h>

#include "../../backend/array_ops.h"
#include "../../backend/eval.h"
#include "../../backend/scan_map.h"
#include "../suites.h"
#include "../testlib.h"

static void setup(void) {
  tl_setup();
}

static void teardown(void) {
  tl_teardown();
}

static const char *const cases[] = {
    "map2 (*) (shift1L (scanr (*) 1 A)) (shift1R (scanl (*) 1 A))",
    "map2 (x, y. x - y) (shift1R (scanl (+) 0 A)) B",
    "map2 (x, y. x - y) B (shift1L (scanl (+) 0 A))",
    "map2 (x, y. x / (1 + y * y)) (shift1L (scanr (max) (-inf) A)) B",
    "map2 (x, y. x * y) (scanl (x, y. x * 0.5 + y) 1 A) C",
    "map2 (x, y. x + y) C (scanr (x, y. x - y) 0 A)",
    "map2 (x, y. x * y) (shift1R (scanr (x, y. min y x) inf A)) B",
};

static void same_as_generic(size_t n) {
  tl_run(una_sprintf("let A = map (x. 2 * x - 1) (rand %zu 1)\nlet B = map (x. x + 1) (rand %zu 2)\n"
                     "let C = rand %zu 3\n",
                     n, n, n + 1));
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Value fast = tl_ev(cases[i]);
    Exec generic = tl_exec_paths(false, false);
    Value slow = tl_ev_with(&generic, cases[i]);
    ck_assert_msg(tl_same_bits(fast, slow, false), "n=%zu: %s differs from the generic path", n, cases[i]);
  }
}

START_TEST(same_bits) {
  size_t sizes[] = {1, 2, 255, 256, 257, 513, 5000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) same_as_generic(sizes[i]);
}
END_TEST

START_TEST(qualifies) {
  tl_run("let A = [1, 2, 3]\nlet B = [1, 2, 3]\n");
  Value r;
  ck_assert(cpu_map2_of_scan(&cpu_exec_default, tl_check("map2 (*) (shift1L (scanr (*) 1 A)) B")->body, NULL, &r));
  ck_assert_str_eq(val_to_string(r), "[6, 6, 3]");
  /* a scan of an inline map is fused into the scan instead; a boolean
     result; no scan */
  ck_assert(!cpu_map2_of_scan(&cpu_exec_default, tl_check("map2 (*) (shift1L (scanr (*) 1 (map (x. x) A))) B")->body, NULL, &r));
  ck_assert(!cpu_map2_of_scan(&cpu_exec_default, tl_check("map2 (x, y. x < y) (shift1L (scanr (*) 1 A)) B")->body, NULL, &r));
  ck_assert(!cpu_map2_of_scan(&cpu_exec_default, tl_check("map2 (*) A B")->body, NULL, &r));
}
END_TEST

static const char *err(const char *text) {
  FeTry t;
  Def *d = tl_check(text);
  if (fe_try(&t)) {
    cpu_call(d, NULL);
    fe_untry(&t);
    return "";
  }
  return fe_error_text(t.err);
}

START_TEST(errors_in_order) {
  /* the scan is n + 1 long without a shift */
  ck_assert_str_eq(err("map2 (+) (scanl (+) 0 [1, 2]) [1, 2]"), "t.una:1:1: error: map2: lengths 3 and 2 differ");
  ck_assert_str_eq(err("map2 (+) [1, 2] (shift1L (scanr (+) 0 [1, 2, 3]))"),
                   "t.una:1:1: error: map2: lengths 2 and 3 differ");
  /* the first array's error comes first, then the scan's input's */
  ck_assert_str_eq(err("map2 (+) (iota (-1)) (scanl (+) 0 (iota (-2)))"),
                   "t.una:1:11: error: iota: size must be a non-negative integer, found -1");
  ck_assert_str_eq(err("map2 (+) (scanl (+) 0 (iota (-2))) (iota (-1))"),
                   "t.una:1:24: error: iota: size must be a non-negative integer, found -2");
}
END_TEST

Suite *suite_scan_map(void) {
  Suite *s = suite_create("scan_map");
  TCase *tc = tcase_create("scan_map");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, same_bits);
  tcase_add_test(tc, qualifies);
  tcase_add_test(tc, errors_in_order);
  suite_add_tcase(s, tc);
  return s;
}
