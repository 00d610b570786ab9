/* fuzz.c: the project's program fuzzer (tests/fuzz/README.md). Each
   input is a random well-typed program from the gradient tests' generator
   (tests/reverse/gen.c, the language-2 constructs on, its sizes drawn per
   input), checked against oracles at random points:

     primal   f run unoptimized (the tree evaluator), unoptimized with the
              kernels, and optimized (every pass re-checked by fe_retype)
              raises the same error or gives the same value, at relative
              1e-9 (reduce may reassociate);
     gradient grad f on the UNF path and (for the language-1 programs of
              odd seeds) the direct path, unoptimized and then optimized,
              agree and match central finite differences where the
              program is smooth near the point (tests/reverse/gradcheck.c,
              lenient: kinks are skipped).

   Usage: fuzz [--seconds S] [--count N] [--seed N] [--quiet]
   Runs inputs seed, seed + 1, ... until S seconds (default 10) or N inputs
   have run; prints the rate and the checks made; on the first
   disagreement prints the seed, the program and the report, and exits 1.
   `fuzz --seed N --count 1` reproduces one input.

   fuzz --bytes [--corpus DIR] [--budget S] [--seconds S] [--count N] [--seed N]
   mutates the seed files of DIR (default tests/scripts) byte by byte
   (mutate.h) and runs each mutant as a script in a fresh session
   (session_input.h), S seconds at most each (default 2): no crash, no
   internal error, and the session must survive. The input being run is
   kept in current.una of the fuzzer's own directory (printed at the
   start), for a crash. fuzz --replay FILE runs one file that way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/error.h"
#include "../../frontend/ir/retype.h"
#include "../../optimizer/program.h"
#include "../../reverse/reverse.h"
#include "../reverse/gen.h"
#include "../reverse/gradcheck.h"
#include "../../backend/cuda/gpu_eval.h"
#include "bytes.h"
#include "compare.h"
#include "gpu_oracle.h"
#include "print_oracle.h"
#include "reduce.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

typedef struct Stats {
  long inputs, points, errors_agreed, values_compared, gpu_points, gpu_ill, printed_compared, unsupported;
  GcStats grad;
} Stats;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* f on args in ex: the value, or NULL with *err set. */
static bool run(const Exec *ex, const Def *f, const Value *args, Value *out, char **err) {
  FeTry t;
  if (fe_try(&t)) {
    *out = cpu_call_in(ex, f, args);
    fe_untry(&t);
    *err = NULL;
    return true;
  }
  *err = fe_error_text(t.err);
  return false;
}

/* The primal oracle at one point: NULL or a report. */
static char *check_primal(const Def *f, const Def *opt, const Value *args, Stats *st) {
  Exec tree = cpu_exec_default, kern = cpu_exec_default;
  tree.kernel = false;
  tree.monoid = false;
  const Def *defs[3] = {f, f, opt};
  const Exec *exs[3] = {&tree, &kern, &kern};
  const char *names[3] = {"unoptimized, tree evaluator", "unoptimized, kernels", "optimized"};
  Value v[3];
  char *e[3];
  for (int i = 0; i < 3; i++) run(exs[i], defs[i], args, &v[i], &e[i]);
  for (int i = 1; i < 3; i++) {
    if (e[0] || e[i]) {
      if (!e[0] || !e[i] || strcmp(e[0], e[i]) != 0)
        return una_sprintf("%s: %s; %s: %s", names[0], e[0] ? e[0] : val_to_string(v[0]), names[i],
                           e[i] ? e[i] : val_to_string(v[i]));
      st->errors_agreed++;
      continue;
    }
    if (!fz_close_values(v[0], v[i], fmax(1, fz_max_abs(v[0]))))
      return una_sprintf("%s gives %s; %s gives %s", names[0], val_to_string(v[0]), names[i], val_to_string(v[i]));
    st->values_compared++;
  }
  return NULL;
}

static Def *derive_optimized(const Def *f, const int *wrt, int nwrt, RevPath path, void *ud) {
  OptOptions *o = ud;
  return opt_optimize_program(rev_grad(f, wrt, nwrt, path), o);
}

static const char *args_text(const Value *args, int n) {
  char *s = "";
  for (int i = 0; i < n; i++) s = una_sprintf("%s (%s)", s, val_to_string(args[i]));
  return s;
}

/* How a program is checked: its points drawn from seed; the direct path
   too (language 1); the GPU oracle too; the printed derivatives read back
   too. */
typedef struct Check {
  uint64_t seed;
  bool direct, gpu, print;
} Check;

/* p's f optimized, or its gradient (UNF path) optimized: true and *out,
   or false and *err. */
static bool build(const GcProgram *p, const OptOptions *oo, bool grad, Def **out, char **err) {
  FeTry t;
  if (fe_try(&t)) {
    Def *d = p->f;
    if (grad) {
      int *wrt = NEW_ARRAY(int, p->f->nparams + 1);
      int nwrt = gc_wrt(p, NULL, wrt);
      d = rev_grad(p->f, wrt, nwrt, REV_UNF);
    }
    *out = opt_optimize_program(d, oo);
    fe_untry(&t);
    return true;
  }
  *err = fe_error_text(t.err);
  return false;
}

/* Checks the program text (defining f) against the oracles: NULL, or a
   report whose first word names the oracle that failed ("load",
   "primal", "print", "gradient", "optimized-gradient", "gpu"). */
static char *check_program(const char *text, const Check *c, Stats *st) {
  char *err = NULL;
  GcProgram *p = gc_load("<fuzz>", text, true, "f", &err);
  if (!p) return una_sprintf("load: the program does not load: %s", err);
  if (p->f->ret->kind != TY_REAL) return una_sprintf("load: f does not return R");
  OptOptions oo = {0};
  oo.enabled = true;
  oo.check_passes = true;
  Def *opt = NULL, *g = NULL;
  if (!build(p, &oo, false, &opt, &err)) return una_sprintf("primal: optimizing f raised: %s", err);
  GenRng r = gen_rng(c->seed * 0xD1B54A32D192ED03ull + 7);
  static const int lengths[] = {0, 1, 3, 7};
  Value *points[4];
  for (int li = 0; li < 4; li++) {
    Value *args = points[li] = NEW_ARRAY(Value, p->f->nparams + 1);
    for (int i = 0; i < p->f->nparams; i++)
      args[i] = gc_random_value(&r, p->f->params[i]->type, (size_t)lengths[li], -1.5, 1.5);
    char *rep = check_primal(p->f, opt, args, st);
    st->points++;
    if (rep) return una_sprintf("primal at%s: %s", args_text(args, p->f->nparams), rep);
    if (!c->gpu || li == 1) continue;
    /* the GPU path: f and its gradient, optimized, at lengths 0, 3 and 7 */
    if (!g && !build(p, &oo, true, &g, &err)) return una_sprintf("gradient: deriving f raised: %s", err);
    if ((rep = fz_gpu_check(opt, args, &st->gpu_ill))) return una_sprintf("gpu: f at%s: %s", args_text(args, p->f->nparams), rep);
    if ((rep = fz_gpu_check(g, args, &st->gpu_ill)))
      return una_sprintf("gpu: grad f at%s: %s", args_text(args, p->f->nparams), rep);
    st->gpu_points++;
  }
  /* the derivatives printed by :grad, :jvp and :vjp, read back */
  char *prep = c->print ? fz_print_check(text, points + 2, 2, &st->printed_compared) : NULL;
  if (prep) return prep;
  /* gradients: raw, then optimized */
  GcOptions o = gc_default_options();
  o.lenient = true;
  o.points = 1;
  o.no_direct = !c->direct;
  char *rep = gc_check("<fuzz>", text, "f", c->seed, &o, &st->grad);
  /* a construct documented as not differentiable yet (docs/ad.md): counted */
  if (rep && strstr(rep, "not supported under grad yet")) {
    st->unsupported++;
    return NULL;
  }
  if (rep) return una_sprintf("gradient: %s", rep);
  o.derive = derive_optimized;
  o.derive_ud = &oo;
  rep = gc_check("<fuzz>", text, "f", c->seed + 1, &o, &st->grad);
  if (rep) return una_sprintf("optimized-gradient: %s", rep);
  return NULL;
}

/* The program of input seed and how it is checked: language 2 for even
   seeds (derivative operators inside the program for every fourth),
   language 1 (the direct path too) for odd ones; sizes drawn per input;
   the printed derivatives read back for one input in 7. */
static char *program_of(uint64_t seed, Check *c) {
  GenRng r = gen_rng(seed * 0x9E3779B97F4A7C15ull + 1);
  bool v2 = seed % 2 == 0;
  GenOptions go = v2 ? gen_v2_options() : gen_default_options();
  go.deriv = seed % 4 == 0;
  go.size = 15 + gen_below(&r, 50);
  go.depth = 2 + gen_below(&r, 5);
  go.max_helpers = gen_below(&r, 3);
  go.max_params = 1 + gen_below(&r, 3);
  c->seed = seed;
  c->direct = !v2;
  c->print = seed % 7 == 0; /* sessions are slow: one input in 7 */
  return gen_program(seed, &go).text;
}

/* What makes two reports the same failure for the reducer: the oracle
   that failed (the report's first word) and, when an error was raised,
   the error's message with its numbers left out (a smaller program
   raises it at other places, of other lengths). */
static char *report_kind(const char *rep) {
  char *k = una_sprintf("%.*s", (int)strcspn(rep, " :"), rep);
  const char *e = strstr(rep, "error: ");
  if (!e) return k;
  e += 7;
  size_t n = strcspn(e, "\n");
  char *msg = GC_MALLOC_ATOMIC(n + 1), *o = msg;
  for (size_t i = 0; i < n; i++)
    if (e[i] < '0' || e[i] > '9') *o++ = e[i];
  *o = 0;
  return una_sprintf("%s: %s", k, msg);
}

typedef struct SameFailure {
  const Check *check;
  const char *kind;
  bool derive_only; /* the failure is an error that deriving f raises */
} SameFailure;

/* Whether two report kinds name the same error (whichever gradient
   oracle met it). */
static bool same_error(const char *a, const char *b) {
  const char *ea = strstr(a, ": "), *eb = strstr(b, ": ");
  return ea && eb && strcmp(ea, eb) == 0;
}

/* The report of deriving text's f alone (loading it, differentiating on
   the UNF path, optimizing), or NULL: the quick test of a failure that
   deriving raises, which a reduction repeats thousands of times. */
static char *derive_only(const char *text) {
  char *err = NULL;
  GcProgram *p = gc_load("<fuzz>", text, true, "f", &err);
  if (!p) return una_sprintf("load: the program does not load: %s", err);
  OptOptions oo = {0};
  oo.enabled = true;
  oo.check_passes = true;
  Def *g;
  return build(p, &oo, true, &g, &err) ? NULL : una_sprintf("gradient: deriving f raised: %s", err);
}

static bool program_fails(const char *text, size_t n, void *ud) {
  const SameFailure *sf = ud;
  char *t = una_sprintf("%.*s", (int)n, text);
  if (sf->derive_only) {
    char *rep = derive_only(t);
    return rep && same_error(report_kind(rep), sf->kind);
  }
  Stats st = {0};
  char *rep = check_program(t, sf->check, &st);
  return rep && strcmp(report_kind(rep), sf->kind) == 0;
}

/* Reduces the failing program text (rep its report) to a smaller one that
   fails the same way, prints it with its own report and keeps it in path. */
static void reduce_program(const char *text, const Check *c, const char *rep, const char *path) {
  SameFailure sf = {c, report_kind(rep), false};
  char *d = derive_only(text);
  sf.derive_only = d && same_error(report_kind(d), sf.kind);
  FzReduceStats rs;
  size_t n;
  char *small = fz_reduce(text, strlen(text), program_fails, &sf, 3000, 120, &n, &rs);
  Stats st = {0};
  char *rep2 = check_program(small, c, &st);
  fz_keep(path, small, n);
  printf("fuzz: reduced from %zu to %zu bytes in %ld tries (kept in %s; rerun: fuzz --program %s --seed %llu%s%s):\n"
         "%s%s\n",
         rs.from, rs.to, rs.tries, path, path, (unsigned long long)c->seed, c->direct ? " --direct" : "",
         c->gpu ? " --gpu" : "", small, rep2 ? rep2 : "(no failure: the reduction went wrong)");
}

/* Reports a failing program: its seed, the program and the report, then
   the program reduced, kept in fuzz-SEED.una. */
static void report_failure(uint64_t seed, const char *text, const Check *c, const char *rep) {
  printf("fuzz: seed %llu disagrees (reproduce: fuzz --seed %llu --count 1%s)\n%s\n%s\n", (unsigned long long)seed,
         (unsigned long long)seed, c->gpu ? " --gpu" : "", text, rep);
  fflush(stdout);
  reduce_program(text, c, rep, una_sprintf("fuzz-%llu.una", (unsigned long long)seed));
}

static int usage(void) {
  fprintf(stderr, "usage: fuzz [--seconds S] [--count N] [--seed N] [--gpu] [--print] [--quiet]\n"
                  "       fuzz --program FILE [--seed N] [--direct] [--gpu] [--reduce]\n"
                  "       fuzz --bytes [--corpus DIR] [--budget S] [--seconds S] [--count N] [--seed N]\n"
                  "       fuzz --replay FILE [--seed N] [--budget S]\n"
                  "       fuzz --minimize FILE [--seed N] [--budget S]\n");
  return 2;
}

/* fuzz --program FILE: the oracles on the program of FILE (a reproducer);
   with --reduce, a failing one reduced into FILE.min. */
static int check_file(const char *path, const Check *c, bool reduce) {
  size_t n;
  char *text = fz_read(path, &n);
  if (!text) {
    perror(path);
    return 2;
  }
  Stats st = {0};
  char *rep = check_program(text, c, &st);
  printf("fuzz: %s: %s\n", path, rep ? rep : "the oracles agree");
  fflush(stdout);
  if (rep && reduce) reduce_program(text, c, rep, una_sprintf("%s.min", path));
  return rep ? 1 : 0;
}

int main(int argc, char **argv) {
  char base;
  struct rlimit rl;
  size_t stack = (size_t)8 << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 0)
    stack = (size_t)rl.rlim_cur;
  stack -= (size_t)256 << 10;
  FzBytes b = {.corpus = "tests/scripts", .budget = 2, .seconds = 10, .count = -1, .seed = 1,
               .base = &base, .stack = stack};
  bool quiet = false, bytes = false, gpu = false, direct = false, print = false, reduce = false;
  const char *program = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--quiet") == 0) quiet = true;
    else if (strcmp(a, "--bytes") == 0) bytes = true;
    else if (strcmp(a, "--gpu") == 0) gpu = true;
    else if (strcmp(a, "--print") == 0) print = true;
    else if (strcmp(a, "--reduce") == 0) reduce = true;
    else if (strcmp(a, "--direct") == 0) direct = true;
    else if (strcmp(a, "--here") == 0) b.here = true;
    else if (!v) return usage();
    else if (strcmp(a, "--seconds") == 0) b.seconds = atof(argv[++i]);
    else if (strcmp(a, "--count") == 0) b.count = atol(argv[++i]);
    else if (strcmp(a, "--seed") == 0) b.seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(a, "--corpus") == 0) b.corpus = argv[++i];
    else if (strcmp(a, "--budget") == 0) b.budget = atof(argv[++i]);
    else if (strcmp(a, "--replay") == 0) b.replay = argv[++i];
    else if (strcmp(a, "--minimize") == 0) b.minimize = argv[++i];
    else if (strcmp(a, "--program") == 0) program = argv[++i];
    else return usage();
  }
  if (bytes || b.replay || b.minimize) return fz_bytes(&b);
  GC_INIT();
  fe_stack_init(&base, stack);
  const char *why = NULL;
  if (gpu && !gpu_available(&why)) {
    fprintf(stderr, "fuzz: --gpu: no usable GPU (%s); `make fuzz-gpu-host` runs the kernels on the host\n", why);
    return 2;
  }
  if (program) {
    Check c = {b.seed, direct, gpu, true};
    return check_file(program, &c, reduce);
  }
  Stats st = {0};
  double t0 = now_s();
  for (uint64_t s = b.seed; b.count < 0 || (long)(s - b.seed) < b.count; s++) {
    if (b.count < 0 && now_s() - t0 >= b.seconds) break;
    Check c;
    char *text = program_of(s, &c);
    c.gpu = gpu;
    if (print) printf("-- seed %llu\n%s", (unsigned long long)s, text);
    char *rep = check_program(text, &c, &st);
    st.inputs++;
    if (rep) {
      report_failure(s, text, &c, rep);
      return 1;
    }
  }
  double dt = now_s() - t0;
  if (!quiet || st.inputs > 0)
    printf("fuzz: %ld inputs from seed %llu in %.1f s (%.1f a second): %ld points, %ld values and %ld errors "
           "agreed; gradients at %ld points (%ld skipped near kinks, %ld not differenced: |f| > 1e12), %ld "
           "finite-difference checks; %ld values of printed derivatives read back agreed; %ld programs not "
           "differentiable yet (docs/ad.md)%s\n",
           st.inputs, (unsigned long long)b.seed, dt, dt > 0 ? (double)st.inputs / dt : 0.0, st.points,
           st.values_compared, st.errors_agreed, st.grad.points, st.grad.points_skipped, st.grad.fd_skipped_large, st.grad.fd_checked, st.printed_compared, st.unsupported,
           gpu ? una_sprintf("; %ld points agreed on the GPU path (f and grad f), %ld values ill-conditioned", st.gpu_points,
                             st.gpu_ill) : "");
  return 0;
}
