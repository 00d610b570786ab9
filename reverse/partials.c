/* partials.c: the table of scalar partial derivatives (see partials.h). */
#include "partials.h"
#include "../frontend/build.h"

bool rev_has_partials(Prim p) {
  PrimClass c = fe_prims[p].cls;
  return c == P_SCALAR1 || c == P_SCALAR2;
}

static Term *num(Span s, double v) { return fe_mk_num(s, v); }
static Term *op1(Span s, Prim p, Term *a) { return fe_mk_op1(s, p, a); }
static Term *op2(Span s, Prim p, Term *a, Term *b) { return fe_mk_op2(s, p, a, b); }
static Term *sq(Span s, Term *a) { return op2(s, PRIM_MUL, a, a); }

Term *rev_partial(Span s, Prim p, int i, Term **args) {
  Term *x = args[0];
  Term *y = fe_prims[p].arity == 2 ? args[1] : NULL;
  switch (p) {
  case PRIM_NEG: return num(s, -1);
  case PRIM_SIN: return op1(s, PRIM_COS, x);
  case PRIM_COS: return op1(s, PRIM_NEG, op1(s, PRIM_SIN, x));
  case PRIM_TAN: return op2(s, PRIM_DIV, num(s, 1), sq(s, op1(s, PRIM_COS, x)));
  case PRIM_EXP: return op1(s, PRIM_EXP, x);
  case PRIM_LOG: return op2(s, PRIM_DIV, num(s, 1), x);
  case PRIM_SQRT: return op2(s, PRIM_DIV, num(s, 0.5), op1(s, PRIM_SQRT, x));
  case PRIM_TANH: return op2(s, PRIM_SUB, num(s, 1), sq(s, op1(s, PRIM_TANH, x)));
  case PRIM_SIGMOID: {
    /* s(x) (1 - s(x)) */
    Term *sg = op1(s, PRIM_SIGMOID, x);
    return op2(s, PRIM_MUL, sg, op2(s, PRIM_SUB, num(s, 1), op1(s, PRIM_SIGMOID, x)));
  }
  case PRIM_ABS: /* abs x = if x >= 0 then x else -x */
    return fe_mk_if(s, op2(s, PRIM_GE, x, num(s, 0)), num(s, 1), num(s, -1));
  case PRIM_FLOOR: return num(s, 0);
  case PRIM_ADD: return num(s, 1);
  case PRIM_SUB: return num(s, i == 0 ? 1 : -1);
  case PRIM_MUL: return i == 0 ? y : x;
  case PRIM_DIV:
    /* d/dx x/y = 1/y ; d/dy x/y = -x/(y*y) */
    if (i == 0) return op2(s, PRIM_DIV, num(s, 1), y);
    return op1(s, PRIM_NEG, op2(s, PRIM_DIV, x, sq(s, y)));
  case PRIM_POW:
    /* d/dx x^y = y x^(y-1), taken as 0 when y = 0 (so 0^0 has slope 0);
       d/dy x^y = x^y log x, taken as 0 when x = 0 (as JAX does). */
    if (i == 0)
      return fe_mk_if(s, op2(s, PRIM_EQ, y, num(s, 0)), num(s, 0),
                      op2(s, PRIM_MUL, y, op2(s, PRIM_POW, x, op2(s, PRIM_SUB, y, num(s, 1)))));
    return fe_mk_if(s, op2(s, PRIM_EQ, x, num(s, 0)), num(s, 0),
                    op2(s, PRIM_MUL, op2(s, PRIM_POW, x, y), op1(s, PRIM_LOG, x)));
  case PRIM_MAX: /* max a b is a when a >= b */
    return fe_mk_if(s, op2(s, PRIM_GE, x, y), num(s, i == 0 ? 1 : 0), num(s, i == 0 ? 0 : 1));
  case PRIM_MIN: /* min a b is a when a <= b */
    return fe_mk_if(s, op2(s, PRIM_LE, x, y), num(s, i == 0 ? 1 : 0), num(s, i == 0 ? 0 : 1));
  default: break;
  }
  una_internal_error(__FILE__, __LINE__,
                     una_sprintf("no partial derivative for '%s'", fe_prims[p].name));
}
