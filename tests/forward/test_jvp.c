/* test_jvp.c: forward mode (forward/jvp.c) and the derivative operators
   built on it and on reverse mode (derive/expand.c), by properties that
   need no oracle:
   - on generated programs (language 1 and 2), jvp f a t = (f a, <grad f a, t>);
   - on functions returning arrays and tuples, <vjp f a c, t> = <c, jvp f a t>,
     and jvp against central differences of f along t;
   - Hessian-vector products (jvp (grad f)) against central differences of
     grad f;
   - the second derivative of every scalar primitive against central
     differences of its first (trigamma's is the one located error);
   - perturbation confusion: the nested examples of Pearlmutter & Siskind. */
#include <math.h>
#include <string.h>

#include "../../backend/eval.h"
#include "../../derive/derive.h"
#include "../../optimizer/program.h"
#include "../reverse/gen.h"
#include "../reverse/gradcheck.h"
#include "../suites.h"
#include "../testlib.h"

static Def *derived(Def *f, DerivOp op) {
  int *wrt = NEW_ARRAY(int, f->nparams + 1), nwrt = 0;
  for (int i = 0; i < f->nparams; i++)
    if (fe_type_has_reals(f->params[i]->type)) wrt[nwrt++] = i;
  DerivOpt o = {opt_derived, NULL};
  return deriv_function(f, op, wrt, nwrt, &o);
}

/* The arguments of jvp_f: f's, then a tangent for each parameter with
   reals (drawn like the points). */
static Value *jvp_args(const Def *f, const Value *args, GenRng *r, size_t len) {
  Value *a = NEW_ARRAY(Value, 2 * f->nparams + 1);
  int n = f->nparams;
  for (int i = 0; i < f->nparams; i++) {
    a[i] = args[i];
    if (fe_type_has_reals(f->params[i]->type)) a[n++] = gc_random_value(r, f->params[i]->type, len, -1, 1);
  }
  return a;
}

/* <grad f a, t> for the tangents t in jargs after f's parameters. */
static double grad_dot(const Def *f, const Value *jargs, Value grad) {
  int k = 0, nw = 0;
  for (int i = 0; i < f->nparams; i++) nw += fe_type_has_reals(f->params[i]->type);
  double sum = 0;
  for (int i = 0; i < f->nparams; i++) {
    if (!fe_type_has_reals(f->params[i]->type)) continue;
    Value g = nw == 1 ? grad : grad.u.t->items[k];
    sum += tl_vdot(g, jargs[f->nparams + k]);
    k++;
  }
  return sum;
}

static bool finite_value(Value v) {
  switch (v.kind) {
  case V_REAL: return isfinite(v.u.r) && fabs(v.u.r) < 1e30;
  case V_ARRAY:
    for (size_t i = 0; i < v.u.a->len; i++)
      if (!finite_value(val_array_get(v.u.a, i))) return false;
    return true;
  case V_TUPLE:
    for (int i = 0; i < v.u.t->n; i++)
      if (!finite_value(v.u.t->items[i])) return false;
    return true;
  default: return true;
  }
}

/* jvp f a t against (f a, <grad f a, t>) for the program of seed. Returns
   NULL or a report; *checked counts the points compared. */
static char *jvp_vs_grad(uint64_t seed, const GenOptions *go, int *checked) {
  GenProgram p = gen_program(seed, go);
  Session *s = tl_session_with(p.text);
  Def *f = tl_def(s, "f");
  bool any = false;
  for (int i = 0; i < f->nparams; i++) any |= fe_type_has_reals(f->params[i]->type);
  if (!any) return NULL;
  Def *jf, *gf;
  FeTry t;
  if (fe_try(&t)) {
    jf = derived(f, DOP_JVP);
    gf = derived(f, DOP_GRAD);
    fe_untry(&t);
  } else {
    /* what reverse mode cannot differentiate, forward mode need not */
    return NULL;
  }
  GenRng r = gen_rng(seed);
  const size_t lengths[] = {0, 1, 3, 6};
  for (volatile size_t li = 0; li < 4; li++) {
    Value *args = NEW_ARRAY(Value, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) args[i] = gc_random_value(&r, f->params[i]->type, lengths[li], -1.5, 1.5);
    Value *jargs = jvp_args(f, args, &r, lengths[li]);
    Value fv, jv, gv;
    FeTry e;
    if (fe_try(&e)) {
      fv = cpu_call(f, args);
      jv = cpu_call(jf, jargs);
      gv = cpu_call(gf, args);
      fe_untry(&e);
    } else {
      continue; /* f raised at this point (an index, a count): so did both */
    }
    if (!finite_value(fv) || !finite_value(gv) || !finite_value(jv)) continue;
    Value pv = jv.u.t->items[0], tv = jv.u.t->items[1];
    if (!tl_near_sym(pv.u.r, fv.u.r, 1e-12))
      return una_sprintf("seed %llu: jvp's value %.17g, f's %.17g\n%s", (unsigned long long)seed, pv.u.r,
                         fv.u.r, p.text);
    double want = grad_dot(f, jargs, gv);
    if (fabs(tv.u.r - want) > 1e-8 * fmax(fmax(1, fabs(want)), fabs(tv.u.r)))
      return una_sprintf("seed %llu, length %zu: the tangent %.17g, <grad, t> %.17g\n%s", (unsigned long long)seed,
                         lengths[li], tv.u.r, want, p.text);
    (*checked)++;
  }
  return NULL;
}

START_TEST(random_programs) {
  GenOptions go = gen_default_options();
  int checked = 0;
  for (int k = 0; k < 40; k++) {
    char *err = jvp_vs_grad(7100000 + (uint64_t)_i * 40 + (uint64_t)k, &go, &checked);
    ck_assert_msg(err == NULL, "%s", err);
  }
  ck_assert_int_gt(checked, 40);
}
END_TEST

START_TEST(random_programs_v2) {
  GenOptions go = gen_v2_options();
  int checked = 0;
  for (int k = 0; k < 40; k++) {
    char *err = jvp_vs_grad(7200000 + (uint64_t)_i * 40 + (uint64_t)k, &go, &checked);
    ck_assert_msg(err == NULL, "%s", err);
  }
  ck_assert_int_gt(checked, 20);
}
END_TEST

/* Functions returning arrays and tuples: <vjp f a c, t> = <c, jvp f a t>. */
static const char *const vector_functions[] = {
    "def f (v: [R]) = softmax v",
    "def f (v: [R]) = scanl (*) 1 v",
    "def f (v: [R]) (s: R) = (s * sum v, map (x. sin (x * s)) v)",
    "def f (m: [[R]]) (v: [R]) = map (row. dot row v) m",
    "def f (m: [[R]]) = transpose (map (row. map (x. x * x) row) m)",
    "def f (v: [R]) = loop a = v for i < 3 do map2 (x, y. x * y + 1) a (shift1R (concat [1] a))",
    "def f (v: [R]) = reduce_by_index (replicate 2 0) (+) 0 (map (i. i - 2 * floor (i / 2)) (iota (length v))) (map (x. x * x) v)",
    "def f (v: [R]) = unzip (map (x. (x * x, exp x)) v)",
    "def f (v: [R]) (w: [R]) = map3 (x, y, z. x * y + z) v w (scanr (+) 0 v)[1:]",
    /* map2 over one array twice, a parameter the input never reads: its
       tangent once lost the element (seed 7200030 of random_programs_v2) */
    "def f (v: [R]) = map2 max (map2 (x7, y8. 0.25) v v) (map2 (x9, y10. x9) v v)",
};

START_TEST(vjp_is_the_transpose_of_jvp) {
  Session *s = tl_session_with(vector_functions[_i]);
  Def *f = tl_def(s, "f");
  Def *jf = derived(f, DOP_JVP), *vf = derived(f, DOP_VJP);
  GenRng r = gen_rng(300 + (uint64_t)_i);
  for (size_t len = 1; len <= 5; len += 2) {
    Value *args = NEW_ARRAY(Value, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) args[i] = gc_random_value(&r, f->params[i]->type, len, -1, 1);
    Value *jargs = jvp_args(f, args, &r, len);
    Value jv = tl_call(jf, jargs);
    Value y = jv.u.t->items[0], dy = jv.u.t->items[1];
    Value c = tl_copy_value(y); /* a cotangent shaped like the result */
    for (int k = 0; k < tl_nreals(c); k++) *tl_real_at(&c, k) = 2 * gen_unit(&r) - 1;
    Value *vargs = NEW_ARRAY(Value, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) vargs[i] = args[i];
    vargs[f->nparams] = c;
    Value g = tl_call(vf, vargs);
    double lhs = grad_dot(f, jargs, g), rhs = tl_vdot(c, dy);
    ck_assert_msg(tl_near_sym(lhs, rhs, 1e-10), "%s, length %zu: <vjp, t> = %.17g, <c, jvp> = %.17g",
                  vector_functions[_i], len, lhs, rhs);
  }
}
END_TEST

/* *a += h t, for values of the same ground type (a a deep copy). */
static void add_scaled(Value *a, Value t, double h) {
  switch (a->kind) {
  case V_REAL: a->u.r += h * t.u.r; return;
  case V_TUPLE:
    for (int i = 0; i < a->u.t->n; i++) add_scaled(&a->u.t->items[i], t.u.t->items[i], h);
    return;
  case V_ARRAY:
    for (size_t i = 0; i < a->u.a->len; i++) {
      Value e = val_array_get(a->u.a, i);
      add_scaled(&e, val_array_get(t.u.a, i), h);
      val_array_set(a->u.a, i, e);
    }
    return;
  default: return;
  }
}

/* The reals of v (any ground value), in order, appended to out[*n..]. */
static void flatten(Value v, double **out, int *n, int *cap) {
  switch (v.kind) {
  case V_REAL:
    if (*n == *cap) {
      *cap = *cap ? 2 * *cap : 64;
      double *g = NEW_ARRAY(double, *cap);
      if (*n) memcpy(g, *out, sizeof(double) * (size_t)*n);
      *out = g;
    }
    (*out)[(*n)++] = v.u.r;
    return;
  case V_TUPLE:
    for (int i = 0; i < v.u.t->n; i++) flatten(v.u.t->items[i], out, n, cap);
    return;
  case V_ARRAY:
    for (size_t i = 0; i < v.u.a->len; i++) flatten(val_array_get(v.u.a, i), out, n, cap);
    return;
  default: return;
  }
}

static double *reals(Value v, int *n) {
  double *out = NULL;
  int cap = 0;
  *n = 0;
  flatten(v, &out, n, &cap);
  return out;
}

/* a + h t, over the parameters with reals (a copy). */
static Value *along(const Def *f, const Value *args, const Value *jargs, double h) {
  Value *r = NEW_ARRAY(Value, f->nparams + 1);
  int k = 0;
  for (int i = 0; i < f->nparams; i++) {
    r[i] = args[i];
    if (!fe_type_has_reals(f->params[i]->type)) continue;
    r[i] = tl_copy_value(args[i]);
    add_scaled(&r[i], jargs[f->nparams + k++], h);
  }
  return r;
}

/* The tangent of jvp f against central differences of f along the
   tangent (Richardson extrapolation of the steps h and h/2). */
START_TEST(jvp_against_finite_differences) {
  Session *s = tl_session_with(vector_functions[_i]);
  Def *f = tl_def(s, "f");
  Def *jf = derived(f, DOP_JVP);
  GenRng r = gen_rng(700 + (uint64_t)_i);
  for (size_t len = 1; len <= 5; len += 2) {
    Value *args = NEW_ARRAY(Value, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) args[i] = gc_random_value(&r, f->params[i]->type, len, -1, 1);
    Value *jargs = jvp_args(f, args, &r, len);
    Value dy = tl_call(jf, jargs).u.t->items[1];
    const double h = 1e-4;
    Value fp = tl_call(f, along(f, args, jargs, h)), fm = tl_call(f, along(f, args, jargs, -h));
    Value fp2 = tl_call(f, along(f, args, jargs, h / 2)), fm2 = tl_call(f, along(f, args, jargs, -h / 2));
    int n, n1, n2, n3, n4;
    double *g = reals(dy, &n), *p1 = reals(fp, &n1), *m1 = reals(fm, &n2), *p2 = reals(fp2, &n3), *m2 = reals(fm2, &n4);
    ck_assert(n > 0 && n == n1 && n == n2 && n == n3 && n == n4);
    for (int k = 0; k < n; k++) {
      double d1 = (p1[k] - m1[k]) / (2 * h), d2 = (p2[k] - m2[k]) / h;
      double fd = (4 * d2 - d1) / 3, got = g[k];
      ck_assert_msg(tl_near(got, fd, 1e-7), "%s, length %zu, component %d: jvp %.17g, differences %.17g",
                    vector_functions[_i], len, k, got, fd);
    }
  }
}
END_TEST

/* (jvp (grad f) x v).2 against central differences of grad f along v. */
static const char *const hvp_functions[] = {
    "def f (x: [R]) = logsumexp x",
    "def f (x: [R]) = sum (map2 (a, b. 100 * (b - a * a) ^ 2 + (1 - a) ^ 2) (shift1R x) (shift1L x))",
    "def f (x: [R]) = sum (map (h. tanh h) (map (i. x[i] * 0.5 + x[length x - 1 - i]) (iota (length x)))) ^ 2",
    "def f (x: [R]) = foldl (acc, a. acc * cos a + a * a) 1 x",
};

START_TEST(hessian_vector_products) {
  const char *text = una_sprintf("%s\ndef g (x: [R]) (v: [R]) = (jvp (grad f) x v).2", hvp_functions[_i]);
  Session *s = tl_session_with(text);
  GenRng r = gen_rng(500 + (uint64_t)_i);
  for (int n = 2; n <= 6; n += 2) {
    const char *x = "[", *v = "[";
    for (int k = 0; k < n; k++) {
      x = una_sprintf("%s%s%.17g", x, k ? ", " : "", 2 * gen_unit(&r) - 1);
      v = una_sprintf("%s%s%.17g", v, k ? ", " : "", 2 * gen_unit(&r) - 1);
    }
    x = una_sprintf("%s]", x);
    v = una_sprintf("%s]", v);
    Value hv = tl_ev_in(s, una_sprintf("g %s %s", x, v));
    const double h = 1e-4;
    /* Richardson: (4 D(h/2) - D(h)) / 3, D(h) the central difference */
    Value gp = tl_ev_in(s, una_sprintf("grad f (map2 (a, b. a + %g * b) %s %s)", h, x, v));
    Value gm = tl_ev_in(s, una_sprintf("grad f (map2 (a, b. a - %g * b) %s %s)", h, x, v));
    Value gp2 = tl_ev_in(s, una_sprintf("grad f (map2 (a, b. a + %g * b) %s %s)", h / 2, x, v));
    Value gm2 = tl_ev_in(s, una_sprintf("grad f (map2 (a, b. a - %g * b) %s %s)", h / 2, x, v));
    for (int k = 0; k < n; k++) {
      double d1 = (*tl_real_at(&gp, k) - *tl_real_at(&gm, k)) / (2 * h);
      double d2 = (*tl_real_at(&gp2, k) - *tl_real_at(&gm2, k)) / h;
      double fd = (4 * d2 - d1) / 3, got = *tl_real_at(&hv, k);
      ck_assert_msg(tl_near(got, fd, 1e-6), "%s at n = %d, component %d: hvp %.17g, differences %.17g",
                    hvp_functions[_i], n, k, got, fd);
    }
  }
}
END_TEST

/* The Una text of prim p applied to x (and y). */
static const char *apply_text(Prim p) {
  const PrimInfo *pi = &fe_prims[p];
  if (pi->arity == 1)
    return (pi->writ & W_CALL) ? una_sprintf("%s x", pi->name) : una_sprintf("%s x", pi->sym);
  return (pi->writ & W_CALL) ? una_sprintf("%s x y", pi->name) : una_sprintf("x %s y", pi->sym);
}

START_TEST(second_derivatives_of_every_scalar_primitive) {
  int tested = 0;
  for (int p = 0; p < PRIM__COUNT; p++) {
    const PrimInfo *pi = &fe_prims[p];
    if ((pi->cls != P_SCALAR1 && pi->cls != P_SCALAR2) || p == PRIM_TRIGAMMA || p == PRIM_DIGAMMA) continue;
    const char *params = pi->arity == 1 ? "(x: R)" : "(x: R) (y: R)";
    const char *text = una_sprintf("def f %s = %s", params, apply_text((Prim)p));
    Session *s = tl_session_with(text);
    /* each direction: the tangent 1 on one parameter (digamma is left out:
       its second derivative is the derivative of trigamma, the error below) */
    for (int dir = 0; dir < pi->arity; dir++) {
      const char *pt = pi->arity == 1 ? "0.7" : "0.7 1.3";
      const char *tan = pi->arity == 1 ? "1" : dir == 0 ? "1 0" : "0 1";
      Value hv = tl_ev_in(s, una_sprintf("(jvp (grad f) %s %s).2", pt, tan));
      const double h = 1e-5;
      double xs[2] = {0.7, 1.3};
      Value gv[2];
      for (int sgn = 0; sgn < 2; sgn++) {
        double a[2] = {xs[0], xs[1]};
        a[dir] += sgn ? -h : h;
        gv[sgn] = tl_ev_in(s, pi->arity == 1 ? una_sprintf("grad f %.17g", a[0])
                                             : una_sprintf("grad f %.17g %.17g", a[0], a[1]));
      }
      for (int k = 0; k < pi->arity; k++) {
        double fd = (*tl_real_at(&gv[0], k) - *tl_real_at(&gv[1], k)) / (2 * h);
        double got = *tl_real_at(&hv, k);
        ck_assert_msg(tl_near(got, fd, 1e-6), "%s: d2/dx%d dx%d = %.17g, differences %.17g", pi->name, k, dir,
                      got, fd);
      }
    }
    tested++;
  }
  ck_assert_int_gt(tested, 20);
  /* the one located error: digamma has a first derivative, not a second */
  TlRun run = tl_capture(tl_session_with("def f (x: R) = digamma x"), "jvp (grad f) 1 1", true);
  ck_assert(!run.ok);
  ck_assert_msg(strstr(run.err, "trigamma has no derivative"), "%s", run.err);
}
END_TEST

/* Pearlmutter & Siskind's examples of perturbation confusion and nested
   derivatives of lambdas with free variables. */
START_TEST(no_perturbation_confusion) {
  Session *s = tl_session_with("def d (x: R) = 0");
  const char *cases[][2] = {
      {"grad (x. x * (grad (y. x + y) 1)) 1", "1"},
      {"grad (x. x * (grad (y. x * y) 2)) 3", "6"},
      {"(jvp (x. x * (jvp (y. x + y) 1 1).2) 1 1).2", "1"},
      {"grad (x. grad (y. grad (z. x * y * z) 1) 1) 1", "1"},
      {"grad (x. let k = (grad (y. x * y * y) x) in k * x) 2", "24"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    TlRun run = tl_capture(s, cases[i][0], true);
    ck_assert_msg(run.ok, "%s: %s", cases[i][0], run.err);
    ck_assert_msg(strcmp(run.out, una_sprintf("%s\n", cases[i][1])) == 0, "%s gives %s, expected %s", cases[i][0],
                  run.out, cases[i][1]);
  }
}
END_TEST

Suite *suite_jvp(void) {
  Suite *s = suite_create("jvp");
  TCase *tc = tcase_create("jvp");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, random_programs, 0, 4);
  tcase_add_loop_test(tc, random_programs_v2, 0, 4);
  tcase_add_loop_test(tc, vjp_is_the_transpose_of_jvp, 0, (int)(sizeof vector_functions / sizeof vector_functions[0]));
  tcase_add_loop_test(tc, jvp_against_finite_differences, 0,
                      (int)(sizeof vector_functions / sizeof vector_functions[0]));
  tcase_add_loop_test(tc, hessian_vector_products, 0, (int)(sizeof hvp_functions / sizeof hvp_functions[0]));
  tcase_add_test(tc, second_derivatives_of_every_scalar_primitive);
  tcase_add_test(tc, no_perturbation_confusion);
  suite_add_tcase(s, tc);
  return s;
}
