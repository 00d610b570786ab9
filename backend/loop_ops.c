/* loop_ops.c: loops on the CPU. `loop x = e0 for i < n do e` is
   LOOP_FOR (x, i. e) e0 n: n evaluated once, checked (an integer >= 0,
   else a run-time error at the 'for'), then the body applied n times;
   `loop x = e0 while c do e` is LOOP_WHILE (x. e) e0 (x. c). The body's
   parameters live in their own frame slots, as a combinator's do. Ctrl-C
   interrupts either loop between iterations. */
#include "array_ops.h"
#include "array_int.h"
#include "cost_meter.h"

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
  int xs = lam->syms[0]->slot, is = lam->syms[1]->slot;
  for (double i = 0; i < n; i++) {
    fe_poll_interrupt(t->span);
    frame[xs] = x;
    frame[is] = val_real(i);
    x = ex->eval(ex, lam->kids[0], frame);
  }
  return x;
}

static Value op_while(const Exec *ex, const Term *t, Value *frame) {
  const Term *body = t->kids[0], *cond = t->kids[2];
  Value x = ex->eval(ex, t->kids[1], frame);
  if (ex->meter) cpu_meter_array(ex->meter, t, 1);
  for (;;) {
    fe_poll_interrupt(t->span);
    frame[cond->syms[0]->slot] = x;
    if (!ex->eval(ex, cond->kids[0], frame).u.b) return x;
    frame[body->syms[0]->slot] = x;
    x = ex->eval(ex, body->kids[0], frame);
  }
}

Value cpu_loop_prim(const Exec *ex, const Term *t, Value *frame) {
  return t->prim == PRIM_LOOP_FOR ? op_for(ex, t, frame) : op_while(ex, t, frame);
}
