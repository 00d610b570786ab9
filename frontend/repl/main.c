/* main.c: the una command line (LANGUAGE.md section 9): options, scripts,
   -e text, standard input, or the REPL; all run on a thread with a large
   stack so that deep programs hit the stack guard, not the end of memory. */
#include "repl.h"
#include "session.h"
#include "../gradbench/gradbench.h"
#include "../../optimizer/opt.h"
#include "../../backend/blas.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#define STACK_SIZE ((size_t)512 << 20)
#define STACK_SLACK ((size_t)64 << 10) /* frames above the guard's base */

/* One script to run: a file (path; "-" for standard input) or -e text. */
typedef struct Source {
  bool is_text;
  const char *arg;
} Source;

/* What the command line asks for, and the outcome. */
typedef struct Job {
  Source *srcs;
  int nsrcs;
  const char *device; /* NULL: the CPU, silently */
  bool no_prelude;
  bool no_optimize;
  const char *dump_after;
  bool check_passes;
  bool print_all;
  const char *gradbench; /* --gradbench[=DIR]: the modules' folder, or NULL */
  int status;
} Job;

static void usage(FILE *out) {
  fputs("usage: una [OPTION]... [FILE]...\n"
        "Runs the Una scripts FILE... in order in one session, or the REPL when\n"
        "no FILE and no -e is given (a script is read from standard input when it\n"
        "is not a terminal).\n"
        "\n"
        "  -e TEXT                run TEXT as a script (may be repeated)\n"
        "  --device=cpu|gpu|auto  where arrays live and array builtins run\n"
        "                         (auto: a CUDA GPU when present, else the CPU)\n"
        "  --no-prelude           do not load the prelude (sum, dot, mean, ...)\n"
        "  -O0                    skip the optimizer\n"
        "  --dump-after=PASS      print each program after optimizer pass PASS\n"
        "                         (a pass name, plan for the execution plan,\n"
        "                         or all)\n"
        "  --check-passes         re-check the program's types after every\n"
        "                         optimizer pass (an internal error names the\n"
        "                         pass that broke it)\n"
        "  --print-all            print arrays in full, however long (else an\n"
        "                         array of more than 10,000 numbers shows only\n"
        "                         its first and last three at each level)\n"
        "  --gradbench[=DIR]      serve the GradBench protocol on standard input\n"
        "                         and output; module M is DIR/M.una (default:\n"
        "                         the source tree's bench/gradbench)\n"
        "  --help                 print this help and exit\n"
        "  --version              print the version and exit\n"
        "  -                      (as FILE) read a script from standard input\n"
        "\n"
        "Exit status: 0 on success, 1 on an error in a script, 2 on a bad\n"
        "command line.\n",
        out);
}

/* Reports a bad command line; returns the exit status 2. */
static int bad_usage(const char *msg) {
  fprintf(stderr, "una: %s\ntry 'una --help'\n", msg);
  return 2;
}

static bool known_device(const char *d) {
  return strcmp(d, "cpu") == 0 || strcmp(d, "gpu") == 0 || strcmp(d, "auto") == 0;
}

/* Parses argv into job. Returns -1 to go on running, else an exit status
   (0 after --help or --version, 2 on a bad command line). */
static int parse_args(int argc, char **argv, Job *job) {
  job->srcs = NEW_ARRAY(Source, argc > 0 ? argc : 1);
  bool only_files = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
      job->srcs[job->nsrcs++] = (Source){false, a};
    } else if (strcmp(a, "--") == 0) {
      only_files = true;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("una %s\n", UNA_VERSION);
      return 0;
    } else if (strcmp(a, "-e") == 0) {
      if (i + 1 >= argc) return bad_usage("option '-e' needs an argument (the text to run)");
      job->srcs[job->nsrcs++] = (Source){true, argv[++i]};
    } else if (strcmp(a, "--device") == 0 || strncmp(a, "--device=", 9) == 0) {
      const char *d = a[8] == '=' ? a + 9 : NULL;
      if (!d) {
        if (i + 1 >= argc)
          return bad_usage("option '--device' needs an argument (cpu, gpu or auto)");
        d = argv[++i];
      }
      if (!known_device(d))
        return bad_usage(
            una_sprintf("unknown device '%s' for --device (expected cpu, gpu or auto)", d));
      job->device = d;
    } else if (strcmp(a, "--no-prelude") == 0) {
      job->no_prelude = true;
    } else if (strcmp(a, "--dump-after") == 0 || strncmp(a, "--dump-after=", 13) == 0) {
      const char *p = a[12] == '=' ? a + 13 : NULL;
      if (!p) {
        if (i + 1 >= argc)
          return bad_usage("option '--dump-after' needs an argument (a pass name, plan or all)");
        p = argv[++i];
      }
      if (!opt_find_pass(p) && strcmp(p, "all") != 0 && strcmp(p, "plan") != 0)
        return bad_usage(una_sprintf("unknown optimizer pass '%s' for --dump-after (a pass name, plan or all)", p));
      job->dump_after = p;
    } else if (strcmp(a, "--check-passes") == 0) {
      job->check_passes = true;
    } else if (strcmp(a, "--print-all") == 0) {
      job->print_all = true;
    } else if (strcmp(a, "--gradbench") == 0) {
      job->gradbench = fe_gradbench_default_dir();
    } else if (strncmp(a, "--gradbench=", 12) == 0) {
      if (!a[12]) return bad_usage("option '--gradbench=' needs a folder");
      job->gradbench = a + 12;
    } else if (strcmp(a, "-O0") == 0) {
      job->no_optimize = true;
    } else if (strcmp(a, "-O") == 0 || strcmp(a, "-O1") == 0 || strcmp(a, "-O2") == 0 ||
               strcmp(a, "-O3") == 0) {
      job->no_optimize = false;
    } else {
      return bad_usage(una_sprintf("unknown option '%s'", a));
    }
  }
  if (job->gradbench && job->nsrcs > 0)
    return bad_usage("--gradbench reads the protocol on standard input: it takes no FILE or -e");
  return -1;
}

/* Reads all of standard input into GC memory; NULL with errno on failure. */
static char *read_stdin(size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = GC_MALLOC_ATOMIC(cap);
  if (!buf) una_internal_error(__FILE__, __LINE__, "out of memory reading standard input");
  for (;;) {
    if (n + 1 >= cap) {
      cap *= 2;
      buf = GC_REALLOC(buf, cap);
      if (!buf) una_internal_error(__FILE__, __LINE__, "out of memory reading standard input");
    }
    size_t got = fread(buf + n, 1, cap - 1 - n, stdin);
    n += got;
    if (got == 0) break;
  }
  if (ferror(stdin)) return NULL;
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* Runs standard input as the script "<stdin>". */
static bool run_stdin(Session *s) {
  size_t len = 0;
  char *text = read_stdin(&len);
  if (!text) {
    FeError e = {fe_span("<stdin>", 0, 0), una_sprintf("cannot read: %s", strerror(errno))};
    fflush(stdout);
    fe_error_print(stderr, e);
    return false;
  }
  return fe_session_run_text(s, "<stdin>", text, len, true);
}

/* A session with the command line's options and the prelude; NULL when
   the prelude fails (its error printed). */
static Session *job_session(void *ud) {
  Job *job = ud;
  Session *s = fe_session_new();
  s->optimize = !job->no_optimize;
  s->dump_after = job->dump_after;
  s->check_passes = job->check_passes;
  s->print_all = job->print_all;
  if (job->device) fe_session_set_device(s, job->device, "una: ");
  if (!job->no_prelude && !fe_session_load_prelude(s)) return NULL;
  return s;
}

/* Runs everything the command line asks for; sets job->status. */
static void run_job(Job *job) {
  if (job->gradbench) {
    una_gc_prefault();
    job->status = fe_gradbench(job->gradbench, job_session, job, stdin, stdout);
    return;
  }
  Session *s = job_session(job);
  if (!s) {
    job->status = 1;
    return;
  }
  bool ok = true;
  if (job->nsrcs == 0) {
    if (isatty(STDIN_FILENO)) {
      job->status = fe_repl(s);
      return;
    }
    ok = run_stdin(s);
  }
  for (int i = 0; i < job->nsrcs && ok && !s->quit; i++) {
    const Source *src = &job->srcs[i];
    if (src->is_text)
      ok = fe_session_run_text(s, "<-e>", src->arg, strlen(src->arg), true);
    else if (strcmp(src->arg, "-") == 0)
      ok = run_stdin(s);
    else
      ok = fe_session_run_file(s, src->arg);
  }
  fflush(stdout);
  job->status = ok ? 0 : 1;
}

/* The signals that the REPL handles (Ctrl-C, terminal resizing): main
   blocks them so that they reach the worker thread. */
static void interactive_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGWINCH);
}

/* The worker thread: SIGINT and SIGWINCH are delivered here (main blocks
   them), and the stack guard knows this thread's stack. */
static void *job_thread(void *arg) {
  char base;
  fe_stack_init(&base, STACK_SIZE - STACK_SLACK);
  sigset_t sigs;
  interactive_signals(&sigs);
  pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
  run_job(arg);
  return NULL;
}

/* The usable size of the main thread's stack, for running without a
   worker thread. */
static size_t main_stack_size(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 0)
    return (size_t)rl.rlim_cur - STACK_SLACK;
  return ((size_t)8 << 20) - STACK_SLACK;
}

/* OpenBLAS starts a thread per core when it loads and lets them spin:
   some 17 ms of every run on two cores (a one-line script: 26 ms, 8.5
   with one thread), for threads Una never uses (its products run on its
   own threads, one BLAS thread each: backend/blas.c). OpenBLAS reads
   OPENBLAS_NUM_THREADS only when it loads, before main, so a run without
   it sets it to 1 and runs itself again, at once (nothing read yet); a
   value the user set is kept. */
static void one_blas_thread(char **argv) {
  if (!cpu_blas_available() || getenv("OPENBLAS_NUM_THREADS")) return;
  if (setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  /* not run again: OpenBLAS's threads stay */
}

int main(int argc, char **argv) {
  one_blas_thread(argv);
  GC_INIT();
  una_gc_reserve();
  /* Allocation failures are reported as located Una errors; the collector's
     own warnings ("Out of Memory!", "Repeated allocation of very large
     block") would only add noise on stderr. */
  GC_set_warn_proc(GC_ignore_warn_proc);
  Job *job = NEW(Job);
  int status = parse_args(argc, argv, job);
  if (status >= 0) return status;

  pthread_attr_t attr;
  pthread_t th;
  bool threaded =
      pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, STACK_SIZE) == 0;
  sigset_t sigs, old;
  interactive_signals(&sigs);
  pthread_sigmask(SIG_BLOCK, &sigs, &old);
  if (threaded && pthread_create(&th, &attr, job_thread, job) == 0) {
    pthread_join(th, NULL);
  } else {
    /* No room for a big stack: run here with what the main thread has. */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    char base;
    fe_stack_init(&base, main_stack_size());
    run_job(job);
  }
  fflush(stdout);
  return job->status;
}
