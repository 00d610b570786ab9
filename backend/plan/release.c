/* release.c: the lets whose array the engine gives back to the allocator
   once their body has its value (plan/note.h: release).

   A map's result is a fresh buffer of reals. When every read of the
   variable bound to it only consumes its elements (an array argument of
   a map, map2 or map3 that does not write over it, of a reduce, fold,
   scan, concat, zip or save; `length x`; `x[i]`), the let's body cannot
   return it or a view of it, nor keep it in a tuple, a loop's state or a
   closure, so it is dead once the body is evaluated. A view of it
   (shift1L, shift1R, a slice) that is itself consumed is such a read. Given back then, its
   memory is what the next map of that size gets: in a loop (GradBench's
   ode, a state and four stages a step), each step reuses the buffers the
   step before wrote, still in the cache, where new memory would be cold
   (a write to it misses, and the kernel clears its pages).

   A read inside a lambda counts only where the lambda is an argument of
   an array builtin (run during the builtin's evaluation, within the
   let's body); a lambda anywhere else (a value, an applied closure) may
   outlive the body, and makes every read in it keep the array. One walk
   over the body marks the variables read otherwise, so this is linear in
   the size of the program.

   A loop's state is given back in the same way, each state once the
   next is made (not the first: the loop's caller may hold it), when
   the body makes each state anew by a map and reads the last one only by
   consuming it. */
#include "plan.h"

#include "../../frontend/ir/ptrmap.h"

static char mark;

static bool real_array(const Type *t) { return t && t->kind == TY_ARRAY && t->elem->kind == TY_REAL; }

/* Whether kid i of the builtin p only consumes the elements of its array. */
static bool consumes(const Term *p, int i) {
  if (p->kind != T_PRIM) return false;
  switch (p->prim) {
  case PRIM_MAP:
  case PRIM_MAP2:
  case PRIM_MAP3: return i >= 1 && !(p->note && p->note->over == i);
  case PRIM_REDUCE:
  case PRIM_FOLDL:
  case PRIM_SCANL:
  case PRIM_SCANR: return i == 2;
  case PRIM_LENGTH:
  case PRIM_CONCAT:
  case PRIM_ZIP: return true;
  case PRIM_SAVE: return i == 1;
  case PRIM_INDEX: return i == 0 && p->type->kind == TY_REAL;
  default: return false;
  }
}

/* Whether the builtin p makes a view of its kid 0 (no copy): the view's
   reader then reads the array. */
static bool is_view(const Term *p) {
  return p->kind == T_PRIM && (p->prim == PRIM_SHIFT1L || p->prim == PRIM_SHIFT1R || p->prim == PRIM_SLICE);
}

/* Marks in kept the variables of [R] that t reads other than by consuming
   them: consumed says whether t's value is consumed by its reader (a
   view of a variable consumed is a read that consumes it: `concat [1]
   (shift1R y)`), escaping that t is inside a lambda that may outlive its
   evaluation. */
static void scan(PtrMap *kept, const Term *t, bool consumed, bool escaping, bool array_arg) {
  for (;;) {
    fe_stack_check(t->span);
    if (t->kind == T_VAR && real_array(t->type) && (escaping || !consumed)) ptrmap_put(kept, t->sym, &mark);
    if (t->kind == T_LAM && !array_arg) escaping = true;
    if (t->nkids == 0) return;
    bool builtin = t->kind == T_PRIM && fe_prims[t->prim].cls == P_ARRAY;
    for (int k = 0; k + 1 < t->nkids; k++)
      scan(kept, t->kids[k], is_view(t) ? k == 0 && consumed : consumes(t, k), escaping, builtin);
    int k = t->nkids - 1;
    consumed = is_view(t) ? k == 0 && consumed : consumes(t, k);
    array_arg = builtin;
    t = t->kids[k]; /* the last child in a loop: let chains are long */
  }
}

static void set_release(Term *t) {
  if (!t->note) t->note = NEW(PlanNote);
  ((PlanNote *)t->note)->release = true;
}

static bool fresh_map(const Term *t) {
  return t->kind == T_PRIM && (t->prim == PRIM_MAP || t->prim == PRIM_MAP2 || t->prim == PRIM_MAP3);
}

/* Whether the loop t's state is an [R] that each iteration's body makes
   anew (its value a map, through its lets) and reads only by consuming
   it (kept does not hold the body's state parameter, nor a while loop's
   condition's): each state but the first is dead once the next one is
   made. */
static bool state_released(const PtrMap *kept, const Term *t) {
  const Term *lam = t->kids[0], *x = lam->kids[0];
  if (!real_array(t->type) || ptrmap_get(kept, lam->syms[0])) return false;
  if (t->note && t->note->state_map) return false; /* each state written over the last */
  if (t->prim == PRIM_LOOP_WHILE && ptrmap_get(kept, t->kids[2]->syms[0])) return false;
  while (x->kind == T_LET || x->kind == T_LETTUP) x = x->kids[1];
  return fresh_map(x);
}

/* Marks the lets of fresh [R] maps and the loops whose states kept does
   not hold. */
static void mark_lets(const PtrMap *kept, Term *t) {
  for (;;) {
    if (t->kind == T_LET && real_array(t->sym->type) && !ptrmap_get(kept, t->sym) && fresh_map(t->kids[0]))
      set_release(t);
    if (t->kind == T_PRIM && (t->prim == PRIM_LOOP_FOR || t->prim == PRIM_LOOP_WHILE) && state_released(kept, t))
      set_release(t);
    if (t->nkids == 0) return;
    for (int k = 0; k + 1 < t->nkids; k++) mark_lets(kept, t->kids[k]);
    t = t->kids[t->nkids - 1];
  }
}

void plan_releases(Term *body) {
  PtrMap kept = {0};
  scan(&kept, body, false, false, false);
  mark_lets(&kept, body);
}
