/* test_unf_path.c: gradients on the UNF path (UNF, D_rho, UNF^-1) against
   hand-derived values and central finite differences (relative 1e-6):
   the paper's examples, fan-out, a variable used twice, free variables in
   lambda bodies, a doubling chain of 50 lets (exactly 2^50), constants
   (zeros of the right shape), prod with zeros (exact, no NaN), Horner's
   rule by foldl, if, partial gradients (wrt), the errors for what grad
   does not support, the size of the output (linear), and :show. */
#include <check.h>
#include <math.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/ir/retype.h"
#include "../../frontend/repl/session.h"
#include "../../reverse/reverse.h"
#include "../suites.h"
#include "gradcheck.h"
#include "../testlib.h"

/* The parameter indexes named in wrt ("x y"), or every non-B one. */
static int wrt_of(const Def *f, const char *names, int *wrt) {
  int n = 0;
  if (!names) {
    for (int i = 0; i < f->nparams; i++)
      if (f->params[i]->type->kind != TY_BOOL) wrt[n++] = i;
    return n;
  }
  char *copy = una_strdup(names);
  for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) {
    int i = 0;
    while (i < f->nparams && strcmp(f->params[i]->name, w) != 0) i++;
    ck_assert_int_lt(i, f->nparams);
    wrt[n++] = i;
  }
  return n;
}

/* The gradient of f at args on the UNF path. */
static Value grad_at(const Def *f, const int *wrt, int nwrt, Value *args) {
  Def *g = rev_grad(f, wrt, nwrt, REV_UNF);
  fe_retype(g); /* the type checker after the pass */
  return cpu_call(g, args);
}

/* Checks grad f (wrt names, or all) at args against central differences,
   relative 1e-6; returns the gradient. */
static Value check_fd_wrt(const char *text, const char *args, const char *names) {
  Session *s = tl_session_with(text);
  Def *f = tl_def(s, "f");
  Value *a = tl_args(tl_ev_in(s, args), f->nparams);
  int *wrt = NEW_ARRAY(int, f->nparams);
  int nwrt = wrt_of(f, names, wrt);
  Value g = grad_at(f, wrt, nwrt, a);
  int ng = tl_nreals(g);
  int at = 0;
  for (int w = 0; w < nwrt; w++) {
    int p = wrt[w];
    for (int i = 0; i < tl_nreals(a[p]); i++) {
      double fd = tl_fd(f, a, p, i, NULL);
      ck_assert_int_lt(at, ng);
      double got = *tl_real_at(&g, at++);
      ck_assert_msg(tl_near(got, fd, 1e-6),
                    "%s at %s: component %d of parameter %s: gradient %.17g, differences %.17g",
                    text, args, i, f->params[p]->name, got, fd);
    }
  }
  ck_assert_int_eq(at, ng);
  return g;
}

static Value check_fd(const char *text, const char *args) { return check_fd_wrt(text, args, NULL); }

static void assert_value(Value v, const char *expect) {
  ck_assert_str_eq(val_to_string(v), expect);
}

/* ---- the paper's examples ---- */

START_TEST(example_11) {
  /* w2 = x1^2 x2: (2 x1 x2, x1^2, 0) */
  const char *p = "def f (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2";
  assert_value(check_fd(p, "(3, 5, 7)"), "(30, 9, 0)");
  assert_value(check_fd(p, "(-1.5, 0.25, 2)"), "(-0.75, 2.25, 0)");
}
END_TEST

START_TEST(example_cos_pair) {
  /* example 4.1's term, summed: x3 + cos x3 */
  assert_value(check_fd("def f (x1: R) (x2: R) (x3: R) : R = let p = (x3, cos x3) in p.1 + p.2",
                        "(1, 2, 0.5)"),
               una_sprintf("(0, 0, %s)", val_to_string(val_real(1 - sin(0.5)))));
}
END_TEST

START_TEST(examples_prod_sum_dot) {
  assert_value(check_fd("def f (a: [R]) : R = prod a", "[1, 2, 3, 4]"), "[24, 12, 8, 6]");
  assert_value(check_fd("def f (a: [R]) : R = reduce (*) 1 a", "[1.5, -2, 0.5]"), "[-1, 0.75, -3]");
  assert_value(check_fd("def f (a: [R]) : R = sum a", "[1, 2, 3]"), "[1, 1, 1]");
  assert_value(check_fd("def f (a: [R]) (b: [R]) : R = dot a b", "([1, 2, 3], [4, 5, 6])"),
               "([4, 5, 6], [1, 2, 3])");
  assert_value(check_fd("def f (a: [R]) : R = sum a", "[]"), "[]");
  assert_value(check_fd("def f (a: [R]) : R = prod a", "[]"), "[]");
}
END_TEST

/* ---- the seeds' pitfalls ---- */

START_TEST(fan_out) {
  Value g = check_fd("def f (x: R) : R = let a = exp x in a * sin a + a", "0.5");
  double a = exp(0.5);
  double expect = (sin(a) + a * cos(a) + 1) * a;
  ck_assert(fabs(g.u.r - expect) <= 1e-15 * fabs(expect));
}
END_TEST

START_TEST(same_variable_twice) {
  assert_value(check_fd("def f (x: R) : R = x * x", "3"), "6");
  assert_value(check_fd("def f (v: [R]) : R = sum (map2 (*) v v)", "[1, 2, 3]"), "[2, 4, 6]");
  assert_value(check_fd("def f (x: R) : R = let y = x in y * x + x", "2"), "5");
}
END_TEST

START_TEST(free_variables_in_bodies) {
  /* sum (map2 (a, b. s) v w): d/ds = n */
  assert_value(check_fd("def f (v: [R]) (w: [R]) (s: R) : R = sum (map2 (a, b. s) v w)",
                        "([1, 2, 3], [4, 5, 6], 2)"),
               "([0, 0, 0], [0, 0, 0], 3)");
  check_fd("def f (v: [R]) (s: R) : R = sum (map (a. sin (a * s)) v)", "([1, 2, 3], 0.7)");
  check_fd("def f (v: [R]) (w: [R]) (s: R) (t: R) : R = sum (map2 (a, b. a * s + b * t * s) v w)",
           "([1, 2], [3, 4], 0.5, -1.5)");
  check_fd("def f (v: [R]) (s: R) : R = let k = s * 2 in sum (map (a. a * k + s) v)",
           "([1, 2, 3], 0.3)");
  check_fd("def f (v: [R]) (s: R) : R = reduce (a, b. a + b * s) 0 v", "([1, 2, 3], 1.3)");
  check_fd("def f (v: [R]) (s: R) : R = foldl (a, b. a * s + sin b) 1 v", "([1, 2, 3], 0.9)");
}
END_TEST

START_TEST(doubling_chain) {
  char *p = una_strdup("def f (x: R) : R =\n let a1 = x + x in\n");
  for (int i = 2; i <= 50; i++) p = una_sprintf("%s let a%d = a%d + a%d in\n", p, i, i - 1, i - 1);
  p = una_sprintf("%s a50\n", p);
  Session *s = tl_session_with(p);
  Def *f = tl_def(s, "f");
  int wrt[1] = {0};
  Value x = val_real(0.3);
  Value g = grad_at(f, wrt, 1, &x);
  ck_assert(g.kind == V_REAL && g.u.r == ldexp(1, 50));
}
END_TEST

START_TEST(constants_zero_shape) {
  assert_value(check_fd("def f (x: R) (v: [R]) (t: (R, [R])) (b: B) : R = 3",
                        "(1, [1, 2], (5, [1, 2, 3]), true)"),
               "(0, [0, 0], (0, [0, 0, 0]))");
  assert_value(check_fd("def f (x: R) (v: [R]) : R = length v + floor x", "(1.5, [1, 2])"),
               "(0, [0, 0])");
  assert_value(check_fd("def f (x: R) (v: [R]) : R = if length v > 1 then 2 else x", "(1.5, [1, 2])"),
               "(0, [0, 0])");
}
END_TEST

START_TEST(prod_zeros_exact) {
  Session *s = tl_session_with("def f (a: [R]) : R = prod a");
  Def *f = tl_def(s, "f");
  int wrt[1] = {0};
  const char *cases[][2] = {
      {"[2, 3, 4]", "[12, 8, 6]"},
      {"[2, 0, 4]", "[0, 8, 0]"},
      {"[0, 3, 0, 5]", "[0, 0, 0, 0]"},
      {"[0, 0, 0]", "[0, 0, 0]"},
      {"[0]", "[1]"},
      {"[inf, 0, 2]", "[0, nan, 0]"}, /* inf * 2 * 0: the true partials */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    Value a = tl_ev_in(s, cases[i][0]);
    Value g = grad_at(f, wrt, 1, &a);
    if (i < 5) assert_value(g, cases[i][1]);
  }
}
END_TEST

START_TEST(horner_foldl) {
  /* x^2 + 2x + 3 at x = 2: d/dx = 2x + 2, d/dcs = (x^2, x, 1) */
  assert_value(check_fd("def f (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) 0 cs",
                        "(2, [1, 2, 3])"),
               "(6, [4, 2, 1])");
  check_fd("def f (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) x cs", "(0.7, [1, -2, 3, 0.5])");
}
END_TEST

START_TEST(conditionals) {
  const char *p = "def f (x: R) : R = if x > 0 then x * x else sin x";
  assert_value(check_fd(p, "3"), "6");
  assert_value(check_fd(p, "-1"), una_sprintf("%s", val_to_string(val_real(cos(-1.0)))));
  check_fd("def f (x: R) (y: R) (b: B) : R = let t = if b then (x * y, x) else (y, y * y) in t.1 * t.2",
           "(1.5, 2.5, true)");
  check_fd("def f (x: R) (y: R) (b: B) : R = let t = if b then (x * y, x) else (y, y * y) in t.1 * t.2",
           "(1.5, 2.5, false)");
  check_fd("def f (v: [R]) (s: R) : R = sum (if s > 0 then map (a. a * s) v else v)", "([1, 2], 3)");
  /* the untaken branch would be nan: only the taken one is differentiated */
  assert_value(check_fd("def f (x: R) : R = if x > 0 then log x else 0", "2"), "0.5");
  assert_value(check_fd("def f (x: R) : R = if x > 0 then log x else x", "-2"), "1");
}
END_TEST

START_TEST(partial_gradients) {
  const char *p = "def f (x: R) (v: [R]) (y: R) : R = x * sum v + y * y";
  assert_value(check_fd_wrt(p, "(2, [1, 2], 3)", "y"), "6");
  assert_value(check_fd_wrt(p, "(2, [1, 2], 3)", "v x"), "([2, 2], 3)");
  assert_value(check_fd_wrt(p, "(2, [1, 2], 3)", "y x v"), "(6, 3, [2, 2])");
  assert_value(check_fd(p, "(2, [1, 2], 3)"), "(3, [2, 2], 6)");
}
END_TEST

/* Every construct, against finite differences. */
START_TEST(constructs_fd) {
  check_fd("def f (x: R) (y: R) : R = -x + sin x - cos y * tan x + exp x / log y", "(0.4, 2.5)");
  check_fd("def f (x: R) (y: R) : R = sqrt x + tanh y - sigmoid x + abs (-y) + floor x", "(2.5, 1.2)");
  check_fd("def f (x: R) (y: R) : R = pow x y + max x y - min x y + x ^ 2 + x / y", "(1.5, 2.5)");
  check_fd("def f (t: (R, (R, R))) : R = let (a, b) = t in a * b.1 - b.2 * t.1", "(2, (3, 0.5))");
  check_fd("def f (x: R) (y: R) : R = let p = (x, (y, x * y)) in p.2.2 * p.1 + p.2.1", "(1.1, 2.2)");
  check_fd("def f (x: R) : R = sum (replicate 3 (x * x))", "1.5");
  check_fd("def f (x: R) (y: R) : R = sum (map (a. a * a) [x, y * 2, x * y, 3])", "(1.5, -0.5)");
  check_fd("def f (v: [R]) : R = logsumexp v", "[0.5, 1, -2]");
  check_fd("def f (v: [R]) : R = norm v + mean v + variance v", "[0.5, 1, -2, 4]");
  check_fd("def f (v: [R]) : R = maximum v + minimum v", "[0.5, 1, -2, 4]");
  check_fd("def f (v: [R]) (w: [R]) : R = sum (map2 (a, b. if a > b then a * b else a + b) v w)",
           "([1, 5, 2], [3, 1, 4])");
  check_fd("def f (x: R) (b: B) : R = if b && x > 1 then x * 3 else x * x", "(2, true)");
  check_fd("def g (a: R) (b: R) : R = a * exp b\ndef f (x: R) (y: R) : R = g (g x y) x", "(0.3, 0.2)");
  check_fd("def f (v: [R]) : R = let w = map (a. a + 1) v in dot v w + sum w", "[1, 2, 3]");
  check_fd("def f (x: R) : R = let t = (x, [x, 2]) in sum t.2 * t.1", "1.7");
  check_fd("let g0 = 2\ndef f (x: R) : R = x * g0", "1.5");
  /* nested combinators: the ∇ of a body that itself maps, reduces, folds */
  check_fd("def f (v: [R]) (w: [R]) : R = sum (map (a. sum (map (b. a * b * b) v)) w)",
           "([1, 2], [0.5, -1, 3])");
  check_fd("def f (v: [R]) (s: R) : R = reduce (+) 0 (map (a. foldl (c, b. c * a + b) s v) v)",
           "([0.5, 1.5, -0.5], 0.3)");
  check_fd("def f (v: [R]) (s: R) : R = sum (map2 (a, b. if a > b then prod [a, s, b] else s) v (map (x. x * s) v))",
           "([0.5, 1.5, -0.5], 1.3)");
  check_fd("def f (v: [R]) (t: (R, R)) : R = let (p, q) = t in foldl (c, b. c * p + sum (map (x. x * q * b) v)) q v",
           "([0.5, 1.5, -0.5], (0.7, 1.1))");
}
END_TEST

/* ---- errors ---- */

static char *grad_error(const char *text, const char *fname) {
  Session *s = tl_session_with(text);
  Def *f = tl_def(s, fname);
  int *wrt = NEW_ARRAY(int, f->nparams);
  int nwrt = wrt_of(f, NULL, wrt);
  FeTry t;
  if (fe_try(&t)) {
    rev_grad(f, wrt, nwrt, REV_UNF);
    fe_untry(&t);
    ck_abort_msg("no error for %s", text);
  }
  return fe_error_text(t.err);
}

START_TEST(errors) {
  ck_assert_str_eq(grad_error("def f (v: [R]) : R = sum (reduce_by_index (replicate 2 0) (max) (-inf) [0, 1] v)", "f"),
                   "t.una:1:27: error: grad: reduce_by_index is differentiable with the operator (+) only");
}
END_TEST

/* Booleans beside reals (the tangent-type rule, LANGUAGE.md section 6):
   in values that depend on the parameters, in parameters (whose gradients
   have the tangent type: the reals in the same order) and in a function
   called from the loss; the UNF path against finite differences, raw and
   at random points. */
static const char *const tangent_cases[] = {
    "def f (v: [R]) : R = sum (map (p. if p.2 then p.1 * p.1 else sin p.1) (map (x. (x, x > 0)) v))",
    "def f (x: R) (y: R) : R = let p = (x * y, x > y, [x, y]) in if p.2 then p.1 * sum p.3 else exp p.1",
    "def f (v: [R]) : R = (foldl (a, x. if a.2 then (a.1 + x * x, true) else (a.1 * x, x > 0)) (1, false) v).1",
    "def f (x: R) : R = (loop (s, b) = (x, false) for i < 3 do if b then (s * 2, b) else (s * s, s > 0.5)).1",
    "def f (v: [R]) : R = sum (map (p. p.1) (scanl (a, x. (a.1 * 0.5 + x, x > 0)) (0, false) v))",
    "def f (v: [R]) : R = let (a, b) = unzip (map (x. (x * 3, x > 0)) v) in\n"
    "  foldl (s, p. if p.2 then s * p.1 else s + p.1) 1 (zip a b)",
    "def f (v: [(R, B)]) (w: (B, R)) : R = sum (map (p. if p.2 then p.1 * w.2 else p.1) v)",
    "def g (p: (R, B)) : (R, B) = (p.1 * p.1, p.2 && p.1 > 0)\n"
    "def f (x: R) (c: B) : R = let q = g (x, c) in if q.2 then q.1 else 2 * q.1",
};

START_TEST(tangent_types) {
  GcOptions o = gc_default_options();
  o.no_direct = true;
  const char *src = tangent_cases[_i];
  char *rep = gc_check("<tau>", src, "f", 77 + (uint64_t)_i, &o, NULL);
  ck_assert_msg(rep == NULL, "%s: %s", src, rep);
}
END_TEST

/* A function that calls a gradient is differentiated like any other: the
   gradient it calls (optimized, first-order) is inlined and differentiated
   in turn. */
START_TEST(gradient_of_a_gradient) {
  Session *s = tl_session_with("def g (x: R) : R = x * x * x\ndef h (x: R) : R = grad g x\n"
                               "def f (x: R) : R = h x + 1");
  Value v = tl_ev_in(s, "grad f 2");
  ck_assert(v.kind == V_REAL && v.u.r == 12); /* d/dx 3x^2 */
}
END_TEST

/* ---- cost: the output is linear in the program ---- */

START_TEST(linear_output) {
  long sizes[2];
  for (int k = 0; k < 2; k++) {
    int n = k ? 8000 : 1000;
    size_t cap = (size_t)n * 60 + 100;
    char *text = malloc(cap);
    size_t m = (size_t)snprintf(text, cap, "def f (x: R) (y: R) : R =\n let a0 = x * y in\n");
    for (int i = 1; i < n; i++)
      m += (size_t)snprintf(text + m, cap - m, " let a%d = sin a%d * %s in\n", i, i - 1,
                            i % 3 ? "x" : "y");
    snprintf(text + m, cap - m, " a%d\n", n - 1);
    Session *s = tl_session_with(text);
    free(text);
    Def *f = tl_def(s, "f");
    int wrt[2] = {0, 1};
    Def *g = rev_grad(f, wrt, 2, REV_UNF);
    sizes[k] = tl_term_size(g->body);
    Value args[2] = {val_real(0.9), val_real(1.1)};
    Value v = cpu_call(g, args);
    ck_assert(v.kind == V_TUPLE && isfinite(v.u.t->items[0].u.r));
  }
  /* 8 times the program, 8 times the output (give or take the constant) */
  ck_assert_msg(sizes[1] <= 8 * sizes[0] + 100, "1000 lets: %ld nodes, 8000 lets: %ld", sizes[0],
                sizes[1]);
}
END_TEST

/* ---- the session: grad evaluates, :show prints the stages ---- */

/* What text prints (output and errors) in a fresh session with the
   prelude, every item run. */
static char *run_text(const char *text) { return tl_capture_merged(tl_session_with(""), text, false); }

/* :show target ex after its header and Y: the primal lets and the one
   continuation. */
#define EX_TARGET_REST \
  "  let w1 = x1 * x2 in\n" \
  "  let w2 = w1 * x1 in\n" \
  "  let (y, K) = (w2, fun (dx1_2, dx2_2, dx3_2, z) -> let dw1 = x1 * z in " \
  "let dx1_3 = w1 * z in let dx1_4 = dx1_2 + dx1_3 in let dx1_5 = x2 * dw1 in " \
  "let dx2_3 = x1 * dw1 in let dx2_4 = dx2_2 + dx2_3 in let dx1_6 = dx1_4 + dx1_5 in " \
  "Y (dx1_6, dx2_4, dx3_2)) in\n" \
  "  K (0, 0, 0, 1)\n"

START_TEST(session_grad_and_show) {
  const char *def = "def ex (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2\n";
  ck_assert_str_eq(run_text(una_sprintf("%sgrad ex 3 5 7\n(grad ex wrt x2) 3 5 7\n"
                                        "def h (x: R) : R = ((grad ex wrt x1 x3) x 1 2).1\nh 4\n",
                                        def)),
                   "(30, 9, 0)\n9\n8\n");
  ck_assert_str_eq(run_text(una_sprintf("%s:show unf ex\n", def)),
                   "var[R^3;1];\nvar[R^4;2];\nmul[R^3];\nproj[R^3;R,R;R];\nvar[R^4;4];\n"
                   "var[R^5;1];\nmul[R^4];\nproj[R^4;R,R;R];\nvar[R^5;5];\nproj[R^4;R;R];\n"
                   "proj[R^3;R;R]\n");
  ck_assert_str_eq(run_text(una_sprintf("%s:show source ex\n", def)),
                   "def ex (x1: R) (x2: R) (x3: R) : R =\n  let w1 = x1 * x2 in\n"
                   "  let w2 = w1 * x1 in\n  w2\n");
  ck_assert_str_eq(run_text(una_sprintf("%s:show target ex\n", def)),
                   "def grad_ex (x1: R) (x2: R) (x3: R) : (R, R, R) =\n"
                   "  let Y = fun (dx1, dx2, dx3) -> (dx1, dx2, dx3) in\n" EX_TARGET_REST);
  ck_assert_str_eq(run_text(una_sprintf("%s:show target (grad ex wrt x2 x1)\n", def)),
                   "def grad_ex (x1: R) (x2: R) (x3: R) : (R, R) =\n"
                   "  let Y = fun (dx1, dx2) -> (dx2, dx1) in\n"
                   "  let w1 = x1 * x2 in\n"
                   "  let w2 = w1 * x1 in\n"
                   "  let (y, K) = (w2, fun (dx1_2, dx2_2, z) -> let dw1 = x1 * z in "
                   "let dx1_3 = w1 * z in let dx1_4 = dx1_2 + dx1_3 in let dx1_5 = x2 * dw1 in "
                   "let dx2_3 = x1 * dw1 in let dx2_4 = dx2_2 + dx2_3 in let dx1_6 = dx1_4 + dx1_5 in "
                   "Y (dx1_6, dx2_4)) in\n"
                   "  K (0, 0, 1)\n");
  char *d = run_text(una_sprintf("%s:show dunf (grad ex wrt x2)\n", def));
  /* the parameters not named after wrt are constants (cst) */
  ck_assert_ptr_nonnull(strstr(d, "<proj[R;(R)->rho;[]]; cst[R;x1], proj[[];R;(R)->rho] o "
                                  "(proj[R;(R)->rho;[]]; J^T cst[R;x1])>;\n"));
  ck_assert_str_eq(run_text(una_sprintf("%s:show cotangent ex\n", def)),
                   "t.una:2:7: error: unknown stage 'cotangent' (expected source, unf, dunf, "
                   "target, grad or direct)\n");
  ck_assert_str_eq(run_text(":show unf nosuch\n"), "t.una:1:11: error: unknown function 'nosuch'\n");
}
END_TEST

Suite *suite_unf_path(void) {
  Suite *s = suite_create("unf_path");
  TCase *tc = tcase_create("examples");
  tcase_add_test(tc, example_11);
  tcase_add_loop_test(tc, tangent_types, 0, (int)(sizeof tangent_cases / sizeof tangent_cases[0]));
  tcase_add_test(tc, example_cos_pair);
  tcase_add_test(tc, examples_prod_sum_dot);
  suite_add_tcase(s, tc);
  tc = tcase_create("pitfalls");
  tcase_add_test(tc, fan_out);
  tcase_add_test(tc, same_variable_twice);
  tcase_add_test(tc, free_variables_in_bodies);
  tcase_add_test(tc, doubling_chain);
  tcase_add_test(tc, constants_zero_shape);
  tcase_add_test(tc, prod_zeros_exact);
  tcase_add_test(tc, horner_foldl);
  tcase_add_test(tc, conditionals);
  tcase_add_test(tc, partial_gradients);
  tcase_add_test(tc, constructs_fd);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, errors);
  tcase_add_test(tc, gradient_of_a_gradient);
  suite_add_tcase(s, tc);
  tc = tcase_create("cost");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, linear_output);
  suite_add_tcase(s, tc);
  tc = tcase_create("session");
  tcase_add_test(tc, session_grad_and_show);
  suite_add_tcase(s, tc);
  return s;
}
