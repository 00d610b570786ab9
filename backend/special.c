/* special.c: lgamma, digamma and trigamma on the CPU (special.h). The
   CUDA prelude (backend/cuda/emit.c) repeats digamma and trigamma
   operation for operation: change both together. */
#include "special.h"

#include <math.h>

static const double psi_pos_c[UNA_PSI_POS_N] = {UNA_PSI_POS_COEFFS};
static const double psi_neg_c[UNA_PSI_NEG_N] = {UNA_PSI_NEG_COEFFS};
static const double psi_asym_c[UNA_PSI_ASYM_N] = {UNA_PSI_ASYM};
static const double psi1_asym_c[UNA_PSI1_ASYM_N] = {UNA_PSI1_ASYM};

double cpu_lgamma(double x) {
  int sign; /* lgamma_r, not lgamma: lgamma writes the global signgam */
  return lgamma_r(x, &sign);
}

/* c[0] + c[1] h + ... + c[n-1] h^(n-1) */
static double horner(const double *c, int n, double h) {
  double p = c[n - 1];
  for (int i = n - 2; i >= 0; i--) p = c[i] + h * p;
  return p;
}

/* ψ(x) for x >= UNA_PSI_ASYM_FROM */
static double psi_asym(double x) {
  double z = 1 / (x * x);
  return log(x) - 0.5 / x - z * horner(psi_asym_c, UNA_PSI_ASYM_N, z);
}

/* ψ(r + h) for r + h in [1, 2], r the positive root: its Taylor series
   (ψ(r) + h (c[0] + c[1] h + ...), r the double nearest the root) */
static double psi_1_2(double h) { return UNA_PSI_POS_ROOT_VAL + h * horner(psi_pos_c, UNA_PSI_POS_N, h); }

/* ψ(r + h) for |h| < UNA_PSI_NEG_RADIUS, r the root in (-1, 0) */
static double psi_negroot(double h) { return UNA_PSI_NEG_ROOT_VAL + h * horner(psi_neg_c, UNA_PSI_NEG_N, h); }

/* ψ(x) for x > 0 */
static double psi_pos(double x) {
  if (x >= UNA_PSI_ASYM_FROM) return psi_asym(x);
  /* ψ(x) = ψ(x + 1) - 1/x, x + 1 - r rounded once (1 - r is exact) */
  if (x < 1) return psi_1_2(x + (1 - UNA_PSI_POS_ROOT)) - 1 / x;
  /* ψ(x) = ψ(x - 1) + 1/(x - 1) down into [1, 2] (x - 1 is exact), the
     terms summed with their rounding errors (Knuth's TwoSum) */
  double s = 0, e = 0;
  while (x > 2) {
    x -= 1;
    double t = 1 / x, u = s + t, tv = u - s;
    e += (s - (u - tv)) + (t - tv);
    s = u;
  }
  return (psi_1_2(x - UNA_PSI_POS_ROOT) + e) + s;
}

/* π cot(π t) for |t| <= 1/2, by tangents of arguments in [0, π/4] (so
   that the rounding of π t does not count near t = ±1/2) */
static double pi_cot_pi(double t) {
  double a = fabs(t);
  double c = a > 0.25 ? UNA_PI * tan(UNA_PI * (0.5 - a)) : UNA_PI / tan(UNA_PI * a);
  return t < 0 ? -c : c;
}

double cpu_digamma(double x) {
  if (x > 0) return psi_pos(x);
  if (x == 0) return signbit(x) ? INFINITY : -INFINITY; /* the limits from each side */
  if (!(x < 0)) return x; /* nan */
  if (fabs(x - UNA_PSI_NEG_ROOT) < UNA_PSI_NEG_RADIUS) return psi_negroot(x - UNA_PSI_NEG_ROOT);
  if (x == floor(x)) return NAN; /* the poles, and -inf */
  /* ψ(x) = ψ(1 - x) - π cot(π x), and cot has period π; for x in (-1, 0),
     1 - x - r is rounded once */
  double p = x > -1 ? psi_1_2((1 - UNA_PSI_POS_ROOT) - x) : psi_pos(1 - x);
  return p - pi_cot_pi(x - round(x));
}

/* ψ'(y) for y >= UNA_PSI_ASYM_FROM: w + w^2 (1/2 + w Σ B_2k w^(2k-1)) */
static double psi1_asym(double y) {
  double w = 1 / y, z = w * w;
  return w + z * (0.5 + w * horner(psi1_asym_c, UNA_PSI1_ASYM_N, z));
}

/* ψ'(x) for x > 0: ψ'(x + n) + Σ_{j<n} 1/(x + j)^2, smallest terms first */
static double psi1_pos(double x) {
  int n = 0;
  while (x + n < UNA_PSI_ASYM_FROM) n++;
  double r = psi1_asym(x + n);
  while (n > 0) {
    n--;
    double y = x + n;
    r += 1 / (y * y);
  }
  return r;
}

double cpu_trigamma(double x) {
  if (x > 0) return psi1_pos(x);
  if (!(x <= 0)) return x;            /* nan */
  if (x == floor(x)) return INFINITY; /* the poles (0 and -0 too), and -inf */
  /* ψ'(x) = π² / sin²(π x) - ψ'(1 - x) */
  double s = sin(UNA_PI * fabs(x - round(x)));
  return UNA_PI2 / (s * s) - psi1_pos(1 - x);
}
