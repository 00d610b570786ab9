/* plan.c: the GPU kernels of a term (see plan.h).

   One walk over the term, the bodies of the functions it calls (each once)
   and the lambda bodies in it. At each array builtin that qualifies, the
   walk plans its kernel (fusing the maps written inline in its array
   argument into its GpuSrc) and marks the fused maps, which then get no
   kernel of their own; the walk still enters their arguments and lambda
   bodies, which evaluation reaches too. The order of the walk numbers the
   kernels and functions, so a term's plan and source are deterministic. */
#include "plan.h"
#include "emit.h"
#include "../array_ops.h"
#include "../commute.h"

typedef struct Planner {
  GpuPlan *p;
  int capk, capf;
  PtrMap defs;    /* Def* -> mark: bodies walked */
  PtrMap fns;     /* LAM term -> GpuFn* */
  PtrMap fused;   /* map term -> mark: part of another kernel's GpuSrc */
  PtrMap used;    /* Sym* -> mark: read somewhere in what is walked */
} Planner;

static char mark;

static bool real_array(const Type *t) { return t && t->kind == TY_ARRAY && t->elem->kind == TY_REAL; }
static bool real(const Type *t) { return t && t->kind == TY_REAL; }

/* The input vregs that k's code reads, in increasing order. */
static void fn_inputs(GpuFn *f) {
  const CpuKernel *k = f->k;
  int nv = cpu_kernel_nvregs(k), n = cpu_kernel_size(k);
  char *used = una_alloc((size_t)nv + 1);
  const CpuKInstr *code = cpu_kernel_code(k);
  for (int i = 0; i < n; i++) {
    used[code[i].a] = 1;
    if (code[i].b >= 0) used[code[i].b] = 1;
    if (code[i].c >= 0) used[code[i].c] = 1;
  }
  used[cpu_kernel_result(k)] = 1;
  f->inputs = una_alloc(sizeof(int) * ((size_t)nv + 1));
  for (int v = 0; v < nv; v++)
    if (used[v] && cpu_kernel_vreg_kind(k, v) == CPU_VR_INPUT) f->inputs[f->ninputs++] = v;
}

/* The device function of lam, made on first use; NULL when lam has no
   scalar kernel or its result is not R. */
static const GpuFn *fn_of(Planner *pl, const Term *lam) {
  if (!lam || lam->kind != T_LAM) return NULL;
  GpuFn *f = ptrmap_get(&pl->fns, lam);
  if (f) return f;
  const CpuKernel *k = cpu_kernel_for(lam);
  if (!k || cpu_kernel_returns_bool(k)) return NULL;
  f = NEW(GpuFn);
  f->lam = lam;
  f->k = k;
  f->id = pl->p->nfns;
  fn_inputs(f);
  if (pl->p->nfns >= pl->capf) {
    pl->capf = pl->capf ? pl->capf * 2 : 16;
    GpuFn **nf = NEW_ARRAY(GpuFn *, pl->capf);
    if (pl->p->nfns) memcpy(nf, pl->p->fns, sizeof(GpuFn *) * (size_t)pl->p->nfns);
    pl->p->fns = nf;
  }
  pl->p->fns[pl->p->nfns++] = f;
  ptrmap_put(&pl->fns, lam, f);
  return f;
}

/* Whether t is a map or map2 over [R] arrays with a scalar kernel of R result. */
static bool fusable(Planner *pl, const Term *t) {
  if (t->kind != T_PRIM || (t->prim != PRIM_MAP && t->prim != PRIM_MAP2) || !real_array(t->type)) return false;
  for (int i = 1; i < t->nkids; i++)
    if (!real_array(t->kids[i]->type)) return false;
  return fn_of(pl, t->kids[0]) != NULL;
}

typedef struct SrcBuild {
  GpuSrc **leaves;
  int nleaves, cap;
  const GpuFn **fns;
  int nfns, capf;
} SrcBuild;

static void add_fn(SrcBuild *b, const GpuFn *f) {
  for (int i = 0; i < b->nfns; i++)
    if (b->fns[i] == f) return;
  if (b->nfns >= b->capf) {
    b->capf = b->capf ? b->capf * 2 : 8;
    const GpuFn **n = NEW_ARRAY(const GpuFn *, b->capf);
    if (b->nfns) memcpy(n, b->fns, sizeof(GpuFn *) * (size_t)b->nfns);
    b->fns = n;
  }
  b->fns[b->nfns++] = f;
}

/* The GpuSrc of the array term t: maps written inline are fused (and
   marked), anything else is a leaf. */
static GpuSrc *src_of(Planner *pl, SrcBuild *b, const Term *t, bool top) {
  GpuSrc *s = NEW(GpuSrc);
  s->term = t;
  if (fusable(pl, t)) {
    s->fn = fn_of(pl, t->kids[0]);
    add_fn(b, s->fn);
    if (!top) ptrmap_put(&pl->fused, t, &mark);
    s->a = src_of(pl, b, t->kids[1], false);
    if (t->prim == PRIM_MAP2) s->b = src_of(pl, b, t->kids[2], false);
    return s;
  }
  s->leaf = true;
  s->index = b->nleaves;
  if (b->nleaves >= b->cap) {
    b->cap = b->cap ? b->cap * 2 : 8;
    GpuSrc **n = NEW_ARRAY(GpuSrc *, b->cap);
    if (b->nleaves) memcpy(n, b->leaves, sizeof(GpuSrc *) * (size_t)b->nleaves);
    b->leaves = n;
  }
  b->leaves[b->nleaves++] = s;
  return s;
}

static GpuKernel *add_kernel(Planner *pl, GpuKernelKind kind, const Term *t) {
  GpuKernel *k = NEW(GpuKernel);
  k->kind = kind;
  k->term = t;
  k->id = pl->p->nkernels;
  static const char *const stem[] = {"map", "reduce", "scan", "scan_seq", "foldl", "iota", "replicate", "rand", "check"};
  const char *what = (kind == GK_MAP || kind == GK_CHECK) && t->prim == PRIM_MAP2 ? "map2"
                     : kind == GK_SCAN || kind == GK_SCAN_SEQ ? (t->prim == PRIM_SCANR ? "scanr" : "scanl")
                                                              : stem[kind];
  k->name = una_sprintf("una_%s%s_%d", what, kind == GK_SCAN_SEQ ? "_seq" : kind == GK_CHECK ? "_check" : "", k->id);
  if (pl->p->nkernels >= pl->capk) {
    pl->capk = pl->capk ? pl->capk * 2 : 16;
    GpuKernel **n = NEW_ARRAY(GpuKernel *, pl->capk);
    if (pl->p->nkernels) memcpy(n, pl->p->kernels, sizeof(GpuKernel *) * (size_t)pl->p->nkernels);
    pl->p->kernels = n;
  }
  pl->p->kernels[pl->p->nkernels++] = k;
  ptrmap_put(&pl->p->index, t, k);
  return k;
}

/* Plans a kernel with elements (the array term arr) and, for folds and
   scans, operator op; the functions of the elements come first. */
static void plan_src(Planner *pl, GpuKernel *k, const Term *arr, const GpuFn *op, bool top) {
  SrcBuild b = {0};
  k->src = src_of(pl, &b, arr, top);
  k->op = op;
  if (op) add_fn(&b, op);
  k->leaves = b.leaves;
  k->nleaves = b.nleaves;
  k->fns = b.fns;
  k->nfns = b.nfns;
}

/* The kernel of the array builtin t, if it qualifies. */
static void plan_builtin(Planner *pl, const Term *t) {
  if (ptrmap_get(&pl->fused, t) || ptrmap_get(&pl->p->index, t)) return;
  switch (t->prim) {
  case PRIM_MAP:
  case PRIM_MAP2:
    if (fusable(pl, t)) plan_src(pl, add_kernel(pl, GK_MAP, t), t, NULL, true);
    return;
  case PRIM_REDUCE:
  case PRIM_FOLDL:
  case PRIM_SCANL:
  case PRIM_SCANR: {
    /* accumulator and elements R: the type of v, and of A's elements */
    if (!real(t->kids[1]->type) || !real_array(t->kids[2]->type)) return;
    const GpuFn *op = fn_of(pl, t->kids[0]);
    if (!op) return;
    GpuKernelKind kind = GK_FOLDL;
    CpuMonoid m = CPU_M_NONE;
    if (t->prim == PRIM_REDUCE) kind = GK_REDUCE;
    if (t->prim == PRIM_SCANL || t->prim == PRIM_SCANR) {
      bool swapped;
      m = cpu_monoid_of(t->kids[0], &swapped);
      kind = m != CPU_M_NONE ? GK_SCAN : GK_SCAN_SEQ;
    }
    GpuKernel *k = add_kernel(pl, kind, t);
    k->monoid = m;
    k->right = t->prim == PRIM_SCANR;
    k->ordered = kind == GK_REDUCE && !cpu_kernel_commutes(op->k);
    plan_src(pl, k, t->kids[2], op, false);
    return;
  }
  case PRIM_IOTA: add_kernel(pl, GK_IOTA, t); return;
  case PRIM_RAND: add_kernel(pl, GK_RAND, t); return;
  case PRIM_REPLICATE:
    if (real_array(t->type)) add_kernel(pl, GK_REPLICATE, t);
    return;
  default: return;
  }
}

static void walk(Planner *pl, const Term *t);

/* Marks every variable read in t in pl->used. */
static void mark_uses(Planner *pl, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_VAR) ptrmap_put(&pl->used, t->sym, &mark);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) mark_uses(pl, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

static void walk_def(Planner *pl, const Def *d) {
  if (ptrmap_get(&pl->defs, d)) return;
  ptrmap_put(&pl->defs, d, &mark);
  mark_uses(pl, d->body);
  walk(pl, d->body);
}

/* A let of a map or map2 whose variable is never read: the optimizer keeps
   it only for the errors it may raise (map2's length check, an error in a
   leaf). It gets a kernel that launches nothing: its leaves are evaluated
   and its lengths checked, and no element is computed. */
static void plan_dead_let(Planner *pl, const Term *t) {
  const Term *rhs = t->kids[0];
  if (ptrmap_get(&pl->used, t->sym) || ptrmap_get(&pl->p->index, rhs) || !fusable(pl, rhs)) return;
  GpuKernel *k = add_kernel(pl, GK_CHECK, rhs);
  plan_src(pl, k, rhs, NULL, true);
}

static void walk(Planner *pl, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_LET) plan_dead_let(pl, t);
    if (t->kind == T_PRIM && fe_prims[t->prim].cls == P_ARRAY) plan_builtin(pl, t);
    if (t->kind == T_CALL) walk_def(pl, t->def);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) walk(pl, t->kids[i]);
    t = t->kids[t->nkids - 1]; /* the last child in a loop: let chains are long */
  }
}

static GpuPlan *finish(Planner *pl) {
  pl->p->source = gpu_emit_plan(pl->p);
  return pl->p;
}

static void init(Planner *pl) {
  memset(pl, 0, sizeof *pl);
  pl->p = NEW(GpuPlan);
}

GpuPlan *gpu_plan_def(const Def *d) {
  Planner pl;
  init(&pl);
  walk_def(&pl, d);
  return finish(&pl);
}

int gpu_kernel_launches(const GpuKernel *k) {
  switch (k->kind) {
  case GK_REDUCE: return 2;
  case GK_SCAN: return 3;
  case GK_CHECK: return 0;
  default: return 1;
  }
}
