/* test_jt_call.c: modular differentiation (reverse/jt_call.c, the policy
   in reverse/grad.c, frontend/inline.c's fe_inline_some): the calls of
   large functions stay calls in the gradient, which calls their vjp_NAME;
   its gradients agree with the direct path (which inlines every call) and
   with finite differences on callees with arrays, tuples, booleans, calls
   in lambdas, calls with only some arguments active, nested kept calls;
   each callee is differentiated once per set of active arguments; a
   chain of 60 functions each calling the previous twice (exponential when
   inlined) derives into a small program whose gradient is exact; jvp
   through kept calls agrees with the gradient; the derived program prints
   with its helpers and loads back. */
#include <check.h>
#include <math.h>

#include "../../frontend/ir/strbuf.h"
#include "../../frontend/ir/term_print.h"
#include "../../frontend/repl/session.h"
#include "../../optimizer/program.h"
#include "../suites.h"
#include "../testlib.h"
#include "gradcheck.h"

/* A function too large to inline: NAME (x: R) (v: [R]) : R, a smooth
   chain of lets over x and sums of v (over 400 nodes). */
static const char *big(const char *name) {
  StrBuf b = {0};
  sb_put(&b, una_sprintf("def %s (x: R) (v: [R]) : R =\n  let t0 = x + 0.1 * sum (map (a. a * a) v) in\n", name));
  for (int i = 1; i <= 60; i++)
    sb_put(&b, una_sprintf("  let t%d = 0.5 * t%d + 0.25 * sin (t%d * x) + 0.01 * sum v in\n", i, i - 1, i - 1));
  sb_put(&b, "  t60 * x\n");
  return sb_str(&b);
}

static const char *with_big(const char *rest) { return una_sprintf("%s%s", big("big"), rest); }

/* gc_check of f in text, on both paths and finite differences. */
static void check_f(const char *text, bool direct) {
  GcOptions o = gc_default_options();
  o.no_direct = !direct; /* the direct path has no loops */
  GcStats st = {0};
  char *r = gc_check("<modular>", text, "f", 17, &o, &st);
  if (r) fprintf(stderr, "%s\n", r);
  ck_assert_msg(r == NULL, "gc_check failed (report above)");
  ck_assert_int_gt(st.nonzero, 0);
}

/* The number of calls of vjp helpers in f's UNF gradient. */
static int vjp_calls(const char *text, const char *fname) {
  char *err = NULL;
  GcProgram *p = gc_load("<modular>", text, true, fname, &err);
  ck_assert_msg(p, "%s", err ? err : "");
  int wrt[16];
  int n = gc_wrt(p, NULL, wrt);
  Def *g = rev_grad(p->f, wrt, n, REV_UNF);
  return tl_count_kind(g->body, T_CALL, -1);
}

START_TEST(kept_calls_agree_with_inlining) {
  const char *progs[] = {
      /* two sites, different arguments */
      "def f (x: R) (v: [R]) : R = big x v * big (x * 2) v\n",
      /* a call in a lambda */
      "def f (x: R) (v: [R]) : R = sum (map (t. big (t * x) v) v)\n",
      /* only x active in the callee: vjp_big_wrt_x */
      "def f (x: R) : R = big x [0.5, -1, 2] + big (x * x) [1]\n",
      /* only v active */
      "def f (v: [R]) : R = big 0.3 v + big 0.7 (map (a. a * 2) v)\n",
      /* a kept call under an if and in a loop (finite differences only) */
      "def f (x: R) (v: [R]) : R = if x > 0 then big x v else loop s = x for i < 3 do big s v\n",
  };
  int n = (int)(sizeof progs / sizeof *progs);
  for (int i = 0; i < n; i++) {
    const char *text = with_big(progs[i]);
    ck_assert_int_gt(vjp_calls(text, "f"), 0);
    check_f(text, i < n - 1);
  }
}
END_TEST

START_TEST(tuples_booleans_and_nesting) {
  StrBuf b = {0};
  sb_put(&b, big("big"));
  /* a large callee with a boolean parameter and a tuple result */
  sb_put(&b, "def pair (flag: B) (x: R) (v: [R]) : (R, [R]) =\n"
             "  let y = big x v in (if flag then y else 0 - y, map (a. a * y) v)\n");
  /* a large callee calling another: both kept */
  sb_put(&b, una_sprintf("%s", big("inner")));
  sb_put(&b, "def outer (x: R) (v: [R]) : R = inner x v + inner (x + 1) v * big x v\n");
  sb_put(&b, "def f (x: R) (v: [R]) : R =\n"
             "  let (a, w) = pair (x > 0) x v in\n"
             "  a + sum w + outer (x * 0.5) w\n");
  const char *text = sb_str(&b);
  ck_assert_int_gt(vjp_calls(text, "f"), 0);
  check_f(text, true);
}
END_TEST

/* Each callee is differentiated once per set of active arguments: two
   gradients calling it share its vjp. */
START_TEST(one_vjp_per_callee) {
  const char *text = with_big("def f (x: R) (v: [R]) : R = big x v + big (x * x) v\n"
                              "def g (x: R) (v: [R]) : R = big (x + 1) v\n");
  char *err = NULL;
  GcProgram *p = gc_load("<modular>", text, true, "f", &err);
  ck_assert_msg(p, "%s", err ? err : "");
  Def *g = fe_env_find_def(p->env, "g"), *bg = fe_env_find_def(p->env, "big");
  int wrt[2] = {0, 1};
  Def *v1 = rev_vjp(bg, wrt, 2, REV_UNF);
  rev_grad(p->f, wrt, 2, REV_UNF);
  rev_grad(g, wrt, 2, REV_UNF);
  ck_assert_ptr_eq(rev_vjp(bg, wrt, 2, REV_UNF), v1);
  ck_assert_str_eq(v1->name, "vjp_big");
  int only_x[1] = {0};
  Def *v2 = rev_vjp(bg, only_x, 1, REV_UNF);
  ck_assert_ptr_ne(v2, v1);
  ck_assert_str_eq(v2->name, "vjp_big_wrt_x");
}
END_TEST

/* The doubling chain: 60 functions, each calling the previous one twice.
   Inlined it would have 2^60 calls; kept, the derived program is small
   and its gradient exact: 2^60 (x cos x + sin x). */
START_TEST(doubling_chain) {
  StrBuf b = {0};
  sb_put(&b, "def a0 (x: R) : R = sin x * x\n");
  for (int i = 1; i <= 60; i++) sb_put(&b, una_sprintf("def a%d (x: R) : R = a%d x + a%d x\n", i, i - 1, i - 1));
  Session *s = tl_session_with(sb_str(&b));
  /* evaluated by the session, optimized (unoptimized, the primal itself
     makes 2^60 calls) */
  TlRun r = tl_capture(s, "grad a60 0.5\na60 0.5", true);
  ck_assert_msg(r.ok, "%s", r.err);
  char *end;
  double gv = strtod(r.out, &end), p = strtod(end, NULL);
  ck_assert_msg(tl_near(gv, ldexp(0.5 * cos(0.5) + sin(0.5), 60), 1e-13), "%s", r.out);
  ck_assert_msg(tl_near(p, ldexp(0.5 * sin(0.5), 60), 1e-13), "%s", r.out);
  int wrt[1] = {0};
  Def *g = rev_grad(tl_def(s, "a60"), wrt, 1, REV_UNF);
  ck_assert_int_lt(tl_term_size(g->body), 20000);
  OptOptions o = {0};
  o.enabled = true;
  Def *og = opt_optimize_program(g, &o);
  ck_assert_int_lt(tl_term_size(og->body), 1000);
  /* the optimized gradient calls one helper, once */
  ck_assert_int_eq(tl_count_kind(og->body, T_CALL, -1), 1);
}
END_TEST

/* jvp through a kept call (jvp_big) agrees with <grad, t>. */
START_TEST(jvp_through_kept_calls) {
  const char *text = with_big("def f (x: R) (v: [R]) : R = big x v * big (x * 2) (map (a. a * x) v)\n");
  Session *s = tl_session_with(text);
  Value j = tl_ev_in(s, "(jvp f 0.3 [1, -0.5, 2] 0.7 [0.2, 0.1, -1]).2");
  Value g = tl_ev_in(s, "let (gx, gv) = grad f 0.3 [1, -0.5, 2] in gx * 0.7 + sum (map2 (*) gv [0.2, 0.1, -1])");
  ck_assert_msg(tl_near(j.u.r, g.u.r, 1e-12), "%.17g vs %.17g", j.u.r, g.u.r);
  /* and the Hessian-vector product through both */
  Value h1 = tl_ev_in(s, "(jvp (grad f wrt x) 0.3 [1, -0.5, 2] 1 [0, 0, 0]).2");
  Value h2 = tl_ev_in(s, "(grad (x, v. (grad f wrt x) x v) wrt x) 0.3 [1, -0.5, 2]");
  ck_assert_msg(tl_near(h1.u.r, h2.u.r, 1e-9), "%.17g vs %.17g", h1.u.r, h2.u.r);
}
END_TEST

/* :grad prints the helpers before the gradient: the primal call and its
   vjp in one chain are split into fwd_big (value and residuals) and
   rev_big (residuals and cotangent), so big's forward pass runs once; the
   text loads back and computes the same gradient. */
START_TEST(printed_with_helpers) {
  const char *text = with_big("def f (x: R) (v: [R]) : R = big x v * big (x * 2) v\n");
  Session *s = tl_session_with(text);
  TlRun r = tl_capture(s, ":grad f", true);
  ck_assert(r.ok);
  const char *grad = strstr(r.out, "def grad_f"), *fwd = strstr(r.out, "def fwd_big (x: R) (v: [R]) : (R, ("),
             *rev = strstr(r.out, "def rev_big (r: (");
  ck_assert(grad && fwd && rev);
  ck_assert(fwd < grad && rev < grad);
  ck_assert(strstr(grad, "= fwd_big x v in") && strstr(grad, "= rev_big r"));
  ck_assert(strstr(r.out, "vjp_big") == NULL);
  /* load the printed program beside big and compare */
  Session *t = tl_session_with(una_sprintf("%s%s", big("big"), r.out));
  Value want = tl_ev_in(s, "grad f 0.4 [1, 2]");
  Value got = tl_ev_in(t, "grad_f 0.4 [1, 2]");
  ck_assert_msg(tl_same_bits(want, got, false), "%s vs %s", val_to_string(want), val_to_string(got));
}
END_TEST

/* The split computes what the joint vjp computes: gradients evaluated
   through fwd/rev (the derived program) against the unoptimized gradient,
   which calls vjp_big, on a program where the primal call comes after its
   vjp's use (the split moves it first) and where one forward call serves
   two reverse calls. */
START_TEST(split_matches_joint) {
  const char *text = with_big("def f (x: R) (v: [R]) : R =\n"
                              "  let u = big (x * 3) v in\n"
                              "  u * big x (map (a. a * u) v) + big (x * 3) v\n");
  Session *s = tl_session_with(text);
  TlRun r = tl_capture(s, "grad f 0.2 [0.5, -1, 1.5]\n:grad f", true);
  ck_assert(r.ok);
  ck_assert(strstr(r.out, "rev_big") != NULL);
  /* the gradient as derived, unoptimized: it calls vjp_big */
  int wrt[2] = {0, 1};
  Def *raw = rev_grad(tl_def(s, "f"), wrt, 2, REV_UNF);
  Value args = tl_ev_in(s, "(0.2, [0.5, -1, 1.5])");
  Value joint = tl_call(raw, tl_args(args, 2));
  char *line = una_strndup(r.out, strcspn(r.out, "\n"));
  Value split = tl_ev_in(s, line);
  ck_assert_msg(tl_same_optimized(split, joint), "%s vs %s", line, val_to_string(joint));
}
END_TEST

Suite *suite_jt_call(void) {
  Suite *s = suite_create("jt_call");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, kept_calls_agree_with_inlining);
  tcase_add_test(tc, tuples_booleans_and_nesting);
  tcase_add_test(tc, one_vjp_per_callee);
  tcase_add_test(tc, doubling_chain);
  tcase_add_test(tc, jvp_through_kept_calls);
  tcase_add_test(tc, printed_with_helpers);
  tcase_add_test(tc, split_matches_joint);
  suite_add_tcase(s, tc);
  return s;
}
