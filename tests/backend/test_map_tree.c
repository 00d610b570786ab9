/* test_map_tree.c: a map whose arrays are maps written inline, computed
   in one compiled pass (backend/map_tree.c, jit_emit.c's una_tree): which
   maps the plan gives a pass (its print), that the pass, and the maps one
   after the other before it is compiled, give the bits of the maps as
   written (special values, empty, small and large arrays, a loop's state
   written over), and that their errors come in the same order. */
#include <check.h>
#include <unistd.h>

#include "../../backend/array_int.h"
#include "../../backend/eval.h"
#include "../../backend/jit.h"
#include "../suites.h"
#include "../testlib.h"

static char cache[] = "/tmp/una-test-tree-XXXXXX";

static void setup(void) {
  tl_setup();
  ck_assert_ptr_nonnull(mkdtemp(cache));
  setenv("UNA_CACHE_DIR", cache, 1);
}

static void teardown(void) {
  cpu_jit_set_mode(CPU_JIT_ENV);
  cpu_jit_wait();
  char *cmd = una_sprintf("rm -rf '%s'", cache);
  ck_assert_int_eq(system(cmd), 0);
  memcpy(cache + strlen(cache) - 6, "XXXXXX", 6);
  unsetenv("UNA_CACHE_DIR");
  tl_teardown();
}

static const char *const defs =
    "def special (i: R) : R =\n"
    "  let r = i - 7 * floor (i / 7) in\n"
    "  if r == 0 then 0 / 0 else if r == 1 then 1 / 0 else if r == 2 then -1 / 0\n"
    "  else if r == 3 then -0 else sin (i * 1.7) * 3\n"
    "def x = map (i. special i) (iota 1000)\n"
    "def y = map (i. special (i * 5 + 2)) (iota 1000)\n"
    "def z = map (i. cos i) (iota 1000)\n"
    "def big = map (i. sin (i * 0.001)) (iota 200000)\n"
    "def stage (y: [R]) (k1: [R]) (k2: [R]) (k3: [R]) (k4: [R]) : [R] =\n"
    "  map2 (a, b. a + 0.1 / 6 * b) y (map2 (p, q. p + 2 * q) (map2 (+) k1 k4) (map2 (+) k2 k3))\n"
    "def deep (a: [R]) (b: [R]) : [R] =\n"
    "  map (v. v * v - 1) (map2 (p, q. max p q / (1 + abs q)) (map (v. -v) a) (map2 (-) b a))\n";

static const char *const programs[] = {
    "stage x y z x y", "stage x y z (map (v. v * 0.5) x) y", "deep x y", "deep (x[0:5]) (y[0:5])",
    "deep ([] : [R]) ([] : [R])", "stage big big big big big",
    /* the pass is the loop's state map: written over the state */
    "loop s = z for i < 4 do map2 (a, b. a * 0.5 + b) s (map2 (*) z (map (v. v + 1) x))",
};
enum { NPROGRAMS = sizeof programs / sizeof programs[0] };

START_TEST(planned_and_printed) {
  tl_run(defs);
  char *out = tl_capture(tl_session, ":plan stage x y z x y\n", true).out;
  ck_assert_msg(strstr(out, "f0(L0[i], f1(f2(L1[i], L2[i]), f3(L3[i], L4[i]))); on the CPU one compiled loop"), "%s", out);
  /* an exp in a fused map: the maps as written; nothing fused: a kernel */
  out = tl_capture(tl_session, ":plan map2 (+) x (map exp y)\n", true).out;
  ck_assert_msg(!strstr(out, "compiled loop"), "%s", out);
  out = tl_capture(tl_session, ":plan map2 (+) x y\n", true).out;
  ck_assert_msg(!strstr(out, "compiled loop"), "%s", out);
}
END_TEST

START_TEST(same_bits_as_written) {
  tl_run(defs);
  Exec written = tl_exec_paths(true, false);
  for (int i = 0; i < NPROGRAMS; i++) {
    Value w = tl_copy_value(tl_ev_with(&written, programs[i]));
    cpu_jit_set_mode(CPU_JIT_OFF); /* the maps one after the other */
    size_t before = cpu_tree_passes();
    Value off = tl_ev(programs[i]);
    ck_assert_uint_eq(cpu_tree_passes(), before);
    ck_assert_msg(tl_same_bits(w, off, false), "%s: one map after the other differs", programs[i]);
    cpu_jit_set_mode(CPU_JIT_SYNC); /* the pass, compiled at once */
    Value on = tl_ev(programs[i]);
    ck_assert_msg(tl_same_bits(w, on, false), "%s: the pass differs: %s vs %s", programs[i], val_to_string(w),
                  val_to_string(on));
    if (i != 4) ck_assert_uint_gt(cpu_tree_passes(), before);
  }
}
END_TEST

/* The error text raised by text evaluated in ex ("" when none). */
static char *error_of(const Exec *ex, const char *text) {
  const Def *d = tl_check_in(tl_session, text);
  FeTry tr;
  if (fe_try(&tr)) {
    cpu_call_in(ex, d, NULL);
    fe_untry(&tr);
    return "";
  }
  return fe_error_text(tr.err);
}

/* The first error of the maps as written: an inner map2's lengths before
   the outer's, the left array's before the right's. */
START_TEST(errors_in_order) {
  tl_run(defs);
  cpu_jit_set_mode(CPU_JIT_SYNC);
  Exec written = tl_exec_paths(true, false);
  const char *bad[] = {"stage x y (z[0:9]) x y", "stage x y z (x[0:9]) y", "stage (x[0:9]) y z x y",
                       "deep x (y[0:9])", "stage x y z (x[0:9]) (y[0:8])"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *want = error_of(&written, bad[i]);
    ck_assert_msg(*want, "%s: no error as written", bad[i]);
    ck_assert_str_eq(error_of(&cpu_exec_default, bad[i]), want);
  }
}
END_TEST

Suite *suite_map_tree(void) {
  Suite *s = suite_create("map_tree");
  TCase *tc = tcase_create("map_tree");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, planned_and_printed);
  tcase_add_test(tc, same_bits_as_written);
  tcase_add_test(tc, errors_in_order);
  suite_add_tcase(s, tc);
  return s;
}
