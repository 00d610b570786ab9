/* test_jit.c: kernels compiled to native code (backend/jit.c,
   jit_emit.c) give the engine's bits: programs whose kernels hold every
   arithmetic operation the compiled loops do, operations they leave to
   the engine between them (exp, a gather, a loop), special values (nan,
   infinities, -0) and partial blocks, one element at a time (a small
   array, a fold's step) and whole scalar loops (for, while, a gather in
   the body, of reals or of tuples), whole ranges of a kernel with nothing left to the engine
   (written over its array too), run with the JIT off and with every
   kernel compiled at its first run; the library is found again in the
   process and on disk; a compiler that cannot run leaves the engine
   interpreting, with the same values. */
#include <check.h>
#include <unistd.h>

#include "../../backend/filecache.h"
#include "../../backend/jit.h"
#include "../../backend/kernel.h"
#include "../suites.h"
#include "../testlib.h"

static char cache[] = "/tmp/una-test-jit-XXXXXX";

static void setup(void) {
  tl_setup();
  ck_assert_ptr_nonnull(mkdtemp(cache));
  setenv("UNA_CACHE_DIR", cache, 1);
}

static void teardown(void) {
  cpu_jit_set_mode(CPU_JIT_ENV);
  cpu_jit_set_compiler(NULL);
  cpu_jit_wait();
  char *cmd = una_sprintf("rm -rf '%s'", cache);
  ck_assert_int_eq(system(cmd), 0);
  memcpy(cache + strlen(cache) - 6, "XXXXXX", 6);
  unsetenv("UNA_CACHE_DIR");
  tl_teardown();
}

/* 1000 values with nan, both infinities, -0, 0, integers and fractions of
   both signs: element i of x and, shifted, of y. */
static const char *const defs =
    "def special (i: R) : R =\n"
    "  let r = i - 11 * floor (i / 11) in\n"
    "  if r == 0 then 0 / 0 else if r == 1 then 1 / 0 else if r == 2 then -1 / 0\n"
    "  else if r == 3 then -0 else if r == 4 then 0 else if r == 5 then floor (i / 3) - 100\n"
    "  else sin (i * 1.3) * 4\n"
    "def x = map (i. special i) (iota 1000)\n"
    "def y = map (i. special (i * 7 + 3)) (iota 1000)\n"
    "def idx = map (i. 997 - i) (iota 997)\n"
    "def xy = zip (zip x y) x\n"
    /* every operation the compiled loops do, exp between them, temporaries
       used across it */
    "def every (x: [R]) (y: [R]) =\n"
    "  map2 (a, b. let s = a + b in let d = a - b in let m = a * b in let q = a / b in\n"
    "              let e = exp (m * 0.001) in\n"
    "              let c = if (a < b && !(a == b)) || a >= 2 then max s q else min d (-m) in\n"
    "              c + abs d * sqrt (abs q) + floor e - (if a != b then 1 else 0)\n"
    "                + (if a <= b then 2 else 0) + (if a > b then 3 else 0) + stop_gradient s * e) x y\n"
    /* a gather and a loop in the function */
    "def reads (x: [R]) (idx: [R]) =\n"
    "  map (i. let v = x[i] * 2 + 1 in (loop s = v for j < 3 do s * 0.5 + v - j) * v - i) idx\n"
    /* a reduce of a fused map, and two maps of one array as siblings */
    "def folds (x: [R]) (y: [R]) =\n"
    "  (reduce (+) 0 (map2 (a, b. a * b - a / (1 + b * b)) x y), map (a. a * 2 + 1) x, map (a. a * a - 3) x)\n"
    /* a long chain: temporaries share buffers */
    "def chain (x: [R]) =\n"
    "  map (a. let t1 = a * 1.5 + 2 in let t2 = t1 * t1 - a in let t3 = exp (t2 * 0.01) in\n"
    "          let t4 = t3 * a + t1 in let t5 = t4 / (1 + t2 * t2) in let t6 = log (1 + t5 * t5) in\n"
    "          t6 * t4 - t5 * t3 + t2 * t1) x\n";

static const char *const programs[] = {
    "every x y", "every (map (a. a * 3) x) y", "reads x idx", "folds x y", "chain x", "chain (x[0:300])",
    /* one element at a time: a small array, a fold's step, whole loops */
    "every (x[0:20]) (y[0:20])",
    "foldl ((s, m), v. (s + v * v / (1 + abs v), max m (v - s))) (0, -inf) (y[10:990])",
    "(loop (x, k) = (0.5, 0) while k < 1000 do (0.9 * x + 0.1 / (1 + x * x), k + 1)).1",
    "loop s = 1 for i < 500 do s * 0.99 + i / (1 + s * s)",
    "loop s = 0 for i < 997 do s * 0.5 + x[idx[i]] * (1 + s * s)",
    "loop s = (0, 1) for i < 997 do let ((a, b), c) = xy[idx[i]] in (s.1 * 0.5 + a * b, min s.2 (c - a))",
    /* all compiled: whole ranges, no blocks; written over the state */
    "map2 (a, b. (a * b - a / (b + 3)) * 0.5 + max a b - min (a - b) 1) x y",
    "loop z = map (v. v * 0.25) y for i < 3 do map (v. v * 0.5 + 1 / (1 + v * v)) z",
};
enum { NPROGRAMS = sizeof programs / sizeof programs[0] };

static void assert_same(const char *what, Value off, Value on) {
  ck_assert_msg(tl_same_bits(off, on, false), "%s: the compiled kernels' value differs: %s vs %s", what,
                val_to_string(off), val_to_string(on));
}

START_TEST(same_bits_as_the_engine) {
  tl_run(defs);
  Value off[NPROGRAMS];
  cpu_jit_set_mode(CPU_JIT_OFF);
  for (int i = 0; i < NPROGRAMS; i++) off[i] = tl_copy_value(tl_ev(programs[i]));
  CpuJitStats before = cpu_jit_stats();
  cpu_jit_set_mode(CPU_JIT_SYNC);
  for (int i = 0; i < NPROGRAMS; i++) assert_same(programs[i], off[i], tl_ev(programs[i]));
  CpuJitStats after = cpu_jit_stats();
  /* each program's kernels were compiled (or found), none failed */
  ck_assert_int_ge(after.compiled + after.disk - before.compiled - before.disk, 12);
  ck_assert_int_eq(after.failed, before.failed);
  /* again: the functions come from this process's table */
  for (int i = 0; i < NPROGRAMS; i++) assert_same(programs[i], off[i], tl_ev(programs[i]));
  CpuJitStats again = cpu_jit_stats();
  ck_assert_int_gt(again.memory, after.memory);
  ck_assert_int_eq(again.compiled, after.compiled);
}
END_TEST

START_TEST(no_compiler) {
  tl_run(defs);
  cpu_jit_set_mode(CPU_JIT_OFF);
  Value off = tl_copy_value(tl_ev("chain (map (a. a + 0.25) x)"));
  cpu_jit_set_compiler("/nonexistent/cc");
  cpu_jit_set_mode(CPU_JIT_SYNC);
  CpuJitStats before = cpu_jit_stats();
  assert_same("chain without a compiler", off, tl_ev("chain (map (a. a + 0.25) x)"));
  CpuJitStats after = cpu_jit_stats();
  ck_assert_int_gt(after.failed, before.failed);
  ck_assert_int_eq(after.compiled, before.compiled);
}
END_TEST

static void first_lam(const Term *node, void *ud) {
  const Term **out = ud;
  if (!*out && node->kind == T_LAM) *out = node;
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

START_TEST(source_of_a_kernel) {
  tl_run(defs);
  /* chain's function: a loop for the arithmetic before exp, one between
     exp and log, one after; exp and log left to the engine */
  Def *d = tl_check("map (a. let t1 = a * 1.5 + 2 in let t2 = t1 * t1 - a in let t3 = exp (t2 * 0.01) in\n"
                    "  let t4 = t3 * a + t1 in let t5 = t4 / (1 + t2 * t2) in let t6 = log (1 + t5 * t5) in\n"
                    "  t6 * t4 - t5 * t3 + t2 * t1) x");
  const Term *lam = NULL;
  tl_walk(d->body, first_lam, &lam);
  ck_assert_ptr_nonnull(lam);
  const CpuKernel *k = cpu_kernel_compile(lam);
  ck_assert_ptr_nonnull(k);
  char *src = cpu_jit_block_source(k);
  ck_assert_ptr_nonnull(src);
  ck_assert_int_eq(count(src, "static void g"), 3);
  ck_assert_int_eq(count(src, "one(run, n, p, "), 2);
  /* only what is read after a run is stored: t1, t2, exp's operand, t4,
     t5, log's operand and the result */
  ck_assert_msg(count(src, "[i] = r") == 7, "%s", src);
  /* a kernel of one instruction has nothing to compile */
  const Term *one = NULL;
  tl_walk(tl_check("map (a. exp a) x")->body, first_lam, &one);
  ck_assert_ptr_null(cpu_jit_block_source(cpu_kernel_compile(one)));
}
END_TEST

Suite *suite_jit(void) {
  Suite *s = suite_create("jit");
  TCase *tc = tcase_create("jit");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, same_bits_as_the_engine);
  tcase_add_test(tc, no_compiler);
  tcase_add_test(tc, source_of_a_kernel);
  suite_add_tcase(s, tc);
  return s;
}
