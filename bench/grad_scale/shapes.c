/* shapes.c: the cost of `:grad` on the program shapes that used to make
   derivation blow up (bench/grad_scale/README.md, "Program shapes"):
     chain K   K functions, each calling the previous one twice
               (def aI (x: R) : R = a(I-1) x + a(I-1) x): inlining every
               call is exponential, modular differentiation is linear;
     ifs N     N nested ifs;
     lstm C    an LSTM (hidden 8) over C steps, its step function called
               C times from a body unrolled by hand;
     loop C    the same LSTM written with `loop`.
   For each, in a child process of its own: the time of `:grad f` in a
   session (derivation, optimization and printing, what a user waits
   for), the peak resident memory, and one evaluation of the gradient,
   whose value is checked (chain: 2^K (x cos x + sin x); ifs: -1; lstm
   and loop: the two programs agree).

   Usage: grad_shapes [FAMILY SIZE ...] (default: the sizes the issue
   names). Build and run with `make bench-grad-shapes`. */
#include <math.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../../frontend/ir/common.h"
#include "../../frontend/ir/strbuf.h"
#include "../../frontend/repl/session.h"

#define STACK_SIZE ((size_t)1 << 30)
#define HIDDEN 8

typedef struct Result {
  char family[8];
  int n;
  double grad_ms;  /* the :grad command */
  double rss_mb;   /* peak resident memory after it */
  double eval_ms;  /* one evaluation of the gradient */
  double value[4]; /* chain, ifs: value[0]; lstm, loop: a few entries */
  char error[256];
} Result;

/* ---- the programs ---- */

static void chain(StrBuf *b, int k) {
  sb_put(b, "def a0 (x: R) : R = sin x * x\n");
  for (int i = 1; i <= k; i++) sb_put(b, una_sprintf("def a%d (x: R) : R = a%d x + a%d x\n", i, i - 1, i - 1));
  sb_put(b, una_sprintf("def f (x: R) : R = a%d x\n", k));
}

static void ifs(StrBuf *b, int n) {
  sb_put(b, "def f (x: R) : R =\n");
  for (int i = 0; i < n; i++) sb_put(b, una_sprintf("  if x > %d then x * %d else\n", i, i + 1));
  sb_put(b, "  x * x\n");
}

/* A reproducible array literal of n values in (-1, 1). */
static void numbers(StrBuf *b, unsigned *seed, int n) {
  sb_put(b, "[");
  for (int i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    sb_put(b, una_sprintf("%s%.3f", i ? ", " : "", (double)(*seed >> 8 & 0xffff) / 32768.0 - 1.0));
  }
  sb_put(b, "]");
}

static void matrix(StrBuf *b, unsigned *seed, int rows, int n) {
  sb_put(b, "[");
  for (int r = 0; r < rows; r++) {
    if (r) sb_put(b, ", ");
    numbers(b, seed, n);
  }
  sb_put(b, "]");
}

/* The LSTM of GradBench's lstm eval for one layer: elementwise gates. */
static void lstm(StrBuf *b, int c, bool loop) {
  sb_put(b,
         "def sigm (v: [R]) : [R] = map (x. 1 / (1 + exp (0 - x))) v\n"
         "def lse (v: [R]) : R = let m = reduce max (0 - 1e30) v in m + log (sum (map (x. exp (x - m)) v))\n"
         "def cell (w: [[R]]) (b: [[R]]) (h: [R]) (s: [R]) (x: [R]) : ([R], [R]) =\n"
         "  let f = sigm (map3 (a, p, q. a * p + q) x w[0] b[0]) in\n"
         "  let i = sigm (map3 (a, p, q. a * p + q) h w[1] b[1]) in\n"
         "  let o = sigm (map3 (a, p, q. a * p + q) x w[2] b[2]) in\n"
         "  let g = map tanh (map3 (a, p, q. a * p + q) h w[3] b[3]) in\n"
         "  let s2 = map2 (+) (map2 (*) s f) (map2 (*) i g) in\n"
         "  (map2 (*) o (map tanh s2), s2)\n"
         "def step (w: [[R]]) (b: [[R]]) (e: [[R]]) (h: [R]) (s: [R]) (x: [R]) (y: [R]) : ([R], [R], R) =\n"
         "  let (h2, s2) = cell w b h s (map2 (*) x e[0]) in\n"
         "  let p = map3 (a, u, v. a * u + v) h2 e[1] e[2] in\n"
         "  let l = lse p in\n"
         "  (h2, s2, sum (map2 (a, q. a * (q - l)) y p))\n"
         "def f (w: [[R]]) (b: [[R]]) (e: [[R]]) (h0: [R]) (s0: [R]) (xs: [[R]]) : R =\n");
  if (loop) {
    sb_put(b, "  let c = length xs - 1 in\n"
              "  let (h, s, total) = loop (h, s, total) = (h0, s0, 0) for t < c do\n"
              "    let (h2, s2, l) = step w b e h s xs[t] xs[t + 1] in (h2, s2, total + l) in\n");
    sb_put(b, una_sprintf("  0 - total / (c * %d)\n", HIDDEN));
  } else {
    for (int t = 0; t < c; t++)
      sb_put(b, una_sprintf("  let (h%d, s%d, l%d) = step w b e h%d s%d xs[%d] xs[%d] in\n", t + 1, t + 1, t + 1,
                            t, t, t, t + 1));
    sb_put(b, "  0 - (");
    for (int t = 0; t < c; t++) sb_put(b, una_sprintf("%sl%d", t ? " + " : "", t + 1));
    sb_put(b, una_sprintf(") / %d\n", c * HIDDEN));
  }
  unsigned seed = 7;
  const char *names[] = {"W", "B", "E", "H", "S", "X"};
  int rows[] = {4, 4, 3, 0, 0, c + 1};
  for (int i = 0; i < 6; i++) {
    sb_put(b, una_sprintf("let %s = ", names[i]));
    if (rows[i]) matrix(b, &seed, rows[i], HIDDEN);
    else numbers(b, &seed, HIDDEN);
    sb_put(b, "\n");
  }
}

/* ---- one measurement ---- */

typedef struct Job {
  Result *r;
} Job;

/* Runs text in s with its output in *out (a fresh memory stream). */
static bool run(Session *s, const char *text, char **out) {
  size_t len;
  FILE *f = open_memstream(out, &len);
  s->out = f;
  bool ok = fe_session_run_text(s, "<bench>", text, strlen(text), true);
  fclose(f);
  return ok;
}

static void *measure(void *arg) {
  Result *r = ((Job *)arg)->r;
  char base;
  fe_stack_init(&base, STACK_SIZE - ((size_t)1 << 20));
  Session *s = fe_session_new();
  char *err = NULL;
  size_t elen;
  s->err = open_memstream(&err, &elen);
  if (!fe_session_load_prelude(s)) {
    snprintf(r->error, sizeof r->error, "the prelude does not load");
    return NULL;
  }
  StrBuf b = {0};
  const char *wrt = "", *args = "0.5";
  if (strcmp(r->family, "chain") == 0) chain(&b, r->n);
  else if (strcmp(r->family, "ifs") == 0) {
    ifs(&b, r->n);
    args = "(0 - 0.5)";
  } else {
    lstm(&b, r->n, strcmp(r->family, "loop") == 0);
    wrt = " wrt w b e";
    args = "W B E H S X";
  }
  char *out = NULL;
  if (!run(s, sb_str(&b), &out)) goto failed;
  double t0 = now_ms();
  if (!run(s, una_sprintf(":grad (grad f%s)\n", wrt), &out)) goto failed;
  r->grad_ms = now_ms() - t0;
  r->rss_mb = peak_rss_mb();
  t0 = now_ms();
  if (!run(s, una_sprintf("(grad f%s) %s\n", wrt, args), &out)) goto failed;
  r->eval_ms = now_ms() - t0;
  /* the first numbers printed */
  char *p = out;
  for (int k = 0; k < 4 && *p; k++) {
    while (*p && !(*p == '-' || (*p >= '0' && *p <= '9'))) p++;
    r->value[k] = strtod(p, &p);
  }
  return NULL;
failed:
  fflush(s->err);
  snprintf(r->error, sizeof r->error, "%s", err ? err : "failed");
  for (char *q = r->error; *q; q++)
    if (*q == '\n' || *q == '|') *q = ' ';
  return NULL;
}

static Result run_child(const char *family, int n) {
  Result r;
  memset(&r, 0, sizeof r);
  snprintf(r.family, sizeof r.family, "%s", family);
  r.n = n;
  int fd[2];
  if (pipe(fd) != 0) {
    snprintf(r.error, sizeof r.error, "pipe failed");
    return r;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    Job job = {&r};
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_SIZE);
    if (pthread_create(&th, &attr, measure, &job) == 0) pthread_join(th, NULL);
    else snprintf(r.error, sizeof r.error, "cannot start a thread");
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

/* ---- the table ---- */

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

int main(int argc, char **argv) {
  GC_INIT();
  GC_set_warn_proc(GC_ignore_warn_proc);
  static const char *const dflt[] = {"chain", "20",   "chain", "40",   "chain", "100", "ifs",  "300",
                                     "ifs",   "1000", "ifs",   "6000", "lstm",  "128", "loop", "128"};
  const char *const *spec = dflt;
  int nspec = (int)(sizeof dflt / sizeof dflt[0]);
  if (argc > 1) {
    if ((argc - 1) % 2) {
      fprintf(stderr, "grad_shapes: expected FAMILY SIZE pairs (chain, ifs, lstm, loop)\n");
      return 2;
    }
    spec = (const char *const *)argv + 1;
    nspec = argc - 1;
  }
  int nres = nspec / 2, failed = 0;
  Result *res = calloc((size_t)nres, sizeof *res);
  for (int i = 0; i < nres; i++) {
    const char *fam = spec[2 * i];
    int n = atoi(spec[2 * i + 1]);
    if (n < 1 || !(strcmp(fam, "chain") == 0 || strcmp(fam, "ifs") == 0 || strcmp(fam, "lstm") == 0 ||
                   strcmp(fam, "loop") == 0)) {
      fprintf(stderr, "grad_shapes: unknown shape '%s %s'\n", fam, spec[2 * i + 1]);
      return 2;
    }
    res[i] = run_child(fam, n);
  }
  printf("| shape | size | :grad ms | x per size ratio | peak RSS MB | evaluate gradient ms | check |\n");
  printf("|---|---:|---:|---:|---:|---:|---|\n");
  for (int i = 0; i < nres; i++) {
    Result *r = &res[i];
    if (r->error[0]) {
      printf("| %s | %d | error: %s |\n", r->family, r->n, r->error);
      failed = 1;
      continue;
    }
    char check[96] = "";
    if (strcmp(r->family, "chain") == 0) {
      double want = ldexp(0.5 * cos(0.5) + sin(0.5), r->n);
      snprintf(check, sizeof check, "%.17g (relative error %.1g)", r->value[0], rel(r->value[0], want));
      if (!(rel(r->value[0], want) <= 1e-12)) failed = 1;
    } else if (strcmp(r->family, "ifs") == 0) {
      snprintf(check, sizeof check, "%.17g (want -1)", r->value[0]);
      if (r->value[0] != -1) failed = 1;
    } else if (strcmp(r->family, "loop") == 0) {
      for (int j = 0; j < nres; j++)
        if (strcmp(res[j].family, "lstm") == 0 && res[j].n == r->n && !res[j].error[0]) {
          double d = 0;
          for (int k = 0; k < 4; k++) d = fmax(d, rel(r->value[k], res[j].value[k]));
          snprintf(check, sizeof check, "agrees with lstm %d to %.1g", r->n, d);
          if (!(d <= 1e-9)) failed = 1;
        }
    }
    char x[32] = "-";
    for (int j = i - 1; j >= 0; j--)
      if (strcmp(res[j].family, r->family) == 0 && !res[j].error[0]) {
        snprintf(x, sizeof x, "%.2f / %.2f", r->grad_ms / res[j].grad_ms, (double)r->n / res[j].n);
        break;
      }
    printf("| %s | %d | %.1f | %s | %.0f | %.1f | %s |\n", r->family, r->n, r->grad_ms, x, r->rss_mb, r->eval_ms,
           check);
  }
  return failed;
}
