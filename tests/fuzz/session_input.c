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
#include "../../frontend/repl/session.h"

/* The address space a fuzzed input may use (outside sanitizer builds,
   whose shadow memory needs far more): 8 GiB. */
#define ADDRESS_SPACE ((rlim_t)8 << 30)

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

FuzzSessionStats fuzz_session_stats;

static void on_alarm(int sig) {
  (void)sig;
  fe_interrupted = 1; /* as Ctrl-C: the loops and kernels poll it */
}

void fuzz_session_init(char *base, size_t stack, bool private_dir) {
  GC_INIT();
  GC_set_warn_proc(GC_ignore_warn_proc);
  fe_stack_init(base, stack);
  char dir[] = "/tmp/una-fuzz-XXXXXX";
  if (private_dir && mkdtemp(dir) && chdir(dir) != 0) perror("una fuzz: chdir");
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

static void set_timer(double seconds) {
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_sec = (time_t)seconds;
  it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
  setitimer(ITIMER_REAL, &it, NULL);
}

/* Runs text in s with its messages into a memory stream; returns them. */
static char *run_capturing(Session *s, const char *text, size_t n) {
  char *msgs = NULL;
  size_t len = 0;
  FILE *err = open_memstream(&msgs, &len);
  if (!err) return una_strdup("");
  s->err = err;
  fe_session_run_text(s, "<fuzz>", text, n, false);
  fclose(err);
  s->err = stderr;
  char *r = una_strndup(msgs, len);
  free(msgs);
  return r;
}

char *fuzz_session_input(const char *data, size_t n, double budget_s) {
  static FILE *null_out;
  if (!null_out) null_out = fopen("/dev/null", "w");
  Session *s = fe_session_new();
  s->out = null_out;
  s->check_passes = true;
  if (!fe_session_load_prelude(s)) return una_strdup("the prelude does not load");
  fe_interrupted = 0;
  long internal0 = fe_internal_errors();
  set_timer(budget_s);
  char *msgs = run_capturing(s, data, n);
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
  char *after = run_capturing(s, "\n1 + 1\n", 7);
  fclose(o);
  bool ok = len >= 2 && strncmp(out + len - 2, "2\n", 2) == 0;
  free(out);
  if (!ok) return una_sprintf("the session does not answer after the input (`1 + 1`: %s)", after);
  return NULL;
}
