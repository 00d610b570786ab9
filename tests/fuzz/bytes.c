/* bytes.c: the byte-level modes of the fuzzer (bytes.h). */
#include "bytes.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../frontend/ir/common.h"
#include "mutate.h"
#include "reduce.h"
#include "session_input.h"

extern char **environ;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* How `fuzz --replay path --here` ends in a child process: its exit
   status, or 1000 + the signal that killed it. */
static int replay_status(const char *path, double budget, uint64_t seed) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return -1;
  exe[len] = 0;
  char b[32], sd[32];
  snprintf(b, sizeof b, "%g", budget);
  snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
  char *argv[] = {exe, "--replay", (char *)path, "--budget", b, "--seed", sd, "--here", NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st;
  if (waitpid(pid, &st, 0) < 0) return -1;
  return WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* A failure: not passing (0) and not a usage or start-up problem (2, -1). */
static bool failing(int status) { return status != 0 && status != 2 && status != -1; }

typedef struct SameStatus {
  int status;
  double budget;
  uint64_t seed;
} SameStatus;

static bool replay_fails(const char *text, size_t n, void *ud) {
  const SameStatus *ss = ud;
  if (!fz_keep("candidate.una", text, n)) return false;
  return replay_status("candidate.una", ss->budget, ss->seed) == ss->status;
}

static const char *status_text(int status) {
  return status >= 1000 ? una_sprintf("killed by signal %d", status - 1000) : una_sprintf("exit status %d", status);
}

/* Reduces the failing input text[0..n) (replayed in child processes, in
   the current folder) and prints the result; keeps it in path. */
static void reduce_input(const char *text, size_t n, double budget, uint64_t seed, const char *path) {
  if (!fz_keep("candidate.una", text, n)) return;
  SameStatus ss = {replay_status("candidate.una", budget, seed), budget, seed};
  if (!failing(ss.status)) {
    printf("fuzz: the input does not fail when replayed alone (%s): nothing to reduce\n", status_text(ss.status));
    return;
  }
  FzReduceStats rs;
  size_t m;
  char *small = fz_reduce(text, n, replay_fails, &ss, 3000, 300, &m, &rs);
  fz_keep(path, small, m);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
  printf("fuzz: reduced from %zu to %zu bytes in %ld tries, failing with %s (kept in %s/%s):\n%.*s\n", rs.from,
         rs.to, rs.tries, status_text(ss.status), cwd, path, (int)m, small);
}

/* A run of mutants of the corpus. */
static int run_mutants(const FzBytes *a) {
  Corpus c;
  if (!corpus_load(&c, a->corpus)) {
    fprintf(stderr, "fuzz: no seed files in %s\n", a->corpus);
    return 2;
  }
  fuzz_session_init(a->base, a->stack, !a->here);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
  printf("fuzz: %d seeds from %s; the input being run is kept in %s/current.una\n", c.n, a->corpus, cwd);
  fflush(stdout);
  long inputs = 0;
  double t0 = now_s();
  for (uint64_t s = a->seed; a->count < 0 || (long)(s - a->seed) < a->count; s++) {
    if (a->count < 0 && now_s() - t0 >= a->seconds) break;
    uint64_t rng = s * 0x9E3779B97F4A7C15ull + 0x1234567;
    size_t n;
    int from;
    char *text = mutate(&c, &rng, &n, &from);
    fz_keep("current.una", text, n);
    char *rep = fuzz_session_input(text, n, a->budget, s);
    inputs++;
    if (inputs % 100000 == 0) { /* a long run cut short still says how far it got */
      fprintf(stderr, "fuzz: %ld inputs clean so far\n", inputs);
      fflush(stderr);
    }
    if (rep) {
      printf("fuzz: input %llu (a mutant of %s) fails (reproduce: fuzz --bytes --seed %llu --count 1, or "
             "fuzz --replay %s/current.una --seed %llu)\n%.*s\n%s\n",
             (unsigned long long)s, c.names[from], (unsigned long long)s, cwd, (unsigned long long)s, (int)n, text,
             rep);
      fflush(stdout);
      reduce_input(text, n, a->budget, s, una_sprintf("fuzz-bytes-%llu.una", (unsigned long long)s));
      return 1;
    }
  }
  double dt = now_s() - t0;
  const FuzzSessionStats *fs = &fuzz_session_stats;
  printf("fuzz: %ld byte-mutated inputs from seed %llu in %.1f s (%.1f a second): no crash, no internal error, "
         "every session survived; %ld ran without an error, %ld were interrupted by their budget; %ld went "
         "through the REPL's line handling, %ld with a --dump-after stage, %ld unoptimized\n",
         inputs, (unsigned long long)a->seed, dt, dt > 0 ? (double)inputs / dt : 0.0, fs->clean, fs->interrupted,
         fs->repl, fs->dumped, fs->unoptimized);
  return 0;
}

int fz_bytes(const FzBytes *a) {
  const char *path = a->replay ? a->replay : a->minimize;
  if (!path) return run_mutants(a);
  size_t n;
  char *text = fz_read(path, &n);
  if (!text) {
    perror(path);
    return 2;
  }
  if (a->minimize) {
    fuzz_session_init(a->base, a->stack, !a->here);
    reduce_input(text, n, a->budget, a->seed, "minimized.una");
    return 0;
  }
  fuzz_session_init(a->base, a->stack, !a->here);
  char *rep = fuzz_session_input(text, n, a->budget, a->seed);
  printf("fuzz: %s: %s\n", path, rep ? rep : "no crash, no internal error, the session survives");
  return rep ? 1 : 0;
}
