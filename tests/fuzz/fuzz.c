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
#include "mutate.h"
#include "session_input.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

typedef struct Stats {
  long inputs, points, errors_agreed, values_compared;
  GcStats grad;
} Stats;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether the reals a and b agree at relative 1e-9 (absolute floor
   1e-12 times scale), nan with nan and equal infinities included. */
static bool close_reals(double a, double b, double scale) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-12 * scale;
}

static double max_abs(Value v) {
  switch (v.kind) {
  case V_REAL: return isfinite(v.u.r) ? fabs(v.u.r) : 0;
  case V_TUPLE: {
    double m = 0;
    for (int i = 0; i < v.u.t->n; i++) m = fmax(m, max_abs(v.u.t->items[i]));
    return m;
  }
  case V_ARRAY: {
    double m = 0;
    for (size_t i = 0; i < v.u.a->len; i++) m = fmax(m, max_abs(val_array_get(v.u.a, i)));
    return m;
  }
  default: return 0;
  }
}

/* Whether a and b have the same shape and close reals (booleans equal). */
static bool close_values(Value a, Value b, double scale) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case V_REAL: return close_reals(a.u.r, b.u.r, scale);
  case V_BOOL: return a.u.b == b.u.b;
  case V_TUPLE:
    if (a.u.t->n != b.u.t->n) return false;
    for (int i = 0; i < a.u.t->n; i++)
      if (!close_values(a.u.t->items[i], b.u.t->items[i], scale)) return false;
    return true;
  case V_ARRAY:
    if (a.u.a->len != b.u.a->len) return false;
    for (size_t i = 0; i < a.u.a->len; i++)
      if (!close_values(val_array_get(a.u.a, i), val_array_get(b.u.a, i), scale)) return false;
    return true;
  default: return true;
  }
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
    if (!close_values(v[0], v[i], fmax(1, max_abs(v[0]))))
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

/* One input: NULL or a report. */
static char *fuzz_one(uint64_t seed, Stats *st, char **text_out) {
  GenRng r = gen_rng(seed * 0x9E3779B97F4A7C15ull + 1);
  /* odd seeds: language 1, which the direct path also differentiates */
  bool v2 = seed % 2 == 0;
  GenOptions go = v2 ? gen_v2_options() : gen_default_options();
  go.size = 15 + gen_below(&r, 50);
  go.depth = 2 + gen_below(&r, 5);
  go.max_helpers = gen_below(&r, 3);
  go.max_params = 1 + gen_below(&r, 3);
  GenProgram gp = gen_program(seed, &go);
  *text_out = gp.text;
  char *err = NULL;
  GcProgram *p = gc_load("<fuzz>", gp.text, true, "f", &err);
  if (!p) return una_sprintf("the generated program does not load: %s", err);
  OptOptions oo = {0};
  oo.enabled = true;
  oo.check_passes = true;
  Def *opt = NULL;
  FeTry t;
  if (fe_try(&t)) {
    opt = opt_optimize_program(p->f, &oo);
    fe_untry(&t);
  } else {
    return una_sprintf("optimizing f raised: %s", fe_error_text(t.err));
  }
  static const int lengths[] = {0, 1, 3, 7};
  for (int li = 0; li < 4; li++) {
    Value *args = NEW_ARRAY(Value, p->f->nparams + 1);
    for (int i = 0; i < p->f->nparams; i++)
      args[i] = gc_random_value(&r, p->f->params[i]->type, (size_t)lengths[li], -1.5, 1.5);
    char *rep = check_primal(p->f, opt, args, st);
    st->points++;
    if (rep) return una_sprintf("primal at%s: %s", args_text(args, p->f->nparams), rep);
  }
  /* gradients: raw, then optimized */
  GcOptions o = gc_default_options();
  o.lenient = true;
  o.points = 1;
  o.no_direct = v2;
  char *rep = gc_check("<fuzz>", gp.text, "f", seed, &o, &st->grad);
  if (rep) return una_sprintf("gradient: %s", rep);
  o.derive = derive_optimized;
  o.derive_ud = &oo;
  rep = gc_check("<fuzz>", gp.text, "f", seed + 1, &o, &st->grad);
  if (rep) return una_sprintf("optimized gradient: %s", rep);
  return NULL;
}

/* Writes the n bytes of data to path (the input being run). */
static void keep_input(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(data, 1, n, f);
  fclose(f);
}

/* The --bytes mode (and --replay): see the top of the file. */
static int fuzz_bytes(const char *corpus_dir, const char *replay, double budget, double seconds, long count,
                      uint64_t seed, size_t stack, char *base) {
  Corpus c;
  if (replay) {
    FILE *f = fopen(replay, "rb");
    if (!f) {
      perror(replay);
      return 2;
    }
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    fuzz_session_init(base, stack, true);
    char *rep = fuzz_session_input(buf, n, budget);
    printf("fuzz: %s: %s\n", replay, rep ? rep : "no crash, no internal error, the session survives");
    return rep ? 1 : 0;
  }
  if (!corpus_load(&c, corpus_dir)) {
    fprintf(stderr, "fuzz: no seed files in %s\n", corpus_dir);
    return 2;
  }
  fuzz_session_init(base, stack, true);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
  printf("fuzz: %d seeds from %s; the input being run is kept in %s/current.una\n", c.n, corpus_dir, cwd);
  fflush(stdout);
  long inputs = 0;
  double t0 = now_s();
  for (uint64_t s = seed; count < 0 || (long)(s - seed) < count; s++) {
    if (count < 0 && now_s() - t0 >= seconds) break;
    uint64_t rng = s * 0x9E3779B97F4A7C15ull + 0x1234567;
    size_t n;
    int from;
    char *text = mutate(&c, &rng, &n, &from);
    keep_input("current.una", text, n);
    char *rep = fuzz_session_input(text, n, budget);
    inputs++;
    if (rep) {
      printf("fuzz: input %llu (a mutant of %s) fails (reproduce: fuzz --bytes --seed %llu --count 1, or "
             "fuzz --replay %s/current.una)\n%.*s\n%s\n",
             (unsigned long long)s, c.names[from], (unsigned long long)s, cwd, (int)n, text, rep);
      return 1;
    }
  }
  double dt = now_s() - t0;
  const FuzzSessionStats *fs = &fuzz_session_stats;
  printf("fuzz: %ld byte-mutated inputs from seed %llu in %.1f s (%.1f a second): no crash, no internal error, "
         "every session survived; %ld ran without an error, %ld were interrupted by their budget\n",
         inputs, (unsigned long long)seed, dt, dt > 0 ? (double)inputs / dt : 0.0, fs->clean, fs->interrupted);
  return 0;
}

int main(int argc, char **argv) {
  char base;
  struct rlimit rl;
  size_t stack = (size_t)8 << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 0)
    stack = (size_t)rl.rlim_cur;
  stack -= (size_t)256 << 10;
  double seconds = 10, budget = 2;
  long count = -1;
  uint64_t seed = 1;
  bool quiet = false, bytes = false;
  const char *corpus = "tests/scripts", *replay = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
    else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) count = atol(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--quiet") == 0) quiet = true;
    else if (strcmp(argv[i], "--bytes") == 0) bytes = true;
    else if (strcmp(argv[i], "--corpus") == 0 && i + 1 < argc) corpus = argv[++i];
    else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) budget = atof(argv[++i]);
    else if (strcmp(argv[i], "--replay") == 0 && i + 1 < argc) replay = argv[++i];
    else {
      fprintf(stderr, "usage: fuzz [--seconds S] [--count N] [--seed N] [--quiet]\n"
                      "       fuzz --bytes [--corpus DIR] [--budget S] [--seconds S] [--count N] [--seed N]\n"
                      "       fuzz --replay FILE [--budget S]\n");
      return 2;
    }
  }
  if (bytes || replay) return fuzz_bytes(corpus, replay, budget, seconds, count, seed, stack, &base);
  GC_INIT();
  fe_stack_init(&base, stack);
  Stats st = {0};
  double t0 = now_s();
  for (uint64_t s = seed; count < 0 || (long)(s - seed) < count; s++) {
    if (count < 0 && now_s() - t0 >= seconds) break;
    char *text = NULL;
    char *rep = fuzz_one(s, &st, &text);
    st.inputs++;
    if (rep) {
      printf("fuzz: seed %llu disagrees (reproduce: fuzz --seed %llu --count 1)\n%s\n%s\n", (unsigned long long)s,
             (unsigned long long)s, text ? text : "", rep);
      return 1;
    }
  }
  double dt = now_s() - t0;
  if (!quiet || st.inputs > 0)
    printf("fuzz: %ld inputs from seed %llu in %.1f s (%.1f a second): %ld points, %ld values and %ld errors "
           "agreed; gradients at %ld points (%ld skipped near kinks), %ld finite-difference checks\n",
           st.inputs, (unsigned long long)seed, dt, dt > 0 ? (double)st.inputs / dt : 0.0, st.points,
           st.values_compared, st.errors_agreed, st.grad.points, st.grad.points_skipped, st.grad.fd_checked);
  return 0;
}
