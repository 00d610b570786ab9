/* test_value.c: value constructors, printing (LANGUAGE.md section 7,
   large arrays summarised too), deep equality, views and checked
   allocation. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "../../backend/value.h"
#include "../suites.h"

static Value reals(int n, const double *xs) {
  Array *a = val_new_real_array((size_t)n, fe_nospan);
  for (int i = 0; i < n; i++) a->r[i] = xs[i];
  return val_array(a);
}

static Value boxed(int n, const Value *xs) {
  Array *a = val_new_boxed_array((size_t)n, fe_nospan);
  for (int i = 0; i < n; i++) a->v[i] = xs[i];
  return val_array(a);
}

static void expect_print(Value v, const char *want) {
  ck_assert_str_eq(val_to_string(v), want);
}

START_TEST(print_reals) {
  expect_print(val_real(24), "24");
  expect_print(val_real(0.1), "0.1");
  expect_print(val_real(-1.5), "-1.5");
  expect_print(val_real(1e-300), "1e-300");
  expect_print(val_real(-1.5e-300), "-1.5e-300");
  expect_print(val_real(-0.0), "-0");
  expect_print(val_real(0.0), "0");
  expect_print(val_real(INFINITY), "inf");
  expect_print(val_real(-INFINITY), "-inf");
  expect_print(val_real(NAN), "nan");
  expect_print(val_real(-NAN), "nan");
  expect_print(val_real(1.0 / 3), "0.3333333333333333");
  expect_print(val_real(0.1 + 0.2), "0.30000000000000004");
  expect_print(val_real(1e15), "1e+15");
  expect_print(val_real(123456789012345), "123456789012345");
  expect_print(val_real(1.7976931348623157e308), "1.7976931348623157e+308");
  expect_print(val_real(2.5e-5), "2.5e-05");
}
END_TEST

START_TEST(print_bools) {
  expect_print(val_bool(true), "true");
  expect_print(val_bool(false), "false");
}
END_TEST

START_TEST(print_arrays_and_tuples) {
  double xs[] = {1, 2, 3};
  expect_print(reals(3, xs), "[1, 2, 3]");
  expect_print(reals(0, xs), "[]");
  expect_print(boxed(0, NULL), "[]");
  Value pair[] = {val_real(1), reals(2, xs + 1)};
  expect_print(val_tuple(2, pair), "(1, [2, 3])");
  Value bs[] = {val_bool(true), val_bool(false)};
  expect_print(boxed(2, bs), "[true, false]");
  /* [[1], [], [2, 3]] */
  Value rows[] = {reals(1, xs), reals(0, xs), reals(2, xs + 1)};
  expect_print(boxed(3, rows), "[[1], [], [2, 3]]");
  /* (true, (0.5, [inf])) */
  double inf1[] = {INFINITY};
  Value inner[] = {val_real(0.5), reals(1, inf1)};
  Value outer[] = {val_bool(true), val_tuple(2, inner)};
  expect_print(val_tuple(2, outer), "(true, (0.5, [inf]))");
  /* [(1, [2]), (3, [])] */
  Value t1[] = {val_real(1), reals(1, xs + 1)};
  Value t2[] = {val_real(3), reals(0, xs)};
  Value ts[] = {val_tuple(2, t1), val_tuple(2, t2)};
  expect_print(boxed(2, ts), "[(1, [2]), (3, [])]");
  /* a 3-tuple with nested boolean arrays */
  Value bb[] = {boxed(1, bs)};
  Value t3[] = {boxed(1, bb), val_real(-0.0), val_bool(false)};
  expect_print(val_tuple(3, t3), "([[true]], -0, false)");
}
END_TEST

START_TEST(print_to_file) {
  char path[] = "/tmp/una_test_value_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w+");
  double xs[] = {0.5, -2};
  Value t[] = {reals(2, xs), val_bool(true)};
  val_print(f, val_tuple(2, t));
  fflush(f);
  rewind(f);
  char buf[64] = {0};
  ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
  ck_assert_str_eq(buf, "([0.5, -2], true)");
  fclose(f);
  remove(path);
}
END_TEST

/* [base, base + 1, ..., base + n - 1] */
static Value iota_from(size_t n, double base) {
  Array *a = val_new_real_array(n, fe_nospan);
  for (size_t i = 0; i < n; i++) a->r[i] = base + (double)i;
  return val_array(a);
}

/* rows arrays of cols reals: row i is [i * cols, ..., i * cols + cols - 1]. */
static Value matrix(size_t rows, size_t cols) {
  Array *m = val_new_boxed_array(rows, fe_nospan);
  for (size_t i = 0; i < rows; i++) m->v[i] = iota_from(cols, (double)(i * cols));
  return val_array(m);
}

static Value fill(size_t n, Value x) {
  Array *a = val_new_boxed_array(n, fe_nospan);
  for (size_t i = 0; i < n; i++) a->v[i] = x;
  return val_array(a);
}

/* As the REPL and scripts print: summarised, and with --print-all. */
static const char *shown(Value v) { return val_to_string_opts(v, (ValPrintOpts){0}); }
static const char *shown_all(Value v) { return val_to_string_opts(v, (ValPrintOpts){.all = true}); }

START_TEST(print_summarised) {
  /* more than 10,000 scalars: the first and last three, as NumPy */
  ck_assert_str_eq(shown(iota_from(10001, 0)), "[0, 1, 2, ..., 9998, 9999, 10000]");
  ck_assert_str_eq(shown(iota_from(20000, 0.5)), "[0.5, 1.5, 2.5, ..., 19997.5, 19998.5, 19999.5]");
  /* 10,000 exactly: in full; --print-all: always in full */
  const char *full = val_to_string(iota_from(10000, 0));
  ck_assert_str_eq(shown(iota_from(10000, 0)), full);
  ck_assert_ptr_null(strstr(full, "..."));
  ck_assert_uint_eq(strlen(full), 58890);
  ck_assert_str_eq(shown_all(iota_from(10001, 0)), val_to_string(iota_from(10001, 0)));
  ck_assert_str_eq(shown_all(matrix(200, 100)), val_to_string(matrix(200, 100)));
  /* small arrays print as always */
  double xs[] = {1, 2, 3};
  ck_assert_str_eq(shown(reals(3, xs)), "[1, 2, 3]");
  ck_assert_str_eq(shown(val_real(0.5)), "0.5");
  /* 200 x 100: every level of more than 6 elements is cut */
  ck_assert_str_eq(shown(matrix(200, 100)),
                   "[[0, 1, 2, ..., 97, 98, 99], [100, 101, 102, ..., 197, 198, 199], "
                   "[200, 201, 202, ..., 297, 298, 299], ..., "
                   "[19700, 19701, 19702, ..., 19797, 19798, 19799], "
                   "[19800, 19801, 19802, ..., 19897, 19898, 19899], "
                   "[19900, 19901, 19902, ..., 19997, 19998, 19999]]");
  /* rows of 5 are printed whole; 2 rows of 5001 both shown, each cut */
  ck_assert_str_eq(shown(matrix(2001, 5)),
                   "[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14], ..., "
                   "[9990, 9991, 9992, 9993, 9994], [9995, 9996, 9997, 9998, 9999], "
                   "[10000, 10001, 10002, 10003, 10004]]");
  ck_assert_str_eq(shown(matrix(2, 5001)),
                   "[[0, 1, 2, ..., 4998, 4999, 5000], [5001, 5002, 5003, ..., 9999, 10000, 10001]]");
  /* every level counts: 10,001 rows of one, or 7 elements at the top */
  ck_assert_str_eq(shown(matrix(10001, 1)), "[[0], [1], [2], ..., [9998], [9999], [10000]]");
  ck_assert_str_eq(shown(matrix(7, 1429)),
                   "[[0, 1, 2, ..., 1426, 1427, 1428], [1429, 1430, 1431, ..., 2855, 2856, 2857], "
                   "[2858, 2859, 2860, ..., 4284, 4285, 4286], ..., "
                   "[5716, 5717, 5718, ..., 7142, 7143, 7144], [7145, 7146, 7147, ..., 8571, 8572, 8573], "
                   "[8574, 8575, 8576, ..., 10000, 10001, 10002]]");
  ck_assert_str_eq(shown(matrix(100, 100)), val_to_string(matrix(100, 100))); /* 10,000 */
  /* each array inside a tuple is judged by itself */
  Value two[] = {iota_from(6000, 0), iota_from(6000, 0)};
  ck_assert_str_eq(shown(val_tuple(2, two)), val_to_string(val_tuple(2, two)));
  Value big_small[] = {iota_from(10001, 0), iota_from(7, 0)};
  ck_assert_str_eq(shown(val_tuple(2, big_small)), "([0, 1, 2, ..., 9998, 9999, 10000], [0, 1, 2, 3, 4, 5, 6])");
  /* ... but an array of tuples counts all of them */
  Value pair = val_tuple(2, two);
  ck_assert_str_eq(shown(fill(1, pair)),
                   "[([0, 1, 2, ..., 5997, 5998, 5999], [0, 1, 2, ..., 5997, 5998, 5999])]");
  ck_assert_str_eq(shown(fill(5001, val_tuple(2, (Value[]){val_real(1), val_bool(true)}))),
                   "[(1, true), (1, true), (1, true), ..., (1, true), (1, true), (1, true)]");
  /* booleans count, and an empty array counts as one */
  ck_assert_str_eq(shown(fill(10001, val_bool(false))),
                   "[false, false, false, ..., false, false, false]");
  ck_assert_str_eq(shown(fill(10001, reals(0, xs))), "[[], [], [], ..., [], [], []]");
  ck_assert_str_eq(shown(fill(10000, reals(0, xs))), val_to_string(fill(10000, reals(0, xs))));
  /* to a FILE as to a string */
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  val_print_opts(f, matrix(10001, 1), (ValPrintOpts){0});
  fflush(f);
  rewind(f);
  char buf[128] = {0};
  ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
  ck_assert_str_eq(buf, "[[0], [1], [2], ..., [9998], [9999], [10000]]");
  fclose(f);
}
END_TEST

START_TEST(equality) {
  double xs[] = {1, 2, 3}, ys[] = {1, 2, 4};
  ck_assert(val_equal(val_real(1), val_real(1)));
  ck_assert(!val_equal(val_real(NAN), val_real(NAN)));
  ck_assert(val_equal(val_real(0.0), val_real(-0.0)));
  ck_assert(!val_equal(val_real(1), val_bool(true)));
  ck_assert(val_equal(val_bool(false), val_bool(false)));
  ck_assert(val_equal(reals(3, xs), reals(3, xs)));
  ck_assert(!val_equal(reals(3, xs), reals(3, ys)));
  ck_assert(!val_equal(reals(3, xs), reals(2, xs)));
  Value a[] = {val_real(1), reals(2, xs)}, b[] = {val_real(1), reals(2, xs)}, c[] = {val_real(1), reals(2, ys + 1)};
  ck_assert(val_equal(val_tuple(2, a), val_tuple(2, b)));
  ck_assert(!val_equal(val_tuple(2, a), val_tuple(2, c)));
  Value rows1[] = {val_tuple(2, a)}, rows2[] = {val_tuple(2, c)};
  ck_assert(val_equal(boxed(1, rows1), boxed(1, rows1)));
  ck_assert(!val_equal(boxed(1, rows1), boxed(1, rows2)));
}
END_TEST

START_TEST(views) {
  double xs[] = {1, 2, 3, 4};
  Array *a = reals(4, xs).u.a;
  Array *l = val_view(a, 1, 3), *r = val_view(a, 0, 3);
  expect_print(val_array(l), "[2, 3, 4]");
  expect_print(val_array(r), "[1, 2, 3]");
  ck_assert_ptr_eq(l->r, a->r + 1); /* no copy */
  expect_print(val_array(val_view(l, 1, 2)), "[3, 4]");
  expect_print(val_array(val_view(a, 4, 0)), "[]");
  Value bs[] = {val_bool(true), val_bool(false)};
  expect_print(val_array(val_view(boxed(2, bs).u.a, 1, 1)), "[false]");
}
END_TEST

START_TEST(helpers) {
  Array *a = val_new_array_of(fe_ty_real(), 2, fe_nospan);
  ck_assert(!a->boxed);
  val_array_set(a, 0, val_real(5));
  val_array_set(a, 1, val_real(6));
  ck_assert(val_equal(val_array_get(a, 1), val_real(6)));
  Array *b = val_new_array_of(fe_ty_bool(), 2, fe_nospan);
  ck_assert(b->boxed);
  val_array_set(b, 0, val_bool(true));
  ck_assert(val_equal(val_array_get(b, 0), val_bool(true)));
  Array *c = val_new_array_of(fe_ty_array(fe_ty_real()), 0, fe_nospan);
  ck_assert(c->boxed && c->len == 0 && c->v);
  Array *e = val_new_real_array(0, fe_nospan);
  ck_assert(e->r != NULL); /* never NULL, even when empty */
}
END_TEST

static const char *alloc_error(size_t n, bool boxed_array) {
  FeTry t;
  if (fe_try(&t)) {
    if (boxed_array) val_new_boxed_array(n, fe_span("f.una", 2, 3));
    else val_new_real_array(n, fe_span("f.una", 2, 3));
    fe_untry(&t);
    return NULL;
  }
  return fe_error_text(t.err);
}

START_TEST(allocation_too_large) {
  ck_assert_str_eq(alloc_error((size_t)1e15, false), "f.una:2:3: error: cannot allocate 1e+15 elements (8e+15 bytes)");
  ck_assert_str_eq(alloc_error((size_t)1e15, true), "f.una:2:3: error: cannot allocate 1e+15 elements (1.6e+16 bytes)");
  /* n * size overflows size_t */
  const char *m = alloc_error(SIZE_MAX / 4, false);
  ck_assert_ptr_nonnull(m);
  ck_assert(strstr(m, "cannot allocate 4.611686018427388e+18 elements") != NULL);
  ck_assert_ptr_null(alloc_error(1000, false));
}
END_TEST

Suite *suite_value(void) {
  Suite *s = suite_create("value");
  TCase *tc = tcase_create("value");
  tcase_add_test(tc, print_reals);
  tcase_add_test(tc, print_bools);
  tcase_add_test(tc, print_arrays_and_tuples);
  tcase_add_test(tc, print_to_file);
  tcase_add_test(tc, print_summarised);
  tcase_add_test(tc, equality);
  tcase_add_test(tc, views);
  tcase_add_test(tc, helpers);
  tcase_add_test(tc, allocation_too_large);
  suite_add_tcase(s, tc);
  return s;
}
