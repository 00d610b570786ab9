/* cost_meter.c: the cost meter (cost_meter.h); the rules it implements are
   listed in optimizer/cost.h. */
#include "cost_meter.h"

static inline void count_in(CpuCost *c, uint64_t moves, uint64_t adds, uint64_t mults, uint64_t nlops) {
  c->moves += moves;
  c->adds += adds;
  c->mults += mults;
  c->nlops += nlops;
}
#define count(m, a, x, n) count_in(c, (m), (a), (x), (n))

/* The cost of a scalar, comparison or logic operator itself: its operands
   in and its result out, and one operation of its class (prims.def). */
static void count_prim(CpuCost *c, Prim p) {
  const PrimInfo *pi = &fe_prims[p];
  if (pi->cls == P_ARRAY) return; /* cpu_meter_array */
  uint64_t moves = (uint64_t)pi->arity + 1;
  switch (pi->cost) {
  case COST_MOVES: count(moves, 0, 0, 0); return;
  case COST_ADDS: count(moves, 1, 0, 0); return;
  case COST_MULTS: count(moves, 0, 1, 0); return;
  case COST_NLOPS: count(moves, 0, 0, 1); return;
  }
}

void cpu_meter_node(CpuCost *c, const Term *t) {
  switch (t->kind) {
  case T_NUM:
  case T_BOOL:
  case T_VAR:
  case T_GLOBAL:
  case T_LET:
  case T_PROJ:
  case T_IF:
  case T_LAM: count(1, 0, 0, 0); return;
  case T_LETTUP: count((uint64_t)t->nsyms, 0, 0, 0); return;
  case T_CALL: count((uint64_t)t->nkids, 0, 0, 0); return;
  case T_APP: count((uint64_t)(t->nkids - 1), 0, 0, 0); return;
  case T_PRIM: count_prim(c, t->prim); return;
  case T_TUPLE:
  case T_ARRAY:
  case T_STR:
  case T_GRAD:
  case T_NAME:
  case T_APPLY:
  case T_OPREF:
  case T_LOOP:
  case T_ASCRIBE:
  case T_GRADREF:
  case T__COUNT: return;
  }
}

/* An array builtin's own cost (prims.def): n * moves_n + moves_1 MOVES,
   n * nlops_n NLOPS. */
void cpu_meter_array(CpuCost *c, const Term *t, size_t n) {
  const PrimInfo *pi = &fe_prims[t->prim];
  uint64_t k = (uint64_t)n;
  count(k * (uint64_t)pi->moves_n + (uint64_t)pi->moves_1, 0, 0, k * (uint64_t)pi->nlops_n);
}
