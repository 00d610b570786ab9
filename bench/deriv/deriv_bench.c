/* deriv_bench.c: Una's times for the derivative operators (bench/deriv/
   README.md): for each program at n = 10^6, the primal, grad, jvp, vjp,
   value_and_grad and the Hessian-vector product jvp (grad f), each as a session runs an
   expression item (check, deriv_expand, opt_optimize_program, then
   cpu_call), timed as the median of REPS calls after warm-up calls, the
   heap collected before each. Prints JSON lines, one per measurement:
     {"tool": "una", "program": P, "op": OP, "ms": MS, "sum": S}
   S is the sum of the reals of the result (run.sh compares it with the
   peers'). The inputs are Una global lets built from the formulas of
   peers_deriv.py (u(i), v(i) of bench/cpu/c_grads.c).

   deriv_bench [REPS] */
#include <pthread.h>

#include "../bench_util.h"
#include "../../backend/eval.h"
#include "../../derive/derive.h"
#include "../../frontend/check.h"
#include "../../frontend/parser.h"
#include "../../frontend/repl/session.h"
#include "../../optimizer/program.h"

#define MAX_REPS 41
#define STACK_SIZE ((size_t)1 << 30)

/* u(i) and v(i) of c_grads.c, in Una (exact: the products stay below 2^53). */
#define U(i) "((" i " * 7919 - 10007 * floor (" i " * 7919 / 10007)) / 10007)"
#define V(i) "((" i " * 104729 + 12345 - 10009 * floor ((" i " * 104729 + 12345) / 10009)) / 10009)"

static const char *const setup =
    "let N = 1000000\n"
    "let X = map (i. " U("i") " - 0.5) (iota N)\n"
    "let T = map (i. " V("i") " - 0.5) (iota N)\n"
    "let M = 1000\n"
    "let W = map (r. map (c. (" U("(r * M + c)") " - 0.5) * 0.1) (iota M)) (iota M)\n"
    "let DW = map (r. map (c. " V("(r * M + c)") " - 0.5) (iota M)) (iota M)\n"
    "let XS = map (i. " V("i") ") (iota M)\n"
    "def lse (x: [R]) : R = logsumexp x\n"
    "def rosen (x: [R]) : R = sum (map2 (a, b. 100 * (b - a * a) ^ 2 + (1 - a) ^ 2) (shift1R x) (shift1L x))\n"
    "def mlp (w: [[R]]) (x: [R]) : R = sum (map (z. tanh z * tanh z) (matvec w x))\n"
    "def sm (x: [R]) : [R] = softmax x\n";

typedef struct Op {
  const char *program, *op, *expr;
} Op;

static const Op ops[] = {
    {"logsumexp", "primal", "lse X"},
    {"logsumexp", "grad", "grad lse X"},
    {"logsumexp", "jvp", "jvp lse X T"},
    {"logsumexp", "hvp", "jvp (grad lse) X T"},
    {"logsumexp", "value_and_grad", "value_and_grad lse X"},
    {"rosenbrock", "primal", "rosen X"},
    {"rosenbrock", "grad", "grad rosen X"},
    {"rosenbrock", "jvp", "jvp rosen X T"},
    {"rosenbrock", "hvp", "jvp (grad rosen) X T"},
    {"mlp", "primal", "mlp W XS"},
    {"mlp", "grad", "(grad mlp wrt w) W XS"},
    {"mlp", "jvp", "(jvp mlp wrt w) W XS DW"},
    {"mlp", "hvp", "(jvp (grad mlp wrt w) wrt w) W XS DW"},
    {"mlp", "value_and_grad", "(value_and_grad mlp wrt w) W XS"},
    {"softmax", "primal", "sm X"},
    {"softmax", "jvp", "jvp sm X T"},
    {"softmax", "vjp", "vjp sm X T"},
};

static double sum_reals(Value v) {
  switch (v.kind) {
  case V_REAL: return v.u.r;
  case V_ARRAY: {
    double s = 0;
    for (size_t i = 0; i < v.u.a->len; i++) s += sum_reals(val_array_get(v.u.a, i));
    return s;
  }
  case V_TUPLE: {
    double s = 0;
    for (int i = 0; i < v.u.t->n; i++) s += sum_reals(v.u.t->items[i]);
    return s;
  }
  default: return 0;
  }
}

static int reps = 11;

static void measure(const Op *op, Session *s) {
  ParseResult pr = fe_parse_program("<bench>", op->expr, strlen(op->expr));
  if (pr.nerrors) fe_raise(pr.errors[0]);
  OptOptions oo = {0};
  oo.enabled = true;
  DerivOpt ro = {opt_derived, &oo};
  Def *d = opt_optimize_program(deriv_expand(fe_check_expr(s->env, pr.items[0]->body), &ro), &oo);
  Value v = cpu_call(d, NULL);
  for (int w = 0; w < 3; w++) {
    v = val_real(0);
    GC_gcollect();
    v = cpu_call(d, NULL);
  }
  double t[MAX_REPS];
  for (int r = 0; r < reps; r++) {
    v = val_real(0);
    GC_gcollect();
    double t0 = now_ms();
    v = cpu_call(d, NULL);
    t[r] = now_ms() - t0;
  }
  printf("{\"tool\": \"una\", \"program\": \"%s\", \"op\": \"%s\", \"ms\": %.4f, \"sum\": %.17g}\n", op->program,
         op->op, median(t, reps), sum_reals(v));
  fflush(stdout);
}

static void *run(void *arg) {
  (void)arg;
  char base;
  fe_stack_init(&base, STACK_SIZE - ((size_t)1 << 20));
  FeTry t;
  if (!fe_try(&t)) {
    fprintf(stderr, "deriv_bench: %s\n", fe_error_text(t.err));
    exit(1);
  }
  Session *s = fe_session_new();
  if (!fe_session_load_prelude(s)) fe_error(fe_nospan, "the prelude failed to load");
  if (!fe_session_run_text(s, "<bench>", setup, strlen(setup), true))
    fe_error(fe_nospan, "the setup failed (the error is on stderr)");
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) measure(&ops[i], s);
  fe_untry(&t);
  return NULL;
}

int main(int argc, char **argv) {
  GC_INIT();
  una_gc_reserve();
  if (argc > 1) reps = atoi(argv[1]);
  if (reps < 1 || reps > MAX_REPS) reps = 11;
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, STACK_SIZE);
  if (pthread_create(&th, &attr, run, NULL) != 0) return 1;
  pthread_join(th, NULL);
  return 0;
}
