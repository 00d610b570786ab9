/* array_int.c: what the array builtins share (array_int.h): the builtin
   monoids' loops, binding a lambda's kernel, evaluating an array argument,
   the reduce job and its bracketing, map2's length check. array_ops.c,
   scan_map.c and siblings.c build on it; it depends on none of them. */
#include "array_int.h"
#include "scalar.h"

#define B CPU_BLOCK

/* ---- monoid detection and loops ---- */

CpuMonoid cpu_monoid_of(const Term *lam, bool *swapped) {
  *swapped = false;
  if (lam->kind != T_LAM || lam->nsyms != 2 || lam->nkids < 1) return CPU_M_NONE;
  const Sym *x = lam->syms[0], *y = lam->syms[1];
  if (!x->type || x->type->kind != TY_REAL || !y->type || y->type->kind != TY_REAL) return CPU_M_NONE;
  const Term *b = lam->kids[0];
  if (b->kind != T_PRIM || b->nkids != 2) return CPU_M_NONE;
  const Term *l = b->kids[0], *r = b->kids[1];
  if (l->kind != T_VAR || r->kind != T_VAR) return CPU_M_NONE;
  if (l->sym == x && r->sym == y) *swapped = false;
  else if (l->sym == y && r->sym == x) *swapped = true;
  else return CPU_M_NONE;
  const PrimInfo *pi = &fe_prims[b->prim];
  if (pi->sig != SIG_RR_R || !(pi->laws & LAW_ASSOC) || isnan(pi->unit)) return CPU_M_NONE;
  for (int m = CPU_M_ADD; m <= CPU_M_MIN; m++)
    if (cpu_monoid_prim((CpuMonoid)m) == b->prim) return (CpuMonoid)m;
  return CPU_M_NONE;
}

Prim cpu_monoid_prim(CpuMonoid m) {
  static const Prim prim[] = {[CPU_M_ADD] = PRIM_ADD, [CPU_M_MUL] = PRIM_MUL, [CPU_M_MAX] = PRIM_MAX,
                              [CPU_M_MIN] = PRIM_MIN};
  ASSERT(m > CPU_M_NONE && m <= CPU_M_MIN);
  return prim[m];
}

/* OP(l, r): the lambda body with x = l, y = r. */
#define OP_ADD(l, r) ((l) + (r))
#define OP_MUL(l, r) ((l) * (r))
#define OP_MAX(l, r) cpu_max((l), (r))
#define OP_MAXSW(l, r) cpu_max((r), (l))
#define OP_MIN(l, r) cpu_min((l), (r))
#define OP_MINSW(l, r) cpu_min((r), (l))

/* The monoid folds and scans poll for Ctrl-C every this many elements. */
enum { SCAN_POLL = 16384 };

#define DEFINE_MONOID(NAME, OP)                                                 \
  static double foldl_##NAME(double v, const double *a, size_t n, Span s) {    \
    double acc = v;                                                             \
    for (size_t i = 0; i < n; i++) {                                            \
      if ((i & (SCAN_POLL - 1)) == 0) fe_poll_interrupt(s);                    \
      acc = OP(acc, a[i]);                                                      \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  CPU_VECTOR_LOOP static void lanes_##NAME(double *restrict acc,              \
                                           const double *restrict x, size_t k) { \
    for (size_t j = 0; j < k; j++) acc[j] = OP(acc[j], x[j]);                   \
  }                                                                             \
  static double op_##NAME(double l, double r) { return OP(l, r); }             \
  static double lscan_##NAME(double acc, const double *x, size_t k,            \
                             double *out) {                                    \
    for (size_t j = 0; j < k; j++) out[j] = acc = OP(acc, x[j]);                \
    return acc;                                                                 \
  }                                                                             \
  static double rscan_##NAME(double acc, const double *x, size_t k,            \
                             double *out) {                                    \
    for (size_t j = k; j-- > 0;) out[j] = acc = OP(x[j], acc);                  \
    return acc;                                                                 \
  }                                                                             \
  static double lscanc_##NAME(double acc, const double *x, size_t k,           \
                              double *out, double c) {                         \
    for (size_t j = 0; j < k; j++) {                                            \
      acc = OP(acc, x[j]);                                                      \
      out[j] = OP(c, acc);                                                      \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  static double rscanc_##NAME(double acc, const double *x, size_t k,           \
                              double *out, double c) {                         \
    for (size_t j = k; j-- > 0;) {                                              \
      acc = OP(x[j], acc);                                                      \
      out[j] = OP(acc, c);                                                      \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  CPU_VECTOR_LOOP static void combl_##NAME(double c, double *restrict x,       \
                                           size_t k) {                         \
    for (size_t j = 0; j < k; j++) x[j] = OP(c, x[j]);                          \
  }                                                                             \
  CPU_VECTOR_LOOP static void combr_##NAME(double c, double *restrict x,       \
                                           size_t k) {                         \
    for (size_t j = 0; j < k; j++) x[j] = OP(x[j], c);                          \
  }                                                                             \
  CPU_VECTOR_LOOP static void zipr_##NAME(double *restrict acc,               \
                                          const double *restrict x, size_t k) { \
    for (size_t j = 0; j < k; j++) acc[j] = OP(x[j], acc[j]);                   \
  }                                                                             \
  static double lscanf_##NAME(double acc, const double *x, size_t k,           \
                              double *out, double *lanes, const double *y) {   \
    for (size_t j = 0; j < k; j++) {                                            \
      out[j] = acc = OP(acc, x[j]);                                             \
      lanes[j] = OP(lanes[j], y[j]);                                            \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  static double rscanf_##NAME(double acc, const double *x, size_t k,           \
                              double *out, double *lanes, const double *y) {   \
    for (size_t j = k; j-- > 0;) {                                              \
      out[j] = acc = OP(x[j], acc);                                             \
      lanes[j] = OP(lanes[j], y[j]);                                            \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  static double lzscan_##NAME(double acc, const double *x, size_t k,           \
                              double *o, double c1, double c2) {               \
    for (size_t j = 0; j < k; j++) {                                            \
      acc = OP(acc, x[j]);                                                      \
      o[j] = OP(OP(o[j], c1), OP(c2, acc));                                     \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  static double rzscan_##NAME(double acc, const double *x, size_t k,           \
                              double *o, double c1, double c2) {               \
    for (size_t j = k; j-- > 0;) {                                              \
      acc = OP(x[j], acc);                                                      \
      o[j] = OP(OP(o[j], c1), OP(c2, acc));                                     \
    }                                                                           \
    return acc;                                                                 \
  }                                                                             \
  static void scatter_##NAME(double *d, const double *idx, const double *v,    \
                             size_t k) {                                       \
    size_t ahead = k < SCATTER_AHEAD ? k : SCATTER_AHEAD;                       \
    for (size_t j = 0; j < k - ahead; j++) {                                    \
      __builtin_prefetch(&d[(size_t)idx[j + ahead]], 1, 1);                     \
      size_t i = (size_t)idx[j];                                                \
      d[i] = OP(d[i], v[j]);                                                    \
    }                                                                           \
    for (size_t j = k - ahead; j < k; j++) {                                    \
      size_t i = (size_t)idx[j];                                                \
      d[i] = OP(d[i], v[j]);                                                    \
    }                                                                           \
  }

/* How far ahead a scatter prefetches its places (random places in a
   destination larger than the caches miss; the indices are read ahead
   anyway, all in range: scatter.c checks a block before it scatters it). */
enum { SCATTER_AHEAD = 32 };

DEFINE_MONOID(add, OP_ADD)
DEFINE_MONOID(mul, OP_MUL)
DEFINE_MONOID(max, OP_MAX)
DEFINE_MONOID(maxsw, OP_MAXSW)
DEFINE_MONOID(min, OP_MIN)
DEFINE_MONOID(minsw, OP_MINSW)

#define MONOID_FNS(NAME, COMMUTES, UNIT)                                                                   \
  {                                                                                                        \
    foldl_##NAME, lanes_##NAME, op_##NAME, lscan_##NAME, rscan_##NAME, lscanc_##NAME, rscanc_##NAME,       \
        combl_##NAME, combr_##NAME, zipr_##NAME, lscanf_##NAME, rscanf_##NAME, lzscan_##NAME, rzscan_##NAME,   \
        scatter_##NAME, COMMUTES, UNIT                                                                     \
  }

/* + and * commute bit for bit and have an exact unit (x + -0 and x * 1
   are x, whatever x); max and min do neither (signed zeros, nan). */
static const MonoidFns monoids[6] = {
    MONOID_FNS(add, true, -0.0), MONOID_FNS(mul, true, 1.0),  MONOID_FNS(max, false, 0),
    MONOID_FNS(maxsw, false, 0), MONOID_FNS(min, false, 0), MONOID_FNS(minsw, false, 0),
};

/* The operands' order matters only for an operator that does not commute
   bit for bit (LAW_COMM_BITS in prims.def: + * do; max and min do not, by
   signed zeros and nan). */
const MonoidFns *cpu_monoid_loops(const Exec *ex, const Term *lam) {
  if (!ex->monoid || ex->meter) return NULL;
  bool sw;
  CpuMonoid m = cpu_monoid_of(lam, &sw);
  if (m == CPU_M_NONE) return NULL;
  sw = sw && !(fe_prims[cpu_monoid_prim(m)].laws & LAW_COMM_BITS);
  switch (m) {
  case CPU_M_ADD: return sw ? NULL : &monoids[0];
  case CPU_M_MUL: return sw ? NULL : &monoids[1];
  case CPU_M_MAX: return &monoids[sw ? 3 : 2];
  case CPU_M_MIN: return &monoids[sw ? 5 : 4];
  case CPU_M_NONE: break;
  }
  return NULL;
}

bool cpu_kernels_enabled(const Exec *ex) { return ex->kernel && !ex->meter; }

bool cpu_lam_kernel(const Exec *ex, const Term *lam, Value *frame, CpuKernelRun *run) {
  if (!ex->kernel || ex->meter) return false;
  const CpuKernel *k = cpu_kernel_for(lam);
  return k && cpu_kernel_bind(ex, k, frame, run);
}


Array *cpu_eval_array(const Exec *ex, const Term *t, Value *frame) {
  Value v = ex->eval(ex, t, frame);
  ASSERT(v.kind == V_ARRAY);
  val_host(v.u.a);
  return v.u.a;
}


int cpu_kernel_runs(int nthreads, CpuKernelRun *runs, const CpuKernelRun *run, int nchunks) {
  int nt = nthreads < nchunks ? nthreads : nchunks;
  runs[0] = *run;
  cpu_kernel_prepare_slot(&runs[0], 0);
  for (int i = 1; i < nt; i++) cpu_kernel_clone_slot(run, &runs[i], i);
  return nt;
}


void cpu_red_job_init(RedJob *j) {
  j->m = NULL;
  j->r = j->x = j->y = NULL;
  j->ordered = false;
  j->v = 0;
  j->n = 0;
  j->nchunks = 0;
  j->nthreads = 0;
  memset(j->nlanes, 0, sizeof j->nlanes);
}

static double red_op(RedJob *j, int thread, double l, double r) {
  return j->m ? j->m->op(l, r) : cpu_kernel_call1(&j->op[thread], l, r);
}

void cpu_red_block(RedJob *j, int thread, int c, size_t lo, size_t i, size_t k) {
  double buf[B], *out = buf;
  const double *e = j->r ? j->r + i : buf;
  if (!j->r && j->x) cpu_kernel_block(&j->g[thread], j->x + i, j->y ? j->y + i : NULL, k, buf);
  else if (!j->r) cpu_kernel_block_indices(&j->g[thread], i, k, &out);
  cpu_red_fold(j, thread, c, lo, i, k, e);
}

void cpu_red_fold(RedJob *j, int thread, int c, size_t lo, size_t i, size_t k, const double *e) {
  double *acc = j->acc[c], tmp[B];
  if (j->ordered) {
    size_t q = 0;
    if (i == lo) {
      acc[0] = c == 0 ? red_op(j, thread, j->v, e[0]) : e[0];
      j->nlanes[c] = 1;
      q = 1;
    }
    for (; q < k; q++) acc[0] = red_op(j, thread, acc[0], e[q]);
    return;
  }
  if (i == lo) {
    memcpy(acc, e, sizeof(double) * k);
    j->nlanes[c] = k;
    if (c == 0) acc[0] = red_op(j, thread, j->v, e[0]);
  } else if (j->m) {
    j->m->lanes(acc, e, k);
  } else {
    cpu_kernel_block(&j->op[thread], acc, e, k, tmp);
    memcpy(acc, tmp, sizeof(double) * k);
  }
}


double cpu_red_finish(RedJob *j) {
  double *acc = j->acc[0];
  for (int c = 1; c < j->nchunks; c++)
    for (size_t l = 0; l < j->nlanes[c]; l++) acc[l] = red_op(j, 0, acc[l], j->acc[c][l]);
  double r = acc[0];
  for (size_t l = 1; l < j->nlanes[0]; l++) r = red_op(j, 0, r, acc[l]);
  return r;
}


bool cpu_red_operator(const Exec *ex, RedJob *j, const Term *lam, Value *frame) {
  j->nthreads = cpu_exec_threads(ex);
  j->m = cpu_monoid_loops(ex, lam);
  if (j->m) return true;
  CpuKernelRun run;
  if (!cpu_lam_kernel(ex, lam, frame, &run)) return false;
  cpu_kernel_runs(j->nthreads, j->op, &run, j->nchunks);
  j->ordered = !cpu_kernel_commutes(run.k);
  return true;
}


void cpu_check_map2_lengths(const Term *t, size_t la, size_t lb) {
  if (la != lb) fe_error(t->span, "map2: lengths %zu and %zu differ", la, lb);
}

void cpu_check_map3_lengths(const Term *t, size_t la, size_t lb, size_t lc) {
  if (la != lb || la != lc) fe_error(t->span, "map3: lengths %zu, %zu and %zu differ", la, lb, lc);
}

