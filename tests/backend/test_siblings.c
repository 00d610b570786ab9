/* test_siblings.c: sibling fusion (backend/siblings.c): which let chains
   form a group, that a group gives the bits each sibling gives alone (the
   generic path, which never groups, is the reference) at sizes below and
   above the parallel threshold, and that lengths that differ or an empty
   array leave the chain to the ordinary evaluation and its errors. */
#include <check.h>

#include "../../backend/array_ops.h"
#include "../../backend/eval.h"
#include "../../backend/parallel.h"
#include "../../backend/siblings.h"
#include "../../backend/plan/plan.h"
#include "../suites.h"
#include "../testlib.h"

static void setup(void) {
  tl_setup();
}

static void teardown(void) {
  tl_teardown();
}

/* The defs under test: lets of siblings over A and B (with free scalars),
   some closed by a tuple that holds more of them. */
static const char *const defs =
    "def lin (w: R) (b: R) (x: [R]) (y: [R]) =\n"
    "  let g = reduce (+) 0 (map2 (a, c. a * (w * a + b - c)) x y) in\n"
    "  let h = reduce (+) 0 (map2 (a, c. w * a + b - c) x y) in\n"
    "  let p = map2 (a, c. w * (w * a + b - c)) x y in\n"
    "  let q = map2 (a, c. -(w * a + b - c)) x y in\n"
    "  (g, h, p, q)\n"
    "def tup (x: [R]) (y: [R]) =\n"
    "  let g = map2 (a, c. sigmoid a - c) x y in\n"
    "  let m = reduce (max) (-inf) x in\n"
    "  (g, map (a. log (1 + a * a)) x, m, reduce (a, c. if a > c then a else c) (-inf) y, reduce (*) 1 y)\n"
    "def chain (x: [R]) =\n"
    "  let s = reduce (+) 0 x in\n"
    "  let t = map (a. a * 2) x in\n"
    "  let u = map (a. a + s) x in\n"
    "  (s, t, u)\n"
    "def dep (x: [R]) =\n"
    "  let t = map (a. a * 2) x in\n"
    "  let u = map2 (+) t x in\n"
    "  u\n"
    /* a tuple alone, with maps over indices beside maps over arrays (a
       jvp's primal and tangent): one kernel over the indices */
    "def idx (x: [R]) (y: [R]) =\n"
    "  (reduce (+) 0 (map2 (a, c. a * c - 1) x y), reduce (+) 0 (map (i. x[i] * 3 + exp y[i]) (iota (length x))),\n"
    "   map (i. x[i] - i) (iota (length y)), reduce (max) (-inf) (map (a. a * a) y))\n"
    "def cnt (n: R) (x: [R]) = (reduce (+) 0 (map (i. i * 2) (iota n)), reduce (+) 0 (map (a. a / 2) x))\n"
    "def rd (x: [R]) (y: [R]) = (map (i. x[i]) (iota (length y)), map (i. y[i] + 1) (iota (length y)))\n";

/* Whether the body of def `name` applied to args starts with a group. */
static bool groups(const char *name, int nargs, const Value *args) {
  const Def *d = plan_runnable(tl_def(tl_session, name)); /* the groups are the plan's */
  Value *frame = NEW_ARRAY(Value, d->nslots + 1);
  for (int i = 0; i < nargs; i++) frame[d->params[i]->slot] = args[i];
  const Term *t = d->body;
  Value r;
  bool whole = cpu_siblings(&cpu_exec_default, &t, frame, &r);
  return whole || t != d->body;
}

static void same_as_generic(size_t n) {
  tl_run(defs);
  tl_run(una_sprintf("let A = map (x. 2 * x - 1) (rand %zu 1)\nlet B = map (x. 2 * x - 1) (rand %zu 2)\n", n, n));
  tl_run(una_sprintf("let N = %zu\n", n));
  const char *calls[] = {"lin 0.7 (-0.3) A B", "tup A B", "chain A", "idx A B", "cnt N A", "rd A B"};
  for (int i = 0; i < 6; i++) {
    Value fast = tl_ev(calls[i]);
    Exec generic = tl_exec_paths(false, false);
    Value slow = tl_ev_with(&generic, calls[i]);
    ck_assert_msg(tl_same_bits(fast, slow, false), "n=%zu: %s: the group differs from the generic path", n, calls[i]);
  }
}

START_TEST(same_bits_small) { same_as_generic(1); }
END_TEST
START_TEST(same_bits_blocks) { same_as_generic(257); }
END_TEST
START_TEST(same_bits_chunked) { same_as_generic(CPU_PAR_MIN + 300); }
END_TEST

START_TEST(which_chains_group) {
  tl_run(defs);
  Value a = tl_ev("[1, 2, 3]"), b = tl_ev("[0.5, 0, -1]"), e = tl_ev("[]"), c = tl_ev("[1, 2]");
  Value lin[4] = {val_real(0.7), val_real(-0.3), a, b};
  ck_assert(groups("lin", 4, lin));
  Value two[2] = {a, b};
  ck_assert(groups("tup", 2, two));
  /* s is read by u: the group is s and t only (two siblings still) */
  ck_assert(groups("chain", 1, &a));
  /* u reads t: no group */
  ck_assert(!groups("dep", 1, &a));
  /* at run time: empty arrays, lengths that differ */
  Value empty[2] = {e, e};
  ck_assert(!groups("tup", 2, empty));
  Value differ[2] = {a, c};
  ck_assert(!groups("tup", 2, differ));
  /* over the indices: a tuple alone; counts must be the arrays' length */
  ck_assert(groups("idx", 2, two));
  ck_assert(!groups("idx", 2, differ));
  ck_assert(!groups("idx", 2, empty));
  Value cnt[2] = {val_real(3), a}, cnt_other[2] = {val_real(2), a}, cnt_frac[2] = {val_real(2.5), a};
  ck_assert(groups("cnt", 2, cnt));
  ck_assert(!groups("cnt", 2, cnt_other));
  ck_assert(!groups("cnt", 2, cnt_frac));
  ck_assert(groups("rd", 2, two)); /* x shorter than y: a group too, whose gather faults (below) */
}
END_TEST

static const char *err_of(const char *text) {
  TlRun r = tl_capture(tl_session, una_sprintf("%s\n", text), false);
  ck_assert_msg(!r.ok, "%s: no error", text);
  return r.err;
}

START_TEST(errors_as_ungrouped) {
  tl_run(defs);
  Def *d = tl_check("lin 1 2 [1, 2, 3] [1, 2]");
  FeTry t;
  if (fe_try(&t)) {
    cpu_call(d, NULL);
    fe_untry(&t);
    ck_abort_msg("no error");
  }
  ck_assert_str_eq(fe_error_text(t.err), "t.una:2:25: error: map2: lengths 3 and 2 differ");
  ck_assert_str_eq(val_to_string(tl_ev("tup [] []")), "([], [], -inf, -inf, 1)");
  ck_assert_str_eq(val_to_string(tl_ev("idx [] []")), "(0, 0, [], -inf)");
  ck_assert_str_eq(err_of("cnt 2.5 [1, 2]"),
                   "t.una:23:58: error: iota: size must be a non-negative integer, found 2.5\nt.una:1:1: note: called from here\n");
  /* the same error grouped as alone: the first index out of bounds, at its [ */
  const char *rd = "rd (map (i. i) (iota 50000)) (map (i. i) (iota 60000))";
  ck_assert_str_eq(err_of(rd),
                   "t.una:24:38: error: index 50000 out of bounds for an array of length 50000\nt.una:1:1: note: called from here\n");
}
END_TEST

Suite *suite_siblings(void) {
  Suite *s = suite_create("siblings");
  TCase *tc = tcase_create("siblings");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, which_chains_group);
  tcase_add_test(tc, same_bits_small);
  tcase_add_test(tc, same_bits_blocks);
  tcase_add_test(tc, same_bits_chunked);
  tcase_add_test(tc, errors_as_ungrouped);
  suite_add_tcase(s, tc);
  return s;
}
