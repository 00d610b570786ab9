/* session_input.c: arbitrary bytes run as a script in a fresh session
   (session_input.h). */
#include "session_input.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../frontend/ir/common.h"
#include "../../frontend/ir/error.h"
#include "../../frontend/repl/repl_lines.h"
#include "../../frontend/repl/session.h"
#include "../../optimizer/opt.h"

/* The address space a fuzzed input may use (outside sanitizer builds,
   whose shadow memory needs far more): 8 GiB. */
#define ADDRESS_SPACE ((rlim_t)8 << 30)
/* The collector's heap stays below it, at 6 GiB: an input's array too big
   for what is left is an "out of memory" error in its session, and the
   rest of the address space stays for malloc, threads and stacks. With
   the heap free to grow to the limit, mutants of a seed with a large
   array (`iota 3000` -> `iota 300000000`) left no room for an allocation
   between two inputs, outside any session, where it has no handler and
   ends the run as an internal error. */
#define HEAP_LIMIT ((size_t)6 << 30)
/* Above this heap size, a collection before each input returns the last
   one's arrays before the next session starts. */
#define COLLECT_ABOVE ((size_t)1 << 30)

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

FuzzSessionStats fuzz_session_stats;

/* The input's time budget ran out: every item from now on is stopped as
   Ctrl-C stops one. An interrupt ends only the item it stops (the session
   goes on with the next, as the REPL does), so the timer, once it has
   fired, fires again every millisecond until the input ends: an item
   after the interrupted one (a gradient of a loop of 3 million steps, in
   a mutant) otherwise ran unbounded. */
static void on_alarm(int sig) {
  (void)sig;
  fe_interrupted = 1; /* as Ctrl-C: the loops and kernels poll it */
}

void fuzz_session_init(char *base, size_t stack, bool private_dir) {
  GC_INIT();
  GC_set_warn_proc(GC_ignore_warn_proc);
  GC_set_max_heap_size(HEAP_LIMIT);
  fe_stack_init(base, stack);
  char dir[] = "/tmp/una-fuzz-XXXXXX";
  if (private_dir && mkdtemp(dir) && chdir(dir) != 0) perror("una fuzz: chdir");
  /* a mutated save of an absolute path, or of ../x, writes nowhere */
  setenv("UNA_SAVE_LOCAL", "1", 1);
#ifndef UNDER_ASAN
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > ADDRESS_SPACE)) {
    rl.rlim_cur = ADDRESS_SPACE;
    setrlimit(RLIMIT_AS, &rl);
  }
#endif
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
}

/* The alarm after seconds, then every millisecond (0: none). */
static void set_timer(double seconds) {
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_sec = (time_t)seconds;
  it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
  if (seconds > 0) it.it_interval.tv_usec = 1000;
  setitimer(ITIMER_REAL, &it, NULL);
}

/* text[0..n) as typed at the REPL: line by line through its line
   discipline (repl_lines.h), each input run as the REPL runs it. */
static void run_as_typed(Session *s, const char *text, size_t n) {
  ReplLines rl = {0};
  size_t i = 0;
  while (!s->quit) {
    const char *line = NULL;
    if (i < n) {
      size_t j = i;
      while (j < n && text[j] != '\n') j++;
      line = una_strndup(text + i, j - i);
      i = j + 1;
    }
    const char *error;
    char *in = repl_lines_take(&rl, line, &error);
    if (error) fprintf(s->err, "<repl>:1:1: error: %s\n", error);
    if (in) fe_session_run_text(s, "<repl>", in, strlen(in), true);
    if (!line) break;
  }
}

/* Runs text in s (as a script, or as typed at the REPL) with its messages
   into a memory stream; returns them. */
static char *run_capturing(Session *s, const char *text, size_t n, bool typed) {
  char *msgs = NULL;
  size_t len = 0;
  FILE *err = open_memstream(&msgs, &len);
  if (!err) return una_strdup("");
  s->err = err;
  if (typed) run_as_typed(s, text, n);
  else fe_session_run_text(s, "<fuzz>", text, n, false);
  fclose(err);
  s->err = stderr;
  char *r = una_strndup(msgs, len);
  free(msgs);
  return r;
}

/* The name of a --dump-after stage, drawn from k. */
static const char *dump_stage(uint64_t k) {
  int n = opt_npasses, m = opt_nfinal_passes;
  int i = (int)(k % (uint64_t)(n + m + 2));
  return i < n ? opt_passes[i].name : i < n + m ? opt_final_passes[i - n].name : i == n + m ? "all" : "plan";
}

char *fuzz_session_input(const char *data, size_t n, double budget_s, uint64_t mode) {
  static FILE *null_out;
  if (!null_out) null_out = fopen("/dev/null", "w");
  if (GC_get_heap_size() > COLLECT_ABOVE) GC_gcollect(); /* the last input's arrays */
  Session *s = fe_session_new();
  s->out = null_out;
  s->check_passes = true;
  uint64_t k = mode * 0x9E3779B97F4A7C15ull;
  k ^= k >> 29;
  int how = (int)(k % 8);
  bool typed = how < 2;
  if (how == 2) {
    s->dump_after = dump_stage(k >> 8);
    fuzz_session_stats.dumped++;
  }
  if (how == 3) {
    s->optimize = false;
    fuzz_session_stats.unoptimized++;
  }
  fuzz_session_stats.repl += typed;
  if (!fe_session_load_prelude(s)) return una_strdup("the prelude does not load");
  fe_interrupted = 0;
  long internal0 = fe_internal_errors();
  set_timer(budget_s);
  char *msgs = run_capturing(s, data, n, typed);
  set_timer(0);
  fe_interrupted = 0;
  fuzz_session_stats.inputs++;
  if (!strstr(msgs, "error")) fuzz_session_stats.clean++;
  if (strstr(msgs, "interrupted")) fuzz_session_stats.interrupted++;
  if (fe_internal_errors() != internal0) return una_sprintf("an internal error:\n%s", msgs);
  /* the session goes on after whatever happened (unless the input quit) */
  if (s->quit) return NULL;
  char *out = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&out, &len);
  if (!o) return NULL;
  s->out = o;
  char *after = run_capturing(s, "\n1 + 1\n", 7, false);
  fclose(o);
  bool ok = len >= 2 && strncmp(out + len - 2, "2\n", 2) == 0;
  free(out);
  if (!ok) return una_sprintf("the session does not answer after the input (`1 + 1`: %s)", after);
  return NULL;
}
