/* test_partial_eval.c: the partial-evaluation passes (beta, forward,
   letnorm, tuples, dce) on the real gradients of both AD paths: the
   optimized gradients of the corpus and of random programs have no lambda
   value, no application and no function-typed variable (lemma 5.3), pass
   fe_retype, keep every binder unique, and compute the same values (bit for bit, but for the sign of a zero)
   (and the same errors) as the unoptimized ones; each pass on its own;
   errors are never dropped; 16,000-let chains in linear time. */
#include <check.h>
#include <math.h>
#include <time.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/check.h"
#include "../../frontend/parser.h"
#include "../../frontend/ir/retype.h"
#include "../../frontend/ir/term_print.h"
#include "../../optimizer/opt.h"
#include "../../optimizer/passes.h"
#include "../../optimizer/pe_util.h"
#include "../../reverse/reverse.h"
#include "../reverse/gradcheck.h"
#include "../../frontend/ir/strbuf.h"
#include "../suites.h"
#include "../testlib.h"

static OptOptions options(void) {
  OptOptions o = {0};
  o.enabled = true;
  o.check_passes = true; /* the type checker after every pass */
  return o;
}

/* ---- lemma 5.3 ---- */

typedef struct Shape {
  OptSymMap *allowed; /* combinator lambdas, by their first parameter */
  int lams, apps, fun_vars;
} Shape;

static void shape_visit(const Term *t, void *ud) {
  Shape *s = ud;
  if (t->kind == T_PRIM)
    for (int i = 0; i < t->nkids; i++)
      if (t->kids[i]->kind == T_LAM && t->kids[i]->nsyms > 0) opt_map_add(s->allowed, t->kids[i]->syms[0], 1);
  if (t->kind == T_LAM && (t->nsyms == 0 || opt_map_count(s->allowed, t->syms[0]) == 0)) s->lams++;
  if (t->kind == T_APP) s->apps++;
  if (t->kind == T_VAR && t->sym->type->kind == TY_FUN) s->fun_vars++;
}

/* NULL when t has no lambda outside combinator arguments, no application
   and no function-typed variable; else what it has. */
static char *lemma_5_3(const Term *t) {
  Shape s = {opt_map_new(), 0, 0, 0};
  tl_walk(t, shape_visit, &s);
  if (s.lams || s.apps || s.fun_vars)
    return una_sprintf("%d lambda values, %d applications, %d function variables", s.lams, s.apps, s.fun_vars);
  return NULL;
}

/* ---- comparing a gradient with its optimized form ---- */

/* f applied to args: the value, or the error text in *err. */
static Value call(const Def *f, const Value *args, char **err) {
  *err = NULL;
  FeTry t;
  if (fe_try(&t)) {
    Value v = cpu_call(f, args);
    fe_untry(&t);
    return v;
  }
  *err = fe_error_text(t.err);
  return val_real(0);
}

/* Checks the optimized o against g at random points; NULL or a report. */
static char *compare(const char *what, const Def *g, const Def *o, uint64_t seed) {
  static const int lengths[] = {0, 1, 3, 7};
  GenRng r = gen_rng(seed);
  for (int li = 0; li < 4; li++)
    for (int pt = 0; pt < 2; pt++) {
      Value *args = NEW_ARRAY(Value, g->nparams + 1);
      for (int i = 0; i < g->nparams; i++)
        args[i] = gc_random_value(&r, g->params[i]->type, (size_t)lengths[li], -1.5, 1.5);
      char *e1, *e2;
      Value v1 = call(g, args, &e1);
      Value v2 = call(o, args, &e2);
      if (e1 || e2) {
        if (!e1 || !e2 || strcmp(e1, e2) != 0)
          return una_sprintf("%s: errors differ: '%s' vs '%s'", what, e1 ? e1 : "none", e2 ? e2 : "none");
        continue;
      }
      if (!tl_same_optimized(v1, v2))
        return una_sprintf("%s: values differ at length %d: %s vs %s", what, lengths[li], val_to_string(v1),
                           val_to_string(v2));
    }
  return NULL;
}

typedef struct Counts {
  long programs, gradients, skipped;
  long nodes_before, nodes_after;
} Counts;

/* Derives f's gradient on both paths, optimizes it and checks it: lemma
   5.3, fe_retype, unique binders, same values. Returns NULL or a report. */
static char *check_def(const char *what, const Def *f, uint64_t seed, Counts *cn) {
  int *wrt = NEW_ARRAY(int, f->nparams + 1), nwrt = 0;
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i]->type->kind != TY_BOOL) wrt[nwrt++] = i;
  if (nwrt == 0) return NULL;
  cn->programs++;
  for (int path = 0; path < 2; path++) {
    Def *g = NULL;
    FeTry t;
    if (fe_try(&t)) {
      g = rev_grad(f, wrt, nwrt, path == 0 ? REV_UNF : REV_DIRECT);
      fe_untry(&t);
    } else {
      cn->skipped++; /* not differentiable (scans, ...) */
      continue;
    }
    OptOptions oo = options();
    Def *o = opt_optimize_def(g, &oo);
    const char *pn = path == 0 ? "unf" : "direct";
    char *bad = lemma_5_3(o->body);
    if (bad) return una_sprintf("%s (%s): %s in\n%s", what, pn, bad, fe_def_str(o));
    if (fe_try(&t)) {
      fe_retype(o);
      fe_untry(&t);
    } else {
      if (getenv("UNA_PE_ONLY"))
        fprintf(stderr, "%s\n=>\n%s\n", fe_def_str_opts(g, FE_PRINT_UNIQUE | FE_PRINT_MULTILINE),
                fe_def_str_opts(o, FE_PRINT_UNIQUE | FE_PRINT_MULTILINE));
      return una_sprintf("%s (%s): retype: %s in\n%s", what, pn, fe_error_text(t.err), fe_def_str(o));
    }
    tl_assert_bound_once(o->body);
    char *rep = compare(what, g, o, seed + (uint64_t)path);
    if (rep) return una_sprintf("%s (%s)\n%s", rep, pn, fe_def_str(o));
    cn->gradients++;
    cn->nodes_before += tl_term_size(g->body);
    cn->nodes_after += tl_term_size(o->body);
  }
  return NULL;
}

/* check_def on the def f of src (prelude loaded). */
static char *check_src(const char *what, const char *src, uint64_t seed, Counts *cn) {
  char *err = NULL;
  GcProgram *p = gc_load("<pe>", src, true, "f", &err);
  if (!p) return una_sprintf("%s: %s", what, err);
  return check_def(what, p->f, seed, cn);
}

/* ---- the corpus ---- */

static const char *const corpus[] = {
    "def f (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2",
    "def f (x1: R) (x2: R) (x3: R) : R = let x4 = cos x3 in x1 * x4 + x2",
    "def f (v: [R]) : R = prod v",
    "def f (v: [R]) : R = reduce (*) 1 v",
    "def f (v: [R]) : R = sum v",
    "def f (v: [R]) (w: [R]) : R = dot v w",
    "def f (x: R) : R = let a = exp x in a * sin a + a",
    "def f (x: R) : R = x * x",
    "def f (v: [R]) : R = sum (map2 (*) v v)",
    "def f (s: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s) v w)",
    "def f (s: R) (t: R) (v: [R]) (w: [R]) : R = sum (map2 (a, b. s * a + sin (t * b)) v w)",
    "def f (s: R) (v: [R]) : R = sum (map (a. s * a * a) v)",
    "def f (x: R) (v: [R]) (p: (R, [R])) : R = 3 + length v",
    "def f (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) 0 cs",
    "def f (x: R) (a: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) (a * a) cs",
    "def f (x: R) (v: [R]) : R = foldl (acc, e. sin (acc * e) + x * e) x v",
    "def f (x: R) (y: R) : R = if x * y > 0.3 then x * x * y else sin y - x",
    "def f (v: [R]) : R = sum (map relu v)",
    "def f (v: [R]) (s: R) : R = sum (map (x. if x > 0 then s * x else 0.01 * x) v)",
    "def f (v: [R]) : R = max (logsumexp v) (-5)",
    "def f (z: [R]) (y: [R]) : R = if length z == 0 then 0 else logsumexp z - dot y z",
    "def f (z: [R]) (y: [R]) : R = 0 - dot y (map log (softmax z))",
    "def f (b: B) (x: R) (c: B) : R = if b && !c then x * x else exp x",
    "def f (p: (R, [R])) (q: ((R, R), R)) : R = p.1 * sum p.2 + q.1.2 * q.2 - fst q.1",
    "def f (x: R) (y: R) : R = let (a, b) = (x * y, x + y) in a * b",
    "def f (x: R) (y: R) : R = let t = if x < y then (x, y) else (y, x) in t.1 * exp t.2",
    "def f (x: R) (v: [R]) : R = sum (map2 (*) (replicate (length v) x) v)",
    "def f (x: R) (y: R) : R = sum (map (a. a * a) [x, y, x * y])",
    "def f (x: R) (v: [R]) : R = reduce (max) x v",
    "def f (v: [R]) (x: R) : R = min (reduce (min) inf v) x",
    "def f (s: R) (v: [R]) : R = reduce (a, b. a + b + s) (0 - s) v",
    "def f (s: R) (v: [R]) : R = let c = exp s in reduce (a, b. a * b * c) (1 / c) v",
    "def f (v: [R]) (x: R) : R = max (reduce (a, b. log (exp a + exp b)) (-inf) v) x",
    "def f (v: [R]) (w: [R]) : R = sum (map (a. sum (map (b. a * b) w)) v)",
    "def g (a: R) (b: [R]) : R = a * sum b\ndef h (x: R) : R = g x [x, 2 * x]\n"
    "def f (x: R) (v: [R]) : R = h x + g (h x) v",
    "def g (a: R) : (R, R) = (sin a, cos a)\ndef f (x: R) : R = let (s, c) = g x in s * c",
    "def f (x: R) : R = sin x + cos x + tan (0.5 * x) + exp x + log (2 + x) + sqrt (2 + x) + tanh x + sigmoid x + "
    "abs x + floor x + (1 + x * x) ^ x + pow 2 x + max x 0.25 + min x 0.25 - x / (3 + x) + neg x",
    "def f (x: R) (y: R) : R = if (x < y || x == 2) && !(y >= 3) && x != y then x * y else x + y",
    "def f (x: R) : R = sum (map2 (a, b. a * b * x) (iota 4) (rand 4 7))",
    "def f (v: [R]) : R = if length v == 0 then 0 else variance v",
    "def f (v: R) : R = let x = (let w = v in 0.5) in x",
    "def f (p: R) : R = sum (map (x. x) (let w = p in [1.5]))",
    "def f (v: R) : R = let y = (let w = v in 0.5) in if true then y else y",
    /* errors must survive: map2 of unequal lengths, a bad iota size */
    "def f (x: R) (v: [R]) : R = let u = map2 (*) v [1, 2] in x * x",
    "def f (x: R) (v: [R]) : R = let u = iota (x + 0.5) in x * sum v",
    "def f (x: R) (v: [R]) : R = x * sum (map2 (a, b. a * b) v (replicate 3 x))",
};

#define NCORPUS ((int)(sizeof corpus / sizeof corpus[0]))

START_TEST(corpus_gradients) {
  Counts cn = {0};
  if (getenv("UNA_PE_ONLY") && atoi(getenv("UNA_PE_ONLY")) != _i) return;
  char *rep = check_src(corpus[_i], corpus[_i], 100 + (uint64_t)_i, &cn);
  ck_assert_msg(rep == NULL, "%.3000s", rep);
}
END_TEST

/* The grad_*.una scripts' functions and the prelude's differentiable
   functions, through the same checks. */
START_TEST(prelude_functions) {
  static const char *const srcs[] = {
      "def f (v: [R]) : R = mean v",
      "def f (v: [R]) : R = sum (softmax v)",
      "def f (v: [R]) (w: [R]) : R = dot (map (x. x * x) v) w",
      "def f (x: R) (y: R) (z: R) : R = let a = x * y in let b = a * z in let c = b * a in c + a",
  };
  Counts cn = {0};
  for (int i = 0; i < 4; i++) {
    char *rep = check_src(srcs[i], srcs[i], 7 + (uint64_t)i, &cn);
    ck_assert_msg(rep == NULL, "%.3000s", rep);
  }
}
END_TEST

/* Random programs of the AD tests' generator. */
START_TEST(random_programs) {
  GenOptions go = gen_default_options();
  Counts cn = {0};
  for (uint64_t seed = 1; seed <= 150; seed++) {
    GenProgram p = gen_program(seed, &go);
    char *err = NULL;
    GcProgram *gp = gc_load("<gen>", p.text, true, p.fname, &err);
    if (!gp) continue;
    char *rep = check_def(p.text, gp->f, seed, &cn);
    ck_assert_msg(rep == NULL, "seed %llu: %.3000s", (unsigned long long)seed, rep);
  }
  ck_assert_int_gt(cn.gradients, 150);
}
END_TEST

/* ---- shapes of the results ---- */

/* The optimized gradient of f in src on path. */
static Def *optimized(const char *src, RevPath path) {
  char *err = NULL;
  GcProgram *p = gc_load("<pe>", src, true, "f", &err);
  ck_assert_msg(p != NULL, "%s", err);
  int wrt[8], n = gc_wrt(p, NULL, wrt);
  OptOptions o = options();
  return opt_optimize_def(rev_grad(p->f, wrt, n, path), &o);
}

/* f of the program src itself, optimized. */
static Def *optimized_as_written(const char *src) {
  tl_run(src);
  OptOptions o = options();
  return opt_optimize_def(tl_def(tl_session, "f"), &o);
}

/* Example 1.1: on both paths, a let chain without continuations. */
START_TEST(example_1_1) {
  const char *src = "def f (x1: R) (x2: R) (x3: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in w2";
  for (int path = 0; path < 2; path++) {
    Def *o = optimized(src, path == 0 ? REV_UNF : REV_DIRECT);
    char *s = fe_def_str(o);
    ck_assert_msg(lemma_5_3(o->body) == NULL, "%s", s);
    ck_assert_msg(strstr(s, "fun") == NULL, "%s", s);
    ck_assert_int_eq(o->body->type->kind, TY_TUPLE);
  }
}
END_TEST

/* prod and dot: no continuation is left, the scans stay. */
START_TEST(prod_dot) {
  Def *o = optimized("def f (a: [R]) : R = prod a", REV_UNF);
  char *s = fe_def_str(o);
  ck_assert_msg(lemma_5_3(o->body) == NULL && strstr(s, "scanl") && strstr(s, "scanr"), "%s", s);
  o = optimized("def f (a: [R]) (b: [R]) : R = dot a b", REV_UNF);
  s = fe_def_str(o);
  ck_assert_msg(lemma_5_3(o->body) == NULL, "%s", s);
}
END_TEST

/* Whether t holds a map whose elements are tuples (run boxed, element by
   element, on the tree evaluator). */
static void tuple_map_visit(const Term *t, void *ud) {
  if (t->kind == T_PRIM && (t->prim == PRIM_MAP || t->prim == PRIM_MAP2) && t->type &&
      t->type->elem->kind == TY_TUPLE)
    *(bool *)ud = true;
}

/* The gradient of the bench's lets16 (a 16-let body in a map2, about 500
   nodes in its gradient's map) is split into one map per component (each
   a kernel, siblings over the same arrays), not left a map of tuples. */
START_TEST(big_tuple_map_split) {
  StrBuf b = {0};
  sb_put(&b, "def f (x1: [R]) (x2: [R]) : R = sum (map2 (a, b. let w1 = a * b in let w2 = w1 * a in ");
  for (int i = 3; i <= 16; i++) sb_printf(&b, "let w%d = (w%d * a + w%d * b) * 0.5 in ", i, i - 1, i - 2);
  sb_put(&b, "w16) x1 x2)");
  Def *o = optimized(sb_str(&b), REV_UNF);
  bool boxed = false;
  tl_walk(o->body, tuple_map_visit, &boxed);
  ck_assert_msg(!boxed, "%s", fe_def_str(o));
}
END_TEST

/* A map of tuples over `iota (2 * p)` read component by component is
   split into one map per component (the count is cheap to compute again),
   and the map of tuples, dead, is not computed. */
START_TEST(tuple_map_over_count_split) {
  Def *o = optimized_as_written("def f (a: [R]) : [R] = let p = length a in "
                     "let gs = map (k. let i = if k < p then k else k - p in (a[i] * a[i], a[i] + k)) (iota (2 * p)) in "
                     "concat (map (g. g.1) gs) (map (g. g.2) gs)");
  bool boxed = false;
  tl_walk(o->body, tuple_map_visit, &boxed);
  ck_assert_msg(!boxed, "%s", fe_def_str(o));
}
END_TEST

/* A derived function of over 200 nodes called in a map body is inlined
   there (SMALL_CALL), so the map is a scalar kernel, not a call per
   element on the tree evaluator. */
START_TEST(large_call_in_map_inlined) {
  StrBuf b = {0};
  sb_put(&b, "def big (x: R) (y: R) : R = let w1 = x * y in let w2 = sin w1 * x in ");
  for (int i = 3; i <= 12; i++) sb_printf(&b, "let w%d = (w%d * x + w%d * y) * 0.5 in ", i, i - 1, i - 2);
  sb_put(&b, "w12\ndef f (xs: [R]) : [R] = map (x. (grad big wrt x) x 0.5) xs");
  TlRun r = tl_capture(tl_session_with(sb_str(&b)), ":plan f [1, 2]", true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_msg(strstr(r.out, "grad_big") == NULL && strstr(r.out, "k0 = map (una_map_0)"), "%s", r.out);
}
END_TEST

/* ---- each pass alone ---- */

/* The body of `def f PARAMS = BODY` checked in tl_session. */
static Def *def_of(const char *text) {
  tl_run(text);
  return tl_def(tl_session, "f");
}

/* Runs one pass on f's body, retypes, and compares at the point args. */
static Term *one_pass(const char *pass, Def *f, const char *args) {
  const OptPass *p = opt_find_pass(pass);
  ck_assert_ptr_nonnull(p);
  /* fresh Syms, so that o's slots leave f's alone */
  Sym **ps = NEW_ARRAY(Sym *, f->nparams + 1);
  for (int i = 0; i < f->nparams; i++) ps[i] = fe_sym_new(f->params[i]->name, f->params[i]->type, f->params[i]->span);
  Term *t = p->run(opt_freshen(f->body, f->nparams, f->params, ps));
  Def *o = fe_mk_def(f->name, f->span, f->nparams, ps, t);
  fe_retype(o);
  Value a = tl_ev(args);
  Value *av = tl_args(a, f->nparams);
  ck_assert(tl_same_optimized(tl_call(f, av), tl_call(o, av)));
  return t;
}

START_TEST(pass_forward) {
  Def *f = def_of("def f (x: R) (y: R) : R = let a = x in let b = 3 in let c = a * b in c + a");
  Term *t = one_pass("forward", f, "(2, 5)");
  /* c is the user's let: it stays (single-use lets the AD introduces go) */
  ck_assert_str_eq(fe_term_str(t), "let c = x * 3 in c + x");
  /* nothing to do: the same pointer */
  ck_assert_ptr_eq(opt_forward(t), t);
}
END_TEST

START_TEST(pass_letnorm) {
  Def *f = def_of("def f (x: R) : R = let a = (let b = x * x in let c = b + 1 in c * b) in (let d = a + 1 in d) * a");
  Term *t = one_pass("letnorm", f, "1.5");
  ck_assert_str_eq(fe_term_str(t), "let b = x * x in let c = b + 1 in let a = c * b in let d = a + 1 in d * a");
  ck_assert_ptr_eq(opt_letnorm(t), t);
  /* lets of a later operand do not move before an earlier one that may raise */
  f = def_of("def f (v: [R]) : R = sum (map2 (*) v v) + (let d = sum v in d * d)");
  t = one_pass("letnorm", f, "[1, 2]");
  ck_assert_str_eq(fe_term_str(t), "sum (map2 (*) v v) + let d = sum v in d * d");
}
END_TEST

START_TEST(pass_tuples) {
  Def *f = def_of("def f (x: R) (y: R) : R = let (a, b) = (x * y, x + y) in let t = (a, b * 2) in t.1 + t.2 + (x, y).2");
  Term *t = one_pass("tuples", f, "(2, 5)");
  char *s = fe_term_str(t);
  ck_assert_msg(strstr(s, "(") == NULL || strstr(s, ".1") == NULL, "%s", s);
  ck_assert_int_eq(tl_count_kind(t, T_TUPLE, -1), 0);
  ck_assert_int_eq(tl_count_kind(t, T_LETTUP, -1), 0);
  ck_assert_int_eq(tl_count_kind(t, T_PROJ, -1), 0);
}
END_TEST

START_TEST(pass_dce) {
  Def *f = def_of("def f (x: R) (v: [R]) : R = let a = x * x in let b = a + 1 in let u = map2 (*) v v in "
                  "let w = iota 3 in let z = map (e. e * a) v in x");
  Term *t = one_pass("dce", f, "(2, [1, 2])");
  /* a, b and z go in one pass; map2 and iota may raise and stay */
  ck_assert_str_eq(fe_term_str(t), "let u = map2 (*) v v in let w = iota 3 in x");
  ck_assert_ptr_eq(opt_dce(t), t);
  /* a dead map that may raise (a gather) keeps what raises: its gathers */
  f = def_of("def f (x: R) (v: [R]) : R = let z = map (i. let e = v[i + 1] in let g = exp e in g * x) "
             "(iota (length v - 1)) in x");
  t = one_pass("dce", f, "(2, [1, 2, 3])");
  ck_assert_str_eq(fe_term_str(t), "let z = map (i. v[i + 1]) (iota (length v - 1)) in x");
  ck_assert_ptr_eq(opt_dce(t), t);
  /* a dead primal's matrix-vector products and map2s (raises.c): their
     lengths checked row by row, nothing multiplied; hid's values are not
     needed, only its length (the second product's rows are checked
     against it) */
  f = def_of("def f (w: [[R]]) (b: [R]) (v: [[R]]) (x: [[R]]) : R = let a = map (xi. "
             "let hid = map2 (z, c. tanh (z + c)) (map (r. reduce (+) 0 (map2 (*) r xi)) w) b in "
             "let o = map (r. reduce (+) 0 (map2 (*) r hid)) v in reduce (+) 0 o) x in 1");
  t = one_pass("dce", f, "([[1, 2]], [1], [[1]], [[1, 2]])");
  ck_assert_str_eq(fe_term_str(t), "let a = map (xi. let hid = map2 (z, c. 0) (map (r. let c = map2 (*) r xi in 0) w) b in "
                                   "let c = map (r. let c = map2 (*) r hid in 0) v in 0) x in 1");
  ck_assert_ptr_eq(opt_dce(t), t);
}
END_TEST

START_TEST(pass_beta) {
  Def *g = optimized("def f (x: R) (y: R) : R = x * y", REV_DIRECT);
  ck_assert(lemma_5_3(g->body) == NULL);
  ck_assert_ptr_nonnull(opt_find_pass("beta"));
  ck_assert_ptr_null(opt_find_pass("nonesuch"));
}
END_TEST

/* A rule that makes a let's rhs a variable that the rhs did not mention
   (t[0] of a literal [y, ...]) leaves y's uses as they were: the walker
   substitutes the let and must not take y for unused (fuzz seed 4470:
   "'t' is not bound" after the arrays pass). */
START_TEST(copy_made_by_a_rule) {
  Def *g = optimized("def f (p: R) (q: R) : R = [reduce (*) 1 (replicate 3 (-2)), floor (3 * sin (q + q))][0]",
                     REV_UNF);
  ck_assert_ptr_nonnull(g);
}
END_TEST

/* Occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* The gradient of a let chain reaches its fixpoint in one round: after the
   first round no pass changes it, so `--dump-after=all` prints each pass
   once. Forward runs again after the algebra, so that its depth bound on
   the adjoints' sums measures the simplified sums (before, the first
   round cut them into lets that the next round joined), and the bound is
   counted as the depth will be. */
START_TEST(one_round) {
  char src[8192];
  int k = snprintf(src, sizeof src, "def f (x1: R) (x2: R) : R = let w1 = x1 * x2 in let w2 = w1 * x1 in\n");
  for (int i = 3; i <= 100; i++)
    k += snprintf(src + k, sizeof src - (size_t)k, "  let w%d = w%d * x1 + w%d * x2 in\n", i, i - 1, i - 2);
  snprintf(src + k, sizeof src - (size_t)k, "  w100\n");
  Session *s = tl_session_with(src);
  s->dump_after = "all";
  TlRun g = tl_capture(s, ":grad f", true);
  ck_assert_msg(g.ok, "%s", g.err);
  int defs = count_of(g.err, "-- after beta\n"); /* one per optimized definition */
  ck_assert_int_gt(defs, 0);
  ck_assert_int_eq(count_of(g.err, "-- after forward\n"), 2 * defs); /* forward is in the list twice */
  ck_assert_int_eq(count_of(g.err, "-- after algebra\n"), defs);
  ck_assert_int_eq(count_of(g.err, "-- after cse\n"), defs);
}
END_TEST

/* --dump-after prints "-- after PASS" and the program. */
START_TEST(dump_after) {
  Def *f = def_of("def f (x: R) : R = let a = x in a * a");
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  OptOptions o = options();
  o.dump_after = "forward";
  o.dump = out;
  Def *r = opt_optimize_def(f, &o);
  fclose(out);
  ck_assert_msg(strncmp(buf, "-- after forward\n", 17) == 0, "%s", buf);
  ck_assert_msg(strstr(buf, "x * x") != NULL, "%s", buf);
  ck_assert_str_eq(fe_term_str(r->body), "x * x");
  /* disabled: the same Def */
  o.enabled = false;
  ck_assert_ptr_eq(opt_optimize_def(f, &o), f);
}
END_TEST

/* ---- the type checker after every pass ---- */

/* Deliberately broken passes, injected through OptOptions.passes. */
/* let x = e1 in e2 -> e2: leaves x unbound. */
static Term *drop_let(const Term *t) { return t->kind == T_LET ? t->kids[1] : (Term *)t; }
/* The root retyped as B: its type no longer agrees with its parts. */
static Term *retype_root(const Term *t) {
  if (t->type->kind == TY_BOOL) return (Term *)t;
  Term *c = NEW(Term);
  *c = *t;
  c->type = fe_ty_bool();
  return c;
}

/* opt_optimize_def with the passes ps (their own names) under
   check_passes; the error text, or NULL when it succeeds. */
static char *broken_run(const Def *f, const OptPass *ps, int n, bool check) {
  OptOptions o = options();
  o.check_passes = check;
  o.passes = ps;
  o.npasses = n;
  FeTry t;
  if (fe_try(&t)) {
    opt_optimize_def(f, &o);
    fe_untry(&t);
    return NULL;
  }
  return t.err.msg ? una_strdup(t.err.msg) : "";
}

/* A pass that breaks a program is caught at once, and named. */
START_TEST(check_passes_names_the_pass) {
  Def *f = def_of("def f (x: R) : R = let a = x * x in a + a");
  const OptPass drop[] = {{"beta", opt_beta, 0}, {"droplet", drop_let, 0}, {"cse", opt_cse, 0}};
  char *e = broken_run(f, drop, 3, true);
  ck_assert_ptr_nonnull(e);
  const char *want = "internal: after optimizer pass 'droplet': 'var' node at ";
  ck_assert_msg(strncmp(e, want, strlen(want)) == 0, "%s", e);
  ck_assert_msg(strstr(e, ": 'a' (#") && strstr(e, ") is not bound in the Def"), "%s", e);
  const OptPass root[] = {{"forward", opt_forward, 0}, {"retyped", retype_root, 0}};
  e = broken_run(f, root, 2, true);
  ck_assert_ptr_nonnull(e);
  ck_assert_str_eq(e, "internal: after optimizer pass 'retyped': 'let' node at 1:20: has type B, its body R");
  /* without the check the broken pass goes through unnoticed */
  ck_assert_ptr_null(broken_run(f, drop, 3, false));
  /* the real pipeline passes its own check */
  ck_assert_ptr_null(broken_run(f, opt_passes, opt_npasses, true));
}
END_TEST

/* ---- long chains ---- */

typedef struct Chain {
  int n;
  int path;
  double ms_derive, ms_opt;
  char *problem;
} Chain;

/* The straight-line program of bench/grad_scale with n lets. */
static char *chain_program(int n) {
  size_t cap = (size_t)n * 48 + 256, len = 0;
  char *s = GC_MALLOC_ATOMIC(cap);
  len += (size_t)snprintf(s + len, cap - len, "def f (x1: R) (x2: R) : R =\n  let w1 = x1 * x2 in\n  let w2 = w1 * x1 in\n");
  for (int i = 3; i <= n; i++)
    len += (size_t)snprintf(s + len, cap - len, "  let w%d = w%d * x1 + w%d * x2 in\n", i, i - 1, i - 2);
  snprintf(s + len, cap - len, "  w%d\n", n);
  return s;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static void run_chain(void *arg) {
  Chain *c = arg;
  FeTry t;
  if (!fe_try(&t)) {
    c->problem = fe_error_text(t.err);
    return;
  }
  char *text = chain_program(c->n);
  ParseResult pr = fe_parse_program("<chain>", text, strlen(text));
  if (pr.nerrors) fe_raise(pr.errors[0]);
  Def *f = fe_check_def(fe_env_new(), pr.items[0]);
  int wrt[2] = {0, 1};
  double t0 = now_ms();
  Def *g = rev_grad(f, wrt, 2, c->path == 0 ? REV_UNF : REV_DIRECT);
  double t1 = now_ms();
  OptOptions oo = options();
  Def *o = opt_optimize_def(g, &oo);
  c->ms_derive = t1 - t0;
  c->ms_opt = now_ms() - t1;
  char *bad = lemma_5_3(o->body);
  if (bad) c->problem = bad;
  Value args[2] = {val_real(0.5), val_real(0.5)};
  if (!c->problem && !tl_same_optimized(cpu_call(g, args), cpu_call(o, args))) c->problem = "values differ";
  fe_untry(&t);
}

/* A long straight-line program on both paths: no lambda left, values
   kept. (Its timings are a benchmark, printed with UNA_PE_TIMES=1, not a
   test: the direct path's gradient is 2.5 times larger, so it gets a
   shorter chain to keep make check fast.) */
START_TEST(long_chain) {
  for (int path = 0; path < 2; path++) {
    Chain c = {path == 0 ? 16000 : 4000, path, 0, 0, NULL};
    tl_on_stack((size_t)1 << 30, run_chain, &c);
    ck_assert_msg(c.problem == NULL, "path %d: %s", path, c.problem);
    if (getenv("UNA_PE_TIMES")) {
      int sizes[] = {1000, 2000, 4000, 8000, 16000};
      for (int i = 0; i < 5; i++) {
        Chain d = {sizes[i], path, 0, 0, NULL};
        tl_on_stack((size_t)1 << 30, run_chain, &d);
        fprintf(stderr, "path %s n %5d derive %8.1f ms optimize %8.1f ms %s\n", path ? "direct" : "unf", d.n,
                d.ms_derive, d.ms_opt, d.problem ? d.problem : "");
      }
    }
  }
}
END_TEST

Suite *suite_partial_eval(void) {
  Suite *s = suite_create("partial_eval");
  TCase *tc = tcase_create("partial_eval");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, corpus_gradients, 0, NCORPUS);
  tcase_add_test(tc, prelude_functions);
  tcase_add_test(tc, random_programs);
  tcase_add_test(tc, example_1_1);
  tcase_add_test(tc, prod_dot);
  tcase_add_test(tc, big_tuple_map_split);
  tcase_add_test(tc, tuple_map_over_count_split);
  tcase_add_test(tc, large_call_in_map_inlined);
  tcase_add_test(tc, pass_forward);
  tcase_add_test(tc, pass_letnorm);
  tcase_add_test(tc, pass_tuples);
  tcase_add_test(tc, pass_dce);
  tcase_add_test(tc, pass_beta);
  tcase_add_test(tc, dump_after);
  tcase_add_test(tc, one_round);
  tcase_add_test(tc, copy_made_by_a_rule);
  tcase_add_test(tc, check_passes_names_the_pass);
  tcase_add_test(tc, long_chain);
  suite_add_tcase(s, tc);
  return s;
}
