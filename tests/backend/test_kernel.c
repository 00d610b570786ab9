/* test_kernel.c: the block kernels on hand-built checked terms: which
   lambdas qualify, dead code, every scalar operation in block mode against
   one-element mode against the scalar definitions, free variables, hoisted
   parts (and their failures), partial blocks. */
#include <check.h>
#include <math.h>

#include "../../backend/kernel.h"
#include "../../backend/plan/plan.h"
#include "../../backend/scalar.h"
#include "../suites.h"
#include "../testlib.h"

static const Span sp = {"k.una", 1, 1};

static Sym *sym_t(const char *name, const Type *t, int slot) {
  Sym *s = fe_sym_new(name, t, sp);
  s->slot = slot;
  return s;
}
static Sym *sym(const char *name, int slot) { return sym_t(name, fe_ty_real(), slot); }
static Term *var(Sym *s) { return fe_term_var(sp, s); }
static Term *num(double v) { return fe_term_num(sp, v); }

static const Type *result_type(Prim p) {
  PrimClass c = fe_prims[p].cls;
  return c == P_SCALAR1 || c == P_SCALAR2 ? fe_ty_real() : fe_ty_bool();
}
static Term *p1(Prim p, Term *a) { return fe_term_prim(sp, result_type(p), p, 1, &a); }
static Term *p2(Prim p, Term *a, Term *b) {
  Term *k[2] = {a, b};
  return fe_term_prim(sp, result_type(p), p, 2, k);
}
static Term *iff(Term *c, Term *a, Term *b) {
  Term *k[3] = {c, a, b};
  return fe_term_kids(sp, T_IF, a->type, 3, k);
}
static Term *let(Sym *s, Term *rhs, Term *body) {
  Term *k[2] = {rhs, body};
  Term *t = fe_term_kids(sp, T_LET, body->type, 2, k);
  t->sym = s;
  return t;
}
static Term *lam(int n, Sym *x, Sym *y, Term *body) {
  Term *t = fe_term_kids(sp, T_LAM, NULL, 1, &body);
  t->nsyms = n;
  t->syms = NEW_ARRAY(Sym *, 2);
  t->syms[0] = x;
  t->syms[1] = y;
  return t;
}

static double data(int i) { return sin(i * 1.7) * 3; } /* mixed signs, no nan */

/* Runs k (bound to frame) over n elements in blocks and one at a time;
   checks both agree bit for bit and returns the block results. */
static double *run_both(const CpuKernel *k, Value *frame, const double *x, const double *y, size_t n) {
  CpuKernelRun run;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, k, frame, &run));
  double *out = NEW_ARRAY(double, n + 1);
  for (size_t i = 0; i < n; i += CPU_BLOCK) {
    size_t m = n - i < CPU_BLOCK ? n - i : CPU_BLOCK;
    cpu_kernel_block(&run, x + i, y ? y + i : NULL, m, out + i);
  }
  for (size_t i = 0; i < n; i++) {
    double one = cpu_kernel_call1(&run, x[i], y ? y[i] : 0);
    ck_assert_msg(memcmp(&one, &out[i], sizeof one) == 0 || (one != one && out[i] != out[i]),
                  "element %zu: block %.17g, one %.17g", i, out[i], one);
  }
  return out;
}

START_TEST(qualifies) {
  Sym *x = sym("x", 0), *y = sym("y", 1);
  /* x. x * x + 1 : two instructions */
  const CpuKernel *k = cpu_kernel_compile(lam(1, x, NULL, p2(PRIM_ADD, p2(PRIM_MUL, var(x), var(x)), num(1))));
  ck_assert_ptr_nonnull(k);
  ck_assert_int_eq(cpu_kernel_size(k), 2);
  ck_assert(!cpu_kernel_returns_bool(k));
  /* x. x  and  x. 1  : no instructions */
  ck_assert_int_eq(cpu_kernel_size(cpu_kernel_compile(lam(1, x, NULL, var(x)))), 0);
  ck_assert_int_eq(cpu_kernel_size(cpu_kernel_compile(lam(1, x, NULL, num(1)))), 0);
  /* x, y. x < y : boolean result */
  k = cpu_kernel_compile(lam(2, x, y, p2(PRIM_LT, var(x), var(y))));
  ck_assert(k && cpu_kernel_returns_bool(k));
  /* a boolean parameter does not qualify */
  Sym *b = sym_t("b", fe_ty_bool(), 0);
  ck_assert_ptr_null(cpu_kernel_compile(lam(1, b, NULL, iff(var(b), num(1), num(2)))));
  /* a tuple result does not qualify */
  Term *pair[2] = {var(x), var(x)};
  ck_assert_ptr_null(cpu_kernel_compile(lam(1, x, NULL, fe_term_kids(sp, T_TUPLE, fe_ty_pair(fe_ty_real(), fe_ty_real()), 2, pair))));
  /* an array builtin that depends on the parameter does not qualify */
  Term *io = p1(PRIM_IOTA, var(x));
  io->type = fe_ty_array(fe_ty_real());
  Term *len = p1(PRIM_LENGTH, io);
  len->type = fe_ty_real();
  ck_assert_ptr_null(cpu_kernel_compile(lam(1, x, NULL, len)));
  /* dead code is dropped: x. let t = sin x in x + 1 */
  Sym *t = sym("t", 2);
  k = cpu_kernel_compile(lam(1, x, NULL, let(t, p1(PRIM_SIN, var(x)), p2(PRIM_ADD, var(x), num(1)))));
  ck_assert_int_eq(cpu_kernel_size(k), 1);
  /* outside a plan, a lambda is compiled when asked (NULL stays NULL);
     in a plan, it is the kernel the plan compiled (its note) */
  Term *l = lam(1, x, NULL, p1(PRIM_EXP, var(x)));
  ck_assert_ptr_nonnull(cpu_kernel_for(l));
  ck_assert_ptr_null(cpu_kernel_for(lam(1, x, NULL, len)));
  PlanNote *note = NEW(PlanNote);
  note->k = cpu_kernel_compile(l);
  l->note = note;
  ck_assert_ptr_eq(cpu_kernel_for(l), note->k);
}
END_TEST

START_TEST(value_numbering) {
  Sym *x = sym("x", 0), *y = sym("y", 1);
  /* x. sigmoid x * (1 - sigmoid x) + sigmoid x : one sigmoid, 4 instructions */
  Term *sg = p1(PRIM_SIGMOID, var(x));
  Term *body = p2(PRIM_ADD, p2(PRIM_MUL, sg, p2(PRIM_SUB, num(1), p1(PRIM_SIGMOID, var(x)))), p1(PRIM_SIGMOID, var(x)));
  const CpuKernel *k = cpu_kernel_compile(lam(1, x, NULL, body));
  ck_assert_int_eq(cpu_kernel_size(k), 4);
  double xs[5] = {-2, -0.5, 0, 0.5, 2}, *out = run_both(k, NULL, xs, NULL, 5);
  for (int i = 0; i < 5; i++) {
    double s = 1 / (1 + exp(-xs[i]));
    ck_assert_double_eq_tol(out[i], s * (1 - s) + s, 1e-15);
  }
  /* x, y. x * y + y * x : * commutes, one product */
  k = cpu_kernel_compile(lam(2, x, y, p2(PRIM_ADD, p2(PRIM_MUL, var(x), var(y)), p2(PRIM_MUL, var(y), var(x)))));
  ck_assert_int_eq(cpu_kernel_size(k), 2);
  /* x, y. (x - y) + (y - x) and max x y + max y x : - and max do not */
  k = cpu_kernel_compile(lam(2, x, y, p2(PRIM_ADD, p2(PRIM_SUB, var(x), var(y)), p2(PRIM_SUB, var(y), var(x)))));
  ck_assert_int_eq(cpu_kernel_size(k), 3);
  k = cpu_kernel_compile(lam(2, x, y, p2(PRIM_ADD, p2(PRIM_MAX, var(x), var(y)), p2(PRIM_MAX, var(y), var(x)))));
  ck_assert_int_eq(cpu_kernel_size(k), 3);
  double a[2] = {-0.0, 1}, b[2] = {0.0, 1};
  out = run_both(k, NULL, a, b, 2);
  ck_assert(!signbit(out[0])); /* max (-0) 0 = -0, max 0 (-0) = 0: the sum is 0 */
  /* x ^ 2 is x * x (as cpu_pow computes it on every path) */
  k = cpu_kernel_compile(lam(1, x, NULL, p2(PRIM_POW, var(x), num(2))));
  ck_assert_int_eq(cpu_kernel_size(k), 1);
  ck_assert_int_eq(cpu_kernel_code(k)[0].op, PRIM_MUL);
  double sq[3] = {1.1, -3e200, 0.7}, *o = run_both(k, NULL, sq, NULL, 3);
  for (int i = 0; i < 3; i++) ck_assert(o[i] == cpu_pow(sq[i], 2) && o[i] == sq[i] * sq[i]);
  /* stop_gradient is the identity: no instruction */
  ck_assert_int_eq(cpu_kernel_size(cpu_kernel_compile(lam(1, x, NULL, p1(PRIM_STOPGRAD, var(x))))), 0);
}
END_TEST

/* Which operators reduce may fold out of order (kernel.h's cpu_kernel_commutes). */
START_TEST(commutes) {
  Sym *x = sym("x", 0), *y = sym("y", 1), *c = sym("c", 2);
  Term *X = var(x), *Y = var(y);
  struct {
    Term *body;
    bool commutes;
  } cases[] = {
      {p2(PRIM_ADD, X, Y), true},
      {p1(PRIM_LOG, p2(PRIM_ADD, p1(PRIM_EXP, X), p1(PRIM_EXP, Y))), true}, /* log-sum-exp */
      {p2(PRIM_ADD, p2(PRIM_MUL, X, Y), p2(PRIM_ADD, X, Y)), true},         /* x y + (x + y) */
      {p2(PRIM_ADD, p2(PRIM_ADD, p2(PRIM_MUL, X, Y), X), Y), false}, /* x y + x + y: not shown (no reassociation) */
      {p2(PRIM_MUL, p2(PRIM_MAX, Y, X), num(2)), true},
      {p2(PRIM_ADD, p2(PRIM_MUL, X, var(c)), p2(PRIM_MUL, Y, var(c))), true},
      {p2(PRIM_SUB, X, Y), false},
      {p2(PRIM_ADD, p2(PRIM_MUL, X, var(c)), Y), false},
      {iff(p2(PRIM_NE, Y, num(0)), Y, X), false}, /* the last nonzero: associative, not commutative */
      {X, false},
      {iff(p2(PRIM_LT, X, Y), X, Y), false}, /* min written out: commutes, but not shown */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const CpuKernel *k = cpu_kernel_compile(lam(2, x, y, cases[i].body));
    ck_assert_ptr_nonnull(k);
    ck_assert_msg(cpu_kernel_commutes(k) == cases[i].commutes, "case %zu", i);
  }
  ck_assert(!cpu_kernel_commutes(cpu_kernel_compile(lam(1, x, NULL, p1(PRIM_EXP, X)))));
}
END_TEST

START_TEST(multi_kernel) {
  /* (a, b. sigmoid a - b) over (x, y) and (c. sigmoid c * 2) over x: one
     sigmoid for both; each result has the bits of its kernel alone */
  Sym *a = sym("a", 0), *b = sym("b", 1), *c = sym("c", 2);
  const Term *l1 = lam(2, a, b, p2(PRIM_SUB, p1(PRIM_SIGMOID, var(a)), var(b)));
  const Term *l2 = lam(1, c, NULL, p2(PRIM_MUL, p1(PRIM_SIGMOID, var(c)), num(2)));
  const Term *lams[2] = {l1, l2};
  int params[2][2] = {{0, 1}, {0, 0}};
  const CpuKernel *k = cpu_kernel_compile_multi(2, lams, (const int(*)[2])params);
  ck_assert_ptr_nonnull(k);
  ck_assert_int_eq(cpu_kernel_nresults(k), 2);
  ck_assert_int_eq(cpu_kernel_size(k), 3);
  enum { N = CPU_BLOCK + 5 };
  static double xs[N], ys[N];
  for (int i = 0; i < N; i++) {
    xs[i] = data(i);
    ys[i] = data(i + 7);
  }
  double *o1 = run_both(cpu_kernel_compile(l1), NULL, xs, ys, N), *o2 = run_both(cpu_kernel_compile(l2), NULL, xs, NULL, N);
  CpuKernelRun run;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, k, NULL, &run));
  for (size_t i = 0; i < N; i += CPU_BLOCK) {
    size_t m = N - i < CPU_BLOCK ? N - i : CPU_BLOCK;
    cpu_kernel_block_into(&run, xs + i, ys + i, m, NULL);
    ck_assert(memcmp(cpu_kernel_out(&run, 0), o1 + i, m * sizeof(double)) == 0);
    ck_assert(memcmp(cpu_kernel_out(&run, 1), o2 + i, m * sizeof(double)) == 0);
  }
  /* results sent to destinations: two equal bodies share their result
     (value numbering), both destinations get it; whole and partial blocks */
  const Term *twice[3] = {l2, l1, l2};
  int p3[3][2] = {{0, 0}, {0, 1}, {0, 0}};
  const CpuKernel *k3 = cpu_kernel_compile_multi(3, twice, (const int(*)[2])p3);
  ck_assert_int_eq(cpu_kernel_size(k3), 3);
  CpuKernelRun run3;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, k3, NULL, &run3));
  static double d0[N], d1[N], d2[N];
  for (size_t i = 0; i < N; i += CPU_BLOCK) {
    size_t m = N - i < CPU_BLOCK ? N - i : CPU_BLOCK;
    double *outs[3] = {d0 + i, d1 + i, d2 + i};
    cpu_kernel_block_into(&run3, xs + i, ys + i, m, outs);
    ck_assert(memcmp(cpu_kernel_out(&run3, 0), o2 + i, m * sizeof(double)) == 0);
  }
  ck_assert(memcmp(d0, o2, sizeof d0) == 0 && memcmp(d2, o2, sizeof d2) == 0 && memcmp(d1, o1, sizeof d1) == 0);
  /* a boolean body does not qualify */
  const Term *l3 = lam(1, c, NULL, p2(PRIM_LT, var(c), num(0)));
  const Term *bad[2] = {l1, l3};
  ck_assert_ptr_null(cpu_kernel_compile_multi(2, bad, (const int(*)[2])params));
}
END_TEST

/* One kernel over the indices (cpu_kernel_compile_indexed): (a, b. sigmoid
   a - b) over the arrays X and Y, and (i. sigmoid X[i] * 2 + i): X is read
   once and its sigmoid computed once (one array register per variable,
   value numbering); over whole and partial blocks, each result has the bits
   of its own kernel. */
START_TEST(indexed_kernel) {
  const Type *RA = fe_ty_array(fe_ty_real());
  Sym *a = sym("a", 0), *b = sym("b", 1), *i = sym("i", 2), *X = sym_t("X", RA, 3), *Y = sym_t("Y", RA, 4);
  const Term *l1 = lam(2, a, b, p2(PRIM_SUB, p1(PRIM_SIGMOID, var(a)), var(b)));
  Term *xi = fe_term_prim(sp, fe_ty_real(), PRIM_INDEX, 2, (Term *[]){var(X), var(i)});
  const Term *l2 = lam(1, i, NULL, p2(PRIM_ADD, p2(PRIM_MUL, p1(PRIM_SIGMOID, xi), num(2)), var(i)));
  const Term *lams[2] = {l1, l2};
  const Term *arrays[2][2] = {{var(X), var(Y)}, {NULL, NULL}};
  const CpuKernel *k = cpu_kernel_compile_indexed(2, lams, (const Term *const(*)[2])arrays);
  ck_assert_ptr_nonnull(k);
  /* gather X, gather Y, sigmoid, sub, mul, add (fused or not) */
  ck_assert_int_le(cpu_kernel_size(k), 6);
  enum { N = 2 * CPU_BLOCK + 5 };
  Array *xa = val_new_real_array(N, sp), *ya = val_new_real_array(N, sp);
  static double idx[N];
  for (int j = 0; j < N; j++) {
    xa->r[j] = data(j);
    ya->r[j] = data(j + 7);
    idx[j] = j;
  }
  Value frame[5];
  memset(frame, 0, sizeof frame);
  frame[3] = val_array(xa);
  frame[4] = val_array(ya);
  double *o1 = run_both(cpu_kernel_compile(l1), frame, xa->r, ya->r, N);
  double *o2 = run_both(cpu_kernel_compile(l2), frame, idx, NULL, N);
  CpuKernelRun run;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, k, frame, &run));
  static double d0[N], d1[N];
  for (size_t j = 0; j < N; j += CPU_BLOCK) {
    size_t m = N - j < CPU_BLOCK ? N - j : CPU_BLOCK;
    double *outs[2] = {d0 + j, d1 + j};
    cpu_kernel_block_indices(&run, j, m, outs);
  }
  ck_assert(memcmp(d0, o1, sizeof d0) == 0 && memcmp(d1, o2, sizeof d1) == 0);
}
END_TEST

START_TEST(fused_pairs) {
  /* (x IN y) OUT (x - 0.3) and (x - 0.3) OUT (x IN y) for IN, OUT in + - * /:
     the block program fuses the pair, with the bits of the one-element
     program, which does not */
  Sym *x = sym("x", 0), *y = sym("y", 1);
  const Prim ops[4] = {PRIM_ADD, PRIM_SUB, PRIM_MUL, PRIM_DIV};
  enum { N = CPU_BLOCK + 9 };
  static double xs[N], ys[N];
  for (int i = 0; i < N; i++) {
    xs[i] = data(i);
    ys[i] = data(3 * i + 1) + (i % 17 == 0 ? 0 : 0.001);
  }
  for (int in = 0; in < 4; in++)
    for (int out = 0; out < 4; out++)
      for (int left = 0; left < 2; left++) {
        Term *t = p2(ops[in], var(x), var(y)), *c = p2(PRIM_SUB, var(x), num(0.3));
        const CpuKernel *k = cpu_kernel_compile(lam(2, x, y, left ? p2(ops[out], c, t) : p2(ops[out], t, c)));
        ck_assert_int_eq(cpu_kernel_size(k), 3);
        ck_assert_int_eq(cpu_kernel_block_size(k), 2);
        run_both(k, NULL, xs, ys, N);
      }
  /* a product used twice stays on its own: (x * y) + (x * y) / 2 */
  Term *m = p2(PRIM_MUL, var(x), var(y));
  const CpuKernel *k = cpu_kernel_compile(lam(2, x, y, p2(PRIM_ADD, m, p2(PRIM_DIV, p2(PRIM_MUL, var(x), var(y)), num(2)))));
  ck_assert_int_eq(cpu_kernel_size(k), 3);
  ck_assert_int_eq(cpu_kernel_block_size(k), 2); /* the division fused into the sum */
  run_both(k, NULL, xs, ys, N);
}
END_TEST

START_TEST(every_operation) {
  enum { N = 3 * CPU_BLOCK + 17 };
  static double xs[N], ys[N];
  for (int i = 0; i < N; i++) {
    xs[i] = data(i);
    ys[i] = data(i + 1000);
  }
  xs[5] = ys[5]; /* some equal pairs for == and max/min */
  xs[6] = -0.0;
  ys[6] = 0.0;
  Value frame[4] = {{0}};
  Sym *x = sym("x", 0), *y = sym("y", 1);
  for (int p = 0; p < PRIM__COUNT; p++) {
    PrimClass c = fe_prims[p].cls;
    if (c == P_ARRAY) continue;
    Term *body;
    if (c == P_SCALAR1) body = p1((Prim)p, var(x));
    else if (c == P_SCALAR2 || c == P_CMP) body = p2((Prim)p, var(x), var(y));
    else if (c == P_NOT) body = p1((Prim)p, p2(PRIM_LT, var(x), num(0)));
    else body = p2((Prim)p, p2(PRIM_LT, var(x), num(0)), p2(PRIM_LT, var(y), num(1)));
    const CpuKernel *k = cpu_kernel_compile(lam(2, x, y, body));
    ck_assert_ptr_nonnull(k);
    double *out = run_both(k, frame, xs, ys, N);
    for (int i = 0; i < N; i++) {
      double a = xs[i], b = ys[i], want;
      switch (c) {
      case P_SCALAR1: want = cpu_scalar1((Prim)p, a); break;
      case P_SCALAR2: want = cpu_scalar2((Prim)p, a, b); break;
      case P_CMP: want = cpu_compare((Prim)p, a, b); break;
      case P_NOT: want = !(a < 0); break;
      default: want = p == PRIM_AND ? (a < 0 && b < 1) : (a < 0 || b < 1); break;
      }
      ck_assert_msg(memcmp(&want, &out[i], sizeof want) == 0 || (want != want && out[i] != out[i]),
                    "%s at %d: %.17g vs %.17g", fe_prims[p].name, i, out[i], want);
    }
  }
}
END_TEST

START_TEST(select_let_and_free_variables) {
  enum { N = 1000 };
  static double xs[N];
  for (int i = 0; i < N; i++) xs[i] = data(i);
  Sym *x = sym("x", 0), *c = sym("c", 1), *t = sym("t", 2), *flag = sym_t("flag", fe_ty_bool(), 3);
  Value frame[4] = {{0}};
  frame[1] = val_real(2.5);
  frame[3] = val_bool(true);
  /* x. let t = x * c in if flag && t > 0 then log t else t - c */
  Term *cond = p2(PRIM_AND, var(flag), p2(PRIM_GT, var(t), num(0)));
  Term *body = let(t, p2(PRIM_MUL, var(x), var(c)), iff(cond, p1(PRIM_LOG, var(t)), p2(PRIM_SUB, var(t), var(c))));
  const CpuKernel *k = cpu_kernel_compile(lam(1, x, NULL, body));
  ck_assert_ptr_nonnull(k);
  double *out = run_both(k, frame, xs, NULL, N);
  for (int i = 0; i < N; i++) {
    double tv = xs[i] * 2.5;
    ck_assert(out[i] == (tv > 0 ? log(tv) : tv - 2.5));
  }
  /* free variables are read at bind time */
  frame[1] = val_real(-1);
  frame[3] = val_bool(false);
  out = run_both(k, frame, xs, NULL, N);
  for (int i = 0; i < N; i++) ck_assert(out[i] == -xs[i] + 1);
}
END_TEST

START_TEST(partial_blocks) {
  Sym *x = sym("x", 0), *y = sym("y", 1);
  const CpuKernel *k = cpu_kernel_compile(lam(2, x, y, p2(PRIM_SUB, p2(PRIM_MUL, var(x), num(3)), var(y))));
  Value frame[2] = {{0}};
  size_t sizes[] = {0, 1, 255, 256, 257, 513};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t n = sizes[s];
    double *xs = NEW_ARRAY(double, n + 1), *ys = NEW_ARRAY(double, n + 1);
    for (size_t i = 0; i < n; i++) {
      xs[i] = (double)i;
      ys[i] = (double)i / 7;
    }
    double *out = run_both(k, frame, xs, ys, n);
    for (size_t i = 0; i < n; i++) ck_assert(out[i] == xs[i] * 3 - ys[i]);
  }
}
END_TEST

START_TEST(long_chains) {
  /* ((x + 1) * 2 + 1) * 2 ... 500 deep: registers are reused */
  Sym *x = sym("x", 0);
  Term *b = var(x);
  for (int i = 0; i < 500; i++) b = p2(i % 2 ? PRIM_MUL : PRIM_ADD, b, num(i % 2 ? 0.5 : 1));
  const CpuKernel *k = cpu_kernel_compile(lam(1, x, NULL, b));
  ck_assert_int_eq(cpu_kernel_size(k), 500);
  double xs[300];
  for (int i = 0; i < 300; i++) xs[i] = i;
  Value frame[1] = {{0}};
  double *out = run_both(k, frame, xs, NULL, 300);
  for (int i = 0; i < 300; i++) {
    double v = xs[i];
    for (int j = 0; j < 500; j++) v = j % 2 ? v * 0.5 : v + 1;
    ck_assert(out[i] == v);
  }
}
END_TEST

START_TEST(hoisting) {
  /* x. x + length arr, arr a free array variable: length is evaluated once */
  Sym *x = sym("x", 0), *arr = sym_t("arr", fe_ty_array(fe_ty_real()), 1);
  Term *len = p1(PRIM_LENGTH, var(arr));
  len->type = fe_ty_real();
  const CpuKernel *k = cpu_kernel_compile(lam(1, x, NULL, p2(PRIM_ADD, var(x), len)));
  ck_assert_ptr_nonnull(k);
  ck_assert_int_eq(cpu_kernel_size(k), 1);
  Value frame[2] = {{0}};
  Array *a = val_new_real_array(3, sp);
  frame[1] = val_array(a);
  double xs[2] = {1, 2};
  double *out = run_both(k, frame, xs, NULL, 2);
  ck_assert(out[0] == 4 && out[1] == 5);

  /* a hoisted part that fails makes bind answer false (the generic path
     then raises the error where the element needs it) */
  Term *io = p1(PRIM_IOTA, num(-1));
  io->type = fe_ty_array(fe_ty_real());
  Term *bad = p1(PRIM_LENGTH, io);
  bad->type = fe_ty_real();
  k = cpu_kernel_compile(lam(1, x, NULL, iff(p2(PRIM_LT, var(x), num(0)), bad, var(x))));
  ck_assert_ptr_nonnull(k);
  CpuKernelRun run;
  ck_assert(!cpu_kernel_bind(&cpu_exec_default, k, frame, &run));

  /* an interrupt while binding is raised again */
  Term *io2 = p1(PRIM_IOTA, num(1e6));
  io2->type = fe_ty_array(fe_ty_real());
  Sym *z = sym("z", 1);
  Term *m[2] = {lam(1, z, NULL, var(z)), io2};
  Term *mp = fe_term_prim(sp, fe_ty_array(fe_ty_real()), PRIM_MAP, 2, m);
  Term *ln = p1(PRIM_LENGTH, mp);
  ln->type = fe_ty_real();
  k = cpu_kernel_compile(lam(1, x, NULL, p2(PRIM_ADD, var(x), ln)));
  ck_assert_ptr_nonnull(k);
  fe_interrupted = 1;
  FeTry t;
  if (fe_try(&t)) {
    cpu_kernel_bind(&cpu_exec_default, k, frame, &run);
    fe_untry(&t);
    ck_abort_msg("no interrupt");
  }
  ck_assert_str_eq(t.err.msg, "interrupted");
  ck_assert_int_eq(fe_interrupted, 0);
}
END_TEST


/* a[i] with a free array: a gather in the compiled code, block by block
   and element by element; not under if; a bad index is a fault (error.h)
   that the next poll raises at the index's span. */
START_TEST(gathers) {
  const Type *RA = fe_ty_array(fe_ty_real());
  Sym *x = sym("x", 0), *a = sym_t("a", RA, 2);
  Term *idx = fe_term_prim(sp, fe_ty_real(), PRIM_INDEX, 2, (Term *[]){var(a), var(x)});
  const CpuKernel *k = cpu_kernel_compile(lam(1, x, NULL, p2(PRIM_MUL, idx, num(2))));
  ck_assert_ptr_nonnull(k);
  ck_assert(cpu_kernel_gathers(k));
  Array *arr = val_new_real_array(5, sp);
  for (int i = 0; i < 5; i++) arr->r[i] = 10 * i;
  Value frame[4];
  memset(frame, 0, sizeof frame);
  frame[2] = val_array(arr);
  CpuKernelRun run;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, k, frame, &run));
  double xs[3] = {4, 0, 2}, out[3];
  cpu_kernel_block(&run, xs, NULL, 3, out);
  ck_assert(out[0] == 80 && out[1] == 0 && out[2] == 40);
  ck_assert(cpu_kernel_call1(&run, 3, 0) == 60);
  fe_fault_clear();
  fe_interrupted = 0;
  xs[1] = 5;
  cpu_kernel_block(&run, xs, NULL, 3, out);
  ck_assert(isnan(out[1]));
  FeTry t;
  if (fe_try(&t)) {
    fe_poll_interrupt(sp);
    fe_untry(&t);
    ck_abort_msg("the fault was not raised");
  }
  ck_assert_str_eq(t.err.msg, "index 5 out of bounds for an array of length 5");
  fe_poll_interrupt(sp); /* raised once */
}
END_TEST

/* A gather under an if (or on the right of && and ||) reads for the lanes
   that take its branch only: the others cannot fault, and are 0. */
START_TEST(masked_gathers) {
  const Type *RA = fe_ty_array(fe_ty_real());
  Sym *y = sym("y", 0), *a = sym_t("a", RA, 2);
  Term *ay = fe_term_prim(sp, fe_ty_real(), PRIM_INDEX, 2, (Term *[]){var(a), var(y)});
  /* if y < lim then a[y] * 2 else (if y > 5 && a[y - 5] > 15 then 1 else -1) */
  Term *lim = num(5);
  Term *ay5 = fe_term_prim(sp, fe_ty_real(), PRIM_INDEX, 2, (Term *[]){var(a), p2(PRIM_SUB, var(y), num(5))});
  Term *inner = iff(p2(PRIM_AND, p2(PRIM_GT, var(y), num(5)), p2(PRIM_GT, ay5, num(15))), num(1), num(-1));
  Term *body = iff(p2(PRIM_LT, var(y), lim), p2(PRIM_MUL, ay, num(2)), inner);
  const CpuKernel *k = cpu_kernel_compile(lam(1, y, NULL, body));
  ck_assert_ptr_nonnull(k);
  Array *arr = val_new_real_array(5, sp);
  for (int i = 0; i < 5; i++) arr->r[i] = 10 * i;
  Value frame[4];
  memset(frame, 0, sizeof frame);
  frame[2] = val_array(arr);
  fe_fault_clear();
  fe_interrupted = 0;
  /* 0 .. 4 read a[y]; 5 reads nothing; 6 .. 9 read a[y - 5]; 10 .. faults */
  double ys[10], want[10] = {0, 20, 40, 60, 80, -1, -1, 1, 1, 1};
  for (int i = 0; i < 10; i++) ys[i] = i;
  double *out = run_both(k, frame, ys, NULL, 10);
  for (int i = 0; i < 10; i++) ck_assert_msg(out[i] == want[i], "y = %d: %g", i, out[i]);
  fe_poll_interrupt(sp); /* no fault */
  /* a lane that takes the branch with a bad index faults */
  ys[3] = 10;
  CpuKernelRun run;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, k, frame, &run));
  cpu_kernel_block(&run, ys, NULL, 10, out);
  FeTry t;
  if (fe_try(&t)) {
    fe_poll_interrupt(sp);
    fe_untry(&t);
    ck_abort_msg("the fault was not raised");
  }
  ck_assert_str_eq(t.err.msg, "index 5 out of bounds for an array of length 5");
}
END_TEST

/* The error raised by the next poll (a recorded fault), or NULL. */
static const char *polled_error(void) {
  FeTry t;
  if (fe_try(&t)) {
    fe_poll_interrupt(sp);
    fe_untry(&t);
    return NULL;
  }
  return t.err.msg;
}

/* m[y][z] with m a free [[R]]: gathers from its rows' one buffer, the
   row checked against the rows (a fault at m[y]) and the column against
   their length (at m[y][z]); a ragged m fails the binding (the tree
   evaluator then runs the builtin). */
START_TEST(matrix_gathers) {
  const Type *R = fe_ty_real(), *RA = fe_ty_array(R), *RAA = fe_ty_array(RA);
  Sym *y = sym("y", 0), *z = sym("z", 1), *m = sym_t("m", RAA, 2);
  Term *row = fe_term_prim(sp, RA, PRIM_INDEX, 2, (Term *[]){var(m), var(y)});
  Term *at = fe_term_prim(sp, R, PRIM_INDEX, 2, (Term *[]){row, var(z)});
  const CpuKernel *k = cpu_kernel_compile(lam(2, y, z, p2(PRIM_ADD, at, num(0.5))));
  ck_assert_ptr_nonnull(k);
  ck_assert(cpu_kernel_gathers(k));
  Array *mat = val_new_boxed_array(3, sp);
  for (int i = 0; i < 3; i++) {
    Array *r = val_new_real_array(4, sp); /* rows of their own: copied into one buffer */
    for (int j = 0; j < 4; j++) r->r[j] = 10 * i + j;
    mat->v[i] = val_array(r);
  }
  Value frame[4];
  memset(frame, 0, sizeof frame);
  frame[2] = val_array(mat);
  fe_fault_clear();
  fe_interrupted = 0;
  double ys[6] = {0, 2, 1, 2, 0, 1}, zs[6] = {0, 3, 2, 0, 1, 3};
  double *out = run_both(k, frame, ys, zs, 6);
  for (int i = 0; i < 6; i++) ck_assert_msg(out[i] == 10 * ys[i] + zs[i] + 0.5, "%d: %g", i, out[i]);
  ck_assert_ptr_null(polled_error());
  CpuKernelRun run;
  ck_assert(cpu_kernel_bind(&cpu_exec_default, k, frame, &run));
  zs[2] = 4; /* past the rows' length */
  cpu_kernel_block(&run, ys, zs, 6, out);
  ck_assert_str_eq(polled_error(), "index 4 out of bounds for an array of length 4");
  zs[2] = 2, ys[4] = 3; /* past the rows */
  cpu_kernel_block(&run, ys, zs, 6, out);
  ck_assert_str_eq(polled_error(), "index 3 out of bounds for an array of length 3");
  ck_assert(isnan(cpu_kernel_call1(&run, 0.5, 1)));
  ck_assert_str_eq(polled_error(), "index 0.5 is not an integer");
  /* ragged: no binding */
  mat->v[1] = val_array(val_new_real_array(3, sp));
  ck_assert(!cpu_kernel_bind(&cpu_exec_default, k, frame, &run));
  fe_fault_clear();
}
END_TEST

static void first_lam(const Term *node, void *ud) {
  const Term **out = ud;
  if (!*out && node->kind == T_LAM) *out = node;
}

/* a[i] of an array of (nested) tuples of reals in a loop's body (the
   reverse pass of a loop over tuple states reads its saved states so):
   one gather per real component, from the arrays of components the
   binding makes (B_TUPLES); the loop is a step program, its value the
   tree evaluator's, bit for bit; an index out of bounds is the tree
   evaluator's error. */
START_TEST(record_gathers) {
  tl_run("def xs = map (i. sin (i * 1.3) * 4) (iota 300)\n"
         "def P = zip (zip xs (map (v. v * v) xs)) (map (v. 1 / (1 + v * v)) xs)\n"
         "def g (P: [((R, R), R)]) (m: R) =\n"
         "  loop acc = (0, 0) for k < m do\n"
         "    let (s, a) = P[length P - 1 - k] in (acc.1 * 0.5 + s.1 * a, acc.2 + s.2 - a * (if s.1 > 0 then 1 else -1))\n");
  Def *d = tl_check("loop acc = (0, 0) for k < length P do let (s, a) = P[k] in (acc.1 * 0.5 + s.1 * a, acc.2 + s.2)");
  const Term *lam = NULL;
  tl_walk(d->body, first_lam, &lam);
  ck_assert_ptr_nonnull(lam);
  ck_assert_ptr_nonnull(cpu_step_kernel_for(lam));
  Exec tree = tl_exec_paths(true, false);
  const char *progs[] = {"g P 300", "g P 17", "g (P[5:40]) 35",
                         "loop acc = (0, 0) for k < length P do let (s, a) = P[k] in (acc.1 * 0.5 + s.1 * a, acc.2 + s.2)"};
  for (int i = 0; i < 4; i++) {
    Value want = tl_copy_value(tl_ev_with(&tree, progs[i]));
    ck_assert_msg(tl_same_bits(want, tl_ev(progs[i]), false), "%s", progs[i]);
  }
  char *err = tl_capture_merged(tl_session_with(""), "def P = zip (zip [1, 2] [3, 4]) [5, 6]\n"
                                "(loop acc = 0 for k < 3 do let (s, a) = P[k] in acc + s.1 * a)\n", false);
  ck_assert_msg(strstr(err, "index 2 out of bounds for an array of length 2") != NULL, "%s", err);
}
END_TEST

Suite *suite_kernel(void) {
  Suite *s = suite_create("kernel");
  TCase *tc = tcase_create("kernel");
  tcase_add_test(tc, qualifies);
  tcase_add_test(tc, value_numbering);
  tcase_add_test(tc, multi_kernel);
  tcase_add_test(tc, indexed_kernel);
  tcase_add_test(tc, fused_pairs);
  tcase_add_test(tc, every_operation);
  tcase_add_test(tc, select_let_and_free_variables);
  tcase_add_test(tc, partial_blocks);
  tcase_add_test(tc, long_chains);
  tcase_add_test(tc, hoisting);
  tcase_add_test(tc, commutes);
  tcase_add_test(tc, gathers);
  tcase_add_test(tc, masked_gathers);
  tcase_add_test(tc, matrix_gathers);
  suite_add_tcase(s, tc);
  TCase *src = tcase_create("programs");
  tcase_add_checked_fixture(src, tl_setup, tl_teardown);
  tcase_add_test(src, record_gathers);
  suite_add_tcase(s, src);
  return s;
}
