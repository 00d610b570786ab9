/* test_blas.c: the matrix products run with BLAS (backend/blas.c): that
   the plan's products run there, and only on the CPU with the fast paths
   on (not under the cost meter, nor with the kernels off); that they agree
   with the map as written (the generic path) within rounding, exactly on
   small integers; that the bits do not depend on the number of threads;
   that rows in one buffer and rows gathered from separate arrays give the
   same values; and that what the map as written would raise (rows of other
   lengths) or does differently (empty dimensions) is left to it, with its
   errors. The plan's recognition is tested in tests/backend/plan. */
#include <check.h>
#include <math.h>

#include "../../backend/blas.h"
#include "../../backend/eval.h"
#include "../../backend/metered.h"
#include "../suites.h"
#include "../testlib.h"

static void setup(void) { tl_setup(); }
static void teardown(void) { tl_teardown(); }

/* Matrices of reals of every sign and magnitude up to 1 (sin, cos of
   integers): M 257 x 300, X 300, B 300 x 190, T 1030 x 200 (more rows than
   one chunk), V 200; MT and BT have their rows in one buffer (transpose). */
static const char *const data =
    "let M = map (i. map (j. sin (i * 7 + j * 3)) (iota 300)) (iota 257)\n"
    "let X = map (i. cos i) (iota 300)\n"
    "let B = map (i. map (j. cos (i * 5 - j)) (iota 190)) (iota 300)\n"
    "let T = map (i. map (j. sin (i - 2 * j)) (iota 200)) (iota 1030)\n"
    "let V = map (i. sin (3 * i)) (iota 200)\n"
    "let MT = transpose (transpose M)\n"
    "let BT = transpose B\n";

/* The largest |u - g| over the reals of u and g (arrays of reals, or of
   such arrays), of the same shapes. */
static double max_diff(Value u, Value g) {
  ck_assert(u.kind == V_ARRAY && g.kind == V_ARRAY && u.u.a->len == g.u.a->len);
  double d = 0;
  for (size_t i = 0; i < u.u.a->len; i++) {
    Value a = val_array_get(u.u.a, i), b = val_array_get(g.u.a, i);
    d = fmax(d, a.kind == V_REAL ? fabs(a.u.r - b.u.r) : max_diff(a, b));
  }
  return d;
}

/* text evaluated with BLAS (the default context) and as written (kernels
   off: no BLAS); checks that BLAS ran once and the values agree within
   tol (0: the same bits). */
static Value blas_vs_written(const char *text, double tol) {
  size_t before = cpu_blas_products();
  Value u = tl_ev(text);
  ck_assert_msg(cpu_blas_products() == before + (cpu_blas_available() ? 1 : 0), "%s: BLAS did not run", text);
  Exec written = tl_exec_paths(true, false);
  Value g = tl_ev_with(&written, text);
  ck_assert_int_eq(cpu_blas_products(), before + (cpu_blas_available() ? 1 : 0));
  double d = max_diff(u, g);
  ck_assert_msg(tol == 0 ? tl_same_bits(u, g, true) : d <= tol, "%s: BLAS and the map as written differ by %g", text, d);
  return u;
}

START_TEST(agrees_with_the_map_as_written) {
  tl_run(data);
  /* |element| <= k (the terms are at most 1): rounding of k terms */
  blas_vs_written("matvec M X", 300 * 300 * 0x1p-52);
  blas_vs_written("matvec T V", 200 * 200 * 0x1p-52);
  blas_vs_written("matmul M B", 300 * 300 * 0x1p-52);
  blas_vs_written("map (r. map (c. reduce (+) 0 (map2 (*) r c)) BT) M", 300 * 300 * 0x1p-52);
  blas_vs_written("map (r. matvec BT r) MT", 300 * 300 * 0x1p-52);
  blas_vs_written("matmul (map (i. T[i]) (iota 130)) (transpose T)", 200 * 200 * 0x1p-52);
  blas_vs_written("map (r. map (c. dot r c) T) (map (i. T[i]) (iota 130))", 200 * 200 * 0x1p-52);
  /* a transposed product left to BLAS (PlanMatrix.x_let: cblas_dgemv
     transposed, as in a matvec gradient), with more columns than a chunk */
  tl_run("def tv (m: [[R]]) (v: [R]) : [R] = let t = transpose m in map (c. dot c v) t\n"
         "def tv2 (m: [[R]]) (v: [R]) : [R] = let t = transpose m in map (c. reduce (+) 0 (map2 (*) c v)) t\n");
  ck_assert_ptr_nonnull(strstr(tl_capture(tl_session, ":plan tv T V\n", true).out, "cblas_dgemv, transposed"));
  blas_vs_written("tv T (map (i. sin i) (iota 1030))", 1030 * 1030 * 0x1p-52);
  blas_vs_written("tv2 M (map (i. cos i) (iota 257))", 257 * 257 * 0x1p-52);
  /* small integers: every sum is exact, on both paths */
  tl_run("let I = map (i. map (j. floor (10 * sin (i + 2 * j))) (iota 70)) (iota 90)\n"
         "let J = map (i. map (j. floor (10 * cos (i - j))) (iota 50)) (iota 70)\n"
         "let y = map (i. floor (5 * sin i)) (iota 70)\n");
  blas_vs_written("matvec I y", 0);
  blas_vs_written("matmul I J", 0);
  Value v = blas_vs_written("matmul [[1, 2], [3, 4]] [[5, 6], [7, 8]]", 0);
  ck_assert_str_eq(val_to_string(v), "[[19, 22], [43, 50]]");
}
END_TEST

/* The result's rows are views into one buffer, row after row. */
START_TEST(result_rows_in_one_buffer) {
  tl_run(data);
  Value v = tl_ev("matmul M B");
  if (!cpu_blas_available()) return;
  const Array *a = v.u.a;
  ck_assert(a->boxed && a->len == 257);
  for (size_t i = 0; i < a->len; i++) {
    const Array *r = a->v[i].u.a;
    ck_assert(!r->boxed && r->len == 190);
    ck_assert_ptr_eq(r->r, a->v[0].u.a->r + i * 190);
  }
}
END_TEST

START_TEST(same_bits_with_any_number_of_threads) {
  tl_run(data);
  /* chunks of rows, and of columns (more columns than rows), with B as it
     is (matmul) and transposed (the map written with the rows of Y) */
  static const char *const texts[] = {"matvec T V", "matmul M B", "matmul T (transpose T)", "matvec M X",
                                      "matmul (map (i. T[i]) (iota 130)) (transpose T)",
                                      "map (r. map (c. dot r c) T) (map (i. T[i]) (iota 130))"};
  for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
    Exec one = cpu_exec_default;
    one.threads = 1;
    Value want = tl_ev_with(&one, texts[k]);
    for (int nt = 2; nt <= 8; nt++) {
      Exec ex = cpu_exec_default;
      ex.threads = nt;
      ck_assert_msg(tl_same_bits(tl_ev_with(&ex, texts[k]), want, true), "%s: %d threads", texts[k], nt);
    }
  }
}
END_TEST

/* Rows in one buffer (MT, BT: passed to BLAS in place) and the same rows as
   separate arrays (M, B: gathered first) give the same values. */
START_TEST(rows_in_place_or_gathered) {
  tl_run(data);
  ck_assert(max_diff(tl_ev("matvec MT X"), tl_ev("matvec M X")) <= 300 * 300 * 0x1p-52);
  ck_assert(max_diff(tl_ev("map (r. matvec BT r) MT"), tl_ev("matmul M B")) <= 300 * 300 * 0x1p-52);
  /* rows that are views in reverse order: gathered */
  ck_assert(max_diff(tl_ev("matvec (map (i. MT[256 - i]) (iota 257)) X"),
                     tl_ev("map (i. (matvec M X)[256 - i]) (iota 257)")) <= 300 * 300 * 0x1p-52);
}
END_TEST

/* A matrix whose rows are consecutive in one buffer is found so once (the
   array keeps it: rows_flat), and the next product reads it without
   looking at the rows again; rows elsewhere are copied for each product,
   so that a copy never goes stale. */
START_TEST(rows_found_once) {
  tl_run(data);
  if (!cpu_blas_available()) return;
  tl_run("let R = map (i. M[256 - i]) (iota 257)\n"); /* views in reverse order */
  Value mt = tl_ev("MT"), r = tl_ev("R");
  ck_assert_ptr_null(mt.u.a->rows_flat);
  Value first = tl_ev("matvec MT X");
  ck_assert_ptr_eq(mt.u.a->rows_flat, mt.u.a->v[0].u.a->r);
  ck_assert(tl_same_bits(tl_ev("matvec MT X"), first, true));
  tl_ev("matvec R X");
  ck_assert_ptr_null(r.u.a->rows_flat);
  /* a row replaced in place forgets the buffer */
  val_array_set(mt.u.a, 1, val_array(val_new_real_array(300, fe_nospan)));
  ck_assert_ptr_null(mt.u.a->rows_flat);
  /* rows of another length than a product wants: the map as written raises */
  ck_assert(!tl_capture(tl_session, "matvec MT V\n", false).ok);
}
END_TEST

/* The cost meter, the kernels turned off and the GPU's context take the
   map as written. */
START_TEST(only_with_the_fast_paths) {
  tl_run(data);
  size_t before = cpu_blas_products();
  CpuCost cost;
  Value v = cpu_metered_call(tl_check("matvec [[1, 2], [3, 4]] [1, 1]"), NULL, &cost);
  ck_assert_str_eq(val_to_string(v), "[3, 7]");
  ck_assert_int_eq(cpu_blas_products(), before);
  Exec off = tl_exec_paths(true, false);
  tl_ev_with(&off, "matmul M B");
  ck_assert_int_eq(cpu_blas_products(), before);
  /* a context on the GPU (here with the CPU's builtins, which it falls back
     to for nested arrays): the map as written */
  static struct GpuLoaded *none[1];
  Exec gpu = cpu_exec_default;
  gpu.gpu = none;
  ck_assert_str_eq(val_to_string(tl_ev_with(&gpu, "matmul [[1, 2], [3, 4]] [[5, 6], [7, 8]]")), "[[19, 22], [43, 50]]");
  ck_assert_int_eq(cpu_blas_products(), before);
}
END_TEST

/* The first line of an error's text (the notes of its traceback after it
   dropped), with its newline. */
static char *error_line(const char *err) { return una_strndup(err, strcspn(err, "\n") + 1); }

/* What the map as written raises, it raises; what BLAS would not compute
   (an empty dimension) is left to it too. */
START_TEST(errors_and_empty_dimensions_as_written) {
  size_t before = cpu_blas_products();
  /* the error of dot's map2, with the calls that led there (tracebacks) */
  TlRun r = tl_capture(tl_session, "matvec [[1, 2], [3]] [1, 1]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "<prelude>:11:38: error: map2: lengths 1 and 2 differ\n"
                          "<prelude>:61:50: note: called from here\nt.una:1:1: note: called from here\n");
  r = tl_capture(tl_session, "matmul [[1, 2], [3]] [[1], [2]]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "<prelude>:11:38: error: map2: lengths 1 and 2 differ\n"
                          "<prelude>:67:23: note: called from here\nt.una:1:1: note: called from here\n");
  r = tl_capture(tl_session, "matmul [[1, 2], [3, 4]] [[1], [2], [3]]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "<prelude>:11:38: error: map2: lengths 2 and 3 differ\n"
                          "<prelude>:67:23: note: called from here\nt.una:1:1: note: called from here\n");
  r = tl_capture(tl_session, "matmul [[1, 2], [3, 4]] [[1, 2], [3]]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(error_line(r.err), "<prelude>:66:12: error: transpose: the rows differ in length: row 0 has 2 elements, row 1 has 1\n");
  r = tl_capture(tl_session,
                 "matvec [[], []] []\nmatvec ([] : [[R]]) [1]\nmatmul [[], []] [[]]\n"
                 "matmul [[1], [2]] ([] : [[R]])\nmatmul ([] : [[R]]) [[1]]\n"
                 "def tv (m: [[R]]) (v: [R]) : [R] = let t = transpose m in map (c. dot c v) t\n"
                 "tv ([] : [[R]]) [1]\ntv [[], []] [1, 2]\n",
                 true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, "[0, 0]\n[]\n[[], []]\n[[], []]\n[]\n[]\n[]\n");
  r = tl_capture(tl_session, "tv [[1, 2], [3, 4]] [1, 2, 3]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(error_line(r.err), "<prelude>:11:38: error: map2: lengths 2 and 3 differ\n");
  ck_assert_int_eq(cpu_blas_products(), before);
}
END_TEST

/* A map over rows whose function multiplies a matrix from outside by its
   row (an MLP written per example) computes all the rows' products as one
   matrix product when the shapes let none raise (plan/note.h: batch): the
   same values as the map as written, one product instead of one a row;
   rows of another length, and errors elsewhere in the function, as
   written. */
START_TEST(products_of_a_maps_rows_batched) {
  tl_run(data);
  tl_run("def layer (w: [[R]]) (b: [R]) (x: [[R]]) : [R] =\n"
         "  map (xi. let h = map2 (z, c. tanh (z + c)) (matvec w xi) b in sum h) x\n");
  tl_run("let W7 = (transpose (transpose T))[0:7]\nlet V7 = V[0:7]\n");
  /* as the REPL runs it (optimized, so layer's matvec is a map) */
  size_t before = cpu_blas_products();
  TlRun u = tl_capture(tl_session, "layer W7 V7 T\n", true);
  ck_assert_msg(u.ok, "%s", u.err);
  ck_assert_int_eq(cpu_blas_products(), before + (cpu_blas_available() ? 1 : 0)); /* 1030 rows, one product */
  Exec written = tl_exec_paths(true, false);
  Value g = tl_ev_with(&written, "layer W7 V7 T");
  Value uv = tl_ev(una_sprintf("%s", u.out));
  ck_assert_msg(max_diff(uv, g) <= 1e-12, "batched and as written differ by %g", max_diff(uv, g));
  char *plan = tl_capture(tl_session, ":plan layer [[1, 2]] [1] [[1, 2], [3, 4]]\n", true).out;
  ck_assert_msg(strstr(plan, "for all its rows at once"), "%s", plan);
  /* a row of x of another length: each row's product as written, the
     error of the first bad one */
  TlRun r = tl_capture(tl_session, "layer [[1, 2], [3, 4]] [1, 1] [[1, 2], [3, 4], [5], [6, 7]]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(error_line(r.err), "<prelude>:11:38: error: map2: lengths 2 and 1 differ\n");
  /* the shapes fit but b is short: the first row's map2 raises */
  r = tl_capture(tl_session, "layer [[1, 2], [3, 4]] [1] [[1, 2], [3, 4], [5, 6]]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(error_line(r.err), "t.una:2:20: error: map2: lengths 2 and 1 differ\n");
  r = tl_capture(tl_session, "layer [[1, 2], [3, 4]] [0, 0] [[1, 0], [0, 1], [1, 1]]\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, una_sprintf("[%s, %s, %s]\n", "1.7566489096424953", "1.963356879814884", "1.9950530906306752"));
}
END_TEST

Suite *suite_blas(void) {
  Suite *s = suite_create("blas");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, agrees_with_the_map_as_written);
  tcase_add_test(tc, result_rows_in_one_buffer);
  tcase_add_test(tc, same_bits_with_any_number_of_threads);
  tcase_add_test(tc, rows_in_place_or_gathered);
  tcase_add_test(tc, rows_found_once);
  tcase_add_test(tc, only_with_the_fast_paths);
  tcase_add_test(tc, errors_and_empty_dimensions_as_written);
  tcase_add_test(tc, products_of_a_maps_rows_batched);
  suite_add_tcase(s, tc);
  return s;
}
