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

/* The cost of a scalar, comparison or logic operator itself. */
static void count_prim(CpuCost *c, Prim p) {
  switch (fe_prims[p].cls) {
  case P_SCALAR1:
    if (p == PRIM_NEG) count(2, 1, 0, 0); /* a subtraction from 0 */
    else count(2, 0, 0, 1);               /* Cost(op1) = (2,0,0,1) */
    return;
  case P_SCALAR2:
    switch (p) {
    case PRIM_ADD:
    case PRIM_SUB: count(3, 1, 0, 0); return; /* Cost(+) = (3,1,0,0) */
    case PRIM_MUL:
    case PRIM_DIV: count(3, 0, 1, 0); return; /* Cost(*) = (3,0,1,0) */
    default: count(3, 0, 0, 1); return;       /* pow, max, min */
    }
  case P_CMP: count(3, 1, 0, 0); return;   /* a subtraction and its sign */
  case P_LOGIC: count(3, 0, 0, 0); return; /* two operands in, one out */
  case P_NOT: count(2, 0, 0, 0); return;
  case P_ARRAY: return;                    /* cpu_meter_array */
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
  case T_GRADREF:
  case T__COUNT: return;
  }
}

void cpu_meter_array(CpuCost *c, const Term *t, size_t n) {
  uint64_t k = (uint64_t)n;
  switch (t->prim) {
  case PRIM_MAP: count(k, 0, 0, 0); return;        /* n * (Cost(e) + (1,0,0,0)) */
  case PRIM_MAP2:
  case PRIM_REDUCE:
  case PRIM_FOLDL: count(2 * k, 0, 0, 0); return;  /* n * (Cost(e) + (2,0,0,0)) */
  case PRIM_SCANL:
  case PRIM_SCANR: count(3 * k, 0, 0, 0); return;  /* n * (Cost(e) + (3,0,0,0)) */
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R: count(k, 0, 0, 0); return;    /* Cost(e) + (n,0,0,0) */
  case PRIM_LENGTH: count(1, 0, 0, 0); return;
  case PRIM_IOTA:
  case PRIM_REPLICATE:
  case PRIM_LOAD:
  case PRIM_SAVE: count(k, 0, 0, 0); return;
  case PRIM_RAND: count(k, 0, 0, k); return;
  default: return;
  }
}
