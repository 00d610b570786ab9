/* test_plan.c: the execution plan (backend/plan/): which kernels a program
   gets and what they fuse, that lowering is pure (the Def's own body is
   untouched) and done once per Def, that calls are planned with their
   callers, that sibling groups and dead lets are decided there, the
   printed plan of ∇prod, and which maps are matrix products (run with
   BLAS: tests/backend/test_blas.c) and which stay maps. */
#include <check.h>

#include "../../../backend/eval.h"
#include "../../../backend/plan/plan.h"
#include "../../../optimizer/program.h"
#include "../../../reverse/reverse.h"
#include "../../suites.h"
#include "../../testlib.h"

static const char *const defs =
    "def sq_sum (a: [R]) : R = reduce (+) 0 (map (x. x * x) a)\n"
    "def two (a: [R]) (b: [R]) =\n"
    "  let s = reduce (+) 0 (map2 (x, y. x * y) a b) in\n"
    "  let t = map (x. x + 1) a in\n"
    "  let u = map (x. x * 3) a in\n"
    "  (s, t, u)\n"
    "def calls (a: [R]) : R = sq_sum a + sq_sum (map (x. x + 1) a)\n"
    "def p (a: [R]) : R = prod a\n";

/* The optimized Def of the expression text. */
static Def *optimized(const char *text) {
  OptOptions o = {0};
  o.enabled = true;
  return opt_optimize_program(tl_expand(tl_check(text)), &o);
}

/* The def name of tl_session, optimized with what it calls. */
static Def *opt_def(const char *name) {
  OptOptions o = {0};
  o.enabled = true;
  return opt_optimize_program(tl_def(tl_session, name), &o);
}

static int count_kind(const Plan *p, PlanKernelKind kind) {
  int n = 0;
  for (int i = 0; i < p->nkernels; i++) n += p->kernels[i]->kind == kind;
  return n;
}

/* Whether any node of t carries a note. */
static bool any_note(const Term *t) {
  if (t->note) return true;
  for (int i = 0; i < t->nkids; i++)
    if (any_note(t->kids[i])) return true;
  return false;
}

START_TEST(map_fused_into_reduce) {
  tl_run(defs);
  Def *d = opt_def("sq_sum");
  Plan *p = plan_of_def(d);
  ck_assert_int_eq(p->nkernels, 1);
  const PlanKernel *k = p->kernels[0];
  ck_assert_int_eq(k->kind, PK_REDUCE);
  ck_assert(!k->src->leaf);      /* the map is part of the reduce's elements */
  ck_assert_int_eq(k->nleaves, 1);
  ck_assert(!k->ordered);        /* (+) commutes: lanes */
  ck_assert_ptr_nonnull(k->op);
  /* the map inside is marked fused and gets no kernel of its own */
  const Term *map = k->src->term;
  ck_assert_int_eq(map->prim, PRIM_MAP);
  ck_assert(map->note && map->note->fused && !map->note->kernel);
  /* the lambda's program is the plan's */
  ck_assert_ptr_eq(map->kids[0]->note->k, k->src->fn->k);
}
END_TEST

/* The first map3 in t, or NULL. */
static const Term *find_map3(const Term *t) {
  if (t->kind == T_PRIM && t->prim == PRIM_MAP3) return t;
  for (int i = 0; i < t->nkids; i++) {
    const Term *m = find_map3(t->kids[i]);
    if (m) return m;
  }
  return NULL;
}

/* A map3 over three array variables runs by blocks of indices, its
   lambda's program reading them there (note.h: indexed); over other
   arrays, element by element. */
START_TEST(map3_over_variables_indexed) {
  tl_run("def f (a: [R]) (b: [R]) (c: [R]) (y: [R]) : [R] = map3 (x, i, z. x * y[i] + z) a b c\n"
         "def g (a: [R]) (b: [R]) : [R] = map3 (x, u, z. x * u + z) a (map (v. v + 1) b) b\n");
  const Term *m = find_map3(plan_of_def(opt_def("f"))->def->body);
  ck_assert_ptr_nonnull(m);
  ck_assert(m->kids[0]->note && m->kids[0]->note->indexed && m->kids[0]->note->step);
  m = find_map3(plan_of_def(opt_def("g"))->def->body);
  ck_assert_ptr_nonnull(m);
  ck_assert(m->kids[0]->note && !m->kids[0]->note->indexed);
  /* the same values as the tree evaluator's, and its errors */
  TlRun r = tl_capture(tl_session, "f [1, 2, 3] [2, 0, 1] [0.5, 0, -1] [10, 20, 30]\n", true);
  ck_assert_str_eq(r.out, "[30.5, 20, 59]\n");
  r = tl_capture(tl_session, "f [1, 2] [0, 3] [0, 0] [10, 20, 30]\n", false);
  ck_assert_ptr_nonnull(strstr(r.err, "error: index 3 out of bounds for an array of length 3"));
  r = tl_capture(tl_session, "f [1, 2] [0] [0, 0] [10]\n", false);
  ck_assert_ptr_nonnull(strstr(r.err, "error: map3: lengths 2, 1 and 2 differ"));
  Exec written = tl_exec_paths(false, false);
  const char *big = "f (map (k. sin k) (iota 5000)) (map (k. k - 3 * floor (k / 3)) (iota 5000)) (iota 5000) [1, 2, 3]";
  ck_assert(tl_same_bits(tl_ev(big), tl_ev_with(&written, big), true));
}
END_TEST

START_TEST(lowering_is_pure_and_once) {
  tl_run(defs);
  Def *d = opt_def("two");
  Plan *p = plan_of_def(d);
  ck_assert_ptr_eq(plan_of_def(d), p);       /* built once, owned by d */
  ck_assert_ptr_eq(d->plan, p);
  ck_assert(!any_note(d->body));               /* d's own body untouched */
  ck_assert(p->def != d && p->def->planned);
  ck_assert_ptr_eq(plan_runnable(d), p->def);
  ck_assert_ptr_eq(plan_runnable(p->def), p->def); /* a copy is not planned again */
  ck_assert_ptr_eq(plan_of_def(p->def), p);
  /* a second lowering is a new, equal plan */
  Plan *q = plan_lower(d);
  ck_assert_ptr_ne(q, p);
  ck_assert_str_eq(plan_str(q), plan_str(p));
}
END_TEST

START_TEST(siblings_grouped_in_the_plan) {
  tl_run(defs);
  Plan *p = plan_of_def(opt_def("two"));
  /* at let s (the chain s, t, u), and at let t for when s's group cannot
     run (lengths that differ): t, u */
  ck_assert_int_eq(p->ngroups, 2);
  const Term *let = p->def->body;
  ck_assert_int_eq(let->kind, T_LET);
  ck_assert(let->note && let->note->group);
  ck_assert_ptr_nonnull(strstr(plan_str(p), "group at let s: one pass computing s (reduce), t (map), u (map)"));
  /* the group gives the values of the plain evaluation */
  ck_assert_str_eq(val_to_string(tl_ev("two [1, 2] [3, 4]")), "(11, [2, 3], [3, 6])");
}
END_TEST

START_TEST(calls_planned_with_the_caller) {
  tl_run(defs);
  Plan *p = plan_of_def(opt_def("calls"));
  ck_assert_int_eq(p->ndefs, 2); /* calls, then sq_sum (once, called twice) */
  ck_assert_str_eq(p->defs[0]->name, "calls");
  ck_assert_str_eq(p->defs[1]->name, "sq_sum");
  ck_assert(p->defs[1]->planned);
  ck_assert_ptr_eq(p->defs[1]->plan, p);
  /* the callee's reduce and the caller's map: two kernels */
  ck_assert_int_eq(count_kind(p, PK_REDUCE), 1);
  ck_assert_int_eq(count_kind(p, PK_MAP), 1);
  ck_assert_str_eq(val_to_string(tl_ev("calls [1, 2]")), "18");
}
END_TEST

START_TEST(dead_let_checked_not_computed) {
  Def *d = optimized("let a = [1, 2, 3] in let t = map2 (x, y. x + y) a [1, 2] in 5");
  Plan *p = plan_of_def(d);
  ck_assert_int_eq(count_kind(p, PK_CHECK), 1);
  ck_assert_ptr_null(p->kernels[0]->check);
  ck_assert_msg(strstr(plan_str(p), "check (nothing computed)"), "%s", plan_str(p));
  /* a function that gathers: a kernel for its indices */
  p = plan_of_def(optimized("let a = [1, 2, 3] in let t = map (i. a[i] * a[i]) [0, 2] in 5"));
  ck_assert_int_eq(count_kind(p, PK_CHECK), 1);
  ck_assert_ptr_nonnull(p->kernels[0]->check);
  ck_assert_msg(strstr(plan_str(p), "check (gathers' indices and loops only, nothing stored)"), "%s", plan_str(p));
}
END_TEST

START_TEST(grad_prod_printed) {
  tl_run(defs);
  Def *g = optimized("grad p [1, 2, 3, 4]");
  Plan *p = plan_of_def(g);
  ck_assert_int_eq(p->nkernels, 3);
  ck_assert_int_eq(count_kind(p, PK_SCAN), 2);
  ck_assert_int_eq(count_kind(p, PK_MAP), 1);
  const char *s = plan_str(p);
  ck_assert_msg(strstr(s, "def grad_p (a: [R]) : [R] =\n  k0 (shift1L (k1 1 a)) (shift1R (k2 1 a))\n") != NULL, "%s", s);
  ck_assert_msg(strstr(s, "k1 = scan (una_scanr_1) from the right, n = length L0, elements L0[i], operator f1 "
                          "(monoid (*))\n") != NULL,
                "%s", s);
  ck_assert_msg(strstr(s, "f0 = (") != NULL, "%s", s);
  /* the map2 is computed with its two scans on the CPU */
  ck_assert_int_eq(p->nscan_maps, 1);
  ck_assert(p->defs[1]->body->note && p->defs[1]->body->note->scan_map); /* grad_p's map2 */
  ck_assert_msg(strstr(s, "k0 and the scans it reads (k1, k2): on the CPU, two passes") != NULL, "%s", s);
  ck_assert_str_eq(val_to_string(cpu_call(g, NULL)), "[24, 12, 8, 6]");
}
END_TEST

/* The matrix products of a plan, by kind. */
static void count_matrices(const Plan *p, int *gemv, int *gemm) {
  *gemv = *gemm = 0;
  for (int i = 0; i < p->nmatrices; i++) {
    ck_assert_int_eq(p->matrices[i]->id, i);
    if (p->matrices[i]->kind == PLAN_GEMV) (*gemv)++;
    else if (p->matrices[i]->kind == PLAN_GEMM) (*gemm)++;
  }
}

static const char *const matrix_defs =
    "def mydot (a: [R]) (b: [R]) : R = reduce (+) 0 (map2 (x, y. y * x) b a)\n"
    "def mv (m: [[R]]) (x: [R]) = map (r. mydot x r) m\n"
    "def mm (a: [[R]]) (b: [[R]]) = map (r. mv b r) a\n"
    "def mm2 (a: [[R]]) (bt: [[R]]) = map (r. map (c. sum (map2 (*) r c)) bt) a\n"
    "def inl (m: [[R]]) (x: [R]) = map (r. reduce (+) 0 (map2 (*) r x)) m\n"
    "def once (m: [[R]]) (x: [R]) = map (r. dot r (map (y. 2 * y) x)) m\n"
    "def notdot (m: [[R]]) (x: [R]) = map (r. reduce (+) 1 (map2 (*) r x)) m\n"
    "def plus (m: [[R]]) (x: [R]) = map (r. reduce (+) 0 (map2 (+) r x)) m\n"
    "def maxdot (m: [[R]]) (x: [R]) = map (r. reduce (max) 0 (map2 (*) r x)) m\n"
    "def self (m: [[R]]) = map (r. dot r r) m\n"
    "def dep (m: [[R]]) (x: [R]) = map (r. dot r (map (y. y * r[0]) x)) m\n"
    "def norms (m: [[R]]) = map (r. sum (map (y. y * 2) r)) m\n"
    "def outer (a: [R]) (b: [R]) = map (x. map (y. x * y) b) a\n"
    "def rowdep (a: [[R]]) (b: [[R]]) = map (r. map (c. dot r c) (map (q. map (y. y + r[0]) q) b)) a\n"
    "def d3 (a: [R]) (b: [R]) (c: [R]) : R = reduce (+) 0 (map2 (*) a b)\n"
    "def unused (m: [[R]]) (x: [R]) = map (r. d3 r x (map (y. y * r[5]) x)) m\n"
    "def unusedvar (m: [[R]]) (x: [R]) = map (r. d3 x r r) m\n"
    "def sum (a: [R]) : R = reduce (+) 1 a\n"
    "def mvsum (m: [[R]]) (x: [R]) = map (r. sum (map2 (*) r x)) m\n";

/* Which maps are matrix products: the shape (through calls), not the
   names; everything else stays a map with its kernels. */
START_TEST(matrix_products_recognized) {
  tl_run(matrix_defs);
  static const struct {
    const char *text;
    int gemv, gemm;
  } cases[] = {
      {"matvec [[1, 2]] [3, 4]", 1, 0},
      {"matmul [[1, 2]] [[3], [4]]", 0, 1}, /* the inner map is not a product of its own */
      {"mv [[1, 2]] [3, 4]", 1, 0},         /* the user's own dot, its operands swapped */
      {"mm [[1, 2]] [[3, 4]]", 0, 1},       /* mv, inlined in the row's body: a matrix product */
      {"mm2 [[1, 2]] [[3, 4]]", 0, 1},
      {"inl [[1, 2]] [3, 4]", 1, 0},
      {"once [[1, 2]] [3, 4]", 1, 0},       /* the vector does not depend on the row */
      {"notdot [[1, 2]] [3, 4]", 0, 0},     /* reduce from 1 */
      {"plus [[1, 2]] [3, 4]", 0, 0},
      {"maxdot [[1, 2]] [3, 4]", 0, 0},
      {"self [[1, 2]]", 0, 0},              /* the row with itself */
      {"dep [[1, 2]] [3, 4]", 0, 0},        /* the vector depends on the row */
      {"norms [[1, 2]]", 0, 0},
      {"outer [1, 2] [3, 4]", 0, 0},        /* an outer product (tests/backend/test_outer.c) */
      {"rowdep [[1, 2]] [[3, 4]]", 0, 0},   /* the inner map's matrix depends on the row (the
                                               optimizer fuses the two maps: a let, then dot) */
      {"mvsum [[1, 2]] [3, 4]", 0, 0},      /* sum redefined: not a dot product */
      {"unused [[1, 2]] [3, 4]", 0, 0},     /* an argument each row evaluates (and that may
                                               raise) but the dot does not use */
      {"unusedvar [[1, 2]] [3, 4]", 1, 0},  /* ... unless it is a variable */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Plan *p = plan_of_def(optimized(cases[i].text));
    int gemv, gemm;
    count_matrices(p, &gemv, &gemm);
    ck_assert_msg(gemv == cases[i].gemv && gemm == cases[i].gemm, "%s: %d gemv, %d gemm\n%s", cases[i].text, gemv,
                  gemm, plan_str(p));
  }
  /* value_and_grad computes the value in the gradient's forward pass: one
     matrix-vector product for the value and the gradient */
  tl_run("def mlp (w: [[R]]) (x: [R]) : R = sum (map (z. tanh z * tanh z) (matvec w x))\n");
  Plan *vg = plan_of_def(optimized("(value_and_grad mlp wrt w) [[1, 2], [3, 4]] [1, 1]"));
  int vgemv, vgemm;
  count_matrices(vg, &vgemv, &vgemm);
  ck_assert_msg(vgemv == 1 && vgemm == 0, "%d gemv, %d gemm\n%s", vgemv, vgemm, plan_str(vg));
  ck_assert_str_eq(val_to_string(tl_ev("(value_and_grad mlp wrt w) [[1, 2], [3, 4]] [1, 1]")),
                   val_to_string(tl_ev("(mlp [[1, 2], [3, 4]] [1, 1], (grad mlp wrt w) [[1, 2], [3, 4]] [1, 1])")));
  /* matmul's let of transpose b is left to the product */
  Plan *mp = plan_of_def(optimized("matmul [[1, 2]] [[3], [4]]"));
  const Term *let = mp->defs[1]->body;
  ck_assert(let->kind == T_LET && let->note && let->note->deferred);
  ck_assert_ptr_eq(let->kids[1]->note->matrix, mp->matrices[0]);
  ck_assert_ptr_eq(mp->matrices[0]->let, let);
  /* not when the transposed matrix is read elsewhere too */
  tl_run("def mmt (a: [[R]]) (b: [[R]]) = let bt = transpose b in map (r. map (c. dot r c) bt) (concat a bt)\n");
  mp = plan_of_def(optimized("mmt [[1, 2]] [[3, 4], [5, 6]]"));
  ck_assert_int_eq(mp->nmatrices, 1);
  ck_assert_ptr_null(mp->matrices[0]->let);
  ck_assert_str_eq(val_to_string(tl_ev("mmt [[1, 2]] [[3, 4], [5, 6]]")), "[[13, 16], [34, 42], [42, 52]]");
  /* the note is on the map, whose lambda is planned too (for the map as
     written); its values are those of the map */
  Plan *p = plan_of_def(optimized("inl [[1, 2], [3, 4]] [1, 10]"));
  const Term *map = p->defs[1]->body;
  ck_assert(map->kind == T_PRIM && map->prim == PRIM_MAP && map->note && map->note->matrix);
  ck_assert_ptr_eq(map->note->matrix, p->matrices[0]);
  ck_assert_int_eq(count_kind(p, PK_REDUCE), 1);
  ck_assert_str_eq(val_to_string(tl_ev("inl [[1, 2], [3, 4]] [1, 10]")), "[21, 43]");
  ck_assert_str_eq(val_to_string(tl_ev("mvsum [[1, 2], [3, 4]] [1, 10]")), "[22, 44]");
  ck_assert_str_eq(val_to_string(tl_ev("mm [[1, 2], [3, 4]] [[1, 0], [0, 1]]")), "[[1, 2], [3, 4]]");
  const char *s = plan_str(p);
  ck_assert_msg(strstr(s, "def inl (m: [[R]]) (x: [R]) : [R] =\n  b0 m x\n") != NULL, "%s", s);
  ck_assert_msg(strstr(s, "b0 = matrix-vector product (cblas_dgemv), element i = dot L0[i] L1: BLAS on the CPU; "
                          "on the GPU and under :cost, the map as written\n") != NULL,
                "%s", s);
}
END_TEST

/* The gradient of a loss over a matrix product: both adjoints are matrix
   products (G B and G^T A), not maps of rows; empty matrices too. */
START_TEST(matrix_product_adjoints) {
  tl_run("def mmloss (a: [[R]]) (bt: [[R]]) : R =\n"
         "  sum (map (row. sum (map (z. z * z) row)) (map (r. map (c. dot r c) bt) a))\n");
  Plan *p = plan_of_def(optimized("grad mmloss [[1, 2], [3, 4], [5, 6]] [[1, 0], [2, 1]]"));
  int gemv, gemm;
  count_matrices(p, &gemv, &gemm);
  ck_assert_msg(gemv == 0 && gemm == 3, "%d gemv, %d gemm\n%s", gemv, gemm, plan_str(p));
  /* A Bt^T = [[1, 4], [3, 10], [5, 16]], G = 2 A Bt^T; G Bt and G^T A */
  ck_assert_str_eq(val_to_string(tl_ev("grad mmloss [[1, 2], [3, 4], [5, 6]] [[1, 0], [2, 1]]")),
                   "([[18, 8], [46, 20], [74, 32]], [[70, 88], [228, 288]])");
  ck_assert_str_eq(val_to_string(tl_ev("grad mmloss ([] : [[R]]) [[1, 0], [2, 1]]")), "([], [[0, 0], [0, 0]])");
  ck_assert_str_eq(val_to_string(tl_ev("grad mmloss [[1, 2]] ([] : [[R]])")), "([[0, 0]], [])");
  /* Y written `transpose b` in the map: BLAS reads b (no transpose made) */
  tl_run("def tmm (a: [[R]]) (b: [[R]]) = map (r. map (c. dot r c) (transpose b)) a\n");
  Plan *tp = plan_of_def(optimized("tmm [[1, 2]] [[3, 4], [5, 6]]"));
  const char *ts = plan_str(tp);
  ck_assert_msg(strstr(ts, "L1 = transpose b computed only for the map as written (BLAS reads b)") != NULL, "%s", ts);
  ck_assert_str_eq(val_to_string(tl_ev("tmm [[1, 2], [0, 1]] [[3, 4], [5, 6]]")), "[[13, 16], [5, 6]]");
}
END_TEST

/* A layer applied per example, a map of matrix-vector products: in its
   gradient the replays of the products are one matrix product each
   (optimizer/fission.c), and so are the weight gradients, sums of outer
   products over the maps made; the values are the derived gradient's
   (unoptimized) to rounding. */
START_TEST(per_example_layers_batched) {
  tl_run("def mlp (w1: [[R]]) (b1: [R]) (w2: [[R]]) (b2: [R]) (x: [[R]]) : R =\n"
         "  sum (map (xi. let hid = map2 (z, b. tanh (z + b)) (matvec w1 xi) b1 in\n"
         "               sum (map2 (z, b. (z + b) * (z + b)) (matvec w2 hid) b2)) x)\n");
  const char *args = "[[0.1, -0.2, 0.3], [0.5, 0.1, -0.4]] [0.1, -0.1] [[1, -1], [0.5, 2]] [0.2, 0.3] "
                     "[[1, 2, 3], [0.5, -1, 2], [2, 0, -1], [1, 1, 1]]";
  Plan *p = plan_of_def(optimized(una_sprintf("(grad mlp wrt w1 b1 w2 b2) %s", args)));
  int gemv, gemm;
  count_matrices(p, &gemv, &gemm);
  ck_assert_msg(gemm >= 4, "%d gemv, %d gemm\n%s", gemv, gemm, plan_str(p));
  Value got = tl_ev(una_sprintf("(grad mlp wrt w1 b1 w2 b2) %s", args));
  Def *f = tl_def(tl_session, "mlp");
  int wrt[4] = {0, 1, 2, 3};
  Value in = tl_ev(una_sprintf("(%s)", "([[0.1, -0.2, 0.3], [0.5, 0.1, -0.4]], [0.1, -0.1], [[1, -1], [0.5, 2]], "
                                      "[0.2, 0.3], [[1, 2, 3], [0.5, -1, 2], [2, 0, -1], [1, 1, 1]])"));
  Value want = cpu_call(rev_grad(f, wrt, 4, REV_UNF), in.u.t->items);
  ck_assert_int_eq(tl_nreals(got), tl_nreals(want));
  for (int k = 0; k < tl_nreals(want); k++)
    ck_assert_msg(tl_near(*tl_real_at(&got, k), *tl_real_at(&want, k), 1e-12), "component %d: %.17g, %.17g", k,
                  *tl_real_at(&got, k), *tl_real_at(&want, k));
}
END_TEST

Suite *suite_plan(void) {
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("plan");
  tcase_add_checked_fixture(tc, tl_setup, tl_teardown);
  tcase_add_test(tc, map_fused_into_reduce);
  tcase_add_test(tc, lowering_is_pure_and_once);
  tcase_add_test(tc, siblings_grouped_in_the_plan);
  tcase_add_test(tc, calls_planned_with_the_caller);
  tcase_add_test(tc, dead_let_checked_not_computed);
  tcase_add_test(tc, grad_prod_printed);
  tcase_add_test(tc, matrix_products_recognized);
  tcase_add_test(tc, matrix_product_adjoints);
  tcase_add_test(tc, map3_over_variables_indexed);
  tcase_add_test(tc, per_example_layers_batched);
  suite_add_tcase(s, tc);
  return s;
}
