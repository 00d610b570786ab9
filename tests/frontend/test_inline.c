/* test_inline.c: the inliner: no call is left; values are unchanged on
   every prelude function and on nested calls (calls in arguments, in
   lambda bodies, functions passed by name to combinators); each argument
   is computed once; every binder is fresh and bound once; the original Def
   is untouched; grad nodes stay; a 16,000-let body inlines quickly. */
#include <check.h>
#include <time.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/inline.h"
#include "../../frontend/ir/retype.h"
#include "../../frontend/ir/strbuf.h"
#include "../../frontend/repl/session.h"
#include "../suites.h"
#include "../testlib.h"

static Span S0;

/* A sample argument of type t (variant k varies the numbers). */
static Value sample(const Type *t, int k) {
  switch (t->kind) {
  case TY_REAL: return val_real(0.75 - 0.5 * k);
  case TY_BOOL: return val_bool(k % 2 == 0);
  case TY_TUPLE: {
    Value *items = NEW_ARRAY(Value, t->n);
    for (int i = 0; i < t->n; i++) items[i] = sample(t->elems[i], k + i);
    return val_tuple(t->n, items);
  }
  case TY_ARRAY: {
    size_t n = 5 + (size_t)k;
    Array *a = val_new_array_of(t->elem, n, S0);
    for (size_t i = 0; i < n; i++) {
      Value v = t->elem->kind == TY_REAL ? val_real(((double)i * 1.7 - 3.1) * (k + 1)) : sample(t->elem, k + (int)i);
      val_array_set(a, i, v);
    }
    return val_array(a);
  }
  case TY_FUN: break;
  }
  UNREACHABLE();
}

/* d and fe_inline(d) give the same value on sample arguments; the inlined
   Def has no call left and passes fe_retype. */
static void same_values(Def *d) {
  Def *in = fe_inline(d);
  ck_assert_int_eq(tl_count_kind(in->body, T_CALL, -1), 0);
  ck_assert_int_eq(in->nparams, d->nparams);
  for (int i = 0; i < d->nparams; i++) ck_assert_ptr_eq(in->params[i], d->params[i]);
  fe_retype(in);
  fe_retype(d);
  for (int k = 0; k < 3; k++) {
    Value *args = NEW_ARRAY(Value, d->nparams + 1);
    for (int i = 0; i < d->nparams; i++) args[i] = sample(d->params[i]->type, k);
    Value a = cpu_call(d, args), b = cpu_call(in, args);
    ck_assert_msg(tl_same_bits(a, b, false), "%s: %s vs %s", d->name, val_to_string(a), val_to_string(b));
  }
}

static const char *prelude_names[] = {"sum", "prod", "dot", "mean", "sumsq", "norm", "maximum",
                                      "minimum", "logsumexp", "softmax", "variance", "stddev",
                                      "cumsum", "relu"};

START_TEST(prelude_values) {
  for (size_t i = 0; i < sizeof prelude_names / sizeof *prelude_names; i++) {
    Def *d = fe_env_find_def(tl_session->env, prelude_names[i]);
    ck_assert_msg(d != NULL, "%s", prelude_names[i]);
    same_values(d);
  }
}
END_TEST

START_TEST(nested_calls) {
  tl_run("def f (x: R) = x * 2 + 1\n"
         "def g (x: R) (y: R) = f (f x) * f y\n"
         "def h (a: [R]) (t: (R, B)) = sum (map (x. g x (f x)) a) + dot a a + (if t.2 then f t.1 else 0)\n"
         "def k (a: [R]) = map f (map2 g a a)\n"
         "def p (a: [R]) = let (u, v) = (sumsq a, h a (1, true)) in u * v + norm (k a)\n");
  const char *names[] = {"f", "g", "h", "k", "p"};
  for (int i = 0; i < 5; i++) same_values(fe_env_find_def(tl_session->env, names[i]));
  /* an expression calling into them */
  Def *e = tl_check("p [1, 2, 3] + g (f 1) (f (f 2))");
  same_values(e);
}
END_TEST

START_TEST(arguments_once) {
  tl_run("def twice (x: R) = x + x\ndef pair (x: R) (y: R) = (x * y, y * x, x)\n");
  /* the argument (a sum over iota) is computed once, and bound to a fresh
     variable */
  Def *e = tl_check("twice (sum (iota 10))");
  Def *in = fe_inline(e);
  ck_assert_int_eq(tl_count_kind(in->body, T_PRIM, PRIM_IOTA), 1);
  ck_assert_int_eq(tl_count_kind(in->body, T_PRIM, PRIM_REDUCE), 1);
  ck_assert(cpu_call(in, NULL).u.r == 90);
  e = tl_check("pair (twice (exp 1)) (log 2)");
  in = fe_inline(e);
  ck_assert_int_eq(tl_count_kind(in->body, T_PRIM, PRIM_EXP), 1);
  ck_assert_int_eq(tl_count_kind(in->body, T_PRIM, PRIM_LOG), 1);
  same_values(e);
}
END_TEST

START_TEST(fresh_binders) {
  tl_run("def f (x: R) = let y = x * x in let (a, b) = (y, x) in sum (map (z. z + a) [b, y])\n"
         "def g (x: R) = f x + f (f x)\n");
  Def *f = fe_env_find_def(tl_session->env, "f"), *g = fe_env_find_def(tl_session->env, "g");
  int fslots = f->nslots, gslots = g->nslots;
  Def *in = fe_inline(g);
  /* f's body is pasted three times, each copy with binders of its own */
  TlSyms bs = {0}, orig = {0};
  tl_binders(in->body, &bs);
  tl_binders(f->body, &orig);
  tl_binders(g->body, &orig);
  ck_assert_int_ge(bs.n, 3 * (orig.n + 1));
  tl_assert_bound_once(in->body);
  for (int i = 0; i < bs.n; i++) {
    for (int j = 0; j < orig.n; j++) ck_assert_ptr_ne(bs.v[i], orig.v[j]);
    for (int j = 0; j < f->nparams; j++) ck_assert_ptr_ne(bs.v[i], f->params[j]);
  }
  fe_retype(in);
  /* the callee and the caller are untouched */
  ck_assert_int_eq(f->nslots, fslots);
  ck_assert_int_eq(g->nslots, gslots);
  fe_retype(f);
  fe_retype(g);
  same_values(g);
}
END_TEST

START_TEST(grad_left_alone) {
  tl_run("def sq (x: R) = x * x\n");
  Def *e = tl_check("grad sq (sq 3)");
  Def *in = fe_inline(e);
  ck_assert_int_eq(in->body->kind, T_GRAD);
  ck_assert_ptr_eq(in->body->def, fe_env_find_def(tl_session->env, "sq"));
  ck_assert_int_eq(tl_count_kind(in->body, T_CALL, -1), 0); /* its argument is inlined */
  fe_retype(in);
}
END_TEST

typedef struct Job {
  Def *d;
  Def *in;
  double seconds;
  const char *err;
} Job;

static void job_main(void *arg) {
  Job *j = arg;
  FeTry t;
  if (fe_try(&t)) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    j->in = fe_inline(j->d);
    clock_gettime(CLOCK_MONOTONIC, &b);
    j->seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    fe_retype(j->in);
    fe_untry(&t);
  } else {
    j->err = fe_error_text(t.err);
  }
}

START_TEST(long_body_fast) {
  /* def big (x0: R) = let x1 = f x0 in let x2 = f x1 in ... x16000, where
     f (x: R) = let y = sin x in y * 0.5 + x (16,000 calls to inline) */
  tl_run("def f (x: R) = let y = sin x in y * 0.5 + x\n");
  Def *f = fe_env_find_def(tl_session->env, "f");
  int n = 16000;
  Sym **xs = NEW_ARRAY(Sym *, n + 1);
  for (int i = 0; i <= n; i++) xs[i] = fe_mk_sym("x", fe_ty_real(), S0);
  Term *body = fe_mk_var(S0, xs[n]);
  for (int i = n; i >= 1; i--) {
    Term *a = fe_mk_var(S0, xs[i - 1]);
    Term *call = fe_term_kids(S0, T_CALL, fe_ty_real(), 1, &a);
    call->def = f;
    body = fe_mk_let(S0, xs[i], call, body);
  }
  Def *d = fe_mk_def("big", S0, 1, xs, body);
  Job j = {d, NULL, 0, NULL};
  tl_on_stack((size_t)64 << 20, job_main, &j);
  ck_assert_msg(!j.err, "%s", j.err ? j.err : "");
  ck_assert_msg(j.seconds < 1.0, "inlining 16,000 calls took %g s", j.seconds);
  ck_assert_int_eq(tl_count_kind(j.in->body, T_CALL, -1), 0);
  ck_assert_int_eq(tl_count_kind(j.in->body, T_LET, -1), 3 * n); /* x_i, f's x and y */
  Value arg = val_real(0.3);
  Value a = cpu_call(d, &arg), b = cpu_call(j.in, &arg);
  ck_assert(tl_same_bits(a, b, false));
}
END_TEST

/* fe_inline_some keeps the calls of functions over the limit (their
   arguments inlined), and of one called from many places of the body; its
   decisions are linear in the Defs even when full inlining would be
   exponential (a chain of 40 functions each calling the previous twice);
   values are unchanged. */
static bool any_def(const Def *d, void *ud) { return true; }
static bool no_def(const Def *d, void *ud) { return false; }

START_TEST(policy_keeps_large_calls) {
  StrBuf b = {0};
  sb_put(&b, "def a0 (x: R) : R = sin x * x\n");
  for (int i = 1; i <= 40; i++) sb_put(&b, una_sprintf("def a%d (x: R) : R = a%d x + a%d (x * 0.5)\n", i, i - 1, i - 1));
  sb_put(&b, "def f (x: R) : R = a40 x\n"
             "def small (x: R) : R = x * 2\n"
             "def g (x: R) : R = small x + small (small x) + small 1 + small 2\n");
  Session *s = tl_session_with(sb_str(&b));
  FeInlinePolicy p = {100, 1000000, any_def, NULL};
  Def *in = fe_inline_some(tl_def(s, "f"), &p);
  int calls = tl_count_kind(in->body, T_CALL, -1);
  ck_assert_int_gt(calls, 0);
  ck_assert_int_lt(tl_term_size(in->body), 1000);
  /* small functions are inlined */
  Def *gi = fe_inline_some(tl_def(s, "g"), &p);
  ck_assert_int_eq(tl_count_kind(gi->body, T_CALL, -1), 0);
  /* called five times from g's own body, with a total over 10: kept */
  FeInlinePolicy q = {100, 10, any_def, NULL};
  Def *gk = fe_inline_some(tl_def(s, "g"), &q);
  ck_assert_int_eq(tl_count_kind(gk->body, T_CALL, -1), 5);
  /* the same values */
  fe_retype(gi);
  fe_retype(gk);
  Value a = tl_call(tl_def(s, "g"), tl_args(val_real(0.3), 1));
  ck_assert(tl_same_bits(a, tl_call(gi, tl_args(val_real(0.3), 1)), false));
  ck_assert(tl_same_bits(a, tl_call(gk, tl_args(val_real(0.3), 1)), false));
  /* can_keep says no: everything is inlined */
  Def *a6 = fe_inline_some(tl_def(s, "a6"), &(FeInlinePolicy){1, 1, no_def, NULL});
  ck_assert_int_eq(tl_count_kind(a6->body, T_CALL, -1), 0);
  ck_assert_int_gt(tl_count_kind(fe_inline_some(tl_def(s, "a6"), &(FeInlinePolicy){1, 1, any_def, NULL})->body, T_CALL, -1), 0);
}
END_TEST

Suite *suite_inline(void) {
  S0 = fe_span("t", 1, 1);
  Suite *s = suite_create("inline");
  TCase *tc = tcase_create("inline");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, prelude_values);
  tcase_add_test(tc, nested_calls);
  tcase_add_test(tc, arguments_once);
  tcase_add_test(tc, fresh_binders);
  tcase_add_test(tc, grad_left_alone);
  tcase_add_test(tc, long_body_fast);
  tcase_add_test(tc, policy_keeps_large_calls);
  suite_add_tcase(s, tc);
  return s;
}
