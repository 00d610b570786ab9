/* test_release.c: the arrays given back to the collector once dead
   (backend/plan/release.c, eval.c, loop_ops.c, array_ops.c): which lets
   and loops the plan marks, and that programs whose freed memory is
   reused at once compute what the evaluator without the fast paths
   (which gives nothing back) computes, bit for bit. */
#include <check.h>
#include <string.h>

#include "../../../backend/eval.h"
#include "../../../backend/plan/plan.h"
#include "../../../optimizer/program.h"
#include "../../suites.h"
#include "../../testlib.h"

static void setup(void) { tl_setup(); }
static void teardown(void) { tl_teardown(); }

static const Term *find_let(const Term *t, const char *name) {
  while (t) {
    if (t->kind == T_LET && !strcmp(t->sym->name, name)) return t;
    if (t->nkids == 0) return NULL;
    for (int i = 0; i + 1 < t->nkids; i++) {
      const Term *l = find_let(t->kids[i], name);
      if (l) return l;
    }
    t = t->kids[t->nkids - 1];
  }
  return NULL;
}

static const Term *find_loop(const Term *t) {
  while (t) {
    if (t->kind == T_PRIM && (t->prim == PRIM_LOOP_FOR || t->prim == PRIM_LOOP_WHILE)) return t;
    if (t->nkids == 0) return NULL;
    for (int i = 0; i + 1 < t->nkids; i++) {
      const Term *l = find_loop(t->kids[i]);
      if (l) return l;
    }
    t = t->kids[t->nkids - 1];
  }
  return NULL;
}

/* The plan of the unoptimized def name of tl_session. */
static const Term *planned_body(const char *name) { return plan_of_def(tl_def(tl_session, name))->def->body; }

static bool let_released(const char *def, const char *let) {
  const Term *l = find_let(planned_body(def), let);
  ck_assert_msg(l != NULL, "%s: no let %s", def, let);
  return l->note && l->note->release;
}

static bool loop_released(const char *def) {
  const Term *l = find_loop(planned_body(def));
  ck_assert_msg(l != NULL, "%s: no loop", def);
  return l->note && l->note->release;
}

static const char *const defs =
    "def consumed (x: [R]) : R = let a = map (v. v * 2) x in reduce (+) 0 a + a[3] + length a\n"
    "def returned (x: [R]) : [R] = let a = map (v. v * 2) x in a\n"
    "def viewed (x: [R]) : [R] = let a = map (v. v * 2) x in a[1:]\n"
    "def view_read (x: [R]) : [R] = let a = map (v. v * 2) x in map2 (+) x (concat [1] (shift1R a))\n"
    "def in_tuple (x: [R]) : ([R], R) = let a = map (v. v * 2) x in (a, 1)\n"
    "def in_if (x: [R]) (c: B) : [R] = let a = map (v. v * 2) x in if c then a else x\n"
    "def as_state (x: [R]) : [R] = let a = map (v. v * 2) x in loop y = a for i < 3 do map (v. v + 1) y\n"
    "def in_call (x: [R]) : [R] = let a = map (v. v * 2) x in returned a\n"
    "def in_lambda (x: [R]) : [R] = let a = map (v. v * 2) x in map (i. a[i] + a[0]) (iota 5)\n"
    "def over (x: [R]) (z: [R]) : [R] = let a = map (v. v * 2) x in map2 (+) a z\n"
    "def rows (x: [R]) : [[R]] = let a = map (v. v * 2) x in map (i. a) (iota 2)\n"
    "def stepper (x: [R]) (s: R) : [R] =\n"
    "  loop y = map (v. 0) x for i < s do\n"
    "    let k = map2 (*) x (concat [1] (shift1R y)) in\n"
    "    map2 (a, b. a + 0.25 * b) y (map2 (+) k (map (v. v * 0.5) k))\n"
    "def kept_state (x: [R]) (s: R) : [[R]] =\n"
    "  let ys = loop y = x for i < s do map2 (+) y (map2 (*) x y) in [ys, x]\n"
    "def saved (x: [R]) (s: R) : [R] = loop y = x for i < s do y\n"
    "def whiles (x: [R]) : [R] = loop y = x while y[0] < 100 do map2 (a, b. a * 1.5 + b) y (map2 (*) x y)\n";

START_TEST(lets_marked) {
  tl_run(defs);
  ck_assert(let_released("consumed", "a"));
  ck_assert(let_released("view_read", "a")); /* a shifted view read by a map */
  ck_assert(let_released("in_lambda", "a")); /* read in a map's function */
  const char *kept[] = {"returned", "viewed", "in_tuple", "in_if", "as_state", "in_call", "over", "rows"};
  for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
    ck_assert_msg(!let_released(kept[i], "a"), "%s: its a given back", kept[i]);
}
END_TEST

START_TEST(loops_marked) {
  tl_run(defs);
  ck_assert(loop_released("stepper"));
  ck_assert(loop_released("whiles"));
  ck_assert(!loop_released("saved"));       /* the body's value is the state itself */
  ck_assert(loop_released("kept_state"));   /* each state but the last: the loop's value is kept */
  char *out = tl_capture(tl_session, ":plan stepper [1, 2, 3] 2\n", true).out;
  ck_assert_ptr_nonnull(strstr(out, "each state but the first given back once the next is made"));
}
END_TEST

/* text evaluated (unoptimized and optimized) with the fast paths, which
   give arrays back, and without them: the same bits; returns how many
   buffers the fast paths gave back. */
static size_t same_as_kept(const char *text) {
  size_t before = val_given_back();
  Value fast = tl_ev(text);
  size_t n = val_given_back() - before;
  Exec slow = tl_exec_paths(true, false);
  Value w = tl_ev_with(&slow, text);
  ck_assert_msg(tl_same_bits(fast, w, false), "%s: the fast paths give another value", text);
  return n;
}

START_TEST(values_unchanged) {
  tl_run(defs);
  tl_run("let x = map (i. 1 + i / 1000) (iota 3000)\n"
         "let z = map (i. 2 - i / 3000) (iota 3000)\n");
  ck_assert_uint_gt(same_as_kept("stepper x 40"), 40);
  ck_assert_uint_gt(same_as_kept("whiles x"), 0);
  ck_assert_uint_gt(same_as_kept("consumed x"), 0);
  ck_assert_uint_gt(same_as_kept("view_read x"), 0);
  /* the ones that keep their arrays, with allocations after them that
     would reuse a buffer given back too early */
  const char *kept[] = {"(returned x, stepper x 5)", "(viewed x, stepper x 5)", "(in_tuple x, stepper x 5)",
                        "(in_if x true, stepper x 5)", "(as_state x, stepper x 5)", "(in_call x, stepper x 5)",
                        "(in_lambda x, stepper x 5)", "(over x z, stepper x 5)",
                        "(rows x, stepper x 5)", "(kept_state x 6, stepper x 5)", "(saved x 4, stepper x 5)",
                        "let a = map (v. v * 3) x in (stepper a 7, a, map2 (+) a (map (v. v + 1) a))"};
  for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) same_as_kept(kept[i]);
}
END_TEST

/* A map's array written as a map in place is given back once read. */
START_TEST(inline_map_given_back) {
  tl_run("let x = map (i. 1 + i / 1000) (iota 3000)\n");
  ck_assert_uint_gt(same_as_kept("loop y = x for i < 20 do map2 (+) y (map2 (*) x (map (v. v + 1) y))"), 20);
}
END_TEST

/* Only a buffer made for its array is given back: never a view, even one
   at the start of its buffer (a row of a matrix product computed for all
   rows at once, plan/note.h: batch, is such a view). */
START_TEST(views_never_given_back) {
  Array *a = val_new_real_array(6, fe_nospan);
  Array *v = val_view(a, 0, 2);
  size_t before = val_given_back();
  val_give_back(v);
  ck_assert_uint_eq(val_given_back(), before);
  val_give_back(a);
  ck_assert_uint_eq(val_given_back(), before + 1);
  tl_run("def layer (w: [[R]]) (b: [R]) (x: [[R]]) : [R] =\n"
         "  map (xi. let h = map2 (z, c. tanh (z + c)) (matvec w xi) b in sum h) x\n"
         "let W = [[1, 2], [3, 4]]\nlet X = map (i. [i, 1 - i]) (iota 300)\n");
  same_as_kept("(layer W [0, 0] [[1, 0], [0, 1], [1, 1]], layer W [0.5, 0] X)");
}
END_TEST

Suite *suite_release(void) {
  Suite *s = suite_create("release");
  TCase *tc = tcase_create("release");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, lets_marked);
  tcase_add_test(tc, loops_marked);
  tcase_add_test(tc, values_unchanged);
  tcase_add_test(tc, inline_map_given_back);
  tcase_add_test(tc, views_never_given_back);
  suite_add_tcase(s, tc);
  return s;
}
