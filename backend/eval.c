/* eval.c: the tree evaluator for checked and target terms: scalars, let,
   if, tuples, calls, globals, closures and their application here; array
   builtins in array_ops.c; a chain of lets of independent maps and
   reduces over the same arrays in one pass (siblings.c).

   cpu_eval's own C frame is kept small (buffers live in NOINLINE helpers)
   and applications in tail position run in its loop, because the AD
   pipeline's continuations nest as deep as the program is long.

   While the cost meter runs (cost_meter.h), every node is counted as it is
   evaluated; when it is off that costs one predictable branch per node. */
#include "eval.h"
#include "array_ops.h"
#include "cost_meter.h"
#include "scalar.h"
#include "siblings.h"
#include "plan/plan.h"

/* Frames of up to this many slots live on the C stack; tuples and argument
   lists of up to SMALL_ARGS items are gathered there (kept small: those
   helpers stay on the C stack while their items are evaluated). */
enum { SMALL_FRAME = 16, SMALL_ARGS = 4 };

#define NOINLINE __attribute__((noinline))

static NOINLINE Value eval_prim(const Exec *ex, const Term *t, Value *frame) {
  const PrimInfo *pi = &fe_prims[t->prim];
  switch (pi->cls) {
  case P_SCALAR1: return val_real(cpu_scalar1(t->prim, cpu_eval(ex, t->kids[0], frame).u.r));
  case P_SCALAR2: {
    double a = cpu_eval(ex, t->kids[0], frame).u.r;
    double b = cpu_eval(ex, t->kids[1], frame).u.r;
    return val_real(cpu_scalar2(t->prim, a, b));
  }
  case P_CMP: {
    Value a = cpu_eval(ex, t->kids[0], frame);
    Value b = cpu_eval(ex, t->kids[1], frame);
    if (a.kind == V_BOOL) {
      ASSERT(t->prim == PRIM_EQ || t->prim == PRIM_NE);
      return val_bool((a.u.b == b.u.b) == (t->prim == PRIM_EQ));
    }
    return val_bool(cpu_compare(t->prim, a.u.r, b.u.r));
  }
  case P_LOGIC: {
    bool a = cpu_eval(ex, t->kids[0], frame).u.b;
    if (t->prim == PRIM_AND ? !a : a) return val_bool(a);
    return val_bool(cpu_eval(ex, t->kids[1], frame).u.b);
  }
  case P_NOT: return val_bool(!cpu_eval(ex, t->kids[0], frame).u.b);
  case P_ARRAY: return ex->array_prim(ex, t, frame);
  }
  UNREACHABLE();
}

/* The sibling group at the let t (siblings.h): the rest of the chain to
   evaluate (t itself when there is no group), or NULL when the group took
   the chain's closing tuple, whose value is then left in t's slot (dead
   by then). Kept out of cpu_eval so that its frame holds no stale Value
   that the collector would take for a live array. */
static NOINLINE const Term *eval_siblings(const Exec *ex, const Term *t, Value *frame) {
  const Term *rest = t;
  Value r;
  if (!cpu_siblings(ex, &rest, frame, &r)) return rest;
  frame[t->sym->slot] = r;
  return NULL;
}

static Value eval_tuple(const Exec *ex, const Term *t, Value *frame);

/* The tuple t, its items that are siblings computed in one pass when
   their group can run (else as usual). */
static NOINLINE Value eval_tuple_group(const Exec *ex, const Term *t, Value *frame) {
  const Term *rest = t;
  Value r;
  if (cpu_siblings(ex, &rest, frame, &r)) return r;
  return eval_tuple(ex, t, frame);
}

/* cpu_call_in(ex, d, args) with a note for the call t on any error that
   leaves it (Exec.trace_calls). */
static NOINLINE Value call_traced(const Exec *ex, const Term *t, Value *args) {
  FeTry tr;
  if (fe_try(&tr)) {
    Value r = cpu_call_in(ex, t->def, args);
    fe_untry(&tr);
    return r;
  }
  if (una_is_out_of_memory(tr.err) || !t->span.file) fe_raise(tr.err);
  tr.err.msg = una_sprintf("%s%s", tr.err.msg, fe_note(t->span, "called from here"));
  fe_raise(tr.err);
}

static NOINLINE Value eval_call(const Exec *ex, const Term *t, Value *frame) {
  Value small[SMALL_ARGS];
  Value *args = t->nkids <= SMALL_ARGS ? small : NEW_ARRAY(Value, t->nkids);
  for (int i = 0; i < t->nkids; i++) args[i] = cpu_eval(ex, t->kids[i], frame);
  if (ex->trace_calls) return call_traced(ex, t, args);
  return cpu_call_in(ex, t->def, args);
}

static NOINLINE Value eval_tuple(const Exec *ex, const Term *t, Value *frame) {
  Value small[SMALL_ARGS];
  Value *items = t->nkids <= SMALL_ARGS ? small : NEW_ARRAY(Value, t->nkids);
  for (int i = 0; i < t->nkids; i++) items[i] = cpu_eval(ex, t->kids[i], frame);
  return val_tuple(t->nkids, items);
}

static NOINLINE Value eval_array_literal(const Exec *ex, const Term *t, Value *frame) {
  Array *a = val_new_array_of(t->type->elem, (size_t)t->nkids, t->span);
  for (int i = 0; i < t->nkids; i++) val_array_set(a, (size_t)i, cpu_eval(ex, t->kids[i], frame));
  return val_array(a);
}

/* Evaluates the arguments of the application t (kids[1..]) in frame, then
   stores them in the parameter slots of the closure's frame; all are
   evaluated before any is stored. Returns the closure's LAM term and sets
   *cframe to its frame. */
static NOINLINE const Term *bind_app(const Exec *ex, const Term *t, Value *frame, Value **cframe) {
  Value f = cpu_eval(ex, t->kids[0], frame);
  ASSERT(f.kind == V_CLOSURE);
  const Term *lam = f.u.c->lam;
  Value *cf = f.u.c->frame;
  int n = t->nkids - 1;
  ASSERT(lam->nsyms == n);
  if (n == 1) {
    Value a = cpu_eval(ex, t->kids[1], frame);
    cf[lam->syms[0]->slot] = a;
  } else if (n > 1) {
    Value small[SMALL_ARGS];
    Value *args = n <= SMALL_ARGS ? small : NEW_ARRAY(Value, n);
    for (int i = 0; i < n; i++) args[i] = cpu_eval(ex, t->kids[i + 1], frame);
    for (int i = 0; i < n; i++) cf[lam->syms[i]->slot] = args[i];
  }
  *cframe = cf;
  return lam;
}

/* The arrays of the lets evaluated in one call of cpu_eval whose notes
   say release (plan/release.c): dead once the call has its value. */
typedef struct Released {
  Array *a;
  struct Released *next;
} Released;

static NOINLINE void keep_released(Released **rel, Value v) {
  if (v.kind != V_ARRAY) return;
  Array *a = v.u.a;
  if (a->len < 64 || !val_whole_buffer(a)) return; /* a small array: not worth a node */
  Released *r = NEW(Released);
  r->a = a;
  r->next = *rel;
  *rel = r;
}

static NOINLINE void give_back(Released *rel) {
  for (; rel; rel = rel->next) val_give_back(rel->a);
}

static inline __attribute__((always_inline)) Value eval_in(const Exec *ex, const Term *t, Value *frame,
                                                           Released **rel);

Value cpu_eval(const Exec *ex, const Term *t, Value *frame) {
  Released *rel = NULL;
  Value v = eval_in(ex, t, frame, &rel);
  if (__builtin_expect(rel != NULL, 0)) give_back(rel);
  return v;
}

static inline __attribute__((always_inline)) Value eval_in(const Exec *ex, const Term *t, Value *frame,
                                                           Released **rel) {
  fe_stack_check(t->span);
  for (;;) {
    if (__builtin_expect(ex->meter != NULL, 0)) cpu_meter_node(ex->meter, t);
    switch (t->kind) {
    case T_NUM: return val_real(t->num);
    case T_BOOL: return val_bool(t->b);
    case T_VAR: return frame[t->sym->slot];
    case T_GLOBAL:
      ASSERT(t->global->value);
      return *t->global->value;
    case T_LET:
      if (t->note && t->note->deferred) {
        t = t->kids[1]; /* a matrix product's, computed by it (blas.h) */
        continue;
      }
      if (t->note && t->note->group && !ex->gpu) {
        const Term *rest = eval_siblings(ex, t, frame);
        if (rest != t && ex->kernel)
          for (const Term *l = t; l && l != rest && l->kind == T_LET; l = l->kids[1])
            if (l->note && l->note->release) keep_released(rel, frame[l->sym->slot]);
        if (!rest) return frame[t->sym->slot]; /* the chain's value, left there */
        if (rest != t) {
          t = rest;
          continue;
        }
      }
      frame[t->sym->slot] = cpu_eval(ex, t->kids[0], frame);
      if (t->note && t->note->release && ex->kernel && !ex->gpu) keep_released(rel, frame[t->sym->slot]);
      t = t->kids[1];
      continue;
    case T_LETTUP: {
      Value v = cpu_eval(ex, t->kids[0], frame);
      ASSERT(v.kind == V_TUPLE && v.u.t->n == t->nsyms);
      for (int i = 0; i < t->nsyms; i++) frame[t->syms[i]->slot] = v.u.t->items[i];
      t = t->kids[1];
      continue;
    }
    case T_IF:
      t = cpu_eval(ex, t->kids[0], frame).u.b ? t->kids[1] : t->kids[2];
      continue;
    case T_TUPLE:
      if (t->note && t->note->group && !ex->gpu) return eval_tuple_group(ex, t, frame);
      return eval_tuple(ex, t, frame);
    case T_PROJ: {
      Value v = cpu_eval(ex, t->kids[0], frame);
      ASSERT(v.kind == V_TUPLE && t->index >= 0 && t->index < v.u.t->n);
      return v.u.t->items[t->index];
    }
    case T_ARRAY: return eval_array_literal(ex, t, frame);
    case T_PRIM: return eval_prim(ex, t, frame);
    case T_CALL: return eval_call(ex, t, frame);
    case T_GRAD: /* deriv_expand replaces every grad before evaluation */
      fe_error(t->span, "internal: grad reached the evaluator unexpanded (deriv_expand comes first)");
    case T_LAM: return val_closure(t, frame); /* a lambda as a value */
    case T_APP: {
      /* A tail call: the closure's body replaces t, its frame replaces frame. */
      const Term *lam = bind_app(ex, t, frame, &frame);
      t = lam->kids[0];
      continue;
    }
    case T_STR:
    case T_NAME:
    case T_APPLY:
    case T_OPREF:
    case T_LOOP:
    case T_ASCRIBE:
    case T_GRADREF:
    case T__COUNT: break;
    }
    una_internal_error(__FILE__, __LINE__,
                       una_sprintf("cannot evaluate a '%s' term", fe_term_kind_names[t->kind]));
  }
}

const Exec cpu_exec_default = {
    .eval = cpu_eval, .array_prim = cpu_array_prim, .monoid = true, .kernel = true, .meter = NULL, .gpu = NULL, .threads = 0};

Value cpu_call(const Def *d, const Value *args) { return cpu_call_in(&cpu_exec_default, d, args); }

Value cpu_call_in(const Exec *ex, const Def *d, const Value *args) {
  Value small[SMALL_FRAME];
  Value *frame;
  if (d->nslots <= SMALL_FRAME) {
    memset(small, 0, sizeof small);
    frame = small;
  } else {
    frame = NEW_ARRAY(Value, d->nslots);
  }
  for (int i = 0; i < d->nparams; i++) frame[d->params[i]->slot] = args[i];
  Value v = cpu_eval(ex, plan_runnable(d)->body, frame);
  fe_poll_interrupt(d->span); /* a kernel's fault (error.h) before v is used */
  return v;
}
