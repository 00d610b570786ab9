/* test_closure.c: closures (T_LAM values) and their application (T_APP) in
   the CPU interpreter, on target terms built by hand with fe_mk_*: simple
   and multi-argument applications, tail and non-tail chains of 20,000
   continuations (the latter within a fixed C stack budget per level),
   continuations created and applied inside map/map2/reduce bodies, the
   kernel compiler refusing such bodies, printing <function>, and the
   printed notation of target terms (fun (y) -> e, k (a, b)). */
#include <check.h>
#include <math.h>

#include "../../backend/eval.h"
#include "../../backend/kernel.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/ir/term_print.h"
#include "../suites.h"
#include "../testlib.h"

static Span S0;

static const Type *R(void) { return fe_ty_real(); }
static Term *num(double v) { return fe_mk_num(S0, v); }
static Term *var(Sym *x) { return fe_mk_var(S0, x); }
static Sym *sym(const char *n, const Type *t) { return fe_mk_sym(n, t, S0); }
static Term *app1(Term *f, Term *a) { return fe_mk_app(S0, f, 1, &a); }

/* The value of a closed target term (a Def without parameters). */
static Value run0(Term *body) { return tl_call(fe_mk_def("t", S0, 0, NULL, body), NULL); }

START_TEST(simple) {
  /* let k = fun (y) -> y * 2 in k (3) */
  Sym *y = sym("y", R());
  Term *lam = fe_mk_lam(S0, 1, &y, fe_mk_mul(S0, var(y), num(2)));
  Sym *k = sym("k", lam->type);
  Value v = run0(fe_mk_let(S0, k, lam, app1(var(k), num(3))));
  ck_assert_int_eq(v.kind, V_REAL);
  ck_assert(v.u.r == 6);
  /* applying a LAM directly: (fun (y) -> y + 1) (4) */
  Sym *z = sym("z", R());
  Term *l2 = fe_mk_lam(S0, 1, &z, fe_mk_add(S0, var(z), num(1)));
  ck_assert(run0(app1(l2, num(4))).u.r == 5);
}
END_TEST

START_TEST(multi_args_and_capture) {
  /* let c = 10 in let k = fun (a, b) -> (a - b + c, b) in let r = k (5, 2)
     in r.1 * 100 + r.2  ->  1302 */
  Sym *c = sym("c", R());
  Sym *ab[2] = {sym("a", R()), sym("b", R())};
  Term *items[2] = {fe_mk_add(S0, fe_mk_op2(S0, PRIM_SUB, var(ab[0]), var(ab[1])), var(c)),
                    var(ab[1])};
  Term *lam = fe_mk_lam(S0, 2, ab, fe_mk_tuple(S0, 2, items));
  Sym *k = sym("k", lam->type);
  Term *args[2] = {num(5), num(2)};
  Sym *r = sym("r", lam->type->elem);
  Term *use = fe_mk_add(S0, fe_mk_mul(S0, fe_mk_proj(S0, var(r), 0), num(100)),
                        fe_mk_proj(S0, var(r), 1));
  Term *body = fe_mk_let(S0, c, num(10),
                         fe_mk_let(S0, k, lam, fe_mk_let(S0, r, fe_mk_app(S0, var(k), 2, args), use)));
  ck_assert(run0(body).u.r == 1302);

  /* zero parameters: let k = fun () -> 7 in k () */
  Term *l0 = fe_mk_lam(S0, 0, NULL, num(7));
  Sym *k0 = sym("k0", l0->type);
  ck_assert(run0(fe_mk_let(S0, k0, l0, fe_mk_app(S0, var(k0), 0, NULL))).u.r == 7);

  /* six arguments (more than the evaluator's small buffer) */
  Sym *ps[6];
  Term *sum = NULL, *as[6];
  for (int i = 0; i < 6; i++) {
    ps[i] = sym("p", R());
    sum = sum ? fe_mk_add(S0, fe_mk_mul(S0, sum, num(10)), var(ps[i])) : var(ps[i]);
    as[i] = num(i + 1);
  }
  Term *l6 = fe_mk_lam(S0, 6, ps, sum);
  ck_assert(run0(fe_mk_app(S0, l6, 6, as)).u.r == 123456);
}
END_TEST

START_TEST(higher_order) {
  /* A continuation passed to a continuation:
     let twice = fun (f, x) -> f (f (x)) in twice (fun (y) -> y * 3, 2) = 18 */
  Sym *y = sym("y", R());
  Term *triple = fe_mk_lam(S0, 1, &y, fe_mk_mul(S0, var(y), num(3)));
  Sym *fx[2] = {sym("f", triple->type), sym("x", R())};
  Term *twice = fe_mk_lam(S0, 2, fx, app1(var(fx[0]), app1(var(fx[0]), var(fx[1]))));
  Term *args[2] = {triple, num(2)};
  ck_assert(run0(fe_mk_app(S0, twice, 2, args)).u.r == 18);
}
END_TEST

/* let k0 = fun (y) -> y in let k1 = fun (y) -> k0 (y + 1) in ...
   in k_n (0): a tail chain (each body ends in the application) when tail,
   else k_i = fun (y) -> k_{i-1} (y + 1) * 1 (the product keeps each
   application's C frames alive). Value n either way. */
static Term *chain(int n, bool tail) {
  Sym **k = NEW_ARRAY(Sym *, n + 1);
  Term **lam = NEW_ARRAY(Term *, n + 1);
  Sym *y0 = sym("y", R());
  lam[0] = fe_mk_lam(S0, 1, &y0, var(y0));
  k[0] = sym("k", lam[0]->type);
  for (int i = 1; i <= n; i++) {
    Sym *y = sym("y", R());
    Term *call = app1(var(k[i - 1]), fe_mk_add(S0, var(y), num(1)));
    lam[i] = fe_mk_lam(S0, 1, &y, tail ? call : fe_mk_mul(S0, call, num(1)));
    k[i] = sym("k", lam[i]->type);
  }
  Term *body = app1(var(k[n]), num(0));
  for (int i = n; i >= 0; i--) body = fe_mk_let(S0, k[i], lam[i], body);
  return body;
}

typedef struct Job {
  Term *body;
  Value v;
  const char *err;
} Job;

static void job_main(void *arg) {
  Job *j = arg;
  Def *d = fe_mk_def("t", S0, 0, NULL, j->body);
  FeTry t;
  if (fe_try(&t)) {
    j->v = cpu_call(d, NULL);
    fe_untry(&t);
  } else {
    j->err = t.err.msg;
  }
}

/* Evaluates body in a thread with a stack of the given size. */
static Job run_on_stack(Term *body, size_t stack) {
  Job j = {body, val_real(0), NULL};
  tl_on_stack(stack, job_main, &j);
  return j;
}

#if defined(__SANITIZE_ADDRESS__)
#define STACK_SCALE 8
#else
#define STACK_SCALE 1
#endif

START_TEST(tail_chain) {
  /* Applications in tail position run in the evaluator's loop: a chain of
     20,000 continuations needs no more stack than one. */
  Job j = run_on_stack(chain(20000, true), ((size_t)1 << 20) * STACK_SCALE);
  ck_assert_msg(!j.err, "%s", j.err ? j.err : "");
  ck_assert(j.v.u.r == 20000);
}
END_TEST

START_TEST(deep_chain) {
  /* The C stack per nested application stays small: 20,000 nested
     (non-tail) applications fit in 12 MiB, i.e. under 630 bytes per level
     (one application plus two arithmetic nodes per level). */
  Job j = run_on_stack(chain(20000, false), ((size_t)12 << 20) * STACK_SCALE);
  ck_assert_msg(!j.err, "%s", j.err ? j.err : "");
  ck_assert(j.v.u.r == 20000);
  /* Too deep for the stack: a located error, not a crash. */
  j = run_on_stack(chain(200000, false), (size_t)4 << 20);
  ck_assert(j.err && strcmp(j.err, "expression nested too deeply") == 0);
}
END_TEST

/* A reverse-mode-like program over n lets: x_i = sin x_{i-1}, and the
   continuation k_i = fun (g) -> k_{i-1} (g * cos x_{i-1}); the result is
   k_n (1) = d x_n / d x_0, computed here against a direct loop. */
START_TEST(ad_like_chain) {
  int n = 16000;
  Sym **x = NEW_ARRAY(Sym *, n + 1);
  Sym **k = NEW_ARRAY(Sym *, n + 1);
  x[0] = sym("x", R());
  Sym *g0 = sym("g", R());
  Term *l0 = fe_mk_lam(S0, 1, &g0, var(g0));
  k[0] = sym("k", l0->type);
  Term **rhs_x = NEW_ARRAY(Term *, n + 1), **rhs_k = NEW_ARRAY(Term *, n + 1);
  for (int i = 1; i <= n; i++) {
    x[i] = sym("x", R());
    rhs_x[i] = fe_mk_op1(S0, PRIM_SIN, var(x[i - 1]));
    Sym *g = sym("g", R());
    Term *d = fe_mk_mul(S0, var(g), fe_mk_op1(S0, PRIM_COS, var(x[i - 1])));
    rhs_k[i] = fe_mk_lam(S0, 1, &g, app1(var(k[i - 1]), d));
    k[i] = sym("k", rhs_k[i]->type);
  }
  Term *body = app1(var(k[n]), num(1));
  for (int i = n; i >= 1; i--) body = fe_mk_let(S0, x[i], rhs_x[i], fe_mk_let(S0, k[i], rhs_k[i], body));
  body = fe_mk_let(S0, k[0], l0, body);
  Def *d = fe_mk_def("g", S0, 1, x, body);
  Value arg = val_real(0.7);
  Value v = tl_call(d, &arg);
  double xv = 0.7, want = 1;
  for (int i = 1; i <= n; i++) {
    want *= cos(xv);
    xv = sin(xv);
  }
  /* the chain multiplies the same factors in the opposite order */
  ck_assert_double_eq_tol(v.u.r, want, 1e-12 * fabs(want) + 1e-300);
}
END_TEST

/* map (x. let k = fun (y) -> y * x in k (x + 1)) a: a continuation created
   and applied within each element. */
static Term *map_with_closure(Term *a) {
  Sym *x = sym("x", R());
  Sym *y = sym("y", R());
  Term *lam = fe_mk_lam(S0, 1, &y, fe_mk_mul(S0, var(y), var(x)));
  Sym *k = sym("k", lam->type);
  Term *body = fe_mk_let(S0, k, lam, app1(var(k), fe_mk_add(S0, var(x), num(1))));
  return fe_mk_map(S0, fe_mk_lam(S0, 1, &x, body), a);
}

static Term *real_array(int n) {
  Term **el = NEW_ARRAY(Term *, n);
  for (int i = 0; i < n; i++) el[i] = num(i * 0.5);
  return fe_term_kids(S0, T_ARRAY, fe_ty_array(R()), n, el);
}

START_TEST(in_map_bodies) {
  for (int n = 0; n <= 600; n += 300) {
    Term *m = map_with_closure(real_array(n));
    /* the kernel compiler refuses the body (it holds a function value) */
    ck_assert_ptr_null(cpu_kernel_compile(m->kids[0]));
    Value v = run0(m);
    ck_assert_int_eq(v.kind, V_ARRAY);
    ck_assert_uint_eq(v.u.a->len, (size_t)n);
    ck_assert(!v.u.a->boxed);
    for (int i = 0; i < n; i++) ck_assert(v.u.a->r[i] == (i * 0.5 + 1) * (i * 0.5));
  }

  /* map2 (a, b. (fun (u, w) -> u * w + a) (a, b)) and
     reduce (acc, e. (fun (u) -> acc + u) (e)) 0 (reduce needs an
     associative operator) */
  Sym *ab[2] = {sym("a", R()), sym("b", R())};
  Sym *uw[2] = {sym("u", R()), sym("w", R())};
  Term *inner = fe_mk_lam(S0, 2, uw, fe_mk_add(S0, fe_mk_mul(S0, var(uw[0]), var(uw[1])), var(ab[0])));
  Term *args[2] = {var(ab[0]), var(ab[1])};
  Term *m2 = fe_mk_map2(S0, fe_mk_lam(S0, 2, ab, fe_mk_app(S0, inner, 2, args)), real_array(300),
                        real_array(300));
  ck_assert_ptr_null(cpu_kernel_compile(m2->kids[0]));
  Value v = run0(m2);
  for (int i = 0; i < 300; i++) ck_assert(v.u.a->r[i] == (i * 0.5) * (i * 0.5) + i * 0.5);

  Sym *ae[2] = {sym("acc", R()), sym("e", R())};
  Sym *u = sym("u", R());
  Term *sq = fe_mk_lam(S0, 1, &u, fe_mk_add(S0, var(ae[0]), var(u)));
  Term *red = fe_mk_reduce(S0, fe_mk_lam(S0, 2, ae, app1(sq, var(ae[1]))), num(0), real_array(300));
  ck_assert_ptr_null(cpu_kernel_compile(red->kids[0]));
  double want = 0;
  for (int i = 0; i < 300; i++) want += i * 0.5;
  ck_assert_double_eq_tol(run0(red).u.r, want, 1e-9);
}
END_TEST

START_TEST(kernel_still_compiles_plain_bodies) {
  /* A combinator lambda inside a body does not count as a function value:
     (x. x + reduce (+) 0 [1, 2]) still gets a kernel. */
  Sym *x = sym("x", R());
  Term *red = fe_mk_reduce(S0, fe_mk_oplam(S0, PRIM_ADD), num(0), real_array(3));
  Term *lam = fe_mk_lam(S0, 1, &x, fe_mk_add(S0, var(x), red));
  ck_assert_ptr_nonnull(cpu_kernel_compile(lam));
  /* but a continuation in a hoistable part (independent of x) is refused */
  Sym *y = sym("y", R());
  Term *k = fe_mk_lam(S0, 1, &y, var(y));
  Term *lam2 = fe_mk_lam(S0, 1, &x, fe_mk_add(S0, var(x), app1(k, num(2))));
  ck_assert_ptr_null(cpu_kernel_compile(lam2));
}
END_TEST

START_TEST(printing) {
  Sym *y = sym("y", R());
  Term *lam = fe_mk_lam(S0, 1, &y, var(y));
  Value v = run0(lam);
  ck_assert_int_eq(v.kind, V_CLOSURE);
  ck_assert_str_eq(val_to_string(v), "<function>");
  Term *items[2] = {num(1), lam};
  Value t = run0(fe_mk_tuple(S0, 2, items));
  ck_assert_str_eq(val_to_string(t), "(1, <function>)");
  ck_assert(val_equal(v, v));
  ck_assert(!val_equal(v, val_real(1)));
}
END_TEST

START_TEST(target_notation) {
  /* let k = fun (y, z) -> y * z in k (2, 3) + map (x. (fun (w) -> w) (x)) [1] */
  Sym *yz[2] = {sym("y", R()), sym("z", R())};
  Term *lam = fe_mk_lam(S0, 2, yz, fe_mk_mul(S0, var(yz[0]), var(yz[1])));
  Sym *k = sym("k", lam->type);
  Term *args[2] = {num(2), num(3)};
  Sym *x = sym("x", R()), *w = sym("w", R());
  Term *xv = var(x);
  Term *inner = fe_mk_app(S0, fe_mk_lam(S0, 1, &w, var(w)), 1, &xv);
  Term *m = fe_mk_map(S0, fe_mk_lam(S0, 1, &x, inner), real_array(1));
  Term *sum = fe_mk_reduce(S0, fe_mk_oplam(S0, PRIM_ADD), num(0), m);
  Term *body = fe_mk_let(S0, k, lam, fe_mk_add(S0, fe_mk_app(S0, var(k), 2, args), sum));
  ck_assert_str_eq(fe_term_str(body),
                   "let k = fun (y, z) -> y * z in k (2, 3) + reduce (+) 0 "
                   "(map (x. (fun (w) -> w) (x)) [0])");
  ck_assert_str_eq(fe_term_str_opts(body, FE_PRINT_UNIQUE),
                   una_sprintf("let k_%d = fun (y_%d, z_%d) -> y_%d * z_%d in k_%d (2, 3) + "
                               "reduce (+) 0 (map (x_%d. (fun (w_%d) -> "
                               "w_%d) (x_%d)) [0])",
                               k->id, yz[0]->id, yz[1]->id, yz[0]->id, yz[1]->id, k->id, x->id,
                               w->id, w->id, x->id));
  /* a lambda value that is not last is parenthesized; an application as a
     tuple item and with no arguments */
  Term *l0 = fe_mk_lam(S0, 0, NULL, num(1));
  Term *items[2] = {l0, fe_mk_app(S0, l0, 0, NULL)};
  ck_assert_str_eq(fe_term_str(fe_mk_tuple(S0, 2, items)), "(fun () -> 1, (fun () -> 1) ())");
  Term *y1 = fe_mk_proj(S0, fe_mk_tuple(S0, 2, items), 0);
  ck_assert_str_eq(fe_term_str(fe_mk_app(S0, y1, 0, NULL)), "(fun () -> 1, (fun () -> 1) ()).1 ()");
  Term *neg = fe_mk_op1(S0, PRIM_NEG, fe_mk_app(S0, var(k), 2, args));
  ck_assert_str_eq(fe_term_str(neg), "-k (2, 3)");
  Term *ifl = fe_mk_if(S0, fe_mk_bool(S0, true), l0, l0);
  ck_assert_str_eq(fe_term_str(fe_mk_app(S0, ifl, 0, NULL)),
                   "(if true then fun () -> 1 else fun () -> 1) ()");
}
END_TEST

Suite *suite_closure(void) {
  S0 = fe_span("t", 1, 1);
  Suite *s = suite_create("closure");
  TCase *tc = tcase_create("closure");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, simple);
  tcase_add_test(tc, multi_args_and_capture);
  tcase_add_test(tc, higher_order);
  tcase_add_test(tc, tail_chain);
  tcase_add_test(tc, deep_chain);
  tcase_add_test(tc, ad_like_chain);
  tcase_add_test(tc, in_map_bodies);
  tcase_add_test(tc, kernel_still_compiles_plain_bodies);
  tcase_add_test(tc, printing);
  tcase_add_test(tc, target_notation);
  suite_add_tcase(s, tc);
  return s;
}
