/* test_grad_print.c: `:grad f` prints the optimized gradient as a Una
   definition that re-parses and computes the same values as `grad f`:
   for the paper's examples and a few hundred generated programs, the
   printed text is loaded back as a def and both are evaluated at random
   points. Also: the printed gradient has no lambda value and no
   application left (lemma 5.3). */
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

Suite *suite_grad_print(void) {
  Suite *s = suite_create("grad_print");
  TCase *tc = tcase_create("grad_print");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, examples_round_trip, 0, (int)(sizeof examples / sizeof examples[0]));
  tcase_add_loop_test(tc, generated_round_trip, 0, 8);
  suite_add_tcase(s, tc);
  return s;
}
