/* test_random.c: random programs from the generator (gen.h) through the
   gradient harness (gradcheck.h): on every program both differentiation
   paths agree and match finite differences. `make check` runs
   RANDOM_PROGRAMS programs from the fixed seed RANDOM_BASE, in batches.
   The suite random_v2 (at the end) does the same for programs with the
   language-2 constructs (gen_v2_options), on the UNF path only.

   Environment (limit the run to this suite with CK_RUN_SUITE=random):
     UNA_GEN_SEED=N     checks program N only, printing it and its counts
     UNA_GEN_PRINT=N    prints N programs (from the base seed) and what the
                        term printer makes of them; checks only that these
                        print back (test_print_programs)
     UNA_GEN_COUNT=N    checks N programs instead of RANDOM_PROGRAMS
     UNA_GEN_BASE=N     starts at seed N instead of RANDOM_BASE
     UNA_GEN_VERBOSE=1  prints each batch's counts and times
     UNA_GEN_ALL=1      prints the report of every failing program
   for example: UNA_GEN_SEED=20261500 CK_RUN_SUITE=random build/check_una.
   Programs are checked in child processes, so an internal error (an
   abort) is reported with its seed and message, and the batch goes on. */
#include <check.h>
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/term_print.h"
#include "../suites.h"
#include "gen.h"
#include "gradcheck.h"

#define RANDOM_BASE 20261121u
#if defined(__SANITIZE_ADDRESS__)
#define RANDOM_PROGRAMS 1000 /* make asan: the sanitizers make each program several times slower */
#else
#define RANDOM_PROGRAMS 4000
#endif
#define RANDOM_BATCHES 20

static uint64_t env_u64(const char *name, uint64_t dflt) {
  const char *s = getenv(name);
  return s && *s ? strtoull(s, NULL, 10) : dflt;
}

static GcOptions random_options(void) {
  GcOptions o = gc_default_options();
  o.points = 1;
  o.lenient = true;
  return o;
}

/* What the checking child sends per program: the seed, whether it
   failed, the report's length (the report follows), and the counts so far. */
typedef struct Record {
  uint64_t seed;
  int failed;
  size_t len;
  GcStats st;
} Record;

static bool write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w <= 0) return false;
    c += w;
    n -= (size_t)w;
  }
  return true;
}

static bool read_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r <= 0) return false;
    c += r;
    n -= (size_t)r;
  }
  return true;
}

/* What a run checks: the generator's options, the harness's, and the
   suite that replays a seed. */
typedef struct Mode {
  GenOptions go;
  GcOptions o;
  const char *suite;
} Mode;

static Mode random_mode(void) {
  Mode m = {gen_default_options(), random_options(), "random"};
  return m;
}

/* The child: checks [from, to), one Record per program. */
static _Noreturn void check_child(const Mode *m, uint64_t from, uint64_t to, int fd) {
  GcStats st = {0};
  for (uint64_t seed = from; seed < to; seed++) {
    GenProgram p = gen_program(seed, &m->go);
    const GcOptions *o = &m->o;
    char *rep = gc_check("<gen>", p.text, p.fname, seed, o, &st);
    Record r = {seed, rep != NULL, rep ? strlen(rep) : 0, st};
    if (!write_all(fd, &r, sizeof r) || (rep && !write_all(fd, rep, r.len))) _exit(3);
  }
  _exit(0);
}

/* The last lines (at most 600 bytes) of the file f. */
static char *tail_of(FILE *f) {
  char buf[601];
  fflush(f);
  long end = ftell(f);
  long from = end > 600 ? end - 600 : 0;
  fseek(f, from, SEEK_SET);
  size_t n = fread(buf, 1, 600, f);
  buf[n] = '\0';
  return una_strdup(buf);
}

/* Checks programs [from, to) in child processes, so that a crash (an
   internal error aborts) is reported with its seed and message and the
   remaining programs still run. Fails with the first report and the
   failing seeds. Returns the counts. */
static GcStats check_range(const Mode *m, uint64_t from, uint64_t to, bool verbose) {
  GcStats total = {0};
  char *first = NULL;
  uint64_t bad[8];
  int nbad = 0;
  uint64_t next = from;
  bool all = getenv("UNA_GEN_ALL") != NULL;
  while (next < to) {
    int fd[2];
    ck_assert(pipe(fd) == 0);
    FILE *err = tmpfile();
    ck_assert(err != NULL);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
      close(fd[0]);
      dup2(fileno(err), 2);
      check_child(m, next, to, fd[1]);
    }
    close(fd[1]);
    GcStats st = {0};
    Record r;
    while (read_all(fd[0], &r, sizeof r)) {
      char *rep = NULL;
      if (r.len) {
        rep = una_alloc(r.len + 1);
        if (!read_all(fd[0], rep, r.len)) break;
      }
      st = r.st;
      if (r.failed && all) fprintf(stderr, "%s\n", rep);
      if (r.failed) {
        if (!first) first = rep;
        if (nbad < 8) bad[nbad] = r.seed;
        nbad++;
      }
      next = r.seed + 1;
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    total.programs += st.programs;
    total.points += st.points;
    total.points_skipped += st.points_skipped;
    total.components += st.components;
    total.fd_checked += st.fd_checked;
    total.fd_skipped += st.fd_skipped;
    total.nonzero += st.nonzero;
    total.derive_s += st.derive_s;
    total.eval_s += st.eval_s;
    if (next < to && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      /* the child died while checking program `next` */
      char *why = WIFSIGNALED(status) ? una_sprintf("signal %d", WTERMSIG(status))
                                      : una_sprintf("exit status %d", WEXITSTATUS(status));
      char *rep = una_sprintf("gradient check crashed (%s); its stderr ended with:\n%s\n  seed: %llu\n  program:\n%s",
                              why, tail_of(err), (unsigned long long)next, gen_program(next, &m->go).text);
      if (all) fprintf(stderr, "%s\n", rep);
      if (!first) first = rep;
      if (nbad < 8) bad[nbad] = next;
      nbad++;
      next++;
    }
    fclose(err);
  }
  if (verbose)
    fprintf(stderr,
            "%s [%llu, %llu): %ld programs, %ld points (%ld skipped: f not finite), %ld components, "
            "%ld checked by finite differences (%ld of them not 0), %ld skipped (unstable); derive %.2f s, "
            "evaluate %.2f s\n",
            m->suite, (unsigned long long)from, (unsigned long long)to, total.programs, total.points,
            total.points_skipped, total.components, total.fd_checked, total.nonzero, total.fd_skipped,
            total.derive_s, total.eval_s);
  if (nbad) {
    char *seeds = "";
    for (int i = 0; i < nbad && i < 8; i++) seeds = una_sprintf("%s %llu", seeds, (unsigned long long)bad[i]);
    ck_abort_msg("%d of %llu generated programs failed (seeds%s%s); the first:\n%s\nreplay one with "
                 "UNA_GEN_SEED=%llu CK_RUN_SUITE=%s",
                 nbad, (unsigned long long)(to - from), seeds, nbad > 8 ? " ..." : "", first,
                 (unsigned long long)bad[0], m->suite);
  }
  return total;
}

START_TEST(test_random_programs) {
  const char *one = getenv("UNA_GEN_SEED");
  if (one && *one) {
    if (_i != 0) return;
    uint64_t seed = env_u64("UNA_GEN_SEED", 0);
    Mode m = random_mode();
    GenProgram p = gen_program(seed, &m.go);
    fprintf(stderr, "-- generated program %llu\n%s", (unsigned long long)seed, p.text);
    check_range(&m, seed, seed + 1, true);
    return;
  }
  if (getenv("UNA_GEN_PRINT")) return;
  uint64_t base = env_u64("UNA_GEN_BASE", RANDOM_BASE);
  uint64_t count = env_u64("UNA_GEN_COUNT", RANDOM_PROGRAMS);
  uint64_t from = base + count * (uint64_t)_i / RANDOM_BATCHES;
  uint64_t to = base + count * (uint64_t)(_i + 1) / RANDOM_BATCHES;
  Mode m = random_mode();
  check_range(&m, from, to, getenv("UNA_GEN_VERBOSE") != NULL);
}
END_TEST

/* f at args into *out; NULL, or the error text. */
static char *eval_at(const Def *f, const Value *args, double *out) {
  FeTry t;
  if (fe_try(&t)) {
    *out = cpu_call(f, args).u.r;
    fe_untry(&t);
    return NULL;
  }
  return fe_error_text(t.err);
}

/* The checked defs of program text p (helpers then f, as gen.h writes
   them, one "def NAME" per line) printed back by the term printer, one per
   line, from the Env of g. */
static char *printed_program(const GcProgram *g, const char *text) {
  char *out = "";
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, "def ", 4) != 0) continue;
    size_t n = strcspn(l + 4, " (:");
    Def *d = fe_env_find_def(g->env, una_strndup(l + 4, n));
    ck_assert_ptr_nonnull(d);
    out = una_sprintf("%s%s\n", out, fe_def_str(d));
  }
  return out;
}

/* The checked program printed back (term_print.h) re-parses and re-checks,
   its f computes the same value (bit for bit) at random arguments, and the
   text it prints once re-read is the same again: printing is exact after
   one round (the first round may fold a negated literal, "neg 1.25" read
   back as "- -1.25", which is the literal 1.25). PRINT_PROGRAMS programs,
   or UNA_GEN_PRINT=N, which also prints them (generated and printed back)
   for debugging the generator. */
#define PRINT_PROGRAMS 1000
static void print_programs(const GenOptions *go, uint64_t base, uint64_t n, bool shown) {
  GcOptions o = random_options();
  for (uint64_t i = 0; i < n; i++) {
    GenProgram p = gen_program(base + i, go);
    unsigned long long seed = (unsigned long long)p.seed;
    char *err = NULL;
    GcProgram *g = gc_load("<gen>", p.text, true, p.fname, &err);
    ck_assert_msg(g != NULL, "generated program %llu does not check: %s\n%s", seed, err, p.text);
    char *text = printed_program(g, p.text);
    if (shown) printf("-- generated program %llu\n%s-- printed back\n%s", seed, p.text, text);
    GcProgram *back = gc_load("<printed>", text, true, p.fname, &err);
    ck_assert_msg(back != NULL, "program %llu printed back does not check: %s\n%s", seed, err, text);
    char *again = printed_program(back, text);
    GcProgram *back2 = gc_load("<printed>", again, true, p.fname, &err);
    ck_assert_msg(back2 != NULL, "program %llu printed twice does not check: %s\n%s", seed, err, again);
    char *third = printed_program(back2, again);
    ck_assert_msg(strcmp(again, third) == 0, "program %llu prints differently once re-read:\n%s---\n%s", seed,
                  again, third);
    GenRng r = gen_rng(p.seed);
    int len = o.lengths[p.seed % (uint64_t)o.nlengths];
    Value *args = NEW_ARRAY(Value, g->f->nparams + 1);
    for (int k = 0; k < g->f->nparams; k++)
      args[k] = gc_random_value(&r, g->f->params[k]->type, (size_t)len, o.lo, o.hi);
    double v = 0, w = 0;
    char *e1 = eval_at(g->f, args, &v), *e2 = eval_at(back->f, args, &w);
    ck_assert_msg(e1 == NULL && e2 == NULL, "program %llu: %s / %s", seed, e1 ? e1 : "-", e2 ? e2 : "-");
    ck_assert_msg(memcmp(&v, &w, sizeof v) == 0 || (isnan(v) && isnan(w)),
                  "program %llu gives %.17g, printed back %.17g:\n%s", seed, v, w, text);
  }
  fflush(stdout);
}

START_TEST(test_print_programs) {
  if (getenv("UNA_GEN_SEED")) return;
  uint64_t shown = env_u64("UNA_GEN_PRINT", 0);
  GenOptions go = gen_default_options();
  print_programs(&go, env_u64("UNA_GEN_BASE", RANDOM_BASE), shown ? shown : PRINT_PROGRAMS, shown != 0);
}
END_TEST

/* The generator itself: deterministic, and every program checks and
   evaluates without error at every kind of point (no gradient involved). */
static void generator_wellformed(const GenOptions *go, uint64_t base, uint64_t n) {
  ck_assert_str_eq(gen_program(7, go).text, gen_program(7, go).text);
  ck_assert_str_ne(gen_program(7, go).text, gen_program(8, go).text);
  GcOptions o = random_options();
  long finite = 0, total = 0;
  for (uint64_t seed = base; seed < base + n; seed++) {
    GenProgram p = gen_program(seed, go);
    char *err = NULL;
    GcProgram *g = gc_load("<gen>", p.text, true, p.fname, &err);
    ck_assert_msg(g != NULL, "generated program %llu does not check: %s\n%s", (unsigned long long)seed, err,
                  p.text);
    for (int li = 0; li < o.nlengths; li++) {
      GenRng r = gen_rng(seed + (uint64_t)li);
      Value *args = NEW_ARRAY(Value, g->f->nparams + 1);
      for (int i = 0; i < g->f->nparams; i++)
        args[i] = gc_random_value(&r, g->f->params[i]->type, (size_t)o.lengths[li], o.lo, o.hi);
      double v = 0;
      char *err2 = eval_at(g->f, args, &v);
      ck_assert_msg(err2 == NULL, "generated program %llu fails at array length %d: %s\n%s",
                    (unsigned long long)seed, o.lengths[li], err2, p.text);
      total++;
      finite += isfinite(v) != 0;
    }
  }
  /* the domains are kept: almost every value is finite */
  ck_assert_msg(finite >= total * 99 / 100, "%ld of %ld values finite", finite, total);
}

START_TEST(test_generator_wellformed) {
  if (getenv("UNA_GEN_SEED") || getenv("UNA_GEN_PRINT")) return;
  GenOptions go = gen_default_options();
  generator_wellformed(&go, RANDOM_BASE, 1000);
}
END_TEST

Suite *suite_random(void) {
  Suite *s = suite_create("random");
  TCase *tc = tcase_create("random");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_print_programs);
  tcase_add_test(tc, test_generator_wellformed);
  tcase_add_loop_test(tc, test_random_programs, 0, RANDOM_BATCHES);
  suite_add_tcase(s, tc);
  return s;
}

/* ---- random_v2: the language-2 constructs (gen_v2_options) ----

   Programs with indexing, gathers in map bodies, slices, for and while
   loops, scans, shifts, map3, zip/unzip, concat, transpose,
   reduce_by_index and tuple accumulators, which only the UNF path
   differentiates: checked against finite differences alone (no_direct).
   The same environment variables as above, with CK_RUN_SUITE=random_v2
   (UNA_GEN_BASE defaults to RANDOM_V2_BASE, UNA_GEN_COUNT to
   RANDOM_V2_PROGRAMS). */

#define RANDOM_V2_BASE 20261125u
#if defined(__SANITIZE_ADDRESS__)
#define RANDOM_V2_PROGRAMS 100
#else
#define RANDOM_V2_PROGRAMS 400
#endif
#define RANDOM_V2_BATCHES 4

static Mode v2_mode(void) {
  Mode m = {gen_v2_options(), random_options(), "random_v2"};
  m.o.no_direct = true;
  return m;
}

START_TEST(test_v2_programs) {
  Mode m = v2_mode();
  const char *one = getenv("UNA_GEN_SEED");
  if (one && *one) {
    if (_i != 0) return;
    uint64_t seed = env_u64("UNA_GEN_SEED", 0);
    GenProgram p = gen_program(seed, &m.go);
    fprintf(stderr, "-- generated program %llu\n%s", (unsigned long long)seed, p.text);
    check_range(&m, seed, seed + 1, true);
    return;
  }
  if (getenv("UNA_GEN_PRINT")) return;
  uint64_t base = env_u64("UNA_GEN_BASE", RANDOM_V2_BASE);
  uint64_t count = env_u64("UNA_GEN_COUNT", RANDOM_V2_PROGRAMS);
  uint64_t from = base + count * (uint64_t)_i / RANDOM_V2_BATCHES;
  uint64_t to = base + count * (uint64_t)(_i + 1) / RANDOM_V2_BATCHES;
  GcStats st = check_range(&m, from, to, getenv("UNA_GEN_VERBOSE") != NULL);
  /* the check means something: most points are finite, most components
     are checked by finite differences (not skipped as kinks), and many
     of the checked gradients are not 0 (about 40% over a full run; 25
     programs a batch under the sanitizers give 28% to 33%) */
  ck_assert_msg(st.points_skipped * 5 <= st.points, "%ld of %ld points skipped", st.points_skipped, st.points);
  ck_assert_msg(st.fd_skipped * 5 <= st.fd_checked + st.fd_skipped, "%ld of %ld components skipped",
                st.fd_skipped, st.fd_checked + st.fd_skipped);
  ck_assert_msg(st.nonzero * 4 >= st.fd_checked, "only %ld of %ld checked components not 0", st.nonzero,
                st.fd_checked);
}
END_TEST

START_TEST(test_v2_print_programs) {
  if (getenv("UNA_GEN_SEED")) return;
  uint64_t shown = env_u64("UNA_GEN_PRINT", 0);
  GenOptions go = gen_v2_options();
  print_programs(&go, env_u64("UNA_GEN_BASE", RANDOM_V2_BASE), shown ? shown : 300, shown != 0);
}
END_TEST

/* Every v2 program checks and runs without an index error at every
   length (0 included), and the constructs all occur. */
START_TEST(test_v2_wellformed) {
  if (getenv("UNA_GEN_SEED") || getenv("UNA_GEN_PRINT")) return;
  GenOptions go = gen_v2_options();
  generator_wellformed(&go, RANDOM_V2_BASE, 1000);
  static const char *const constructs[] = {
      "[length ",      "[floor (", "[:",       "[1:]", " for ",   " while ",      "(scanl ",    "(scanr ",
      "(shift1L ",     "(shift1R ", "(map3 ",  "(zip ", "unzip ", "(concat ",    "(transpose ", "reduce_by_index ",
      "(iota (length ", "(foldl ((", "(scanl ((", "&& "};
  enum { NC = sizeof constructs / sizeof constructs[0] };
  int seen[NC] = {0};
  for (uint64_t seed = RANDOM_V2_BASE; seed < RANDOM_V2_BASE + RANDOM_V2_PROGRAMS; seed++) {
    const char *text = gen_program(seed, &go).text;
    for (int k = 0; k < NC; k++) seen[k] += strstr(text, constructs[k]) != NULL;
  }
  for (int k = 0; k < NC; k++)
    ck_assert_msg(seen[k] >= 3, "only %d of the %d programs have \"%s\"", seen[k], RANDOM_V2_PROGRAMS,
                  constructs[k]);
  /* the default generator has none of them */
  GenOptions d = gen_default_options();
  for (uint64_t seed = RANDOM_BASE; seed < RANDOM_BASE + 200; seed++) {
    const char *text = gen_program(seed, &d).text;
    static const char *const v2only[] = {"loop ", "scanl", "scanr", "shift1", "map3", "zip", "concat",
                                         "transpose", "reduce_by_index"};
    for (size_t k = 0; k < sizeof v2only / sizeof v2only[0]; k++)
      ck_assert_msg(strstr(text, v2only[k]) == NULL, "default program %llu has %s", (unsigned long long)seed,
                    v2only[k]);
  }
}
END_TEST

Suite *suite_random_v2(void) {
  Suite *s = suite_create("random_v2");
  TCase *tc = tcase_create("random_v2");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_v2_wellformed);
  tcase_add_test(tc, test_v2_print_programs);
  tcase_add_loop_test(tc, test_v2_programs, 0, RANDOM_V2_BATCHES);
  suite_add_tcase(s, tc);
  return s;
}
