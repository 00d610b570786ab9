/* partials.c: the table of scalar partial derivatives (see partials.h). */
#include "partials.h"
#include "../frontend/ir/build.h"

static Term *num(Span s, double v) { return fe_mk_num(s, v); }
static Term *op1(Span s, Prim p, Term *a) { return fe_mk_op1(s, p, a); }
static Term *op2(Span s, Prim p, Term *a, Term *b) { return fe_mk_op2(s, p, a, b); }
static Term *sq(Span s, Term *a) { return op2(s, PRIM_MUL, a, a); }

/* The partial derivatives, one rule per builtin, named in the deriv
   column of prims.def. A rule returns the term for ∂_i p(x, y) (y is NULL
   for unary builtins). */
typedef Term *(*PartialRule)(Span s, int i, Term *x, Term *y);

static Term *d_neg(Span s, int i, Term *x, Term *y) { return num(s, -1); }
static Term *d_sin(Span s, int i, Term *x, Term *y) { return op1(s, PRIM_COS, x); }
static Term *d_cos(Span s, int i, Term *x, Term *y) { return op1(s, PRIM_NEG, op1(s, PRIM_SIN, x)); }
static Term *d_tan(Span s, int i, Term *x, Term *y) {
  return op2(s, PRIM_DIV, num(s, 1), sq(s, op1(s, PRIM_COS, x)));
}
static Term *d_exp(Span s, int i, Term *x, Term *y) { return op1(s, PRIM_EXP, x); }
static Term *d_log(Span s, int i, Term *x, Term *y) { return op2(s, PRIM_DIV, num(s, 1), x); }
static Term *d_sqrt(Span s, int i, Term *x, Term *y) {
  return op2(s, PRIM_DIV, num(s, 0.5), op1(s, PRIM_SQRT, x));
}
static Term *d_tanh(Span s, int i, Term *x, Term *y) {
  return op2(s, PRIM_SUB, num(s, 1), sq(s, op1(s, PRIM_TANH, x)));
}
/* s(x) (1 - s(x)) */
static Term *d_sigmoid(Span s, int i, Term *x, Term *y) {
  return op2(s, PRIM_MUL, op1(s, PRIM_SIGMOID, x),
             op2(s, PRIM_SUB, num(s, 1), op1(s, PRIM_SIGMOID, x)));
}
/* abs x = if x >= 0 then x else -x */
static Term *d_abs(Span s, int i, Term *x, Term *y) {
  return fe_mk_if(s, op2(s, PRIM_GE, x, num(s, 0)), num(s, 1), num(s, -1));
}
static Term *d_floor(Span s, int i, Term *x, Term *y) { return num(s, 0); }
/* stop_gradient x is x, whose derivative is taken to be 0 */
static Term *d_stopgrad(Span s, int i, Term *x, Term *y) { return num(s, 0); }
static Term *d_add(Span s, int i, Term *x, Term *y) { return num(s, 1); }
static Term *d_sub(Span s, int i, Term *x, Term *y) { return num(s, i == 0 ? 1 : -1); }
static Term *d_mul(Span s, int i, Term *x, Term *y) { return i == 0 ? y : x; }
/* d/dx x/y = 1/y ; d/dy x/y = -x/(y*y) */
static Term *d_div(Span s, int i, Term *x, Term *y) {
  if (i == 0) return op2(s, PRIM_DIV, num(s, 1), y);
  return op1(s, PRIM_NEG, op2(s, PRIM_DIV, x, sq(s, y)));
}
/* d/dx x^y = y x^(y-1), taken as 0 when y = 0 (so 0^0 has slope 0);
   d/dy x^y = x^y log x, taken as 0 when x = 0 (as JAX does). */
static Term *d_pow(Span s, int i, Term *x, Term *y) {
  if (i == 0)
    return fe_mk_if(s, op2(s, PRIM_EQ, y, num(s, 0)), num(s, 0),
                    op2(s, PRIM_MUL, y, op2(s, PRIM_POW, x, op2(s, PRIM_SUB, y, num(s, 1)))));
  return fe_mk_if(s, op2(s, PRIM_EQ, x, num(s, 0)), num(s, 0),
                  op2(s, PRIM_MUL, op2(s, PRIM_POW, x, y), op1(s, PRIM_LOG, x)));
}
/* max a b is a when a >= b */
static Term *d_max(Span s, int i, Term *x, Term *y) {
  return fe_mk_if(s, op2(s, PRIM_GE, x, y), num(s, i == 0 ? 1 : 0), num(s, i == 0 ? 0 : 1));
}
/* min a b is a when a <= b */
static Term *d_min(Span s, int i, Term *x, Term *y) {
  return fe_mk_if(s, op2(s, PRIM_LE, x, y), num(s, i == 0 ? 1 : 0), num(s, i == 0 ? 0 : 1));
}

/* atan2 y x, the angle of the point (x, y): d/dy = x/(x*x + y*y),
   d/dx = -y/(x*x + y*y) (here x is the first operand, y the second) */
static Term *d_atan2(Span s, int i, Term *x, Term *y) {
  Term *r2 = op2(s, PRIM_ADD, sq(s, x), sq(s, y));
  if (i == 0) return op2(s, PRIM_DIV, y, r2);
  return op1(s, PRIM_NEG, op2(s, PRIM_DIV, x, r2));
}

/* lgamma x = log |Γ(x)|: its derivative is ψ(x), digamma's, whose
   derivative is trigamma's; trigamma has none (it would be the tetragamma
   function, which Una does not have), so differentiating it, which only a
   gradient of a gradient of digamma or an explicit trigamma asks for, is
   an error at the term */
static Term *d_lgamma(Span s, int i, Term *x, Term *y) { return op1(s, PRIM_DIGAMMA, x); }
static Term *d_digamma(Span s, int i, Term *x, Term *y) { return op1(s, PRIM_TRIGAMMA, x); }
static Term *d_trigamma(Span s, int i, Term *x, Term *y) {
  fe_error(s, "grad: trigamma has no derivative (Una has no tetragamma function)");
}

/* The rule of each builtin, as prims.def's deriv column names it. */
#define NODERIV NULL
static const PartialRule rules[PRIM__COUNT] = {
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) [PRIM_##ID] = deriv,
#include "../frontend/ir/prims.def"
#undef SCALAR
};
#undef NODERIV

bool rev_has_partials(Prim p) { return rules[p] != NULL; }

Term *rev_partial(Span s, Prim p, int i, Term **args) {
  if (!rules[p])
    una_internal_error(__FILE__, __LINE__,
                       una_sprintf("no partial derivative for '%s'", fe_prims[p].name));
  ASSERT(i >= 0 && i < fe_prims[p].arity);
  return rules[p](s, i, args[0], fe_prims[p].arity == 2 ? args[1] : NULL);
}
