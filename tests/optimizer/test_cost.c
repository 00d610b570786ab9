/* test_cost.c: the cost model (optimizer/cost.h, backend/cost_meter.h):
   exact costs of small programs counted by hand from the rules, the
   meter's determinism (same counts on every run, whatever the fast paths;
   metering never changes a value; an error leaves the meter off), NAO,
   and the cheap gradient principle on the gradient corpus of
   test_gradcheck.c and on random programs (gen.h), at the points where the
   harness checks them. Theorem 5.4 (Cost(∇e) <= 4 * 3^NAO(e) * Cost(e))
   is stated after partial evaluation: optimized gradients are held to it
   with the size of the arguments added to Cost(e) (OPT_K below says why),
   the unoptimized gradients of both paths (rev_grad) to the same form
   with the factor UNOPT_K, and their ratio must not grow with the program
   or the arrays (test_linear).

   UNA_COST_REPORT=1 prints the ratios Cost(∇e) / Cost(e) (median, worst,
   where) and the count over theorem 5.4's bare bound;
   UNA_COST_PROGRAMS=N sets the number of random programs (300). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../backend/array_ops.h"
#include "../../backend/metered.h"
#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/ir/term_print.h"
#include "../../optimizer/cost.h"
#include "../../optimizer/program.h"
#include "../reverse/gen.h"
#include "../reverse/corpus.h"
#include "../reverse/gradcheck.h"
#include "../suites.h"
#include "../testlib.h"

static CpuCost cost(unsigned long long m, unsigned long long a, unsigned long long mu,
                    unsigned long long n) {
  CpuCost c = {m, a, mu, n};
  return c;
}

static bool cost_eq(CpuCost a, CpuCost b) {
  return a.moves == b.moves && a.adds == b.adds && a.mults == b.mults && a.nlops == b.nlops;
}

/* The cost of evaluating the expression text in tl_session (unoptimized:
   tl_check does not run the optimizer). */
static CpuCost cost_of(const char *text, Value *v) {
  Def *d = tl_check(text);
  CpuCost c;
  FeTry t;
  if (fe_try(&t)) {
    Value r = cpu_metered_call(d, NULL, &c);
    fe_untry(&t);
    if (v) *v = r;
    return c;
  }
  ck_abort_msg("%s: %s", text, fe_error_text(t.err));
  return c;
}

/* ---- exact costs, counted by hand ---- */

typedef struct Exact {
  const char *text;
  CpuCost want;
} Exact;

static const Exact exact[] = {
    /* c, c, + */
    {"1 + 2", {5, 1, 0, 0}},
    /* let: 1, rhs 1, x, x, * */
    {"let x = 2 in x * x", {7, 0, 1, 0}},
    {"sin 0.5", {3, 0, 0, 1}},
    {"let x = 2 in -x", {5, 1, 0, 0}},
    {"let x = 2 in exp (log x)", {7, 0, 0, 2}},
    /* let 1, 2 1; x / 3: 5 moves, 1 mult; (max x 1) ^ 2: 5 + 1 + 3 moves, 2 nlops; -: 3 moves, 1 add */
    {"let x = 2 in x / 3 - max x 1 ^ 2", {19, 1, 1, 2}},
    /* the tuple is free, the projection 1 */
    {"(1, 2).2", {3, 0, 0, 0}},
    {"fst (1, 2)", {3, 0, 0, 0}},
    /* let-tuple 2, pair 2, a + b 5 */
    {"let (a, b) = (1, 2) in a + b", {9, 1, 0, 0}},
    /* if 1, 1 < 2 (5 moves, 1 add), the branch taken 1 */
    {"if 1 < 2 then 3 else sin 4", {7, 1, 0, 0}},
    {"if 1 == 2 then sin 3 else 4", {7, 1, 0, 0}},
    {"true && false", {5, 0, 0, 0}},
    {"false && true", {4, 0, 0, 0}}, /* short-circuit */
    {"true || false", {4, 0, 0, 0}},
    {"!true", {3, 0, 0, 0}},
    {"[1, 2, 3]", {3, 0, 0, 0}},
    /* literal 3; 3 (1 + (5 moves, 1 mult)) */
    {"map (x. x * 2) [1, 2, 3]", {21, 0, 3, 0}},
    /* the branch of each element: 1 -> else x (8 moves, 1 add), 2, 3 ->
       then x * x (12 moves, 1 add, 1 mult) */
    {"map (x. if x > 1 then x * x else x) [1, 2, 3]", {35, 3, 2, 0}},
    /* literals 4; 2 (2 + 5 moves, 1 add) */
    {"map2 (+) [1, 2] [3, 4]", {18, 2, 0, 0}},
    /* unit 1, literal 3; 3 (2 + 5, 1 add) */
    {"reduce (+) 0 [1, 2, 3]", {25, 3, 0, 0}},
    {"reduce (*) 1 []", {1, 0, 0, 0}},
    {"reduce (max) 0 [1, 2]", {17, 0, 0, 2}},
    /* unit 1, literal 2; 2 (2 + (9 moves, 1 add, 1 mult)) */
    {"foldl (acc, c. acc * 2 + c) 0 [1, 2]", {25, 2, 2, 0}},
    /* unit 1, literal 2; 2 (3 + 5, 1 add) */
    {"scanl (+) 0 [1, 2]", {19, 2, 0, 0}},
    {"scanr (+) 0 [1, 2]", {19, 2, 0, 0}},
    {"shift1L [1, 2, 3]", {6, 0, 0, 0}},
    {"shift1R [1, 2, 3]", {6, 0, 0, 0}},
    {"length [1, 2]", {3, 0, 0, 0}},
    {"iota 4", {5, 0, 0, 0}},
    {"replicate 3 true", {5, 0, 0, 0}},
    {"rand 3 7", {5, 0, 0, 3}},
    /* more than the 256 reduce lanes, kernel and monoid bodies: unit 1,
       iota 301, map 300 (1 + 5 moves, 1 mult), reduce 300 (2 + 5, 1 add) */
    {"reduce (a, b. a + b) 0 (map (x. x * 2) (iota 300))", {4202, 300, 300, 0}},
    /* sum binds 1; iota 1 + 1000; map 1000 (1 + 5); reduce (+) 0 a: 1 + 1 + 1000 (2 + 5) */
    {"sum (map (x. x * x) (iota 1000))", {14004, 1000, 1000, 0}},
    /* a call binds its parameter: sum a = reduce (+) 0 a: 1 + (1 + 1 + 3 (2 + 5, 1 add)) + literal 3 */
    {"sum [1, 2, 3]", {27, 3, 0, 0}},
};

#define NEXACT ((int)(sizeof exact / sizeof exact[0]))

START_TEST(test_exact) {
  const Exact *e = &exact[_i];
  CpuCost got = cost_of(e->text, NULL);
  ck_assert_msg(cost_eq(got, e->want), "%s: cost %s, expected %s", e->text, opt_cost_str(got),
                opt_cost_str(e->want));
}
END_TEST

/* A user function and a global. */
START_TEST(test_exact_defs) {
  tl_run("def g (a: R) (b: R) : R = a * b\nlet k = 5");
  /* binds 2, args 2, body 5 moves 1 mult */
  ck_assert(cost_eq(cost_of("g 2 3", NULL), cost(9, 0, 1, 0)));
  ck_assert(cost_eq(cost_of("k + 1", NULL), cost(5, 1, 0, 0)));
}
END_TEST

/* A closure and its application (target terms): let K = fun (a, b) ->
   a * b in K (2, 3): let 1, closure 1, application: binds 2, K 1, args 2,
   body 5 moves and 1 mult: 12 moves. */
START_TEST(test_exact_closure) {
  Span s = fe_span("t", 1, 1);
  Sym *a = fe_mk_sym("a", fe_ty_real(), s), *b = fe_mk_sym("b", fe_ty_real(), s);
  Sym *ps[2] = {a, b};
  Term *lam = fe_mk_lam(s, 2, ps, fe_mk_mul(s, fe_mk_var(s, a), fe_mk_var(s, b)));
  Sym *k = fe_mk_sym("K", lam->type, s);
  Term *args[2] = {fe_mk_num(s, 2), fe_mk_num(s, 3)};
  Term *body = fe_mk_let(s, k, lam, fe_mk_app(s, fe_mk_var(s, k), 2, args));
  Def *d = fe_mk_def("t", s, 0, NULL, body);
  CpuCost c;
  Value v = cpu_metered_call(d, NULL, &c);
  ck_assert(v.kind == V_REAL && v.u.r == 6);
  ck_assert_msg(cost_eq(c, cost(12, 0, 1, 0)), "cost %s", opt_cost_str(c));
}
END_TEST

/* ---- determinism ---- */

static const char *const det_programs[] = {
    "sum (map (x. if x > 100 then sin x else x * x) (iota 700))",
    "reduce (a, b. a * b + 0.5) 1 (map (x. x / 700) (iota 700))",
    "prod (map2 (a, b. max a b) (rand 600 3) (rand 600 4))",
    "foldl (acc, c. acc * 0.5 + c) 0 (scanl (+) 0 (rand 500 1))",
    "sum (shift1L (scanr (*) 1 (map (x. 1 + x / 1000) (iota 999))))",
    "let v = rand 300 9 in (grad logsumexp v, dot v v)",
};

#define NDET ((int)(sizeof det_programs / sizeof det_programs[0]))

/* The same counts on every run and whatever fast paths are enabled, and
   the same value, to the bit, as an unmetered run. */
START_TEST(test_deterministic) {
  const char *text = det_programs[_i];
  Def *d = tl_expand(tl_check(text));
  Value plain = cpu_call(d, NULL);
  CpuCost c1, c2, c3;
  Value v1 = cpu_metered_call(d, NULL, &c1);
  Value v2 = cpu_metered_call(d, NULL, &c2);
  Value v3 = cpu_metered_call(d, NULL, &c3);
  Exec generic = tl_exec_paths(false, false);
  Value slow = cpu_call_in(&generic, d, NULL);
  ck_assert_msg(cost_eq(c1, c2) && cost_eq(c1, c3), "%s: %s, %s, %s", text, opt_cost_str(c1),
                opt_cost_str(c2), opt_cost_str(c3));
  ck_assert_msg(tl_same_bits(plain, v1, true), "%s: metering changed the value", text);
  ck_assert(tl_same_bits(plain, v2, true) && tl_same_bits(plain, v3, true));
  ck_assert(tl_same_bits(plain, slow, true));
  ck_assert(opt_cost_total(c1) > 0);
}
END_TEST

/* An error while metering stops the meter and is raised again. */
START_TEST(test_error_stops_meter) {
  Def *d = tl_check("sum (map2 (+) [1] (iota 2))");
  CpuCost c;
  FeTry t;
  if (fe_try(&t)) {
    cpu_metered_call(d, NULL, &c);
    fe_untry(&t);
    ck_abort_msg("no error");
  }
  ck_assert_str_eq(t.err.msg, "map2: lengths 1 and 2 differ");
  /* what ran before the error: the call of sum binds 1, [1] 1, iota 2 3 */
  ck_assert_msg(cost_eq(c, cost(5, 0, 0, 0)), "cost %s", opt_cost_str(c));
  /* and the meter works again afterwards */
  ck_assert(cost_eq(cost_of("1 + 2", NULL), cost(5, 1, 0, 0)));
}
END_TEST

/* ---- NAO ---- */

typedef struct NaoCase {
  const char *text;
  int want;
} NaoCase;

static const NaoCase naos[] = {
    {"1 + 2", 0},
    {"let x = 2 in (x, sin x).1", 0},
    {"length (iota 3) + length (shift1L (replicate 2 1))", 0},
    {"map (x. x) [1]", 1},
    {"sum (map (x. x) [1])", 1},
    {"map (x. sum (map (y. x * y) [1, 2])) [3]", 2},
    /* nesting, not sequence: the map is an argument of the reduce */
    {"map2 (a, b. a + reduce (+) 0 (map (y. y * b) [1])) [1] [2]", 2},
    {"map2 (a, b. a + reduce (x, y. x + sum (map (z. z * y) [b])) 0 [1]) [1] [2]", 3},
    {"if 1 < 2 then 0 else foldl (a, c. a + c) 0 (scanl (+) 0 [1])", 1},
    {"reduce (a, b. a + b) (sum [1]) (map (x. x) [2])", 1},
    /* through calls: dot = sum (map2 ...) */
    {"dot [1] [2]", 1},
    {"map (x. dot [x] [x]) [1]", 2},
};

#define NNAO ((int)(sizeof naos / sizeof naos[0]))

START_TEST(test_nao) {
  const NaoCase *c = &naos[_i];
  Def *d = tl_check(c->text);
  ck_assert_msg(opt_nao_def(d) == c->want, "%s: NAO %d, expected %d", c->text, opt_nao_def(d), c->want);
  ck_assert_int_eq(opt_nao(d->body), c->want);
}
END_TEST

START_TEST(test_helpers) {
  CpuCost a = cost(1, 2, 3, 4), b = cost(10, 20, 30, 40);
  ck_assert(cost_eq(opt_cost_add(a, b), cost(11, 22, 33, 44)));
  ck_assert_int_eq((int)opt_cost_total(a), 10);
  ck_assert_str_eq(opt_cost_str(a), "(1, 2, 3, 4)");
  ck_assert(opt_cheap_gradient_factor(0) == 4 && opt_cheap_gradient_factor(2) == 36);
  ck_assert(opt_cost_within(cost(40, 0, 0, 0), a, 0));
  ck_assert(!opt_cost_within(cost(41, 0, 0, 0), a, 0));
  ck_assert(opt_cost_within(cost(120, 0, 0, 0), a, 1));
}
END_TEST

/* ---- theorem 5.4 ---- */

#define NCORPUS gc_ncorpus

/* How a gradient to measure is derived: the unoptimized gradients of the
   two paths (rev_grad) and the optimized gradient of the UNF path. */
typedef struct Deriv {
  const char *name;
  RevPath path;
  bool optimized;
} Deriv;

static const Deriv derivs[] = {
    {"UNF", REV_UNF, false},
    {"direct", REV_DIRECT, false},
    {"UNF optimized", REV_UNF, true},
};

#define NDERIVS ((int)(sizeof derivs / sizeof derivs[0]))

/* The bounds checked, with |Γ| the size of the arguments (one per
   parameter plus one per real in them): every gradient must at least
   write its result, one value per parameter and per real, which a primal
   that ignores its inputs (a constant function) never pays for, so the
   bare Cost(∇e) <= 4 3^NAO(e) Cost(e) cannot hold for it (f a = -1.25:
   Cost(e) 1, the three zero gradients of its parameters 9).
   - Optimized gradients (the programs theorem 5.4 is about, after partial
     evaluation): Cost(∇e) <= OPT_K 3^NAO(e) (Cost(e) + |Γ|) with OPT_K
     theorem 5.4's 4.
   - Unoptimized gradients (rev_grad): the same with UNOPT_K. Before
     partial evaluation each gradient carries a constant overhead (the
     continuations Y and K, their applications, the zero seeds, one per
     real) that a primal of a few moves cannot pay four times over
     (example 1.1: Cost(e) 15 against 88).
   The bare inequality of the theorem is counted and reported too
   (UNA_COST_REPORT=1). */
#define OPT_K 4.0
#define UNOPT_K 16.0

/* The ratios Cost(∇e) / Cost(e) seen for one derivation. */
typedef struct Ratios {
  double *r;
  int n, cap;
  double worst;         /* the largest ratio */
  const char *worst_at; /* its program and point */
  double worst_k;       /* the largest Cost(∇e) / (3^NAO (Cost(e) + |Γ| + 1)) */
  const char *k_at;
  int over_theorem; /* measurements over 4 * 3^NAO * Cost(e) */
  const char *first_over_theorem;
  int over_bound; /* unoptimized: over the UNOPT_K bound */
  const char *first_over_bound;
} Ratios;

typedef struct Stats {
  Ratios d[NDERIVS];
  long chars[NDERIVS], lines[NDERIVS]; /* printed size of the gradients */
  int ngrads;
  int skipped; /* points where f raised */
} Stats;

static void ratios_add(Ratios *rs, double r, double k, const char *what) {
  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? 2 * rs->cap : 256;
    double *grown = NEW_ARRAY(double, rs->cap);
    for (int i = 0; i < rs->n; i++) grown[i] = rs->r[i];
    rs->r = grown;
  }
  rs->r[rs->n++] = r;
  if (r > rs->worst) {
    rs->worst = r;
    rs->worst_at = what;
  }
  if (k > rs->worst_k) {
    rs->worst_k = k;
    rs->k_at = what;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double ratios_median(Ratios *rs) {
  if (rs->n == 0) return 0;
  qsort(rs->r, (size_t)rs->n, sizeof(double), cmp_double);
  return rs->n % 2 ? rs->r[rs->n / 2] : 0.5 * (rs->r[rs->n / 2 - 1] + rs->r[rs->n / 2]);
}

/* Runs d on args under the meter; false when it raises. */
static bool metered(const Def *d, const Value *args, CpuCost *c) {
  FeTry t;
  if (fe_try(&t)) {
    cpu_metered_call(d, args, c);
    fe_untry(&t);
    return true;
  }
  return false;
}


/* Measures Cost(∇f) against Cost(f) for program src at the harness's
   points (gradcheck.c: seed, lengths 0, 1, 3, 7, npoints each). */
static void measure(Stats *st, const char *name, const char *src, const char *wrt_names, uint64_t seed,
                    int npoints) {
  char *err = NULL;
  GcProgram *p = gc_load("<cost>", src, true, "f", &err);
  ck_assert_msg(p != NULL, "%s: %s", name, err);
  int *wrt = NEW_ARRAY(int, p->f->nparams + 1);
  int nwrt = gc_wrt(p, wrt_names, wrt);
  ck_assert_msg(nwrt > 0, "%s: no parameter to differentiate", name);
  int nao = opt_nao_def(p->f);
  Def *g[NDERIVS];
  for (int k = 0; k < NDERIVS; k++) {
    g[k] = NULL;
    g[k] = rev_grad(p->f, wrt, nwrt, derivs[k].path);
    if (derivs[k].optimized) {
      OptOptions o = {0};
      o.enabled = true;
      o.check_passes = true; /* the type checker after every pass */
      g[k] = opt_optimize_program(g[k], &o);
    }
  }
  st->ngrads++;
  for (int k = 0; k < NDERIVS && getenv("UNA_COST_REPORT"); k++) {
    const char *text = fe_def_str_opts(g[k], FE_PRINT_MULTILINE);
    st->chars[k] += (long)strlen(text);
    for (const char *q = text; *q; q++) st->lines[k] += *q == '\n';
    st->lines[k]++;
  }
  static const int lengths[] = {0, 1, 3, 7};
  for (int li = 0; li < 4; li++)
    for (int pt = 0; pt < npoints; pt++) {
      GenRng r = gen_rng(seed * 1000003u + (uint64_t)li * 7919u + (uint64_t)pt + 1);
      Value *args = NEW_ARRAY(Value, p->f->nparams + 1);
      int nreals = 0;
      for (int i = 0; i < p->f->nparams; i++) {
        args[i] = gc_random_value(&r, p->f->params[i]->type, (size_t)lengths[li], -1.5, 1.5);
        nreals += tl_nreals(args[i]);
      }
      CpuCost cf;
      if (!metered(p->f, args, &cf)) {
        st->skipped++;
        continue;
      }
      for (int k = 0; k < NDERIVS; k++) {
        if (!g[k]) continue;
        Ratios *rs = &st->d[k];
        CpuCost cg;
        const char *what = una_sprintf("%s (%s, length %d, point %d, NAO %d: Cost(e) %s", name, derivs[k].name,
                                       lengths[li], pt, nao, opt_cost_str(cf));
        /* the gradient may not raise where f does not */
        ck_assert_msg(metered(g[k], args, &cg), "%s): the gradient raised", what);
        what = una_sprintf("%s, Cost(grad) %s)", what, opt_cost_str(cg));
        double ratio = (double)opt_cost_total(cg) / (double)opt_cost_total(cf);
        double lin = (double)opt_cost_total(cf) + nreals + p->f->nparams;
        double kk = (double)opt_cost_total(cg) / (pow(3, nao) * lin);
        ratios_add(rs, ratio, kk, what);
        if (!opt_cost_within(cg, cf, nao) && rs->over_theorem++ == 0) rs->first_over_theorem = what;
        if (kk > (derivs[k].optimized ? OPT_K : UNOPT_K) && rs->over_bound++ == 0) rs->first_over_bound = what;
      }
    }
}

static void report(const char *title, Stats *st) {
  if (!getenv("UNA_COST_REPORT")) return;
  for (int k = 0; k < NDERIVS; k++) {
    Ratios *rs = &st->d[k];
    if (rs->n == 0) continue;
    printf("%s, %s: %d points (%d skipped): Cost(grad)/Cost(e) median %.3g, worst %.3g at %s;\n"
           "  worst Cost(grad)/(3^NAO (Cost(e)+|G|)) %.3g at %s;\n"
           "  %d over theorem 5.4's 4*3^NAO*Cost(e)%s%s\n",
           title, derivs[k].name, rs->n, st->skipped, ratios_median(rs), rs->worst, rs->worst_at, rs->worst_k,
           rs->k_at, rs->over_theorem, rs->over_theorem ? ", first: " : "",
           rs->over_theorem ? rs->first_over_theorem : "");
    printf("  printed gradients: %.0f characters, %.1f lines on average over %d programs\n",
           (double)st->chars[k] / st->ngrads, (double)st->lines[k] / st->ngrads, st->ngrads);
  }
  fflush(stdout);
}

static void check_stats(Stats *st, int min_points) {
  for (int k = 0; k < NDERIVS; k++) {
    Ratios *rs = &st->d[k];
    ck_assert_int_ge(rs->n, min_points);
    ck_assert_msg(rs->over_bound == 0, "%s: %d over the bound %g 3^NAO (Cost(e) + |G|), first: %s",
                  derivs[k].name, rs->over_bound, derivs[k].optimized ? OPT_K : UNOPT_K, rs->first_over_bound);
  }
}

START_TEST(test_theorem_corpus) {
  Stats st = {0};
  int n = 0;
  for (int i = 0; i < NCORPUS; i++) {
    if (gc_corpus[i].unf_only) continue; /* the direct path is measured too */
    measure(&st, gc_corpus[i].name, gc_corpus[i].src, gc_corpus[i].wrt, 1000 + (uint64_t)i, 2);
    n++;
  }
  report("corpus", &st);
  check_stats(&st, 8 * n);
}
END_TEST

#define COST_RANDOM_BASE 20261121u
#define COST_RANDOM_PROGRAMS 300

START_TEST(test_theorem_random) {
  Stats st = {0};
  GenOptions go = gen_default_options();
  const char *n_env = getenv("UNA_COST_PROGRAMS");
  int n = n_env && *n_env ? atoi(n_env) : COST_RANDOM_PROGRAMS;
  for (int i = 0; i < n; i++) {
    uint64_t seed = COST_RANDOM_BASE + (uint64_t)i;
    GenProgram p = gen_program(seed, &go);
    measure(&st, una_sprintf("random program %llu", (unsigned long long)seed), p.text, NULL, seed, 1);
  }
  report("random", &st);
  check_stats(&st, 3 * n);
}
END_TEST

/* Linear, not quadratic: the ratio does not grow with the length of a
   straight-line program or of the arrays. In chain(n, true) the value of
   let i is used again at let 2i, so about n/2 values are live at once; in
   chain(n, false) a few. The direct path's continuations take the live
   variables, so each of its steps moves them all: O(n * live), quadratic
   for chain(n, true) (UNF^-1 applies those continuations at compile time,
   so the UNF path stays linear); partial evaluation removes the moves. */
static char *chain(int n, bool far) {
  char *s = una_strdup("def f (x: R) (y: R) : R =\n  let w0 = x * y in\n");
  for (int i = 1; i < n; i++)
    s = una_sprintf("%s  let w%d = %s in\n", s, i,
                    i % 3 == 0 ? una_sprintf("sin w%d + x", i - 1)
                    : i % 3 == 1 ? una_sprintf("w%d * w%d", i - 1, i - 1)
                                 : una_sprintf("w%d * y - w%d", i - 1, far ? i / 2 : i - 2));
  return una_sprintf("%s  w%d", s, n - 1);
}

/* The gradient/primal cost ratio at arrays of length len; optimized: of
   the optimized gradient (a fold's backward loop adds each step's read in
   place only once the optimizer has turned `acc +^ (one read scattered
   into zeros)` into the scatter into acc). */
static double ratio_at_opt(const char *src, int len, RevPath path, bool optimized) {
  char *err = NULL;
  GcProgram *p = gc_load("<cost>", src, true, "f", &err);
  ck_assert_msg(p != NULL, "%s", err);
  int wrt[8];
  int nwrt = gc_wrt(p, NULL, wrt);
  Def *g = rev_grad(p->f, wrt, nwrt, path);
  if (optimized) {
    OptOptions o = {0};
    o.enabled = true;
    g = opt_optimize_program(g, &o);
  }
  GenRng r = gen_rng(7);
  Value *args = NEW_ARRAY(Value, p->f->nparams + 1);
  for (int i = 0; i < p->f->nparams; i++)
    args[i] = gc_random_value(&r, p->f->params[i]->type, (size_t)len, 0.5, 1.0);
  CpuCost cf, cg;
  ck_assert(metered(p->f, args, &cf) && metered(g, args, &cg));
  if (getenv("UNA_COST_REPORT"))
    printf("linear: %s path, length %d: Cost(e) %s, Cost(grad) %s\n", path == REV_UNF ? "UNF" : "direct", len,
           opt_cost_str(cf), opt_cost_str(cg));
  return (double)opt_cost_total(cg) / (double)opt_cost_total(cf);
}

static double ratio_at(const char *src, int len, RevPath path) { return ratio_at_opt(src, len, path, false); }

/* The ratio for f's one parameter given as Una text (optimized: of the
   optimized gradient, as ratio_at_opt). */
static double ratio_of_opt(const char *src, const char *arg, bool optimized) {
  char *err = NULL;
  GcProgram *p = gc_load("<cost>", src, true, "f", &err);
  ck_assert_msg(p != NULL, "%s", err);
  int wrt[8];
  int nwrt = gc_wrt(p, NULL, wrt);
  Def *g = rev_grad(p->f, wrt, nwrt, REV_UNF);
  if (optimized) {
    OptOptions o = {0};
    o.enabled = true;
    g = opt_optimize_program(g, &o);
  }
  Value args[1] = {tl_ev(arg)};
  CpuCost cf, cg;
  ck_assert(metered(p->f, args, &cf) && metered(g, args, &cg));
  return (double)opt_cost_total(cg) / (double)opt_cost_total(cf);
}

static double ratio_of(const char *src, const char *arg) { return ratio_of_opt(src, arg, false); }

START_TEST(test_linear) {
  for (int k = 0; k < 2; k++) {
    RevPath path = k == 0 ? REV_UNF : REV_DIRECT;
    for (int far = 0; far < 2; far++) {
      if (far && path == REV_DIRECT) continue; /* O(n * live), see above */
      double r100 = ratio_at(chain(100, far), 0, path), r1600 = ratio_at(chain(1600, far), 0, path);
      ck_assert_msg(r1600 <= r100 * 1.05, "straight-line (%s): ratio %g at 100 lets, %g at 1600",
                    far ? "far" : "near", r100, r1600);
    }
    const char *arr = "def f (s: R) (v: [R]) : R = prod (map (x. s * x) v) + reduce (a, b. a + b * s) 0 v";
    double a10 = ratio_at(arr, 10, path), a10k = ratio_at(arr, 10000, path);
    ck_assert_msg(a10k <= a10 * 1.05, "arrays: ratio %g at length 10, %g at 10000", a10, a10k);
  }
  /* reads of a free array under if, && and || in a map (the UNF path:
     the direct path has no indexing): scattered where their guards hold,
     not one whole-array cotangent per element */
  const char *guarded = "def f (a: [R]) : R =\n"
                        "  sum (map (i. if i + 1 < length a && a[i + 1] > 0.7 then a[i + 1] * a[i]\n"
                        "              else if i > 2 || a[i] < 0.6 then a[max (i - 1) 0] else a[i]) (iota (length a)))";
  double g10 = ratio_at(guarded, 10, REV_UNF), g2k = ratio_at(guarded, 2000, REV_UNF);
  ck_assert_msg(g2k <= g10 * 1.05, "guarded reads: ratio %g at length 10, %g at 2000", g10, g2k);
  /* the same for a matrix's elements (its rows laid end to end) */
  const char *mat = "def f (m: [[R]]) : R =\n"
                    "  sum (map (i. if i > 0 && m[i, 1] > 0.5 then m[i, 0] * m[i - 1, 1] else m[0, 0]) (iota (length m)))";
  double m10 = ratio_of(mat, "map (i. [sin i, cos i]) (iota 10)");
  double m2k = ratio_of(mat, "map (i. [sin i, cos i]) (iota 2000)");
  ck_assert_msg(m2k <= m10 * 1.05, "guarded matrix reads: ratio %g at 10 rows, %g at 2000", m10, m2k);
  /* rows read in an inner map and in a loop (a matrix-vector product
     written with indices): each row read once per element at the top of
     the map's body, its cotangent added to its row (hoist_rows.h), not one
     whole-matrix cotangent per element */
  const char *mv = "def f (m: [[R]]) : R =\n"
                   "  sum (map (i. sum (map (j. m[i, j] * m[0, j]) (iota (length m[0])))) (iota (length m)))";
  const char *mvl = "def f (m: [[R]]) : R =\n"
                    "  sum (map (i. loop acc = 0 for j < length m[0] do acc + m[i, j] * m[0, j]) (iota (length m)))";
  const char *sq10 = "map (i. map (j. sin (i * 7 + j)) (iota 10)) (iota 10)";
  const char *sq200 = "map (i. map (j. sin (i * 7 + j)) (iota 200)) (iota 200)";
  double v10 = ratio_of(mv, sq10), v200 = ratio_of(mv, sq200);
  ck_assert_msg(v200 <= v10 * 1.05, "rows read in an inner map: ratio %g at 10 x 10, %g at 200 x 200", v10, v200);
  double l10 = ratio_of_opt(mvl, sq10, true), l200 = ratio_of_opt(mvl, sq200, true);
  ck_assert_msg(l200 <= l10 * 1.05, "rows read in a loop: ratio %g at 10 x 10, %g at 200 x 200", l10, l200);
  /* windows of a vector read in a loop or map of any count (a
     convolution): one window read per element, its cotangent added from
     its start (hoist_rows.h), not one whole-array cotangent per element */
  const char *conv = "def f (a: [R]) : R =\n"
                     "  sum (map (i. loop acc = 0 for j < length a - length a + 3 do acc + a[i + j] * a[j]) (iota (length a - 3)))";
  const char *convm = "def f (a: [R]) : R =\n"
                      "  sum (map (i. sum (map (j. a[i + j] * a[j]) (iota (length a - length a + 3)))) (iota (length a - 3)))";
  double w10 = ratio_at_opt(conv, 10, REV_UNF, true), w2k = ratio_at_opt(conv, 2000, REV_UNF, true);
  ck_assert_msg(w2k <= w10 * 1.05, "windows read in a loop: ratio %g at length 10, %g at 2000", w10, w2k);
  double x10 = ratio_at_opt(convm, 10, REV_UNF, true), x2k = ratio_at_opt(convm, 2000, REV_UNF, true);
  ck_assert_msg(x2k <= x10 * 1.05, "windows read in an inner map: ratio %g at length 10, %g at 2000", x10, x2k);
  /* reads in a for loop of a few trips in a map (a stencil) */
  const char *sten = "def f (a: [R]) : R =\n"
                     "  sum (map (i. loop acc = 0 for j < 3 do acc + a[i + j] * a[i + j]) (iota (length a - 2)))";
  double s10 = ratio_at(sten, 10, REV_UNF), s2k = ratio_at(sten, 2000, REV_UNF);
  ck_assert_msg(s2k <= s10 * 1.05, "reads in a small loop: ratio %g at length 10, %g at 2000", s10, s2k);
  const char *inner = "def f (a: [R]) : R =\n"
                      "  sum (map (i. sum (map (j. a[i + j] * a[i + j]) (iota 3))) (iota (length a - 2)))";
  double i10 = ratio_at(inner, 10, REV_UNF), i2k = ratio_at(inner, 2000, REV_UNF);
  ck_assert_msg(i2k <= i10 * 1.05, "reads in a small inner map: ratio %g at length 10, %g at 2000", i10, i2k);
  /* a scanl over indices reading a free array: its backward sweep a loop
     that adds each step's read in place */
  const char *scan = "def f (a: [R]) : R = sum (scanl (acc, i. acc * 0.5 + a[i] * a[i]) 0 (iota (length a)))";
  double c10 = ratio_at_opt(scan, 10, REV_UNF, true), c2k = ratio_at_opt(scan, 2000, REV_UNF, true);
  ck_assert_msg(c2k <= c10 * 1.05, "a scanl's reads: ratio %g at length 10, %g at 2000", c10, c2k);
  const char *scanr = "def f (a: [R]) : R = sum (scanr (i, acc. acc * 0.5 + a[i] * a[i]) 0 (iota (length a)))";
  double r10 = ratio_at_opt(scanr, 10, REV_UNF, true), r2k = ratio_at_opt(scanr, 2000, REV_UNF, true);
  ck_assert_msg(r2k <= r10 * 1.05, "a scanr's reads: ratio %g at length 10, %g at 2000", r10, r2k);
  const char *fold = "def f (a: [R]) : R = foldl (acc, i. acc * 0.5 + a[i] * a[i]) 0 (iota (length a))";
  double f10 = ratio_at_opt(fold, 10, REV_UNF, true), f2k = ratio_at_opt(fold, 2000, REV_UNF, true);
  ck_assert_msg(f2k <= f10 * 1.05, "a foldl's reads: ratio %g at length 10, %g at 2000", f10, f2k);
}
END_TEST

Suite *suite_cost(void) {
  Suite *s = suite_create("cost");
  TCase *tc = tcase_create("cost");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_exact, 0, NEXACT);
  tcase_add_test(tc, test_exact_defs);
  tcase_add_test(tc, test_exact_closure);
  tcase_add_loop_test(tc, test_deterministic, 0, NDET);
  tcase_add_test(tc, test_error_stops_meter);
  tcase_add_loop_test(tc, test_nao, 0, NNAO);
  tcase_add_test(tc, test_helpers);
  tcase_add_test(tc, test_theorem_corpus);
  tcase_add_test(tc, test_theorem_random);
  tcase_add_test(tc, test_linear);
  suite_add_tcase(s, tc);
  return s;
}
