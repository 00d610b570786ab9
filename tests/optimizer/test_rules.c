/* test_rules.c: the figure 12 passes (algebra, arrays, fusion, cse) on
   hand-written programs and on derived gradients: each rule fires on its
   pattern, leaves near misses alone, keeps values bit for bit and the
   output re-checks (fe_retype). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/ir/retype.h"
#include "../../frontend/ir/subst.h"
#include "../../frontend/ir/term_print.h"
#include "../../optimizer/passes.h"
#include "../../optimizer/outer_split.h"
#include "../../optimizer/program.h"
#include "../../reverse/reverse.h"
#include "../suites.h"
#include "../testlib.h"

typedef Term *(*PassFn)(const Term *);

/* The PE passes followed by ours, to a fixpoint (at most 20 rounds). */
static Term *all_passes(const Term *t) {
  static const PassFn ps[] = {opt_beta,    opt_forward, opt_letnorm, opt_tuples, opt_dce,
                              opt_algebra, opt_arrays,  opt_fusion,  opt_cse};
  Term *cur = (Term *)t;
  for (int r = 0; r < 20; r++) {
    Term *start = cur;
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) cur = ps[i](cur);
    if (cur == start) break;
  }
  return cur;
}

/* d with body b, slots assigned, re-checked. */
static Def *with_body(const Def *d, Term *b) {
  Def *r = fe_mk_def(d->name, d->span, d->nparams, d->params, b);
  fe_retype(r);
  return r;
}

static char *def_text(const Def *d) { return fe_def_str_opts(d, FE_PRINT_MULTILINE); }

/* Optimized gradient of the session's def name, printed. */
static Def *opt_grad(const char *name) {
  Def *f = tl_def(tl_session, name);
  int wrt[16], n = 0;
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i]->type->kind != TY_BOOL) wrt[n++] = i;
  Def *g = rev_grad(f, wrt, n, REV_UNF);
  return with_body(g, all_passes(fe_copy(g->body)));
}

/* The def name of the session, its body run through pass (once, and the
   whole list to a fixpoint when pass is NULL), re-checked. */
static Def *passed(const char *name, PassFn pass) {
  Def *f = tl_def(tl_session, name);
  /* a copy: fe_assign_slots sets the slots of the Syms it finds, and the
     passes share unchanged subterms with their input */
  Term *b = fe_copy(f->body);
  return with_body(f, pass ? pass(b) : all_passes(b));
}

/* The body of d printed on one line. */
static char *body_text(const Def *d) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  fe_term_print(m, d->body);
  fclose(m);
  return buf;
}

/* Values of f and g on the same arguments are bit for bit equal, or both
   raise the same error. */
static void same_on(const Def *f, const Def *g, Value *args) {
  Value a, b;
  char *volatile ea = NULL;
  char *volatile eb = NULL;
  FeTry tr;
  if (fe_try(&tr)) {
    a = cpu_call(f, args);
    fe_untry(&tr);
  } else {
    ea = fe_error_text(tr.err);
  }
  if (fe_try(&tr)) {
    b = cpu_call(g, args);
    fe_untry(&tr);
  } else {
    eb = fe_error_text(tr.err);
  }
  if (ea || eb) {
    ck_assert_msg(ea && eb && strcmp(ea, eb) == 0, "errors differ: %s / %s", ea ? ea : "-", eb ? eb : "-");
    return;
  }
  ck_assert_msg(tl_same_bits(a, b, false), "values differ for %s", f->name);
}

/* The error text of calling d on args (NULL: none). */
static char *error_of(const Def *d, Value *args) {
  FeTry tr;
  if (fe_try(&tr)) {
    cpu_call(d, args);
    fe_untry(&tr);
    return NULL;
  }
  return fe_error_text(tr.err);
}

/* A random array of n reals in [-2, 2), from seed. */
static Value rand_array(int n, unsigned *seed) {
  char buf[4096];
  int k = snprintf(buf, sizeof buf, "[");
  for (int i = 0; i < n; i++)
    k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%.17g", i ? ", " : "", 4.0 * rand_r(seed) / RAND_MAX - 2);
  snprintf(buf + k, sizeof buf - (size_t)k, "]");
  return n == 0 ? tl_ev("map (x. x) []") : tl_ev(buf);
}

static const char *const programs =
    "def ex (x1: R) (x2: R) (x3: R) = let w1 = x1 * x2 in let w2 = w1 * x1 in w2\n"
    "def p_ones (a: [R]) = map2 (x, y. x * y) a (map (z. 1) a)\n"
    "def p_zeros (a: [R]) = map2 (x, y. x + y) a (replicate (length a) 0)\n"
    "def p_id (a: [R]) = map (x. x) a\n"
    "def p_mulzero (a: [R]) = map2 (x, y. x * y) a (map (z. 0) a)\n"
    "def p_constzero (a: [R]) = map2 (x, y. x * y) (map (z. 2) a) (map (z. 0) a)\n"
    "def p_red1 (a: [R]) = reduce (x, y. x * y) 1 (map (z. 1) a)\n"
    "def p_red0 (a: [R]) = reduce (x, y. x + y) 0 (map (z. 0) a)\n"
    "def p_scan (a: [R]) = shift1R (scanl (x, y. x * y) 1 (map (z. 1) a))\n"
    "def p_snd (a: [R]) = let b = map (x. sin x) a in map2 (x, y. y) a b\n"
    "def p_snd_miss (a: [R]) (b: [R]) = map2 (x, y. y) a b\n"
    "def p_ones_miss (a: [R]) (b: [R]) = map2 (x, y. x * y) a (map (z. 1) b)\n"
    "def p_proj (a: [R]) (b: [R]) = let w = map2 (x, y. (y, x)) a b in map (t. t.1) w\n"
    "def p_fuse (a: [R]) = map (x. x * 2) (map (y. sin y) a)\n"
    "def p_fuse_twice (a: [R]) = let m = map (y. sin y) a in map2 (x, y. x + y) (map (x. x * 2) m) m\n"
    /* an array read twice by one map2 / map3: one parameter */
    "def p_dup2 (a: [R]) = map2 (x, y. x * y + x) a a\n"
    "def p_dup3 (a: [R]) = let b = map (x. x + 1) a in map3 (x, y, z. x * y - z) a b a\n"
    "def p_dup3_miss (a: [R]) (b: [R]) = map3 (x, y, z. x * y - z) a b a\n"
    /* the parameter kept is one the input never reads: a fresh one (the
       walker took x for unused and dropped it) */
    "def p_dup_unused (a: [R]) = let b = map (z. z + 1) a in map2 (p, q. p + q) (map2 (x, y. y * 2) a a) b\n"
    /* the stages of a Runge-Kutta step, each read by maps only: one map */
    "def p_rk (y: [R]) (h: R) =\n"
    "  let k1 = map (v. v * (1 - v)) y in\n"
    "  let k2 = map2 (v, k. let w = v + 0.5 * h * k in w * (1 - w)) y k1 in\n"
    "  let k3 = map2 (v, k. let w = v + h * k in w * (1 - w)) y k2 in\n"
    "  map3 (v, s, d. v + h / 6 * (s + d)) y (map2 (a, b. a + 2 * b) k1 k2) k3\n"
    /* a map2 of tuples read by a map2: narrowed to the one component read
       (.1 included), never when both are (found by the fuzzer) */
    "def p_narrow1 (a: [R]) (b: [R]) = let w = map2 (x, y. (x * y, x + y)) a b in map2 (t, u. t.1 * u) w b\n"
    "def p_narrow_both (a: [R]) (b: [R]) = let w = map2 (x, y. (x * y, x + y)) a b in map2 (t, u. t.1 + t.2 * u) w b\n"
    "def p_cse (x: R) (y: R) = let u = x * y in let v = x * y in u + v\n"
    /* an outer product scaled per element: the scaling its own map, the
       outer product left whole for the plan (optimizer/outer_split.c) */
    "def p_outer (a: [R]) (x: [R]) = map (c. let y = c + c in map (b. y * b) x) a\n"
    /* an exponential computed by two maps over one array: stored once
       (optimizer/share.c); the second map reading its element too: a map2 */
    "def p_share (x: [R]) = let a = reduce (max) (-inf) x in let dt = 1 / reduce (+) 0 (map (v. exp (v - a)) x) in "
    "map (w. dt * exp (w - a)) x\n"
    "def p_share2 (x: [R]) = let s = reduce (+) 0 (map (v. log (v * v + 1)) x) in map (w. w * log (w * w + 1) + s) x\n"
    "def p_share_cheap (x: [R]) = let s = reduce (+) 0 (map (v. v * v) x) in map (w. w * w + s) x\n"
    /* the stored array already a let that a reduce reads: the later map
       reads it; read by maps only, it is left to fusion */
    "def p_share_let (x: [R]) = let e = map (v. exp v) x in let s = reduce (+) 0 e in map (w. exp w * s) x\n"
    "def p_share_maps (x: [R]) = let e = map (v. exp v) x in (map (w. exp w + 1) x, map (u. u * 2) e)\n"
    /* a component of a map of tuples computed again, its lets renamed
       and the other component's let dropped: read from the map */
    "def p_cse_comp (a: [R]) (b: [R]) = let w = map2 (x, y. let g = x * y in let h = x - y in ([g + 1, g], h * g)) a b in "
    "(map (p. p.2) w, map2 (u, v. let k = u * v in [k + 1, k]) a b)\n"
    "def p_alg (x: R) = (x * 1 + 0) - 0 + 2 * 3 - (- (- x)) + x * 0\n"
    "def p_ifproj (x: R) (a: [R]) =\n"
    "  let r = if x > 0 then (reduce (+) 0 a, x) else (x, reduce (*) 1 a) in r.1 * 2\n"
    "def p_invif (n: R) (a: [R]) = map (v. let w = v * 3 in if n > 0 then w * 2 else w) a\n"
    "def p_ixmap (a: [R]) (b: [R]) = let c = map2 (x, y. x - y) a b in map (i. a[i] * c[i] + b[i]) (iota (length c))\n"
    "def p_ixmap_len (a: [R]) (b: [R]) = map (i. a[i] * b[i]) (iota (length a))\n"
    "def p_ixmap_i (a: [R]) = map (i. a[i] * i) (iota (length a))\n"
    "def p_selector (x: R) (y: R) = (if (if x <= y then 1 else 0) == 1 then x else y, if 0 == (if x <= y then 1 else 0) then x else y)\n"
    "def p_sign (x: R) (y: R) = (x + -1 * y, -1 * x * y + y * -x / x, x - -y / 2, -x + y)\n"
    /* conditions known in a branch, in a map over iota (an index in
       range), in a map over an array (not empty) */
    "def p_known (x: R) (a: [R]) = if x > 0 then (if !(x > 0) then 1 else x) + sum (map (v. if x > 0 then v else 0) a) else 2\n"
    "def p_known_ix (a: [R]) = map (i. if 0 <= i && (i < length a && floor i == i) then a[i] else 0) (iota (length a))\n"
    "def p_known_ne (m: [[R]]) = map (r. if length m == 0 then 0 else r[0]) m\n"
    /* an empty test around two maps over the array tested: the else branch */
    "def p_empty_maps (a: [R]) = if length a == 0 then map (x. 0) a else map (x. x * 2) a\n"
    /* a sum of transposed outer products of paired rows (gmm's features'
       cotangent): one matrix product, after the rows' count check */
    "def p_outer_t (g: [[R]]) (c: [[R]]) (z: [[R]]) =\n"
    "  reduce (u, v. map2 (x, y. map2 (+) x y) u v) (map (r. map (e. 0) r) z)\n"
    "    (map2 (gk, ck. let o = map (x. map (y. x * y) gk) ck in transpose o) g c)\n"
    /* sums selected by equality with a map's index: one scatter for all
       the indices (optimizer/histogram.c), inline or through a let */
    "def p_hist (w: [R]) (d: [R]) = map2 (j, x. x * reduce (+) 0 (map (c. if c == j then c * 2 else 0) w)) (iota (length d)) d\n"
    "def p_hist_let (w: [R]) = map (j. let y = map (c. if j == c then 1 else 0) w in reduce (+) 0 y + j) (iota 5)\n"
    /* a minimum or maximum of the rows a map makes: a loop folding them
       as they are made (optimizer/row_fold.c) */
    "def p_rowfold (m: [[R]]) (c: [[R]]) = reduce (u, v. map2 (min) u v) (replicate 3 inf) (map2 (r, q. let s = sum q in map (x. s - 2 * x) r) m c)\n"
    "def p_rowfold_max (m: [[R]]) = reduce (u, v. map2 (max) v u) (replicate 2 (-inf)) (map (r. map (x. x * x) r) m)\n"
    /* the gradient of a product with a transposed matrix: the transposed
       matrix-vector product reads x itself, not transpose (transpose x) */
    "def p_vecmat_t (x: [[R]]) (w: [R]) (c: [R]) = dot c (map (r. dot r w) (transpose x))\n";

START_TEST(rules_fire) {
  tl_run(programs);
  ck_assert_str_eq(body_text(passed("p_ones", NULL)), "a");
  ck_assert_str_eq(body_text(passed("p_zeros", NULL)), "a");
  ck_assert_str_eq(body_text(passed("p_id", opt_arrays)), "a");
  ck_assert_str_eq(body_text(passed("p_red1", opt_arrays)), "1");
  ck_assert_str_eq(body_text(passed("p_red0", opt_arrays)), "0");
  ck_assert_str_eq(body_text(passed("p_snd", NULL)), "map (x. sin x) a");
  ck_assert_str_eq(body_text(passed("p_proj", opt_arrays)), "let w = map2 (x, y. (y, x)) a b in b");
  ck_assert_int_eq(tl_count_kind(passed("p_fuse", opt_fusion)->body, T_PRIM, PRIM_MAP), 1);
  ck_assert_str_eq(body_text(passed("p_dup2", opt_arrays)), "map (x. x * x + x) a");
  ck_assert_str_eq(body_text(passed("p_dup3", opt_arrays)), "let b = map (x. x + 1) a in map2 (x, y. x * y - x) a b");
  /* lengths not known equal: the map3 and its error stay */
  ck_assert_int_eq(tl_count_kind(passed("p_dup3_miss", NULL)->body, T_PRIM, PRIM_MAP3), 1);
  Def *rk = passed("p_rk", NULL);
  ck_assert_msg(tl_count_kind(rk->body, T_PRIM, PRIM_MAP) == 1 && tl_count_kind(rk->body, T_PRIM, PRIM_MAP2) == 0 &&
                    tl_count_kind(rk->body, T_PRIM, PRIM_MAP3) == 0,
                "%s", body_text(rk));
  /* narrowed to the component read, then fused (b read once) */
  Def *n1 = passed("p_narrow1", opt_fusion);
  ck_assert_msg(tl_count_kind(n1->body, T_PRIM, PRIM_MAP2) == 2 && strstr(body_text(n1), "in map2 (x, y. let y"),
                "%s", body_text(n1));
  ck_assert_int_eq(tl_count_kind(passed("p_scan", NULL)->body, T_PRIM, PRIM_SCANL), 0);
  ck_assert_int_eq(tl_count_kind(passed("p_constzero", NULL)->body, T_PRIM, PRIM_MAP2), 0);
  ck_assert_str_eq(body_text(passed("p_cse", opt_cse)), "let u = x * y in let v = u in u + v");
  ck_assert_str_eq(body_text(passed("p_outer", opt_arrays)), "map (y. map (b. y * b) x) (map (c. let y = c + c in y) a)");
  ck_assert_str_eq(body_text(passed("p_share", opt_share)),
                   "let a = reduce (max) (-inf) x in let e = map (v. exp (v - a)) x in let dt = 1 / reduce (+) 0 e in "
                   "map (y. dt * y) e");
  ck_assert_str_eq(body_text(passed("p_share2", opt_share)),
                   "let e = map (v. log (v * v + 1)) x in let s = reduce (+) 0 e in map2 (w, y. w * y + s) x e");
  ck_assert_str_eq(body_text(passed("p_share_let", opt_share)),
                   "let e = map (v. exp v) x in let s = reduce (+) 0 e in map (y. y * s) e");
  {
    Def *cheap = tl_def(tl_session, "p_share_cheap"), *maps = tl_def(tl_session, "p_share_maps");
    ck_assert_ptr_eq(opt_share(cheap->body), cheap->body);
    ck_assert_ptr_eq(opt_share(maps->body), maps->body);
    const char *sh_args[] = {"[1, -2, 0.5, 700]", "[nan, inf, -inf, 1]", "[]", "[-0]"};
    for (int i = 0; i < 4; i++) {
      Value args[1] = {tl_ev(sh_args[i])};
      same_on(tl_def(tl_session, "p_share"), passed("p_share", NULL), args);
      same_on(tl_def(tl_session, "p_share2"), passed("p_share2", NULL), args);
    }
  }
  {
    Def *o = passed("p_outer", NULL);
    ck_assert_msg(opt_outer_rows(o->body), "%s", body_text(o));
    const char *o_args[][2] = {{"[1, -0, nan, 2]", "[3, -0, inf]"}, {"[]", "[1]"}, {"[1, 2]", "[]"}};
    for (int i = 0; i < 3; i++) {
      Value args[2] = {tl_ev(o_args[i][0]), tl_ev(o_args[i][1])};
      same_on(tl_def(tl_session, "p_outer"), o, args);
    }
  }
  ck_assert_str_eq(body_text(passed("p_cse_comp", opt_cse)),
                   "let w = map2 (x, y. let g = x * y in let h = x - y in ([g + 1, g], h * g)) a b in (map (p. p.2) w, map (p. p.1) w)");
  {
    Def *cc = passed("p_cse_comp", NULL);
    const char *cc_args[][2] = {{"[1, 2, 3]", "[4, -5, 6]"}, {"[1, 2]", "[1]"}, {"[]", "[]"}};
    for (int i = 0; i < 3; i++) {
      Value args[2] = {tl_ev(cc_args[i][0]), tl_ev(cc_args[i][1])};
      same_on(tl_def(tl_session, "p_cse_comp"), cc, args);
    }
  }
  ck_assert_str_eq(body_text(passed("p_alg", opt_algebra)), "x + 6 - x + x * 0");
  /* a partial's selector tested: its condition */
  ck_assert_str_eq(body_text(passed("p_selector", opt_algebra)), "(if x <= y then x else y, if !(x <= y) then x else y)");
  /* the sign rules, exact in IEEE arithmetic: a negation moves out of
     products and quotients into the sum that absorbs it */
  ck_assert_str_eq(body_text(passed("p_sign", opt_algebra)), "(x - y, -(x * y) - y * x / x, x + y / 2, y - x)");
  ck_assert_str_eq(body_text(passed("p_known", opt_algebra)), "if x > 0 then x + sum (map (v. v) a) else 2");
  ck_assert_str_eq(body_text(passed("p_known_ix", opt_algebra)), "map (i. a[i]) (iota (length a))");
  ck_assert_str_eq(body_text(passed("p_known_ne", opt_algebra)), "map (r. r[0]) m");
  ck_assert_str_eq(body_text(passed("p_empty_maps", opt_algebra)), "map (x. x * 2) a");
  /* π_1 of an if of tuples: each branch's component, the other dead */
  ck_assert_str_eq(body_text(passed("p_ifproj", NULL)), "(if x > 0 then reduce (+) 0 a else x) * 2");
  /* an if whose test does not read the element: out of the map */
  Def *inv = passed("p_invif", NULL);
  ck_assert_msg(inv->body->kind == T_IF && tl_count_kind(inv->body, T_PRIM, PRIM_MAP) == 2, "%s", body_text(inv));
  /* a map over indices reading arrays of its length at its index: a map
     over the arrays (optimizer/index_map.c) */
  Def *ot = passed("p_outer_t", NULL);
  ck_assert_msg(tl_count_kind(ot->body, T_PRIM, PRIM_REDUCE) == 1 && tl_count_kind(ot->body, T_PRIM, PRIM_TRANSPOSE) == 2,
                "%s", body_text(ot)); /* U^T V: a map of dot products of the transposes */
  ck_assert_int_eq(tl_count_kind(opt_grad("p_vecmat_t")->body, T_PRIM, PRIM_TRANSPOSE), 2); /* was 3 */
  /* their values, their errors (rows in different numbers), empty shapes */
  const char *ot_args[][3] = {{"[[1, 2], [3, 4], [5, 6]]", "[[1, 0, 2, 1], [2, 1, 0, 3], [1, 1, 1, 1]]", "[[0, 0, 0, 0], [0, 0, 0, 0]]"},
                              {"[[1, 2], [3, 4], [5, 6]]", "[[1, 0, 2, 1], [2, 1, 0, 3]]", "[[0, 0, 0, 0], [0, 0, 0, 0]]"},
                              {"[[1.5], [-2]]", "[[0.25, 3], [1, -1]]", "[[0, 0]]"}};
  for (int i = 0; i < 3; i++) {
    Value args[3] = {tl_ev(ot_args[i][0]), tl_ev(ot_args[i][1]), tl_ev(ot_args[i][2])};
    same_on(tl_def(tl_session, "p_outer_t"), ot, args);
  }
  ck_assert_ptr_nonnull(strstr(error_of(ot, (Value[]){tl_ev(ot_args[1][0]), tl_ev(ot_args[1][1]), tl_ev(ot_args[1][2])}),
                               "lengths 3 and 2 differ"));
  Def *vf = tl_def(tl_session, "p_vecmat_t");
  int wrt[3] = {0, 1, 2};
  Def *vg0 = rev_grad(vf, wrt, 3, REV_UNF), *vg1 = opt_grad("p_vecmat_t");
  const char *vm_args[][3] = {{"[[1, 2, 3], [4, 5, 6]]", "[0.5, -1]", "[1, 2, 3]"},
                              {"[[1], [2]]", "[0.5, -1]", "[3]"},
                              {"[[1, 2, 3]]", "[2]", "[1, 2, 3]"}};
  for (int i = 0; i < 3; i++) {
    Value args[3] = {tl_ev(vm_args[i][0]), tl_ev(vm_args[i][1]), tl_ev(vm_args[i][2])};
    same_on(vg0, vg1, args);
  }
  for (int i = 0; i < 2; i++) {
    Def *h = passed(i ? "p_hist_let" : "p_hist", NULL);
    ck_assert_msg(tl_count_kind(h->body, T_PRIM, PRIM_REDUCE_BY_INDEX) == 1 && tl_count_kind(h->body, T_PRIM, PRIM_REDUCE) == 0,
                  "%s", body_text(h));
    /* integers, out of range, not integers, nan: counted where the sums count them */
    Value w = tl_ev("[0, 1, 1, 3, -1, 2.5, 3, nan, 4, 5, 0]");
    Value args[2] = {w, tl_ev("[1, 2, 3, 4]")};
    same_on(tl_def(tl_session, i ? "p_hist_let" : "p_hist"), h, args);
  }
  Def *rf = passed("p_rowfold", NULL), *rfm = passed("p_rowfold_max", NULL);
  ck_assert_msg(tl_count_kind(rf->body, T_PRIM, PRIM_LOOP_FOR) == 1, "%s", body_text(rf));
  ck_assert_msg(tl_count_kind(rfm->body, T_PRIM, PRIM_LOOP_FOR) == 1, "%s", body_text(rfm));
  /* values (ties of signed zeros, nan, infinities), and the errors in
     their order: rows of another length than the fold's, rows in
     different numbers */
  const char *rf_args[][2] = {{"[[1, -2, 3], [0, 5, -0], [2, nan, -1]]", "[[1], [2, 2], [0]]"},
                              {"[[-0, 0, inf], [0, -0, -inf]]", "[[1], [1]]"},
                              {"[]", "[]"},
                              {"[[1, 2, 3], [1, 2]]", "[[1], [2]]"},
                              {"[[1, 2, 3], [1, 2, 3]]", "[[1]]"}};
  for (int i = 0; i < 5; i++) {
    Value args[2] = {tl_ev(rf_args[i][0]), tl_ev(rf_args[i][1])};
    same_on(tl_def(tl_session, "p_rowfold"), rf, args);
  }
  ck_assert_ptr_nonnull(strstr(error_of(rf, (Value[]){tl_ev(rf_args[3][0]), tl_ev(rf_args[3][1])}), "lengths 3 and 2 differ"));
  ck_assert_ptr_nonnull(strstr(error_of(rf, (Value[]){tl_ev(rf_args[4][0]), tl_ev(rf_args[4][1])}), "lengths 2 and 1 differ"));
  const char *rfm_args[] = {"[[1, -2], [0, 5], [-3, nan]]", "[[-0, 0], [0, -0]]", "[]", "[[1, 2], [3]]"};
  for (int i = 0; i < 4; i++) {
    Value args[1] = {tl_ev(rfm_args[i])};
    same_on(tl_def(tl_session, "p_rowfold_max"), rfm, args);
  }
  Def *ix = passed("p_ixmap", opt_arrays);
  ck_assert_msg(tl_count_kind(ix->body, T_PRIM, PRIM_INDEX) == 0 && tl_count_kind(ix->body, T_PRIM, PRIM_IOTA) == 0,
                "%s", body_text(ix));
}
END_TEST

START_TEST(near_misses) {
  tl_run(programs);
  {
    Def *f = tl_def(tl_session, "p_snd_miss");
    Term *b = opt_algebra(opt_arrays(opt_fusion(opt_cse(f->body))));
    ck_assert_msg(b == f->body, "p_snd_miss changed");
  }
  /* m used twice, by maps: fused into both, and the one map that results
     computes sin once */
  Def *ft = passed("p_fuse_twice", NULL);
  ck_assert_msg(tl_count_kind(ft->body, T_PRIM, PRIM_SIN) == 1 && tl_count_kind(ft->body, T_PRIM, PRIM_MAP) == 1,
                "%s", body_text(ft));
  /* reads of an array of unknown length (b), or an index used otherwise:
     the map over indices stays */
  ck_assert_int_eq(tl_count_kind(passed("p_ixmap_len", NULL)->body, T_PRIM, PRIM_INDEX), 2);
  ck_assert_int_eq(tl_count_kind(passed("p_ixmap_i", NULL)->body, T_PRIM, PRIM_IOTA), 1);
  /* a * 0 is not 0 (a may hold inf or nan): fused, the product kept */
  ck_assert_int_eq(tl_count_kind(passed("p_mulzero", NULL)->body, T_PRIM, PRIM_MUL), 1);
  /* map2 (x, y. x * y) a (map (z. 1) b): fused, never reduced to a */
  ck_assert_int_eq(tl_count_kind(passed("p_ones_miss", NULL)->body, T_PRIM, PRIM_MAP2), 1);
  /* lengths 2 and 3 still raise */
  Def *f = tl_def(tl_session, "p_snd_miss");
  Value args[2] = {tl_ev("[1, 2]"), tl_ev("[1, 2, 3]")};
  same_on(f, passed("p_snd_miss", NULL), args);
}
END_TEST

/* Every program above and the gradients of the prelude's examples keep
   their values bit for bit on random inputs, arrays of lengths 0..6. */
START_TEST(values_preserved) {
  tl_run(programs);
  const char *names[] = {"p_ones", "p_zeros", "p_id", "p_mulzero", "p_constzero", "p_red1", "p_red0",
                         "p_scan", "p_snd", "p_snd_miss", "p_ones_miss", "p_proj", "p_fuse", "p_fuse_twice",
                         "p_cse", "p_alg", "ex", "p_ifproj", "p_invif", "p_ixmap", "p_ixmap_len", "p_ixmap_i",
                         "p_sign", "p_selector", "p_known", "p_known_ix", "p_empty_maps", "p_hist", "p_hist_let", "p_narrow1", "p_narrow_both", "p_dup2", "p_dup3", "p_dup3_miss", "p_dup_unused", "p_rk"};
  unsigned seed = 7;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    Def *f = tl_def(tl_session, names[i]);
    Def *g = passed(names[i], NULL);
    for (int n = 0; n < 7; n++) {
      Value args[3];
      for (int p = 0; p < f->nparams; p++)
        args[p] = f->params[p]->type->kind == TY_ARRAY ? rand_array(n + (p == 1 && n == 3), &seed)
                                                       : val_real(4.0 * rand_r(&seed) / RAND_MAX - 2);
      same_on(f, g, args);
    }
  }
  const char *gnames[] = {"ex", "prod", "sum", "dot"};
  for (int i = 0; i < 4; i++) {
    Def *f = tl_def(tl_session, gnames[i]);
    int wrt[3] = {0, 1, 2};
    Def *g0 = rev_grad(f, wrt, f->nparams, REV_UNF);
    Def *g1 = with_body(g0, all_passes(fe_copy(g0->body)));
    for (int n = 0; n < 7; n++) {
      Value args[3];
      for (int p = 0; p < f->nparams; p++)
        args[p] = f->params[p]->type->kind == TY_ARRAY ? rand_array(n, &seed)
                                                       : val_real(4.0 * rand_r(&seed) / RAND_MAX - 2);
      same_on(g0, g1, args);
    }
  }
}
END_TEST

/* The paper's targets (example 1.1, example 5.5) after the PE passes and
   ours; names and let layout are up to the PE passes. */
START_TEST(show_targets) {
  tl_run("def ex (x1: R) (x2: R) (x3: R) = let w1 = x1 * x2 in let w2 = w1 * x1 in w2");
  Def *ex = opt_grad("ex"), *prod = opt_grad("prod"), *sum = opt_grad("sum"), *dot = opt_grad("dot");
  if (getenv("UNA_RULES_PRINT"))
    fprintf(stderr, "%s\n%s\n%s\n%s\n", def_text(ex), def_text(prod), def_text(sum), def_text(dot));
  /* (b, a), after the map2 that checks the lengths (dot raises on arrays
     of different lengths, so its gradient must too) */
  const Term *db = dot->body;
  ck_assert(db->kind == T_LET && db->kids[0]->kind == T_PRIM && db->kids[0]->prim == PRIM_MAP2);
  db = db->kids[1];
  ck_assert(db->kind == T_TUPLE && db->kids[0]->kind == T_VAR && db->kids[1]->kind == T_VAR);
  ck_assert(db->kids[0]->sym == dot->params[1] && db->kids[1]->sym == dot->params[0]);
  ck_assert_int_eq(tl_count_kind(ex->body, T_PRIM, PRIM_MUL), 3);
  ck_assert_int_eq(tl_count_kind(ex->body, T_PRIM, PRIM_ADD), 1);
  ck_assert_int_eq(tl_count_kind(ex->body, T_LAM, -1), 0);
  ck_assert_int_eq(tl_count_kind(sum->body, T_PRIM, -1), 1);
  ck_assert_int_eq(tl_count_kind(sum->body, T_PRIM, PRIM_MAP), 1);
  int want[][2] = {{PRIM_MAP2, 1}, {PRIM_SCANL, 1}, {PRIM_SCANR, 1}, {PRIM_SHIFT1L, 1},
                   {PRIM_SHIFT1R, 1}, {PRIM_MAP, 0}, {PRIM_REDUCE, 0}};
  for (int i = 0; i < 7; i++) ck_assert_int_eq(tl_count_kind(prod->body, T_PRIM, want[i][0]), want[i][1]);
  ck_assert_int_eq(tl_count_kind(prod->body, T_APP, -1), 0);
}
END_TEST

/* The gradient of a for loop whose value is used: the loop's value is
   read from the scan of its states (optimizer/loop_states.c), so the body
   runs once per step forward; a while loop's from the loop that counts its
   trips; values as unoptimized, errors too. */
START_TEST(loop_states_shared) {
  tl_run("def lp (x: R) (a: [R]) : R =\n"
         "  let s = loop s = a for i < 4 do map (u. sin (u * x) + i) s in sum (map (u. u * u) s)\n"
         "def lpn (x: R) (a: [R]) (n: R) : R =\n"
         "  let s = loop s = a for i < n do map (u. sin (u * x)) s in sum (map (u. u * u) s)\n"
         "def lp2 (x: R) (a: [R]) : R =\n"
         "  let s = loop s = a for i < 4 do map (u. sin (u * x)) s in\n"
         "  sum (map (u. u * u) s) + sum (loop s = map (u. u + 1) a for i < 4 do map (u. sin (u * x)) s)\n"
         "def lf (x: R) (a: [R]) : R =\n"
         "  let q = foldl (acc, y. map (u. sin (u * y * x)) acc) a a in sum (map (u. u * u) q)\n"
         "def lw (x: R) (a: [R]) : R =\n"
         "  let s = loop y = a while sum y < 10 * length a && sum y > -10 do map (u. u * 1.5 + x) y in\n"
         "  sum (map (u. u * u) s)\n");
  OptOptions o = {0};
  o.enabled = true;
  const char *names[] = {"lp", "lpn", "lp2", "lf", "lw"};
  int loops[] = {1, 1, 2, 0, 1};
  for (int i = 0; i < 5; i++) {
    Def *f = tl_def(tl_session, names[i]);
    int wrt[2] = {0, 1};
    Def *g0 = rev_grad(f, wrt, 2, REV_UNF);
    Def *g = opt_optimize_program(g0, &o);
    /* the backward sweeps; lp2's second loop's value is not needed */
    ck_assert_msg(tl_count_kind(g->body, T_PRIM, PRIM_LOOP_FOR) == loops[i], "%s:\n%s", names[i], def_text(g));
    ck_assert_int_eq(tl_count_kind(g->body, T_PRIM, PRIM_SCANL), i == 2 ? 2 : i == 4 ? 0 : 1); /* lw: linear, no states */
    /* lw: the while loop once, counting its trips, its value read from it */
    ck_assert_int_eq(tl_count_kind(g->body, T_PRIM, PRIM_LOOP_WHILE), i == 4);
    ck_assert_int_eq(tl_count_kind(g->body, T_PRIM, PRIM_FOLDL), 0); /* lf's value read from its scan */
    unsigned seed = 11;
    for (int n = 0; n < 4; n++) {
      Value args[3] = {val_real(0.7), rand_array(n, &seed), val_real(n)};
      same_on(g0, g, args);
    }
    if (i == 1) { /* a bad count raises at the loop, as iota's error (the scan's) */
      Value args[3] = {val_real(0.7), rand_array(2, &seed), val_real(2.5)};
      char *e0 = error_of(g0, args), *e1 = error_of(g, args);
      ck_assert_str_eq(e0, "t.una:4:22: error: loop count 2.5 is not an integer");
      ck_assert_str_eq(e1, "t.una:4:22: error: iota: size must be a non-negative integer, found 2.5");
    }
  }
}
END_TEST

/* Occurrences of needle in hay. */
static int occurrences(const char *hay, const char *needle) {
  int n = 0;
  for (const char *q = strstr(hay, needle); q; q = strstr(q + 1, needle)) n++;
  return n;
}

/* The gradient of an MLP written per example runs the five matrix
   products of a hand-written backpropagation (fission.c: the backward
   pass's product with w2, under the gradient's empty-matrix `if`, taken
   out of the map over the examples, after the output cotangent it
   multiplies; raises.c: the dead primal copy computes no product), and
   no matrix-vector product per example. */
START_TEST(mlp_gradient_products) {
  Session *s = tl_session_with(
      "def f (w1: [[R]]) (b1: [R]) (w2: [[R]]) (b2: [R]) (x: [[R]]) : R =\n"
      "  sum (map (xi. let hid = map2 (z, b. tanh (z + b)) (matvec w1 xi) b1 in\n"
      "               sum (map2 (z, b. (z + b) * (z + b)) (matvec w2 hid) b2)) x)\n"
      "def g (w1: [[R]]) (b1: [R]) (w2: [[R]]) (b2: [R]) (x: [[R]]) = (grad f wrt w1 b1 w2 b2) w1 b1 w2 b2 x\n");
  TlRun r = tl_capture(s, ":plan g [[1, 2]] [1] [[1]] [1] [[1, 2]]\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_msg(occurrences(r.out, "= matrix product (cblas_dgemm") == 5 && !strstr(r.out, "matrix-vector product"), "%s",
                r.out);
}
END_TEST

Suite *suite_rules(void) {
  Suite *s = suite_create("rules");
  TCase *tc = tcase_create("gradients");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_add_test(tc, show_targets);
  tcase_add_test(tc, rules_fire);
  tcase_add_test(tc, near_misses);
  tcase_add_test(tc, values_preserved);
  tcase_add_test(tc, loop_states_shared);
  tcase_add_test(tc, mlp_gradient_products);
  suite_add_tcase(s, tc);
  return s;
}
