/* check_gpu.c: the tests that need a GPU (`make check-gpu`; DEVELOPERS.md
   says how to run them on a machine with one). Not part of `make check`.

   - corpus: every program of the gradient corpus (tests/reverse/corpus.c),
     its primal and its optimized gradient, evaluated on the GPU from
     device-resident inputs and on the CPU, at lengths 0, 1, 2, 255, 256,
     257, 4095, 4097, 65537 and 1000003 (and 2^24 + 1 and 2^27 for the
     array programs named in BIG), compared component by component:
     |gpu - cpu| <= tol max(|cpu_i|, max_j |cpu_j|, DBL_MIN) (relative to the
     component's largest element, so that the reassociation that reduce
     and the parallel scans permit, and a few ulps of exp or log, pass);
     the worst difference per program is printed, with the two times at
     the largest length.
   - session: the REPL's paths on the GPU: :device gpu, a located map2
     length error that leaves the session usable, device out of memory,
     values printed from device arrays, switching back to the CPU.
   - cache: a program's kernels come from the disk cache when the
     in-memory one is empty.
   The tests run in this process (CK_NOFORK): one CUDA context.

   UNA_CHECK_GPU_FROM=NAME runs the corpus from the program NAME on (a run
   cut short by a time limit goes on from there);
   UNA_CHECK_GPU_MAX_LENGTH caps the lengths (at its square root for the
   programs that launch kernels per element): `make check` runs this binary
   with its kernels compiled for the host and run on the CPU by the stand-in
   driver and NVRTC (tests/backend/cuda/fake_*.c; `make check-gpu-host`),
   where a launch of many blocks takes long. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../../backend/cuda/cublas.h"
#include "../../backend/cuda/driver.h"
#include "../../backend/cuda/gpu_blas.h"
#include "../../backend/cuda/gpu_eval.h"
#include "../../backend/cuda/kcache.h"
#include "../../backend/eval.h"
#include "../../derive/derive.h"
#include "../../frontend/ir/strbuf.h"
#include "../../optimizer/program.h"
#include "../reverse/corpus.h"
#include "../reverse/gradcheck.h"
#include "../testlib.h"

static const size_t lengths[] = {0, 1, 2, 255, 256, 257, 4095, 4097, 65537, 1000003};
static const size_t big_lengths[] = {((size_t)1 << 24) + 1, (size_t)1 << 27};
/* The corpus programs also run at big_lengths. */
static const char *const BIG[] = {"prod", "sum", "dot", "map2 (*) v v", "logsumexp", "softmax cross-entropy",
                                  "relu", "horner", "free variables in map2 with the elements", NULL};
#define TOL 1e-12
static size_t max_length = SIZE_MAX; /* $UNA_CHECK_GPU_MAX_LENGTH */
static const char *first_program;    /* $UNA_CHECK_GPU_FROM: the corpus from this program on */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The reals of v, flattened in order, into *out (grown as needed). */
typedef struct Reals {
  double *x;
  size_t n, cap;
} Reals;

static void push(Reals *r, double x) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->x = realloc(r->x, r->cap * sizeof(double));
  }
  r->x[r->n++] = x;
}

static void flatten(Value v, Reals *r) {
  switch (v.kind) {
  case V_REAL: push(r, v.u.r); return;
  case V_BOOL: push(r, v.u.b); return;
  case V_TUPLE:
    for (int i = 0; i < v.u.t->n; i++) flatten(v.u.t->items[i], r);
    return;
  case V_ARRAY: {
    const Array *a = v.u.a;
    val_host(a);
    if (!a->boxed) {
      for (size_t i = 0; i < a->len; i++) push(r, a->r[i]);
      return;
    }
    for (size_t i = 0; i < a->len; i++) flatten(a->v[i], r);
    return;
  }
  case V_CLOSURE: return;
  }
}

/* The worst difference of gpu from cpu, each component (a tuple item at
   the top) scaled by its largest element; raises nothing. *where says
   which element it is, with the two values. */
static double worst_diff(Value cpu, Value gpu, char **where) {
  if (cpu.kind == V_TUPLE) {
    double w = 0;
    for (int i = 0; i < cpu.u.t->n; i++) {
      char *at = NULL;
      double d = worst_diff(cpu.u.t->items[i], gpu.u.t->items[i], &at);
      if (d > w) *where = una_sprintf("item %d, %s", i, at);
      w = fmax(w, d);
    }
    return w;
  }
  Reals c = {0}, g = {0};
  flatten(cpu, &c);
  flatten(gpu, &g);
  if (c.n != g.n) {
    *where = una_sprintf("%zu elements on the CPU, %zu on the GPU", c.n, g.n);
    return INFINITY;
  }
  /* at least DBL_MIN: a reassociated product that underflows rounds its
     subnormal results differently, by whole units of 2^-1074 */
  double scale = DBL_MIN, w = 0;
  for (size_t i = 0; i < c.n; i++)
    if (isfinite(c.x[i])) scale = fmax(scale, fabs(c.x[i]));
  for (size_t i = 0; i < c.n; i++) {
    double a = c.x[i], b = g.x[i];
    if (a == b || (isnan(a) && isnan(b))) continue;
    double d = !isfinite(a) || !isfinite(b) ? INFINITY : fabs(a - b) / fmax(fabs(a), scale);
    if (d > w) *where = una_sprintf("element %zu of %zu: CPU %.17g, GPU %.17g", i, c.n, a, b);
    w = fmax(w, d);
  }
  free(c.x);
  free(g.x);
  return w;
}

/* The tolerance at arrays of n elements: TOL up to a million, then growing
   as the square root of n, as the rounding errors of a long reassociated
   reduction or scan do (a product scan of 2^27 elements differs by some
   1e-11 between two orders of evaluation). */
static double tolerance(size_t n) { return n <= 1000000 ? TOL : TOL * sqrt((double)n / 1e6); }

/* Programs allowed more than tolerance(): a sequential chain of n
   dependent exp and log, each of which may round one ulp differently with
   CUDA's libdevice than on the CPU; the differences add up along the
   chain (2.3e-12 at 10^6 on an H200, 2026-11-27). */
static const struct {
  const char *name;
  double factor;
} looser[] = {{"reduce log-sum-exp body", 10}};

static double program_tolerance(const char *name, size_t n) {
  for (size_t i = 0; i < sizeof looser / sizeof looser[0]; i++)
    if (strcmp(looser[i].name, name) == 0) return looser[i].factor * tolerance(n);
  return tolerance(n);
}

/* Runs d on args on the CPU and on the GPU (args copied to the device
   first); returns the worst difference; *cpu_ms and *gpu_ms get the times.
   A difference above tol is a failure, recorded in *failures
   when it is given (the caller fails at the end), else at once. */
static double compare(const Def *d, const Value *args, int nargs, double tol, const char *what, double *cpu_ms,
                      double *gpu_ms, StrBuf *failures) {
  double t0 = now_ms();
  Value c = cpu_call(d, args);
  double t1 = now_ms();
  Value *dargs = NEW_ARRAY(Value, nargs + 1);
  for (int i = 0; i < nargs; i++) dargs[i] = gpu_to_device(args[i], fe_nospan);
  gpu_call(d, dargs); /* compiles and loads (timed apart) */
  double t2 = now_ms();
  Value g = gpu_call(d, dargs);
  double t3 = now_ms();
  *cpu_ms = t1 - t0;
  *gpu_ms = t3 - t2;
  char *where = "";
  double w = worst_diff(c, g, &where);
  if (w > tol) {
    char *msg = una_sprintf("%s: GPU and CPU differ by %.3g (relative; tolerance %.2g) at %s", what, w, tol, where);
    ck_assert_msg(failures != NULL, "%s", msg);
    sb_printf(failures, "%s%s", failures->n ? "\n" : "", msg);
  }
  return w;
}

/* Whether an array builtin runs inside a lambda of t (or of a function t
   calls): a launch per element, so that the work grows as the square of
   the length. */
static bool nested(const Term *t, bool in_lam) {
  if (!t) return false;
  if (t->kind == T_PRIM && fe_prims[t->prim].cls == P_ARRAY && in_lam) return true;
  if (t->kind == T_CALL && nested(t->def->body, in_lam)) return true;
  for (int i = 0; i < t->nkids; i++)
    if (nested(t->kids[i], in_lam || t->kind == T_LAM)) return true;
  return false;
}

static bool is_big(const char *name) {
  for (int i = 0; BIG[i]; i++)
    if (strcmp(BIG[i], name) == 0) return true;
  return false;
}

START_TEST(corpus) {
  printf("%-45s %8s %10s %10s %10s\n", "program", "largest", "worst diff", "CPU ms", "GPU ms");
  OptOptions o = {0};
  o.enabled = true;
  o.check_passes = true; /* the type checker after every pass */
  StrBuf failures = {0}; /* every program's, reported at the end */
  int from = 0;
  if (first_program) {
    while (from < gc_ncorpus && strcmp(gc_corpus[from].name, first_program) != 0) from++;
    ck_assert_msg(from < gc_ncorpus, "UNA_CHECK_GPU_FROM: no corpus program named '%s'", first_program);
  }
  for (int ci = from; ci < gc_ncorpus; ci++) {
    const GcCase *gc = &gc_corpus[ci];
    char *err = NULL;
    GcProgram *p = gc_load("<corpus>", gc->src, true, "f", &err);
    ck_assert_msg(p != NULL, "%s: %s", gc->name, err);
    int *wrt = NEW_ARRAY(int, p->f->nparams + 1);
    int nwrt = gc_wrt(p, gc->wrt, wrt);
    Def *defs[2] = {opt_optimize_program(p->f, &o), NULL};
    if (nwrt > 0) defs[1] = opt_optimize_program(rev_grad(p->f, wrt, nwrt, REV_UNF), &o);
    size_t all[16], most = max_length;
    if (most < SIZE_MAX && nested(defs[0]->body, false)) most = (size_t)sqrt((double)most);
    int nl = 0;
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
      if (lengths[i] <= most) all[nl++] = lengths[i];
    if (is_big(gc->name))
      for (size_t i = 0; i < sizeof big_lengths / sizeof big_lengths[0]; i++)
        if (big_lengths[i] <= most) all[nl++] = big_lengths[i];
    double worst = 0, cms = 0, gms = 0;
    size_t largest = 0;
    for (int li = 0; li < nl; li++) {
      GenRng rng = gen_rng(1000 + (uint64_t)li);
      Value *args = NEW_ARRAY(Value, p->f->nparams + 1);
      for (int i = 0; i < p->f->nparams; i++)
        args[i] = gc_random_value(&rng, p->f->params[i]->type, all[li], 0.5, 1.5);
      for (int k = 0; k < 2; k++) {
        if (!defs[k]) continue;
        char *what = una_sprintf("%s (%s) at length %zu", gc->name, k ? "gradient" : "primal", all[li]);
        double c, g;
        worst = fmax(worst, compare(defs[k], args, p->f->nparams, program_tolerance(gc->name, all[li]), what, &c, &g,
                                    &failures));
        if (k == 1 || !defs[1]) {
          cms = c;
          gms = g;
        }
      }
      largest = all[li];
    }
    printf("%-45.45s %8zu %10.2g %10.2f %10.2f\n", gc->name, largest, worst, cms, gms);
    fflush(stdout);
  }
  ck_assert_msg(failures.n == 0, "%s", sb_str(&failures));
}
END_TEST

/* The session on the GPU, as a user drives it. */
START_TEST(session) {
  Session *s = tl_session_with("");
  TlRun r = tl_capture(s, ":device gpu\n:device\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "gpu\n") == 0, "%s%s", r.out, r.err);
  r = tl_capture(s, "let a = rand 1000000 1\nsum (map (x. 2 * x) a) / length a\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  double m = atof(r.out);
  ck_assert_msg(fabs(m - 1.0) < 0.01, "mean of 2 * rand: %s", r.out);
  /* the same numbers as the CPU's rand, printed from a device array */
  r = tl_capture(s, "rand 3 42\n:device cpu\nrand 3 42\n:device gpu\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  char *second = strchr(r.out, '\n');
  ck_assert_ptr_nonnull(second);
  ck_assert_msg(strncmp(r.out, second + 1, (size_t)(second - r.out)) == 0, "%s", r.out);
  /* a located error, then the session goes on */
  r = tl_capture(s, "map2 (+) (iota 3) (iota 4)\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "t.una:1:1: error: map2: lengths 3 and 4 differ") != NULL, "%s", r.err);
  r = tl_capture(s, "length (rand 1e11 1)\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "out of memory") != NULL || strstr(r.err, "cannot allocate") != NULL, "%s", r.err);
  r = tl_capture(s, "sum (iota 10)\n:device\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "45\ngpu\n") == 0, "%s%s", r.out, r.err);
  /* scans and shifts on the device, printed */
  r = tl_capture(s, "scanl (+) 0 (iota 5)\nshift1L (scanr (*) 1 [1, 2, 3])\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "[0, 0, 1, 3, 6, 10]\n[6, 3, 1]\n") == 0, "%s%s", r.out, r.err);
  /* matrix products: the map as written (BLAS runs only on the CPU) */
  r = tl_capture(s, "matvec [[1, 2], [3, 4]] [1, 10]\nmatmul [[1, 2], [3, 4]] [[5, 6], [7, 8]]\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "[21, 43]\n[[19, 22], [43, 50]]\n") == 0, "%s%s", r.out, r.err);
  /* grad on the GPU, the prelude's functions included */
  r = tl_capture(s, "grad prod [1, 2, 3, 4]\ngrad logsumexp [0, 0]\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "[24, 12, 8, 6]\n[0.5, 0.5]\n") == 0, "%s%s", r.out, r.err);
}
END_TEST

/* a[i] in a kernel: a gather on the device, its faults raised at the [ */
START_TEST(gathers) {
  Session *s = tl_session_with("");
  TlRun r = tl_capture(s, ":device gpu\nlet a = map (x. x * 10) (iota 1000)\n"
                          "sum (map (i. a[i]) (iota 1000))\n"
                          "map (i. a[i] + a[999 - i]) [0, 1, 998]\n"
                          "reduce (+) 0 (map (i. a[i] * 2) (iota 1000))\n"
                          "let w = [0.5, 0.25]\nmap (i. w[i] * a[i]) [0, 1]\n",
                       true);
  ck_assert_msg(r.ok && strcmp(r.out, "4995000\n[9990, 9990, 9990]\n9990000\n[0, 2.5]\n") == 0, "%s%s", r.out, r.err);
  r = tl_capture(s, "sum (map (i. a[i]) (map (x. x + 1) (iota 1000)))\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "t.una:1:15: error: index 1000 out of bounds for an array of length 1000") != NULL,
                "%s", r.err);
  r = tl_capture(s, "map (i. a[i]) [0.5]\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "t.una:1:10: error: index 0.5 is not an integer") != NULL, "%s", r.err);
  r = tl_capture(s, "a[3]\n:cuda map (i. a[i]) [1]\n", true);
  ck_assert_msg(r.ok && strncmp(r.out, "30\n", 3) == 0 && strstr(r.out, "una_gather(") != NULL, "%s%s", r.out, r.err);
  /* a for loop in a map's body: a loop in the kernel, the CPU's bits */
  const char *loops = "def newton (c: R) : R = (loop (x, k) = (c, 0) for i < 30 do ((x + c / x) / 2, k + 1)).1\n"
                      "map newton [2, 3, 4]\n"
                      "sum (map (y. loop x = y for i < 5 do loop z = x for j < 3 do z * 0.5 + a[i + j]) (iota 100))\n"
                      "map (y. loop x = y while x < 100 do x * 2) [1, 3, 200]\n"
                      "map (y. (loop (x, k) = (y + 1, 0) while abs (x * x - y - 1) > 1e-9 && k < 60 do "
                      "((x + (y + 1) / x) / 2, k + 1)).1) [0, 1, 2, 5, 99, 1e6]\n";
  TlRun g = tl_capture(s, loops, true);
  TlRun c = tl_capture(s, una_sprintf(":device cpu\n%s:device gpu\n", loops), true);
  ck_assert_msg(g.ok && c.ok && strcmp(g.out, c.out) == 0, "gpu %s%s, cpu %s%s", g.out, g.err, c.out, c.err);
  ck_assert_msg(strncmp(g.out, "[1.414213562373095, 1.7320508075688772, 2]\n", 43) == 0, "%s", g.out);
  r = tl_capture(s, ":cuda map newton [2]\n", true);
  ck_assert_msg(r.ok && strstr(r.out, "for (long long una_i") != NULL, "%s%s", r.out, r.err);
}
END_TEST

/* reduce_by_index (+ * max min) of [R]s: the values combined on the
   device (atomics),
   the CPU's results and errors, in the CPU's order */
START_TEST(scatters) {
  Session *s = tl_session_with("");
  const char *prog = "let a = map (x. x * 10) (iota 1000)\n"
                     "reduce_by_index (replicate 4 1) (+) 0 (map (i. i - 4 * floor (i / 4)) (iota 1000)) a\n"
                     "reduce_by_index [0, 0, 0] (+) 0 [2, 0, 2] (map (i. a[i] + 0.5) [1, 2, 3])\n"
                     "let d = [1, 2]\nreduce_by_index d (+) 0 [1] [5]\nd\n"
                     "reduce_by_index ([] : [R]) (+) 0 [] []\n"
                     "sum (reduce_by_index (replicate 10 0) (+) 0 (map (x. 7) a) (map (x. x / 8) a))\n"
                     "reduce_by_index [0, 5, 1] (max) 0 (map (i. i - 3 * floor (i / 3)) (iota 1000)) (map (x. sin x) a)\n"
                     "reduce_by_index [1, 1, 1] (min) 0 [0, 2, 2, 0] [3, -1, nan, 4]\n"
                     "reduce_by_index [1, 2] (*) 1 [1, 1, 0] [0.5, 4, 8]\n";
  TlRun g = tl_capture(s, una_sprintf(":device gpu\n%s", prog), true);
  TlRun c = tl_capture(s, una_sprintf(":device cpu\n%s:device gpu\n", prog), true);
  ck_assert_msg(g.ok && c.ok && strcmp(g.out, c.out) == 0, "gpu %s%s, cpu %s%s", g.out, g.err, c.out, c.err);
  ck_assert_msg(strcmp(g.out, "[1245001, 1247501, 1250001, 1252501]\n[20.5, 0, 41]\n[1, 7]\n[1, 2]\n[]\n624375\n"
                        "[0.99975182701909, 5, 1]\n[1, 1, nan]\n[8, 4]\n") == 0, "%s", g.out);
  /* the first bad index in order, and a count that differs */
  TlRun r = tl_capture(s, "reduce_by_index [0, 0] (+) 0 [0, 3, 1.5, 2] [1, 2, 3, 4]\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "t.una:1:1: error: index 3 out of bounds for an array of length 2") != NULL, "%s", r.err);
  r = tl_capture(s, "reduce_by_index [0, 0] (+) 0 [0, 1.5] [1, 2]\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "t.una:1:1: error: index 1.5 is not an integer") != NULL, "%s", r.err);
  r = tl_capture(s, "reduce_by_index [0, 0] (+) 0 [0, 1] [1]\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "reduce_by_index: 2 indices but 1 values") != NULL, "%s", r.err);
  /* a value's own fault (a gather) comes before a bad index */
  r = tl_capture(s, "reduce_by_index [0, 0] (+) 0 [5, 0] (map (i. a[i]) [0, 2000])\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "index 2000 out of bounds for an array of length 1000") != NULL, "%s", r.err);
  r = tl_capture(s, ":cuda reduce_by_index [0, 0] (+) 0 [1, 0] (map (x. x * 2) [3, 4])\n", true);
  ck_assert_msg(r.ok && strstr(r.out, "atomicAdd(&out[") != NULL, "%s%s", r.out, r.err);
  r = tl_capture(s, ":cuda reduce_by_index [0, 0] (max) 0 [1, 0] [3, 4]\n", true);
  ck_assert_msg(r.ok && strstr(r.out, "atomicCAS(p, was") != NULL && strstr(r.out, "una_max(a, x)") != NULL, "%s%s",
                r.out, r.err);
}
END_TEST

/* map3 over three [R] variables: one kernel that reads them at each index
   (its function's gathers), with the CPU's results and errors. */
START_TEST(map3s) {
  Session *s = tl_session_with("");
  const char *prog = "def f (a: [R]) (b: [R]) (c: [R]) : [R] = map3 (x, y, z. x * y + z * a[0]) a b c\n"
                     "let u = map (x. x - 2500) (iota 5000)\nlet v = map (x. 2 * x) (iota 5000)\n"
                     "let r = f u v (map (x. 1 - x) v)\nsum r\n(r[0], r[4999])\n"
                     "f [1, 2, 3] [4, 5, 6] [7, 8, 9]\n"
                     "f [] [] []\n"
                     "def g (w: [R]) (a: [R]) (b: [R]) (c: [R]) : R = sum (map3 (x, y, z. x * w[y] + z) a b c)\n"
                     "g [0.5, 2] [1, 2, 3] [0, 1, 1] [10, 20, 30]\n";
  TlRun g = tl_capture(s, una_sprintf(":device gpu\n%s", prog), true);
  TlRun c = tl_capture(s, una_sprintf(":device cpu\n%s:device gpu\n", prog), true);
  ck_assert_msg(g.ok && c.ok && strcmp(g.out, c.out) == 0, "gpu %s%s, cpu %s%s", g.out, g.err, c.out, c.err);
  ck_assert_msg(strstr(g.out, "[11, 18, 27]\n[]\n70.5\n") != NULL, "%s", g.out);
  /* the lengths checked in the CPU's words; a fault in the function */
  TlRun r = tl_capture(s, "f [1, 2, 3] [4, 5, 6] [7, 8]\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "error: map3: lengths 3, 3 and 2 differ") != NULL, "%s", r.err);
  r = tl_capture(s, "g [0.5, 2] [1, 2, 3] [0, 5, 1] [10, 20, 30]\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "error: index 5 out of bounds for an array of length 2") != NULL, "%s", r.err);
  r = tl_capture(s, ":cuda f [1] [2] [3]\n", true);
  ck_assert_msg(r.ok && strstr(r.out, "una_map3_") != NULL && strstr(r.out, "una_gather(") != NULL, "%s%s", r.out,
                r.err);
}
END_TEST

/* Matrix products (the plan's bN) with cuBLAS: matvec, matmul (B's
   transpose left to the product), a^T v, rows times rows, a literal
   matrix (its rows gathered), a loop's products with one matrix (copied
   to the device once), the CPU's values (integers: exact in any order)
   and errors; each product one cuBLAS call. */
START_TEST(products) {
  Session *s = tl_session_with("");
  const char *prog = "def bt (b: [[R]]) (v: [R]) : [R] = let t = transpose b in map (p. dot p v) t\n"
                     "def rr (a: [[R]]) (c: [[R]]) : [[R]] = map (p. map (q. dot p q) c) a\n"
                     "let m = map (i. map (j. i - 2 * j) (iota 300)) (iota 200)\n"
                     "let x = map (j. j - 100) (iota 300)\n"
                     "let b = map (i. map (j. i + j) (iota 50)) (iota 300)\n"
                     "let y = matvec m x\n(length y, sum y, y[0], y[199])\n"
                     "let c = matmul m b\n(length c, length c[0], sum (map sum c), c[3][7])\n"
                     "let z = bt b x\n(length z, sum z, z[49])\n"
                     "let r = rr m (map (i. map (j. i * j - 5) (iota 300)) (iota 20))\n(length r, sum (map sum r), r[199][19])\n"
                     "matvec [[1, 2], [3, 4], [5, 6]] [1, -1]\n"
                     "let p = map (i. map (j. i + j - 7 * floor ((i + j) / 7)) (iota 64)) (iota 64)\n"
                     "let q = matmul p (map (i. map (j. i - j - 5 * floor ((i - j) / 5)) (iota 64)) (iota 64))\n"
                     "(q[3][5], sum (map sum q))\n";
  /* a product's rows are one host buffer: the loop's four products copy q once */
  const char *loop = "sum (loop v = iota 64 for i < 4 do map (t. t - 11 * floor (t / 11)) (matvec q v))\n";
  size_t before = gpu_blas_products();
  TlRun g = tl_capture(s, una_sprintf(":device gpu\n%s", prog), true);
  size_t on_gpu = gpu_blas_products() - before, copied = gpu_blas_copies();
  TlRun gl = tl_capture(s, loop, true);
  copied = gpu_blas_copies() - copied;
  TlRun c = tl_capture(s, una_sprintf(":device cpu\n%s:device gpu\n", prog), true);
  ck_assert_msg(g.ok && c.ok && strcmp(g.out, c.out) == 0, "gpu %s%s, cpu %s%s", g.out, g.err, c.out, c.err);
  ck_assert_msg(strstr(g.out, "[-1, -1, -1]\n") != NULL, "%s", g.out);
  /* (a GPU machine without libcublas runs them as written) */
  ck_assert_msg(on_gpu == (cuda_blas_open() ? 6u : 0u), "%zu products with cuBLAS", on_gpu);
  ck_assert_msg(gl.ok && strcmp(gl.out, "504\n") == 0, "%s%s", gl.out, gl.err);
  ck_assert_msg(copied == (cuda_blas_open() ? 1u : 0u), "q copied %zu times", copied);
  ck_assert_msg(strstr(g.out, "(387, 1572100)\n") != NULL, "%s", g.out);
  /* a row of another length: the map as written raises map2's error */
  TlRun r = tl_capture(s, "matvec [[1, 2], [3]] [1, 1]\n", false);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "map2: lengths 1 and 2 differ") != NULL, "%s", r.err);
}
END_TEST

/* The gradients of the language-2 constructs (reverse/jt_prim.h) through
   the plan on the device, against the CPU. */
static const char *const grad_programs[] = {
    "def f (a: [R]) : R = a[0] * a[length a - 1] + a[1] * a[1] + sum (map (x. x * x) a[1:])",
    "def f (a: [R]) (b: [R]) : R = sum (map (i. a[i] * b[length b - 1 - i] + a[0] * a[i]) (map (k. floor (k / 2)) (iota (length a))))",
    "def f (a: [R]) : R = sum (map (i. if i > 0 then a[i - 1] * a[i] else a[i]) (iota (length a)))",
    "def f (x: R) (v: [R]) : R = loop y = x for i < 20 do sin (y * v[i]) + y",
    "def f (a: [R]) (w: R) : R = loop s = 0 for j < length a do s * w + a[j] * a[j]",
    "def f (k: R) (y0: [R]) : R = let (y, t) = loop (y, t) = (y0, 0) for i < 4 do (map (u. u + 0.1 * (sin t - k * u * u)) y, t + 0.1) in sum y * t",
    "def f (x: R) : R = (loop (y, n) = (x, 0) while n < 4 do (y * y * 0.5 + sin y, n + 1)).1",
    "def f (s: R) (v: [R]) : R = sum (scanl (x, y. x * s + y) 0 v)",
    "def f (v: [R]) : R = sum (map (x. x * x) (scanr (x, y. sin x + y * 0.5) 1 v))",
    "def f (v: [R]) : R = sum (map2 (x, y. x * y) (shift1L v) (shift1R v))",
    "def f (m: [[R]]) (v: [R]) : R = sum (map (r. dot r r) (transpose m)) + sum (concat v (map (x. x * 3) v))",
    "def f (a: [R]) (b: [R]) : R = let (u, w) = unzip (map (p. (p.1 * p.2, p.1 + p.2)) (zip a b)) in sum u * sum w",
    "def f (a: [R]) (b: [R]) (c: [R]) : R = sum (map3 (x, y, z. x * y + sin z * x) a b c)",
    "def f (w: [[R]]) (b: [R]) (x: [R]) : R = sum (map2 (h, c. tanh (0.02 * h - c)) (matvec w x) b)",
    "def f (a: [R]) : R = let (s, s2, n) = foldl ((s, s2, n), x. (s + x, s2 + x * x, n + 1)) (0, 0, 0) a in s2 / n - (s / n) * (s / n)",
    "def f (v: [R]) : R = let h = reduce_by_index (replicate 3 0) (+) 0 (map (i. i - 3 * floor (i / 3)) (iota (length v))) v in dot h h",
};

/* The worst relative difference between the device and the CPU for d at
   random points (arrays of 20, 64 and 1000 elements, 64 at most when d
   launches per element), drawn from seed; prints a row for what. */
static void on_device(const Def *d, uint64_t seed, const char *what) {
  static const size_t sizes[] = {20, 64, 1000};
  bool nest = nested(d->body, false);
  double worst = 0, cms = 0, gms = 0;
  for (size_t li = 0; li < sizeof sizes / sizeof sizes[0]; li++) {
    size_t n = sizes[li];
    if (nest && n > 64) continue; /* a matrix of n x n, or a launch per element */
    GenRng rng = gen_rng(seed + (uint64_t)li);
    Value *args = NEW_ARRAY(Value, d->nparams + 1);
    for (int i = 0; i < d->nparams; i++) args[i] = gc_random_value(&rng, d->params[i]->type, n, 0.5, 1.5);
    char *at = una_sprintf("%s at length %zu", what, n);
    worst = fmax(worst, compare(d, args, d->nparams, tolerance(n), at, &cms, &gms, NULL));
  }
  printf("%-45.45s %10.2g %10.2f %10.2f\n", what, worst, cms, gms);
  fflush(stdout);
}

START_TEST(gradients) {
  OptOptions o = {0};
  o.enabled = true;
  o.check_passes = true;
  for (size_t pi = 0; pi < sizeof grad_programs / sizeof grad_programs[0]; pi++) {
    char *err = NULL;
    GcProgram *p = gc_load("<grads>", grad_programs[pi], true, "f", &err);
    ck_assert_msg(p != NULL, "%s: %s", grad_programs[pi], err);
    int *wrt = NEW_ARRAY(int, p->f->nparams + 1);
    int nwrt = gc_wrt(p, NULL, wrt);
    Def *g = opt_optimize_program(rev_grad(p->f, wrt, nwrt, REV_UNF), &o);
    on_device(g, 3000, una_sprintf("grad %s", grad_programs[pi] + 4));
  }
}
END_TEST

/* jvp, vjp and Hessian-vector products (derive/derive.h) through the plan
   on the device, against the CPU: f's derived function with the tangents
   or the cotangent drawn like the points. */
static const struct {
  DerivOp op;
  const char *text;
} deriv_programs[] = {
    {DOP_JVP, "def f (x: [R]) : R = logsumexp x"},
    {DOP_JVP, "def f (x: [R]) : R = sum (map2 (a, b. 100 * (b - a * a) ^ 2 + (1 - a) ^ 2) (shift1R x) (shift1L x))"},
    {DOP_JVP, "def f (w: [[R]]) (x: [R]) : R = sum (map (z. sin z * sin z) (matvec w x))"},
    {DOP_JVP, "def f (x: R) (v: [R]) : [R] = loop y = v for i < 5 do map (u. sin (u * x) + u) y"},
    {DOP_JVP, "def f (v: [R]) : [R] = scanl (*) 1 v"},
    {DOP_VJP, "def f (x: [R]) : [R] = softmax x"},
    {DOP_VJP, "def f (m: [[R]]) (v: [R]) : [R] = map (row. dot row v) m"},
    {DOP_JVP, "def g (x: [R]) : R = sum (map2 (a, b. 100 * (b - a * a) ^ 2 + (1 - a) ^ 2) (shift1R x) (shift1L x))\n"
              "def f (x: [R]) : [R] = grad g x"},
};

START_TEST(derivatives) {
  OptOptions o = {0};
  o.enabled = true;
  o.check_passes = true;
  DerivOpt ro = {opt_derived, &o};
  for (size_t pi = 0; pi < sizeof deriv_programs / sizeof deriv_programs[0]; pi++) {
    const char *text = deriv_programs[pi].text;
    char *err = NULL;
    GcProgram *p = gc_load("<derivs>", text, true, "f", &err);
    ck_assert_msg(p != NULL, "%s: %s", text, err);
    Def *f = deriv_expand(p->f, &ro);
    int *wrt = NEW_ARRAY(int, f->nparams + 1);
    int nwrt = gc_wrt(p, NULL, wrt);
    Def *d = opt_optimize_program(deriv_function(f, deriv_programs[pi].op, wrt, nwrt, &ro), &o);
    on_device(d, 4000, una_sprintf("%s of %s", fe_deriv_op_names[deriv_programs[pi].op], text + 4));
  }
}
END_TEST

START_TEST(cache) {
  const char *src = "extern \"C\" __global__ void una_cache_probe(double *o) { o[0] = 1; }\n";
  size_t n1 = 0, n2 = 0;
  KcacheSource from1, from2;
  char *log = NULL;
  double t0 = now_ms();
  const void *a = kcache_cubin(src, cuda_arch(), cuda_driver_version(), &n1, &from1, &log);
  double t1 = now_ms();
  kcache_clear_memory();
  const void *b = kcache_cubin(src, cuda_arch(), cuda_driver_version(), &n2, &from2, &log);
  double t2 = now_ms();
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_int_eq(from2, KCACHE_DISK);
  ck_assert(n1 == n2 && memcmp(a, b, n1) == 0);
  printf("kernel cache (%s): first call %s in %.1f ms, then from disk in %.2f ms\n", kcache_dir(),
         from1 == KCACHE_COMPILED ? "compiled" : "found", t1 - t0, t2 - t1);
}
END_TEST

int main(void) {
  GC_INIT();
  char base;
  struct rlimit rl;
  size_t stack = (size_t)8 << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 0)
    stack = (size_t)rl.rlim_cur;
  fe_stack_init(&base, stack - ((size_t)256 << 10));
  const char *cap = getenv("UNA_CHECK_GPU_MAX_LENGTH");
  if (cap && *cap) max_length = (size_t)strtoull(cap, NULL, 10);
  first_program = getenv("UNA_CHECK_GPU_FROM");
  const char *why = NULL;
  if (!gpu_available(&why)) {
    fprintf(stderr, "check_gpu: no usable GPU: %s\n", why);
    return 1;
  }
  printf("check_gpu on %s\n", gpu_describe());
  Suite *s = suite_create("gpu");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 0);
  tcase_add_test(tc, session);
  tcase_add_test(tc, cache);
  tcase_add_test(tc, gathers);
  tcase_add_test(tc, scatters);
  tcase_add_test(tc, map3s);
  tcase_add_test(tc, products);
  tcase_add_test(tc, gradients);
  tcase_add_test(tc, derivatives);
  tcase_add_test(tc, corpus);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
