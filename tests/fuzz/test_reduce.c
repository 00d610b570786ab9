/* test_reduce.c: the fuzzer's test-case reducer (tests/fuzz/reduce.h) on
   predicates whose smallest failing inputs are known. */
#include <check.h>
#include <string.h>

#include "../../frontend/ir/common.h"
#include "../suites.h"
#include "reduce.h"

/* Fails when the text holds "bad" and its parentheses balance. */
static bool has_bad(const char *text, size_t n, void *ud) {
  (*(int *)ud)++;
  char *t = una_strndup(text, n);
  int depth = 0;
  for (char *p = t; *p; p++) {
    if (*p == '(') depth++;
    if (*p == ')' && --depth < 0) return false;
  }
  return depth == 0 && strstr(t, "bad") != NULL;
}

START_TEST(to_the_culprit) {
  const char *text = "def h (x: R) : R =\n  x * 2\ndef f (x: R) : R =\n  (sin (1 + (bad x) * 3)) + h x\n";
  int calls = 0;
  size_t n;
  FzReduceStats st;
  char *r = fz_reduce(text, strlen(text), has_bad, &calls, 1000, 10, &n, &st);
  /* the groups around it replaced by the group inside, the rest deleted */
  ck_assert_str_eq(una_strndup(r, n), "(bad x) ");
  ck_assert_int_eq(st.tries, calls);
  ck_assert(st.from == strlen(text) && st.to == n);
}
END_TEST

/* Fails for any text: reduced to nothing. Passing for every candidate:
   the input itself. */
static bool always(const char *text, size_t n, void *ud) { return *(bool *)ud; }

START_TEST(edges) {
  bool yes = true, no = false;
  size_t n;
  char *r = fz_reduce("a (b) c\n", 8, always, &yes, 100, 10, &n, NULL);
  ck_assert_int_eq(n, 0);
  r = fz_reduce("a (b) c\n", 8, always, &no, 100, 10, &n, NULL);
  ck_assert_str_eq(una_strndup(r, n), "a (b) c\n");
  /* the budget of tries is kept */
  FzReduceStats st;
  fz_reduce("a b c d e f g h i j k l m n o p\n", 32, always, &no, 5, 10, &n, &st);
  ck_assert_int_eq(st.tries, 5);
}
END_TEST

Suite *suite_fuzz_reduce(void) {
  Suite *s = suite_create("fuzz_reduce");
  TCase *tc = tcase_create("reduce");
  tcase_add_test(tc, to_the_culprit);
  tcase_add_test(tc, edges);
  suite_add_tcase(s, tc);
  return s;
}
