/* scalar.h: the one definition of every scalar builtin on doubles, shared by
   the tree evaluator, the block kernels and the monoid loops so that all
   paths give bit-identical results.

   max/min: `max a b` is a when a >= b (the branch the gradient follows, see
   LANGUAGE.md section 5), b when b > a, and nan when either is nan (as
   NumPy's maximum; this also keeps reduce with max associative).
   sigmoid: 1/(1+exp(-x)) for x >= 0, exp(x)/(1+exp(x)) below (no overflow
   to a needless 0 for large negative x). exp and log are vmath.h's. Booleans in kernels are 0.0/1.0. */
#ifndef UNA_SCALAR_H
#define UNA_SCALAR_H

#include "../frontend/ir/term.h"
#include <math.h>

#include "vmath.h"

/* Written as two selects so that the compiler vectorizes the block loops. */
static inline double cpu_max(double a, double b) {
  double m = a >= b ? a : b;
  return a != a ? a : m;
}
static inline double cpu_min(double a, double b) {
  double m = a <= b ? a : b;
  return a != a ? a : m;
}
static inline double cpu_sigmoid(double x) {
  double e = cpu_exp(-fabs(x));
  return (x >= 0 ? 1.0 : e) / (1.0 + e);
}

/* pow x 2 is x * x (correctly rounded, as pow is nearly always, and the
   kernels then multiply: kernel.c compiles x ^ 2 to a product). */
static inline double cpu_pow(double x, double y) { return y == 2 ? x * x : pow(x, y); }

/* A P_SCALAR1 builtin applied to x. */
static inline double cpu_scalar1(Prim p, double x) {
  switch (p) {
  case PRIM_NEG: return -x;
  case PRIM_SIN: return sin(x);
  case PRIM_COS: return cos(x);
  case PRIM_TAN: return tan(x);
  case PRIM_EXP: return cpu_exp(x);
  case PRIM_LOG: return cpu_log(x);
  case PRIM_SQRT: return sqrt(x);
  case PRIM_TANH: return tanh(x);
  case PRIM_SIGMOID: return cpu_sigmoid(x);
  case PRIM_ABS: return fabs(x);
  case PRIM_FLOOR: return floor(x);
  case PRIM_STOPGRAD: return x;
  default: UNREACHABLE();
  }
}

/* A P_SCALAR2 builtin applied to x and y. */
static inline double cpu_scalar2(Prim p, double x, double y) {
  switch (p) {
  case PRIM_ADD: return x + y;
  case PRIM_SUB: return x - y;
  case PRIM_MUL: return x * y;
  case PRIM_DIV: return x / y;
  case PRIM_POW: return cpu_pow(x, y);
  case PRIM_MAX: return cpu_max(x, y);
  case PRIM_MIN: return cpu_min(x, y);
  default: UNREACHABLE();
  }
}

/* A P_CMP builtin on reals. */
static inline bool cpu_compare(Prim p, double x, double y) {
  switch (p) {
  case PRIM_EQ: return x == y;
  case PRIM_NE: return x != y;
  case PRIM_LT: return x < y;
  case PRIM_LE: return x <= y;
  case PRIM_GT: return x > y;
  case PRIM_GE: return x >= y;
  default: UNREACHABLE();
  }
}

#endif
