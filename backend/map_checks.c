/* map_checks.c: a map or map2 whose function only checks the lengths of
   a map2 of rows,

     map (row. let c = map2 (p, q. 0) row v in 0) M
     map2 (row, b. let c = map2 (p, q. 0) row v in 0) M B

   (the errors of a matrix-vector product that a dead let keeps,
   optimizer/raises.c; either operand may be a parameter or an array bound
   outside the function; the inner map2's function a constant or never run:
   the plan's check of a dead let). Each element's check compares two
   lengths, in the elements' order, with map2's own error (none at all
   when the rows are known to be of one length: value.h's rows_flat);
   nothing else is evaluated, and every element is the function's
   constant. */
#include "array_int.h"

#include "plan/note.h"
#include "plan/plan.h"
#include "../frontend/ir/common.h"

/* True when the map2 m's function is never run: a constant, or the plan
   made m a dead let's check whose function cannot raise. */
static bool never_run(const Term *m) {
  if (m->kids[0]->kids[0]->kind == T_NUM) return true;
  const PlanKernel *pk = m->note ? m->note->kernel : NULL;
  return pk && pk->kind == PK_CHECK && !pk->check;
}

/* The array that the map2 operand o stands for at element i: a's or b's
   element when o is the function's parameter k (0 or 1), else the array
   fixed (evaluated once). */
typedef struct {
  int param;
  const Array *fixed;
} Operand;

static bool operand(const Exec *ex, const Term *lam, const Term *o, Value *frame, Operand *r) {
  if (o->kind != T_VAR) return false;
  r->param = -1;
  r->fixed = NULL;
  for (int k = 0; k < lam->nsyms; k++)
    if (lam->syms[k] == o->sym) r->param = k;
  if (r->param >= 0) return true;
  Value v = ex->eval(ex, o, frame);
  if (v.kind != V_ARRAY) return false;
  r->fixed = v.u.a;
  return true;
}

/* The length of o's arrays at every element when it is known without
   looking at them: a fixed array's, or the rows' of a matrix whose rows
   are one buffer of rows of one length (value.h: rows_flat); -1 else. */
static long length_all(const Operand *o, const Array *a, const Array *b) {
  if (o->fixed) return (long)o->fixed->len;
  const Array *x = o->param == 0 ? a : b;
  return x->rows_flat && x->len > 0 ? (long)x->v[0].u.a->len : -1;
}

static size_t length_at(const Operand *o, const Array *a, const Array *b, size_t i) {
  if (o->fixed) return o->fixed->len;
  Value v = val_array_get(o->param == 0 ? (Array *)a : (Array *)b, i);
  return v.u.a->len;
}

bool cpu_map_checks_only(const Exec *ex, const Term *t, Value *frame, const Array *a, const Array *b, Array *out) {
  const Term *lam = t->kids[0], *body = lam->kids[0];
  if (ex->meter || body->kind != T_LET || body->kids[1]->kind != T_NUM) return false;
  const Term *m = body->kids[0];
  if (m->kind != T_PRIM || m->prim != PRIM_MAP2 || m->kids[0]->kind != T_LAM || !never_run(m)) return false;
  Operand u, v;
  if (!operand(ex, lam, m->kids[1], frame, &u) || !operand(ex, lam, m->kids[2], frame, &v)) return false;
  if (u.param < 0 && v.param < 0) return false; /* one check for all: left to the evaluator */
  if ((u.param == 0 || v.param == 0) && !a->boxed) return false;
  if ((u.param == 1 || v.param == 1) && (!b || !b->boxed)) return false;
  double k = body->kids[1]->num;
  long lu = length_all(&u, a, b), lv = length_all(&v, a, b);
  bool pass = m->b || (lu >= 0 && lu == lv); /* every check passes */
  for (size_t i = 0; i < a->len; i++) {
    if ((i & 4095) == 0) fe_poll_interrupt(t->span);
    if (!pass) cpu_check_map2_lengths(m, length_at(&u, a, b, i), length_at(&v, a, b, i));
    if (out->boxed) val_array_set(out, i, val_real(k));
    else out->r[i] = k;
  }
  return true;
}
