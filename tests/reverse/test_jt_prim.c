/* test_jt_prim.c: the J^T rules of the language-2 constructs
   (reverse/jt_prim.h, jt_index.c, jt_shape.c, jt_map_any.c,
   jt_fold_any.c, jt_loop.c, jt_gather.c) through the gradient-check
   harness: the UNF path's gradient against central finite differences at
   random points (the direct path does not cover these constructs), and
   exact values where they are known by hand. */
#include <check.h>

#include "../suites.h"
#include "../testlib.h"
#include "gradcheck.h"

typedef struct Case {
  const char *name;
  const char *src;  /* defines f */
  const char *wrt;  /* NULL: every parameter with reals */
  bool short_ok;    /* arrays of length 0 and 1 are fine */
} Case;

static const Case cases[] = {
    {"index", "def f (a: [R]) : R = a[0] * a[length a - 1] + a[1] * a[1] + a[1]", NULL, false},
    {"slice", "def f (a: [R]) : R = sum (map (x. x * x) a[1:]) + prod a[:2] + sum a[1:2]", NULL, false},
    {"gather, repeated indices",
     "def f (a: [R]) (b: [R]) : R =\n"
     "  sum (map (i. a[i] * b[length b - 1 - i] + a[0] * a[i]) (map (k. floor (k / 2)) (iota (length a))))",
     NULL, false},
    {"gather under an if", "def f (a: [R]) : R = sum (map (i. if i > 0 then a[i - 1] * a[i] else a[i]) (iota (length a)))",
     NULL, true},
    {"gathers under if, && and || (scattered where their guards hold)",
     "def f (a: [R]) (b: [R]) : R =\n"
     "  sum (map (i. if i + 1 < length a && a[i + 1] > 0 then a[i + 1] * b[i]\n"
     "              else if i > 2 || a[i] < 0 then a[max (i - 1) 0] * a[i] else b[i] * b[i]) (iota (length a)))",
     NULL, true},
    {"matrix reads under an if",
     "def f (m: [[R]]) (v: [R]) : R =\n"
     "  sum (map (i. if i > 0 && i < length v && m[i, 0] < 0.5 then m[i, 0] * m[i - 1, 0] * v[i] else v[0]) (iota (length m)))",
     NULL, false},
    {"reads in a small for loop in a map (unrolled)",
     "def f (a: [R]) (w: [R]) : R =\n"
     "  sum (map (i. let (s, p) = loop (s, p) = (0, 1) for j < 3 do (s + a[i + j] * w[j], p * a[i + j]) in s * p)\n"
     "    (iota (length a - 2)))",
     NULL, false},
    {"reads in nested small loops and a one-trip loop in a map (unrolled)",
     "def f (a: [R]) (x: R) : R =\n"
     "  sum (map (i. let s = loop s = x for j < 2 do loop t = s for k < 2 do t * 0.5 + a[i + j + k] * x in\n"
     "               loop u = s for m < 1 do u + sin a[i]) (iota (length a - 2)))",
     NULL, false},
    {"a map over a literal iota of pairs in a map (unrolled)",
     "def f (a: [R]) : R = sum (map (i. let p = map (j. (a[i + j], a[i] * 2)) (iota 2) in p[0].1 * p[1].2 + p[1].1) (iota (length a - 1)))",
     NULL, false},
    {"reads in a map over a literal iota in a map (unrolled)",
     "def f (a: [R]) : R = sum (map (i. sum (map (j. a[i + j] * a[i + 2 - j]) (iota 3)) * a[i]) (iota (length a - 2)))",
     NULL, false},
    {"gather in map2 over a matrix",
     "def f (m: [[R]]) (v: [R]) : R = sum (map2 (r, i. r[i] * v[i] + dot r v) m (iota (length v)))", NULL, false},
    {"for loop", "def f (x: R) (v: [R]) : R = loop y = x for i < length v do sin (y * v[i]) + y", NULL, true},
    {"for loop, tuple state",
     "def f (k: R) (y0: [R]) : R =\n"
     "  let (y, t) = loop (y, t) = (y0, 0) for i < 4 do (map (u. u + 0.1 * (sin t - k * u * u)) y, t + 0.1) in\n"
     "  sum y * t",
     NULL, true},
    {"rk4",
     "def rhs (k: R) (y: [R]) : [R] = map (u. -k * u + 0.1 * u * u) y\n"
     "def step (k: R) (h: R) (y: [R]) : [R] =\n"
     "  let k1 = rhs k y in\n"
     "  let k2 = rhs k (map2 (u, d. u + h / 2 * d) y k1) in\n"
     "  let k3 = rhs k (map2 (u, d. u + h / 2 * d) y k2) in\n"
     "  let k4 = rhs k (map2 (u, d. u + h * d) y k3) in\n"
     "  map3 (u, a, b. u + h / 6 * (a + 2 * b)) y k1 (map3 (p, q, r. p + r + (q - p) * 0) k2 k3 k4)\n"
     "def f (k: R) (y0: [R]) : R = sum (loop y = y0 for i < 5 do step k 0.1 y)",
     NULL, true},
    {"while loop", "def f (x: R) : R = (loop (y, n) = (x, 0) while n < 4 do (y * y * 0.5 + sin y, n + 1)).1", NULL, true},
    {"while loop in a map (a trip count per element)",
     "def f (v: [R]) (s: R) : R = sum (map (y. loop x = y * y + 0.1 while x < 4 do x * (1.5 + 0.1 * s)) v)", NULL, true},
    {"two-layer mlp",
     "def f (w1: [[R]]) (w2: [[R]]) (x: [R]) : R =\n"
     "  let h = map (u. tanh (0.3 * u)) (matvec w1 x) in sum (map (o. o * o) (matvec w2 h))",
     NULL, false},
    {"scanl with a free variable", "def f (s: R) (v: [R]) : R = sum (scanl (x, y. x * s + y) 0 v)", NULL, true},
    {"scanr", "def f (v: [R]) : R = sum (map (x. x * x) (scanr (x, y. sin x + y * 0.5) 1 v))", NULL, true},
    {"scanr over indices reading free arrays (the forward sweep as a loop)",
     "def f (a: [R]) (x: R) : R = sum (map (u. u * u) (scanr (i, acc. acc * x + sin a[i] * acc + a[i]) 1 (iota (length a))))",
     NULL, true},
    {"scanl over indices reading free arrays (the backward sweep as a loop)",
     "def f (a: [R]) (x: R) : R = sum (map (u. u * u) (scanl (acc, i. acc * x + sin a[i] * acc + a[i]) 1 (iota (length a))))",
     NULL, true},
    {"scanl of tuples", "def f (v: [R]) : R = sum (map (q. q.1 * q.2) (scanl ((a, b), x. (a + x, b * x)) (0, 1) v))", NULL, true},
    {"shifts", "def f (v: [R]) : R = sum (map2 (x, y. x * y) (shift1L v) (shift1R v))", NULL, true},
    {"transpose and concat",
     "def f (m: [[R]]) (v: [R]) : R = sum (map (r. dot r r) (transpose m)) + sum (concat v (map (x. x * 3) v))", NULL,
     false},
    {"zip and unzip",
     "def f (a: [R]) (b: [R]) : R = let (u, w) = unzip (map (p. (p.1 * p.2, p.1 + p.2)) (zip a b)) in sum u * sum w",
     NULL, true},
    {"map3", "def f (a: [R]) (b: [R]) (c: [R]) : R = sum (map3 (x, y, z. x * y + sin z * x) a b c)", NULL, true},
    {"mlp layer", "def f (w: [[R]]) (b: [R]) (x: [R]) : R = sum (map2 (h, c. tanh (h + c)) (matvec w x) b)", NULL, false},
    {"a layer over a batch (the weights' gradient one matrix product)",
     "def f (w: [[R]]) (b: [R]) (xs: [[R]]) : R = sum (map (xi. sum (map2 (h, c. tanh (0.5 * h + c)) (matvec w xi) b)) xs)",
     "w b", false},
    {"two layers over a batch",
     "def f (w1: [[R]]) (w2: [[R]]) (xs: [[R]]) : R =\n"
     "  sum (map (xi. let h = map (u. tanh (0.3 * u)) (matvec w1 xi) in sum (map (o. o * o) (matvec w2 h))) xs)",
     "w1 w2", false},
    {"matmul", "def f (a: [[R]]) (b: [[R]]) : R = sum (map (r. dot r r) (matmul a b))", NULL, false},
    {"variance, tuple accumulator",
     "def f (a: [R]) : R =\n"
     "  let (s, s2, n) = foldl ((s, s2, n), x. (s + x, s2 + x * x, n + 1)) (0, 0, 0) a in s2 / n - (s / n) * (s / n)",
     NULL, false},
    {"array accumulator", "def f (v: [R]) : R = sum (foldl (acc, x. map (a. a * x + 1) acc) v v)", NULL, true},
    {"reduce_by_index",
     "def f (v: [R]) : R = let h = reduce_by_index (replicate 3 0) (+) 0 (map (i. i - 3 * floor (i / 3)) (iota (length v))) v in dot h h",
     NULL, true},
    {"constant data matrix", "def f (w: [R]) (data: [[R]]) : R = sum (map (row. (dot row w - 1) ^ 2) data)", "w", true},
    {"array literals of arrays and of tuples",
     "def f (x: R) (y: R) : R = sum (map (r. prod r) [[x, 1], [2, x * y]]) + (let p = [(x, 1), (y, x)] in p[0].1 * p[1].2)",
     NULL, true},
    {"nested arrays built", "def f (v: [R]) : R = sum (map (r. prod r) (map (x. [x, x * x, 1]) v))", NULL, true},
    {"lgamma and digamma", "def f (x: R) : R = lgamma (x * x + 1) + digamma (x * x + 2) * x", NULL, true},
    /* rows read in inner lambdas, hoisted to the map's body (hoist_rows.h) */
    {"indexed matrix-vector product",
     "def f (m: [[R]]) (x: [R]) : R =\n"
     "  sum (map (i. sum (map (j. m[i, j] * x[j]) (iota (min (length x) (length m[i]))))) (iota (length m)))",
     NULL, true},
    {"indexed matrix-vector product, a loop",
     "def f (m: [[R]]) (x: [R]) : R =\n"
     "  sum (map (i. loop acc = 0 for j < min (length x) (length m[i]) do acc + m[i, j] * sin x[j]) (iota (length m)))",
     NULL, true},
    /* windows of a vector read in inner lambdas (hoist_rows.h), and a
       slice in a map body */
    {"a convolution, a loop",
     "def f (a: [R]) (w: [R]) : R =\n"
     "  sum (map (i. loop acc = 0 for j < length w do acc + a[i + j] * sin w[j]) (iota (length a - length w + 1)))",
     NULL, true},
    {"a convolution, a map over iota, reads that may not be made",
     "def f (a: [R]) (w: [R]) : R =\n"
     "  sum (map (i. let b = i - 1 in\n"
     "               sum (map (j. if b + j >= 0 && b + j < length a then a[b + j] * w[j] * a[b + j] else w[j]) (iota (length w)))) "
     "(iota (length a)))",
     NULL, true},
    {"a convolution as its definition, a[i - j] (a window from i - (n - 1))",
     "def f (a: [R]) (w: [R]) : R =\n"
     "  let k = length w in\n"
     "  sum (map (i. loop acc = 0 for j < k do acc + a[i + k - 1 - j] * sin w[j]) (iota (length a - k + 1)))\n"
     "  + sum (map (i. sum (map (j. a[i + k - 1 - j] * a[i + k - 1 - j] * w[j]) (iota k))) (iota (length a - k + 1)))",
     NULL, true},
    {"slices in a map body",
     "def f (a: [R]) : R = sum (map (i. sum (map (x. x * x) a[i : min (length a) (i + 2)]) * a[i]) (iota (length a)))",
     NULL, true},
    {"rows at an index through a let, two per element",
     "def f (m: [[R]]) : R =\n"
     "  sum (map (i. let k = length m - 1 - i in\n"
     "               sum (map (j. m[k, j] * m[i, j] * m[i, j]) (iota (min (length m[k]) (length m[i]))))) (iota (length m)))",
     NULL, true},
};

#define NCASES ((int)(sizeof cases / sizeof cases[0]))

START_TEST(test_case) {
  const Case *c = &cases[_i];
  GcOptions o = gc_default_options();
  o.no_direct = true;
  static const int longer[] = {3, 7};
  if (!c->short_ok) {
    o.lengths = longer;
    o.nlengths = 2;
  }
  int wrt[8];
  if (c->wrt) {
    char *err = NULL;
    GcProgram *p = gc_load("<jt>", c->src, true, "f", &err);
    ck_assert_msg(p != NULL, "%s: %s", c->name, err);
    o.nwrt = gc_wrt(p, c->wrt, wrt);
    ck_assert_int_gt(o.nwrt, 0);
    o.wrt = wrt;
  }
  char *rep = gc_check("<jt>", c->src, "f", 7000 + (uint64_t)_i, &o, NULL);
  ck_assert_msg(rep == NULL, "%s: %s", c->name, rep);
}
END_TEST

/* Exact gradients, by hand. */
typedef struct Exact {
  const char *src, *wrt;
  const char *args[3];
  int nargs;
  const char *want;
} Exact;

static const Exact exact[] = {
    {"def f (a: [R]) : R = a[1] * a[2] + a[1] + a[3]", NULL, {"[1, 2, 3, 4]"}, 1, "[0, 4, 2, 1]"},
    {"def f (x: R) : R = sum (map (r. sum r) [[x, 1], [2, x * x]])", NULL, {"3"}, 1, "7"},
    {"def f (a: [R]) (idx: [R]) : R = sum (map (i. a[i] * a[i] + 2 * a[i + 1]) idx)", "a", {"[1, 2, 3, 4]", "[0, 2, 0]"}, 2,
     "[4, 4, 6, 2]"},
    {"def f (x: R) : R = loop y = x for i < 3 do y * y + i", NULL, {"1.5"}, 1, "163.6875"},
    {"def f (x: R) : R = loop y = x while y < 100 do y * 2", NULL, {"3"}, 1, "64"},
    {"def f (v: [R]) : R = sum (scanr (x, y. x + 2 * y) 0 v)", NULL, {"[1, 2, 3]"}, 1, "[1, 3, 7]"},
    {"def f (v: [R]) : R = let h = reduce_by_index (replicate 3 0) (+) 0 [0, 1, 1, 2] v in h[1] * h[1] + h[0]", NULL,
     {"[1, 2, 3, 4]"}, 1, "[1, 10, 10, 0]"},
    {"def f (v: [R]) (bs: [B]) : R = sum (map2 (x, b. if b then x * x else 0) v bs)", NULL,
     {"[1, 2, 3]", "[true, false, true]"}, 2, "[2, 0, 6]"},
    /* guarded reads: none made (an empty array), and two at one index */
    {"def f (a: [R]) (idx: [R]) : R = sum (map (i. if i > 0 then a[i] * a[i] else 1) idx)", "a", {"[]", "[0, 0]"}, 2,
     "[]"},
    {"def f (a: [R]) (idx: [R]) : R = sum (map (i. if i > 0 && a[i] > 1 then a[i] * a[i - 1] else a[0]) idx)", "a",
     {"[1, 2, 3]", "[0, 2, 1, 2]"}, 2, "[3, 7, 4]"},
    {"def f (a: [R]) : R = sum (map (i. loop acc = 0 for j < 2 do acc + a[i + j] * a[i + j]) [0, 1, 1])", NULL,
     {"[1, 2, 3]"}, 1, "[2, 12, 12]"},
    /* guarded matrix reads: none made (rows all empty), and some twice */
    {"def f (m: [[R]]) (idx: [R]) : R = sum (map (i. if i > 0 then m[i, 0] * m[i, 0] else 1) idx)", "m",
     {"[[], []]", "[0, 0]"}, 2, "[[], []]"},
    {"def f (m: [[R]]) (idx: [R]) : R = sum (map (i. if i > 0 && m[i, 1] > 1 then m[i, 0] * m[i - 1, 1] else m[0, 0]) idx)",
     "m", {"[[1, 2], [3, 4], [5, 0.5]]", "[0, 2, 1, 2]"}, 2, "[[3, 3], [2, 0], [0, 0]]"},
    /* rows read in inner lambdas (hoist_rows.h): each row's cotangent added
       to its row; an inner map that never runs (nor reads: an empty
       matrix, rows out of range); a row read whole beside its elements */
    {"def f (m: [[R]]) (x: [R]) : R = sum (map (i. sum (map (j. m[i, j] * x[j]) (iota (length x)))) (iota (length m)))",
     NULL, {"[[1, 2, 3], [4, 5, 6]]", "[7, 8, 9]"}, 2, "([[7, 8, 9], [7, 8, 9]], [5, 7, 9])"},
    {"def f (m: [[R]]) (x: [R]) : R = sum (map (i. loop acc = 0 for j < length x do acc + m[i, j] * x[j]) (iota (length m)))",
     NULL, {"[[1, 2, 3], [4, 5, 6]]", "[7, 8, 9]"}, 2, "([[7, 8, 9], [7, 8, 9]], [5, 7, 9])"},
    {"def f (m: [[R]]) (x: [R]) : R = sum (map (i. sum (map (j. m[i, j] * x[j]) (iota (length x)))) (iota (length m)))",
     NULL, {"([] : [[R]])", "[7, 8, 9]"}, 2, "([], [0, 0, 0])"},
    {"def f (m: [[R]]) (x: [R]) : R = sum (map (i. sum (map (j. m[i + 0.5, j] * x[j]) (iota (length x * i)))) [0, 0])",
     NULL, {"[[1, 2, 3], [4, 5, 6]]", "[7, 8, 9]"}, 2, "([[0, 0, 0], [0, 0, 0]], [0, 0, 0])"},
    {"def f (m: [[R]]) (x: [R]) : R =\n"
     "  sum (map (i. sum (map (j. m[length m - 1 - i, j] * m[i, j] * x[j]) (iota (length x)))) (iota (length m)))",
     NULL, {"[[1, 2, 3], [4, 5, 6]]", "[7, 8, 9]"}, 2, "([[56, 80, 108], [14, 32, 54]], [8, 20, 36])"},
    {"def f (m: [[R]]) : R = sum (map (i. m[i, 0] * sum (map (j. m[i, j]) (iota (length m[i])))) (iota (length m)))",
     NULL, {"[[1, 2], [3, 4]]"}, 1, "[[4, 1], [10, 3]]"},
    /* windows (hoist_rows.h): each window's cotangent added from its
       start; one never read (an inner loop of no trips, a start that is
       not an integer) */
    {"def f (a: [R]) (w: [R]) : R = sum (map (i. loop acc = 0 for j < length w do acc + a[i + j] * w[j]) "
     "(iota (length a - length w + 1)))",
     NULL, {"[1, 2, 3, 4]", "[1, 10]"}, 2, "([1, 11, 11, 10], [6, 9])"},
    {"def f (a: [R]) (w: [R]) : R = sum (map (i. sum (map (j. a[i + j] * w[j]) (iota (length w)))) "
     "(iota (length a - length w + 1)))",
     NULL, {"[1, 2, 3, 4]", "[1, 10]"}, 2, "([1, 11, 11, 10], [6, 9])"},
    {"def f (a: [R]) (w: [R]) : R = sum (map (i. loop acc = 0 for j < length w * i do acc + a[i + 0.5 + j] * w[j]) [0, 0])",
     NULL, {"[1, 2, 3, 4]", "[1, 10]"}, 2, "([0, 0, 0, 0], [0, 0])"},
    {"def f (a: [R]) (w: [R]) : R = sum (map (i. loop acc = 0 for j < length w do acc + a[i + j] * w[j]) [-1, 3])",
     NULL, {"[1, 2, 3, 4]", "[]"}, 2, "([0, 0, 0, 0], [])"},
    /* an index through 40 lets that each use the one before three times:
       expanded, 3^40 nodes; it is not a gather (the general rule), and
       derives at once */
    {"def f (a: [R]) (idx: [R]) : R = sum (map (i. let k0 = i in "
     "let k1 = k0 * k0 - k0 in let k2 = k1 * k1 - k1 in let k3 = k2 * k2 - k2 in let k4 = k3 * k3 - k3 in let k5 = k4 * k4 - k4 in let k6 = k5 * k5 - k5 in let k7 = k6 * k6 - k6 in let k8 = k7 * k7 - k7 in let k9 = k8 * k8 - k8 in let k10 = k9 * k9 - k9 in let k11 = k10 * k10 - k10 in let k12 = k11 * k11 - k11 in let k13 = k12 * k12 - k12 in let k14 = k13 * k13 - k13 in let k15 = k14 * k14 - k14 in let k16 = k15 * k15 - k15 in let k17 = k16 * k16 - k16 in let k18 = k17 * k17 - k17 in let k19 = k18 * k18 - k18 in let k20 = k19 * k19 - k19 in let k21 = k20 * k20 - k20 in let k22 = k21 * k21 - k21 in let k23 = k22 * k22 - k22 in let k24 = k23 * k23 - k23 in let k25 = k24 * k24 - k24 in let k26 = k25 * k25 - k25 in let k27 = k26 * k26 - k26 in let k28 = k27 * k27 - k27 in let k29 = k28 * k28 - k28 in let k30 = k29 * k29 - k29 in let k31 = k30 * k30 - k30 in let k32 = k31 * k31 - k31 in let k33 = k32 * k32 - k32 in let k34 = k33 * k33 - k33 in let k35 = k34 * k34 - k34 in let k36 = k35 * k35 - k35 in let k37 = k36 * k36 - k36 in let k38 = k37 * k37 - k37 in let k39 = k38 * k38 - k38 in let k40 = k39 * k39 - k39 in a[k40 * 0]) idx)",
     "a", {"[1, 2, 3]", "[0, 1]"}, 2, "[2, 0, 0]"},
};

#define NEXACT ((int)(sizeof exact / sizeof exact[0]))

START_TEST(test_exact) {
  const Exact *e = &exact[_i];
  char *err = NULL;
  GcProgram *p = gc_load("<exact>", e->src, true, "f", &err);
  ck_assert_msg(p != NULL, "%s", err);
  ck_assert_str_eq(gc_grad_str(p, e->wrt, REV_UNF, e->nargs, e->args), e->want);
}
END_TEST

Suite *suite_jt_prim(void) {
  Suite *s = suite_create("jt_prim");
  TCase *tc = tcase_create("jt_prim");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_case, 0, NCASES);
  tcase_add_loop_test(tc, test_exact, 0, NEXACT);
  suite_add_tcase(s, tc);
  return s;
}
