/* eval.c: the tree evaluator for checked terms: scalars, let, if, tuples,
   calls and globals here; array builtins in array_ops.c. */
#include "eval.h"
#include "array_ops.h"
#include "scalar.h"

/* Frames of up to this many slots live on the C stack. */
enum { SMALL_FRAME = 16 };

static Value eval_prim(const Term *t, Value *frame) {
  const PrimInfo *pi = &fe_prims[t->prim];
  switch (pi->cls) {
  case P_SCALAR1: return val_real(cpu_scalar1(t->prim, cpu_eval(t->kids[0], frame).u.r));
  case P_SCALAR2: {
    double a = cpu_eval(t->kids[0], frame).u.r;
    double b = cpu_eval(t->kids[1], frame).u.r;
    return val_real(cpu_scalar2(t->prim, a, b));
  }
  case P_CMP: {
    Value a = cpu_eval(t->kids[0], frame);
    Value b = cpu_eval(t->kids[1], frame);
    if (a.kind == V_BOOL) {
      ASSERT(t->prim == PRIM_EQ || t->prim == PRIM_NE);
      return val_bool((a.u.b == b.u.b) == (t->prim == PRIM_EQ));
    }
    return val_bool(cpu_compare(t->prim, a.u.r, b.u.r));
  }
  case P_LOGIC: {
    bool a = cpu_eval(t->kids[0], frame).u.b;
    if (t->prim == PRIM_AND ? !a : a) return val_bool(a);
    return val_bool(cpu_eval(t->kids[1], frame).u.b);
  }
  case P_NOT: return val_bool(!cpu_eval(t->kids[0], frame).u.b);
  case P_ARRAY: return cpu_array_prim(t, frame);
  }
  UNREACHABLE();
}

static Value eval_call(const Term *t, Value *frame) {
  Value small[SMALL_FRAME];
  Value *args = t->nkids <= SMALL_FRAME ? small : NEW_ARRAY(Value, t->nkids);
  for (int i = 0; i < t->nkids; i++) args[i] = cpu_eval(t->kids[i], frame);
  return cpu_call(t->def, args);
}

Value cpu_eval(const Term *t, Value *frame) {
  fe_stack_check(t->span);
  for (;;) {
    switch (t->kind) {
    case T_NUM: return val_real(t->num);
    case T_BOOL: return val_bool(t->b);
    case T_VAR: return frame[t->sym->slot];
    case T_GLOBAL:
      ASSERT(t->global->value);
      return *t->global->value;
    case T_LET:
      frame[t->sym->slot] = cpu_eval(t->kids[0], frame);
      t = t->kids[1];
      continue;
    case T_LETTUP: {
      Value v = cpu_eval(t->kids[0], frame);
      ASSERT(v.kind == V_TUPLE && v.u.t->n == t->nsyms);
      for (int i = 0; i < t->nsyms; i++) frame[t->syms[i]->slot] = v.u.t->items[i];
      t = t->kids[1];
      continue;
    }
    case T_IF:
      t = cpu_eval(t->kids[0], frame).u.b ? t->kids[1] : t->kids[2];
      continue;
    case T_TUPLE: {
      Value small[SMALL_FRAME];
      Value *items = t->nkids <= SMALL_FRAME ? small : NEW_ARRAY(Value, t->nkids);
      for (int i = 0; i < t->nkids; i++) items[i] = cpu_eval(t->kids[i], frame);
      return val_tuple(t->nkids, items);
    }
    case T_PROJ: {
      Value v = cpu_eval(t->kids[0], frame);
      ASSERT(v.kind == V_TUPLE && t->index >= 0 && t->index < v.u.t->n);
      return v.u.t->items[t->index];
    }
    case T_ARRAY: {
      Array *a = val_new_array_of(t->type->elem, (size_t)t->nkids, t->span);
      for (int i = 0; i < t->nkids; i++) val_array_set(a, (size_t)i, cpu_eval(t->kids[i], frame));
      return val_array(a);
    }
    case T_PRIM: return eval_prim(t, frame);
    case T_CALL: return eval_call(t, frame);
    case T_GRAD: fe_error(t->span, "grad: gradient evaluation is not available in this build yet");
    case T_STR:
    case T_LAM:
    case T_NAME:
    case T_APPLY:
    case T_OPREF:
    case T_GRADREF:
    case T__COUNT: break;
    }
    una_internal_error(__FILE__, __LINE__,
                       una_sprintf("cannot evaluate a '%s' term", fe_term_kind_names[t->kind]));
  }
}

Value cpu_call(const Def *d, const Value *args) {
  Value small[SMALL_FRAME];
  Value *frame;
  if (d->nslots <= SMALL_FRAME) {
    memset(small, 0, sizeof small);
    frame = small;
  } else {
    frame = NEW_ARRAY(Value, d->nslots);
  }
  for (int i = 0; i < d->nparams; i++) frame[d->params[i]->slot] = args[i];
  return cpu_eval(d->body, frame);
}
