/* una_bench.c: the CPU benchmark suite's driver (bench/cpu/README.md).

   For every program of c_grads.c and every size n it measures, each in its
   own child process (so that peak memory is that measurement's own):
     - Una's primal: the expression `f X0 X1 ...` run as the session runs an
       expression item (check, deriv_expand, opt_optimize_program, then
       cpu_call), with X0, X1, ... global lets bound to the input arrays;
     - Una's gradient: `grad f X0 X1 ...` the same way, its peak resident
       memory after the first (warm-up) evaluation, and its largest relative
       difference from the hand-written C gradient;
     - the hand-written C primal and gradient (c_grads.c compiled with gcc
       -O3 -march=native -fopenmp, on all cores); the gradient with
       malloc'd results that reuse freed memory (the table) and with
       glibc's default malloc (fresh pages in every call; the details);
       and the gradient of the earlier baseline, the same C compiled with
       gcc -O2 and single-threaded (the table).
   Then, for each array program of c_arrays.c (at its one size), Una's
   value of `f X0 X1` and the C baseline's (OpenBLAS for the products),
   each in its own child process, and their largest relative difference;
   and for each gradient program of c_arrays.c (a scalar loss of an array
   program, or an MLP), Una's primal and gradient and the hand-written C
   gradient, each in its own child process, the gradients compared
   component by component as above.
   Times are the median of REPS evaluations after warm-up (three
   evaluations, and more while the collector's heap still grows, up to
   six); before each
   Una evaluation the heap is collected (outside the timing), so every run
   starts from the same state. JAX and PyTorch times come from peers.py as
   JSON lines (--peers FILE) and are merged into the table.

   Usage: una_bench [--programs a,b,...] [--n "N ..."] [--reps R]
                    [--peers FILE] [--tol T] [--timeout S]
   Exit status: 0, or 1 when a measurement failed or Una's gradient differs
   from C's by more than T (default 1e-9); 2 for a bad command line. */
#include <float.h>
#include <limits.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../../backend/eval.h"
#include "../../backend/jit.h"
#include "../../backend/value.h"
#include "../../frontend/check.h"
#include "../../frontend/parser.h"
#include "../../frontend/repl/session.h"
#include "../../optimizer/program.h"
#include "../../derive/derive.h"
#include "../../reverse/reverse.h"
#include "c_arrays.h"
#include "c_grads.h"

#define STACK_SIZE ((size_t)1 << 30)
#define MAX_REPS 50
#define MIN_WARMUP 3
#define MAX_WARMUP 6
#define MAX_SIZES 16
#define MAX_PEER_ROWS 4096

/* The difference that decides (err): relative, against max(|c_i|, REL_FLOOR
   * max_j |c_j|) per gradient component, so that elements far below the
   component's largest (the result of cancellation, as softmax z - y, or of
   underflow, as x^k) are compared at that scale and not to their own last
   bits, which any change of summation order moves. The purely elementwise
   relative difference is reported too (err_elem), for information. */
#define REL_FLOOR 1e-3

/* ---- small utilities ----------------------------------------------------- */

/* The largest relative difference of u from c (n elements; see REL_FLOOR),
   and in *at the index where it is; a NaN that is not in both counts as
   infinity. */
static double rel_diff(const double *u, const double *c, size_t n, double floor_frac, size_t *at) {
  double scale = 0, worst = 0;
  *at = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(c[i]) > scale) scale = fabs(c[i]);
  double floor = fmax(floor_frac * scale, DBL_MIN);
  for (size_t i = 0; i < n; i++) {
    double d;
    if (isnan(u[i]) || isnan(c[i])) d = isnan(u[i]) && isnan(c[i]) ? 0 : INFINITY;
    else if (u[i] == c[i]) d = 0; /* infinities too */
    else d = fabs(u[i] - c[i]) / fmax(fabs(c[i]), floor);
    if (d > worst) {
      worst = d;
      *at = i;
    }
  }
  return worst;
}

static double sum_abs(const double *a, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += fabs(a[i]);
  return s;
}

/* ---- one measurement ----------------------------------------------------- */

typedef enum { M_UNA_PRIMAL, M_UNA_GRAD, M_C, M_ARRAY_UNA, M_ARRAY_C, M_AGRAD_PRIMAL, M_AGRAD_GRAD, M_AGRAD_C } MeasKind;

typedef struct Meas {
  double ms;        /* Una primal or gradient: median ms; C: gradient median ms */
  double first_ms;  /* the warm-up evaluation */
  double prep_ms;   /* Una: check + deriv_expand + opt_optimize_program */
  double peak_mb;   /* Una: peak resident memory after the warm-up evaluation */
  double c_primal_ms;
  double c_fresh_ms; /* C gradient with glibc's default malloc: fresh pages for big results */
  double c_o2_ms;   /* C: the gradient of gcc -O2, single-threaded, reusing freed memory */
  double err;       /* Una gradient: max relative difference from C's (REL_FLOOR); primal: |f - f_C| / |f_C| */
  double err_elem;  /* Una gradient: max elementwise relative difference from C's */
  double gabs;      /* Una gradient: sum of |g| over C's gradient (checks the peers) */
  double value;     /* the primal value */
  int worst_arg;    /* Una gradient: where err is: the argument, */
  size_t worst_at;  /* the element, */
  double worst_una, worst_c; /* and both values there */
  int reps;         /* array programs: the timed runs (QUICK_REPS for quick ones) */
  char error[512];
} Meas;

typedef struct Job {
  const BenchProgram *p;
  const BenchArrayProgram *ap; /* M_ARRAY_*: the array program */
  size_t n;
  MeasKind kind;
  int reps;
  Meas *m;
} Job;

/* Binds the global `name` to the value v in the session, as `let name = ...`
   would (the value is not computed by Una: it is the driver's own array);
   like is a literal of v's type ("0", "[0]", "[[0]]"). */
static void bind_global_like(Session *s, const char *name, Value v, const char *like) {
  char *text = una_sprintf("let %s = %s\n", name, like);
  ParseResult pr = fe_parse_program("<bench>", text, strlen(text));
  if (pr.nerrors) fe_raise(pr.errors[0]);
  Global **gs = NULL;
  fe_check_let(s->env, pr.items[0], &gs);
  Value *slot = NEW(Value);
  *slot = v;
  gs[0]->value = slot;
  fe_env_bind_global(s->env, gs[0]);
}

static void bind_global(Session *s, const char *name, Value v, bool array) {
  bind_global_like(s, name, v, array ? "[0]" : "0");
}

/* The table's C of the program p of bench_programs: its gcc -O3 -march=native
   -fopenmp build (c_grads.c). */
static const BenchProgram *omp_of(const BenchProgram *p) { return &bench_programs_omp[p - bench_programs]; }

/* The array programs that run in less than this many ms are timed
   QUICK_REPS times (the median of 5 such short runs moves with every other
   process on the machine). */
#define QUICK_MS 20.0
#define QUICK_REPS MAX_REPS

/* Does what the session does for the expression item expr (session.c,
   ITEM_EXPR), then times the evaluation of the result: the first (warm-up)
   evaluation, more warm-up, then the median of reps into m (QUICK_REPS
   when quick and the last warm-up evaluation took less than QUICK_MS);
   returns the last value. */
static Value time_una(Session *s, const char *expr, int reps, bool quick, Meas *m) {
  double t0 = now_ms();
  ParseResult pr = fe_parse_program("<bench>", expr, strlen(expr));
  if (pr.nerrors) fe_raise(pr.errors[0]);
  OptOptions oo = {0};
  oo.enabled = true;
  DerivOpt ro = {opt_derived, &oo};
  Def *d = deriv_expand(fe_check_expr(s->env, pr.items[0]->body), &ro);
  d = opt_optimize_program(d, &oo);
  m->prep_ms = now_ms() - t0;

  GC_gcollect();
  t0 = now_ms();
  Value v = cpu_call(d, NULL);
  m->first_ms = now_ms() - t0;
  m->peak_mb = peak_rss_mb();
  /* more warm-up: MIN_WARMUP evaluations in all, and more while the
     collector's heap still grows (each growth is fresh pages to fault in:
     such runs measure the heap's growth, not the evaluation), up to
     MAX_WARMUP */
  double warm_ms = m->first_ms;
  for (int w = 1; w < MAX_WARMUP; w++) {
    size_t heap = GC_get_heap_size();
    v = val_real(0);
    GC_gcollect();
    t0 = now_ms();
    v = cpu_call(d, NULL);
    warm_ms = now_ms() - t0;
    if (w + 1 >= MIN_WARMUP && GC_get_heap_size() == heap) break;
  }
  /* the kernels the warm-up sent to the C compiler (backend/jit.h): the
     timed evaluations run them compiled, as a program running longer would */
  cpu_jit_wait();
  v = val_real(0);
  GC_gcollect();
  v = cpu_call(d, NULL);
  if (quick && warm_ms < QUICK_MS) reps = QUICK_REPS;
  m->reps = reps;
  double times[MAX_REPS];
  for (int r = 0; r < reps; r++) {
    v = val_real(0); /* the previous result is garbage now, as for a user */
    GC_gcollect();
    t0 = now_ms();
    v = cpu_call(d, NULL);
    times[r] = now_ms() - t0;
  }
  m->ms = median(times, reps);
  return v;
}

/* The Una measurements (in the child, on a thread with a big stack). */
static void una_measure(Job *job) {
  const BenchProgram *p = job->p, *pc = omp_of(p);
  Meas *m = job->m;
  size_t n = job->n;
  FeTry t;
  if (!fe_try(&t)) {
    snprintf(m->error, sizeof m->error, "%s", fe_error_text(t.err));
    return;
  }
  Session *s = fe_session_new();
  if (!fe_session_load_prelude(s)) fe_error(fe_nospan, "the prelude failed to load");
  if (!fe_session_run_text(s, "<bench>", p->una, strlen(p->una), true))
    fe_error(fe_nospan, "defining f failed (the error is on stderr)");

  /* the inputs, in Una arrays (flat double buffers) that C reads too */
  BenchArg args[BENCH_MAX_ARGS];
  Value vals[BENCH_MAX_ARGS];
  memset(args, 0, sizeof args);
  Array *arrs[BENCH_MAX_ARGS] = {0};
  for (int k = 0; k < p->nargs; k++)
    if (p->is_array[k]) {
      arrs[k] = val_new_real_array(n, fe_nospan);
      args[k].a = arrs[k]->r;
    }
  p->inputs(n, args);
  char expr[256];
  int len = snprintf(expr, sizeof expr, "%sf", job->kind == M_UNA_GRAD ? "grad " : "");
  for (int k = 0; k < p->nargs; k++) {
    vals[k] = p->is_array[k] ? val_array(arrs[k]) : val_real(args[k].x);
    char name[32];
    snprintf(name, sizeof name, "X%d", k);
    bind_global(s, name, vals[k], p->is_array[k]);
    len += snprintf(expr + len, sizeof expr - (size_t)len, " %s", name);
  }

  Value v = time_una(s, expr, job->reps, false, m);

  if (job->kind == M_UNA_PRIMAL) {
    double c = pc->primal(n, args);
    m->value = v.u.r;
    m->err = v.u.r == c ? 0 : fabs(v.u.r - c) / fmax(fabs(c), DBL_MIN);
  } else {
    BenchArg out[BENCH_MAX_ARGS];
    memset(out, 0, sizeof out);
    pc->grad(n, args, out);
    m->err = m->err_elem = 0;
    m->gabs = 0;
    if (p->nargs > 1 && (v.kind != V_TUPLE || v.u.t->n != p->nargs))
      fe_error(fe_nospan, "the gradient is not a tuple of %d components", p->nargs);
    for (int k = 0; k < p->nargs; k++) {
      Value g = p->nargs == 1 ? v : v.u.t->items[k];
      const double *gu, *gc;
      size_t glen = 1, at, at_elem;
      if (p->is_array[k]) {
        if (g.kind != V_ARRAY || g.u.a->boxed || g.u.a->len != n)
          fe_error(fe_nospan, "gradient component %d is not an array of %zu reals", k, n);
        gu = g.u.a->r;
        gc = out[k].a;
        glen = n;
      } else {
        if (g.kind != V_REAL) fe_error(fe_nospan, "gradient component %d is not a real", k);
        gu = &g.u.r;
        gc = &out[k].x;
      }
      double e = rel_diff(gu, gc, glen, REL_FLOOR, &at);
      m->err_elem = fmax(m->err_elem, rel_diff(gu, gc, glen, 0, &at_elem));
      if (e > m->err) {
        m->err = e;
        m->worst_arg = k;
        m->worst_at = at;
        m->worst_una = gu[at];
        m->worst_c = gc[at];
      }
      m->gabs += sum_abs(gc, glen);
      free(out[k].a);
    }
  }
  fe_untry(&t);
}

/* Median ms of reps calls of p's C gradient after a warm-up call; the
   results are freed after each (outside the timing). */
static double time_c_grad(const BenchProgram *p, size_t n, const BenchArg *args, int reps) {
  double times[MAX_REPS];
  for (int r = -1; r < reps; r++) {
    BenchArg out[BENCH_MAX_ARGS];
    memset(out, 0, sizeof out);
    double t0 = now_ms();
    p->grad(n, args, out);
    double ms = now_ms() - t0;
    if (r >= 0) times[r] = ms;
    for (int k = 0; k < p->nargs; k++) free(out[k].a);
  }
  return median(times, reps);
}

/* The C measurements: primal and gradient, median of reps after a warm-up.
   The gradient is timed twice: with glibc's default malloc, which gives
   arrays this large fresh pages from mmap in every call and returns them
   at free, so that every call pays the page faults of its results
   (c_fresh_ms); then (ms, the table's) with malloc told to keep freed
   memory and reuse it, as Una's collected heap is reused from one
   evaluation to the next. Runs on the process's main thread: a thread's
   own malloc arena cannot hold blocks this large without mmap. */
static void c_measure(Job *job) {
  const BenchProgram *p = omp_of(job->p), *p2 = job->p;
  Meas *m = job->m;
  size_t n = job->n;
  BenchArg args[BENCH_MAX_ARGS];
  memset(args, 0, sizeof args);
  for (int k = 0; k < p->nargs; k++)
    if (p->is_array[k]) {
      args[k].a = malloc(n * sizeof(double));
      if (!args[k].a) {
        snprintf(m->error, sizeof m->error, "out of memory");
        return;
      }
    }
  p->inputs(n, args);
  double times[MAX_REPS];
  volatile double sink = p->primal(n, args);
  for (int r = 0; r < job->reps; r++) {
    double t0 = now_ms();
    sink = p->primal(n, args);
    times[r] = now_ms() - t0;
  }
  m->value = sink;
  m->c_primal_ms = median(times, job->reps);
  m->c_fresh_ms = time_c_grad(p, n, args, job->reps);
#ifdef __GLIBC__
  mallopt(M_MMAP_MAX, 0);              /* big blocks from the heap, not mmap */
  mallopt(M_TRIM_THRESHOLD, INT_MAX);  /* and freed memory kept for reuse */
#endif
  m->ms = time_c_grad(p, n, args, job->reps);
  m->c_o2_ms = time_c_grad(p2, n, args, job->reps);
  for (int k = 0; k < p->nargs; k++) free(args[k].a);
}

/* ---- the array programs ------------------------------------------------ */

/* The reals of v (a real, an array of reals, an array of such arrays, a
   tuple of such values, ...) appended to out[*k ..] (at most max); false
   when v has another shape. */
static bool flatten(Value v, double *out, size_t max, size_t *k) {
  if (v.kind == V_REAL) {
    if (*k >= max) return false;
    out[(*k)++] = v.u.r;
    return true;
  }
  if (v.kind == V_TUPLE) {
    for (size_t i = 0; i < (size_t)v.u.t->n; i++)
      if (!flatten(v.u.t->items[i], out, max, k)) return false;
    return true;
  }
  if (v.kind != V_ARRAY) return false;
  const Array *a = v.u.a;
  val_host(a);
  for (size_t i = 0; i < a->len; i++)
    if (!flatten(val_array_get(a, i), out, max, k)) return false;
  return true;
}

/* The number of reals of an argument. */
static size_t array_len(const BenchArray *g) {
  return g->kind == BA_REAL ? 1 : g->kind == BA_VECTOR ? g->cols : g->rows * g->cols;
}

/* Una's value of an array program: its arguments are the driver's arrays
   (a matrix is an [[R]] of row views into one buffer, as an n-D load
   gives); then its largest relative difference from the C baseline's.
   For a gradient program: f's value (M_AGRAD_PRIMAL), against C's, or its
   gradient (M_AGRAD_GRAD: p->grad applied to the arguments), against the
   hand-written C gradient, each component with its own floor (REL_FLOOR),
   as the gradients of una_measure. */
static void una_array_measure(Job *job) {
  const BenchArrayProgram *p = job->ap;
  Meas *m = job->m;
  FeTry t;
  if (!fe_try(&t)) {
    snprintf(m->error, sizeof m->error, "%s", fe_error_text(t.err));
    return;
  }
  Session *s = fe_session_new();
  if (!fe_session_load_prelude(s)) fe_error(fe_nospan, "the prelude failed to load");
  if (!fe_session_run_text(s, "<bench>", p->una, strlen(p->una), true))
    fe_error(fe_nospan, "defining f failed (the error is on stderr)");
  BenchArray args[BENCH_ARRAY_MAX_ARGS];
  memset(args, 0, sizeof args);
  p->inputs(args);
  char expr[256];
  int len = snprintf(expr, sizeof expr, "%s", job->kind == M_AGRAD_GRAD ? p->grad : "f");
  for (int k = 0; k < p->nargs; k++) {
    const BenchArray *g = &args[k];
    Value v;
    const char *like = "0";
    if (g->kind == BA_REAL) {
      v = val_real(g->x);
    } else if (g->kind == BA_VECTOR) {
      Array *a = val_new_real_array(g->cols, fe_nospan);
      memcpy(a->r, g->a, g->cols * sizeof(double));
      v = val_array(a);
      like = "[0]";
    } else {
      Array *flat = val_new_real_array(g->rows * g->cols, fe_nospan);
      memcpy(flat->r, g->a, g->rows * g->cols * sizeof(double));
      Array *rows = val_new_boxed_array(g->rows, fe_nospan);
      for (size_t i = 0; i < g->rows; i++) rows->v[i] = val_array(val_view(flat, i * g->cols, g->cols));
      v = val_array(rows);
      like = "[[0]]";
    }
    char name[32];
    snprintf(name, sizeof name, "X%d", k);
    bind_global_like(s, name, v, like);
    len += snprintf(expr + len, sizeof expr - (size_t)len, " %s", name);
  }
  Value v = time_una(s, expr, job->reps, true, m);
  if (job->kind == M_AGRAD_PRIMAL) {
    if (v.kind != V_REAL) fe_error(fe_nospan, "f's value is not a real");
    double c = p->primal(args);
    m->value = v.u.r;
    m->err = v.u.r == c ? 0 : fabs(v.u.r - c) / fmax(fabs(c), DBL_MIN);
    for (int k = 0; k < p->nargs; k++) free(args[k].a);
    fe_untry(&t);
    return;
  }
  size_t clen;
  double *c = p->run(args, &clen);
  double *u = malloc(clen * sizeof *u);
  size_t ulen = 0;
  if (!u || !flatten(v, u, clen, &ulen) || ulen != clen)
    fe_error(fe_nospan, "Una's value does not have the C baseline's %zu reals", clen);
  size_t at;
  if (job->kind == M_AGRAD_GRAD) {
    /* component by component: the arguments in wrt, in order */
    size_t off = 0;
    m->err = m->err_elem = 0;
    for (int k = 0; k < p->nargs; k++) {
      if (!(p->wrt >> k & 1u)) continue;
      size_t glen = array_len(&args[k]), at_elem;
      if (off + glen > clen) fe_error(fe_nospan, "the C gradient is shorter than the arguments in wrt");
      double e = rel_diff(u + off, c + off, glen, REL_FLOOR, &at);
      m->err_elem = fmax(m->err_elem, rel_diff(u + off, c + off, glen, 0, &at_elem));
      if (e > m->err) {
        m->err = e;
        m->worst_arg = k;
        m->worst_at = at;
        m->worst_una = u[off + at];
        m->worst_c = c[off + at];
      }
      off += glen;
    }
    if (off != clen) fe_error(fe_nospan, "the C gradient has %zu reals, the arguments in wrt %zu", clen, off);
  } else {
    m->err = rel_diff(u, c, clen, REL_FLOOR, &at);
    m->err_elem = rel_diff(u, c, clen, 0, &at);
  }
  m->gabs = sum_abs(c, clen);
  free(u);
  free(c);
  for (int k = 0; k < p->nargs; k++) free(args[k].a);
  fe_untry(&t);
}

/* The C baseline of an array program: median of reps after a warm-up, its
   results freed after each (outside the timing), malloc keeping freed
   memory for reuse (as c_measure's table times). For a gradient program
   (M_AGRAD_C) that is the C gradient, and its primal is timed the same
   way (c_primal_ms). */
static void c_array_measure(Job *job) {
  const BenchArrayProgram *p = job->ap;
  Meas *m = job->m;
  BenchArray args[BENCH_ARRAY_MAX_ARGS];
  memset(args, 0, sizeof args);
  p->inputs(args);
#ifdef __GLIBC__
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
  double times[MAX_REPS];
  int reps = job->reps;
  for (int r = -1; r < reps; r++) {
    size_t len;
    double t0 = now_ms();
    double *out = p->run(args, &len);
    double ms = now_ms() - t0;
    if (r >= 0) times[r] = ms;
    else m->first_ms = ms;
    if (r < 0 && ms < QUICK_MS) reps = QUICK_REPS;
    free(out);
  }
  m->reps = reps;
  m->ms = median(times, reps);
  if (job->kind == M_AGRAD_C && p->primal) {
    volatile double sink = p->primal(args);
    for (int r = 0; r < reps; r++) {
      double t0 = now_ms();
      sink = p->primal(args);
      times[r] = now_ms() - t0;
    }
    m->value = sink;
    m->c_primal_ms = median(times, reps);
  }
  for (int k = 0; k < p->nargs; k++) free(args[k].a);
}

/* The Una measurements run on a thread with a big stack (deep terms). */
static void *job_thread(void *arg) {
  Job *job = arg;
  char base;
  fe_stack_init(&base, STACK_SIZE - ((size_t)1 << 20));
  if (job->kind == M_ARRAY_UNA || job->kind == M_AGRAD_PRIMAL || job->kind == M_AGRAD_GRAD) una_array_measure(job);
  else una_measure(job);
  return NULL;
}

/* Runs one measurement in a child process; the result comes back through a
   pipe. */
static int child_timeout_s = 600; /* --timeout: seconds allowed to one measurement */

static Meas run_child(const BenchProgram *p, const BenchArrayProgram *ap, size_t n, MeasKind kind, int reps) {
  Meas m;
  memset(&m, 0, sizeof m);
  int fd[2];
  if (pipe(fd) != 0) {
    snprintf(m.error, sizeof m.error, "pipe failed");
    return m;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(m.error, sizeof m.error, "fork failed");
    close(fd[0]);
    close(fd[1]);
    return m;
  }
  if (pid == 0) {
    close(fd[0]);
    alarm((unsigned)child_timeout_s); /* SIGALRM ends a measurement that hangs */
    Job job = {p, ap, n, kind, reps, &m};
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_SIZE);
    if (kind == M_C) c_measure(&job); /* on the main thread: malloc's main arena (see c_measure) */
    else if (kind == M_ARRAY_C || kind == M_AGRAD_C) c_array_measure(&job);
    else if (pthread_create(&th, &attr, job_thread, &job) == 0) pthread_join(th, NULL);
    else snprintf(m.error, sizeof m.error, "cannot start a thread with a %zu-byte stack", STACK_SIZE);
    fflush(stderr);
    ssize_t w = write(fd[1], &m, sizeof m);
    _exit(w == (ssize_t)sizeof m ? 0 : 1);
  }
  close(fd[1]);
  Meas got;
  ssize_t k = read(fd[0], &got, sizeof got);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (k != (ssize_t)sizeof got) {
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
      snprintf(m.error, sizeof m.error, "the measurement took more than %d s (--timeout)", child_timeout_s);
    else if (WIFSIGNALED(status))
      snprintf(m.error, sizeof m.error, "the measurement died (signal %d)", WTERMSIG(status));
    else
      snprintf(m.error, sizeof m.error, "the measurement died (exit status %d)", WEXITSTATUS(status));
    return m;
  }
  return got;
}

/* ---- peers (JSON lines from peers.py) ------------------------------------ */

typedef struct PeerRow {
  char peer[16], program[32];
  size_t n;
  double ms, gabs;
  char error[200];
} PeerRow;

static PeerRow peer_rows[MAX_PEER_ROWS];
static int npeer_rows;
/* What the peers said about themselves: "jax 0.4.30", "torch: skipped: ..." */
static char peer_notes[8][400];
static int npeer_notes;

static const char *peer_title(const char *peer) {
  return strcmp(peer, "jax") == 0 ? "JAX" : strcmp(peer, "torch") == 0 ? "PyTorch" : peer;
}


static void read_peers(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "una_bench: cannot read peers file %s; no peer columns\n", path);
    return;
  }
  char line[4096];
  while (fgets(line, sizeof line, f) && npeer_rows < MAX_PEER_ROWS) {
    PeerRow r;
    memset(&r, 0, sizeof r);
    if (!json_str(line, "peer", r.peer, sizeof r.peer)) continue;
    char text[300];
    if (npeer_notes < 8 && json_str(line, "skip", text, sizeof text)) {
      snprintf(peer_notes[npeer_notes++], sizeof peer_notes[0], "%s: skipped (%s)", peer_title(r.peer), text);
      continue;
    }
    if (npeer_notes < 8 && json_str(line, "version", text, sizeof text)) {
      double th = json_num(line, "threads");
      if (th > 0)
        snprintf(peer_notes[npeer_notes++], sizeof peer_notes[0], "%s %s (%.0f threads)", peer_title(r.peer), text, th);
      else
        snprintf(peer_notes[npeer_notes++], sizeof peer_notes[0], "%s %s", peer_title(r.peer), text);
      continue;
    }
    if (!json_str(line, "program", r.program, sizeof r.program)) continue;
    double n = json_num(line, "n");
    if (!(n > 0)) continue;
    r.n = (size_t)n;
    r.ms = json_num(line, "ms");
    r.gabs = json_num(line, "gabs");
    json_str(line, "error", r.error, sizeof r.error);
    peer_rows[npeer_rows++] = r;
  }
  fclose(f);
}

static const PeerRow *find_peer(const char *peer, const char *program, size_t n) {
  for (int i = npeer_rows - 1; i >= 0; i--)
    if (strcmp(peer_rows[i].peer, peer) == 0 && strcmp(peer_rows[i].program, program) == 0 &&
        peer_rows[i].n == n)
      return &peer_rows[i];
  return NULL;
}

/* ---- printing ------------------------------------------------------------ */

static const char *fmt_n(char *buf, size_t size, size_t n) {
  size_t p = 1;
  int e = 0;
  while (p < n) {
    p *= 10;
    e++;
  }
  if (p == n && e >= 3) snprintf(buf, size, "10^%d", e);
  else snprintf(buf, size, "%zu", n);
  return buf;
}

static const char *fmt_ms(char *buf, size_t size, double ms) {
  if (!(ms >= 0) || isinf(ms)) snprintf(buf, size, "-");
  else if (ms >= 100) snprintf(buf, size, "%.0f", ms);
  else if (ms >= 10) snprintf(buf, size, "%.1f", ms);
  else if (ms >= 1) snprintf(buf, size, "%.2f", ms);
  else snprintf(buf, size, "%.3f", ms);
  return buf;
}

static const char *fmt_ratio(char *buf, size_t size, double a, double b) {
  if (a > 0 && b > 0 && isfinite(a) && isfinite(b)) snprintf(buf, size, "%.2f", a / b);
  else snprintf(buf, size, "-");
  return buf;
}

static double peer_ms(const PeerRow *r) { return r && !r->error[0] ? r->ms : NAN; }

static const char *const peer_names[2] = {"jax", "torch"};

typedef struct ARow {
  const BenchArrayProgram *p;
  Meas una, c;
} ARow;

/* Pairs of runs of an array program with p->alternate. */
#define ALTERNATE_PAIRS 5

/* Times r->p in ALTERNATE_PAIRS pairs of runs, C's then Una's, each in its
   own process; each side's ms is the median of its runs' medians, the rest
   of its measurement the last run's (or the first failed run's). */
static void alternate(ARow *r, int reps) {
  double tc[ALTERNATE_PAIRS], tu[ALTERNATE_PAIRS];
  for (int k = 0; k < ALTERNATE_PAIRS; k++) {
    r->c = run_child(NULL, r->p, r->p->n, M_ARRAY_C, reps);
    r->una = run_child(NULL, r->p, r->p->n, M_ARRAY_UNA, reps);
    if (r->c.error[0] || r->una.error[0]) return;
    tc[k] = r->c.ms;
    tu[k] = r->una.ms;
  }
  r->c.ms = median(tc, ALTERNATE_PAIRS);
  r->una.ms = median(tu, ALTERNATE_PAIRS);
}

/* The table of the array programs, and the targets of the products. */
static void print_arrays(const ARow *rows, int nrows, int reps, double tol) {
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32];
  printf("\n## Array programs\n\n"
         "Each at one size, no gradient: Una's value of f (median of %d evaluations after warm-up, as above, "
         "or of %d when one takes less than %.0f ms, for C, JAX and PyTorch too; "
         "a matrix is an [[R]] whose rows are views into one buffer, as an n-D load gives); C: gcc -O3 "
         "-march=native -fopenmp, OpenBLAS on one thread per core for the products; JAX: jit, float64; "
         "PyTorch: float64, no autograd. Times in ms; max rel diff: Una's value against C's, as the "
         "gradients' (the run fails above %g). matvec and matmul, whose targets are ratios near 1 to the "
         "same OpenBLAS calls, are timed in %d pairs of runs, C's then Una's, each in its own process: "
         "their Una and C times are the medians of each side's %d runs.\n\n",
         reps, QUICK_REPS, QUICK_MS, tol, ALTERNATE_PAIRS, ALTERNATE_PAIRS);
  printf("| program | size | Una ms | C ms | JAX ms | PyTorch ms | Una/C | Una/JAX | Una/PyTorch | max rel diff | C |\n");
  printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (int i = 0; i < nrows; i++) {
    const ARow *r = &rows[i];
    double una = r->una.error[0] ? NAN : r->una.ms, c = r->c.error[0] ? NAN : r->c.ms;
    double jx = peer_ms(find_peer("jax", r->p->name, r->p->n)), pt = peer_ms(find_peer("torch", r->p->name, r->p->n));
    printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->p->name, r->p->size,
           fmt_ms(b1, sizeof b1, una), fmt_ms(b2, sizeof b2, c), fmt_ms(b3, sizeof b3, jx), fmt_ms(b4, sizeof b4, pt),
           fmt_ratio(b5, sizeof b5, una, c), fmt_ratio(b6, sizeof b6, una, jx), fmt_ratio(b7, sizeof b7, una, pt),
           r->una.error[0] ? "error" : una_sprintf("%.1e", r->una.err), r->p->c_what);
  }
  printf("\nTargets: matvec and matmul within 1.2x of OpenBLAS called from C.\n\n");
  int missed = 0, checked = 0;
  for (int i = 0; i < nrows; i++) {
    const ARow *r = &rows[i];
    if (!r->p->alternate) continue;
    checked++;
    if (r->una.error[0] || r->c.error[0]) {
      printf("- %s: a measurement failed\n", r->p->name);
      missed++;
    } else if (r->una.ms > 1.2 * r->c.ms) {
      printf("- %s: Una %s ms is %.2fx OpenBLAS from C (%s ms; target <= 1.2x)\n", r->p->name,
             fmt_ms(b1, sizeof b1, r->una.ms), r->una.ms / r->c.ms, fmt_ms(b2, sizeof b2, r->c.ms));
      missed++;
    }
  }
  if (checked && !missed) printf("Both met.\n");
  for (int i = 0; i < nrows; i++) {
    const ARow *r = &rows[i];
    const char *errs[2] = {r->c.error, r->una.error};
    static const char *const what[2] = {"C", "Una"};
    for (int k = 0; k < 2; k++)
      if (errs[k][0]) printf("- %s, %s: error: %s\n", r->p->name, what[k], errs[k]);
    if (!r->una.error[0] && !(r->una.err <= tol))
      printf("- %s: Una's value differs from C's by %.2g (more than %g)\n", r->p->name, r->una.err, tol);
    for (int k = 0; k < 2; k++) {
      const PeerRow *pr = find_peer(peer_names[k], r->p->name, r->p->n);
      if (pr && pr->error[0]) printf("- %s, %s: %s\n", r->p->name, peer_title(peer_names[k]), pr->error);
    }
  }
}

typedef struct AGRow {
  const BenchArrayProgram *p;
  Meas primal, grad, c;
} AGRow;

/* The table of the gradient programs, their checks, and the targets: Una's
   gradient faster than JAX's and PyTorch's, and within 2x of the C
   gradient. */
static void print_array_grads(const AGRow *rows, int nrows, int reps, double tol) {
  char b[16][32];
  printf("\n## Gradients of the array programs\n\n"
         "Scalar losses of the array programs (and a 784-128-10 MLP over a batch of 256), each at one size: "
         "Una's primal (f) and gradient (median of %d evaluations after warm-up, as above, or of %d when one "
         "takes less than %.0f ms, for C, JAX and PyTorch too); C grad: the gradient derived by hand, gcc -O3 "
         "-march=native -fopenmp, OpenBLAS on one thread per core for the products; JAX: jit(grad), float64; "
         "PyTorch: forward + backward, float64. Times in ms; grad diff: Una's gradient against C's, "
         "component by component, as the gradients' above (the run fails above %g).\n\n",
         reps, QUICK_REPS, QUICK_MS, tol);
  printf("| program | size | wrt | Una primal ms | Una grad ms | C primal ms | C grad ms | JAX ms | PyTorch ms | "
         "grad/primal | Una/C | Una/JAX | Una/PyTorch | grad diff | primal diff | JAX vs C | PyTorch vs C | C |\n");
  printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  int peer_mismatch = 0;
  for (int i = 0; i < nrows; i++) {
    const AGRow *r = &rows[i];
    double una = r->grad.error[0] ? NAN : r->grad.ms, prim = r->primal.error[0] ? NAN : r->primal.ms;
    double c = r->c.error[0] ? NAN : r->c.ms, cp = r->c.error[0] ? NAN : r->c.c_primal_ms;
    const PeerRow *jx = find_peer("jax", r->p->name, r->p->n), *pt = find_peer("torch", r->p->name, r->p->n);
    char pd[2][32];
    for (int k = 0; k < 2; k++) {
      const PeerRow *pr = k ? pt : jx;
      if (!pr || pr->error[0] || !(pr->gabs >= 0) || r->grad.error[0]) snprintf(pd[k], 32, "-");
      else {
        double d = fabs(pr->gabs - r->grad.gabs) / fmax(r->grad.gabs, DBL_MIN);
        snprintf(pd[k], 32, "%.1e", d);
        if (!(d <= 1e-6)) peer_mismatch = 1;
      }
    }
    const char *wrt = strstr(r->p->grad, " wrt ");
    char wrtbuf[64];
    if (wrt) {
      snprintf(wrtbuf, sizeof wrtbuf, "%s", wrt + 5);
      char *paren = strchr(wrtbuf, ')');
      if (paren) *paren = '\0';
    } else snprintf(wrtbuf, sizeof wrtbuf, "all");
    printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->p->name,
           r->p->size, wrtbuf, fmt_ms(b[0], 32, prim), fmt_ms(b[1], 32, una), fmt_ms(b[2], 32, cp),
           fmt_ms(b[3], 32, c), fmt_ms(b[4], 32, peer_ms(jx)), fmt_ms(b[5], 32, peer_ms(pt)),
           fmt_ratio(b[6], 32, una, prim), fmt_ratio(b[7], 32, una, c), fmt_ratio(b[8], 32, una, peer_ms(jx)),
           fmt_ratio(b[9], 32, una, peer_ms(pt)), r->grad.error[0] ? "error" : una_sprintf("%.1e", r->grad.err),
           r->primal.error[0] ? "error" : una_sprintf("%.1e", r->primal.err), pd[0], pd[1], r->p->c_what);
  }
  printf("\nTargets: Una's gradient faster than JAX's and PyTorch's, and within 2x of the C gradient.\n\n");
  int missed = 0;
  for (int i = 0; i < nrows; i++) {
    const AGRow *r = &rows[i];
    const char *nm = r->p->name;
    if (r->grad.error[0]) {
      printf("- %s: Una's gradient failed: %s\n", nm, r->grad.error);
      missed++;
      continue;
    }
    double una = r->grad.ms;
    if (!r->c.error[0] && una > 2 * r->c.ms) {
      printf("- %s: Una grad %s ms is %.1fx the C gradient (%s ms; target <= 2x)\n", nm, fmt_ms(b[0], 32, una),
             una / r->c.ms, fmt_ms(b[1], 32, r->c.ms));
      missed++;
    }
    for (int k = 0; k < 2; k++) {
      double pm = peer_ms(find_peer(peer_names[k], nm, r->p->n));
      if (pm > 0 && una >= pm) {
        printf("- %s: Una grad %s ms is not faster than %s (%s ms; %.1fx)\n", nm, fmt_ms(b[0], 32, una),
               peer_title(peer_names[k]), fmt_ms(b[1], 32, pm), una / pm);
        missed++;
      }
    }
  }
  if (!missed) printf("All targets met.\n");
  for (int i = 0; i < nrows; i++) {
    const AGRow *r = &rows[i];
    const char *errs[3] = {r->c.error, r->primal.error, r->grad.error};
    static const char *const what[3] = {"C", "Una primal", "Una gradient"};
    for (int k = 0; k < 3; k++)
      if (errs[k][0]) printf("- %s, %s: error: %s\n", r->p->name, what[k], errs[k]);
    if (!r->grad.error[0] && !(r->grad.err <= tol))
      printf("- %s: Una's gradient differs from C's by %.2g (more than %g): with respect to argument %d, "
             "element %zu: Una %.17g, C %.17g\n",
             r->p->name, r->grad.err, tol, r->grad.worst_arg + 1, r->grad.worst_at, r->grad.worst_una,
             r->grad.worst_c);
    if (!r->primal.error[0] && !(r->primal.err <= tol))
      printf("- %s: Una's primal differs from C's by %.2g (more than %g)\n", r->p->name, r->primal.err, tol);
    for (int k = 0; k < 2; k++) {
      const PeerRow *pr = find_peer(peer_names[k], r->p->name, r->p->n);
      if (pr && pr->error[0]) printf("- %s, %s: %s\n", r->p->name, peer_title(peer_names[k]), pr->error);
    }
  }
  if (peer_mismatch) printf("- a peer's gradient differs from C's by more than 1e-6 (see the table)\n");
}

/* ---- main ---------------------------------------------------------------- */

typedef struct Row {
  const BenchProgram *p;
  size_t n;
  Meas primal, grad, c;
} Row;


static void usage(FILE *out) {
  fprintf(out, "usage: una_bench [--programs a,b,...] [--n \"N ...\"] [--reps R] [--peers FILE] [--tol T]\n"
               "                 [--timeout S]\n"
               "programs:");
  for (int i = 0; i < bench_nprograms; i++) fprintf(out, " %s", bench_programs[i].name);
  fprintf(out, "\narray programs (at one size each):");
  for (int i = 0; i < bench_narray_programs; i++) fprintf(out, " %s", bench_array_programs[i].name);
  fprintf(out, "\ngradient programs (at one size each):");
  for (int i = 0; i < bench_narray_grad_programs; i++) fprintf(out, " %s", bench_array_grad_programs[i].name);
  fprintf(out, "\n");
}

/* Splits a list separated by commas or blanks. */
static int split(char *s, char **out, int max) {
  int k = 0;
  for (char *tok = strtok(s, ", \t"); tok && k < max; tok = strtok(NULL, ", \t")) out[k++] = tok;
  return k;
}

int main(int argc, char **argv) {
  GC_INIT();
  una_gc_reserve();
  GC_set_warn_proc(GC_ignore_warn_proc);
  const char *programs_arg = "all", *n_arg = "100000 1000000 10000000", *peers_path = NULL;
  int reps = 5;
  double tol = 1e-9;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (strcmp(a, "--programs") == 0 && has) programs_arg = argv[++i];
    else if (strcmp(a, "--n") == 0 && has) n_arg = argv[++i];
    else if (strcmp(a, "--peers") == 0 && has) peers_path = argv[++i];
    else if (strcmp(a, "--reps") == 0 && has) reps = atoi(argv[++i]);
    else if (strcmp(a, "--tol") == 0 && has) tol = atof(argv[++i]);
    else if (strcmp(a, "--timeout") == 0 && has) child_timeout_s = atoi(argv[++i]);
    else if (strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (child_timeout_s < 1) {
    fprintf(stderr, "una_bench: --timeout must be a positive number of seconds\n");
    return 2;
  }
  if (reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "una_bench: --reps must be between 1 and %d\n", MAX_REPS);
    return 2;
  }

  const BenchProgram *progs[64];
  const BenchArrayProgram *aprogs[64], *gprogs[64];
  int nprogs = 0, naprogs = 0, ngprogs = 0;
  {
    char *words[64];
    int k = split(una_strdup(programs_arg), words, 64);
    for (int i = 0; i < k && nprogs < 48 && naprogs < 48 && ngprogs < 48; i++) {
      if (strcmp(words[i], "all") == 0) {
        for (int j = 0; j < bench_nprograms; j++) progs[nprogs++] = &bench_programs[j];
        for (int j = 0; j < bench_narray_programs; j++) aprogs[naprogs++] = &bench_array_programs[j];
        for (int j = 0; j < bench_narray_grad_programs; j++) gprogs[ngprogs++] = &bench_array_grad_programs[j];
        continue;
      }
      int g = 0;
      while (g < bench_narray_grad_programs && strcmp(bench_array_grad_programs[g].name, words[i]) != 0) g++;
      if (g < bench_narray_grad_programs) {
        gprogs[ngprogs++] = &bench_array_grad_programs[g];
        continue;
      }
      int j = 0;
      while (j < bench_nprograms && strcmp(bench_programs[j].name, words[i]) != 0) j++;
      if (j < bench_nprograms) {
        progs[nprogs++] = &bench_programs[j];
        continue;
      }
      j = 0;
      while (j < bench_narray_programs && strcmp(bench_array_programs[j].name, words[i]) != 0) j++;
      if (j == bench_narray_programs) {
        fprintf(stderr, "una_bench: unknown program '%s'\n", words[i]);
        usage(stderr);
        return 2;
      }
      aprogs[naprogs++] = &bench_array_programs[j];
    }
  }
  size_t sizes[MAX_SIZES];
  int nsizes = 0;
  {
    char *words[MAX_SIZES];
    int k = split(una_strdup(n_arg), words, MAX_SIZES);
    for (int i = 0; i < k; i++) {
      char *end;
      double x = strtod(words[i], &end);
      if (*end || !(x >= 1) || x != floor(x) || x > 1e12) {
        fprintf(stderr, "una_bench: sizes must be positive integers, found '%s'\n", words[i]);
        return 2;
      }
      sizes[nsizes++] = (size_t)x;
    }
  }
  if ((nprogs == 0 && naprogs == 0 && ngprogs == 0) || nsizes == 0) {
    usage(stderr);
    return 2;
  }
  if (peers_path) read_peers(peers_path);

  Row *rows = calloc((size_t)(nprogs * nsizes), sizeof *rows);
  int nrows = 0, failed = 0;
  char b1[32], b2[32], b3[32], b4[32];
  for (int i = 0; i < nprogs; i++)
    for (int j = 0; j < nsizes; j++) {
      Row *r = &rows[nrows++];
      r->p = progs[i];
      r->n = sizes[j];
      fprintf(stderr, "una_bench: %s n=%s ...", r->p->name, fmt_n(b1, sizeof b1, r->n));
      r->c = run_child(r->p, NULL, r->n, M_C, reps);
      r->primal = run_child(r->p, NULL, r->n, M_UNA_PRIMAL, reps);
      r->grad = run_child(r->p, NULL, r->n, M_UNA_GRAD, reps);
      fprintf(stderr, " Una primal %s ms, grad %s ms; C grad %s ms (-O2 1T %s ms); max rel diff %.2g\n",
              fmt_ms(b1, sizeof b1, r->primal.ms), fmt_ms(b2, sizeof b2, r->grad.ms),
              fmt_ms(b3, sizeof b3, r->c.ms), fmt_ms(b4, sizeof b4, r->c.c_o2_ms), r->grad.err);
      const char *errs[3] = {r->c.error, r->primal.error, r->grad.error};
      for (int k = 0; k < 3; k++)
        if (errs[k][0]) {
          fprintf(stderr, "una_bench: %s n=%zu: %s\n", r->p->name, r->n, errs[k]);
          failed = 1;
        }
      if (!r->grad.error[0] && !(r->grad.err <= tol)) failed = 1;
    }

  /* the array programs, each at its one size */
  ARow *arows = calloc((size_t)naprogs + 1, sizeof *arows);
  for (int i = 0; i < naprogs; i++) {
    ARow *r = &arows[i];
    r->p = aprogs[i];
    fprintf(stderr, "una_bench: %s (%s) ...", r->p->name, r->p->size);
    if (r->p->alternate) {
      alternate(r, reps);
    } else {
      r->c = run_child(NULL, r->p, r->p->n, M_ARRAY_C, reps);
      r->una = run_child(NULL, r->p, r->p->n, M_ARRAY_UNA, reps);
    }
    fprintf(stderr, " Una %s ms; C %s ms; max rel diff %.2g\n", fmt_ms(b1, sizeof b1, r->una.ms),
            fmt_ms(b2, sizeof b2, r->c.ms), r->una.err);
    const char *errs[2] = {r->c.error, r->una.error};
    for (int k = 0; k < 2; k++)
      if (errs[k][0]) {
        fprintf(stderr, "una_bench: %s: %s\n", r->p->name, errs[k]);
        failed = 1;
      }
    if (!r->una.error[0] && !(r->una.err <= tol)) failed = 1;
  }

  /* the gradient programs, each at its one size */
  AGRow *grows = calloc((size_t)ngprogs + 1, sizeof *grows);
  for (int i = 0; i < ngprogs; i++) {
    AGRow *r = &grows[i];
    r->p = gprogs[i];
    fprintf(stderr, "una_bench: %s (%s) ...", r->p->name, r->p->size);
    r->c = run_child(NULL, r->p, r->p->n, M_AGRAD_C, reps);
    r->primal = run_child(NULL, r->p, r->p->n, M_AGRAD_PRIMAL, reps);
    r->grad = run_child(NULL, r->p, r->p->n, M_AGRAD_GRAD, reps);
    fprintf(stderr, " Una primal %s ms, grad %s ms; C grad %s ms; max rel diff %.2g\n",
            fmt_ms(b1, sizeof b1, r->primal.ms), fmt_ms(b2, sizeof b2, r->grad.ms), fmt_ms(b3, sizeof b3, r->c.ms),
            r->grad.err);
    const char *errs[3] = {r->c.error, r->primal.error, r->grad.error};
    for (int k = 0; k < 3; k++)
      if (errs[k][0]) {
        fprintf(stderr, "una_bench: %s: %s\n", r->p->name, errs[k]);
        failed = 1;
      }
    if (!r->grad.error[0] && !(r->grad.err <= tol)) failed = 1;
    if (!r->primal.error[0] && !(r->primal.err <= tol)) failed = 1;
  }

  const char *threads = getenv("UNA_THREADS"), *jit = getenv("UNA_JIT");
  printf("Una: median of %d evaluations after warm-up (3 evaluations, more while the heap grows; heap collected before each, "
         "then one more once the kernels sent to the C compiler are compiled), native kernels: %s, "
         "threads: %s; C: gcc -O3 -march=native -fopenmp, on all cores where the program parallelizes "
         "(C -O2 1T: the same C, gcc -O2, single-threaded), results malloc'd in each call; JAX: "
         "jit(grad), float64; PyTorch: forward + backward, float64. Times in ms.\n",
         reps, jit && jit[0] ? una_sprintf("UNA_JIT=%s", jit) : "on (UNA_JIT unset)",
         threads && threads[0] ? una_sprintf("UNA_THREADS=%s", threads) : "the default (UNA_THREADS unset)");
  if (npeer_notes == 0) printf("Peers: none run.");
  for (int i = 0; i < npeer_notes; i++) printf("%s%s", i ? "; " : "Peers: ", peer_notes[i]);
  printf("%s\n\n", npeer_notes ? "." : "");
  int peer_mismatch = 0;
  if (nrows > 0) {
    printf("| program | n | Una primal ms | Una grad ms | C grad ms | C -O2 1T ms | JAX ms | PyTorch ms | Una/C | "
           "Una/C -O2 1T | Una/JAX | Una/PyTorch | grad/primal | peak MB (Una gradient) | peak / (input+output) MB |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < nrows; i++) {
      Row *r = &rows[i];
      const PeerRow *jx = find_peer("jax", r->p->name, r->n), *pt = find_peer("torch", r->p->name, r->n);
      double una = r->grad.error[0] ? NAN : r->grad.ms, prim = r->primal.error[0] ? NAN : r->primal.ms;
      double cg = r->c.error[0] ? NAN : r->c.ms, c2 = r->c.error[0] ? NAN : r->c.c_o2_ms;
      int narrays = 0;
      for (int k = 0; k < r->p->nargs; k++) narrays += r->p->is_array[k];
      double io_mb = 2.0 * (double)narrays * (double)r->n * sizeof(double) / (1 << 20);
      char s1[32], s2[32], s3[32], s4[32], s5[32], s6[32], s7[32], s8[32], s9[32], s10[32], s11[32], s12[32];
      printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | ", r->p->name,
             fmt_n(s1, sizeof s1, r->n), fmt_ms(s2, sizeof s2, prim), fmt_ms(s3, sizeof s3, una),
             fmt_ms(s4, sizeof s4, cg), fmt_ms(s11, sizeof s11, c2), fmt_ms(s5, sizeof s5, peer_ms(jx)),
             fmt_ms(s6, sizeof s6, peer_ms(pt)), fmt_ratio(s7, sizeof s7, una, cg),
             fmt_ratio(s12, sizeof s12, una, c2), fmt_ratio(s8, sizeof s8, una, peer_ms(jx)),
             fmt_ratio(s9, sizeof s9, una, peer_ms(pt)), fmt_ratio(s10, sizeof s10, una, prim));
      if (r->grad.error[0]) printf("- | - |\n");
      else printf("%.0f | %.1f |\n", r->grad.peak_mb, r->grad.peak_mb / io_mb);
    }

    /* the targets of the issue, at n = 10^7 */
    const size_t TN = 10000000;
    printf("\nTargets at n = 10^7: Una's gradient <= 1.5x C's, gradient/primal <= 3, faster than "
           "JAX and PyTorch; grad prod's peak memory <= 3x (input + output).\n\n");
    int checked = 0, missed = 0;
    for (int i = 0; i < nrows; i++) {
      Row *r = &rows[i];
      if (r->n != TN) continue;
      checked++;
      const char *nm = r->p->name;
      if (r->grad.error[0]) {
        printf("- %s: Una's gradient failed: %s\n", nm, r->grad.error);
        missed++;
        continue;
      }
      double una = r->grad.ms;
      if (!r->c.error[0] && una > 1.5 * r->c.ms) {
        printf("- %s: Una grad %s ms is %.1fx the C gradient (%s ms; target <= 1.5x)\n", nm,
               fmt_ms(b1, sizeof b1, una), una / r->c.ms, fmt_ms(b2, sizeof b2, r->c.ms));
        missed++;
      }
      if (!r->primal.error[0] && una > 3 * r->primal.ms) {
        printf("- %s: gradient/primal %.1f (Una grad %s ms, primal %s ms; target <= 3)\n", nm,
               una / r->primal.ms, fmt_ms(b1, sizeof b1, una), fmt_ms(b2, sizeof b2, r->primal.ms));
        missed++;
      }
      for (int k = 0; k < 2; k++) {
        double pm = peer_ms(find_peer(peer_names[k], nm, r->n));
        if (pm > 0 && una >= pm) {
          printf("- %s: Una grad %s ms is not faster than %s (%s ms; %.1fx)\n", nm,
                 fmt_ms(b1, sizeof b1, una), peer_title(peer_names[k]), fmt_ms(b2, sizeof b2, pm), una / pm);
          missed++;
        }
      }
      if (strcmp(nm, "prod") == 0) {
        double io_mb = 2.0 * (double)r->n * sizeof(double) / (1 << 20);
        if (r->grad.peak_mb > 3 * io_mb) {
          printf("- prod: peak memory of the gradient %.0f MB is %.1fx input + output (%.0f MB; "
                 "target <= 3x)\n",
                 r->grad.peak_mb, r->grad.peak_mb / io_mb, io_mb);
          missed++;
        }
      }
    }
    if (!checked) printf("(n = 10^7 was not run: targets not checked.)\n");
    else if (!missed) printf("All targets met.\n");

    /* checks and details */
    printf("\nChecks and details: C primal ms; C grad fresh = the C gradient with glibc's default "
           "malloc, whose big results come from fresh mmap pages in every call (the table's C times "
           "reuse freed memory, as Una's heap does); Una prep = check + deriv_expand + "
           "opt_optimize_program of the expression, ms (not in the times above); first = the "
           "warm-up evaluation of the gradient, ms; grad diff = largest relative difference of "
           "Una's gradient from C's, elements below %g of their component's largest compared at "
           "that scale (the run fails above %g); elementwise = the same without that floor; "
           "primal diff = relative difference of the values; JAX/PyTorch vs C = relative "
           "difference of sum |gradient| from C's.\n\n",
           REL_FLOOR, tol);
    printf("| program | n | C primal ms | C grad fresh ms | Una grad prep ms | Una grad first ms | "
           "grad diff | elementwise | primal diff | JAX vs C | PyTorch vs C |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < nrows; i++) {
      Row *r = &rows[i];
      char pd[2][32];
      for (int k = 0; k < 2; k++) {
        const PeerRow *pr = find_peer(peer_names[k], r->p->name, r->n);
        if (!pr || pr->error[0] || !(pr->gabs >= 0) || r->grad.error[0]) snprintf(pd[k], 32, "-");
        else {
          double d = fabs(pr->gabs - r->grad.gabs) / fmax(r->grad.gabs, DBL_MIN);
          snprintf(pd[k], 32, "%.1e", d);
          if (!(d <= 1e-6)) peer_mismatch = 1;
        }
      }
      char b5[32];
      printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->p->name,
             fmt_n(b1, sizeof b1, r->n), fmt_ms(b2, sizeof b2, r->c.error[0] ? NAN : r->c.c_primal_ms),
             fmt_ms(b5, sizeof b5, r->c.error[0] ? NAN : r->c.c_fresh_ms),
             fmt_ms(b3, sizeof b3, r->grad.error[0] ? NAN : r->grad.prep_ms),
             fmt_ms(b4, sizeof b4, r->grad.error[0] ? NAN : r->grad.first_ms),
             r->grad.error[0] ? "error" : una_sprintf("%.1e", r->grad.err),
             r->grad.error[0] ? "error" : una_sprintf("%.1e", r->grad.err_elem),
             r->primal.error[0] ? "error" : una_sprintf("%.1e", r->primal.err), pd[0], pd[1]);
    }
    printf("\n");
    for (int i = 0; i < nrows; i++) {
      Row *r = &rows[i];
      const char *errs[3] = {r->c.error, r->primal.error, r->grad.error};
      static const char *const what[3] = {"C", "Una primal", "Una gradient"};
      for (int k = 0; k < 3; k++)
        if (errs[k][0]) printf("- %s, n = %zu, %s: error: %s\n", r->p->name, r->n, what[k], errs[k]);
      if (!r->grad.error[0] && !(r->grad.err <= tol))
        printf("- %s, n = %zu: Una's gradient differs from C's by %.2g (more than %g): with respect "
               "to argument %d, element %zu: Una %.17g, C %.17g\n",
               r->p->name, r->n, r->grad.err, tol, r->grad.worst_arg + 1, r->grad.worst_at,
               r->grad.worst_una, r->grad.worst_c);
      for (int k = 0; k < 2; k++) {
        const PeerRow *pr = find_peer(peer_names[k], r->p->name, r->n);
        if (pr && pr->error[0]) printf("- %s, n = %zu, %s: %s\n", r->p->name, r->n, peer_title(peer_names[k]), pr->error);
      }
    }
    if (peer_mismatch) printf("- a peer's gradient differs from C's by more than 1e-6 (see the table)\n");
  }
  if (naprogs > 0) print_arrays(arows, naprogs, reps, tol);
  if (ngprogs > 0) print_array_grads(grows, ngprogs, reps, tol);
  printf("%s\n", failed ? "FAILED" : "OK");
  return failed;
}
