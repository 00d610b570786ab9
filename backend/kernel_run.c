/* kernel_run.c: binding a compiled kernel to a frame, and running it over
   blocks (one loop per instruction of the block program, each built for
   AVX2 and the baseline) or on one element (see kernel.h). */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "kernel.h"
#include "kernel_int.h"
#include "jit.h"
#include "array_int.h" /* cpu_state_in */
#include "array_ops.h" /* cpu_bad_index */
#include "scalar.h"

/* ---- binding ---- */

static double scalar_of(Value v) { return v.kind == V_BOOL ? (v.u.b ? 1.0 : 0.0) : v.u.r; }

/* B_MATRIX (kernel_int.h): m's rows in one buffer, their offsets and
   their column numbers, as arr[vreg], arr[vreg + 1] and arr[vreg + 2];
   raises (the binding fails) when m's rows differ in length. */
static void bind_matrix(Array *m, const BindStep *s, const Array **arr) {
  size_t rows = m->len, cols = rows > 0 ? m->v[0].u.a->len : 0;
  Array *flat = NEW(Array), *offs = val_new_real_array(rows, s->term->span);
  Array *colnum = val_new_real_array(cols, s->term->span);
  if (rows > 0 && cols > 0) {
    flat->r = (double *)val_rows_flat(m, cols);
    if (!flat->r) fe_error(s->term->span, "the rows differ in length"); /* not a kernel's */
    flat->len = rows * cols;
  } else {
    for (size_t i = 0; i < rows; i++)
      if (m->v[i].u.a->len != 0) fe_error(s->term->span, "the rows differ in length");
    flat->r = offs->r; /* no element is read: the column numbers are empty */
  }
  for (size_t i = 0; i < rows; i++) offs->r[i] = (double)(i * cols);
  for (size_t j = 0; j < cols; j++) colnum->r[j] = (double)j;
  arr[s->vreg] = flat;
  arr[s->vreg + 1] = offs;
  arr[s->vreg + 2] = colnum;
}

/* B_TUPLES (kernel_int.h): the n reals of a's elements, each as an array
   of reals, as arr[vreg] to arr[vreg + n - 1]. */
static void bind_tuples(Array *a, const BindStep *s, const Array **arr) {
  int n = s->slot;
  const Type *elem = s->term->type->elem;
  double *cols[CPU_MAX_STATE], row[CPU_MAX_STATE];
  ASSERT(n <= CPU_MAX_STATE && a->boxed);
  for (int k = 0; k < n; k++) {
    Array *col = val_new_real_array(a->len, s->term->span);
    cols[k] = col->r;
    arr[s->vreg + k] = col;
  }
  for (size_t i = 0; i < a->len; i++) {
    cpu_state_in(a->v[i], elem, row);
    for (int k = 0; k < n; k++) cols[k][i] = row[k];
  }
}

static void run_steps(const Exec *ex, const CpuKernel *k, Value **frames, double *vals, const Array **arr) {
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
    case B_ARRAY: {
      Value v = ex->eval(ex, s->term, f);
      val_host(v.u.a);
      arr[s->vreg] = v.u.a;
      break;
    }
    case B_MATRIX: bind_matrix(ex->eval(ex, s->term, f).u.a, s, arr); break;
    case B_TUPLES: bind_tuples(ex->eval(ex, s->term, f).u.a, s, arr); break;
    }
  }
}

bool cpu_kernel_bind(const Exec *ex, const CpuKernel *k, Value *frame, CpuKernelRun *run) {
  memset(run, 0, sizeof *run);
  run->k = k;
  run->sregs = GC_MALLOC_ATOMIC(sizeof(double) * (size_t)k->nvregs);
  if (!run->sregs) una_internal_error(__FILE__, __LINE__, "out of memory");
  memcpy(run->sregs, k->init, sizeof(double) * (size_t)k->nvregs);
  run->arr = NEW_ARRAY(const Array *, k->nvregs);
  if (k->nsteps == 0 && k->nloops == 0) return true;
  Value **frames = NEW_ARRAY(Value *, k->nctx);
  frames[0] = frame;
  for (int i = 1; i < k->nctx; i++) frames[i] = NEW_ARRAY(Value, k->ctx_nslots[i] > 0 ? k->ctx_nslots[i] : 1);
  FeTry t;
  if (fe_try(&t)) {
    run_steps(ex, k, frames, run->sregs, run->arr);
    fe_untry(&t);
    /* a loop's count (an input or a constant, kernel.h): an integer >= 0,
       else the generic path raises the error where it is evaluated */
    for (int i = 0; i < k->nloops; i++) {
      if (k->loops[i].count < 0) continue; /* a while loop */
      double n = run->sregs[k->loops[i].count];
      if (!(n >= 0 && n == floor(n) && !isinf(n))) return false;
    }
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

/* The element a[i] of a gather, or nan with the fault recorded (error.h)
   when i is not an index of a. */
static inline double gather1(const CpuKernel *k, const Array *a, double i, int dst) {
  if (__builtin_expect(i >= 0 && i < (double)a->len && i == floor(i), 1)) return a->r[(size_t)i];
  fe_fault(cpu_kernel_index_term(k, dst)->span, cpu_bad_index, i, (double)a->len);
  return NAN;
}

/* The block buffer of temporary v. */
static double *home(const CpuKernelRun *run, int v) { return run->scratch + (size_t)B * (size_t)run->k->phys[v]; }

/* Whether idx[0..n) are idx[0], idx[0] + 1, ...: the reads a[i] of a map
   over indices (one vector loop, no branch per element). */
CPU_VECTOR_LOOP static bool consecutive(const double *restrict idx, int n) {
  double i0 = idx[0];
  int bad = 0;
  for (int j = 0; j < n; j++) bad |= idx[j] != i0 + (double)j;
  return !bad;
}

/* The indices of a gather in a branch: idx[j], or 0 where mask[j] is 0,
   into out, without a branch (a select of doubles would stop the loops
   below vectorizing). */
CPU_VECTOR_LOOP static void masked_indices(double *restrict out, const double *restrict idx,
                                           const double *restrict mask, int n) {
  for (int j = 0; j < n; j++) {
    uint64_t bits;
    memcpy(&bits, &idx[j], sizeof bits);
    bits &= -(uint64_t)(mask[j] != 0);
    memcpy(&out[j], &bits, sizeof bits);
  }
}

/* Whether every idx[0..n) is an integer in [0, len) (0 < len <= INT_MAX):
   the checks of a gather, nothing read. */
CPU_VECTOR_LOOP static bool indices_in_range(const double *restrict idx, int n, double len) {
  int bad = 0;
  for (int j = 0; j < n; j++) bad |= !((idx[j] >= 0) & (idx[j] < len));
  if (bad) return false;
  for (int j = 0; j < n; j++) bad |= (double)(int)idx[j] != idx[j]; /* in [0, len): defined */
  return !bad;
}

/* d[j] = r[idx[j]] for the n lanes of a block when every index is an
   integer in [0, len) (0 < len <= INT_MAX); false, with d untouched,
   otherwise. No branch per lane: vector loops check (indices_in_range),
   one reads (gathers). */
CPU_VECTOR_LOOP static bool gather_in_range(double *restrict d, const double *restrict r, const double *restrict idx,
                                            int n, double len) {
  if (!indices_in_range(idx, n, len)) return false;
  for (int j = 0; j < n; j++) d[j] = r[(int)idx[j]];
  return true;
}

/* p[dst] = a[idx] for the n valid elements of a block (the lanes past n
   hold padding, whose indices mean nothing). Consecutive indices in range
   (a map over indices reading a[i]) read a itself: p[dst] points into a
   for a whole block (instructions only read their operands, and the
   next block's gather sets p[dst] again), or the valid lanes are copied. */
static void gather_block(const CpuKernelRun *run, double **p, int dst, const Array *a, int iv, int mv, size_t n) {
  const double *restrict idx = p[iv];
  const double *r = a->r;
  double len = (double)a->len;
  bool seq = false;
  if (n > 0 && idx[0] >= 0 && idx[0] + (double)n <= len && idx[0] == (double)(size_t)idx[0]) {
    if (iv < 2) { /* a parameter: checked once a block (the run's cache) */
      signed char *known = &((CpuKernelRun *)run)->consec[iv];
      if (*known < 0) *known = consecutive(idx, (int)n);
      seq = *known;
    } else {
      seq = consecutive(idx, (int)n);
    }
  }
  if (seq && n == B) {
    p[dst] = (double *)r + (size_t)idx[0];
    return;
  }
  const CpuKernel *k = run->k;
  const double *mask = mv >= 0 ? p[mv] : NULL; /* a gather in a branch: the lanes that take it */
  if (k->noload && k->noload[dst]) { /* a check kernel's: the indices only */
    if (seq) return;
    double ix[B];
    if (mask) masked_indices(ix, idx, mask, (int)n);
    if (a->len > 0 && a->len <= INT_MAX && indices_in_range(mask ? ix : idx, (int)n, len)) return;
    for (size_t j = 0; j < n; j++)
      if (!(mask && mask[j] == 0)) (void)gather1(k, a, idx[j], dst);
    return;
  }
  double *restrict d = p[dst] = home(run, dst);
  if (seq) {
    memcpy(d, r + (size_t)idx[0], sizeof(double) * n);
    for (size_t j = n; j < B; j++) d[j] = 0;
    return;
  }
  if (a->len > 0 && a->len <= INT_MAX) {
    /* a lane that does not take the branch reads element 0, then is 0 */
    double ix[B];
    if (mask) masked_indices(ix, idx, mask, (int)n);
    if (gather_in_range(d, r, mask ? ix : idx, (int)n, len)) {
      if (mask)
        for (size_t j = 0; j < n; j++) d[j] = mask[j] != 0 ? d[j] : 0;
      for (size_t j = n; j < B; j++) d[j] = 0;
      return;
    }
  }
  /* an index out of range or not an integer: each lane checked, the
     first bad one faults */
  for (size_t j = 0; j < n; j++) {
    double i = idx[j];
    if (mask && mask[j] == 0) {
      d[j] = 0;
      continue;
    }
    if (i >= 0 && i < len) { /* an integer in range: a truncation that round-trips (no call of floor) */
      size_t u = (size_t)i;
      if ((double)u == i) {
        d[j] = r[u];
        continue;
      }
    }
    d[j] = gather1(k, a, i, dst);
  }
  for (size_t j = n; j < B; j++) d[j] = 0;
}

static void exec_loop_block(const CpuKernelRun *run, size_t n, double **p, const CpuKLoop *l);

/* One instruction over a block: op (a KInstr's, or X_FUSED with inner,
   outer, left) into d from the registers a, b, c. */
static void exec_one(const CpuKernelRun *run, size_t n, double **p, const XInstr *in) {
  const CpuKernel *k = run->k;
  if (in->op == K_LOOP) {
    exec_loop_block(run, n, p, &k->loops[in->c]);
    return;
  }
  double *d = p[in->dst];
  const double *a = p[in->a];
  const double *b = in->b >= 0 ? p[in->b] : NULL;
  switch (in->op) {
  case X_FUSED: pair_fns[in->left][arith_index(in->inner)][arith_index(in->outer)](d, a, b, p[in->c]); break;
  /* exp, log, sigmoid, sin, cos, tan and tanh have vectorized block
     forms (vmath.h), bit for bit the functions of their C column */
  case PRIM_EXP: cpu_exp_block(d, a, B); break;
  case PRIM_LOG: cpu_log_block(d, a, B); break;
  case PRIM_SIGMOID: cpu_sigmoid_block(d, a, B); break;
  case PRIM_SIN: cpu_sin_block(d, a, B); break;
  case PRIM_COS: cpu_cos_block(d, a, B); break;
  case PRIM_TAN: cpu_tan_block(d, a, B); break;
  case PRIM_TANH: cpu_tanh_block(d, a, B); break;
  case K_SELECT: k_select(d, a, b, p[in->c]); break;
  case K_GATHER: gather_block(run, p, in->dst, run->arr[in->a], in->b, in->c, n); break;
  default:
    ASSERT(in->op >= 0 && in->op < PRIM__COUNT && block_fns[in->op]);
    block_fns[in->op](d, a, b);
  }
}

/* A loop over a block: its state from init, count times its body (with
   the index's block set to the iteration), then the state set to next,
   through the staging blocks (next may name the state itself). Ctrl-C
   stops it; the poll after the kernel raises. */
static void exec_code(const CpuKernelRun *run, size_t n, double **p, const KInstr *code, int ncode) {
  for (int i = 0; i < ncode; i++) {
    const KInstr *bi = &code[i];
    XInstr x = {bi->op, -1, -1, false, bi->dst, bi->a, bi->b, bi->c};
    exec_one(run, n, p, &x);
  }
}

static void exec_loop_block(const CpuKernelRun *run, size_t n, double **p, const CpuKLoop *l) {
  for (int j = 0; j < l->n; j++)
    if (p[l->state[j]] != p[l->init[j]]) memcpy(p[l->state[j]], p[l->init[j]], sizeof(double) * B);
  if (l->count < 0) { /* while: the lanes past n, padding, never run */
    double *act = p[l->mask];
    for (size_t q = 0; q < B; q++) act[q] = q < n;
    while (!fe_stopping()) {
      exec_code(run, n, p, l->cond_code, l->ncond);
      const double *c = p[l->cond];
      bool any = false;
      for (size_t q = 0; q < B; q++) {
        act[q] = act[q] != 0 && c[q] != 0;
        any = any || act[q] != 0;
      }
      if (!any) return;
      exec_code(run, n, p, l->body, l->nbody);
      for (int j = 0; j < l->n; j++) memcpy(run->stage + (size_t)B * (size_t)j, p[l->next[j]], sizeof(double) * B);
      for (int j = 0; j < l->n; j++) {
        double *st = p[l->state[j]];
        const double *nx = run->stage + (size_t)B * (size_t)j;
        for (size_t q = 0; q < B; q++)
          if (act[q] != 0) st[q] = nx[q];
      }
    }
    return;
  }
  double count = run->sregs[l->count];
  double *ix = p[l->index];
  for (double it = 0; it < count && !fe_stopping(); it++) {
    for (int q = 0; q < B; q++) ix[q] = it;
    exec_code(run, n, p, l->body, l->nbody);
    for (int j = 0; j < l->n; j++) memcpy(run->stage + (size_t)B * (size_t)j, p[l->next[j]], sizeof(double) * B);
    for (int j = 0; j < l->n; j++) memcpy(p[l->state[j]], run->stage + (size_t)B * (size_t)j, sizeof(double) * B);
  }
}

/* The compiled block program's call for an instruction it leaves to the
   engine (jit.h). */
static void exec_pc(const void *run, size_t n, double **p, int pc) {
  const CpuKernelRun *r = run;
  exec_one(r, n, p, &r->k->exec[pc]);
}

static void exec_block(const CpuKernelRun *run, size_t n, double **p) {
  const CpuKernel *k = run->k;
  CpuJitBlockFn fn = cpu_jit_block(k);
  if (fn) {
    fn(p, run, n, exec_pc);
    return;
  }
  for (int pc = 0; pc < k->nexec; pc++) exec_one(run, n, p, &k->exec[pc]);
}

/* run's block buffers: slot < 0, new ones; else the kernel's spare set
   for that slot (kernel_int.h), made on first use. */
static void blocks_in(CpuKernelRun *run, int slot) {
  const CpuKernel *k = run->k;
  size_t bytes = sizeof(double) * B * (size_t)(k->ninputs + k->nphys + 2 + (k->nloops ? CPU_MAX_STATE : 0));
  CpuKernel *mk = (CpuKernel *)k; /* the spare sets are a cache */
  double *mem = slot >= 0 ? mk->spare[slot] : NULL;
  if (!mem) {
    mem = GC_MALLOC_ATOMIC(bytes);
    if (!mem) una_internal_error(__FILE__, __LINE__, "out of memory for kernel blocks");
    if (slot >= 0) mk->spare[slot] = mem;
  }
  if (slot >= 0) {
    if (!mk->spare_ptr[slot]) mk->spare_ptr[slot] = NEW_ARRAY(double *, k->nvregs);
    run->ptr = mk->spare_ptr[slot];
    memset(run->ptr, 0, sizeof(double *) * (size_t)k->nvregs);
  } else {
    run->ptr = NEW_ARRAY(double *, k->nvregs);
  }
  run->bcast = mem;
  run->scratch = mem + (size_t)B * (size_t)k->ninputs;
  run->pad = run->scratch + (size_t)B * (size_t)k->nphys;
  memset(run->pad, 0, sizeof(double) * 2 * B);
  run->stage = k->nloops ? run->pad + 2 * B : NULL;
  for (int i = 0; i < k->ninputs; i++) {
    int v = k->inputs[i];
    double *blk = run->bcast + (size_t)B * (size_t)i;
    for (int j = 0; j < B; j++) blk[j] = run->sregs[v];
    run->ptr[v] = blk;
  }
  for (int v = 0; v < k->nvregs; v++)
    if (k->phys[v] >= 0) run->ptr[v] = run->scratch + (size_t)B * (size_t)k->phys[v];
}

static void ensure_blocks(CpuKernelRun *run) {
  if (!run->ptr) blocks_in(run, -1);
}

void cpu_kernel_prepare(CpuKernelRun *run) { ensure_blocks(run); }

void cpu_kernel_prepare_slot(CpuKernelRun *run, int slot) {
  if (!run->ptr) blocks_in(run, slot);
}

void cpu_kernel_clone_slot(const CpuKernelRun *src, CpuKernelRun *dst, int slot) {
  *dst = *src;
  dst->sregs = GC_MALLOC_ATOMIC(sizeof(double) * (size_t)src->k->nvregs);
  if (!dst->sregs) una_internal_error(__FILE__, __LINE__, "out of memory");
  memcpy(dst->sregs, src->sregs, sizeof(double) * (size_t)src->k->nvregs);
  dst->bcast = dst->scratch = dst->pad = dst->stage = NULL;
  dst->ptr = NULL;
  blocks_in(dst, slot);
}

void cpu_kernel_clone(const CpuKernelRun *src, CpuKernelRun *dst) { cpu_kernel_clone_slot(src, dst, -1); }

const double *cpu_kernel_out(const CpuKernelRun *run, int i) {
  ASSERT(i >= 0 && i < run->k->nresults);
  return run->ptr[run->k->results[i]];
}


/* Runs the block whose parameters p[0], p[1] are set (n elements); see
   cpu_kernel_block_into. x and y: the caller's parameter blocks, which no
   result is written into. */
static void run_block(CpuKernelRun *run, const double *x, const double *y, size_t n, double *const *outs) {
  const CpuKernel *k = run->k;
  double **p = run->ptr;
  if (!outs) {
    exec_block(run, n, p);
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
  exec_block(run, n, p);
  for (int i = 0; i < k->nresults; i++)
    if (outs[i] && p[k->results[i]] != outs[i]) memcpy(outs[i], p[k->results[i]], sizeof(double) * n);
}

/* Results at home (a whole block before may have sent them elsewhere). */
static void results_home(CpuKernelRun *run) {
  const CpuKernel *k = run->k;
  for (int i = 0; i < k->nresults; i++)
    if (k->phys[k->results[i]] >= 0) run->ptr[k->results[i]] = home(run, k->results[i]);
}

void cpu_kernel_block_into(CpuKernelRun *run, const double *x, const double *y, size_t n, double *const *outs) {
  ASSERT(n <= B);
  ensure_blocks(run);
  double **p = run->ptr;
  results_home(run);
  if (n == B) {
    p[0] = (double *)x;
    p[1] = (double *)(run->k->nparams == 2 ? y : x);
  } else {
    memcpy(run->pad, x, sizeof(double) * n);
    p[0] = run->pad;
    p[1] = run->pad;
    if (run->k->nparams == 2) {
      memcpy(run->pad + B, y, sizeof(double) * n);
      p[1] = run->pad + B;
    }
  }
  run->consec[0] = run->consec[1] = -1;
  run_block(run, x, y, n, outs);
}

/* i0, i0 + 1, ..., i0 + n - 1 into d (exact: i0 + n <= 2^53). */
CPU_VECTOR_LOOP static void fill_indices(double *restrict d, double i0, int n) {
  for (int q = 0; q < n; q++) d[q] = i0 + (double)q;
}

void cpu_kernel_block_indices(CpuKernelRun *run, size_t i0, size_t n, double *const *outs) {
  ASSERT(n <= B);
  ensure_blocks(run);
  double **p = run->ptr;
  results_home(run);
  fill_indices(run->pad, (double)i0, (int)n);
  p[0] = p[1] = run->pad;
  run->consec[0] = run->consec[1] = 1; /* known: gathers at them check the ends only */
  run_block(run, NULL, NULL, n, outs);
}

void cpu_kernel_block(CpuKernelRun *run, const double *x, const double *y, size_t n, double *out) {
  double *outs[1] = {out};
  cpu_kernel_block_into(run, x, y, n, outs);
}

static void run_code_in(CpuKernelRun *run, double *r, const KInstr *in, const KInstr *end);

/* A loop on one element's registers (see exec_loop_block). */
static void run_loop(CpuKernelRun *run, double *r, const CpuKLoop *l) {
  double st[CPU_MAX_STATE];
  for (int j = 0; j < l->n; j++) st[j] = r[l->init[j]];
  for (int j = 0; j < l->n; j++) r[l->state[j]] = st[j];
  if (l->count < 0) { /* while */
    while (!fe_stopping()) {
      run_code_in(run, r, l->cond_code, l->cond_code + l->ncond);
      if (r[l->cond] == 0) return;
      run_code_in(run, r, l->body, l->body + l->nbody);
      for (int j = 0; j < l->n; j++) st[j] = r[l->next[j]];
      for (int j = 0; j < l->n; j++) r[l->state[j]] = st[j];
    }
    return;
  }
  double count = r[l->count];
  for (double it = 0; it < count && !fe_stopping(); it++) {
    r[l->index] = it;
    run_code_in(run, r, l->body, l->body + l->nbody);
    for (int j = 0; j < l->n; j++) st[j] = r[l->next[j]];
    for (int j = 0; j < l->n; j++) r[l->state[j]] = st[j];
  }
}

/* Runs the code on the registers r (the parameters set). */
void cpu_kernel_run_pc(const void *run, double *r, int pc) {
  CpuKernelRun *rn = (CpuKernelRun *)run;
  run_code_in(rn, r, &rn->k->code[pc], &rn->k->code[pc + 1]);
}

static inline void run_code(CpuKernelRun *run, double *r) {
  CpuJitScalarFn fn = cpu_jit_scalar(run->k);
  if (fn) fn(r, run, cpu_kernel_run_pc);
  else run_code_in(run, r, run->k->code, run->k->code + run->k->ninstr);
}

static void run_code_in(CpuKernelRun *run, double *r, const KInstr *in, const KInstr *end) {
  const CpuKernel *k = run->k;
  for (; in < end; in++) {
    if (in->op == K_LOOP) {
      run_loop(run, r, &k->loops[in->c]);
      continue;
    }
    double a = r[in->a];
    double b = in->b >= 0 ? r[in->b] : 0;
    double v;
    if (in->op == K_SELECT) v = r[in->c] != 0 ? a : b;
    else if (in->op == K_GATHER) v = in->c >= 0 && r[in->c] == 0 ? 0 : gather1(k, run->arr[in->a], b, in->dst);
    else v = cpu_scalar((Prim)in->op, a, b);
    r[in->dst] = v;
  }
}

double cpu_kernel_call1(CpuKernelRun *run, double x, double y) {
  double *r = run->sregs;
  r[0] = x;
  r[1] = y;
  run_code(run, r);
  return r[run->k->result];
}

void cpu_kernel_step(CpuKernelRun *run, const double *params, double *results) {
  const CpuKernel *k = run->k;
  double *r = run->sregs;
  for (int i = 0; i < k->nparams; i++) r[i] = params[i];
  run_code(run, r);
  for (int i = 0; i < k->nresults; i++) results[i] = r[k->results[i]];
}
