/* test_direct.c: figure 5's direct transform (reverse/direct*.c) on
   programs parsed and checked from Una source, inlined: gradients against
   central finite differences (relative 1e-6) in both context modes, the
   live mode against the paper's dense one (relative 1e-12), the shape of
   example 3.1's expansion, linear use of every continuation, the seeds'
   pitfalls (fan-out, x * x, map2 (*) v v, free variables in map2, a
   doubling chain of 50 lets, constants), prod with zeros exactly, if
   (only the taken branch), foldl (Horner), reduce with free variables and
   a parameter-dependent initial value, wrt subsets, tuples, and linear
   growth of the gradient with the program. */
#include <check.h>
#include <math.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/inline.h"
#include "../../frontend/ir/retype.h"
#include "../../frontend/repl/session.h"
#include "../../frontend/ir/term_print.h"
#include "../../reverse/direct.h"
#include "../../reverse/direct_int.h"
#include "../../reverse/paths.h"
#include "../suites.h"
#include "../testlib.h"

static Def *find(const char *name) { return tl_def(tl_session, name); }

/* ---- the transform on a def ---- */

typedef struct Grad {
  Def *f;    /* as checked */
  Def *g;    /* grad: f's parameters -> the gradients */
  Term *body;
} Grad;

/* The gradient of f with respect to its parameters wrt[0..nwrt) (indexes;
   all non-B parameters when nwrt == 0), by the direct transform in mode,
   re-checked by fe_retype. Raises what the transform raises. */
static Grad grad_of(const char *name, const int *wrt, int nwrt, RevDirectMode mode) {
  Grad r;
  r.f = find(name);
  Def *inl = fe_inline(r.f);
  int np = inl->nparams;
  Sym **ctx = NEW_ARRAY(Sym *, np + 1);
  int *where = NEW_ARRAY(int, np + 1), n = 0;
  for (int i = 0; i < np; i++) {
    where[i] = -1;
    if (inl->params[i]->type->kind == TY_BOOL) continue;
    where[i] = n;
    ctx[n++] = inl->params[i];
  }
  int *w = NEW_ARRAY(int, np + 1), nw = 0;
  if (nwrt == 0)
    for (int i = 0; i < n; i++) w[nw++] = i;
  else
    for (int k = 0; k < nwrt; k++) w[nw++] = where[wrt[k]];
  r.body = rev_direct_gradient_mode(ctx, n, w, nw, inl->body, mode);
  r.g = fe_mk_def("grad", inl->span, np, inl->params, r.body);
  fe_retype(r.g);
  return r;
}

/* ---- values ---- */

/* Arguments for np parameters from text: one value, or a tuple of np. */
static Value *args_of(const char *text, int np) { return tl_args(tl_ev(text), np); }

/* Component k of a gradient result of nwrt components. */
static Value component(Value g, int nwrt, int k) {
  if (nwrt == 1) return g;
  ck_assert(g.kind == V_TUPLE && g.u.t->n == nwrt);
  return g.u.t->items[k];
}

static int nonbool_params(const Def *f, int *idx) {
  int n = 0;
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i]->type->kind != TY_BOOL) idx[n++] = i;
  return n;
}

/* Counts the uses of each continuation (a variable of function type). */
static void count_use(const Term *t, void *ud) {
  if (t->kind == T_VAR && t->sym->type->kind == TY_FUN) {
    intptr_t n = (intptr_t)rev_dx_map_get(ud, t->sym);
    rev_dx_map_put(ud, t->sym, (void *)(n + 1));
  }
}

typedef struct Uses {
  RevPMap map;
  int n; /* continuations seen */
} Uses;

/* Each continuation bound at t is used exactly once. */
static void check_binder(const Term *t, void *ud) {
  Uses *u = ud;
  if (t->kind == T_LET && t->sym->type->kind == TY_FUN) {
    ck_assert_int_eq((int)(intptr_t)rev_dx_map_get(&u->map, t->sym), 1);
    u->n++;
  }
  if (t->kind == T_LETTUP)
    for (int i = 0; i < t->nsyms; i++)
      if (t->syms[i]->type->kind == TY_FUN) {
        ck_assert_msg((intptr_t)rev_dx_map_get(&u->map, t->syms[i]) == 1, "continuation %s used %d times",
                      t->syms[i]->name, (int)(intptr_t)rev_dx_map_get(&u->map, t->syms[i]));
        u->n++;
      }
}

/* The number of continuations in t, each checked to be used once. */
static int linear_continuations(const Term *t) {
  Uses u = {0};
  rev_dx_map_init(&u.map, 64);
  tl_walk(t, count_use, &u.map);
  tl_walk(t, check_binder, &u);
  return u.n;
}

/* The gradient of name at args (wrt as in grad_of) in both modes, each
   against central finite differences (relative 1e-6), the two modes
   against each other (relative 1e-12), every continuation used once.
   Returns the live mode's gradient. */
static Value check_grad_wrt(const char *name, const char *args_text, const int *wrt, int nwrt) {
  Def *f = find(name);
  Value *args = args_of(args_text, f->nparams);
  int idx[64];
  int nw = nwrt;
  if (nwrt == 0) nw = nonbool_params(f, idx);
  else memcpy(idx, wrt, sizeof(int) * (size_t)nwrt);
  Value res[2];
  for (int m = 0; m < 2; m++) {
    Grad gr = grad_of(name, wrt, nwrt, m == 0 ? REV_DIRECT_LIVE : REV_DIRECT_DENSE);
    linear_continuations(gr.body);
    Value g = cpu_call(gr.g, args);
    res[m] = g;
    for (int k = 0; k < nw; k++) {
      Value c = component(g, nw, k);
      int p = idx[k];
      ck_assert_int_eq(tl_nreals(c), tl_nreals(args[p]));
      for (int j = 0; j < tl_nreals(c); j++) {
        double want = tl_fd(f, args, p, j, NULL), got = *tl_real_at(&c, j);
        ck_assert_msg(tl_near_sym(got, want, 1e-6), "%s (%s mode): d/d%s[%d] = %.17g, fd %.17g", name,
                      m == 0 ? "live" : "dense", f->params[p]->name, j, got, want);
      }
    }
  }
  for (int k = 0; k < nw; k++) {
    Value a = component(res[0], nw, k), b = component(res[1], nw, k);
    for (int j = 0; j < tl_nreals(a); j++)
      ck_assert_msg(tl_near_sym(*tl_real_at(&a, j), *tl_real_at(&b, j), 1e-12), "%s: live %.17g, dense %.17g",
                    name, *tl_real_at(&a, j), *tl_real_at(&b, j));
  }
  return res[0];
}

static Value check_grad(const char *name, const char *args_text) {
  return check_grad_wrt(name, args_text, NULL, 0);
}

/* The live gradient of name at args, without finite differences. */
static Value grad_at(const char *name, const char *args_text, const int *wrt, int nwrt) {
  Def *f = find(name);
  Grad gr = grad_of(name, wrt, nwrt, REV_DIRECT_LIVE);
  linear_continuations(gr.body);
  return cpu_call(gr.g, args_of(args_text, f->nparams));
}

static const char *gtext(const char *name, const char *args_text) {
  return val_to_string(grad_at(name, args_text, NULL, 0));
}

/* check_grad, and the gradient printed is want. */
static void grad_is(const char *name, const char *args_text, const char *want) {
  const char *got = val_to_string(check_grad(name, args_text));
  ck_assert_msg(strcmp(got, want) == 0, "grad %s at %s = %s, expected %s", name, args_text, got, want);
}

/* ---- tests ---- */

START_TEST(example_1_1) {
  tl_run("def f (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2");
  Value g = check_grad("f", "(1.5, -2, 0.25)");
  ck_assert_str_eq(val_to_string(g), "(-6, 2.25, 0)");
}
END_TEST

/* Example 3.1: the dense mode is figure 5 to the letter: each rule's
   pair (value, continuation), contexts growing by the let-bound and
   intermediate values, Y applied to (0_Gamma, 1) at the end. */
START_TEST(example_3_1_shape) {
  tl_run("def f (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2");
  Grad gr = grad_of("f", NULL, 0, REV_DIRECT_DENSE);
  const char *want =
      "let Y = fun (dx1, dx2, dx3) -> (dx1, dx2, dx3) in "
      /* D(x1 * x2) in x1, x2, x3 */
      "let (y, Y) = (x1, fun (dx1, dx2, dx3, z) -> Y (dx1 + z, dx2, dx3)) in "
      "let (y, Y) = (x2, fun (dx1, dx2, dx3, dy, z) -> Y (dx1, dx2 + z, dx3, dy)) in "
      "let (y, Y) = (y * y, fun (dx1, dx2, dx3, z) -> Y (dx1, dx2, dx3, y * z, y * z)) in "
      /* D(w1 * x1) in x1, x2, x3, w1 */
      "let (y, Y) = (y, fun (dx1, dx2, dx3, dy, z) -> Y (dx1, dx2, dx3, dy + z)) in "
      "let (y, Y) = (x1, fun (dx1, dx2, dx3, dy, dy, z) -> Y (dx1 + z, dx2, dx3, dy, dy)) in "
      "let (y, Y) = (y * y, fun (dx1, dx2, dx3, dy, z) -> Y (dx1, dx2, dx3, dy, y * z, y * z)) in "
      /* D(w2) in x1, x2, x3, w1, w2, then the two lets' epilogues */
      "let (y, Y) = (y, fun (dx1, dx2, dx3, dy, dy, z) -> Y (dx1, dx2, dx3, dy, dy + z)) in "
      "let (y, Y) = (y, fun (dx1, dx2, dx3, dy, z) -> Y (dx1, dx2, dx3, dy, 0, z)) in "
      "let (y, Y) = (y, fun (dx1, dx2, dx3, z) -> Y (dx1, dx2, dx3, 0, z)) in "
      "Y (0, 0, 0, 1)";
  ck_assert_str_eq(fe_term_str(gr.body), want);
  ck_assert_int_eq(linear_continuations(gr.body), 10);
  ck_assert_str_eq(val_to_string(cpu_call(gr.g, args_of("(1.5, -2, 0.25)", 3))), "(-6, 2.25, 0)");

  /* The live mode: contexts are the live variables only. */
  gr = grad_of("f", NULL, 0, REV_DIRECT_LIVE);
  want = "let Y = fun (dx1, dx2, dx3) -> (dx1, dx2, dx3) in "
         "let (y, Y) = (x1, fun (dx1, dx2, z) -> Y (dx1 + z, dx2, 0)) in "
         "let (y, Y) = (x2, fun (dx1, dy, z) -> Y (dx1, z, dy)) in "
         "let (y, Y) = (y * y, fun (dx1, z) -> Y (dx1, y * z, y * z)) in "
         "let (y, Y) = (y, fun (dx1, z) -> Y (dx1, z)) in "
         "let (y, Y) = (x1, fun (dy, z) -> Y (z, dy)) in "
         "let (y, Y) = (y * y, fun (z) -> Y (y * z, y * z)) in "
         "let (y, Y) = (y, fun (z) -> Y (z)) in "
         "Y (1)";
  ck_assert_str_eq(fe_term_str(gr.body), want);
  ck_assert_str_eq(val_to_string(cpu_call(gr.g, args_of("(1.5, -2, 0.25)", 3))), "(-6, 2.25, 0)");
}
END_TEST

START_TEST(sum_dot_prod) {
  tl_run("def s (a: [R]) : R = sum a\n"
         "def d (a: [R]) (b: [R]) : R = dot a b\n"
         "def p (a: [R]) : R = prod a\n");
  grad_is("s", "[1, -2, 3.5]", "[1, 1, 1]");
  grad_is("d", "([1, 2, 3], [4, 5, 6])", "([4, 5, 6], [1, 2, 3])");
  grad_is("p", "[1.5, -2, 3, 0.5]", "[-3, 2.25, -1.5, -9]");
  ck_assert_str_eq(gtext("s", "[]"), "[]");
  ck_assert_str_eq(gtext("p", "[]"), "[]");
  ck_assert_str_eq(gtext("p", "[7]"), "[1]");
}
END_TEST

/* prod with zeros: exact products of the other elements, never nan. */
START_TEST(prod_zeros) {
  tl_run("def p (a: [R]) : R = prod a");
  ck_assert_str_eq(gtext("p", "[2, 3, 4, 5]"), "[60, 40, 30, 24]");
  ck_assert_str_eq(gtext("p", "[2, 0, 4, 5]"), "[0, 40, 0, 0]");
  ck_assert_str_eq(gtext("p", "[0, 3, 4, 5]"), "[60, 0, 0, 0]");
  ck_assert_str_eq(gtext("p", "[2, 3, 4, 0]"), "[0, 0, 0, 24]");
  ck_assert_str_eq(gtext("p", "[0, 3, 0, 5]"), "[0, 0, 0, 0]");
  ck_assert_str_eq(gtext("p", "[0, 0, 0]"), "[0, 0, 0]");
  ck_assert_str_eq(gtext("p", "[0]"), "[1]");
  check_grad("p", "[0.5, 0, 1.25, -2]");
  /* long: the reduce evaluator's lanes against the scan's left fold */
  tl_run("def q (a: [R]) : R = prod (map (x. 1 + x / 1000) a)");
  check_grad("q", "map (i. sin i) (iota 700)");
}
END_TEST

START_TEST(fan_out) {
  tl_run("def f (x: R) : R = let a = exp x in a * sin a + a");
  Value g = check_grad("f", "0.3");
  double a = exp(0.3), want = (sin(a) + a * cos(a) + 1) * a;
  ck_assert(tl_near_sym(g.u.r, want, 1e-14));
}
END_TEST

START_TEST(same_variable_twice) {
  tl_run("def sq (x: R) : R = x * x\n"
         "def vv (v: [R]) : R = sum (map2 (*) v v)\n"
         "def vv2 (v: [R]) : R = sum (map2 (a, b. a * b) v v) + dot v v\n");
  grad_is("sq", "-1.5", "-3");
  grad_is("vv", "[1, -2, 3]", "[2, -4, 6]");
  grad_is("vv2", "[1, -2, 3]", "[4, -8, 12]");
}
END_TEST

/* sum (map2 (a, b. s) v w) = n s: ∂/∂s = n, ∂/∂v = ∂/∂w = 0. */
START_TEST(free_vars_in_map2) {
  tl_run("def f (s: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s) v w)\n"
         "def g (s: R) (t: R) (v: [R]) : R = sum (map (a. a * s + exp (a * t))  v)\n"
         "def h (s: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. a * b * s + sin (s * a)) v w)\n");
  grad_is("f", "(2.5, [1, 2, 3, 4], [5, 6, 7, 8])", "(4, [0, 0, 0, 0], [0, 0, 0, 0])");
  check_grad("g", "(0.5, -0.25, [1, 2, 3])");
  check_grad("h", "(0.5, [1, 2, 3], [0.5, -1, 2])");
}
END_TEST

static char *chain_program(int n, const char *step) {
  size_t cap = (size_t)n * 64 + 64;
  char *p = GC_MALLOC_ATOMIC(cap), *e = p;
  e += sprintf(e, "def f (x: R) : R =\n");
  for (int i = 1; i <= n; i++) {
    char prev[16];
    if (i == 1) strcpy(prev, "x");
    else sprintf(prev, "x%d", i - 1);
    e += sprintf(e, "  let x%d = ", i);
    for (const char *c = step; *c; c++) {
      if (*c == '@') e += sprintf(e, "%s", prev);
      else *e++ = *c;
    }
    e += sprintf(e, " in\n");
  }
  sprintf(e, "  x%d\n", n);
  return p;
}

/* x1 = x + x, ..., x50 = x49 + x49: exactly 2^50, and the gradient's size
   grows linearly with the number of lets. */
START_TEST(doubling_chain) {
  tl_run(chain_program(50, "@ + @"));
  Value g = check_grad("f", "0.7");
  ck_assert(g.u.r == 1125899906842624.0);
  long size[3];
  for (int k = 0; k < 3; k++) {
    int n = 1000 << k;
    tl_run(chain_program(n, "@ * 0.5 + @ * 0.5"));
    Grad gr = grad_of("f", NULL, 0, REV_DIRECT_LIVE);
    size[k] = tl_term_size(gr.body);
    ck_assert_int_eq(linear_continuations(gr.body), 1 + 5 * n + 1);
    ck_assert(cpu_call(gr.g, args_of("0.25", 1)).u.r == 1);
  }
  ck_assert_msg(size[1] < 2.1 * size[0] && size[2] < 2.1 * size[1], "sizes %ld %ld %ld", size[0],
                size[1], size[2]);
}
END_TEST

/* A constant: a zero gradient of the parameters' shapes. */
START_TEST(constants) {
  tl_run("def c (x: R) (v: [R]) (p: (R, [R])) : R = length v + 3 * length p.2\n"
         "def k (x: R) (v: [R]) : R = sum (iota (length v)) + sum (rand 3 42) * x * 0 + floor x\n"
         "def b (x: R) (v: [R]) : R = if x > 0 && length v > 1 then 1 else 2\n");
  grad_is("c", "(1.5, [1, 2, 3], (2, [4, 5]))", "(0, [0, 0, 0], (0, [0, 0]))");
  grad_is("k", "(1.5, [1, 2])", "(0, [0, 0])");
  grad_is("b", "(1.5, [1, 2])", "(0, [0, 0])");
}
END_TEST

START_TEST(conditionals) {
  tl_run("def f (x: R) (y: R) : R = if x > y then x * x * y else sin (x * y)\n"
         "def g (x: R) : R = if x > 0 then sqrt x else 0\n"
         "def h (x: R) (v: [R]) : R = let w = if x > 1 then map (a. a * x) v else v in sum (map (a. a * a) w)\n"
         "def t (x: R) (y: R) : R = let p = if x < y then (x, y * y) else (y, x) in p.1 * p.2\n");
  check_grad("f", "(1.5, 0.5)");
  check_grad("f", "(0.5, 1.5)");
  /* the branch not taken has a nan gradient; it is never computed */
  ck_assert_str_eq(gtext("g", "-1"), "0");
  ck_assert_str_eq(gtext("g", "4"), "0.25");
  check_grad("h", "(2, [1, -2, 3])");
  check_grad("h", "(0.5, [1, -2, 3])");
  check_grad("t", "(0.5, 2)");
  check_grad("t", "(3, 2)");
}
END_TEST

/* Horner's rule: foldl (acc, c. acc * x + c) 0 cs, in x and cs. */
START_TEST(foldl_horner) {
  tl_run("def horner (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) 0 cs\n"
         "def fl (x: R) (v: [R]) : R = foldl (acc, c. sin (acc) * c + x) x v\n");
  Value g = check_grad("horner", "(1.5, [2, -1, 0.5, 3])");
  /* p(x) = 2x^3 - x^2 + 0.5x + 3, p'(x) = 6x^2 - 2x + 0.5 */
  ck_assert(tl_near_sym(component(g, 2, 0).u.r, 6 * 2.25 - 3 + 0.5, 1e-14));
  ck_assert_str_eq(val_to_string(component(g, 2, 1)), "[3.375, 2.25, 1.5, 1]");
  check_grad("fl", "(0.7, [1, -0.5, 2])");
  ck_assert_str_eq(gtext("horner", "(2, [])"), "(0, [])");
}
END_TEST

/* reduce with free variables and a parameter-dependent initial value:
   x + y + s is associative with unit -s, so reduce gives sum a + (n-1) s;
   x * y * c is associative with unit 1/c. */
START_TEST(reduce_free_vars) {
  tl_run("def r (s: R) (a: [R]) : R = reduce (x, y. x + y + s) (0 - s) a\n"
         "def m (c: R) (a: [R]) : R = reduce (x, y. x * y * c) (1 / c) a\n"
         "def mx (a: [R]) : R = maximum a + minimum a\n"
         "def lse (a: [R]) : R = logsumexp a\n");
  grad_is("r", "(0.5, [1, 2, 3, 4])", "(3, [1, 1, 1, 1])");
  check_grad("r", "(0.5, map (i. i * 0.25) (iota 600))");
  check_grad("m", "(1.25, [1, 2, 0.5, -3])");
  grad_is("mx", "[1, 5, -2, 3]", "[0, 1, 1, 0]");
  check_grad("lse", "[1, 5, -2, 3]");
}
END_TEST

START_TEST(wrt_subsets) {
  tl_run("def f (x: R) (b: B) (v: [R]) (y: R) : R = if b then x * sum v + y * y else y");
  int w1[] = {2, 0};
  Value g = check_grad_wrt("f", "(2, true, [1, 2, 3], 0.5)", w1, 2);
  ck_assert_str_eq(val_to_string(g), "([2, 2, 2], 6)");
  int w2[] = {3};
  g = check_grad_wrt("f", "(2, true, [1, 2, 3], 0.5)", w2, 1);
  ck_assert_str_eq(val_to_string(g), "1");
  g = check_grad("f", "(2, false, [1, 2, 3], 0.5)");
  ck_assert_str_eq(val_to_string(g), "(0, [0, 0, 0], 1)");
}
END_TEST

START_TEST(tuples) {
  tl_run("def t (p: (R, [R])) (x: R) : R = p.1 * sum (map (a. a * p.1 * x) p.2)\n"
         "def u (x: R) (y: R) : R = let (a, b) = (x * 2, sin y) in let (c, d) = (a * b, a + b) in c * d\n"
         "def w (q: ((R, R), R)) : R = let (ab, c) = q in let (a, b) = ab in a * b * c + q.1.1\n"
         "def nt (x: R) : R = (let z = (x, x * x) in z).2 + fst (x * 3, 1)\n");
  check_grad("t", "((1.5, [1, 2, 3]), 0.5)");
  check_grad("u", "(0.5, 1.5)");
  grad_is("w", "((2, 3), 4)", "((13, 8), 6)");
  check_grad("nt", "1.25");
}
END_TEST

START_TEST(arrays) {
  tl_run("def rep (x: R) (v: [R]) : R = sum (map2 (*) (replicate (length v) x) v)\n"
         "def lit (x: R) (y: R) : R = sum (map (a. a * a) [x, y, x * y, 2])\n"
         "def nest (s: R) (v: [R]) (w: [R]) : R = sum (map (a. sum (map (b. a * b * s) w)) v)\n"
         "def var (a: [R]) : R = variance a + norm a\n"
         "def soft (a: [R]) : R = sum (map2 (*) (softmax a) a)\n"
         "def sv (x: R) : R = sum (save \"/tmp/una_test_direct.npy\" (map (a. a * x) [1, 2, 3]))\n");
  grad_is("rep", "(2, [1, 2, 3])", "(6, [2, 2, 2])");
  check_grad("lit", "(0.5, -1.5)");
  check_grad("nest", "(0.5, [1, 2], [3, -1, 2])");
  check_grad("var", "[1, 2, 4, -3]");
  check_grad("soft", "[0.5, 2, -1]");
  grad_is("sv", "2", "6");
}
END_TEST

START_TEST(scalar_ops) {
  tl_run("def f (x: R) (y: R) : R =\n"
         "  -x + sin x * cos y + tan (x / 4) + exp y / log (y + 3) + sqrt (y * y + 1)\n"
         "  + tanh x * sigmoid y + abs (x - y) + x ^ 3 + pow 2 y + max x y * min x (y * 2) - x / y\n");
  check_grad("f", "(0.7, 1.3)");
  check_grad("f", "(-0.4, 2.1)");
}
END_TEST

START_TEST(unsupported) {
  tl_run("def sc (v: [R]) : R = sum (scanl (+) 0 v)\n"
         "def ok (v: [R]) : R = sum (scanl (+) 0 [1, 2]) * sum v\n");
  FeTry t;
  if (fe_try(&t)) {
    grad_of("sc", NULL, 0, REV_DIRECT_LIVE);
    fe_untry(&t);
    ck_abort_msg("no error");
  } else {
    ck_assert_str_eq(fe_error_text(t.err), "t.una:1:28: error: grad: the direct path does not cover scanl (the UNF path does)");
  }
  /* scans of constants are constants */
  grad_is("ok", "[1, 2]", "[4, 4]");
}
END_TEST

/* Figure 13 (section 7.1) as printed, for reduce (x, y. x + y + s) (-s) a
   with z = 1: B0 = [∂e/∂s] = [1, .., 1], B1 = scanr 1 ×^ B0 = [1, .., 1]
   (n + 1 of them), B2 = reduce +^ 0 B1 = n + 1, and 0 for the initial
   value: ∂/∂s = n + 1. The truth (sum a + (n - 1) s) is n - 1, which the
   derived rule gives. */
START_TEST(figure_13_counterexample) {
  tl_run("def r (s: R) (a: [R]) : R = reduce (x, y. x + y + s) (0 - s) a\n"
         "def fig13 (s: R) (a: [R]) : R =\n"
         "  let a0 = shift1R (scanl (x, y. x + y + s) (0 - s) a) in\n"
         "  let b0 = map2 (x, y. 1) a0 a in\n"
         "  reduce (+) 0 (scanr (*) 1 b0)\n");
  Value fig = cpu_call(find("fig13"), args_of("(0.5, [1, 2, 3, 4])", 2));
  ck_assert(fig.u.r == 5);
  Value g = check_grad("r", "(0.5, [1, 2, 3, 4])");
  ck_assert(component(g, 2, 0).u.r == 3);
}
END_TEST

/* Programs from the random generator that once broke the transform: a
   let whose body ignores its variable (the right-hand side is dead, so
   v5 below carries no gradient although its right-hand side mentions p3). */
START_TEST(regression_dead_let) {
  tl_run("def h1 (p1: R) (p2: R) (p3: R) : (R, R) =\n"
         "  (p1, (log (exp (tanh (foldl (acc8, e9. tanh ((max e9 p2) * length (replicate 1 p2)))"
         " (reduce (x, y. x * y) 1 [p3, p3]) (let v5 = (let v4 = p3 in (-0.5)) in"
         " (map2 (x6, y7. v5) [(-0.19)] (replicate 1 (-1)))))) + 1)))\n"
         "def f (p10: R) (p11: R) : R =\n"
         "  (tan (0.5 * tanh ((min (minimum (map2 (x12, y13. x12) (iota 1) (if (p10 < (-2.52))"
         " then (replicate 1 p10) else (replicate 1 1.83)))) (max (relu p10) ((h1 (-2) p10 p11).2))) * p11)))\n"
         "def g (x: R) (v: [R]) : R = let u = (let w = x * 2 in 3) in sum (map (a. a * u) v) + x\n");
  check_grad("f", "(0.5, 0.25)");
  check_grad("f", "(-3, 0.75)");
  grad_is("g", "(2, [1, 2])", "(1, [3, 3])");
}
END_TEST

/* 16,000 straight-line lets (built directly: the parser is not under
   test), x_i = x_(i-1) * 0.5 + x * 0.5: the transform is linear and the
   continuations nest 16,000 deep at run time; the gradient is exactly 1. */
START_TEST(long_chain) {
  Span sp = fe_nospan;
  Sym *x = fe_mk_sym("x", fe_ty_real(), sp);
  int n = 16000;
  Sym **xs = NEW_ARRAY(Sym *, n + 1);
  xs[0] = x;
  for (int i = 1; i <= n; i++) xs[i] = fe_mk_sym("x", fe_ty_real(), sp);
  Term *body = fe_mk_var(sp, xs[n]);
  for (int i = n; i >= 1; i--) {
    Term *rhs = fe_mk_add(sp, fe_mk_mul(sp, fe_mk_var(sp, xs[i - 1]), fe_mk_num(sp, 0.5)),
                          fe_mk_mul(sp, fe_mk_var(sp, x), fe_mk_num(sp, 0.5)));
    body = fe_mk_let(sp, xs[i], rhs, body);
  }
  int w = 0;
  Term *g = rev_direct_gradient(&x, 1, &w, 1, body);
  ck_assert_int_eq(linear_continuations(g), 1 + 5 * n + 1);
  Def *gd = fe_mk_def("grad", sp, 1, &x, g);
  Value a = val_real(0.25);
  ck_assert(cpu_call(gd, &a).u.r == 1);
}
END_TEST

/* More constructs: globals, booleans in lets, tuples out of if, maps over
   constant arrays, nested lambdas using an enclosing lambda's parameter
   and a tuple parameter's components, a let-tuple of a tuple parameter. */
START_TEST(more_constructs) {
  tl_run("let gl = 2.5\n"
         "let (g1, g2) = (3, [1, 2])\n"
         "def a (x: R) : R = x * gl + g1 * sum (map (e. e * x) g2)\n"
         "def b (x: R) (y: R) : R = let c = x > y in let t = if c then (x, y) else (y * y, x) in t.1 * sin t.2\n"
         "def c (s: R) (n: R) : R = sum (map (i. i * s * s) (iota n))\n"
         "def d (p: (R, [R])) (v: [R]) : R =\n"
         "  sum (map (a. sum (map (b. a * b * p.1 + p.1 * p.1) p.2)) v)\n"
         "def e (p: (R, (R, R))) : R = let (u, w) = p in let (w1, w2) = w in u * w1 - w2 * p.1\n"
         "def m (v: [R]) (w: [R]) : R = sum (map2 (a, b. max a b * min a b) v w)\n");
  grad_is("a", "2", "11.5");
  check_grad("b", "(0.5, 2)");
  check_grad("b", "(2, 0.5)");
  int w0[] = {0};
  ck_assert_str_eq(val_to_string(check_grad_wrt("c", "(1.5, 4)", w0, 1)), "18");
  ck_assert_str_eq(gtext("c", "(1.5, 4)"), "(18, 0)");
  check_grad("d", "((0.5, [1, -2, 3]), [2, 0.25])");
  grad_is("e", "(2, (3, 4))", "(-1, (2, -2))");
  check_grad("m", "([1, 5, -2], [3, 2, 0.5])");
}
END_TEST

Suite *suite_direct(void) {
  Suite *s = suite_create("direct");
  TCase *tc = tcase_create("direct");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, example_1_1);
  tcase_add_test(tc, example_3_1_shape);
  tcase_add_test(tc, sum_dot_prod);
  tcase_add_test(tc, prod_zeros);
  tcase_add_test(tc, fan_out);
  tcase_add_test(tc, same_variable_twice);
  tcase_add_test(tc, free_vars_in_map2);
  tcase_add_test(tc, doubling_chain);
  tcase_add_test(tc, constants);
  tcase_add_test(tc, conditionals);
  tcase_add_test(tc, foldl_horner);
  tcase_add_test(tc, reduce_free_vars);
  tcase_add_test(tc, wrt_subsets);
  tcase_add_test(tc, tuples);
  tcase_add_test(tc, arrays);
  tcase_add_test(tc, scalar_ops);
  tcase_add_test(tc, unsupported);
  tcase_add_test(tc, figure_13_counterexample);
  tcase_add_test(tc, regression_dead_let);
  tcase_add_test(tc, long_chain);
  tcase_add_test(tc, more_constructs);
  suite_add_tcase(s, tc);
  return s;
}
