/* test_gradcheck.c: the gradient corpus: the paper's examples and the
   pitfalls of issue 3 through the harness (UNF path against the direct
   path and finite differences), exact gradients where the value is known
   by hand, the located errors for constructs that cannot be differentiated
   yet, and the harness's own checks (finite differences of known
   functions, a wrong gradient is caught). */
#include <check.h>
#include <math.h>

#include "../../backend/eval.h"
#include "../suites.h"
#include "../testlib.h"
#include "corpus.h"
#include "gradcheck.h"

/* The program src with its def f (see gc_load); a failure to load fails
   the test with the error, after what when given. */
static GcProgram *load(const char *file, const char *src, bool prelude, const char *what) {
  char *err = NULL;
  GcProgram *p = gc_load(file, src, prelude, "f", &err);
  if (!p) ck_abort_msg("%s%s%s", what ? what : "", what ? ": " : "", err);
  return p;
}

/* ---- the corpus through the harness ---- */



#define NCASES gc_ncorpus

START_TEST(test_corpus) {
  const GcCase *c = &gc_corpus[_i];
  GcOptions o = gc_default_options();
  o.no_direct = c->unf_only;
  int wrt[8];
  if (c->wrt) {
    GcProgram *p = load("<corpus>", c->src, true, c->name);
    o.nwrt = gc_wrt(p, c->wrt, wrt);
    ck_assert_int_gt(o.nwrt, 0);
    o.wrt = wrt;
  }
  char *rep = gc_check("<corpus>", c->src, "f", 1000 + (uint64_t)_i, &o, NULL);
  ck_assert_msg(rep == NULL, "%s: %s", c->name, rep);
}
END_TEST

/* Arrays longer than the interpreter's 256 reduce lanes, where reduce
   applies its unit once per lane. */
static const char *const long_cases[] = {
    "def f (v: [R]) : R = prod v",
    "def f (v: [R]) : R = sum (map (x. x * x) v)",
    "def f (s: R) (v: [R]) : R = reduce (a, b. a + b + s) (0 - s) v",
    "def f (s: R) (v: [R]) : R = let c = exp (0.01 * s) in reduce (a, b. a * b * c) (1 / c) v",
    "def f (v: [R]) (x: R) : R = max (reduce (a, b. log (exp a + exp b)) (-inf) v) x",
    "def f (x: R) (v: [R]) : R = reduce (max) x v + reduce (min) x v",
    "def f (s: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s * a - b) v w)",
    "def f (x: R) (cs: [R]) : R = foldl (acc, c. acc * (0.5 * sin x) + c) 0 cs",
};

#define NLONG ((int)(sizeof long_cases / sizeof long_cases[0]))

START_TEST(test_long_arrays) {
  static const int lengths[] = {300};
  GcOptions o = gc_default_options();
  o.lengths = lengths;
  o.nlengths = 1;
  o.points = 1;
  char *rep = gc_check("<long>", long_cases[_i], "f", 2000 + (uint64_t)_i, &o, NULL);
  ck_assert_msg(rep == NULL, "%s", rep);
}
END_TEST

/* ---- exact gradients ---- */

typedef struct Exact {
  const char *src;
  const char *wrt;
  const char *args[4];
  const char *want;
} Exact;

static const Exact exact[] = {
    /* example 1.1: (2 x1 x2, x1^2, 0) */
    {"def f (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2", NULL, {"2", "3", "5"}, "(12, 4, 0)"},
    /* prod with no, one and several zeros: exact, never nan */
    {"def f (v: [R]) : R = prod v", NULL, {"[2, 3, 4]"}, "[12, 8, 6]"},
    {"def f (v: [R]) : R = prod v", NULL, {"[2, 0, 4]"}, "[0, 8, 0]"},
    {"def f (v: [R]) : R = prod v", NULL, {"[0, 3, 0]"}, "[0, 0, 0]"},
    {"def f (v: [R]) : R = prod v", NULL, {"[0, 0, 0, 0]"}, "[0, 0, 0, 0]"},
    {"def f (v: [R]) : R = prod v", NULL, {"[0]"}, "[1]"},
    {"def f (v: [R]) : R = prod v", NULL, {"[5]"}, "[1]"},
    {"def f (v: [R]) : R = prod v", NULL, {"[]"}, "[]"},
    {"def f (v: [R]) : R = reduce (x, y. x * y) 1 v", NULL, {"[1, 0, 2, 0, 3]"}, "[0, 0, 0, 0, 0]"},
    {"def f (v: [R]) : R = reduce (x, y. x * y) 1 v", NULL, {"[1, 0, 2, 5, 3]"}, "[0, 30, 0, 0, 0]"},
    {"def f (v: [R]) : R = sum v", NULL, {"[1, 2, 3]"}, "[1, 1, 1]"},
    {"def f (v: [R]) (w: [R]) : R = dot v w", NULL, {"[1, 2]", "[3, 4]"}, "([3, 4], [1, 2])"},
    {"def f (x: R) : R = x * x", NULL, {"3"}, "6"},
    {"def f (v: [R]) : R = sum (map2 (*) v v)", NULL, {"[1, 2, -3]"}, "[2, 4, -6]"},
    /* a free variable in a map2 body: d/ds = n */
    {"def f (s: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s) v w)", NULL, {"7", "[1, 2, 3]", "[4, 5, 6]"},
     "(3, [0, 0, 0], [0, 0, 0])"},
    {"def f (s: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s) v w)", "s", {"7", "[]", "[]"}, "0"},
    /* constants: a zero gradient of the right shape */
    {"def f (x: R) (v: [R]) (p: (R, [R])) : R = 3 + length v", NULL, {"1", "[1, 2]", "(1, [2, 3, 4])"},
     "(0, [0, 0], (0, [0, 0, 0]))"},
    /* Horner's rule: value 1 x^2 + 2 x + 3, d/dx = 2x + 2, d/dcs = [x^2, x, 1] */
    {"def f (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) 0 cs", NULL, {"2", "[1, 2, 3]"}, "(6, [4, 2, 1])"},
    {"def f (v: [R]) : R = sum (map relu v)", NULL, {"[-1, 2, -3, 4]"}, "[0, 1, 0, 1]"},
    {"def f (x: R) (y: R) (z: R) : R = x * y * z", "z x", {"2", "3", "5"}, "(6, 15)"},
    {"def f (x: R) (y: R) (z: R) : R = x * y * z", "y", {"2", "3", "5"}, "10"},
    {"def f (b: B) (x: R) : R = if b then x * x else x", NULL, {"true", "3"}, "6"},
    {"def f (b: B) (x: R) : R = if b then x * x else x", NULL, {"false", "3"}, "1"},
    /* only the taken branch is differentiated: the other would be nan */
    {"def f (x: R) : R = if x > 0 then sqrt x else 0 - x", NULL, {"-4"}, "-1"},
    {"def f (x: R) : R = if x > 0 then log x else x * x", NULL, {"-3"}, "-6"},
    {"def f (p: (R, [R])) : R = p.1 * sum p.2", NULL, {"(2, [3, 4])"}, "(7, [2, 2])"},
    {"def f (x: R) (v: [R]) : R = sum (map2 (*) (replicate (length v) x) v)", NULL, {"2", "[1, 2, 3]"},
     "(6, [2, 2, 2])"},
    {"def f (x: R) (y: R) : R = sum (map (a. a * a) [x, y, x])", NULL, {"2", "3"}, "(8, 6)"},
    {"def f (x: R) (v: [R]) : R = reduce (max) x v", NULL, {"5", "[1, 2]"}, "(1, [0, 0])"},
    {"def f (x: R) (v: [R]) : R = reduce (max) x v", NULL, {"0", "[1, 3, 2]"}, "(0, [0, 1, 0])"},
    /* reduce with a free variable: sum v + (n - 1) s */
    {"def f (s: R) (v: [R]) : R = reduce (a, b. a + b + s) (0 - s) v", NULL, {"0.5", "[1, 2, 3]"}, "(2, [1, 1, 1])"},
    {"def f (s: R) (v: [R]) : R = reduce (a, b. a + b + s) (0 - s) v", NULL, {"0.5", "[]"}, "(-1, [])"},
    /* the conventions of the non-smooth builtins, at their kinks */
    {"def f (a: R) (b: R) : R = max a b", NULL, {"1", "1"}, "(1, 0)"},
    {"def f (a: R) (b: R) : R = min a b", NULL, {"1", "1"}, "(1, 0)"},
    {"def f (a: R) : R = abs a", NULL, {"0"}, "1"},
    {"def f (a: R) : R = abs a", NULL, {"-2"}, "-1"},
    {"def f (a: R) : R = floor a", NULL, {"2.5"}, "0"},
    {"def f (a: R) : R = a ^ 2", NULL, {"-3"}, "-6"},
    {"def f (a: R) : R = a ^ 3", NULL, {"-1"}, "3"},
    /* no parameters in use: zero, not an error */
    {"def f (a: R) (v: [R]) : R = 0", NULL, {"1", "[]"}, "(0, [])"},
};

#define NEXACT ((int)(sizeof exact / sizeof exact[0]))

START_TEST(test_exact) {
  const Exact *e = &exact[_i];
  GcProgram *p = load("<exact>", e->src, true, e->src);
  int nargs = 0;
  while (nargs < 4 && e->args[nargs]) nargs++;
  const char *unf = gc_grad_str(p, e->wrt, REV_UNF, nargs, e->args);
  const char *dir = gc_grad_str(p, e->wrt, REV_DIRECT, nargs, e->args);
  ck_assert_msg(strcmp(unf, e->want) == 0, "%s (wrt %s): UNF path gives %s, expected %s", e->src,
                e->wrt ? e->wrt : "all", unf, e->want);
  ck_assert_msg(strcmp(dir, e->want) == 0, "%s (wrt %s): direct path gives %s, expected %s", e->src,
                e->wrt ? e->wrt : "all", dir, e->want);
}
END_TEST

/* The source of `def f (x: R) : R = let a1 = x + x in ... in aN`. */
static char *doubling_chain(int n) {
  char *s = "def f (x: R) : R =\n  let a1 = x + x in\n";
  for (int i = 2; i <= n; i++) s = una_sprintf("%s  let a%d = a%d + a%d in\n", s, i, i - 1, i - 1);
  return una_sprintf("%s  a%d\n", s, n);
}

/* A chain of 50 doublings: the gradient is exactly 2^50, and the derived
   gradient grows linearly with the chain. */
START_TEST(test_doubling_chain) {
  GcProgram *p = load("<chain>", doubling_chain(50), false, NULL);
  const char *args[] = {"0.75"};
  ck_assert_str_eq(gc_grad_str(p, NULL, REV_UNF, 1, args), "1125899906842624");
  ck_assert_str_eq(gc_grad_str(p, NULL, REV_DIRECT, 1, args), "1125899906842624");
  for (int path = 0; path < 2; path++) {
    long size[2];
    for (int k = 0; k < 2; k++) {
      GcProgram *q = load("<chain>", doubling_chain(k == 0 ? 200 : 400), false, NULL);
      int wrt = 0;
      size[k] = tl_term_size(rev_grad(q->f, &wrt, 1, path == 0 ? REV_UNF : REV_DIRECT)->body);
    }
    ck_assert_msg(size[1] <= 2.2 * size[0], "%s path: the gradient of 400 lets has %ld nodes, of 200 lets %ld",
                  path == 0 ? "UNF" : "direct", size[1], size[0]);
  }
}
END_TEST

/* ---- constructs that cannot be differentiated yet ---- */

typedef struct Unsupported {
  const char *src;
  const char *want[2]; /* the error text on the UNF path, on the direct path */
} Unsupported;

static const Unsupported unsupported[] = {
    {"def f (v: [R]) : R = sum (reduce_by_index (replicate 2 0) (max) (-inf) [0, 1] v)",
     {"<u>:1:27: error: grad: reduce_by_index is differentiable with the operator (+) only",
      "<u>:1:27: error: grad: the direct path does not cover reduce_by_index (the UNF path does)"}},
    {"def f (v: [R]) : R = sum (map (p. if p.2 then p.1 else 0) (map (x. (x, x > 0)) v))",
     {NULL, "<u>:1:60: error: grad: the direct path does not cover arrays of tuples (the UNF path does)"}},
};

#define NUNSUPPORTED ((int)(sizeof unsupported / sizeof unsupported[0]))

START_TEST(test_unsupported) {
  const Unsupported *u = &unsupported[_i];
  GcProgram *p = load("<u>", u->src, true, NULL);
  for (int path = 0; path < 2; path++) {
    FeTry t;
    int wrt = 0;
    if (!u->want[path]) continue; /* this path covers it */
    if (fe_try(&t)) {
      rev_grad(p->f, &wrt, 1, path == 0 ? REV_UNF : REV_DIRECT);
      fe_untry(&t);
      ck_abort_msg("%s: no error on the %s path", u->src, path == 0 ? "UNF" : "direct");
    }
    ck_assert_str_eq(fe_error_text(t.err), u->want[path]);
  }
}
END_TEST

/* ---- the harness itself ---- */

/* Finite differences of known functions. */
START_TEST(test_fd_known) {
  GcProgram *p = load("<fd>", "def f (x: R) (v: [R]) : R = sin x * exp x + sum (map (a. a * a * a) v)", true, NULL);
  Value args[2] = {val_real(0.7), gc_value(p, "[1, -2, 0.5]")};
  args[1] = tl_copy_value(args[1]);
  double d = gc_fd(p->f, args, &args[0].u.r, 1e-3);
  double want = (cos(0.7) + sin(0.7)) * exp(0.7);
  ck_assert_msg(fabs(d - want) < 1e-10, "fd %.17g, want %.17g", d, want);
  ck_assert(args[0].u.r == 0.7);
  for (int i = 0; i < 3; i++) {
    double x = args[1].u.a->r[i];
    d = gc_fd(p->f, args, &args[1].u.a->r[i], 1e-3 * fmax(1, fabs(x)));
    ck_assert_msg(fabs(d - 3 * x * x) < 1e-9 * fmax(1, 3 * x * x), "fd %.17g, want %.17g", d, 3 * x * x);
    ck_assert(args[1].u.a->r[i] == x);
  }
}
END_TEST

/* Random values have the parameter's shape; copies are independent. */
START_TEST(test_values) {
  GcProgram *p = load("<v>", "def f (p: ((R, [R]), B)) : R = 1", false, NULL);
  GenRng r = gen_rng(5);
  Value v = gc_random_value(&r, p->f->params[0]->type, 3, -1, 1);
  ck_assert_int_eq(v.kind, V_TUPLE);
  Value a = v.u.t->items[0].u.t->items[1];
  ck_assert_int_eq((int)a.u.a->len, 3);
  ck_assert(!a.u.a->boxed);
  for (int i = 0; i < 3; i++) ck_assert(a.u.a->r[i] >= -1 && a.u.a->r[i] < 1);
  Value c = tl_copy_value(v);
  ck_assert(val_equal(c, v));
  c.u.t->items[0].u.t->items[1].u.a->r[1] += 1;
  ck_assert(!val_equal(c, v));
  int wrt[2];
  ck_assert_int_eq(gc_wrt(p, NULL, wrt), 1);
  ck_assert_int_eq(gc_wrt(p, "q", wrt), -1);
}
END_TEST

/* A wrong gradient is reported with the component, seed and program. */
static Def *wrong_derive(const Def *f, const int *wrt, int nwrt, RevPath path, void *ud) {
  char *err = NULL;
  GcProgram *g = gc_load("<wrong>", (const char *)ud, true, "g", &err);
  ASSERT(g != NULL);
  return g->f;
}

START_TEST(test_catches_wrong) {
  GcOptions o = gc_default_options();
  o.derive = wrong_derive;
  const char *f = "def f (x: R) (v: [R]) : R = sin x * sum v";
  /* right: passes */
  o.derive_ud = "def g (x: R) (v: [R]) : (R, [R]) = (cos x * sum v, replicate (length v) (sin x))";
  char *rep = gc_check("<h>", f, "f", 1, &o, NULL);
  ck_assert_msg(rep == NULL, "%s", rep);
  /* wrong in one element of v: finite differences catch it */
  o.derive_ud = "def g (x: R) (v: [R]) : (R, [R]) = "
                "(cos x * sum v, map2 (a, i. if i == 2 then 1.00001 * sin x else sin x) v (iota (length v)))";
  rep = gc_check("<h>", f, "f", 1, &o, NULL);
  ck_assert(rep != NULL);
  ck_assert_msg(strstr(rep, "finite differences differ at v[2]") && strstr(rep, "seed: 1") &&
                    strstr(rep, "program:\ndef f (x: R)"),
                "%s", rep);
  /* lenient (random programs) still catches it: f is smooth there */
  o.lenient = true;
  rep = gc_check("<h>", f, "f", 1, &o, NULL);
  ck_assert_msg(rep && strstr(rep, "finite differences differ at v[2]"), "%s", rep ? rep : "passed");
  o.lenient = false;
  /* the wrong shape */
  o.derive_ud = "def g (x: R) (v: [R]) : (R, [R]) = (cos x * sum v, [sin x])";
  rep = gc_check("<h>", f, "f", 1, &o, NULL);
  ck_assert(rep != NULL);
  ck_assert_msg(strstr(rep, "gradient for v, [") && strstr(rep, "does not have the shape"), "%s", rep);
}
END_TEST

Suite *suite_gradcheck(void) {
  Suite *s = suite_create("gradcheck");
  TCase *tc = tcase_create("gradcheck");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_fd_known);
  tcase_add_test(tc, test_values);
  tcase_add_test(tc, test_catches_wrong);
  tcase_add_loop_test(tc, test_corpus, 0, NCASES);
  tcase_add_loop_test(tc, test_long_arrays, 0, NLONG);
  tcase_add_loop_test(tc, test_exact, 0, NEXACT);
  tcase_add_test(tc, test_doubling_chain);
  tcase_add_loop_test(tc, test_unsupported, 0, NUNSUPPORTED);
  suite_add_tcase(s, tc);
  return s;
}
