/* test_eval.c: the CPU interpreter on checked programs (parser + checker +
   prelude): every builtin and combinator, arrays of tuples, nested and
   boolean arrays, run-time errors and their locations, and the three paths
   of every combinator (monoid loop, block kernel, generic per-element
   evaluation) giving bit-identical results on random data of sizes 0, 1,
   255, 256, 257 and 10^5. */
#include <check.h>
#include <math.h>
#include <unistd.h>

#include "../../backend/array_int.h"
#include "../../backend/array_ops.h"
#include "../../backend/eval.h"
#include "../../backend/kernel.h"
#include "../../backend/parallel.h"
#include "../../frontend/repl/session.h"
#include "../suites.h"
#include "../testlib.h"

static void setup(void) {
  tl_setup();
}

static void teardown(void) {
  tl_teardown();
}

static const char *show(const char *text) { return val_to_string(tl_ev(text)); }

#define EXPECT(text, want) ck_assert_str_eq(show(text), want)

/* The error text that evaluating text raises ("" when none). */
static const char *err(const char *text) {
  FeTry t;
  if (fe_try(&t)) {
    cpu_call(tl_check(text), NULL);
    fe_untry(&t);
    return "";
  }
  return fe_error_text(t.err);
}

/* a and b are equal or neighbours */
static bool within_ulp(double a, double b) { return a == b || nextafter(a, b) == b; }

/* sin, cos, tan and tanh are SLEEF's (vmath.h), within an ulp of the C
   library's */
START_TEST(scalars) {
  double xs[] = {0.5, -1.25, 3, 0, 1e-3};
  for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
    double x = xs[i];
    char *n = una_sprintf("(%.17g)", x);
    ck_assert(tl_ev(una_sprintf("sin %s", n)).u.r == cpu_sin(x) && within_ulp(cpu_sin(x), sin(x)));
    ck_assert(tl_ev(una_sprintf("cos %s", n)).u.r == cpu_cos(x) && within_ulp(cpu_cos(x), cos(x)));
    ck_assert(tl_ev(una_sprintf("tan %s", n)).u.r == cpu_tan(x) && within_ulp(cpu_tan(x), tan(x)));
    ck_assert(tl_ev(una_sprintf("exp %s", n)).u.r == exp(x));
    ck_assert(tl_ev(una_sprintf("tanh %s", n)).u.r == cpu_tanh(x) && within_ulp(cpu_tanh(x), tanh(x)));
    ck_assert(tl_ev(una_sprintf("abs %s", n)).u.r == fabs(x));
    ck_assert(tl_ev(una_sprintf("floor %s", n)).u.r == floor(x));
    ck_assert(tl_ev(una_sprintf("neg %s", n)).u.r == -x);
    ck_assert(tl_ev(una_sprintf("-%s", n)).u.r == -x);
    ck_assert(tl_ev(una_sprintf("sigmoid %s", n)).u.r == 1 / (1 + exp(-x)) ||
              fabs(tl_ev(una_sprintf("sigmoid %s", n)).u.r - 1 / (1 + exp(-x))) < 1e-16);
    if (x > 0) {
      ck_assert(tl_ev(una_sprintf("log %s", n)).u.r == log(x));
      ck_assert(tl_ev(una_sprintf("sqrt %s", n)).u.r == sqrt(x));
    }
    ck_assert(tl_ev(una_sprintf("%s ^ 3", n)).u.r == pow(x, 3));
    ck_assert(tl_ev(una_sprintf("pow %s 0.5", n)).u.r == pow(x, 0.5) || x < 0);
  }
  EXPECT("1 + 2 * 3 - 4 / 8", "6.5");
  EXPECT("1 / 0", "inf");
  EXPECT("-1 / 0", "-inf");
  EXPECT("0 / 0", "nan");
  EXPECT("log 0", "-inf");
  EXPECT("sqrt (-1)", "nan");
  EXPECT("sigmoid 800", "1");
  EXPECT("sigmoid (-800)", "0");
  EXPECT("sigmoid 0", "0.5");
  EXPECT("max 1 2", "2");
  EXPECT("min 1 2", "1");
  EXPECT("max nan 1", "nan");
  EXPECT("max 1 nan", "nan");
  EXPECT("min nan 1", "nan");
  EXPECT("min 1 nan", "nan");
  EXPECT("max 0 (-0)", "0");
  EXPECT("max (-0) 0", "-0");
  EXPECT("2 ^ -1", "0.5");
  EXPECT("floor (-0.5)", "-1");
}
END_TEST

START_TEST(booleans) {
  EXPECT("1 < 2", "true");
  EXPECT("1 <= 1", "true");
  EXPECT("1 > 2", "false");
  EXPECT("2 >= 3", "false");
  EXPECT("1 == 1", "true");
  EXPECT("1 != 1", "false");
  EXPECT("nan == nan", "false");
  EXPECT("nan != nan", "true");
  EXPECT("true == false", "false");
  EXPECT("true != false", "true");
  EXPECT("false == false", "true");
  EXPECT("!true", "false");
  EXPECT("true && false", "false");
  EXPECT("true || false", "true");
  /* short circuit: the right side would raise */
  EXPECT("false && length (iota (-1)) > 0", "false");
  EXPECT("true || length (iota (-1)) > 0", "true");
  ck_assert(strstr(err("true && length (iota (-1)) > 0"), "iota: size must be") != NULL);
}
END_TEST

START_TEST(lets_tuples_calls) {
  EXPECT("let x = 2 in let y = x * 3 in x + y", "8");
  EXPECT("let (a, b) = (1, 2) in a - b", "-1");
  EXPECT("let (a, b, c) = (1, (2, true), [3]) in (c, b.2, a)", "([3], true, 1)");
  EXPECT("(1, (2, 3)).2.1", "2");
  EXPECT("fst (1, 2) + snd (1, 2)", "3");
  EXPECT("if 1 < 2 then (1, [2]) else (3, [])", "(1, [2])");
  EXPECT("if 1 > 2 then 1 else if 2 > 3 then 2 else 3", "3");
  EXPECT("[1 + 1, 2 * 2]", "[2, 4]");
  EXPECT("[[1], [], [2, 3]]", "[[1], [], [2, 3]]");
  EXPECT("[]", "[]");
  EXPECT("[true, 1 < 0]", "[true, false]");
  EXPECT("[(1, true)]", "[(1, true)]");
  tl_run("def sq (x: R) : R = x * x\n"
         "def both (x: R) (y: R) : (R, R) = (sq x, sq y)\n"
         "def none : R = 42\n"
         "let g = 10\n"
         "let (p, q) = (1, [2, 3])\n");
  EXPECT("sq 3", "9");
  EXPECT("both 2 3", "(4, 9)");
  EXPECT("none + g", "52");
  EXPECT("(p, q)", "(1, [2, 3])");
  EXPECT("sum (map sq [1, 2, 3])", "14");
  /* a long chain of lets runs without deep recursion in the evaluator */
  char *text = una_strdup("let x0 = 1 in ");
  for (int i = 1; i < 3000; i++) text = una_sprintf("%slet x%d = x%d + 1 in ", text, i, i - 1);
  text = una_sprintf("%sx2999", text);
  EXPECT(text, "3000");
}
END_TEST

START_TEST(array_builtins) {
  EXPECT("iota 5", "[0, 1, 2, 3, 4]");
  EXPECT("iota 0", "[]");
  EXPECT("iota (-0)", "[]");
  EXPECT("length (iota 1000)", "1000");
  EXPECT("length []", "0");
  EXPECT("replicate 3 0.5", "[0.5, 0.5, 0.5]");
  EXPECT("replicate 2 [1]", "[[1], [1]]");
  EXPECT("replicate 2 (1, true)", "[(1, true), (1, true)]");
  EXPECT("replicate 0 true", "[]");
  EXPECT("replicate 2 true", "[true, true]");
  EXPECT("shift1L [1, 2, 3]", "[2, 3]");
  EXPECT("shift1R [1, 2, 3]", "[1, 2]");
  EXPECT("shift1L []", "[]");
  EXPECT("shift1R []", "[]");
  EXPECT("shift1L [5]", "[]");
  EXPECT("shift1L (shift1L (shift1R [1, 2, 3, 4]))", "[3]");
  EXPECT("shift1L [[1], [2]]", "[[2]]");
  EXPECT("shift1R [true, false]", "[true]");
  EXPECT("map (x. x * 10) (shift1L [1, 2, 3])", "[20, 30]");
  EXPECT("map2 (-) (shift1L [1, 2, 4]) (shift1R [1, 2, 4])", "[1, 2]");
  EXPECT("rand 3 0", "[0.8833108082136426, 0.43152799704850997, 0.026433771592597743]");
  EXPECT("rand 2 42", "[0.36648670182842424, 0.339113635039169]");
  EXPECT("rand 0 1", "[]");
  EXPECT("rand 2 (-0)", "[0.8833108082136426, 0.43152799704850997]");
}
END_TEST

START_TEST(combinators) {
  EXPECT("map (x. x * x + 1) [1, 2, 3]", "[2, 5, 10]");
  EXPECT("map (x. x > 1) [1, 2]", "[false, true]");
  EXPECT("map (x. (x, x > 1)) [1, 2]", "[(1, false), (2, true)]");
  EXPECT("map (p. p.1 + p.2) [(1, 2), (3, 4)]", "[3, 7]");
  EXPECT("map (x. iota x) [0, 1, 2]", "[[], [0], [0, 1]]");
  EXPECT("map (r. reduce (+) 0 r) [[1, 2], [], [3]]", "[3, 0, 3]");
  EXPECT("map (b. !b) [true, false]", "[false, true]");
  EXPECT("map sin []", "[]");
  EXPECT("map exp [0]", "[1]");
  EXPECT("map2 (+) [1, 2] [10, 20]", "[11, 22]");
  EXPECT("map2 (x, y. (x, y)) [1, 2] [true, false]", "[(1, true), (2, false)]");
  EXPECT("map2 (x, y. x && y) [true, true] [false, true]", "[false, true]");
  EXPECT("map2 (x, y. length x + length y) [[1], []] [[2, 3], [4]]", "[3, 1]");
  EXPECT("map2 max [1, 5] [3, 2]", "[3, 5]");
  EXPECT("reduce (+) 0 [1, 2, 3]", "6");
  EXPECT("reduce (+) 0 []", "0");
  EXPECT("reduce (-) 0 [1, 2, 3]", "-6"); /* n <= 256: exactly the left fold */
  EXPECT("reduce (p, q. (p.1 + q.1, max p.2 q.2)) (0, -inf) [(1, 5), (2, 3)]", "(3, 5)");
  EXPECT("reduce (x, y. x && y) true [true, false]", "false");
  EXPECT("reduce (x, y. x || y) false [false, false]", "false");
  EXPECT("reduce (max) (-inf) [3, 9, 2]", "9");
  EXPECT("reduce (min) inf [3, 9, 2]", "2");
  EXPECT("reduce (*) 1 [2, 3, 4]", "24");
  EXPECT("foldl (x, y. x * 10 + y) 0 [1, 2, 3]", "123");
  EXPECT("foldl (acc, r. acc + length r) 0 [[1], [2, 3]]", "3");
  EXPECT("foldl (acc, x. (acc.1 + x, acc.2 * x)) (0, 1) [1, 2, 3]", "(6, 6)");
  EXPECT("foldl (+) 5 []", "5");
  EXPECT("scanl (+) 0 [1, 2, 3]", "[0, 1, 3, 6]");
  EXPECT("scanl (+) 0 []", "[0]");
  EXPECT("scanl (x, y. x || y) false [false, true, false]", "[false, false, true, true]");
  EXPECT("scanl (acc, x. (acc.1 + x, x)) (0, 0) [1, 2]", "[(0, 0), (1, 1), (3, 2)]");
  EXPECT("scanl (x, y. x * 10 + y) 0 [1, 2, 3]", "[0, 1, 12, 123]");
  EXPECT("scanr (+) 0 [1, 2, 3]", "[6, 5, 3, 0]");
  EXPECT("scanr (x, y. x - y) 0 [1, 2, 3]", "[2, -1, 3, 0]");
  EXPECT("scanr (x, acc. acc + length x) 0 [[1], [2, 3]]", "[3, 2, 0]");
  EXPECT("scanr (x, y. x) 7 []", "[7]");
  EXPECT("scanr (x, y. max x y) (-inf) [1, 3, 2]", "[3, 3, 2, -inf]");
  /* free variables, hoisted parts, calls inside lambdas */
  tl_run("def f (x: R) : R = x * x - 2 * x\nlet c = 3\n");
  EXPECT("map f [1, 2, 3]", "[-1, 0, 3]");
  EXPECT("map (x. x * c) [1, 2]", "[3, 6]");
  EXPECT("let k = 2 in map (x. x + k) [1, 2]", "[3, 4]");
  EXPECT("let a = [1, 2, 3, 4] in map (x. x / length a) a", "[0.25, 0.5, 0.75, 1]");
  EXPECT("map (x. let t = x * 2 in if t > 2 then t else -t) [1, 2]", "[-2, 4]");
  EXPECT("map (x. map (y. x * y) [1, 2]) [1, 10]", "[[1, 2], [10, 20]]");
  EXPECT("map (x. reduce (+) 0 (map (y. x * y) [1, 2])) [1, 10]", "[3, 30]");
  /* a hoisted part that would fail is only an error where it is needed */
  EXPECT("map (x. if x < 0 then length (iota (-1)) else x) [1, 2]", "[1, 2]");
  ck_assert_str_eq(err("map (x. if x < 0 then length (iota (-1)) else x) [1, -2]"),
                   "t.una:1:31: error: iota: size must be a non-negative integer, found -1");
}
END_TEST

START_TEST(errors) {
  ck_assert_str_eq(err("map2 (+) [1, 2, 3] [1]"), "t.una:1:1: error: map2: lengths 3 and 1 differ");
  ck_assert_str_eq(err("1 + length (map2 (x, y. x) [] [1])"), "t.una:1:13: error: map2: lengths 0 and 1 differ");
  ck_assert_str_eq(err("iota (-1)"), "t.una:1:1: error: iota: size must be a non-negative integer, found -1");
  ck_assert_str_eq(err("iota 1.5"), "t.una:1:1: error: iota: size must be a non-negative integer, found 1.5");
  ck_assert_str_eq(err("iota nan"), "t.una:1:1: error: iota: size must be a non-negative integer, found nan");
  ck_assert_str_eq(err("iota inf"), "t.una:1:1: error: iota: size must be a non-negative integer, found inf");
  ck_assert_str_eq(err("iota 1e15"), "t.una:1:1: error: cannot allocate 1e+15 elements (8e+15 bytes)");
  ck_assert_str_eq(err("iota 1e300"), "t.una:1:1: error: cannot allocate 1e+300 elements (8e+300 bytes)");
  ck_assert_str_eq(err("replicate (-2) 0"), "t.una:1:1: error: replicate: size must be a non-negative integer, found -2");
  ck_assert_str_eq(err("replicate 0.5 (1, 2)"), "t.una:1:1: error: replicate: size must be a non-negative integer, found 0.5");
  ck_assert_str_eq(err("replicate 1e15 0"), "t.una:1:1: error: cannot allocate 1e+15 elements (8e+15 bytes)");
  ck_assert_str_eq(err("replicate 1e15 (1, 2)"), "t.una:1:1: error: cannot allocate 1e+15 elements (1.6e+16 bytes)");
  ck_assert_str_eq(err("rand 2.5 1"), "t.una:1:1: error: rand: size must be a non-negative integer, found 2.5");
  ck_assert_str_eq(err("rand (-3) 1"), "t.una:1:1: error: rand: size must be a non-negative integer, found -3");
  ck_assert_str_eq(err("rand 1e15 1"), "t.una:1:1: error: cannot allocate 1e+15 elements (8e+15 bytes)");
  ck_assert_str_eq(err("map (n. length (iota n)) [1, -1]"),
                   "t.una:1:17: error: iota: size must be a non-negative integer, found -1");
  ck_assert_str_eq(err("load \"/nonexistent/x.npy\""),
                   "t.una:1:1: error: load: /nonexistent/x.npy: cannot open: No such file or directory");
  ck_assert_str_eq(err("save \"/nonexistent/x.npy\" [1]"),
                   "t.una:1:1: error: save: /nonexistent/x.npy: cannot write: No such file or directory");
  /* grad is expanded (deriv_expand) before evaluation: the session
     runs it, cpu_call on a checked item that still has one is a bug */
  tl_run("def g (x: R) : R = x * x\n");
  const char *unexpanded = "error: internal: grad reached the evaluator unexpanded (deriv_expand comes first)";
  ck_assert_str_eq(err("grad g 1"), una_sprintf("t.una:1:1: %s", unexpanded));
  ck_assert_str_eq(err("map (x. grad g x) [1]"), una_sprintf("t.una:1:9: %s", unexpanded));
  EXPECT("map (x. grad g x) []", "[]");
  TlRun r = tl_capture(tl_session, "grad g 3\nmap (x. grad g x) [1, 2]\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, "6\n[2, 4]\n");
  /* an interrupt stops a long evaluation on every path */
  const char *longs[] = {"map (x. (x, x)) (iota 100000)", "map (x. x + 1) (iota 100000)",
                         "reduce (+) 0 (iota 100000)", "foldl (x, y. x + y * 2) 0 (iota 100000)",
                         "scanl (p, x. (p.1 + x, x)) (0, 0) (iota 100000)"};
  for (size_t i = 0; i < sizeof longs / sizeof *longs; i++) {
    fe_interrupted = 1;
    ck_assert_str_eq(err(longs[i]), "t.una:1:1: error: interrupted");
    ck_assert_int_eq(fe_interrupted, 0);
  }
  /* a kernel's fault ends a fused reduction over 1e18 indices at once:
     the chunks poll between blocks (the byte fuzzer hung on it, its 2 s
     budget, an interrupt, unseen too) */
  TlRun big = tl_capture(tl_session,
                         "let ten_a = map (x. x * 10) (iota 1000)\n"
                         "sum (map (i. ten_a[i]) (iota 1111111111111111000))\n",
                         false);
  ck_assert_str_eq(big.err, "t.una:2:19: error: index 1000 out of bounds for an array of length 1000\n");
  /* of several faults in a parallel loop, the one a sequential run meets
     first is raised, whichever thread gets to its own first */
  TlRun many = tl_capture(tl_session, "sum (map (i. ten_a[3000000 - 1 - i] + ten_a[i]) (iota 3000000))\n", false);
  ck_assert_str_eq(many.err, "t.una:1:19: error: index 2999999 out of bounds for an array of length 1000\n");
  /* a dead let's map (the plan's check: nothing computed on the CPU when
     its kernel cannot fault) still raises what it would raise */
  tl_run("def dead (x: [R]) (y: [R]) : R = let c = map2 (a, b. a * b) x y in sum x\n"
         "def dead2 (x: [R]) (y: [R]) : R = let c = map (i. y[i]) x in sum x\n");
  EXPECT("dead [1, 2] [3, 4]", "3");
  EXPECT("dead (iota 100000) (iota 100000)", "4999950000");
  ck_assert_str_eq(err("dead [1, 2] [1]"), "t.una:1:42: error: map2: lengths 2 and 1 differ");
  ck_assert_str_eq(err("dead2 [5] [1]"), "t.una:2:52: error: index 5 out of bounds for an array of length 1");
  /* loops that do not end: compiled (a state of reals) and not */
  const char *endless[][2] = {{"loop x = 0 while true do x + 1", "1:1"},
                              {"loop x = (0, [1]) while true do (x.1 + 1, x.2)", "1:1"},
                              {"loop x = 0 for i < 1e15 do x + 1", "1:12"},
                              {"loop x = [0] for i < 1e15 do map (y. y + 1) x", "1:14"},
                              {"map (y. loop x = y while true do x + 1) [1, 2]", "1:1"},
                              {"map (y. loop x = y for i < 1e15 do x + 1) [1, 2]", "1:1"}};
  for (size_t i = 0; i < sizeof endless / sizeof *endless; i++) {
    fe_interrupted = 1;
    ck_assert_str_eq(err(endless[i][0]), una_sprintf("t.una:%s: error: interrupted", endless[i][1]));
    ck_assert_int_eq(fe_interrupted, 0);
  }
}
END_TEST

START_TEST(load_and_save) {
  char dir[] = "/tmp/una_test_eval_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *p = una_sprintf("%s/a.npy", dir);
  EXPECT(una_sprintf("save \"%s\" (map (x. x / 4) (iota 5))", p), "[0, 0.25, 0.5, 0.75, 1]");
  EXPECT(una_sprintf("load \"%s\"", p), "[0, 0.25, 0.5, 0.75, 1]");
  EXPECT(una_sprintf("reduce (+) 0 (load \"%s\")", p), "2.5");
  EXPECT(una_sprintf("save \"%s\" []", p), "[]");
  EXPECT(una_sprintf("load \"%s\"", p), "[]");
  ck_assert_int_eq(system(una_sprintf("rm -rf '%s'", dir)), 0);
}
END_TEST

/* ---- the three paths agree ---- */

typedef struct PathCase {
  const char *expr;
  bool kernel; /* its lambda compiles to a kernel */
} PathCase;

static const PathCase path_cases[] = {
    {"map (x. x * x + 1) A", true},
    {"map (x. if x > 0.5 then sin x else x / 3) A", true},
    {"map (x. max x 0.3) A", true},
    {"map (x. min 0.3 x) A", true},
    {"map (x. x > 0 && x < 0.5 || x == 0) A", true},
    {"map f A", true},
    {"map sigmoid A", true},
    {"map (x. abs (floor (x * 10)) - sqrt (abs x) + exp (-x) * log (1 + abs x)) A", true},
    {"map (x. tanh x + cos x * tan x ^ 2) A", true},
    {"map (x. x * c + k) A", true},
    {"map (x. x / length A) A", true},
    {"map (x. if !(x < 0) then x else neg x) A", true},
    {"map (x. (x, x + 1)) A", false},
    {"map2 (x, y. x * y - 1) A B", true},
    {"map2 (max) A B", true},
    {"map2 (x, y. if x < y then x else y) A B", true},
    {"map2 (x, y. x == y || x != y && x >= y) A B", true},
    {"reduce (+) 0 A", true},
    {"reduce (*) 1 (map (x. 1 + x / 1000) A)", true},
    {"reduce (max) (-inf) A", true},
    {"reduce (min) inf A", true},
    {"reduce (x, y. y + x) 0 A", true},
    {"reduce (x, y. y * x) 1 A", true},
    {"reduce (x, y. max y x) (-inf) A", true},
    {"reduce (x, y. min y x) inf A", true},
    {"reduce (x, y. x + y + 0) 0 A", true},
    {"reduce (x, y. if x > y then x else y) (-inf) A", true},
    {"reduce (p, q. (p.1 + q.1, p.2 + q.2)) (0, 0) (map (x. (x, x * x)) A)", false},
    {"foldl (+) 0 A", true},
    {"foldl (x, y. y + x) 0 A", true},
    {"foldl (x, y. x * 0.5 + y) 0 A", true},
    {"foldl (max) 0 A", true},
    {"foldl (x, y. min y x) 0 A", true},
    {"scanl (+) 0 A", true},
    {"scanl (*) 1 A", true},
    {"scanl (x, y. x * 0.9 + y) 1 A", true},
    {"scanl (x, y. x * k + y) 1 A", true},
    {"scanl (x, y. c * x + y) 0 A", true},
    {"foldl (x, y. x * k + y) 0 A", true},
    {"scanl (min) inf A", true},
    {"scanl (x, y. max y x) (-inf) A", true},
    {"scanr (+) 0 A", true},
    {"scanr (x, y. y * x) 1 A", true},
    {"scanr (x, y. x - y) 0 A", true},
    {"scanr (x, y. y + x) 0 A", true},
    {"scanr (max) (-inf) A", true},
    {"scanl (+) 0 (map (x. x * x) A)", true},
    {"scanr (*) 1 (map (x. 1 + x / 1000) A)", true},
    {"scanr (x, y. x * 0.9 + y) 1 (map2 (*) A B)", true},
    {"scanl (x, y. x * 0.9 + y) 1 (map2 (a, b. a - b) A B)", true},
    {"scanr (x, y. min y x) inf A", true},
    {"reduce (+) 0 (map2 (*) A B)", true},
};

static void paths_agree(size_t n) {
  tl_run(una_sprintf("let A = map (x. 2 * x - 1) (rand %zu 1)\n"
                     "let B = map (x. 2 * x - 1) (rand %zu 2)\n"
                     "def f (x: R) : R = let t = x * x in t - 2 * x\n"
                     "let c = 3\n",
                     n, n));
  for (size_t i = 0; i < sizeof path_cases / sizeof *path_cases; i++) {
    const PathCase *pc = &path_cases[i];
    char *text = una_sprintf("let k = 0.25 in %s", pc->expr);
    Def *d = tl_check(text);
    const Term *prim = d->body;
    while (prim->kind == T_LET) prim = prim->kids[1];
    ck_assert(prim->kind == T_PRIM);
    ck_assert_msg((cpu_kernel_for(prim->kids[0]) != NULL) == pc->kernel, "kernel for %s", pc->expr);
    Value got[3];
    for (int path = 0; path < 3; path++) {
      Exec ex = tl_exec_paths(path == 0, path <= 1);
      got[path] = tl_ev_with(&ex, text);
    }
    ck_assert_msg(tl_same_bits(got[0], got[1], true), "n=%zu: %s: monoid/kernel path differs from kernel/generic", n, pc->expr);
    ck_assert_msg(tl_same_bits(got[1], got[2], true), "n=%zu: %s: kernel path differs from generic", n, pc->expr);
  }
}

START_TEST(paths_0) { paths_agree(0); }
END_TEST
START_TEST(paths_1) { paths_agree(1); }
END_TEST
START_TEST(paths_255) { paths_agree(255); }
END_TEST
START_TEST(paths_256) { paths_agree(256); }
END_TEST
START_TEST(paths_257) { paths_agree(257); }
END_TEST
START_TEST(paths_100000) { paths_agree(100000); }
END_TEST
/* past CPU_PAR_MIN: chunked, parallel on the fast paths, chunk by chunk on
   the generic one, the same bracketing everywhere */
START_TEST(paths_chunked) { paths_agree(CPU_PAR_MIN + 300); }
END_TEST

/* The number of threads never changes a bit: the chunks depend on the
   length only. */
START_TEST(threads_same_bits) {
  size_t n = 3 * CPU_PAR_MIN + 7;
  tl_run(una_sprintf("let A = map (x. 2 * x - 1) (rand %zu 1)\n"
                     "let B = map (x. 2 * x - 1) (rand %zu 2)\n"
                     "def f (x: R) : R = let t = x * x in t - 2 * x\n"
                     "let c = 3\n",
                     n, n));
  for (size_t i = 0; i < sizeof path_cases / sizeof *path_cases; i++) {
    char *text = una_sprintf("let k = 0.25 in %s", path_cases[i].expr);
    Value got[3];
    static const int threads[3] = {1, 2, 5};
    for (int q = 0; q < 3; q++) {
      Exec ex = cpu_exec_default;
      ex.threads = threads[q];
      got[q] = tl_ev_with(&ex, text);
    }
    ck_assert_msg(tl_same_bits(got[0], got[1], true), "%s: 1 and 2 threads differ", path_cases[i].expr);
    ck_assert_msg(tl_same_bits(got[0], got[2], true), "%s: 1 and 5 threads differ", path_cases[i].expr);
  }
}
END_TEST

/* A parallel reduce against a sequential C loop in the documented
   bracketing (chunks of whole blocks, lanes, lanes combined in chunk
   order, then folded). */
START_TEST(chunked_bracketing) {
  size_t n = CPU_PAR_MIN + 1000;
  tl_run(una_sprintf("let A = map (x. 2 * x - 1) (rand %zu 3)\n", n));
  Value av = tl_ev("A");
  const double *a = av.u.a->r;
  double acc[CPU_CHUNKS][CPU_BLOCK];
  for (int c = 0; c < CPU_CHUNKS; c++) {
    size_t lo, hi;
    cpu_chunk_bounds(n, CPU_BLOCK, CPU_CHUNKS, c, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
      double x = a[i] * a[i];
      if (i - lo < CPU_BLOCK) acc[c][i - lo] = c == 0 && i == 0 ? 0.5 + x : x;
      else acc[c][(i - lo) % CPU_BLOCK] += x;
    }
  }
  for (int c = 1; c < CPU_CHUNKS; c++)
    for (int l = 0; l < CPU_BLOCK; l++) acc[0][l] += acc[c][l];
  double r = acc[0][0];
  for (int l = 1; l < CPU_BLOCK; l++) r += acc[0][l];
  Value got = tl_ev("reduce (+) 0.5 (map (x. x * x) A)");
  ck_assert(got.u.r == r);
}
END_TEST

static CpuMonoid monoid(const char *expr, bool *swapped) {
  const Term *t = tl_check(expr)->body;
  ck_assert(t->kind == T_PRIM);
  return cpu_monoid_of(t->kids[0], swapped);
}

START_TEST(monoid_detection) {
  bool sw;
  ck_assert(monoid("reduce (+) 0 [1]", &sw) == CPU_M_ADD && !sw);
  ck_assert(monoid("reduce (*) 1 [1]", &sw) == CPU_M_MUL && !sw);
  ck_assert(monoid("reduce (max) 0 [1]", &sw) == CPU_M_MAX && !sw);
  ck_assert(monoid("reduce (min) 0 [1]", &sw) == CPU_M_MIN && !sw);
  ck_assert(monoid("reduce max 0 [1]", &sw) == CPU_M_MAX && !sw);
  ck_assert(monoid("foldl (x, y. x + y) 0 [1]", &sw) == CPU_M_ADD && !sw);
  ck_assert(monoid("scanl (x, y. y + x) 0 [1]", &sw) == CPU_M_ADD && sw);
  ck_assert(monoid("scanr (a, b. max b a) 0 [1]", &sw) == CPU_M_MAX && sw);
  ck_assert(monoid("reduce (x, y. x - y) 0 [1]", &sw) == CPU_M_NONE);
  ck_assert(monoid("reduce (x, y. x + x) 0 [1]", &sw) == CPU_M_NONE);
  ck_assert(monoid("reduce (x, y. x + y + 0) 0 [1]", &sw) == CPU_M_NONE);
  ck_assert(monoid("reduce (x, y. x && y) true [true]", &sw) == CPU_M_NONE);
  ck_assert(monoid("map (x. x + x) [1]", &sw) == CPU_M_NONE);
}
END_TEST

/* The results against straightforward C loops. */
START_TEST(reference_values) {
  enum { N = 100000 };
  tl_run("let A = map (x. 2 * x - 1) (rand 100000 1)\n");
  Value av = tl_ev("A");
  const double *a = av.u.a->r;
  /* foldl (+) is the sequential left fold */
  double s = 0;
  for (int i = 0; i < N; i++) s += a[i];
  ck_assert(tl_ev("foldl (+) 0 A").u.r == s);
  /* reduce (+) on <= 256 elements is the left fold too; on more, lanes */
  double s200 = 0;
  for (int i = 0; i < 200; i++) s200 += a[i];
  tl_run("let A200 = map (x. 2 * x - 1) (shift1R (rand 201 1))\n");
  ck_assert(tl_ev("reduce (+) 0 A200").u.r == s200);
  double lanes[CPU_BLOCK];
  for (int j = 0; j < CPU_BLOCK; j++) lanes[j] = j == 0 ? 0 + a[0] : a[j];
  for (int i = CPU_BLOCK; i < N; i++) lanes[i % CPU_BLOCK] += a[i];
  double r = lanes[0];
  for (int j = 1; j < CPU_BLOCK; j++) r += lanes[j];
  ck_assert(tl_ev("reduce (+) 0 A").u.r == r);
  ck_assert(fabs(r - s) < 1e-9);
  /* scans */
  Value sl = tl_ev("scanl (+) 0 A"), sr = tl_ev("scanr (+) 0 A");
  ck_assert_uint_eq(sl.u.a->len, N + 1);
  double acc = 0;
  for (int i = 0; i < N; i++) {
    acc += a[i];
    ck_assert(sl.u.a->r[i + 1] == acc);
  }
  acc = 0;
  for (int i = N - 1; i >= 0; i--) {
    acc = a[i] + acc;
    ck_assert(sr.u.a->r[i] == acc);
  }
  ck_assert(sr.u.a->r[N] == 0);
  /* map against C */
  Value m = tl_ev("map (x. x * x + 1) A");
  for (int i = 0; i < N; i++) ck_assert(m.u.a->r[i] == a[i] * a[i] + 1);
}
END_TEST


/* Loops whose state is a few reals run as step programs (loop_ops.c),
   as do folds and scans whose state or elements are tuples of reals and
   maps over or returning such tuples (array_ops.c); they give the bits of
   the tree evaluator, gathers and branches included. */
START_TEST(compiled_loops) {
  tl_run("let A = map (x. 2 * x - 1) (rand 1000 3)\n");
  static const char *const cases[] = {
      "loop x = 0 for i < 1000 do x + A[i] * i",
      "loop (s, p) = (0, 1) for i < 50 do (s + A[i], p * (1 + A[i]))",
      "loop (x, k) = (2, 0) while k < 40 do ((x + 2 / x) / 2, k + 1)",
      "loop (a, b, c) = (1, 0, 0) for i < 300 do if A[i] > 0 then (b, c, a + A[i]) else (c + 1, a, b)",
      "loop x = 1 while x < 1e6 && x > -1e6 do x * (2 + A[min 999 (floor (abs x))])",
      "map (y. loop (t, u) = (y, 0) for i < 20 do (t * 0.5 + u, u + y)) A",
      "map (y. (loop (t, u) = (y, 0) for i < 20 do (t * 0.5 + u, u + y)).1) A",
      "map (y. loop x = y for i < 7 do x * 0.75 + A[i] * i) A",
      "map (y. loop x = y for i < 3 do loop z = x for j < 4 do z * 0.5 + j + i) A",
      "reduce (+) 0 (map (y. (loop (a, b) = (0, y) for i < 12 do (b, a + b)).2) A)",
      "map2 (y, w. let s = loop x = 0 for i < 5 do x + y * w in if s > 0 then s else -s) A A",
      "map (y. loop x = y for i < 0 do x + 1) A",
      "map3 (x, y, z. x * y + z / (1 + x * x)) A A (map (v. v * 2) A)",
      "map3 (x, y, z. if x > 0 then y else A[3] * z) A A A",
      "map3 (x, y, z. loop s = x for i < 4 do s * y + z) A A A",
      "map (y. (loop (x, k) = (abs y + 1, 0) while abs (x * x - abs y - 1) > 1e-12 && k < 50 do ((x + (abs y + 1) / x) / 2, k + 1)).1) A",
      "map (y. loop x = y while x < 100 && x > -100 do x * 2 + 0.5) A",
      "map (y. loop x = y for i < 3 do loop z = x while z < 10 && z > -10 do z * 1.5 + 1) A",
      "reduce (+) 0 (map (y. (loop (x, n) = (y, 0) while n < 7 do (x * 0.5 + n, n + 1)).1) A)",
      "loop x = 3 for i < 0 do x + 1",
      /* folds and scans whose state is a tuple of reals (array_ops.c) */
      "foldl ((s, p), x. (s + x, p * (1 + x * 0.001))) (0, 1) A",
      "scanl ((h, c), x. let c2 = c * sigmoid x + tanh h in (sigmoid (x + h) * tanh c2, c2)) (0.5, 0) A",
      "scanl ((a, b, c), x. if x > 0 then (b, c, a + x) else (c + 1, a, b)) (1, 0, 0) A",
      "map (y. foldl ((s, p), x. (s + x * y, p * 0.5 + A[3])) (y, 0) A[0:10]) A[0:50]",
      "scanl ((s, p), x. (s + x, p * x)) (0, 1) A[0:0]",
      "scanr (x, (s, p). (s * 0.5 + x, p + s * x)) (1, 2) A",
      "scanr ((x, y), (s, p). (s * 0.5 + x * p, p + s * y)) (1, 2) (zip A (map (v. v * 3) A))",
      "foldl (acc, (x, y). acc * 0.5 + x * y) 0 (zip A A)",
      "foldl (((a, b), c), x. ((a * 0.5 + x, b + c), c * sigmoid x)) ((1, 2), 3) A",
      "loop ((a, b), c) = ((1, 2), 3) for i < 100 do ((a * 0.5 + A[i], b + c), c * sigmoid A[i])",
      "scanl ((h, c), ((u, w), x). (h * u + x, c + w * h)) (0, 1) (zip (zip A A) A)",
      /* maps over arrays of tuples, or returning tuples (array_ops.c) */
      "map ((x, y). (x * y, x + sin y)) (zip A (map (v. v + 1) A))",
      "map2 ((x, y), z. if x > 0 then x * y + z else A[7]) (zip A A) A",
      "map (x. ((x, x * 2), tanh x)) A",
      "map (((a, b), c). a * b - c) (map (x. ((x, x * 2), tanh x)) A)",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Value got[2];
    for (int path = 0; path < 2; path++) {
      Exec ex = tl_exec_paths(true, path == 0);
      got[path] = tl_ev_with(&ex, cases[i]);
    }
    ck_assert_msg(tl_same_bits(got[0], got[1], true), "%s: compiled loop differs from the tree evaluator", cases[i]);
  }
}
END_TEST


/* Indexing, slices, loops and the reshaping builtins against programs
   written with map, foldl and iota that compute the same thing, on random
   arrays of random lengths: equal bit for bit (the same operations in the
   same order). */
START_TEST(v2_properties) {
  static const char *const pairs[][2] = {
      {"loop s = 0 for i < length a do s + a[i]", "foldl (+) 0 a"},
      {"map (i. a[i]) (iota (length a))", "a"},
      {"a[lo:hi]", "map (k. a[k + lo]) (iota (hi - lo))"},
      {"a[lo:]", "map (k. a[k + lo]) (iota (length a - lo))"},
      {"concat a[:lo] a[lo:]", "a"},
      /* a tree of concats is made in one array */
      {"concat (concat (concat a[:lo] b[lo:]) (concat a[lo:hi] [])) (concat b (concat a b))",
       "let t = concat (concat a[:lo] b[lo:]) (concat a[lo:hi] []) in let u = concat a b in let v = concat b u in"
       " map (k. if k < length t then t[k] else v[k - length t]) (iota (length t + length v))"},
      {"concat (concat m [m[1]]) (concat (transpose (transpose m)) m)",
       "let u = concat m [m[1]] in let w = concat (transpose (transpose m)) m in"
       " map (k. if k < length u then u[k] else w[k - length u]) (iota (length u + length w))"},
      {"transpose (transpose m)", "m"},
      {"map (j. map (i. (transpose m)[j][i]) (iota (length m))) (iota 3)", "map (j. map (r. r[j]) m) (iota 3)"},
      {"unzip (zip a b)", "(a, b)"},
      {"map3 (x, y, z. x * y + z) a b a", "map2 (+) (map2 (*) a b) a"},
      {"map ((x, y). x - y) (zip a b)", "map2 (-) a b"},
      {"reduce_by_index (replicate 5 0) (+) 0 idx a",
       "map (j. foldl (s, k. if idx[k] == j then s + a[k] else s) 0 (iota (length a))) (iota 5)"},
      {"loop v = a for i < 3 do map (x. x * 0.5 + 1) v", "map (x. ((x * 0.5 + 1) * 0.5 + 1) * 0.5 + 1) a"},
  };
  for (int trial = 0; trial < 12; trial++) {
    int n = 1 + trial * 37 % 300;
    tl_run(una_sprintf("let a = map (x. 2 * x - 1) (rand %d %d)\n"
                       "let b = rand %d %d\n"
                       "let lo = floor (%d / 3)\n"
                       "let hi = lo + floor (%d / 2)\n"
                       "let m = map (i. map (j. a[(i * 3 + j) - %d * floor ((i * 3 + j) / %d)]) (iota 3)) (iota 4)\n"
                       "let idx = map (x. floor (x * 5)) (rand %d %d)\n",
                       n, trial, n, trial + 100, n, n, n, n, n, trial + 200));
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
      Value x = tl_ev(pairs[i][0]), y = tl_ev(pairs[i][1]);
      ck_assert_msg(tl_same_bits(x, y, false), "n=%d: %s differs from %s: %s vs %s", n, pairs[i][0], pairs[i][1],
                    val_to_string(x), val_to_string(y));
    }
  }
}
END_TEST

/* Whether the rows of the [[R]] v are consecutive in one buffer, from row
   lo on. */
static bool consecutive_rows(Value v, size_t lo) {
  const Array *a = v.u.a;
  for (size_t i = lo + 1; i < a->len; i++)
    if (a->v[i].u.a->r != a->v[i - 1].u.a->r + a->v[i - 1].u.a->len) return false;
  return true;
}

/* A map whose function returns rows of reals puts them in one buffer
   (map_rows in array_ops.c) when its function ends in a map; the values
   are those of the rows made one by one. */
START_TEST(rows_in_one_buffer) {
  const char *texts[] = {
      "map (i. map (j. i * 10 + j) (iota 4)) (iota 5)",
      "map2 (a, b. let c = a + b in map (x. x * c) [1, 2, 3]) [1, 2] [10, 20]",
      "map (i. map2 (x, y. x - y * i) [1, 2] [3, 4]) (iota 300)",
  };
  for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
    Value v = tl_ev(texts[k]);
    ck_assert_msg(consecutive_rows(v, 0), "%s", texts[k]);
    Exec written = tl_exec_paths(false, false); /* the tree path, row by row */
    ck_assert_str_eq(val_to_string(v), val_to_string(tl_ev_with(&written, texts[k])));
  }
  EXPECT("map (i. map (j. i * 10 + j) (iota 4)) (iota 5)",
         "[[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23], [30, 31, 32, 33], [40, 41, 42, 43]]");
  /* a row of another length gets its own memory; the rest stay in place */
  Value r = tl_ev("map (i. map (j. j) (iota (if i == 2 then 5 else 3))) (iota 5)");
  ck_assert_str_eq(val_to_string(r), "[[0, 1, 2], [0, 1, 2], [0, 1, 2, 3, 4], [0, 1, 2], [0, 1, 2]]");
  ck_assert_ptr_eq(r.u.a->v[1].u.a->r, r.u.a->v[0].u.a->r + 3);
  ck_assert_ptr_eq(r.u.a->v[3].u.a->r, r.u.a->v[0].u.a->r + 9);
  /* a function that does not end in a map: rows as they come */
  EXPECT("map (i. if i > 0 then [i, i] else [0, 1]) (iota 3)", "[[0, 1], [1, 1], [2, 2]]");
}
END_TEST

/* reduce_by_index with a monoid checks a block of indices in one loop and
   scatters it in another (index_ops.c); the values are the element-by-
   element path's, and a bad index anywhere raises its own error. */
START_TEST(reduce_by_index_blocks) {
  const char *text = "reduce_by_index (replicate 7 0) (+) 0 (map (i. i - 7 * floor (i / 7)) (iota 10000)) "
                     "(map (i. sin i) (iota 10000))";
  Exec written = tl_exec_paths(false, false);
  ck_assert(tl_same_bits(tl_ev(text), tl_ev_with(&written, text), true));
  EXPECT("reduce_by_index (replicate 3 1) (*) 1 [0, 2, 2, 1] [5, 2, 3, 4]", "[5, 4, 6]");
  EXPECT("reduce_by_index (replicate 3 0) (min) 0 [0, 2, 2, 1] [-1, 2, -3, 4]", "[-1, 0, -3]");
  ck_assert_str_eq(err("reduce_by_index (replicate 3 0) (+) 0 (concat (map (i. 1) (iota 5000)) [3]) (iota 5001)"),
                   "t.una:1:1: error: index 3 out of bounds for an array of length 3");
  ck_assert_str_eq(err("reduce_by_index (replicate 3 0) (+) 0 (concat (map (i. 1) (iota 4100)) [-1, 0.5]) (iota 4102)"),
                   "t.una:1:1: error: index -1 out of bounds for an array of length 3");
  ck_assert_str_eq(err("reduce_by_index (replicate 3 0) (+) 0 (concat (map (i. 1) (iota 4100)) [0.5, -1]) (iota 4102)"),
                   "t.una:1:1: error: index 0.5 is not an integer");
}
END_TEST

/* Values written as a map go into the scatter block by block (scatter.c):
   the same bits as stored values; many values into few places are cut into
   chunks by their count, with the same bits on 1, 2 or 5 threads and within
   rounding of the in-order fold; the values' own errors come before a bad
   index, and the first bad index in order is the one raised. */
START_TEST(reduce_by_index_fused) {
  size_t n = 2 * CPU_PAR_MIN + 5;
  tl_run(una_sprintf("let I = map (i. i - 7 * floor (i / 7)) (iota %zu)\n"
                     "let A = map (i. sin i) (iota 7)\n",
                     n));
  const char *fused = "reduce_by_index (replicate 7 0) (+) 0 I (map (i. 2 * A[i] + i) I)";
  const char *stored = "let V = map (i. 2 * A[i] + i) I in reduce_by_index (replicate 7 0) (+) 0 I V";
  Value got[3];
  static const int threads[3] = {1, 2, 5};
  for (int q = 0; q < 3; q++) {
    Exec ex = cpu_exec_default;
    ex.threads = threads[q];
    got[q] = tl_ev_with(&ex, fused);
  }
  ck_assert(tl_same_bits(got[0], got[1], true) && tl_same_bits(got[0], got[2], true));
  ck_assert(tl_same_bits(got[0], tl_ev(stored), true));
  Exec written = tl_exec_paths(false, false);
  Value in_order = tl_ev_with(&written, fused);
  for (int i = 0; i < 7; i++) ck_assert(tl_near(got[0].u.a->r[i], in_order.u.a->r[i], 1e-12));
  /* chunked or not, with few values or many */
  EXPECT("reduce_by_index (replicate 3 0) (+) 0 [0, 2, 2, 1] (map (i. A[i] * 0 + i) [0, 2, 2, 1])", "[0, 1, 4]");
  ck_assert_str_eq(err("reduce_by_index (replicate 7 0) (+) 0 (concat I [7, 9]) (map (i. A[i]) (concat I [3, 8]))"),
                   "t.una:1:67: error: index 8 out of bounds for an array of length 7");
  ck_assert_str_eq(err("reduce_by_index (replicate 7 0) (+) 0 (concat I [7, 9]) (map (i. A[i]) (concat I [3, 4]))"),
                   "t.una:1:1: error: index 7 out of bounds for an array of length 7");
  ck_assert_str_eq(err("reduce_by_index (replicate 7 0) (+) 0 (concat [0.5] I) (map (i. A[i]) (concat [3] I))"),
                   "t.una:1:1: error: index 0.5 is not an integer");
}
END_TEST

/* A dead map kept for its errors computes its elements into scratch when
   they may raise (a gather), and raises as the map would. */
START_TEST(dead_check_map_gathers) {
  tl_run("def chk (a: [R]) (is: [R]) : R = let u = map (i. a[i]) is in length a\n"
         "def chk2 (a: [R]) (is: [R]) : R = let u = map (i. if i > 1 then a[a[i]] * 2 else a[i]) is in length a\n");
  EXPECT("chk [1, 2, 3] (map (i. i - 3 * floor (i / 3)) (iota 300000))", "3");
  ck_assert_str_eq(err("chk [1, 2, 3] (concat (iota 3) [3])"),
                   "t.una:1:51: error: index 3 out of bounds for an array of length 3");
  /* blocks of indices checked without reading a; the first bad one in
     order, a read at a read, a read in a branch */
  ck_assert_str_eq(err("chk [1, 2, 3] (concat (map (i. i - 3 * floor (i / 3)) (iota 300000)) [2.5, -1])"),
                   "t.una:1:51: error: index 2.5 is not an integer");
  EXPECT("chk2 [1, 2, 0] (map (i. i - 3 * floor (i / 3)) (iota 300000))", "3");
  ck_assert_str_eq(err("chk2 [1, 2, 3] (map (i. i - 3 * floor (i / 3)) (iota 300000))"),
                   "t.una:2:66: error: index 3 out of bounds for an array of length 3");
  ck_assert_str_eq(err("chk2 [1, 2, 0] (concat (map (i. i - 3 * floor (i / 3)) (iota 300000)) [-1])"),
                   "t.una:2:83: error: index -1 out of bounds for an array of length 3");
}
END_TEST

Suite *suite_eval(void) {
  Suite *s = suite_create("eval");
  TCase *tc = tcase_create("eval");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, scalars);
  tcase_add_test(tc, booleans);
  tcase_add_test(tc, lets_tuples_calls);
  tcase_add_test(tc, array_builtins);
  tcase_add_test(tc, combinators);
  tcase_add_test(tc, rows_in_one_buffer);
  tcase_add_test(tc, reduce_by_index_blocks);
  tcase_add_test(tc, reduce_by_index_fused);
  tcase_add_test(tc, dead_check_map_gathers);
  tcase_add_test(tc, errors);
  tcase_add_test(tc, load_and_save);
  tcase_add_test(tc, monoid_detection);
  tcase_add_test(tc, paths_0);
  tcase_add_test(tc, paths_1);
  tcase_add_test(tc, paths_255);
  tcase_add_test(tc, paths_256);
  tcase_add_test(tc, paths_257);
  tcase_add_test(tc, compiled_loops);
  tcase_add_test(tc, v2_properties);
  tcase_add_test(tc, paths_100000);
  tcase_add_test(tc, paths_chunked);
  tcase_add_test(tc, threads_same_bits);
  tcase_add_test(tc, chunked_bracketing);
  tcase_add_test(tc, reference_values);
  suite_add_tcase(s, tc);
  return s;
}
