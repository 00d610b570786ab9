/* test_scan_map.c: scans by chunks and map2 of scans fused
   (backend/scan_map.c): the same bits as the generic path for scanl and
   scanr, with and without shifts, on either side of the map2 or both, with
   monoid and kernel operators, at sizes around the block, the segment and
   the chunks; the same bits as an independent implementation of the
   chunked bracketing (scan_map.h), with any number of threads; the fused
   pass called with descriptors; the ordinary errors in the ordinary
   order. */
#include <check.h>
#include <string.h>

#include "../../backend/array_ops.h"
#include "../../backend/eval.h"
#include "../../backend/parallel.h"
#include "../../backend/plan/plan.h"
#include "../../backend/scan_map.h"
#include "../suites.h"
#include "../testlib.h"

static void setup(void) {
  tl_setup();
}

static void teardown(void) { tl_teardown(); }

static const char *const cases[] = {
    "map2 (*) (shift1L (scanr (*) 1 A)) (shift1R (scanl (*) 1 A))",
    "map2 (*) (shift1R (scanl (*) 0.5 B)) (shift1L (scanr (*) 2 A))",
    "map2 (+) (shift1L (scanr (+) 0.25 A)) (shift1R (scanl (+) (-1) B))",
    "map2 (x, y. x - y) (shift1R (scanl (+) 0 A)) B",
    "map2 (x, y. x - y) B (shift1L (scanl (+) 0 A))",
    "map2 (x, y. x / (1 + y * y)) (shift1L (scanr (max) (-inf) A)) B",
    "map2 (x, y. x * y) (scanl (x, y. x * 0.5 + y) 1 A) C",
    "map2 (x, y. x + y) C (scanr (x, y. x - y) 0 A)",
    "map2 (x, y. x * y) (shift1R (scanr (x, y. min y x) inf A)) B",
    "map2 (x, y. x - y) (shift1R (scanl (+) 0.5 A)) (shift1L (scanr (*) 1 B))",
    "map2 (x, y. x + 2 * y) (scanr (max) (-inf) A) (scanl (*) 1 B)",
    "map2 (x, y. x * y) (shift1L (scanr (x, y. x * 0.5 + y) 1 A)) (shift1R (scanl (+) 0 B))",
    "scanl (*) 1 A",
    "scanr (+) 0 A",
    "scanl (+) 0 (map (x. 2 * x) A)",
    "scanr (x, y. max y x) 0 (map2 (x, y. x - y) A B)",
    "scanl (x, y. min y x) inf A",
};

static void same_as_generic(size_t n, bool threads) {
  tl_run(una_sprintf("let A = map (x. 2 * x - 1) (rand %zu 1)\nlet B = map (x. x + 1) (rand %zu 2)\n"
                     "let C = rand %zu 3\n",
                     n, n, n + 1));
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Value fast = tl_ev(cases[i]);
    Exec kernels = tl_exec_paths(false, true); /* kernels for the monoids too */
    Value kern = tl_ev_with(&kernels, cases[i]);
    Exec generic = tl_exec_paths(false, false);
    Value slow = tl_ev_with(&generic, cases[i]);
    ck_assert_msg(tl_same_bits(fast, slow, false), "n=%zu: %s differs from the generic path", n, cases[i]);
    ck_assert_msg(tl_same_bits(kern, slow, false), "n=%zu: %s (kernels) differs from the generic path", n,
                  cases[i]);
    for (int th = 1; threads && th <= 3; th += 2) {
      Exec ex = cpu_exec_default;
      ex.threads = th;
      Value other = tl_ev_with(&ex, cases[i]);
      ck_assert_msg(tl_same_bits(fast, other, false), "n=%zu: %s differs with %d threads", n, cases[i], th);
    }
  }
}

START_TEST(same_bits) {
  size_t sizes[] = {0, 1, 2, 3, 255, 256, 257, 513, 5000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) same_as_generic(sizes[i], false);
}
END_TEST

/* From CPU_PAR_MIN on, the chunks: the same bits on every path and with
   1, 2 or 3 threads. */
START_TEST(same_bits_chunked) {
  size_t sizes[] = {CPU_PAR_MIN - 1, CPU_PAR_MIN, CPU_PAR_MIN + 1, CPU_PAR_MIN + 8 * CPU_SCAN_SEG + 300};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) same_as_generic(sizes[i], true);
}
END_TEST

/* ---- the bracketing of scan_map.h, written out independently ---- */

typedef double (*Op)(double, double);
static double mul(double x, double y) { return x * y; }
static double add(double x, double y) { return x + y; }

static double ref_total(Op f, const double *x, size_t lo, size_t hi) {
  double t = 0;
  for (size_t ss = lo; ss < hi; ss += CPU_SCAN_SEG) {
    size_t se = ss + CPU_SCAN_SEG < hi ? ss + CPU_SCAN_SEG : hi, nl = se - ss < CPU_BLOCK ? se - ss : CPU_BLOCK;
    double lanes[CPU_BLOCK];
    for (size_t i = ss; i < se; i++) {
      size_t l = (i - ss) % CPU_BLOCK;
      lanes[l] = i - ss < CPU_BLOCK ? x[i] : f(lanes[l], x[i]);
    }
    double r = lanes[0];
    for (size_t l = 1; l < nl; l++) r = f(r, lanes[l]);
    t = ss == lo ? r : f(t, r);
  }
  return t;
}

/* E[0..n] of scanl (right false) or scanr f v x. */
static void ref_scan(Op f, bool right, double v, const double *x, size_t n, double *E) {
  int K = n >= CPU_PAR_MIN ? CPU_CHUNKS : 1;
  size_t lo[CPU_CHUNKS + 1];
  for (int c = 0; c < K; c++) {
    size_t hi;
    cpu_chunk_bounds(n, CPU_BLOCK, K, c, &lo[c], &hi);
  }
  lo[K] = n;
  if (!right) {
    double carry = v;
    E[0] = v;
    for (int c = 0; c < K; c++) {
      double acc = c == 0 ? v : x[lo[c]];
      for (size_t i = lo[c]; i < lo[c + 1]; i++) {
        if (c == 0) E[i + 1] = acc = f(acc, x[i]);
        else E[i + 1] = f(carry, acc = i == lo[c] ? acc : f(acc, x[i]));
      }
      if (K > 1) carry = f(carry, ref_total(f, x, lo[c], lo[c + 1]));
    }
  } else {
    double carry = v;
    E[n] = v;
    for (int c = K - 1; c >= 0; c--) {
      double acc = c == K - 1 ? v : x[lo[c + 1] - 1];
      for (size_t i = lo[c + 1]; i-- > lo[c];) {
        if (c == K - 1) E[i] = acc = f(x[i], acc);
        else E[i] = f(acc = i == lo[c + 1] - 1 ? acc : f(x[i], acc), carry);
      }
      if (K > 1) carry = f(ref_total(f, x, lo[c], lo[c + 1]), carry);
    }
  }
}

static bool same_doubles(const double *a, const double *b, size_t n, size_t *at) {
  for (size_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof(double)) != 0) {
      *at = i;
      return false;
    }
  return true;
}

static void check_array(Value got, const double *want, size_t n, const char *what, size_t len) {
  ck_assert_msg(got.kind == V_ARRAY && got.u.a->len == n, "%s (n=%zu): wrong length", what, len);
  size_t at = 0;
  ck_assert_msg(same_doubles(got.u.a->r, want, n, &at), "%s (n=%zu): element %zu is %.17g, not %.17g", what, len,
                at, got.u.a->r[at], want[at]);
}

/* scanl/scanr of * and + and ∇prod against ref_scan, with zeros in the
   input, at lengths around the block, the segment and the chunks. */
static void against_reference(size_t n) {
  /* near 1, and every 1000th element (from 17) zero */
  tl_run(una_sprintf("let A = map2 (x, i. if i - 1000 * floor (i / 1000) == 17 then 0 else 1 + (x - 0.5) * 0.001) "
                     "(rand %zu 5) (iota %zu)\n",
                     n, n));
  Value a = tl_ev("A");
  const double *x = a.u.a->r;
  double *L = malloc(sizeof(double) * (n + 1)), *R = malloc(sizeof(double) * (n + 1)),
         *G = malloc(sizeof(double) * (n + 1));
  ref_scan(mul, false, 1, x, n, L);
  ref_scan(mul, true, 1, x, n, R);
  for (size_t q = 0; q < n; q++) G[q] = R[q + 1] * L[q];
  for (int th = 1; th <= 2; th++) {
    Exec ex = cpu_exec_default;
    ex.threads = th;
    check_array(tl_ev_with(&ex, "scanl (*) 1 A"), L, n + 1, "scanl (*) 1 A", n);
    check_array(tl_ev_with(&ex, "scanr (*) 1 A"), R, n + 1, "scanr (*) 1 A", n);
    check_array(tl_ev_with(&ex, "map2 (*) (shift1L (scanr (*) 1 A)) (shift1R (scanl (*) 1 A))"), G, n, "grad prod", n);
  }
  ref_scan(add, false, 0.25, x, n, L);
  ref_scan(add, true, -3, x, n, R);
  check_array(tl_ev("scanl (+) 0.25 A"), L, n + 1, "scanl (+) 0.25 A", n);
  check_array(tl_ev("scanr (+) (-3) A"), R, n + 1, "scanr (+) (-3) A", n);
  for (size_t q = 0; q < n; q++) G[q] = L[q + 1] - R[q];
  check_array(tl_ev("map2 (x, y. x - y) (shift1L (scanl (+) 0.25 A)) (shift1R (scanr (+) (-3) A))"), G, n,
              "map2 of scanl and scanr", n);
  free(L);
  free(R);
  free(G);
}

START_TEST(reference) {
  size_t sizes[] = {0,
                    1,
                    2,
                    255,
                    256,
                    257,
                    CPU_SCAN_SEG + 1,
                    CPU_PAR_MIN - 1,
                    CPU_PAR_MIN,
                    CPU_PAR_MIN + 1,
                    CPU_PAR_MIN + 255,
                    CPU_PAR_MIN + CPU_CHUNKS * CPU_SCAN_SEG,
                    CPU_PAR_MIN + CPU_CHUNKS * CPU_SCAN_SEG + 1,
                    1000003};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) against_reference(sizes[i]);
}
END_TEST

/* The fused pass called with descriptors, without Terms: ∇prod. */
START_TEST(descriptors) {
  size_t n = CPU_PAR_MIN + 3 * CPU_BLOCK + 7;
  double *x = malloc(sizeof(double) * n), *L = malloc(sizeof(double) * (n + 1)),
         *R = malloc(sizeof(double) * (n + 1)), *out = malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; i++) x[i] = i % 977 == 5 ? 0 : 1 + ((double)(i % 101) - 50) * 1e-5;
  ref_scan(mul, false, 1, x, n, L);
  ref_scan(mul, true, 1, x, n, R);
  const Term *lam = tl_check("map2 (x, y. x * y) [1] [1]")->body->kids[0];
  CpuKernelRun g;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, cpu_kernel_for(lam), NULL, &g));
  const MonoidFns *m = cpu_monoid_loops(&cpu_exec_default, lam);
  ck_assert(m != NULL);
  CpuScanArg a = {.scan = true, .right = true, .shift = CPU_SHIFT1L, .x = x, .n = n, .v = 1, .m = m, .monoid = true};
  CpuScanArg b = a;
  b.right = false;
  b.shift = CPU_SHIFT1R;
  for (int th = 1; th <= 3; th++) {
    memset(out, 0, sizeof(double) * n);
    cpu_scan_map2(th, &a, &b, &g, th == 2 ? NULL : m, out, n, fe_nospan);
    for (size_t q = 0; q < n; q++)
      ck_assert_msg(out[q] == R[q + 1] * L[q], "threads %d: element %zu is %.17g, not %.17g", th, q, out[q],
                    R[q + 1] * L[q]);
    /* the same with the arguments swapped */
    cpu_scan_map2(th, &b, &a, &g, th == 2 ? m : NULL, out, n, fe_nospan);
    for (size_t q = 0; q < n; q++) ck_assert(out[q] == L[q] * R[q + 1]);
  }
  /* a scan alone */
  double *E = malloc(sizeof(double) * (n + 1));
  CpuScanArg s = {.scan = true, .x = x, .n = n, .v = 1, .m = m, .monoid = true};
  cpu_scan(2, &s, E, fe_nospan);
  size_t at = 0;
  ck_assert_msg(same_doubles(E, L, n + 1, &at), "cpu_scan: element %zu", at);
  free(x);
  free(L);
  free(R);
  free(out);
  free(E);
}
END_TEST

/* The body of the expression text, planned (the plan marks the map2s
   that run this way). */
static const Term *planned(const char *text) { return plan_runnable(tl_check(text))->body; }

START_TEST(qualifies) {
  tl_run("let A = [1, 2, 3]\nlet B = [1, 2, 3]\n");
  Value r;
  /* not planned: the ordinary evaluation */
  ck_assert(!cpu_map2_of_scan(&cpu_exec_default, tl_check("map2 (*) (shift1L (scanr (*) 1 A)) B")->body, NULL, &r));
  ck_assert(cpu_map2_of_scan(&cpu_exec_default, planned("map2 (*) (shift1L (scanr (*) 1 A)) B"), NULL, &r));
  ck_assert_str_eq(val_to_string(r), "[6, 6, 3]");
  /* a scan of an inline map is fused into the scan instead; a boolean
     result; no scan */
  ck_assert(!cpu_map2_of_scan(&cpu_exec_default, planned("map2 (*) (shift1L (scanr (*) 1 (map (x. x) A))) B"), NULL, &r));
  ck_assert(!cpu_map2_of_scan(&cpu_exec_default, planned("map2 (x, y. x < y) (shift1L (scanr (*) 1 A)) B"), NULL, &r));
  ck_assert(!cpu_map2_of_scan(&cpu_exec_default, planned("map2 (*) A B"), NULL, &r));
  /* both arguments scans */
  ck_assert(cpu_map2_of_scan(&cpu_exec_default, planned("map2 (*) (shift1L (scanr (*) 1 A)) (shift1R (scanl (*) 1 B))"), NULL, &r));
  ck_assert_str_eq(val_to_string(r), "[6, 3, 2]");
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
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, same_bits);
  tcase_add_test(tc, same_bits_chunked);
  tcase_add_test(tc, reference);
  tcase_add_test(tc, descriptors);
  tcase_add_test(tc, qualifies);
  tcase_add_test(tc, errors_in_order);
  suite_add_tcase(s, tc);
  return s;
}
