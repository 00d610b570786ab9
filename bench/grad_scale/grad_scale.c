/* grad_scale.c: how the cost of reverse mode grows with program size: the
   time and memory to derive (rev_grad) and to evaluate the gradient of
   straight-line programs of 1k, 2k, 4k, 8k and 16k lets, on the UNF path
   and on the direct path, printed as a markdown table with the ratio per
   doubling (about 2 for linear growth).

   The programs scale up the paper's example 1.1: each let uses the
   previous two,
     def f (x1: R) (x2: R) : R =
       let w1 = x1 * x2 in let w2 = w1 * x1 in
       let w3 = w2 * x1 + w1 * x2 in ... let wN = w(N-1) * x1 + w(N-2) * x2 in wN
   evaluated at x1 = x2 = 0.5, where the values stay bounded (no overflow
   and no subnormal numbers to slow the arithmetic down).

   Each measurement runs in its own child process so that its peak resident
   memory (getrusage) is its own. Usage: grad_scale [N ...] (default sizes
   1000 2000 4000 8000 16000). Build and run with `make bench-grad`. */
#include <math.h>
#include <pthread.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../../backend/eval.h"
#include "../../frontend/check.h"
#include "../../frontend/parser.h"
#include "../../optimizer/opt.h"
#include "../../reverse/reverse.h"

#define STACK_SIZE ((size_t)1 << 30)
#define REPS 3
#define MAX_SIZES 16

typedef struct Result {
  int n;
  int path;            /* 0 UNF, 1 direct */
  double check_ms;     /* parse and check f */
  double derive_ms;    /* rev_grad, best of REPS */
  double alloc_mb;     /* bytes allocated by one rev_grad */
  double eval_ms;      /* one evaluation of the gradient, best of REPS */
  double rss_check_mb; /* peak resident memory after checking f */
  double rss_derive_mb;/* ... after deriving the gradient */
  double rss_eval_mb;  /* ... after evaluating it */
  long nodes;          /* nodes of the gradient's body */
  long eval_gcs;       /* collections during one evaluation */
  double eval_alloc_mb;/* bytes allocated by one evaluation */
  double opt_ms;       /* opt_optimize_def of the gradient, best of REPS */
  double rss_opt_mb;   /* peak resident memory after optimizing */
  long opt_nodes;      /* nodes of the optimized gradient's body */
  double opt_eval_ms;  /* one evaluation of the optimized gradient */
  double g1, g2;       /* the gradient at (0.5, 0.5) */
  double o1, o2;       /* the optimized gradient there */
  char error[256];
} Result;


/* The program of n lets (n >= 2). */
static char *program(int n) {
  size_t cap = (size_t)n * 48 + 256, len = 0;
  char *s = GC_MALLOC_ATOMIC(cap);
  len += (size_t)snprintf(s + len, cap - len,
                          "def f (x1: R) (x2: R) : R =\n  let w1 = x1 * x2 in\n  let w2 = w1 * x1 in\n");
  for (int i = 3; i <= n; i++)
    len += (size_t)snprintf(s + len, cap - len, "  let w%d = w%d * x1 + w%d * x2 in\n", i, i - 1, i - 2);
  snprintf(s + len, cap - len, "  w%d\n", n);
  return s;
}

/* Nodes of a term, without recursion (the bodies are deep let chains). */
static long term_size(const Term *t) {
  size_t cap = 1024, top = 0;
  const Term **stack = malloc(cap * sizeof *stack);
  long n = 0;
  stack[top++] = t;
  while (top) {
    const Term *u = stack[--top];
    n++;
    for (int i = 0; i < u->nkids; i++) {
      if (top == cap) stack = realloc(stack, (cap *= 2) * sizeof *stack);
      stack[top++] = u->kids[i];
    }
  }
  free(stack);
  return n;
}

typedef struct Job {
  int n, path;
  Result *r;
} Job;

/* One measurement (in the child, on a thread with a big stack). */
static void *measure(void *arg) {
  Job *job = arg;
  Result *r = job->r;
  char base;
  fe_stack_init(&base, STACK_SIZE - ((size_t)1 << 20));
  FeTry t;
  if (!fe_try(&t)) {
    snprintf(r->error, sizeof r->error, "%s", fe_error_text(t.err));
    return NULL;
  }
  char *text = program(job->n);
  Def *f = NULL;
  int wrt[2] = {0, 1};
  RevPath path = job->path == 0 ? REV_UNF : REV_DIRECT;
  Def *g = NULL;
  r->derive_ms = INFINITY;
  for (int rep = 0; rep < REPS; rep++) {
    /* a fresh f each time: rev_grad caches gradients per Def */
    double t0 = now_ms();
    ParseResult pr = fe_parse_program("<bench>", text, strlen(text));
    if (pr.nerrors) fe_raise(pr.errors[0]);
    f = fe_check_def(fe_env_new(), pr.items[0]);
    if (rep == 0) {
      r->check_ms = now_ms() - t0;
      r->rss_check_mb = peak_rss_mb();
    }
    size_t bytes0 = GC_get_total_bytes();
    t0 = now_ms();
    g = rev_grad(f, wrt, 2, path);
    double ms = now_ms() - t0;
    if (rep == 0) r->alloc_mb = (double)(GC_get_total_bytes() - bytes0) / (1 << 20);
    if (ms < r->derive_ms) r->derive_ms = ms;
  }
  r->rss_derive_mb = peak_rss_mb();
  r->nodes = term_size(g->body);

  Value args[2] = {val_real(0.5), val_real(0.5)};
  Value v = val_real(0);
  r->eval_ms = INFINITY;
  for (int rep = 0; rep < REPS; rep++) {
    GC_gcollect(); /* each evaluation starts from a collected heap */
    size_t gcs = GC_get_gc_no(), bytes0 = GC_get_total_bytes();
    double t0 = now_ms();
    v = cpu_call(g, args);
    double ms = now_ms() - t0;
    if (ms < r->eval_ms) r->eval_ms = ms;
    r->eval_gcs = (long)(GC_get_gc_no() - gcs);
    r->eval_alloc_mb = (double)(GC_get_total_bytes() - bytes0) / (1 << 20);
  }
  r->rss_eval_mb = peak_rss_mb();
  if (v.kind == V_TUPLE && v.u.t->n == 2) {
    r->g1 = v.u.t->items[0].u.r;
    r->g2 = v.u.t->items[1].u.r;
  }

  /* the optimizer on the derived gradient, as :grad and evaluation run it */
  OptOptions oo = {0};
  oo.enabled = true;
  Def *og = g;
  r->opt_ms = INFINITY;
  for (int rep = 0; rep < REPS; rep++) {
    double t0 = now_ms();
    og = opt_optimize_def(g, &oo);
    double ms = now_ms() - t0;
    if (ms < r->opt_ms) r->opt_ms = ms;
  }
  r->rss_opt_mb = peak_rss_mb();
  r->opt_nodes = term_size(og->body);
  r->opt_eval_ms = INFINITY;
  for (int rep = 0; rep < REPS; rep++) {
    GC_gcollect();
    double t0 = now_ms();
    v = cpu_call(og, args);
    double ms = now_ms() - t0;
    if (ms < r->opt_eval_ms) r->opt_eval_ms = ms;
  }
  if (v.kind == V_TUPLE && v.u.t->n == 2) {
    r->o1 = v.u.t->items[0].u.r;
    r->o2 = v.u.t->items[1].u.r;
  }
  fe_untry(&t);
  return NULL;
}

/* Runs one measurement in a child process; the result comes back through
   a pipe. */
static Result run_child(int n, int path) {
  Result r;
  memset(&r, 0, sizeof r);
  r.n = n;
  r.path = path;
  int fd[2];
  if (pipe(fd) != 0) {
    snprintf(r.error, sizeof r.error, "pipe failed");
    return r;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    Job job = {n, path, &r};
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_SIZE);
    if (pthread_create(&th, &attr, measure, &job) == 0) pthread_join(th, NULL);
    else snprintf(r.error, sizeof r.error, "cannot start a thread with a %zu-byte stack", STACK_SIZE);
    ssize_t w = write(fd[1], &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fd[1]);
  Result got;
  ssize_t k = read(fd[0], &got, sizeof got);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (k != (ssize_t)sizeof got) {
    snprintf(r.error, sizeof r.error, "the measurement died (status %d)", status);
    return r;
  }
  return got;
}

static void ratio(char *buf, size_t size, double a, double b) {
  if (b > 0 && a > 0) snprintf(buf, size, "%.2f", a / b);
  else snprintf(buf, size, "-");
}

int main(int argc, char **argv) {
  GC_INIT();
  una_gc_reserve();
  GC_set_warn_proc(GC_ignore_warn_proc);
  int sizes[MAX_SIZES] = {1000, 2000, 4000, 8000, 16000}, nsizes = 5;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < MAX_SIZES; i++) {
      int n = atoi(argv[i]);
      if (n < 2) {
        fprintf(stderr, "grad_scale: sizes must be integers >= 2, found '%s'\n", argv[i]);
        return 2;
      }
      sizes[nsizes++] = n;
    }
  }
  static const char *const names[2] = {"UNF", "direct"};
  Result res[2][MAX_SIZES];
  int failed = 0;
  /* GRAD_SCALE_PATHS=unf (or direct) measures one path only, for profiling */
  const char *only = getenv("GRAD_SCALE_PATHS");
  memset(res, 0, sizeof res);
  for (int path = 0; path < 2; path++)
    for (int i = 0; i < nsizes; i++) {
      if (only && strcasecmp(only, names[path]) != 0) {
        snprintf(res[path][i].error, sizeof res[path][i].error, "not measured (GRAD_SCALE_PATHS=%s)", only);
        continue;
      }
      res[path][i] = run_child(sizes[i], path);
      if (res[path][i].error[0]) failed = 1;
    }
  printf("Gradient of straight-line programs (example 1.1 scaled up) in both parameters.\n"
         "derive = rev_grad (inlining included), evaluate = cpu_call of the gradient, best of %d;\n"
         "alloc = bytes allocated by one rev_grad; RSS = the process's peak resident memory after\n"
         "checking f and after deriving; eval alloc/GCs = bytes allocated and collections during\n"
         "one evaluation (started on a collected heap); x = ratio to the row above (the size doubled).\n\n",
         REPS);
  printf("| path | lets | derive ms | optimize ms | x | derive + optimize ms | x | RSS optimize MB | "
         "optimized nodes | x | evaluate optimized ms |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int path = 0; path < 2; path++)
    for (int i = 0; i < nsizes; i++) {
      const Result *r = &res[path][i], *prev = i > 0 ? &res[path][i - 1] : NULL;
      if (r->error[0]) continue;
      bool doubled = prev && !prev->error[0] && r->n == 2 * prev->n;
      char x1[16], x2[16], x3[16];
      ratio(x1, sizeof x1, doubled ? r->opt_ms : 0, doubled ? prev->opt_ms : 0);
      ratio(x2, sizeof x2, doubled ? r->derive_ms + r->opt_ms : 0, doubled ? prev->derive_ms + prev->opt_ms : 0);
      ratio(x3, sizeof x3, doubled ? (double)r->opt_nodes : 0, doubled ? (double)prev->opt_nodes : 0);
      printf("| %s | %d | %.1f | %.1f | %s | %.1f | %s | %.0f | %ld | %s | %.2f |\n", names[path], r->n, r->derive_ms,
             r->opt_ms, x1, r->derive_ms + r->opt_ms, x2, r->rss_opt_mb, r->opt_nodes, x3, r->opt_eval_ms);
    }
  printf("\n");
  printf("| path | lets | check ms | derive ms | x | alloc MB | x | RSS check MB | RSS derive MB | "
         "evaluate ms | x | eval alloc MB | eval GCs | gradient nodes | x |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int path = 0; path < 2; path++)
    for (int i = 0; i < nsizes; i++) {
      const Result *r = &res[path][i], *prev = i > 0 ? &res[path][i - 1] : NULL;
      if (r->error[0]) {
        printf("| %s | %d | error: %s |\n", names[path], r->n, r->error);
        continue;
      }
      bool doubled = prev && !prev->error[0] && r->n == 2 * prev->n;
      char x1[16], x2[16], x3[16], x4[16];
      ratio(x1, sizeof x1, doubled ? r->derive_ms : 0, doubled ? prev->derive_ms : 0);
      ratio(x2, sizeof x2, doubled ? r->alloc_mb : 0, doubled ? prev->alloc_mb : 0);
      ratio(x3, sizeof x3, doubled ? r->eval_ms : 0, doubled ? prev->eval_ms : 0);
      ratio(x4, sizeof x4, doubled ? (double)r->nodes : 0, doubled ? (double)prev->nodes : 0);
      printf("| %s | %d | %.1f | %.1f | %s | %.1f | %s | %.0f | %.0f | %.2f | %s | %.1f | %ld | %ld | %s |\n",
             names[path], r->n, r->check_ms, r->derive_ms, x1, r->alloc_mb, x2, r->rss_check_mb,
             r->rss_derive_mb, r->eval_ms, x3, r->eval_alloc_mb, r->eval_gcs, r->nodes, x4);
    }
  /* both paths compute the same gradient */
  printf("\n");
  for (int i = 0; i < nsizes; i++) {
    const Result *a = &res[0][i], *b = &res[1][i];
    if (a->error[0] || b->error[0]) continue;
    double d = fmax(fabs(a->g1 - b->g1) / fmax(fabs(a->g1), 1e-300), fabs(a->g2 - b->g2) / fmax(fabs(a->g2), 1e-300));
    char g1[40], g2[40];
    una_format_real(g1, sizeof g1, a->g1);
    una_format_real(g2, sizeof g2, a->g2);
    double od = 0;
    for (int k = 0; k < 2; k++) {
      const Result *x = k ? b : a;
      od = fmax(od, fmax(fabs(x->o1 - x->g1) / fmax(fabs(x->g1), 1e-300), fabs(x->o2 - x->g2) / fmax(fabs(x->g2), 1e-300)));
    }
    printf("%d lets: gradient (%s, %s); UNF and direct differ by %.2g, optimized and not by %.2g (relative)\n",
           a->n, g1, g2, d, od);
    if (!(d <= 1e-12) || !(od <= 1e-12)) failed = 1;
  }
  return failed;
}
