/* test_grad_print.c: `:grad f` prints the optimized gradient as a Una
   definition that re-parses and computes the same values as `grad f`:
   for the paper's examples and a few hundred generated programs, the
   printed text is loaded back as a def and both are evaluated at random
   points. Also: the printed gradient has no lambda value and no
   application left (lemma 5.3). :jvp and :vjp print definitions that load
   back and compute the same values as jvp and vjp. */
#include <string.h>

#include "../../frontend/ir/term_print.h"
#include "../reverse/gen.h"
#include "../reverse/gradcheck.h"
#include "../suites.h"
#include "../testlib.h"

/* Una text for a value, parenthesised so it can be an argument. */
static char *arg_text(Value v) { return una_sprintf("(%s)", val_to_string(v)); }

/* Loads program (which defines f), prints :grad f, loads the printed
   definition and compares `grad f ARGS` with `grad_f ARGS` at random
   points. Returns NULL or a report. */
static char *round_trip(const char *program, uint64_t seed) {
  Session *s = tl_session_with(program);
  TlRun g = tl_capture(s, ":grad f", true);
  if (!g.ok) return una_sprintf("':grad f' failed: %s\n%s", g.err, program);
  if (strstr(g.out, "fun (")) return una_sprintf("a lambda is left in:\n%s", g.out);
  TlRun load = tl_capture(s, g.out, true);
  if (!load.ok)
    return una_sprintf("the printed gradient does not load: %s\n%s\nprogram:\n%s", load.err, g.out,
                       program);
  Def *f = tl_def(s, "f");
  GenRng r = gen_rng(seed);
  const size_t lengths[] = {0, 1, 3};
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
    char *args = "";
    for (int i = 0; i < f->nparams; i++)
      args = una_sprintf("%s %s", args,
                         arg_text(gc_random_value(&r, f->params[i]->type, lengths[li], -1.5, 1.5)));
    char *want = tl_capture_merged(s, una_sprintf("grad f%s", args), true);
    char *got = tl_capture_merged(s, una_sprintf("grad_f%s", args), true);
    if (strcmp(want, got) != 0)
      return una_sprintf("grad f%s gives %s but the printed grad_f gives %s\n%s\nprogram:\n%s", args,
                         want, got, g.out, program);
  }
  return NULL;
}

static const char *const examples[] = {
    "def f (x1: R) (x2: R) (x3: R) = let w1 = x1 * x2 in let w2 = w1 * x1 in w2\n",
    "def f (a: [R]) = prod a\n",
    "def f (x: R) (a: [R]) = let s = loop s = a for i < 3 do map (u. sin (u * x)) s in sum (map (u. u * u) s)\n",
    "def f (a: [R]) = sum a\n",
    "def f (a: [R]) (b: [R]) = dot a b\n",
    "def f (v: [R]) = logsumexp v\n",
    "def f (x: R) (cs: [R]) = foldl (acc, c. acc * x + c) 0 cs\n",
    "def f (v: [R]) (s: R) = sum (map2 (a, b. a * s + b) v v)\n",
    "def f (x: R) (b: B) = if b then sin x * x else max x 0\n",
    "def f (p: (R, [R])) = p.1 * sum (map (x. x * p.1) p.2)\n",
    "def f (x: R) = sum (replicate 3 x) + sum [x, x * x]\n",
    "def f (x: R) (v: [R]) = lgamma (2 + x * x) + sum (map (a. digamma (3 + a * x)) v)\n",
};

START_TEST(examples_round_trip) {
  char *err = round_trip(examples[_i], 1000 + (uint64_t)_i);
  ck_assert_msg(err == NULL, "%s", err);
}
END_TEST

START_TEST(generated_round_trip) {
  GenOptions o = gen_default_options();
  for (int k = 0; k < 25; k++) {
    uint64_t seed = 5150000 + (uint64_t)_i * 25 + (uint64_t)k;
    GenProgram p = gen_program(seed, &o);
    char *err = round_trip(p.text, seed);
    ck_assert_msg(err == NULL, "seed %llu: %s", (unsigned long long)seed, err);
  }
}
END_TEST

/* :jvp and :vjp print definitions that load back and compute what jvp
   and vjp compute (the same bits). */
static const char *const derived_examples[][3] = {
    {"def f (v: [R]) = softmax v\n", ":jvp f", "jvp f [1, 2, 3] [1, 0, 0] ~ jvp_f [1, 2, 3] [1, 0, 0]"},
    {"def f (v: [R]) = softmax v\n", ":vjp f", "vjp f [1, 2, 3] [1, 0, 0] ~ vjp_f [1, 2, 3] [1, 0, 0]"},
    {"def f (x: R) (y: R) = x * x * y + sin y\n", ":jvp (grad f)", "jvp (grad f) 1 2 1 0 ~ jvp_grad_f 1 2 1 0"},
    {"def f (x: [R]) : R = sum (map2 (a, b. 100 * (b - a * a) ^ 2 + (1 - a) ^ 2) (shift1R x) (shift1L x))\n",
     ":jvp (grad f)", "jvp (grad f) [1, 2, 3] [1, 0, 1] ~ jvp_grad_f [1, 2, 3] [1, 0, 1]"},
    {"def f (m: [[R]]) (x: [R]) = map (r. tanh (dot r x)) m\n", ":vjp f",
     "vjp f [[1, 2], [3, 4]] [1, 1] [1, 2] ~ vjp_f [[1, 2], [3, 4]] [1, 1] [1, 2]"},
};

START_TEST(derived_round_trip) {
  const char *const *ex = derived_examples[_i];
  Session *s = tl_session_with(ex[0]);
  TlRun g = tl_capture(s, ex[1], true);
  ck_assert_msg(g.ok, "'%s' failed: %s", ex[1], g.err);
  TlRun load = tl_capture(s, g.out, true);
  ck_assert_msg(load.ok, "the printed definition does not load: %s\n%s", load.err, g.out);
  const char *sep = strstr(ex[2], " ~ ");
  char *want = tl_capture_merged(s, una_strndup(ex[2], (size_t)(sep - ex[2])), true);
  char *got = tl_capture_merged(s, sep + 3, true);
  ck_assert_msg(strcmp(want, got) == 0, "%s gives %s but the printed one gives %s\n%s", ex[2], want, got, g.out);
}
END_TEST

/* A dead map2 kept only for its length check prints as a comment (the
   paper's ∇dot = (b, a)); the gradient still raises the primal's error
   for arrays of different lengths. */
START_TEST(length_checks_as_comments) {
  Session *s = tl_session_with("");
  TlRun g = tl_capture(s, ":grad dot", true);
  ck_assert_msg(g.ok, "':grad dot' failed: %s", g.err);
  ck_assert_str_eq(g.out, "def grad_dot (a: [R]) (b: [R]) : ([R], [R]) =\n"
                          "  -- checks: length a == length b\n"
                          "  (b, a)\n");
  TlRun bad = tl_capture(s, "(grad dot) [1, 2] [1, 2, 3]", true);
  ck_assert(!bad.ok);
  ck_assert_msg(strstr(bad.err, "map2: lengths 2 and 3 differ"), "%s", bad.err);
  /* a map2 whose value is read stays a let */
  Session *s2 = tl_session_with("def f (a: [R]) (b: [R]) : R = let p = map2 (*) a b in sum p + p[0]\n");
  TlRun g2 = tl_capture(s2, ":show source f", true);
  ck_assert_msg(g2.ok && strstr(g2.out, "let p = map2 (*) a b in") && !strstr(g2.out, "-- checks"), "%s", g2.out);
}
END_TEST

Suite *suite_grad_print(void) {
  Suite *s = suite_create("grad_print");
  TCase *tc = tcase_create("grad_print");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, examples_round_trip, 0, (int)(sizeof examples / sizeof examples[0]));
  tcase_add_loop_test(tc, generated_round_trip, 0, 8);
  tcase_add_loop_test(tc, derived_round_trip, 0, (int)(sizeof derived_examples / sizeof derived_examples[0]));
  tcase_add_test(tc, length_checks_as_comments);
  suite_add_tcase(s, tc);
  return s;
}
