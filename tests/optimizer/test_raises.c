/* Tests of optimizer/raises.c: a dead value kept for its errors reduced to
   what raises them. A gradient keeps its primal only for the primal's
   errors; reduced, it must still raise each of them, word for word, and
   first when there are several; where nothing raises, the gradient's
   values are those of the unreduced program. */
#include <check.h>
#include <string.h>

#include "../../frontend/ir/term_print.h"
#include "../../optimizer/raises.h"
#include "../suites.h"
#include "../testlib.h"

static const char *const mlp =
    "def f (w1: [[R]]) (b1: [R]) (w2: [[R]]) (b2: [R]) (x: [[R]]) : R =\n"
    "  sum (map (xi. let hid = map2 (z, b. tanh (z + b)) (matvec w1 xi) b1 in\n"
    "               sum (map2 (z, b. (z + b) * (z + b)) (matvec w2 hid) b2)) x)\n"
    "def g (w1: [[R]]) (b1: [R]) (w2: [[R]]) (b2: [R]) (x: [[R]]) = (grad f wrt w1 b1 w2 b2) w1 b1 w2 b2 x\n";

/* The first line of the error that running text in s printed ("" when it
   printed none). */
static char *error_line(Session *s, const char *text) {
  TlRun r = tl_capture(s, text, false);
  char *e = strstr(r.err, "error: ");
  if (!e) return "";
  char *start = e;
  while (start > r.err && start[-1] != '\n') start--;
  char *end = strchr(e, '\n');
  return end ? strndup(start, (size_t)(end - start)) : start;
}

/* Each bad input: the primal's error, and the gradient's, the same. The
   errors come from the prelude's matvec (a row of another length than
   the vector), from map2 (b1 or b2 of another length than the products),
   and, where two are wrong, the one the primal meets first. */
START_TEST(gradient_raises_the_primals_errors) {
  Session *s = tl_session_with(mlp);
  const char *bad[] = {
      /* a row of w1 too short */
      "[[0.1, 0.2], [0.3]] [0.1, -0.2] [[0.5, -0.6]] [0.3] [[1, 2], [3, 4]]",
      /* b1 too short */
      "[[0.1, 0.2], [0.3, 0.4]] [0.1] [[0.5, -0.6]] [0.3] [[1, 2], [3, 4]]",
      /* a row of w2 too short (against hid, of w1's length) */
      "[[0.1, 0.2], [0.3, 0.4]] [0.1, 0.2] [[0.5]] [0.3] [[1, 2], [3, 4]]",
      /* b2 too long */
      "[[0.1, 0.2], [0.3, 0.4]] [0.1, 0.2] [[0.5, 0.6]] [0.3, 1] [[1, 2], [3, 4]]",
      /* the second example too short */
      "[[0.1, 0.2], [0.3, 0.4]] [0.1, 0.2] [[0.5, 0.6]] [0.3] [[1, 2], [3]]",
      /* a row of w1 and b1: the row first */
      "[[0.1, 0.2], [0.3]] [0.1] [[0.5, 0.6]] [0.3] [[1, 2], [3, 4]]",
      /* b1 and a row of w2: b1 first */
      "[[0.1, 0.2], [0.3, 0.4]] [0.1] [[0.5]] [0.3] [[1, 2], [3, 4]]",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char pf[512], pg[512];
    snprintf(pf, sizeof pf, "f %s", bad[i]);
    snprintf(pg, sizeof pg, "g %s", bad[i]);
    char *ef = error_line(s, pf), *eg = error_line(s, pg);
    ck_assert_msg(strstr(ef, "error: map2: lengths") != NULL, "%zu: %s", i, ef);
    ck_assert_msg(strcmp(ef, eg) == 0, "%zu: primal '%s', gradient '%s'", i, ef, eg);
  }
}
END_TEST

/* A matrix whose rows are known to be one buffer of rows of one length
   (value.h: rows_flat, remembered by a matrix product) is checked once
   for all its rows (backend/map_checks.c): the error is still the first
   row's, as the primal's. */
START_TEST(regular_rows_checked_once) {
  Session *s = tl_session_with(mlp);
  /* rows made by a map lie in one buffer; the product remembers that */
  tl_run_in(s, "let w = map (i. map (j. 0.1 * (2 * i + j + 1)) (iota 2)) (iota 3)\nlet v = matvec w [1, 1]\n");
  /* b1 too short as well: the rows' error comes first */
  char *ef = error_line(s, "f w [0.1, 0.2] [[0.5, 0.6, 0.7]] [0.3] [[1, 2, 3]]");
  char *eg = error_line(s, "g w [0.1, 0.2] [[0.5, 0.6, 0.7]] [0.3] [[1, 2, 3]]");
  ck_assert_msg(strstr(ef, "error: map2: lengths 2 and 3 differ") != NULL, "%s", ef);
  ck_assert_str_eq(ef, eg);
  TlRun r = tl_capture(s, "g w [0.1, 0.2, 0.3] [[0.5, 0.6, 0.7]] [0.3] [[1, 2], [3, 4]]\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
}
END_TEST

/* Good inputs: values recorded from the gradient before the reduction
   (the primal's dead copy computed in full), and empty ones. */
START_TEST(gradient_values_unchanged) {
  Session *s = tl_session_with(mlp);
  TlRun r = tl_capture(s,
                       "g [[0.1, 0.2], [0.3, -0.4]] [0.1, -0.2] [[0.5, -0.6]] [0.3] [[1, 2], [3, 4], [5, -6]]\n"
                       "g [[0.1, 0.2]] [0.1] [[0.5]] [0.3] ([] : [[R]])\n",
                       true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, "([[-0.30834414552813644, 5.1482836596285235], [-2.7108110574913327, -4.108318382154827]], "
                          "[0.6082921937615431, -1.3775408397905387], [[3.5217539162252467, -3.9023275670718696]], "
                          "[3.0199194942542236])\n"
                          "([[0, 0]], [0], [[0]], [0])\n");
}
END_TEST

/* The reduced terms themselves: nothing multiplied, gathers kept, and a
   term that cannot raise has no errors. */
START_TEST(reduced_forms) {
  Def *d = tl_check("let v = [1, 2, 3] in map (i. v[i] * exp v[i]) [0, 1]");
  const Term *m = d->body->kids[1];
  ck_assert_str_eq(fe_term_str(opt_errors_of(m)), "map (i. v[i]) [0, 1]");
  d = tl_check("let v = [1, 2, 3] in map (i. exp i) v");
  ck_assert_ptr_null(opt_errors_of(d->body->kids[1]));
  /* a sum over a map2 raises only the map2's length check, kept as
     written (the plan computes nothing for it) */
  d = tl_check("let v = [1, 2, 3] in let u = [1, 2] in reduce (+) 0 (map2 (*) u v) + 1");
  ck_assert_str_eq(fe_term_str(opt_errors_of(d->body->kids[1]->kids[1])), "map2 (*) u v");
  /* idempotent: reducing the reduced form gives the same term */
  d = tl_check("let w = [[1, 2], [3, 4]] in let x = [1, 1] in map (r. reduce (+) 0 (map2 (*) r x)) w");
  Term *e = opt_errors_of(d->body->kids[1]->kids[1]);
  ck_assert_str_eq(fe_term_str(e), "map (r. let c = map2 (*) r x in 0) w");
  ck_assert_str_eq(fe_term_str(opt_errors_of(e)), fe_term_str(e));
}
END_TEST

Suite *suite_raises(void) {
  Suite *s = suite_create("raises");
  TCase *tc = tcase_create("raises");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, gradient_raises_the_primals_errors);
  tcase_add_test(tc, gradient_values_unchanged);
  tcase_add_test(tc, regular_rows_checked_once);
  tcase_add_test(tc, reduced_forms);
  suite_add_tcase(s, tc);
  return s;
}
