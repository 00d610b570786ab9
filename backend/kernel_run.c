/* kernel_run.c: binding a compiled kernel to a frame, and running it over
   blocks (one loop per instruction of the block program, each built for
   AVX2 and the baseline) or on one element (see kernel.h). */
#include "kernel.h"
#include "kernel_int.h"
#include "scalar.h"

/* ---- binding ---- */

static double scalar_of(Value v) { return v.kind == V_BOOL ? (v.u.b ? 1.0 : 0.0) : v.u.r; }

static void run_steps(const Exec *ex, const CpuKernel *k, Value **frames, double *vals) {
  for (int i = 0; i < k->nsteps; i++) {
    const BindStep *s = &k->steps[i];
    Value *f = frames[s->ctx];
    switch (s->kind) {
    case B_SLOT: vals[s->vreg] = scalar_of(f[s->slot]); break;
    case B_GLOBAL:
      ASSERT(s->global->value);
      vals[s->vreg] = scalar_of(*s->global->value);
      break;
    case B_EXPR: vals[s->vreg] = scalar_of(ex->eval(ex, s->term, f)); break;
    case B_LET: {
      Value v = ex->eval(ex, s->term, f);
      f[s->slot] = v;
      if (s->vreg >= 0) vals[s->vreg] = scalar_of(v);
      break;
    }
    case B_LETTUP: {
      Value v = ex->eval(ex, s->term->kids[0], f);
      for (int j = 0; j < s->term->nsyms; j++) f[s->term->syms[j]->slot] = v.u.t->items[j];
      break;
    }
    }
  }
}

bool cpu_kernel_bind(const Exec *ex, const CpuKernel *k, Value *frame, CpuKernelRun *run) {
  memset(run, 0, sizeof *run);
  run->k = k;
  run->sregs = GC_MALLOC_ATOMIC(sizeof(double) * (size_t)k->nvregs);
  if (!run->sregs) una_internal_error(__FILE__, __LINE__, "out of memory");
  memcpy(run->sregs, k->init, sizeof(double) * (size_t)k->nvregs);
  if (k->nsteps == 0) return true;
  Value **frames = NEW_ARRAY(Value *, k->nctx);
  frames[0] = frame;
  for (int i = 1; i < k->nctx; i++) frames[i] = NEW_ARRAY(Value, k->ctx_nslots[i] > 0 ? k->ctx_nslots[i] : 1);
  FeTry t;
  if (fe_try(&t)) {
    run_steps(ex, k, frames, run->sregs);
    fe_untry(&t);
    return true;
  }
  if (t.err.msg && strcmp(t.err.msg, "interrupted") == 0) fe_raise(t.err);
  return false;
}

/* ---- running ---- */

#define B CPU_BLOCK
#define BLOCK_LOOP CPU_VECTOR_LOOP
/* Each scalar builtin's C column (prims.def) as a function c_ID(a, b),
   what the tree evaluator computes (scalar.h) with the builtin fixed; B
   results are 1.0 or 0.0. */
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) \
  static inline double c_##ID(double a, double b) {                                    \
    (void)b;                                                                           \
    return (double)(c);                                                                \
  }
#include "../frontend/ir/prims.def"
#undef SCALAR

/* One loop per scalar builtin. */
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) \
  BLOCK_LOOP static void k_##ID(double *restrict d, const double *restrict pa,         \
                                const double *restrict pb) {                           \
    for (int i = 0; i < B; i++) d[i] = c_##ID(pa[i], (arity) == 2 ? pb[i] : 0);        \
  }
#include "../frontend/ir/prims.def"
#undef SCALAR

typedef void (*BlockFn)(double *restrict, const double *restrict, const double *restrict);
static const BlockFn block_fns[PRIM__COUNT] = {
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) [PRIM_##ID] = k_##ID,
#include "../frontend/ir/prims.def"
#undef SCALAR
};

BLOCK_LOOP static void k_select(double *restrict d, const double *restrict pa, const double *restrict pb,
                     const double *restrict pc) {
  for (int i = 0; i < B; i++) {
    double a = pa[i], b = pb[i]; /* both loaded: the loop then vectorizes */
    d[i] = pc[i] != 0 ? a : b;
  }
}

/* The fused pairs: F_<inner>_<outer> (t = a IN b; d = t OUT c) and
   L_... (d = c OUT t), for inner and outer in + - * / (arith_index). */
#define A_ADD c_ADD
#define A_SUB c_SUB
#define A_MUL c_MUL
#define A_DIV c_DIV
#define PAIR(IN, OUT)                                                                            \
  BLOCK_LOOP static void f_##IN##_##OUT(double *restrict d, const double *restrict pa,          \
                                       const double *restrict pb, const double *restrict pc) { \
    for (int i = 0; i < B; i++) {                                                               \
      double t = A_##IN(pa[i], pb[i]);                                                          \
      d[i] = A_##OUT(t, pc[i]);                                                                 \
    }                                                                                           \
  }                                                                                             \
  BLOCK_LOOP static void l_##IN##_##OUT(double *restrict d, const double *restrict pa,          \
                                       const double *restrict pb, const double *restrict pc) { \
    for (int i = 0; i < B; i++) {                                                               \
      double t = A_##IN(pa[i], pb[i]);                                                          \
      d[i] = A_##OUT(pc[i], t);                                                                 \
    }                                                                                           \
  }
#define PAIRS(IN) PAIR(IN, ADD) PAIR(IN, SUB) PAIR(IN, MUL) PAIR(IN, DIV)
PAIRS(ADD)
PAIRS(SUB)
PAIRS(MUL)
PAIRS(DIV)

typedef void (*PairFn)(double *restrict, const double *restrict, const double *restrict, const double *restrict);
#define PAIR_ROW(IN, P) {P##_##IN##_ADD, P##_##IN##_SUB, P##_##IN##_MUL, P##_##IN##_DIV}
static const PairFn pair_fns[2][4][4] = {
    {PAIR_ROW(ADD, f), PAIR_ROW(SUB, f), PAIR_ROW(MUL, f), PAIR_ROW(DIV, f)},
    {PAIR_ROW(ADD, l), PAIR_ROW(SUB, l), PAIR_ROW(MUL, l), PAIR_ROW(DIV, l)},
};

static void exec_block(const CpuKernel *k, double **p) {
  for (int pc = 0; pc < k->nexec; pc++) {
    const XInstr *in = &k->exec[pc];
    double *d = p[in->dst];
    const double *a = p[in->a];
    const double *b = in->b >= 0 ? p[in->b] : NULL;
    switch (in->op) {
    case X_FUSED: pair_fns[in->left][arith_index(in->inner)][arith_index(in->outer)](d, a, b, p[in->c]); break;
    /* exp, log, sigmoid, sin, cos, tan and tanh have vectorized
       block forms (vmath.h), bit for bit the functions of their C column */
    case PRIM_EXP: cpu_exp_block(d, a, B); break;
    case PRIM_LOG: cpu_log_block(d, a, B); break;
    case PRIM_SIGMOID: cpu_sigmoid_block(d, a, B); break;
    case PRIM_SIN: cpu_sin_block(d, a, B); break;
    case PRIM_COS: cpu_cos_block(d, a, B); break;
    case PRIM_TAN: cpu_tan_block(d, a, B); break;
    case PRIM_TANH: cpu_tanh_block(d, a, B); break;
    case K_SELECT: k_select(d, a, b, p[in->c]); break;
    default:
      ASSERT(in->op >= 0 && in->op < PRIM__COUNT && block_fns[in->op]);
      block_fns[in->op](d, a, b);
    }
  }
}

static void ensure_blocks(CpuKernelRun *run) {
  if (run->ptr) return;
  const CpuKernel *k = run->k;
  size_t bytes = sizeof(double) * B * (size_t)(k->ninputs + k->nphys + 2);
  double *mem = GC_MALLOC_ATOMIC(bytes);
  if (!mem) una_internal_error(__FILE__, __LINE__, "out of memory for kernel blocks");
  run->bcast = mem;
  run->scratch = mem + (size_t)B * (size_t)k->ninputs;
  run->pad = run->scratch + (size_t)B * (size_t)k->nphys;
  memset(run->pad, 0, sizeof(double) * 2 * B);
  run->ptr = NEW_ARRAY(double *, k->nvregs);
  for (int i = 0; i < k->ninputs; i++) {
    int v = k->inputs[i];
    double *blk = run->bcast + (size_t)B * (size_t)i;
    for (int j = 0; j < B; j++) blk[j] = run->sregs[v];
    run->ptr[v] = blk;
  }
  for (int v = 0; v < k->nvregs; v++)
    if (k->phys[v] >= 0) run->ptr[v] = run->scratch + (size_t)B * (size_t)k->phys[v];
}

void cpu_kernel_prepare(CpuKernelRun *run) { ensure_blocks(run); }

void cpu_kernel_clone(const CpuKernelRun *src, CpuKernelRun *dst) {
  *dst = *src;
  dst->sregs = GC_MALLOC_ATOMIC(sizeof(double) * (size_t)src->k->nvregs);
  if (!dst->sregs) una_internal_error(__FILE__, __LINE__, "out of memory");
  memcpy(dst->sregs, src->sregs, sizeof(double) * (size_t)src->k->nvregs);
  dst->bcast = dst->scratch = dst->pad = NULL;
  dst->ptr = NULL;
  ensure_blocks(dst);
}

const double *cpu_kernel_out(const CpuKernelRun *run, int i) {
  ASSERT(i >= 0 && i < run->k->nresults);
  return run->ptr[run->k->results[i]];
}

/* The block buffer of temporary v. */
static double *home(const CpuKernelRun *run, int v) { return run->scratch + (size_t)B * (size_t)run->k->phys[v]; }

void cpu_kernel_block_into(CpuKernelRun *run, const double *x, const double *y, size_t n, double *const *outs) {
  ASSERT(n <= B);
  ensure_blocks(run);
  const CpuKernel *k = run->k;
  double **p = run->ptr;
  /* results at home (a whole block before may have sent them elsewhere) */
  for (int i = 0; i < k->nresults; i++)
    if (k->phys[k->results[i]] >= 0) p[k->results[i]] = home(run, k->results[i]);
  if (n == B) {
    p[0] = (double *)x;
    p[1] = (double *)(k->nparams == 2 ? y : x);
  } else {
    memcpy(run->pad, x, sizeof(double) * n);
    p[0] = run->pad;
    p[1] = run->pad;
    if (k->nparams == 2) {
      memcpy(run->pad + B, y, sizeof(double) * n);
      p[1] = run->pad + B;
    }
  }
  if (!outs) {
    exec_block(k, p);
    return;
  }
  /* a whole block: a computed result (not a parameter, input or constant)
     is written straight into its destination (the first one, when two
     results are the same temporary); the others are copied after */
  if (n == B)
    for (int i = 0; i < k->nresults; i++) {
      int r = k->results[i];
      if (outs[i] && k->phys[r] >= 0 && outs[i] != x && outs[i] != y && p[r] == home(run, r)) p[r] = outs[i];
    }
  exec_block(k, p);
  for (int i = 0; i < k->nresults; i++)
    if (outs[i] && p[k->results[i]] != outs[i]) memcpy(outs[i], p[k->results[i]], sizeof(double) * n);
}

void cpu_kernel_block(CpuKernelRun *run, const double *x, const double *y, size_t n, double *out) {
  double *outs[1] = {out};
  cpu_kernel_block_into(run, x, y, n, outs);
}

double cpu_kernel_call1(CpuKernelRun *run, double x, double y) {
  const CpuKernel *k = run->k;
  double *r = run->sregs;
  r[0] = x;
  r[1] = y;
  const KInstr *in = k->code, *end = k->code + k->ninstr;
  for (; in < end; in++) {
    double a = r[in->a];
    double b = in->b >= 0 ? r[in->b] : 0;
    double v;
    if (in->op == K_SELECT) v = r[in->c] != 0 ? a : b;
    else v = cpu_scalar((Prim)in->op, a, b);
    r[in->dst] = v;
  }
  return r[k->result];
}
