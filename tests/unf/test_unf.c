/* test_unf.c: UNF (figure 9), D_rho (figure 8) and the printer on the
   paper's examples (4.1 and 4.2 cos; pair, 1.1, prod, sum, dot), golden;
   the contexts (sharing, random access, equality); the constructors'
   checks; and the UNF invariant: UNF(e) followed by UNF^-1 (without D)
   computes e's value, for every construct of the source language. */
#include <check.h>
#include <signal.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/inline.h"
#include "../../frontend/ir/retype.h"
#include "../../frontend/repl/session.h"
#include "../../reverse/d_rho.h"
#include "../../unf/activity.h"
#include "../../unf/unf.h"
#include "../suites.h"
#include "../testlib.h"

static Span S0;

static const Type *R(void) { return fe_ty_real(); }

/* The Source UNF of def f of the program, inlined, printed on one line. */
static char *unf_of(const char *text, const char *f) {
  Def *d = fe_inline(tl_def(tl_session_with(text), f));
  return unf_str(unf_of_term(d->params, d->nparams, d->body));
}

static Sym **syms3(void) {
  Sym **x = NEW_ARRAY(Sym *, 3);
  for (int i = 0; i < 3; i++) x[i] = fe_mk_sym(una_sprintf("x%d", i + 1), R(), S0);
  return x;
}

/* ---- golden ---- */

/* Example 4.1: cos[R,R]; pair[R,R;RxR] in the context x1, x2, x3. */
static Unf *example41(void) {
  const UnfCtx *g = unf_ctx_of_syms(syms3(), 3);
  Unf *c = unf_op(S0, g, PRIM_COS);
  Unf *p = unf_pair(S0, c->out, 2);
  Unf *steps[2] = {c, p};
  return unf_seq(2, steps);
}

START_TEST(golden_example_41) {
  Unf *e = example41();
  ck_assert_str_eq(unf_str(e), "cos[R,R]; pair[R,R;RxR]");
  ck_assert_str_eq(unf_ctx_str(e->in), "R^3");
  ck_assert_str_eq(unf_ctx_str(e->out), "R,R,RxR");
}
END_TEST

/* F(P, J^T P) of figure 8 as the printer writes it, for the primitive P
   (printed p) in the context R^k followed by its continuation
   (R^k)->rho. */
static char *dstep(int k, const char *p) {
  return una_sprintf("<proj[R^%d;(R^%d)->rho;[]]; %s, proj[[];R^%d;(R^%d)->rho] o "
                     "(proj[R^%d;(R^%d)->rho;[]]; J^T %s)>",
                     k, k, p, k, k, k, k, p);
}

/* Example 4.2: D_rho(cos; pair), as the paper prints it. */
START_TEST(golden_example_42) {
  Unf *d = rev_d_rho(example41());
  ck_assert_str_eq(unf_str(d), una_sprintf("%s; %s", dstep(3, "cos[R,R]"), dstep(4, "pair[R,R;RxR]")));
  ck_assert_str_eq(unf_ctx_str(d->in), "R^3,(R^3)->rho");
  ck_assert_str_eq(unf_ctx_str(d->out), "R,R,RxR,(R,R,RxR)->rho");
}
END_TEST

/* Example 1.1 (and 3.1's expansion): let w1 = x1 * x2 in let w2 = w1 * x1
   in w2 in the context x1, x2, x3. */
static const char *EX11 =
    "def ex (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2\n";

START_TEST(golden_example_11) {
  ck_assert_str_eq(unf_of(EX11, "ex"),
                   "var[R^3;1]; var[R^4;2]; mul[R^3]; proj[R^3;R,R;R]; var[R^4;4]; var[R^5;1]; "
                   "mul[R^4]; proj[R^4;R,R;R]; var[R^5;5]; proj[R^4;R;R]; proj[R^3;R;R]");
}
END_TEST

/* Example 3.1's expansion of example 1.1, in UNF: one F(P, J^T P) per
   primitive (figure 8). */
START_TEST(golden_example_11_dunf) {
  Def *d = fe_inline(tl_def(tl_session_with(EX11), "ex"));
  Unf *u = rev_d_rho(unf_of_term(d->params, d->nparams, d->body));
  /* the primitives of golden_example_11, each with k as in dstep */
  static const struct {
    int k;
    const char *p;
  } steps[] = {
      {3, "var[R^3;1]"}, {4, "var[R^4;2]"}, {5, "mul[R^3]"},      {6, "proj[R^3;R,R;R]"},
      {4, "var[R^4;4]"}, {5, "var[R^5;1]"}, {6, "mul[R^4]"},      {7, "proj[R^4;R,R;R]"},
      {5, "var[R^5;5]"}, {6, "proj[R^4;R;R]"}, {5, "proj[R^3;R;R]"},
  };
  char *want = "";
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    want = una_sprintf("%s%s%s", want, i ? ";\n" : "", dstep(steps[i].k, steps[i].p));
  ck_assert_str_eq(unf_str_opts(u, UNF_PRINT_LINES), want);
  ck_assert_str_eq(unf_ctx_str(u->in), "R^3,(R^3)->rho");
  ck_assert_str_eq(unf_ctx_str(u->out), "R^4,(R^4)->rho");
}
END_TEST

/* Long contexts print their two ends. */
START_TEST(golden_long_context) {
  const UnfCtx *c = NULL;
  for (int i = 0; i < 100; i++) c = unf_ctx_push(c, i < 50 ? R() : fe_ty_array(R()), NULL);
  ck_assert_str_eq(unf_ctx_str(c), "R^32,...(36 more)...,[R]^32");
  ck_assert_str_eq(unf_ctx_str(unf_ctx_prefix(c, 64)), "R^50,[R]^14");
}
END_TEST

START_TEST(golden_prod_sum_dot) {
  const char *p = "def prd (A: [R]) : R = reduce (*) 1 A\n"
                  "def sm (A: [R]) : R = reduce (+) 0 A\n"
                  "def dt (A: [R]) (B: [R]) : R = reduce (+) 0 (map2 (*) A B)\n";
  ck_assert_str_eq(unf_of(p, "prd"),
                   "1[[R]]; var[[R],R;1]; reduce[[R];(x, y. x * y)]; proj[[R];R,[R];R]");
  ck_assert_str_eq(unf_of(p, "sm"),
                   "0[[R]]; var[[R],R;1]; reduce[[R];(x, y. x + y)]; proj[[R];R,[R];R]");
  ck_assert_str_eq(unf_of(p, "dt"),
                   "0[[R],[R]]; var[[R],[R],R;1]; var[[R],[R],R,[R];2]; "
                   "map2[[R],[R],R;(x, y. x * y)]; proj[[R],[R],R;[R],[R];[R]]; "
                   "reduce[[R],[R];(x, y. x + y)]; proj[[R],[R];R,[R];R]");
}
END_TEST

START_TEST(golden_constructs) {
  const char *p = "def f (x: R) (t: (R, R)) (b: B) : R =\n"
                  "  let (u, v) = t in if b && x > 0 then u else v * length [x, 2]\n";
  char *s = unf_of(p, "f");
  ck_assert_str_eq(s,
                   "var[R,RxR,B;2]; var[R,RxR,B,RxR;4]; pi1[R,RxR,B,RxR;RxR]; "
                   "proj[R,RxR,B,RxR;RxR;R]; var[R,RxR,B,RxR,R;4]; pi2[R,RxR,B,RxR,R;RxR]; "
                   "proj[R,RxR,B,RxR,R;RxR;R]; cst[R,RxR,B,RxR,R,R;b && x > 0]; "
                   "if[R,RxR,B,RxR,R,R;then u else v * length [x, 2]]; "
                   "proj[R,RxR,B,RxR,R,R;B;R]; proj[R,RxR,B;RxR,R,R;R]");
}
END_TEST

/* ---- contexts ---- */

START_TEST(ctx_sharing_and_access) {
  const UnfCtx *c = NULL;
  const UnfCtx **nodes = NEW_ARRAY(const UnfCtx *, 10001);
  for (int i = 0; i < 10000; i++) {
    c = unf_ctx_push(c, i % 2 ? R() : fe_ty_bool(), NULL);
    nodes[i] = c;
  }
  ck_assert_int_eq(unf_ctx_len(c), 10000);
  for (int i = 0; i < 10000; i += 37) {
    ck_assert_ptr_eq(unf_ctx_at(c, i), nodes[i]);
    ck_assert_ptr_eq(unf_ctx_prefix(c, i + 1), nodes[i]);
  }
  ck_assert_ptr_null(unf_ctx_prefix(c, 0));
  /* shared tails: two contexts on the same tail compare in O(1) */
  const UnfCtx *a = unf_ctx_push(nodes[5000], R(), NULL);
  const UnfCtx *b = unf_ctx_push(nodes[5000], R(), NULL);
  ck_assert(unf_ctx_eq(a, b));
  ck_assert(!unf_ctx_eq(a, unf_ctx_push(nodes[5000], fe_ty_bool(), NULL)));
  ck_assert(!unf_ctx_eq(a, nodes[5000]));
  ck_assert(unf_ctx_eq(unf_ctx_d(a), unf_ctx_d(b)));
  ck_assert(!unf_ctx_eq(unf_ctx_d(a), unf_ctx_d(nodes[5002])));
  ck_assert_str_eq(unf_ctx_str(unf_ctx_push(unf_ctx_push(NULL, R(), NULL),
                                            fe_ty_array(fe_ty_pair(R(), R())), NULL)),
                   "R,[RxR]");
}
END_TEST

/* 10,000 lets cost memory linear in the program (no context copies). */
START_TEST(ctx_linear_memory) {
  size_t n = 10000;
  size_t cap = n * 40 + 100;
  char *text = malloc(cap);
  size_t k = (size_t)snprintf(text, cap, "def f (x: R) : R =\n");
  for (size_t i = 0; i < n; i++)
    k += (size_t)snprintf(text + k, cap - k, " let a%zu = %s * 1.5 in\n", i,
                          i ? una_sprintf("a%zu", i - 1) : "x");
  snprintf(text + k, cap - k, " a%zu\n", n - 1);
  Def *d = fe_inline(tl_def(tl_session_with(text), "f"));
  free(text);
  GC_gcollect();
  size_t before = GC_get_total_bytes();
  Unf *u = unf_of_term(d->params, d->nparams, d->body);
  Unf *du = rev_d_rho(u);
  size_t used = GC_get_total_bytes() - before;
  ck_assert_int_eq(u->nkids, 5 * (int)n + 1); /* var; const; mul; proj; proj per let */
  ck_assert_int_eq(du->nkids, u->nkids);
  ck_assert_msg(used < n * 16000, "UNF and D of %zu lets allocated %zu bytes", n, used);
}
END_TEST

/* ---- constructor checks (a failed check is an internal error) ---- */

START_TEST(ctor_op_needs_reals) {
  const UnfCtx *g = unf_ctx_push(NULL, fe_ty_bool(), NULL);
  unf_op(S0, g, PRIM_SIN);
}
END_TEST

START_TEST(ctor_seq_checks_contexts) {
  const UnfCtx *g = unf_ctx_of_syms(syms3(), 3);
  Unf *a = unf_var(S0, g, 0);
  Unf *b = unf_var(S0, g, 1); /* expects the context g, not a's output */
  Unf *steps[2] = {a, b};
  unf_seq(2, steps);
}
END_TEST

START_TEST(ctor_comp_checks_types) {
  const UnfCtx *g = unf_ctx_of_syms(syms3(), 3);
  Unf *c = unf_op(S0, g, PRIM_COS);
  const UnfCtx *dg = unf_ctx_d(g);
  Unf *k = unf_proj(S0, dg, 3, 1);
  Unf *l = unf_jt(c);
  /* J^T cos runs in context g, k in D(g): composing them is ill-typed */
  unf_comp(k, l);
}
END_TEST

/* ---- the UNF invariant: UNF then UNF^-1 preserves values ---- */

typedef struct {
  const char *def;  /* defines f */
  const char *args; /* a tuple of the arguments, or one argument */
} Prog;

static const Prog progs[] = {
    {"def f (x: R) : R = 2.5", "1"},
    {"def f (x: R) (y: R) : R = x", "(1, 2)"},
    {"def f (x: R) (y: R) : R = y", "(1, 2)"},
    {"def f (x: R) (y: R) : R = let a = x * y in let b = a + x in b / y", "(3, 4)"},
    {"def f (x: R) (y: R) : R = let a = (let b = x - y in b * b) in a ^ 0.5", "(3, 7)"},
    {"def f (x: R) : R = -x + sin x - cos x * tan x + exp x / log x", "2"},
    {"def f (x: R) : R = sqrt x + tanh x - sigmoid x + abs (-x) + floor x", "2.5"},
    {"def f (x: R) (y: R) : R = pow x y + max x y - min x y + x ^ 2", "(1.5, 2.5)"},
    {"def f (t: (R, R)) : R = let (a, b) = t in a * b + t.1", "(2, 3)"},
    {"def f (x: R) : (R, (R, R)) = (x, (x * 2, x + 1))", "4"},
    {"def f (x: R) : R = (x, (x * 2, x + 1)).2.1", "4"},
    {"def f (x: R) (b: B) : R = if b && x > 1 then x * 2 else x - 1", "(3, true)"},
    {"def f (x: R) (b: B) : R = if b || x > 1 then x * 2 else x - 1", "(0, false)"},
    {"def f (x: R) : B = !(x == 2) != (x <= 3)", "2"},
    {"def f (v: [R]) (s: R) : [R] = map (a. a * s + 1) v", "([1, 2, 3], 2)"},
    {"def f (v: [R]) (w: [R]) (s: R) : [R] = map2 (a, b. a * b - s) v w", "([1, 2], [3, 4], 1)"},
    {"def f (v: [R]) : R = reduce (+) 0 v + reduce (max) (-inf) v", "[1, 5, 2]"},
    {"def f (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) 0 cs", "(2, [1, 2, 3])"},
    {"def f (x: R) : [R] = replicate 3 (x * 2)", "1.5"},
    {"def f (x: R) : [R] = [x, x * 2, 3]", "1.5"},
    {"def f (x: R) : [R] = []", "1"},
    {"def f (x: R) : [B] = [x > 0, true]", "1"},
    {"def f (v: [R]) : R = length v + length (iota 4)", "[1, 2]"},
    {"def f (x: R) : R = reduce (+) 0 (rand 5 x)", "7"},
    {"def f (x: R) : R = x + g", "1"},
    {"def f (v: [R]) : R = let w = map (a. a + 1) v in dot v w + sum w", "[1, 2, 3]"},
    {"def f (v: [R]) (x: R) : R = let n = length v in if n > 2 then sum v * x else x", "([1, 2, 3], 2)"},
};

/* f's value at args directly, and through UNF then UNF^-1. */
static void check_invariant(const Prog *p) {
  Session *s = tl_session_with(una_sprintf("let g = 10\n%s\n", p->def));
  Def *f = fe_inline(tl_def(s, "f"));
  Value *args = tl_args(tl_ev_in(s, p->args), f->nparams);
  Value direct = cpu_call(f, args);
  Unf *u = unf_of_term(f->params, f->nparams, f->body);
  ck_assert(unf_ctx_eq(u->in, unf_ctx_of_syms(f->params, f->nparams)));
  ck_assert_int_eq(unf_ctx_len(u->out), f->nparams + 1);
  Term *back = unf_to_term(u, f->params, f->nparams);
  Def *g = fe_mk_def("u", S0, f->nparams, f->params, back);
  fe_retype(g);
  Value via = cpu_call(g, args);
  ck_assert_msg(val_equal(direct, via), "%s: %s vs %s", p->def, val_to_string(direct),
                val_to_string(via));
}

/* Activity: a builtin that carries no derivative is a constant, whatever
   its arguments: `length x` and what is computed from it alone (`iota n`)
   are inactive, x itself and what reads it active. */
START_TEST(activity_of_constants) {
  Def *d = tl_def(tl_session_with("def f (x: [R]) (w: [R]) : R =\n"
                                  "  let n = length x in let t = iota n in sum (map2 (a, i. a * i) w t) + sum x\n"),
                  "f");
  UnfActivity *a = unf_activity(d->body, d->params, 1); /* x active, w not */
  const Term *l1 = d->body, *l2 = l1->kids[1];
  ck_assert_int_eq(l1->kind, T_LET);
  ck_assert_int_eq(l2->kind, T_LET);
  ck_assert(!unf_sym_active(a, l1->sym)); /* n = length x */
  ck_assert(!unf_sym_active(a, l2->sym)); /* t = iota n */
  ck_assert(!unf_term_active(a, l1->kids[0]));
  ck_assert(unf_sym_active(a, d->params[0]));
  ck_assert(unf_term_active(a, l2->kids[1])); /* the body reads x */
}
END_TEST

START_TEST(invariant) {
  for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) check_invariant(&progs[i]);
}
END_TEST

Suite *suite_unf(void) {
  Suite *s = suite_create("unf");
  TCase *tc = tcase_create("golden");
  tcase_add_test(tc, golden_example_41);
  tcase_add_test(tc, golden_example_42);
  tcase_add_test(tc, golden_example_11);
  tcase_add_test(tc, golden_example_11_dunf);
  tcase_add_test(tc, golden_long_context);
  tcase_add_test(tc, golden_prod_sum_dot);
  tcase_add_test(tc, golden_constructs);
  suite_add_tcase(s, tc);
  tc = tcase_create("contexts");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, ctx_sharing_and_access);
  tcase_add_test(tc, ctx_linear_memory);
  suite_add_tcase(s, tc);
  tc = tcase_create("constructors");
  tcase_add_test_raise_signal(tc, ctor_op_needs_reals, SIGABRT);
  tcase_add_test_raise_signal(tc, ctor_seq_checks_contexts, SIGABRT);
  tcase_add_test_raise_signal(tc, ctor_comp_checks_types, SIGABRT);
  suite_add_tcase(s, tc);
  tc = tcase_create("invariant");
  tcase_add_test(tc, activity_of_constants);
  tcase_add_test(tc, invariant);
  suite_add_tcase(s, tc);
  return s;
}
