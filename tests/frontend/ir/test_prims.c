/* test_prims.c: the primitive table (frontend/ir/prims.def) is complete,
   as Futhark tests its derivative table: every builtin has every column
   its kind needs (a signature code that fits its arity; an operator symbol
   and precedence when it is written as an operator; C and CUDA spellings
   and a figure 11 cost class when scalar), its stated laws and unit hold
   on sample values through the C column, and every R-valued scalar
   builtin has a derivative rule that reverse/partials.c implements and
   that both AD paths (UNF and direct) apply: grad of f x y = p x y equals
   the rule at sample points. B-valued builtins have none. trigamma's rule
   is a located error on both paths (it has no derivative). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "../../../backend/eval.h"
#include "../../../backend/scalar.h"
#include "../../../frontend/ir/build.h"
#include "../../../frontend/ir/prim_type.h"
#include "../../../frontend/ir/retype.h"
#include "../../../reverse/partials.h"
#include "../../../reverse/reverse.h"
#include "../../suites.h"

static bool is_scalar(int p) { return fe_prims[p].cls != P_ARRAY; }

/* Array builtins written by syntax, not by name: a[i], a[i:j], loop, and
   stop_gradient of a non-R (the checker picks it). */
static bool by_syntax(int p) {
  return p == PRIM_INDEX || p == PRIM_SLICE || p == PRIM_LOOP_FOR || p == PRIM_LOOP_WHILE ||
         p == PRIM_STOPGRAD_ANY;
}

static bool real_valued(int p) { return fe_prims[p].sig == SIG_R_R || fe_prims[p].sig == SIG_RR_R; }

static int arity_of_sig(PrimSig s) { return s == SIG_R_R || s == SIG_B_B ? 1 : 2; }

static bool bool_operands(PrimSig s) { return s == SIG_BB_B || s == SIG_B_B; }

START_TEST(every_row_has_its_columns) {
  for (int p = 0; p < PRIM__COUNT; p++) {
    const PrimInfo *pi = &fe_prims[p];
    const char *n = pi->name;
    ck_assert_msg(n && n[0], "builtin %d has no name", p);
    ck_assert_msg(pi->arity >= 1 && pi->arity <= (is_scalar(p) ? 2 : 5), "%s: arity %d", n, pi->arity);
    ck_assert_msg((pi->writ & (W_CALL | W_INFIX | W_PREFIX)) || by_syntax(p), "%s cannot be written", n);
    ck_assert_msg(!by_syntax(p) || pi->writ == 0, "%s is written by syntax, not by name", n);
    if (pi->writ & (W_INFIX | W_PREFIX))
      ck_assert_msg(pi->sym && pi->sym[0] && pi->prec != PREC_NONE, "%s: operator without symbol or precedence", n);
    if (pi->writ & W_INFIX) ck_assert_msg(pi->arity == 2 && pi->prec != PREC_UNARY, "%s: infix but not binary", n);
    if (pi->writ & W_PREFIX) ck_assert_msg(pi->arity == 1 && pi->prec == PREC_UNARY, "%s: prefix but not unary", n);
    if (pi->prec != PREC_NONE) ck_assert_msg(pi->sym, "%s: a precedence but no symbol", n);
    if (pi->writ & W_SECTION)
      ck_assert_msg(pi->sig == SIG_RR_R && (pi->sym || (pi->writ & W_CALL)), "%s: a section must be R x R -> R", n);
    /* names and symbols are unambiguous */
    for (int q = 0; q < p; q++) {
      const PrimInfo *qi = &fe_prims[q];
      if ((pi->writ & W_CALL) && (qi->writ & W_CALL)) ck_assert_msg(strcmp(n, qi->name) != 0, "two builtins %s", n);
      for (unsigned w = W_INFIX; w <= W_PREFIX; w <<= 1)
        if ((pi->writ & w) && (qi->writ & w))
          ck_assert_msg(strcmp(pi->sym, qi->sym) != 0, "%s and %s: one symbol %s", n, qi->name, pi->sym);
    }
    if (!is_scalar(p)) {
      ck_assert_msg(pi->sig == SIG_ARRAY && pi->moves_n >= 0 && pi->moves_1 >= 0 && pi->nlops_n >= 0,
                    "%s: array builtin without its cost", n);
      ck_assert_msg(pi->moves_n + pi->moves_1 > 0, "%s: an array builtin moves values", n);
      ck_assert_msg(pi->effect >= E_PURE && pi->effect <= E_IO, "%s: no effect", n);
      ck_assert_msg(pi->grad >= G_RULE && pi->grad <= G_NONE, "%s: no grad column", n);
      int nfun = 0;
      for (int i = 0; i < pi->arity; i++) nfun += fe_prim_arg_kind((Prim)p, i) == ARG_FUN;
      ck_assert_msg(nfun <= 1 && (nfun == 0 || fe_prim_arg_kind((Prim)p, 0) == ARG_FUN),
                    "%s: the function argument comes first", n);
      continue;
    }
    ck_assert_msg(pi->sig < SIG_ARRAY && arity_of_sig(pi->sig) == pi->arity, "%s: signature and arity differ", n);
    ck_assert_msg(pi->c && pi->c[0], "%s: no C spelling", n);
    ck_assert_msg(pi->cuda && strstr(pi->cuda, "$a"), "%s: no CUDA spelling", n);
    ck_assert_msg((strstr(pi->cuda, "$b") != NULL) == (pi->arity == 2), "%s: CUDA spelling and arity differ", n);
    ck_assert_msg(pi->cost >= COST_MOVES && pi->cost <= COST_NLOPS, "%s: no cost class", n);
    ck_assert_msg(pi->effect == E_PURE, "%s: a scalar builtin is pure", n);
    if (pi->laws & (LAW_ASSOC | LAW_COMM)) ck_assert_msg(pi->arity == 2, "%s: laws of a unary builtin", n);
    if (pi->laws & LAW_COMM_BITS) ck_assert_msg(pi->laws & LAW_COMM, "%s: bitwise but not commutative", n);
    if (!isnan(pi->unit)) ck_assert_msg(pi->laws & LAW_ASSOC, "%s: a unit but not associative", n);
  }
}
END_TEST

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static bool same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* The laws each row states hold for its C column on sample values (small
   integers, so that + and * are exact; signed zeros and infinities; nan
   for the bitwise laws; 0 and 1 for B operands). */
START_TEST(laws_hold) {
  const double reals[] = {0.0, -0.0, 1.0, -2.0, 3.0, 0.5, INFINITY, -INFINITY, NAN};
  const double bools[] = {0.0, 1.0};
  for (int p = 0; p < PRIM__COUNT; p++) {
    const PrimInfo *pi = &fe_prims[p];
    if (!is_scalar(p) || pi->arity != 2) continue;
    bool b = bool_operands(pi->sig);
    const double *v = b ? bools : reals;
    int nv = b ? 2 : (int)(sizeof reals / sizeof reals[0]);
    for (int i = 0; i < nv; i++) {
      if (!isnan(pi->unit)) {
        ck_assert_msg(same_bits(cpu_scalar((Prim)p, pi->unit, v[i]), v[i]), "%s: unit on the left, %g", pi->name, v[i]);
        ck_assert_msg(same_bits(cpu_scalar((Prim)p, v[i], pi->unit), v[i]), "%s: unit on the right, %g", pi->name, v[i]);
      }
      for (int j = 0; j < nv; j++) {
        double x = v[i], y = v[j];
        double l = cpu_scalar((Prim)p, x, y), r = cpu_scalar((Prim)p, y, x);
        if (pi->laws & LAW_COMM_BITS) ck_assert_msg(same_bits(l, r) || (isnan(l) && isnan(r)), "%s (%g, %g)", pi->name, x, y);
        if (pi->laws & LAW_COMM) ck_assert_msg(same_value(l, r) || (l == 0 && r == 0), "%s (%g, %g)", pi->name, x, y);
        if (!(pi->laws & LAW_ASSOC) || isnan(x) || isnan(y)) continue;
        for (int k = 0; k < nv; k++) {
          double z = v[k];
          if (isnan(z)) continue;
          double a = cpu_scalar((Prim)p, cpu_scalar((Prim)p, x, y), z);
          double c = cpu_scalar((Prim)p, x, cpu_scalar((Prim)p, y, z));
          ck_assert_msg(same_value(a, c), "%s is not associative at (%g, %g, %g)", pi->name, x, y, z);
        }
      }
    }
  }
}
END_TEST

START_TEST(derivative_rules_exist) {
  for (int p = 0; p < PRIM__COUNT; p++) {
    const PrimInfo *pi = &fe_prims[p];
    if (!is_scalar(p)) continue;
    ck_assert_msg(pi->grad == (real_valued(p) ? G_RULE : G_CONST), "%s: grad column", pi->name);
    if (real_valued(p)) {
      ck_assert_msg(pi->deriv[0], "%s: no derivative rule in prims.def", pi->name);
      ck_assert_msg(rev_has_partials((Prim)p), "%s: derivative rule %s not in reverse/partials.c", pi->name, pi->deriv);
    } else {
      ck_assert_msg(!pi->deriv[0] && !rev_has_partials((Prim)p), "%s: a B result has no derivative", pi->name);
    }
  }
}
END_TEST

/* f (x: R) (y: R) : R = p x y (p x when unary). */
static Def *def_of(Prim p, Span s, Sym **xs) {
  Term *a = fe_mk_var(s, xs[0]);
  Term *body = fe_prims[p].arity == 1 ? fe_mk_op1(s, p, a) : fe_mk_op2(s, p, a, fe_mk_var(s, xs[1]));
  return fe_mk_def(fe_prims[p].name, s, fe_prims[p].arity, xs, body);
}

/* ∂_i p at (x, y), from the rule's term evaluated directly. */
static double rule_at(Prim p, int i, double x, double y) {
  Span s = fe_span("<prims>", 1, 1);
  Sym *xs[2] = {fe_mk_sym("x", fe_ty_real(), s), fe_mk_sym("y", fe_ty_real(), s)};
  Term *args[2] = {fe_mk_var(s, xs[0]), fe_mk_var(s, xs[1])};
  Def *d = fe_mk_def("d", s, 2, xs, rev_partial(s, p, i, args));
  Value in[2] = {val_real(x), val_real(y)};
  return cpu_call(d, in).u.r;
}

START_TEST(both_ad_paths_apply_the_rule) {
  const double pts[][2] = {{0.3, 1.9}, {1.7, 0.6}, {-2.5, 1.3}};
  const RevPath paths[2] = {REV_UNF, REV_DIRECT};
  for (int p = 0; p < PRIM__COUNT; p++) {
    if (!is_scalar(p) || !real_valued(p) || p == PRIM_TRIGAMMA) continue;
    Span s = fe_span("<prims>", 1, 1);
    Sym *xs[2] = {fe_mk_sym("x", fe_ty_real(), s), fe_mk_sym("y", fe_ty_real(), s)};
    Def *f = def_of((Prim)p, s, xs);
    int n = f->nparams, wrt[2] = {0, 1};
    for (int k = 0; k < 2; k++) {
      Def *g = rev_grad(f, wrt, n, paths[k]);
      fe_retype(g);
      for (size_t j = 0; j < sizeof pts / sizeof pts[0]; j++) {
        double x = pts[j][0], y = pts[j][1];
        if ((p == PRIM_LOG || p == PRIM_SQRT || p == PRIM_POW) && x < 0) x = -x;
        Value in[2] = {val_real(x), val_real(y)};
        Value v = cpu_call(g, in);
        for (int i = 0; i < n; i++) {
          double got = n == 1 ? v.u.r : v.u.t->items[i].u.r;
          double want = rule_at((Prim)p, i, x, y);
          ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1, fabs(want)),
                        "d%d %s at (%g, %g) on the %s path: %.17g, the rule gives %.17g", i, fe_prims[p].name, x,
                        y, k ? "direct" : "UNF", got, want);
        }
      }
    }
  }
}
END_TEST

/* The one rule that raises: grad of f x = trigamma x is an error at the
   trigamma, on both paths. */
START_TEST(trigamma_has_no_derivative) {
  const RevPath paths[2] = {REV_UNF, REV_DIRECT};
  for (volatile int k = 0; k < 2; k++) {
    Span s = fe_span("<prims>", 1, 1), at = fe_span("t.una", 3, 7);
    Sym *xs[1] = {fe_mk_sym("x", fe_ty_real(), s)};
    Def *f = fe_mk_def("f", s, 1, xs, fe_mk_op1(at, PRIM_TRIGAMMA, fe_mk_var(s, xs[0])));
    int wrt[1] = {0};
    FeTry t;
    if (fe_try(&t)) {
      rev_grad(f, wrt, 1, paths[k]);
      fe_untry(&t);
      ck_abort_msg("grad of trigamma on the %s path: no error", k ? "direct" : "UNF");
    }
    ck_assert_str_eq(fe_error_text(t.err), "t.una:3:7: error: grad: trigamma has no derivative (Una has no tetragamma function)");
  }
}
END_TEST

Suite *suite_prims(void) {
  Suite *s = suite_create("prims");
  TCase *tc = tcase_create("prims");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_row_has_its_columns);
  tcase_add_test(tc, laws_hold);
  tcase_add_test(tc, derivative_rules_exist);
  tcase_add_test(tc, both_ad_paths_apply_the_rule);
  tcase_add_test(tc, trigamma_has_no_derivative);
  suite_add_tcase(s, tc);
  return s;
}
