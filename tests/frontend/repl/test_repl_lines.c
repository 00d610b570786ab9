/* test_repl_lines.c: the REPL's line discipline (frontend/repl/repl_lines.h)
   without a terminal: which lines make which inputs. */
#include <check.h>

#include "../../../frontend/ir/common.h"
#include "../../../frontend/repl/repl_lines.h"
#include "../../suites.h"

/* The inputs that lines (separated by '|', NULL at the end) make, each
   in brackets, and the errors, in braces. */
static char *inputs(const char *const *lines, int n) {
  ReplLines r = {0};
  char *out = "";
  for (int i = 0; i <= n; i++) {
    const char *error;
    char *in = repl_lines_take(&r, i < n ? lines[i] : NULL, &error);
    if (error) out = una_sprintf("%s{%s}", out, error);
    if (in) out = una_sprintf("%s[%s]", out, in);
  }
  return out;
}

#define INPUTS(...)                                                                                \
  inputs((const char *const[]){__VA_ARGS__}, (int)(sizeof((const char *const[]){__VA_ARGS__}) /    \
                                                   sizeof(const char *)))

START_TEST(lines_to_inputs) {
  /* a complete item runs at once; an unfinished one waits */
  ck_assert_str_eq(INPUTS("1 + 2", "def f (x: R) : R =", "  x * 2", "f 3"), "[1 + 2\n][def f (x: R) : R =\n  x * 2\n][f 3\n]");
  ck_assert_str_eq(INPUTS("[1,", "2]"), "[[1,\n2]\n]");
  /* a blank line runs an unfinished input (its error says what is
     missing); blank lines alone run nothing */
  ck_assert_str_eq(INPUTS("", "1 +", "", "  "), "[1 +\n]");
  /* the end of input runs what is left */
  ck_assert_str_eq(INPUTS("(1 +"), "[(1 +\n]");
  /* :{ ... :} is one input, blank lines and complete items included */
  ck_assert_str_eq(INPUTS(":{", "1", "", "2", ":}", "3"), "[1\n\n2\n][3\n]");
  ck_assert_str_eq(INPUTS(" :{ ", ":}"), "");
  /* a block left open runs at the end */
  ck_assert_str_eq(INPUTS(":{", "1"), "[1\n]");
  /* a stray :} is an error of its own; inside an input it is text (here
     text that cannot continue it: the input runs, and fails to parse) */
  ck_assert_str_eq(INPUTS(":}", "1"), "{':}' ends no block (':{' starts one)}[1\n]");
  ck_assert_str_eq(INPUTS("[1,", ":}", "2]"), "[[1,\n:}\n][2]\n]");
}
END_TEST

START_TEST(reset_and_pending) {
  ReplLines r = {0};
  const char *error;
  ck_assert(!repl_lines_pending(&r));
  ck_assert_ptr_null(repl_lines_take(&r, "def g (x: R) : R =", &error));
  ck_assert(repl_lines_pending(&r));
  repl_lines_reset(&r); /* Ctrl-C */
  ck_assert(!repl_lines_pending(&r));
  ck_assert_str_eq(repl_lines_take(&r, "2", &error), "2\n");
  ck_assert_ptr_null(repl_lines_take(&r, ":{", &error));
  ck_assert(repl_lines_pending(&r));
}
END_TEST

Suite *suite_repl_lines(void) {
  Suite *s = suite_create("repl_lines");
  TCase *tc = tcase_create("lines");
  tcase_add_test(tc, lines_to_inputs);
  tcase_add_test(tc, reset_and_pending);
  suite_add_tcase(s, tc);
  return s;
}
