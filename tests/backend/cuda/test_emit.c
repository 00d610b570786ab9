/* test_emit.c: the CUDA C that `:cuda e` prints (backend/plan/lower.c and
   emit.c), pinned per primitive by golden files in golden/NAME.cu (the
   text after the shared prelude). UNA_UPDATE_GOLDEN=1 rewrites them.
   Also: what is fused and what is not, the parameter lists, exact
   constants, and that :cuda needs no GPU. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../backend/cuda/emit.h"
#include "../../testlib.h"
#include "../../suites.h"

/* The definitions every case may use. */
static const char defs[] =
    "def scale (a: [R]) (s: R) : [R] = map (x. x * s + 1) a\n"
    "def chain (a: [R]) (b: [R]) : [R] = map2 (x, y. x * y) (map exp a) b\n"
    "def dotf (a: [R]) (b: [R]) : R = reduce (+) 0 (map2 (*) a b)\n"
    "def lastnz (a: [R]) : R = reduce (x, y. if y != 0 then y else x) 0 (map (x. x - 1) a)\n"
    "def cumprod (a: [R]) : [R] = scanl (*) 1 a\n"
    "def rsumsq (a: [R]) : [R] = scanr (+) 0 (map (x. x * x) a)\n"
    "def smooth (a: [R]) : [R] = scanl (acc, y. acc * 0.5 + y) 0 a\n"
    "def rsmooth (a: [R]) : [R] = scanr (y, acc. y - acc * 0.25) 0 a\n"
    "def horner (x: R) (cs: [R]) : R = foldl (acc, c. acc * x + c) 0 cs\n"
    "def fills (n: R) : R = sum (iota n) + sum (replicate n 2) + sum (rand n 7)\n"
    "def shifted (a: [R]) : [R] = map2 (-) (shift1L a) (shift1R a)\n"
    "def lse (a: [R]) : R = let m = maximum a in m + log (sum (map (x. exp (x - m)) a))\n"
    "def consts (a: [R]) : [R] = map (x. if x > 0.1 then -0 else 1e300 * x) a\n"
    "def angles (a: [R]) (b: [R]) : R = sum (map2 (y, x. atan2 y x) a b)\n"
    "def gammas (a: [R]) : R = sum (map (x. lgamma x + digamma x) a)\n";

typedef struct Case {
  const char *name; /* golden/NAME.cu */
  const char *expr; /* :cuda EXPR */
} Case;

static const Case cases[] = {
    {"map", "scale [1, 2] 3"},
    {"map2_fused", "chain [1] [2]"},
    {"reduce_fused", "dotf [1] [2]"},
    {"reduce_ordered", "lastnz [1, 2]"},
    {"scanl_monoid", "cumprod [1, 2]"},
    {"scanr_monoid_fused", "rsumsq [1, 2]"},
    {"scanl_seq", "smooth [1, 2]"},
    {"scanr_seq", "rsmooth [1, 2]"},
    {"foldl", "horner 2 [1, 2]"},
    {"fills", "fills 3"},
    {"shifts", "shifted [1, 2, 3]"},
    {"grad_prod", "grad prod [1, 2, 3]"},
    {"grad_logsumexp", "grad lse [1, 2, 3]"},
    {"constants", "consts [1]"},
    {"grad_dot_check_only", "grad dot [1] [2]"},
    {"atan2", "angles [1, 2] [3, 4]"},
    {"grad_atan2", "grad angles [1, 2] [3, 4]"},
    {"gammas", "gammas [1, 2]"},
    {"grad_gammas", "grad gammas [1, 2]"},
};

static char *golden_path(const char *name) {
  const char *root = getenv("UNA_ROOT");
  char *p = malloc(4096);
  snprintf(p, 4096, "%s/tests/backend/cuda/golden/%s.cu", root ? root : ".", name);
  return p;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

/* :cuda EXPR in a session with the prelude and defs (optimized unless
   optimize is false, as under -O0). */
static char *cuda_text_opt(const char *expr, bool optimize) {
  Session *s = tl_session_with(defs);
  s->optimize = optimize;
  char *cmd = una_sprintf(":cuda %s\n", expr);
  TlRun r = tl_capture(s, cmd, true);
  ck_assert_msg(r.ok, ":cuda %s failed: %s", expr, r.err);
  ck_assert_str_eq(r.err, "");
  return r.out;
}

static char *cuda_text(const char *expr) { return cuda_text_opt(expr, true); }

START_TEST(golden) {
  const Case *c = &cases[_i];
  char *out = cuda_text(c->expr);
  size_t np = strlen(gpu_emit_prelude);
  ck_assert_msg(strncmp(out, gpu_emit_prelude, np) == 0, "%s: the output does not start with the prelude", c->name);
  const char *body = out + np;
  char *path = golden_path(c->name);
  if (getenv("UNA_UPDATE_GOLDEN")) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(body, f);
    fclose(f);
  }
  char *want = slurp(path);
  ck_assert_msg(want != NULL, "missing golden file %s (UNA_UPDATE_GOLDEN=1 writes it)", path);
  ck_assert_msg(strcmp(body, want) == 0, "%s: :cuda %s differs from %s:\n%s", c->name, c->expr, path, body);
  free(want);
  free(path);
}
END_TEST

/* How many times needle occurs in hay. */
static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

START_TEST(fusion) {
  /* map2 over an inline map (the optimizer's fusion off, -O0): one kernel,
     the inner map a nested call */
  char *t = cuda_text_opt("chain [1] [2]", false);
  ck_assert_int_eq(count(t, "__global__"), 1);
  ck_assert_ptr_nonnull(strstr(t, "#define SRC(j_) (una_f0(una_f1(L0[(j_)], 0.0), L1[(j_)]))"));
  /* reduce of an inline map2: no map kernel */
  t = cuda_text("dotf [1] [2]");
  ck_assert_int_eq(count(t, "__global__"), 2); /* reduce's launches a and b */
  ck_assert_int_eq(count(t, "una_map"), 0);
  /* a map bound by let is its own kernel (it may be used twice) */
  t = cuda_text("let m = map (x. x + 1) [1, 2] in sum m + prod m");
  ck_assert_int_eq(count(t, "extern \"C\" __global__ void una_map"), 1);
  /* shifts are views: leaves of the map2, no kernel of their own */
  t = cuda_text("shifted [1, 2, 3]");
  ck_assert_int_eq(count(t, "__global__"), 1);
}
END_TEST

START_TEST(parameters) {
  /* a free variable of a lambda is a kernel parameter after the leaves */
  char *t = cuda_text("scale [1, 2] 3");
  ck_assert_ptr_nonnull(strstr(t, "long long n, double v,\n    const double *__restrict__ L0, double f0_i"));
  /* constants are exact literals; -0 keeps its sign, inf and nan as bits */
  t = cuda_text("consts [1]");
  ck_assert_ptr_nonnull(strstr(t, "-0.0"));
  ck_assert_ptr_nonnull(strstr(t, "1.0000000000000001e+300"));
  t = cuda_text("map (x. x * (1 / 0)) [1]");
  ck_assert_ptr_nonnull(strstr(t, "__longlong_as_double(0x7ff0000000000000LL)"));
}
END_TEST

/* A derivative operator as a map's function: its derived function, inlined
   in the body, is one kernel on the device. */
START_TEST(derivative_in_map) {
  char *t = cuda_text("map (grad (x. x * sin x)) [1, 2]");
  ck_assert_int_eq(count(t, "__global__"), 1);
  ck_assert_int_eq(count(t, "/* map at"), 1);
}
END_TEST

START_TEST(host_only) {
  /* nothing to launch: booleans, tuples and nested arrays stay on the host */
  char *t = cuda_text("map (x. x > 1) [1, 2]");
  ck_assert_int_eq(count(t, "__global__"), 0);
  t = cuda_text("map (x. (x, x)) [1, 2]");
  ck_assert_int_eq(count(t, "__global__"), 0);
  /* a body with an array builtin that does not depend on the element: the
     builtin is a kernel of its own, its value an input of the map's */
  t = cuda_text("let a = [1, 2] in map (x. x * sum a) a");
  ck_assert_int_eq(count(t, "/* reduce at"), 1);
  ck_assert_int_eq(count(t, "/* map at"), 1);
  ck_assert_ptr_nonnull(strstr(t, "una_f0(L0[(j_)], 0.0, f0_i"));
  /* one that does: the outer map (at 1:19) runs on the host, the inner
     builtins on the device: sum, inlined in the body, is one reduce with
     the map passed to it fused in */
  t = cuda_text("let a = [1, 2] in map (x. sum (map (y. sin (x * y)) a)) a");
  ck_assert_int_eq(count(t, "/* reduce at"), 1);
  ck_assert_int_eq(count(t, "/* map at"), 0);
  ck_assert_ptr_null(strstr(t, "/* map at t.una:1:19"));
}
END_TEST

START_TEST(errors) {
  /* :cuda checks its expression as any expression is checked */
  Session *s = tl_session_with(defs);
  TlRun r = tl_capture(s, ":cuda nosuch 1\n", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:1:7: error: unknown name 'nosuch'\n");
  r = tl_capture(s, ":cuda\n", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:1:1: error: ':cuda' needs an expression\n");
}
END_TEST

Suite *suite_cuda_emit(void) {
  Suite *s = suite_create("cuda_emit");
  TCase *tc = tcase_create("emit");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, golden, 0, (int)(sizeof cases / sizeof cases[0]));
  tcase_add_test(tc, fusion);
  tcase_add_test(tc, parameters);
  tcase_add_test(tc, derivative_in_map);
  tcase_add_test(tc, host_only);
  tcase_add_test(tc, errors);
  suite_add_tcase(s, tc);
  return s;
}
