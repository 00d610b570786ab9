/* una_gpu_bench.c: the GPU benchmark's driver (bench/gpu/README.md).

   For every program (prod, logsumexp, dot, bce, map_heavy: bench/cpu's,
   whose Una text and inputs come from c_grads.c) and every size n it
   measures, in this one process (one CUDA context):
     - Una's gradient on the GPU: the inputs are made on the host with
       c_grads.c's formulas, copied to the device and bound to global lets
       X0, X1, ... (their host copies dropped, except at the smallest n);
       then `grad f X0 X1 ...` is run as the session runs an expression
       item on the GPU (check, deriv_expand, opt_optimize_program, then
       gpu_call, which ends with a cuda_sync); the result stays on the
       device. Wall-clock time (monotonic clock) around gpu_call, the
       median of REPS calls after a warm-up call; before each call the heap
       is collected and the finalisers run (outside the timing), so that
       the previous results' device memory is freed and every call starts
       from the same state;
     - at the first (smallest) n of each program: the first call with an
       empty kernel cache (UNA_CACHE_DIR is a fresh temporary folder for
       the whole run: plan, NVRTC compile, load, evaluate), then the first
       call of a new Def of the same program after kcache_clear_memory()
       (plan again, cubin from the disk cache, load, evaluate): what a
       second process finds;
     - at the smallest n: Una's CPU gradient (cpu_call of the same Def on
       the same inputs) against the GPU's: the largest, over the gradient's
       components, of max|gpu - cpu| / max|cpu| (the run fails above
       --tol, default 1e-12);
     - at every n: a device-to-device copy of n doubles (cuda_copy timed
       with two CUDA events, median of REPS after a warm-up; 16 n bytes),
       the bandwidth baseline;
     - the effective bandwidth: the bytes that must move (README: every
       input read once and every gradient array written once, 8 bytes an
       element) over the time, and its percentage of the copy's.
   JAX, PyTorch and PyTorch's copy come from peers_gpu.py as JSON lines
   (--peers FILE) and are merged into the tables. A size whose arrays do
   not fit on the device is reported as OOM and the larger sizes of that
   program are skipped. The tables are printed and written to --results
   (default bench/gpu/RESULTS.md) with the date, the machine and the
   command.

   Usage: una_gpu_bench [--programs a,b,...] [--n "N ..."] [--reps R]
                        [--peers FILE] [--tol T] [--results FILE|none]
   Exit status: 0; 1 when a measurement failed (other than out of device
   memory) or the GPU's gradient differs from the CPU's by more than T;
   2 for a bad command line or when no GPU can be used ("una_gpu_bench:
   no usable GPU: ..."; nothing written then). */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../cpu/c_grads.h"
#include "../../backend/cuda/driver.h"
#include "../../backend/cuda/gpu_array.h"
#include "../../backend/cuda/gpu_eval.h"
#include "../../backend/cuda/kcache.h"
#include "../../backend/cuda/launch.h"
#include "../../backend/eval.h"
#include "../../backend/value.h"
#include "../../frontend/check.h"
#include "../../frontend/parser.h"
#include "../../frontend/repl/session.h"
#include "../../optimizer/program.h"
#include "../../derive/derive.h"
#include "../../reverse/reverse.h"

#define STACK_SIZE ((size_t)1 << 30)
#define MAX_REPS 100
#define MAX_SIZES 16
#define MAX_PROGS 16
#define MAX_PEER_ROWS 4096
#define MAX_NOTES 16
#define TARGET_N ((size_t)1 << 26) /* the README's targets apply from this size up */
#define TARGET_PCT 70.0
#define PEER_TOL 1e-6 /* a peer's sum |gradient| against Una's: noted above this */

/* ---- the programs -------------------------------------------------------- */

/* The programs of bench/gpu/README.md, in its order, with the bytes per
   element that must move: every input read once and every gradient array
   written once, 8 bytes each. */
typedef struct GpuProgram {
  const char *name;
  double bytes_per_n;
  const BenchProgram *p; /* c_grads.c's: the Una text, the inputs */
} GpuProgram;

static GpuProgram gpu_programs[] = {
    {"prod", 16, NULL},      /* read a, write the gradient */
    {"logsumexp", 16, NULL}, /* read a, write softmax a */
    {"dot", 32, NULL},       /* read a and b, write (b, a) as two new arrays */
    {"bce", 32, NULL},       /* read w and y, write both gradients */
    {"map_heavy", 16, NULL}, /* read a, write the gradient */
};
#define NPROGRAMS ((int)(sizeof gpu_programs / sizeof gpu_programs[0]))

/* ---- results --------------------------------------------------------------- */

/* One (program, n) measurement. */
typedef struct Cell {
  bool run;         /* measured (or tried) */
  bool oom;         /* did not fit on the device */
  char error[512];  /* an error; with oom, the out-of-memory message */
  double ms;        /* median of the timed calls */
  double min_ms;    /* the fastest of them */
  double first_ms;  /* the warm-up call (at the first n: the call with the disk cache) */
  double gabs;      /* sum of |gradient| over all components (checks the peers) */
  double cpu_diff;  /* smallest n: max over components of max|gpu-cpu| / max|cpu|; else NAN */
  double cpu_ms;    /* smallest n: the CPU gradient's time (one call) */
  int shared;       /* gradient components whose device memory is an input's */
  int on_host;      /* gradient components that are host arrays (computed on the CPU) */
} Cell;

/* What the first n of a program measures once. */
typedef struct FirstCall {
  bool done;
  size_t n;
  int kernels;        /* the plan's kernels */
  double prep_ms;     /* check + deriv_expand + opt_optimize_program */
  double compile_ms;  /* first call, empty kernel cache */
  double cached_ms;   /* first call of a new Def, kernels from the disk cache */
  int files_compiled; /* cubin files the first call wrote */
  int files_cached;   /* cubin files the second call wrote (0: all from disk) */
} FirstCall;

typedef struct CopyRes {
  bool run, oom;
  char error[512];
  double ms;
} CopyRes;

static int nprogs, nsizes, reps = 10;
static GpuProgram *progs[MAX_PROGS];
static size_t sizes[MAX_SIZES];
static Cell cells[MAX_PROGS][MAX_SIZES];
static FirstCall firsts[MAX_PROGS];
static CopyRes copies[MAX_SIZES];
static double tol = 1e-12;
static const char *cache_dir; /* the run's fresh kernel cache */

/* ---- small utilities ----------------------------------------------------- */

static bool is_oom(const char *msg) {
  return strstr(msg, "out of memory") != NULL || strstr(msg, "cannot allocate") != NULL;
}

/* Collects the heap and runs the finalisers it queued, which free the
   device memory of unreachable arrays, waits for the frees and restarts
   the driver's count towards its next collection (driver.h), so that no
   collection falls inside a timed call. */
static void collect(void) {
  if (cuda_ready()) {
    cuda_collect();
    return;
  }
  GC_gcollect();
  GC_invoke_finalizers();
}

/* The number of cubin files in the kernel cache's folder. */
static int count_cubins(void) {
  DIR *dir = opendir(cache_dir);
  if (!dir) return 0;
  int k = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    size_t len = strlen(e->d_name);
    if (len > 6 && strcmp(e->d_name + len - 6, ".cubin") == 0) k++;
  }
  closedir(dir);
  return k;
}

static void remove_cache_dir(void) {
  if (!cache_dir) return;
  DIR *dir = opendir(cache_dir);
  if (dir) {
    for (struct dirent *e; (e = readdir(dir));)
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
        unlink(una_sprintf("%s/%s", cache_dir, e->d_name));
    closedir(dir);
  }
  rmdir(cache_dir);
}

/* ---- Una on the GPU ------------------------------------------------------ */

/* Binds the global `name` to the value v in the session, as `let name = ...`
   would (the value is not computed by Una: it is the driver's own array).
   Returns the global's value slot (cleared after the measurement, so that
   the arrays can be freed: the prepared Def keeps the global). */
static Value *bind_global(Session *s, const char *name, Value v, bool array) {
  char *text = una_sprintf("let %s = %s\n", name, array ? "[0]" : "0");
  ParseResult pr = fe_parse_program("<bench>", text, strlen(text));
  if (pr.nerrors) fe_raise(pr.errors[0]);
  Global **gs = NULL;
  fe_check_let(s->env, pr.items[0], &gs);
  Value *slot = NEW(Value);
  *slot = v;
  gs[0]->value = slot;
  fe_env_bind_global(s->env, gs[0]);
  return slot;
}

/* What the session does for an expression item (session.c, ITEM_EXPR):
   parse, check, expand grad, optimize. A new Def every time. */
static Def *build_def(Session *s, const char *expr) {
  ParseResult pr = fe_parse_program("<bench>", expr, strlen(expr));
  if (pr.nerrors) fe_raise(pr.errors[0]);
  OptOptions oo = {0};
  oo.enabled = true;
  DerivOpt ro = {opt_derived, &oo};
  Def *d = deriv_expand(fe_check_expr(s->env, pr.items[0]->body), &ro);
  return opt_optimize_program(d, &oo);
}

/* One timed call: gpu_call (which waits for the stream at its end), then
   cuda_sync as every timed evaluation ends. */
static Value timed_call(const Def *d, double *ms) {
  double t0 = now_ms();
  Value v = gpu_call(d, NULL);
  cuda_sync(fe_nospan);
  *ms = now_ms() - t0;
  return v;
}

/* The gradient's components (one array per parameter), checked. */
static const Array *component(Value g, int k, int nargs, size_t n) {
  Value c = g;
  if (nargs > 1) {
    if (g.kind != V_TUPLE || g.u.t->n != nargs)
      fe_error(fe_nospan, "the gradient is not a tuple of %d components", nargs);
    c = g.u.t->items[k];
  }
  if (c.kind != V_ARRAY || c.u.a->boxed || c.u.a->len != n)
    fe_error(fe_nospan, "gradient component %d is not an array of %zu reals", k + 1, n);
  return c.u.a;
}

/* max over the components of max_i |g_i - c_i| / max_i |c_i|; a NaN in
   one and not the other counts as infinity. */
static double max_norm_diff(Value gpu, Value cpu, int nargs, size_t n) {
  double worst = 0;
  for (int k = 0; k < nargs; k++) {
    const Array *ga = component(gpu, k, nargs, n), *ca = component(cpu, k, nargs, n);
    val_host(ga);
    val_host(ca);
    double scale = 0, diff = 0;
    for (size_t i = 0; i < n; i++) {
      double g = ga->r[i], c = ca->r[i];
      if (isfinite(c)) scale = fmax(scale, fabs(c));
      if (g == c || (isnan(g) && isnan(c))) continue;
      diff = isfinite(g - c) ? fmax(diff, fabs(g - c)) : INFINITY;
    }
    double d = diff == 0 ? 0 : scale > 0 ? diff / scale : INFINITY;
    worst = fmax(worst, d);
  }
  return worst;
}

static double sum_abs(Value g, int nargs, size_t n) {
  double s = 0;
  for (int k = 0; k < nargs; k++) {
    const Array *a = component(g, k, nargs, n);
    val_host(a);
    for (size_t i = 0; i < n; i++) s += fabs(a->r[i]);
  }
  return s;
}

/* Measures Una's gradient of gp at n into c (and, when first, *fc); may
   raise. keep_host: the smallest n, where the CPU checks the GPU. */
static void una_measure(const GpuProgram *gp, size_t n, bool first, bool keep_host, Cell *c,
                        FirstCall *fc, Value **slots) {
  const BenchProgram *p = gp->p;
  Session *s = fe_session_new();
  if (!fe_session_load_prelude(s)) fe_error(fe_nospan, "the prelude failed to load");
  if (!fe_session_run_text(s, "<bench>", p->una, strlen(p->una), true))
    fe_error(fe_nospan, "defining f failed (the error is on stderr)");

  /* the inputs: c_grads.c's formulas on the host, then on the device */
  BenchArg args[BENCH_MAX_ARGS];
  memset(args, 0, sizeof args);
  Array *arrs[BENCH_MAX_ARGS] = {0};
  for (int k = 0; k < p->nargs; k++)
    if (p->is_array[k]) {
      arrs[k] = val_new_real_array(n, fe_nospan);
      args[k].a = arrs[k]->r;
    }
  p->inputs(n, args);
  char expr[256];
  int len = snprintf(expr, sizeof expr, "grad f");
  for (int k = 0; k < p->nargs; k++) {
    Value v = p->is_array[k] ? val_array(arrs[k]) : val_real(args[k].x);
    if (p->is_array[k]) gpu_array_ptr(arrs[k], fe_nospan); /* the copy to the device */
    char name[32];
    snprintf(name, sizeof name, "X%d", k);
    slots[k] = bind_global(s, name, v, p->is_array[k]);
    len += snprintf(expr + len, sizeof expr - (size_t)len, " %s", name);
  }
  cuda_sync(fe_nospan);
  if (!keep_host)
    for (int k = 0; k < p->nargs; k++)
      if (arrs[k]) gpu_drop_host(arrs[k]); /* device-resident only, as a GPU result */
  memset(args, 0, sizeof args);
  collect(); /* the host copies go */

  double t0 = now_ms();
  Def *d = build_def(s, expr);
  double prep_ms = now_ms() - t0;
  Value v;
  if (first) {
    /* the first call with an empty cache: plan, compile, load, evaluate */
    fc->n = n;
    fc->prep_ms = prep_ms;
    fc->kernels = plan_of_def(d)->nkernels;
    int files0 = count_cubins();
    v = timed_call(d, &fc->compile_ms);
    int files1 = count_cubins();
    fc->files_compiled = files1 - files0;
    v = val_real(0);
    collect();
    /* a second process's first call: a new Def, kernels from the disk */
    kcache_clear_memory();
    d = build_def(s, expr);
    v = timed_call(d, &fc->cached_ms);
    fc->files_cached = count_cubins() - files1;
    fc->done = true;
    c->first_ms = fc->cached_ms;
  } else {
    v = timed_call(d, &c->first_ms); /* warm-up */
  }
  double times[MAX_REPS];
  for (int r = 0; r < reps; r++) {
    v = val_real(0); /* the previous result is garbage now, as for a user */
    collect();
    v = timed_call(d, &times[r]);
  }
  c->ms = median(times, reps); /* sorts times */
  c->min_ms = times[0];
  for (int k = 0; k < p->nargs; k++) {
    const Array *g = component(v, k, p->nargs, n);
    if (!g->dev) c->on_host++;
    for (int m = 0; m < p->nargs; m++)
      if (g->dev && arrs[m] && g->dev == arrs[m]->dev) {
        c->shared++; /* no bytes written for it: its bandwidth would mean nothing */
        break;
      }
  }
  c->gabs = sum_abs(v, p->nargs, n);
  c->cpu_diff = NAN;
  if (keep_host) {
    t0 = now_ms();
    Value cpu = cpu_call(d, NULL);
    c->cpu_ms = now_ms() - t0;
    c->cpu_diff = max_norm_diff(v, cpu, p->nargs, n);
  }
}

/* The value slots of the measurement's inputs (static: set under fe_try,
   read after a longjmp). */
static Value *input_slots[BENCH_MAX_ARGS];

/* Measures (gp, n) under an error handler; clears the globals after. */
static void run_cell(const GpuProgram *gp, size_t n, bool first, bool keep_host, Cell *c, FirstCall *fc) {
  Value **slots = input_slots;
  memset(input_slots, 0, sizeof input_slots);
  c->run = true;
  FeTry t;
  if (fe_try(&t)) {
    una_measure(gp, n, first, keep_host, c, fc, slots);
    fe_untry(&t);
  } else {
    snprintf(c->error, sizeof c->error, "%s", fe_error_text(t.err));
    c->oom = is_oom(t.err.msg);
  }
  for (int k = 0; k < BENCH_MAX_ARGS; k++)
    if (slots[k]) *slots[k] = val_real(0); /* the inputs can go now */
  collect();
}

/* ---- the copy baseline --------------------------------------------------- */

static void copy_measure(size_t n, CopyRes *res) {
  Array *src = val_new_real_array(n, fe_nospan);
  for (size_t i = 0; i < n; i++) src->r[i] = bench_u(i);
  CudaPtr from = gpu_array_ptr(src, fe_nospan);
  Array *dst = gpu_new_array(n, fe_nospan);
  CudaPtr to = gpu_array_ptr(dst, fe_nospan);
  cuda_sync(fe_nospan);
  size_t bytes = n * sizeof(double);
  double times[MAX_REPS];
  cuda_copy(to, from, bytes, fe_nospan); /* warm-up */
  cuda_sync(fe_nospan);
  for (int r = 0; r < reps; r++) {
    CudaTimer *tm = cuda_timer_start();
    cuda_copy(to, from, bytes, fe_nospan);
    times[r] = cuda_timer_stop_ms(tm);
  }
  res->ms = median(times, reps);
  size_t at[3] = {0, n / 2, n - 1};
  for (int k = 0; k < 3; k++) {
    double x = 0;
    cuda_download(&x, to + (CudaPtr)(at[k] * sizeof(double)), sizeof x, fe_nospan);
    if (x != src->r[at[k]]) fe_error(fe_nospan, "the copy differs from its source at element %zu", at[k]);
  }
}

static void run_copy(size_t n, CopyRes *res) {
  res->run = true;
  FeTry t;
  if (fe_try(&t)) {
    copy_measure(n, res);
    fe_untry(&t);
  } else {
    snprintf(res->error, sizeof res->error, "%s", fe_error_text(t.err));
    res->oom = is_oom(t.err.msg);
  }
  collect();
}

/* ---- peers (JSON lines from peers_gpu.py) -------------------------------- */

typedef struct PeerRow {
  char peer[16], program[32];
  size_t n;
  double ms, gabs;
  char error[300];
} PeerRow;

static PeerRow peer_rows[MAX_PEER_ROWS];
static int npeer_rows;
/* What the peers said about themselves: "JAX 0.4.30 on cuda:0", "PyTorch: skipped (...)" */
static char peer_notes[MAX_NOTES][400];
static int npeer_notes;

static const char *peer_title(const char *peer) {
  return strcmp(peer, "jax") == 0     ? "JAX"
         : strcmp(peer, "torch") == 0 ? "PyTorch"
         : strcmp(peer, "copy") == 0  ? "copy (PyTorch)"
                                      : peer;
}


static void add_note(const char *text) {
  if (npeer_notes < MAX_NOTES) snprintf(peer_notes[npeer_notes++], sizeof peer_notes[0], "%s", text);
}

static void read_peers(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "una_gpu_bench: cannot read peers file %s; no peer columns\n", path);
    return;
  }
  char line[8192];
  while (fgets(line, sizeof line, f) && npeer_rows < MAX_PEER_ROWS) {
    PeerRow r;
    memset(&r, 0, sizeof r);
    if (!json_str(line, "peer", r.peer, sizeof r.peer)) continue;
    char text[300], dev[100];
    if (json_str(line, "skip", text, sizeof text)) {
      add_note(una_sprintf("%s: skipped (%s)", peer_title(r.peer), text));
      continue;
    }
    if (json_str(line, "version", text, sizeof text)) {
      if (json_str(line, "device", dev, sizeof dev))
        add_note(una_sprintf("%s %s on %s", peer_title(r.peer), text, dev));
      else
        add_note(una_sprintf("%s %s", peer_title(r.peer), text));
      continue;
    }
    if (!json_str(line, "program", r.program, sizeof r.program)) {
      if (json_str(line, "error", text, sizeof text)) add_note(una_sprintf("%s: %s", peer_title(r.peer), text));
      continue;
    }
    double n = json_num(line, "n");
    if (!(n > 0)) continue;
    r.n = (size_t)n;
    r.ms = json_num(line, "ms");
    r.gabs = json_num(line, "gabs");
    json_str(line, "error", r.error, sizeof r.error);
    if (!r.error[0] && !(r.ms > 0)) snprintf(r.error, sizeof r.error, "no time in its line");
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

static double peer_ms(const PeerRow *r) { return r && !r->error[0] ? r->ms : NAN; }

static const char *const peer_names[2] = {"jax", "torch"};

/* ---- formatting ---------------------------------------------------------- */

/* n as 2^k or 10^k when it is one (k >= 3), else the integer. */
static const char *fmt_n(size_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) {
    int e = 0;
    while (((size_t)1 << e) < n) e++;
    return una_sprintf("2^%d", e);
  }
  size_t p = 1;
  int e = 0;
  while (p < n) {
    p *= 10;
    e++;
  }
  if (p == n && e >= 3) return una_sprintf("10^%d", e);
  return una_sprintf("%zu", n);
}

static const char *fmt_ms(double ms) {
  if (!(ms >= 0) || isinf(ms)) return "-";
  if (ms >= 100) return una_sprintf("%.0f", ms);
  if (ms >= 10) return una_sprintf("%.1f", ms);
  if (ms >= 1) return una_sprintf("%.2f", ms);
  return una_sprintf("%.3f", ms);
}

static const char *fmt_ratio(double a, double b) {
  if (a > 0 && b > 0 && isfinite(a) && isfinite(b)) return una_sprintf("%.2f", a / b);
  return "-";
}

/* GB/s of bytes moved in ms; "-" without a time. */
static double gbps(double bytes, double ms) { return ms > 0 && isfinite(ms) ? bytes / ms / 1e6 : NAN; }

static const char *fmt_gbps(double g) {
  if (!(g > 0) || !isfinite(g)) return "-";
  return una_sprintf(g < 10 ? "%.2f" : "%.0f", g);
}

static double cell_ms(const Cell *c) { return c->run && !c->error[0] ? c->ms : NAN; }

static double copy_ms(int j) { return copies[j].run && !copies[j].error[0] ? copies[j].ms : NAN; }

/* ---- the machine --------------------------------------------------------- */

static const char *cpu_model(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return "unknown CPU";
  char line[512];
  const char *model = "unknown CPU";
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    colon++;
    while (*colon == ' ' || *colon == '\t') colon++;
    colon[strcspn(colon, "\n")] = '\0';
    model = una_strdup(colon);
    break;
  }
  fclose(f);
  return model;
}

static double host_memory_gib(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page / (double)(1 << 30) : NAN;
}

/* The first line of a shell command's output, or NULL. */
static const char *command_line_output(const char *cmd) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  char buf[256];
  const char *out = NULL;
  if (fgets(buf, sizeof buf, p)) {
    buf[strcspn(buf, "\n")] = '\0';
    if (buf[0]) out = una_strdup(buf);
  }
  pclose(p);
  return out;
}

/* argv as one shell command line (arguments with blanks quoted). */
static const char *command_text(int argc, char **argv) {
  char *s = "";
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool plain = a[0] && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,^:+") ==
                             strlen(a);
    s = una_sprintf("%s%s%s%s%s", s, i ? " " : "", plain ? "" : "'", a, plain ? "" : "'");
  }
  return s;
}

/* ---- the report ---------------------------------------------------------- */

static int failed;

static void report(FILE *out, const char *cmd) {
  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  const char *commit = command_line_output("git rev-parse --short HEAD 2>/dev/null");
  const char *dirty = command_line_output("git status --porcelain --untracked-files=no 2>/dev/null");
  fprintf(out, "# GPU benchmark: latest results\n\n"
               "Written by una_gpu_bench (bench/gpu/run.sh); see README.md for what is measured and how.\n\n");
  fprintf(out, "- Date: %s\n", date);
  fprintf(out, "- GPU: %s, %.0f GiB\n", gpu_describe(), (double)cuda_total_memory() / (double)(1 << 30));
  fprintf(out, "- Host: %s, %ld cores, %.0f GiB memory\n", cpu_model(), sysconf(_SC_NPROCESSORS_ONLN),
          host_memory_gib());
  if (commit) fprintf(out, "- Una: commit %s%s\n", commit, dirty ? " (with uncommitted changes)" : "");
  fprintf(out, "- Command: `%s`\n", cmd);
  fprintf(out, "- Exit status: %d\n\n", failed);

  fprintf(out, "Una: `grad f X0 ...` through gpu_call from device-resident inputs, wall-clock median of %d "
               "calls after a warm-up (heap collected before each, outside the timing); JAX: jit(grad), "
               "float64; PyTorch: forward + backward, float64; copy: device-to-device, CUDA events. "
               "Times in ms; GB/s = bytes that must move / time (prod, logsumexp, map_heavy 16 n; dot, "
               "bce 32 n; copy 16 n); %% of copy = Una's GB/s over the copy's at the same n; Una/JAX, "
               "Una/PyTorch below 1: Una is faster.\n",
          reps);
  if (npeer_notes == 0) fprintf(out, "Peers: none.");
  for (int i = 0; i < npeer_notes; i++) fprintf(out, "%s%s", i ? "; " : "Peers: ", peer_notes[i]);
  fprintf(out, "%s\n\n", npeer_notes ? "." : "");

  fprintf(out, "| program | n | Una ms | JAX ms | PyTorch ms | Una/JAX | Una/PyTorch | Una GB/s | %% of copy "
               "| JAX GB/s | PyTorch GB/s |\n");
  fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < nprogs; i++)
    for (int j = 0; j < nsizes; j++) {
      const Cell *c = &cells[i][j];
      const char *name = progs[i]->name;
      size_t n = sizes[j];
      double bytes = progs[i]->bytes_per_n * (double)n;
      double una = cell_ms(c), jx = peer_ms(find_peer("jax", name, n)), pt = peer_ms(find_peer("torch", name, n));
      double ug = c->shared ? NAN : gbps(bytes, una), cg = gbps(16.0 * (double)n, copy_ms(j));
      const char *una_text = c->oom ? "OOM" : c->error[0] ? "error" : fmt_ms(una);
      fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, fmt_n(n), una_text,
              fmt_ms(jx), fmt_ms(pt), fmt_ratio(una, jx), fmt_ratio(una, pt),
              c->shared && !c->error[0] ? "shares inputs" : fmt_gbps(ug),
              ug > 0 && cg > 0 ? una_sprintf("%.0f", 100 * ug / cg) : "-", fmt_gbps(gbps(bytes, jx)),
              fmt_gbps(gbps(bytes, pt)));
    }

  fprintf(out, "\nThe copy baseline: n doubles device to device (16 n bytes), median of %d; Una's driver "
               "(cuMemcpyDtoDAsync) and PyTorch's `y.copy_(x)`, both timed with CUDA events.\n\n",
          reps);
  fprintf(out, "| n | copy ms | copy GB/s | PyTorch copy ms | PyTorch copy GB/s |\n");
  fprintf(out, "|---:|---:|---:|---:|---:|\n");
  for (int j = 0; j < nsizes; j++) {
    size_t n = sizes[j];
    double ms = copy_ms(j), pc = peer_ms(find_peer("copy", "copy", n));
    fprintf(out, "| %s | %s | %s | %s | %s |\n", fmt_n(n),
            copies[j].oom ? "OOM" : copies[j].error[0] ? "error" : fmt_ms(ms), fmt_gbps(gbps(16.0 * (double)n, ms)),
            fmt_ms(pc), fmt_gbps(gbps(16.0 * (double)n, pc)));
  }

  fprintf(out, "\nFirst calls, at each program's first n: prep = check + deriv_expand + "
               "opt_optimize_program (not in any time); empty cache = the first gpu_call with an empty "
               "kernel cache (plan, NVRTC compile, load, evaluate); disk cache = the first gpu_call of a "
               "new Def of the same program after the in-memory cache is cleared (plan, cubin from the "
               "disk cache, load, evaluate), as a second process finds it; warm = the median above.\n\n");
  fprintf(out, "| program | n | kernels | prep ms | first call, empty cache ms | first call, disk cache ms "
               "| warm ms | cubins compiled | cubins compiled again |\n");
  fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < nprogs; i++) {
    const FirstCall *fc = &firsts[i];
    if (!fc->done) {
      fprintf(out, "| %s | - | - | - | - | - | - | - | - |\n", progs[i]->name);
      continue;
    }
    int j = 0;
    while (j < nsizes && sizes[j] != fc->n) j++;
    fprintf(out, "| %s | %s | %d | %s | %s | %s | %s | %d | %d |\n", progs[i]->name, fmt_n(fc->n), fc->kernels,
            fmt_ms(fc->prep_ms), fmt_ms(fc->compile_ms), fmt_ms(fc->cached_ms),
            j < nsizes ? fmt_ms(cell_ms(&cells[i][j])) : "-", fc->files_compiled, fc->files_cached);
  }

  fprintf(out, "\nChecks and details: min = the fastest timed call; first = the warm-up call (at the first "
               "n, the call with the disk cache); GPU vs CPU = at the smallest n, the largest over the "
               "gradient's components of max |gpu - cpu| / max |cpu|, Una's CPU gradient (cpu_call of the "
               "same program, one call: CPU ms) on the same inputs (the run fails above %g); sum |g| = "
               "the sum of |gradient| over all components; JAX vs Una, PyTorch vs Una = the relative "
               "difference of the peer's sum |g| from Una's (noted above %g).\n\n",
          tol, PEER_TOL);
  fprintf(out, "| program | n | Una min ms | Una first ms | CPU ms | GPU vs CPU | sum abs g | JAX vs Una "
               "| PyTorch vs Una |\n");
  fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool peer_mismatch = false;
  for (int i = 0; i < nprogs; i++)
    for (int j = 0; j < nsizes; j++) {
      const Cell *c = &cells[i][j];
      if (!c->run) continue;
      bool ok = !c->error[0];
      const char *pd[2];
      for (int k = 0; k < 2; k++) {
        const PeerRow *pr = find_peer(peer_names[k], progs[i]->name, sizes[j]);
        if (!ok || !pr || pr->error[0] || !(pr->gabs >= 0)) {
          pd[k] = "-";
          continue;
        }
        double d = fabs(pr->gabs - c->gabs) / fmax(c->gabs, DBL_MIN);
        pd[k] = una_sprintf("%.1e", d);
        if (!(d <= PEER_TOL)) peer_mismatch = true;
      }
      fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", progs[i]->name, fmt_n(sizes[j]),
              ok ? fmt_ms(c->min_ms) : "-", ok ? fmt_ms(c->first_ms) : "-",
              ok && !isnan(c->cpu_diff) ? fmt_ms(c->cpu_ms) : "-",
              ok && !isnan(c->cpu_diff) ? una_sprintf("%.1e", c->cpu_diff) : "-",
              ok ? una_sprintf("%.10g", c->gabs) : "-", pd[0], pd[1]);
    }

  /* the README's targets, at the large sizes */
  fprintf(out, "\nTargets at n >= %s: Una's gradient reaches at least %.0f%% of the copy's bandwidth and is "
               "faster than JAX and PyTorch.\n\n",
          fmt_n(TARGET_N), TARGET_PCT);
  int checked = 0, missed = 0;
  for (int i = 0; i < nprogs; i++)
    for (int j = 0; j < nsizes; j++) {
      size_t n = sizes[j];
      const Cell *c = &cells[i][j];
      const char *nm = progs[i]->name;
      if (n < TARGET_N || !c->run) continue;
      checked++;
      if (c->error[0]) {
        fprintf(out, "- %s, n = %s: Una's gradient %s\n", nm, fmt_n(n), c->oom ? "did not fit" : "failed");
        missed++;
        continue;
      }
      double ug = gbps(progs[i]->bytes_per_n * (double)n, c->ms), cg = gbps(16.0 * (double)n, copy_ms(j));
      if (c->shared) {
        fprintf(out, "- %s, n = %s: no bandwidth: Una's gradient shares its inputs' memory\n", nm, fmt_n(n));
        missed++;
      } else if (cg > 0 && ug < TARGET_PCT / 100 * cg) {
        fprintf(out, "- %s, n = %s: %.0f GB/s is %.0f%% of the copy's %.0f GB/s (target >= %.0f%%)\n", nm,
                fmt_n(n), ug, 100 * ug / cg, cg, TARGET_PCT);
        missed++;
      }
      for (int k = 0; k < 2; k++) {
        double pm = peer_ms(find_peer(peer_names[k], nm, n));
        if (pm > 0 && c->ms >= pm) {
          fprintf(out, "- %s, n = %s: Una %s ms is not faster than %s (%s ms; %.2fx)\n", nm, fmt_n(n),
                  fmt_ms(c->ms), peer_title(peer_names[k]), fmt_ms(pm), c->ms / pm);
          missed++;
        }
      }
    }
  if (!checked) fprintf(out, "(no size >= %s was run: targets not checked.)\n", fmt_n(TARGET_N));
  else if (!missed) fprintf(out, "All targets met.\n");

  /* errors and notes */
  fprintf(out, "\n");
  for (int j = 0; j < nsizes; j++) {
    if (copies[j].error[0]) fprintf(out, "- copy, n = %s: %s\n", fmt_n(sizes[j]), copies[j].error);
    const PeerRow *pr = find_peer("copy", "copy", sizes[j]);
    if (pr && pr->error[0]) fprintf(out, "- copy, n = %s, PyTorch: %s\n", fmt_n(sizes[j]), pr->error);
  }
  for (int i = 0; i < nprogs; i++)
    for (int j = 0; j < nsizes; j++) {
      const Cell *c = &cells[i][j];
      if (c->error[0]) fprintf(out, "- %s, n = %s: %s\n", progs[i]->name, fmt_n(sizes[j]), c->error);
      else if (c->run && !isnan(c->cpu_diff) && !(c->cpu_diff <= tol))
        fprintf(out, "- %s, n = %s: the GPU's gradient differs from the CPU's by %.2g (more than %g)\n",
                progs[i]->name, fmt_n(sizes[j]), c->cpu_diff, tol);
      if (c->run && !c->error[0] && c->shared)
        fprintf(out, "- %s, n = %s: %d of the gradient's %d arrays share an input's device memory (not "
                     "written: its bandwidth is not given)\n",
                progs[i]->name, fmt_n(sizes[j]), c->shared, progs[i]->p->nargs);
      if (c->run && !c->error[0] && c->on_host)
        fprintf(out, "- %s, n = %s: %d of the gradient's %d arrays are host arrays (computed on the CPU)\n",
                progs[i]->name, fmt_n(sizes[j]), c->on_host, progs[i]->p->nargs);
      const FirstCall *fc = &firsts[i];
      if (fc->done && fc->n == sizes[j] && fc->files_cached > 0)
        fprintf(out, "- %s: the second first call compiled %d kernel file(s) again instead of reading the "
                     "disk cache\n",
                progs[i]->name, fc->files_cached);
      for (int k = 0; k < 2; k++) {
        const PeerRow *pr = find_peer(peer_names[k], progs[i]->name, sizes[j]);
        if (pr && pr->error[0])
          fprintf(out, "- %s, n = %s, %s: %s\n", progs[i]->name, fmt_n(sizes[j]), peer_title(peer_names[k]),
                  pr->error);
      }
    }
  if (peer_mismatch)
    fprintf(out, "- a peer's sum |gradient| differs from Una's by more than %g (see the details)\n", PEER_TOL);
  fprintf(out, "%s\n", failed ? "FAILED" : "OK");
}

/* ---- the run ------------------------------------------------------------- */

/* Every measurement, on a thread with a big stack (deep terms). */
static void *bench_thread(void *arg) {
  (void)arg;
  char base;
  fe_stack_init(&base, STACK_SIZE - ((size_t)1 << 20));
  for (int j = 0; j < nsizes; j++) {
    if (!cuda_ready()) break;
    fprintf(stderr, "una_gpu_bench: copy n=%s ...", fmt_n(sizes[j]));
    run_copy(sizes[j], &copies[j]);
    if (copies[j].error[0]) fprintf(stderr, " %s\n", copies[j].error);
    else fprintf(stderr, " %s ms, %.0f GB/s\n", fmt_ms(copies[j].ms), gbps(16.0 * (double)sizes[j], copies[j].ms));
  }
  for (int i = 0; i < nprogs; i++) {
    size_t too_big = 0;
    for (int j = 0; j < nsizes; j++) {
      Cell *c = &cells[i][j];
      size_t n = sizes[j];
      if (!cuda_ready()) {
        c->run = true;
        snprintf(c->error, sizeof c->error, "not run: the GPU cannot be used any more in this process");
        continue;
      }
      if (too_big) {
        c->run = true;
        c->oom = true;
        snprintf(c->error, sizeof c->error, "skipped: out of device memory at n = %s", fmt_n(too_big));
        continue;
      }
      fprintf(stderr, "una_gpu_bench: %s n=%s ...", progs[i]->name, fmt_n(n));
      run_cell(progs[i], n, !firsts[i].done, j == 0, c, &firsts[i]);
      if (c->error[0]) {
        fprintf(stderr, " %s\n", c->error);
        if (c->oom) too_big = n;
        else failed = 1;
        continue;
      }
      fprintf(stderr, " %s ms (%.0f GB/s%s)", fmt_ms(c->ms), gbps(progs[i]->bytes_per_n * (double)n, c->ms),
              c->shared ? "; the gradient shares its inputs' memory" : "");
      if (firsts[i].done && firsts[i].n == n)
        fprintf(stderr, "; first call %s ms compiling, %s ms from the disk cache", fmt_ms(firsts[i].compile_ms),
                fmt_ms(firsts[i].cached_ms));
      if (!isnan(c->cpu_diff)) {
        fprintf(stderr, "; GPU vs CPU %.2g", c->cpu_diff);
        if (!(c->cpu_diff <= tol)) failed = 1;
      }
      fprintf(stderr, "\n");
    }
  }
  for (int j = 0; j < nsizes; j++)
    if (copies[j].error[0] && !copies[j].oom) failed = 1;
  return NULL;
}

static void usage(FILE *out) {
  fprintf(out, "usage: una_gpu_bench [--programs a,b,...] [--n \"N ...\"] [--reps R] [--peers FILE] [--tol T]\n"
               "                     [--results FILE|none]\n"
               "  --programs  programs, comma- or blank-separated, or all (the default):");
  for (int i = 0; i < NPROGRAMS; i++) fprintf(out, " %s", gpu_programs[i].name);
  fprintf(out, "\n"
               "  --n         sizes: integers, 2^k or 1e6 (default \"2^20 2^22 2^24 2^26 2^28\")\n"
               "  --reps      timed calls per measurement, 1 to %d; the median is reported (default 10)\n"
               "  --peers     JSON lines of peers_gpu.py (JAX, PyTorch, copy) to merge\n"
               "  --tol       largest GPU vs CPU difference allowed at the smallest n (default 1e-12)\n"
               "  --results   where the tables are written too (default bench/gpu/RESULTS.md; none: nowhere)\n"
               "Needs an NVIDIA GPU (exit status 2 without one); see bench/gpu/README.md.\n",
          MAX_REPS);
}

/* Splits a list separated by commas or blanks. */
static int split(char *s, char **out, int max) {
  int k = 0;
  for (char *tok = strtok(s, ", \t\n"); tok && k < max; tok = strtok(NULL, ", \t\n")) out[k++] = tok;
  return k;
}

/* A size: an integer, 1e6, or 2^k; 0 when it is none. */
static size_t parse_size(const char *w) {
  char *end;
  const char *caret = strchr(w, '^');
  double x;
  if (caret) {
    double b = strtod(w, &end);
    if (end != caret) return 0;
    double e = strtod(caret + 1, &end);
    if (*end || e != floor(e) || e < 0 || e > 60) return 0;
    x = pow(b, e);
  } else {
    x = strtod(w, &end);
    if (*end) return 0;
  }
  if (!(x >= 1) || x != floor(x) || x > 1e12) return 0;
  return (size_t)x;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  GC_INIT();
  una_gc_reserve();
  GC_set_warn_proc(GC_ignore_warn_proc);
  const char *programs_arg = "all", *n_arg = "2^20 2^22 2^24 2^26 2^28", *peers_path = NULL;
  const char *results = "bench/gpu/RESULTS.md";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    char *end = NULL;
    if (strcmp(a, "--programs") == 0 && has) programs_arg = argv[++i];
    else if (strcmp(a, "--n") == 0 && has) n_arg = argv[++i];
    else if (strcmp(a, "--peers") == 0 && has) peers_path = argv[++i];
    else if (strcmp(a, "--results") == 0 && has) results = argv[++i];
    else if (strcmp(a, "--reps") == 0 && has) {
      long r = strtol(argv[++i], &end, 10);
      if (*end || r < 1 || r > MAX_REPS) {
        fprintf(stderr, "una_gpu_bench: --reps must be between 1 and %d\n", MAX_REPS);
        return 2;
      }
      reps = (int)r;
    } else if (strcmp(a, "--tol") == 0 && has) {
      tol = strtod(argv[++i], &end);
      if (*end || !(tol >= 0)) {
        fprintf(stderr, "una_gpu_bench: --tol must be a number >= 0\n");
        return 2;
      }
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      bool known = strcmp(a, "--programs") == 0 || strcmp(a, "--n") == 0 || strcmp(a, "--peers") == 0 ||
                   strcmp(a, "--results") == 0 || strcmp(a, "--reps") == 0 || strcmp(a, "--tol") == 0;
      if (known) fprintf(stderr, "una_gpu_bench: option '%s' needs a value\n", a);
      else fprintf(stderr, "una_gpu_bench: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }

  /* the programs: the README's, in its order, from c_grads.c's table */
  for (int i = 0; i < NPROGRAMS; i++)
    for (int j = 0; j < bench_nprograms; j++)
      if (strcmp(bench_programs[j].name, gpu_programs[i].name) == 0) gpu_programs[i].p = &bench_programs[j];
  {
    char *words[64];
    int k = split(una_strdup(programs_arg), words, 64);
    for (int i = 0; i < k; i++) {
      for (int j = 0; j < NPROGRAMS; j++) {
        bool all = strcmp(words[i], "all") == 0;
        if (!all && strcmp(words[i], gpu_programs[j].name) != 0) continue;
        bool dup = false;
        for (int m = 0; m < nprogs; m++) dup |= progs[m] == &gpu_programs[j];
        if (!dup && nprogs < MAX_PROGS) progs[nprogs++] = &gpu_programs[j];
        if (!all) break;
      }
      bool known = strcmp(words[i], "all") == 0;
      for (int j = 0; j < NPROGRAMS; j++) known |= strcmp(words[i], gpu_programs[j].name) == 0;
      if (!known) {
        fprintf(stderr, "una_gpu_bench: unknown program '%s'\n", words[i]);
        usage(stderr);
        return 2;
      }
    }
  }
  for (int i = 0; i < nprogs; i++)
    if (!progs[i]->p) {
      fprintf(stderr, "una_gpu_bench: bench/cpu/c_grads.c has no program '%s'\n", progs[i]->name);
      return 2;
    }
  {
    char *words[64];
    int k = split(una_strdup(n_arg), words, 64);
    for (int i = 0; i < k; i++) {
      size_t n = parse_size(words[i]);
      if (!n) {
        fprintf(stderr, "una_gpu_bench: sizes must be positive integers (or 2^k, 1e6), found '%s'\n", words[i]);
        return 2;
      }
      bool dup = false;
      for (int j = 0; j < nsizes; j++) dup |= sizes[j] == n;
      if (dup) continue;
      if (nsizes == MAX_SIZES) {
        fprintf(stderr, "una_gpu_bench: at most %d sizes\n", MAX_SIZES);
        return 2;
      }
      sizes[nsizes++] = n;
    }
    qsort(sizes, (size_t)nsizes, sizeof sizes[0], cmp_size);
  }
  if (nprogs == 0 || nsizes == 0) {
    usage(stderr);
    return 2;
  }

  const char *why = NULL;
  if (!gpu_available(&why)) {
    fprintf(stderr, "una_gpu_bench: no usable GPU: %s\n", why ? why : "unknown reason");
    return 2;
  }
  if (peers_path) read_peers(peers_path);

  /* a fresh kernel cache for the run, so that the first calls compile */
  const char *tmp = getenv("TMPDIR");
  char *dir = una_sprintf("%s/una_gpu_bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "una_gpu_bench: cannot make a temporary folder for the kernel cache (%s)\n", dir);
    return 1;
  }
  cache_dir = dir;
  setenv("UNA_CACHE_DIR", cache_dir, 1);
  fprintf(stderr, "una_gpu_bench: on %s; kernel cache in %s (removed at the end)\n", gpu_describe(), cache_dir);

  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, STACK_SIZE);
  if (pthread_create(&th, &attr, bench_thread, NULL) != 0) {
    fprintf(stderr, "una_gpu_bench: cannot start a thread with a %zu-byte stack\n", STACK_SIZE);
    remove_cache_dir();
    return 1;
  }
  pthread_join(th, NULL);
  remove_cache_dir();

  char *text = NULL;
  size_t text_len = 0;
  FILE *mem = open_memstream(&text, &text_len);
  if (!mem) {
    fprintf(stderr, "una_gpu_bench: open_memstream failed\n");
    return 1;
  }
  report(mem, command_text(argc, argv));
  fclose(mem);
  fputs(text, stdout);
  fflush(stdout);
  if (strcmp(results, "none") != 0) {
    FILE *f = fopen(results, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
      fprintf(stderr, "una_gpu_bench: cannot write %s\n", results);
    else
      fprintf(stderr, "una_gpu_bench: wrote %s\n", results);
  }
  free(text);
  return failed;
}
