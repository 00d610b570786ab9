/* loop_ops.c: loops on the CPU. `loop x = e0 for i < n do e` is
   LOOP_FOR (x, i. e) e0 n: n evaluated once, checked (an integer >= 0,
   else a run-time error at the 'for'), then the body applied n times;
   `loop x = e0 while c do e` is LOOP_WHILE (x. e) e0 (x. c). The body's
   parameters live in their own frame slots, as a combinator's do. Ctrl-C
   interrupts either loop between iterations.

   A state of a few reals (an R or a tuple of Rs) whose body (and
   condition) compiled into step programs (kernel.h, decided by the plan)
   runs without the tree evaluator: the state lives in a small array of
   doubles and each iteration is one run of the step program. */
#include "array_ops.h"
#include "array_int.h"
#include "cost_meter.h"
#include "jit.h"
#include "plan/note.h"

enum { POLL = 4095 }; /* the compiled loops poll every POLL + 1 iterations */

/* The state's reals from the value x of type t, and back (array_int.h). */
static int put_reals(Value x, const Type *t, double *s) {
  if (t->kind == TY_REAL) {
    s[0] = x.u.r;
    return 1;
  }
  int o = 0;
  for (int i = 0; i < t->n; i++) o += put_reals(x.u.t->items[i], t->elems[i], s + o);
  return o;
}

static Value get_reals(const double *s, const Type *t, int *o) {
  if (t->kind == TY_REAL) return val_real(s[(*o)++]);
  Value items[CPU_MAX_STATE];
  for (int i = 0; i < t->n; i++) items[i] = get_reals(s, t->elems[i], o);
  return val_tuple(t->n, items);
}

void cpu_state_in(Value x, const Type *t, double *s) { put_reals(x, t, s); }

Value cpu_state_out(const double *s, const Type *t) {
  int o = 0;
  return get_reals(s, t, &o);
}

/* Binds the step program of the loop function lam, if the fast paths are
   on and it has one. */
static bool step_of(const Exec *ex, const Term *lam, Value *frame, CpuKernelRun *run) {
  if (!ex->kernel || ex->meter) return false;
  const CpuKernel *k = cpu_step_kernel_for(lam);
  return k && cpu_kernel_bind(ex, k, frame, run);
}

/* The compiled loops' interrupt poll (backend/jit.h): pt is the loop. */
static void poll_loop(const void *pt) { fe_poll_interrupt(((const Term *)pt)->span); }

/* A loop with step programs: the whole loop compiled to native code once
   it has run enough (backend/jit.h), else step by step. */
static Value for_compiled(const Term *t, CpuKernelRun *body, Value x, double n) {
  int w = cpu_state_width(t->type);
  double s[CPU_MAX_STATE + 1];
  cpu_state_in(x, t->type, s);
  CpuJitLoopFn fn = cpu_jit_loop(NULL, body->k, w, POLL, 0);
  if (fn) {
    fn(s, n, NULL, body->sregs, NULL, body, cpu_kernel_run_pc, poll_loop, t);
  } else {
    for (double i = 0; i < n; i++) {
      if (((long long)i & POLL) == 0) fe_poll_interrupt(t->span);
      s[w] = i;
      cpu_kernel_step(body, s, s);
    }
    cpu_jit_loop(NULL, body->k, w, POLL, n);
  }
  fe_poll_interrupt(t->span);
  return cpu_state_out(s, t->type);
}

/* The context of the loop t's body: with its state map (plan/note.h:
   state_map) in *own, or ex itself when it has none. */
static const Exec *owning(const Exec *ex, const Term *t, Exec *inner, CpuLoopOwn *own) {
  const Term *m = t->note ? t->note->state_map : NULL;
  if (!m || !ex->kernel || ex->meter || ex->gpu) {
    if (!ex->loop_own) return ex;
    *inner = *ex; /* an enclosing loop's state map is not this loop's */
    inner->loop_own = NULL;
    return inner;
  }
  *inner = *ex;
  *own = (CpuLoopOwn){m, NULL, NULL};
  inner->loop_own = own;
  return inner;
}

/* Before an iteration: the state x is owned when it is the state map's
   last result (the initial state never is). */
static void owned_state(const Exec *ex, Value x) {
  CpuLoopOwn *own = ex->loop_own;
  if (!own) return;
  own->owned = x.kind == V_ARRAY && x.u.a == own->fresh ? x.u.a : NULL;
  own->fresh = NULL;
}

/* A loop whose note says release (plan/release.c): the state x, made by
   the last iteration (not the loop's first state) and read by this one
   only to make next, is given back, unless next was written over it. */
static void drop_state(Value x, Value next) {
  if (x.kind == V_ARRAY && next.kind == V_ARRAY && x.u.a->r != next.u.a->r) val_give_back(x.u.a);
}

static Value op_for(const Exec *ex, const Term *t, Value *frame) {
  const Term *lam = t->kids[0];
  Value x = ex->eval(ex, t->kids[1], frame);
  double n = ex->eval(ex, t->kids[2], frame).u.r;
  if (!(n >= 0 && n == floor(n) && !isinf(n))) {
    char b[40];
    una_format_real(b, sizeof b, n);
    if (n != floor(n) || isinf(n)) fe_error(t->span, "loop count %s is not an integer", b);
    fe_error(t->span, "loop count %s is negative", b);
  }
  if (ex->meter) cpu_meter_array(ex->meter, t, 1);
  CpuKernelRun body;
  if (n > 0 && step_of(ex, lam, frame, &body)) return for_compiled(t, &body, x, n);
  int xs = lam->syms[0]->slot, is = lam->syms[1]->slot;
  Exec inner;
  CpuLoopOwn own;
  ex = owning(ex, t, &inner, &own);
  bool release = t->note && t->note->release && ex->kernel && !ex->gpu;
  for (double i = 0; i < n; i++) {
    fe_poll_interrupt(t->span);
    owned_state(ex, x);
    frame[xs] = x;
    frame[is] = val_real(i);
    Value next = ex->eval(ex, lam->kids[0], frame);
    if (release && i > 0) drop_state(x, next);
    x = next;
  }
  return x;
}

static Value while_compiled(const Term *t, CpuKernelRun *body, CpuKernelRun *cond, Value x) {
  int w = cpu_state_width(t->type);
  double s[CPU_MAX_STATE], c;
  cpu_state_in(x, t->type, s);
  CpuJitLoopFn fn = cpu_jit_loop(cond->k, body->k, w, POLL, 0);
  if (fn) {
    fn(s, 0, cond->sregs, body->sregs, cond, body, cpu_kernel_run_pc, poll_loop, t);
  } else {
    unsigned long long i = 0;
    for (;; i++) {
      if ((i & POLL) == 0) fe_poll_interrupt(t->span);
      cpu_kernel_step(cond, s, &c);
      if (c == 0) break;
      cpu_kernel_step(body, s, s);
    }
    cpu_jit_loop(cond->k, body->k, w, POLL, (double)i);
  }
  fe_poll_interrupt(t->span);
  return cpu_state_out(s, t->type);
}

static Value op_while(const Exec *ex, const Term *t, Value *frame) {
  const Term *body = t->kids[0], *cond = t->kids[2];
  Value x = ex->eval(ex, t->kids[1], frame);
  if (ex->meter) cpu_meter_array(ex->meter, t, 1);
  CpuKernelRun bk, ck;
  if (step_of(ex, body, frame, &bk) && step_of(ex, cond, frame, &ck)) return while_compiled(t, &bk, &ck, x);
  Exec inner;
  CpuLoopOwn own;
  const Exec *bx = owning(ex, t, &inner, &own);
  bool release = t->note && t->note->release && ex->kernel && !ex->gpu;
  for (bool first = true;; first = false) {
    fe_poll_interrupt(t->span);
    frame[cond->syms[0]->slot] = x;
    if (!ex->eval(ex, cond->kids[0], frame).u.b) return x;
    owned_state(bx, x);
    frame[body->syms[0]->slot] = x;
    Value next = bx->eval(bx, body->kids[0], frame);
    if (release && !first) drop_state(x, next);
    x = next;
  }
}

Value cpu_loop_prim(const Exec *ex, const Term *t, Value *frame) {
  return t->prim == PRIM_LOOP_FOR ? op_for(ex, t, frame) : op_while(ex, t, frame);
}
