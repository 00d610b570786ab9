/* scalar.h: every scalar builtin on doubles, compiled from the C column
   of frontend/ir/prims.def (cpu_scalar) with the helpers that column
   calls; shared by the tree evaluator, the block kernels, the monoid loops
   and the optimizer's constant folding, so that all paths give
   bit-identical results.

   max/min: `max a b` is a when a >= b (the branch the gradient follows, see
   LANGUAGE.md section 5), b when b > a, and nan when either is nan (as
   NumPy's maximum; this also keeps reduce with max associative).
   sigmoid: 1/(1+exp(-x)) for x >= 0, exp(x)/(1+exp(x)) below (no overflow
   to a needless 0 for large negative x). exp and log are vmath.h's, and
   sin, cos, tan and tanh SLEEF's through it;
   lgamma, digamma and trigamma special.h's. Booleans in kernels are
   0.0/1.0. */
#ifndef UNA_SCALAR_H
#define UNA_SCALAR_H

#include "../frontend/ir/term.h"
#include <math.h>

#include "special.h"
#include "vmath.h"

/* Written as two selects so that the compiler vectorizes the block loops.
   One text for the engine and for the kernels compiled to native code
   (backend/jit_emit.c puts CPU_MINMAX(CPU_TEXT) in their source), so that
   both compute the same bits. */
#define CPU_MINMAX(X)                                                                                 \
  X(static inline double cpu_max(double a, double b) {                                               \
    double m = a >= b ? a : b;                                                                       \
    return a != a ? a : m;                                                                           \
  } static inline double cpu_min(double a, double b) {                                               \
    double m = a <= b ? a : b;                                                                       \
    return a != a ? a : m;                                                                           \
  })
#define CPU_CODE(...) __VA_ARGS__
#define CPU_TEXT(...) #__VA_ARGS__
CPU_MINMAX(CPU_CODE)

/* pow x 2 is x * x (correctly rounded, as pow is nearly always, and the
   kernels then multiply: kernel.c compiles x ^ 2 to a product). */
static inline double cpu_pow(double x, double y) { return y == 2 ? x * x : pow(x, y); }

/* The scalar builtin p applied to a (and b when binary), as prims.def's C
   column spells it; a B result is 1.0 or 0.0, and B operands are 0.0 or
   1.0. The one switch every CPU path runs or specializes. */
static inline double cpu_scalar(Prim p, double a, double b) {
  switch (p) {
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) \
  case PRIM_##ID: return (double)(c);
#include "../frontend/ir/prims.def"
#undef SCALAR
  default: UNREACHABLE();
  }
}

/* A P_SCALAR1 builtin applied to x. */
static inline double cpu_scalar1(Prim p, double x) { return cpu_scalar(p, x, 0); }

/* A P_SCALAR2 builtin applied to x and y. */
static inline double cpu_scalar2(Prim p, double x, double y) { return cpu_scalar(p, x, y); }

/* A P_CMP builtin on reals. */
static inline bool cpu_compare(Prim p, double x, double y) { return cpu_scalar(p, x, y) != 0; }

#endif
