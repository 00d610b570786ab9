/* lower.c: an optimized Def -> its execution plan (see plan.h).

   First the Def's body is copied (sharing kept: a node reached twice is
   copied once), then one walk over the copy, the bodies of the Defs it
   calls (each copied and walked once, calls retargeted to the copies) and
   the lambda bodies in it decides, node by node:
   - every lambda gets its scalar program (backend/kernel.h), when it has
     one;
   - every array builtin that qualifies gets its kernel, with the maps
     written inline in its array argument fused into its elements (those
     maps are marked fused and get no kernel of their own; the walk still
     enters their arguments and lambda bodies, which evaluation reaches
     too);
   - a map that computes a matrix-vector or matrix product is marked so
     (matrix.c; the walk still enters it, for the map as written), and the
     let of a transpose that such a product reads is left to it;
   - then, in a second walk (every lambda has its program by then), a let
     that starts a chain of sibling maps and reduces gets its group
     (backend/siblings.h), and a map2 that reads a scan (or two) is marked
     to be computed with them, in place (backend/scan_map.h).
   The order of the walk numbers the kernels and functions, so a plan and
   the CUDA source emitted from it are deterministic. */
#include "plan.h"
#include "../jit.h"

#include "../../frontend/ir/ptrmap.h"
#include "../scan_map.h"
#include "../siblings.h"

typedef struct Lowering {
  Plan *p;
  int capk, capf, capd, capm;
  PtrMap copies; /* original Term* -> its copy (while copying one body) */
  PtrMap defs;   /* original Def* -> its copy */
  PtrMap fns;    /* LAM term (copy) -> PlanFn* */
  PtrMap used;   /* Sym* -> mark: read somewhere in the copies */
  PtrMap inner;  /* the inner maps of matrix products: no product of their own */
  PtrMap reads;  /* Sym* -> how many times it is read (as an intptr_t) */
  PtrMap owned;  /* Sym* of a let of a fresh array, or of a value whose
                    arrays no one else holds (a loop's state, its tuple's
                    parts) -> 1 + its lambda depth */
  PtrMap depth;  /* reduce_by_index, loop and LETTUP Term* -> 1 + its
                    lambda depth */
} Lowering;

static char mark;

static bool real_array(const Type *t) { return t && t->kind == TY_ARRAY && t->elem->kind == TY_REAL; }
static bool real(const Type *t) { return t && t->kind == TY_REAL; }

static PlanNote *note_of(Term *t) {
  if (!t->note) t->note = NEW(PlanNote);
  return (PlanNote *)t->note;
}

/* Appends x to the GC array *v of *n items and capacity *cap. */
#define PUSH(v, n, cap, x)                                            \
  do {                                                                \
    if ((n) >= (cap)) {                                               \
      (cap) = (cap) ? (cap) * 2 : 16;                                 \
      void *nv_ = una_alloc(sizeof *(v) * (size_t)(cap));             \
      if (n) memcpy(nv_, (v), sizeof *(v) * (size_t)(n));             \
      (v) = nv_;                                                      \
    }                                                                 \
    (v)[(n)++] = (x);                                                 \
  } while (0)

/* ---- the copy ---- */

static Term *copy(Lowering *lw, const Term *t);

static Term *copy_node(Lowering *lw, const Term *t) {
  Term *c = NEW(Term);
  *c = *t;
  c->note = NULL;
  if (t->nkids) {
    c->kids = NEW_ARRAY(Term *, t->nkids);
    memcpy(c->kids, t->kids, sizeof(Term *) * (size_t)t->nkids);
  }
  ptrmap_put(&lw->copies, t, c);
  return c;
}

/* The copy of t; kids are copied recursively but along the last kid in a
   loop (let chains are as long as the program). */
static Term *copy(Lowering *lw, const Term *t) {
  Term *done = ptrmap_get(&lw->copies, t);
  if (done) return done;
  Term *root = copy_node(lw, t), *c = root;
  for (;;) {
    fe_stack_check(c->span);
    for (int i = 0; i + 1 < c->nkids; i++) c->kids[i] = copy(lw, c->kids[i]);
    if (c->nkids == 0) return root;
    Term **last = &c->kids[c->nkids - 1];
    Term *d = ptrmap_get(&lw->copies, *last);
    if (d) {
      *last = d;
      return root;
    }
    c = *last = copy_node(lw, *last);
  }
}

/* ---- functions ---- */

/* The input vregs that k's code reads, in increasing order. */
static void fn_inputs(PlanFn *f) {
  const CpuKernel *k = f->k;
  int nv = cpu_kernel_nvregs(k), n = cpu_kernel_size(k);
  char *used = una_alloc((size_t)nv + 1);
  const CpuKInstr *code = cpu_kernel_code(k);
  int *ops = NEW_ARRAY(int, nv + 8);
  for (int i = 0; i < n; i++) {
    int m = cpu_kinstr_operands(k, &code[i], ops, nv + 8);
    for (int j = 0; j < m; j++) used[ops[j]] = 1;
  }
  used[cpu_kernel_result(k)] = 1;
  f->inputs = una_alloc(sizeof(int) * ((size_t)nv + 1));
  f->arrays = una_alloc(sizeof(int) * ((size_t)nv + 1));
  for (int v = 0; v < nv; v++) {
    if (used[v] && cpu_kernel_vreg_kind(k, v) == CPU_VR_INPUT) f->inputs[f->ninputs++] = v;
    if (used[v] && cpu_kernel_vreg_kind(k, v) == CPU_VR_ARRAY) f->arrays[f->narrays++] = v;
  }
}

/* The scalar program of the lambda lam (a copy), compiled once. */
static const CpuKernel *lam_kernel(Term *lam) {
  if (!lam->note) note_of(lam)->k = cpu_kernel_compile_guarded(lam);
  return lam->note->k;
}

/* The kernel function of lam with the program k (NULL: lam's own scalar
   program), made on first use; NULL when there is no program or its result
   is not R. */
static const PlanFn *fn_with(Lowering *lw, Term *lam, const CpuKernel *k) {
  if (!lam || lam->kind != T_LAM) return NULL;
  PlanFn *f = ptrmap_get(&lw->fns, lam);
  if (f) return f;
  if (!k) k = lam_kernel(lam);
  if (!k || cpu_kernel_returns_bool(k)) return NULL;
  f = NEW(PlanFn);
  f->lam = lam;
  f->k = k;
  f->id = lw->p->nfns;
  fn_inputs(f);
  PUSH(lw->p->fns, lw->p->nfns, lw->capf, f);
  ptrmap_put(&lw->fns, lam, f);
  return f;
}

static const PlanFn *fn_of(Lowering *lw, Term *lam) { return fn_with(lw, lam, NULL); }

/* ---- kernels ---- */

/* Whether t is a map or map2 over [R] arrays with a scalar program of R result. */
static bool fusable(Lowering *lw, Term *t) {
  if (t->kind != T_PRIM || (t->prim != PRIM_MAP && t->prim != PRIM_MAP2) || !real_array(t->type)) return false;
  for (int i = 1; i < t->nkids; i++)
    if (!real_array(t->kids[i]->type)) return false;
  return fn_of(lw, t->kids[0]) != NULL;
}

typedef struct SrcBuild {
  PlanSrc **leaves;
  int nleaves, cap;
  const PlanFn **fns;
  int nfns, capf;
} SrcBuild;

static void add_fn(SrcBuild *b, const PlanFn *f) {
  for (int i = 0; i < b->nfns; i++)
    if (b->fns[i] == f) return;
  PUSH(b->fns, b->nfns, b->capf, f);
}

/* The PlanSrc of the array term t: maps written inline are fused (and
   marked), `levels` of them deep (-1: any depth); anything else is a
   leaf. */
static PlanSrc *src_of(Lowering *lw, SrcBuild *b, Term *t, bool top, int levels) {
  PlanSrc *s = NEW(PlanSrc);
  s->term = t;
  if (levels != 0 && fusable(lw, t)) {
    s->fn = fn_of(lw, t->kids[0]);
    add_fn(b, s->fn);
    if (!top) note_of(t)->fused = true;
    s->a = src_of(lw, b, t->kids[1], false, levels - 1);
    if (t->prim == PRIM_MAP2) s->b = src_of(lw, b, t->kids[2], false, levels - 1);
    return s;
  }
  s->leaf = true;
  s->index = b->nleaves;
  PUSH(b->leaves, b->nleaves, b->cap, s);
  return s;
}

static PlanKernel *add_kernel(Lowering *lw, PlanKernelKind kind, Term *t) {
  PlanKernel *k = NEW(PlanKernel);
  k->kind = kind;
  k->term = t;
  k->id = lw->p->nkernels;
  static const char *const stem[] = {"map",       "reduce", "scan", "scan_seq", "foldl",
                                     "iota",      "replicate", "rand", "map",     "scatter"};
  const char *what = (kind == PK_MAP || kind == PK_CHECK) && t->prim == PRIM_MAP2   ? "map2"
                     : kind == PK_MAP && t->prim == PRIM_MAP3                       ? "map3"
                     : kind == PK_SCAN || kind == PK_SCAN_SEQ ? (t->prim == PRIM_SCANR ? "scanr" : "scanl")
                                                              : stem[kind];
  k->name = una_sprintf("una_%s%s_%d", what, kind == PK_SCAN_SEQ ? "_seq" : kind == PK_CHECK ? "_check" : "", k->id);
  PUSH(lw->p->kernels, lw->p->nkernels, lw->capk, k);
  note_of(t)->kernel = k;
  return k;
}

/* The kernel of map3 t over three array variables, f its indexed program. */
static void map3_kernel(Lowering *lw, Term *t, const PlanFn *f) {
  PlanKernel *k = add_kernel(lw, PK_MAP, t);
  SrcBuild b = {0};
  PlanSrc *s = NEW(PlanSrc);
  s->term = t;
  s->fn = f;
  s->indexed = true;
  add_fn(&b, f);
  s->a = src_of(lw, &b, t->kids[1], false, 0);
  s->b = src_of(lw, &b, t->kids[2], false, 0);
  s->c = src_of(lw, &b, t->kids[3], false, 0);
  k->src = s;
  k->leaves = b.leaves;
  k->nleaves = b.nleaves;
  k->fns = b.fns;
  k->nfns = b.nfns;
}

/* Appends the maps of s to t in post-order (jit.h: CpuJitTree), each
   with the kernel of its function; its place (-1 - q) or its leaf's
   index. False when a map's function cannot be compiled into the pass. */
static bool tree_nodes(const PlanSrc *s, CpuJitTree *t, int *ref) {
  if (s->leaf) {
    *ref = s->index;
    return true;
  }
  if (s->indexed || !s->fn || !s->fn->k || !cpu_jit_inline_kernel(s->fn->k)) return false;
  int a, b = 0;
  if (!tree_nodes(s->a, t, &a) || (s->b && !tree_nodes(s->b, t, &b))) return false;
  t->k[t->n] = s->fn->k;
  t->in[t->n][0] = a;
  t->in[t->n][1] = b;
  *ref = -1 - t->n++;
  return true;
}

static int count_maps(const PlanSrc *s) {
  return s->leaf ? 0 : 1 + count_maps(s->a) + (s->b ? count_maps(s->b) : 0) + (s->c ? count_maps(s->c) : 0);
}

/* The compiled pass of the map kernel k whose arrays have maps fused into
   them (plan.h: tree), or NULL. */
static CpuJitTree *tree_of(const PlanKernel *k) {
  const PlanSrc *s = k->src;
  if (s->leaf || (s->a->leaf && (!s->b || s->b->leaf))) return NULL;
  int n = count_maps(s), ref;
  CpuJitTree *t = NEW(CpuJitTree);
  t->k = NEW_ARRAY(const CpuKernel *, n);
  t->in = una_alloc(sizeof *t->in * (size_t)n);
  return tree_nodes(s, t, &ref) ? t : NULL;
}

/* Plans a kernel's elements (the array term arr) and, for folds and scans,
   its operator op; the functions of the elements come first. */
static void plan_src(Lowering *lw, PlanKernel *k, Term *arr, const PlanFn *op, bool top) {
  SrcBuild b = {0};
  k->src = src_of(lw, &b, arr, top, -1);
  k->op = op;
  if (op) add_fn(&b, op);
  k->leaves = b.leaves;
  k->nleaves = b.nleaves;
  k->fns = b.fns;
  k->nfns = b.nfns;
}

/* Whether the array term t, written as an argument, is a new array that
   only its reader sees: an array literal, or a builtin that allocates its
   result (not a view, a variable or a call, which may share it). The
   ownership rule of docs/cpu.md lets that reader write into it. */
static bool fresh_array(const Term *t) {
  if (t->kind == T_ARRAY) return true;
  if (t->kind != T_PRIM) return false;
  switch (t->prim) {
  case PRIM_MAP:
  case PRIM_MAP2:
  case PRIM_MAP3:
  case PRIM_SCANL:
  case PRIM_SCANR:
  case PRIM_IOTA:
  case PRIM_REPLICATE:
  case PRIM_RAND:
  case PRIM_CONCAT:
  case PRIM_ZIP:
  case PRIM_REDUCE_BY_INDEX: return true;
  default: return false;
  }
}

/* Records m, the matrix product of the map t. */
static void add_matrix(Lowering *lw, Term *t, PlanMatrix *m) {
  if (m->inner) ptrmap_put(&lw->inner, m->inner, &mark);
  m->id = lw->p->nmatrices;
  PUSH(lw->p->matrices, lw->p->nmatrices, lw->capm, m);
  note_of(t)->matrix = m;
}

/* Whether the reader t of the array term a may write into it (the
   ownership rule of docs/cpu.md): a is a fresh array, or a variable read
   only here, at the lambda depth of its let, whose value is a fresh array
   (a gradient's chain of cotangent updates: let da2 = reduce_by_index da1
   ...). */
static bool owns(Lowering *lw, const Term *t, const Term *a) {
  if (fresh_array(a)) return true;
  if (a->kind != T_VAR) return false;
  void *d = ptrmap_get(&lw->owned, a->sym);
  return d && d == ptrmap_get(&lw->depth, t) && (intptr_t)ptrmap_get(&lw->reads, a->sym) == 1;
}

/* Whether the value of a, at lambda depth d (as in lw->depth), holds
   arrays that nothing else holds: fresh arrays, a tuple of such values,
   or an owned variable read only there. */
static bool exclusive(Lowering *lw, const Term *a, void *d) {
  if (fresh_array(a) || a->type->kind == TY_REAL || a->type->kind == TY_BOOL) return true;
  if (a->kind == T_TUPLE) {
    for (int i = 0; i < a->nkids; i++)
      if (!exclusive(lw, a->kids[i], d)) return false;
    return true;
  }
  return a->kind == T_VAR && ptrmap_get(&lw->owned, a->sym) == d &&
         (intptr_t)ptrmap_get(&lw->reads, a->sym) == 1;
}

/* A loop whose initial state holds arrays nothing else holds owns its
   state in the body (one lambda deeper), iteration after iteration: the
   state variable's value is the previous iteration's, which nothing else
   holds either. A reduce_by_index of the state, the body's one read of
   it, then updates it in place (the cotangents a loop's reverse sweep
   accumulates). */
static void own_state(Lowering *lw, const Term *t) {
  void *d = ptrmap_get(&lw->depth, t);
  if (!d || !exclusive(lw, t->kids[1], d)) return;
  ptrmap_put(&lw->owned, t->kids[0]->syms[0], (void *)((intptr_t)d + 1));
}

/* The map or map2 that is the value of the loop t's body and reads its
   state, an [R] read nowhere else in the body, as its first array (the
   plan note's state_map); NULL when there is none. From the second
   iteration on, the state is that map's last result, which nothing else
   holds: the map may write over it (loop_ops.c). */
static const Term *state_map(Lowering *lw, const Term *t) {
  const Term *lam = t->kids[0], *x = lam->kids[0];
  const Sym *s = lam->syms[0];
  if (!real_array(s->type) || (intptr_t)ptrmap_get(&lw->reads, s) != 1) return NULL;
  while (x->kind == T_LET || x->kind == T_LETTUP) x = x->kids[1];
  if (x->kind != T_PRIM || (x->prim != PRIM_MAP && x->prim != PRIM_MAP2) || !real_array(x->type)) return NULL;
  return x->kids[1]->kind == T_VAR && x->kids[1]->sym == s ? x : NULL;
}

/* let (x1, ..., xn) = v in ...: the parts of an owned v read only here
   are owned. */
static void own_parts(Lowering *lw, const Term *t) {
  void *d = ptrmap_get(&lw->depth, t);
  if (!d || !exclusive(lw, t->kids[0], d)) return;
  for (int i = 0; i < t->nsyms; i++) ptrmap_put(&lw->owned, t->syms[i], d);
}

/* Whether the map or map2 t reads or returns tuples of reals (and only
   reals otherwise): its function gets a program over their reals,
   run one element at a time (array_ops.c). */
static bool tuple_elems(const Term *t) {
  bool tuple = false;
  for (int i = 1; i < t->nkids; i++) {
    const Type *e = t->kids[i]->type->elem;
    if (cpu_state_width(e) == 0) return false;
    tuple = tuple || e->kind == TY_TUPLE;
  }
  const Type *r = t->type->elem;
  return cpu_state_width(r) > 0 && (tuple || r->kind == TY_TUPLE);
}

/* Whether x is bound by the lambda lam or by a let of its body's chain. */
static bool bound_in(const Term *lam, const Sym *x) {
  for (int i = 0; i < lam->nsyms; i++)
    if (lam->syms[i] == x) return true;
  for (const Term *l = lam->kids[0]; l->kind == T_LET || l->kind == T_LETTUP; l = l->kids[1]) {
    if (l->kind == T_LET && l->sym == x) return true;
    for (int i = 0; l->kind == T_LETTUP && i < l->nsyms; i++)
      if (l->syms[i] == x) return true;
  }
  return false;
}

/* The matrix-vector product M p in the lets of the function of the map t
   over rows (a let's right-hand side, or one of its arrays), M a variable
   bound outside the function and p its parameter: the product array_ops.c
   may compute for all of t's rows at once (note.h: batch); NULL. */
static const Term *batch_of(const Term *t) {
  const Term *lam = t->kids[0];
  const Type *pt = lam->syms[0]->type;
  if (t->prim != PRIM_MAP || pt->kind != TY_ARRAY || pt->elem->kind != TY_REAL) return NULL;
  for (const Term *l = lam->kids[0]; l->kind == T_LET || l->kind == T_LETTUP; l = l->kids[1]) {
    const Term *r = l->kids[0];
    int nk = r->kind == T_PRIM ? r->nkids : 0;
    for (int i = -1; i < nk; i++) {
      const Term *m = i < 0 ? r : r->kids[i];
      if (m->kind != T_PRIM || m->prim != PRIM_MAP || m->kids[1]->kind != T_VAR || bound_in(lam, m->kids[1]->sym))
        continue;
      const PlanMatrix *pm = plan_matrix_of(m);
      if (pm && pm->kind == PLAN_GEMV && !pm->x_let && !pm->untransposed && pm->other->kind == T_VAR &&
          pm->other->sym == lam->syms[0])
        return m;
    }
  }
  return NULL;
}

/* The array of the map or map2 t (1 or 2) that its kernel may write its
   result over (note.h: over): an [R] that t owns (fresh, held by no one
   else), not a literal; 0 when there is none. */
static int over_arg(Lowering *lw, const Term *t) {
  if (!real_array(t->type)) return 0;
  for (int i = 1; i < t->nkids; i++) {
    const Term *a = t->kids[i];
    /* a concat of reals is read as its pieces, never made (array_ops.c) */
    if (a->kind == T_PRIM && a->prim == PRIM_CONCAT) continue;
    if (real_array(a->type) && a->kind != T_ARRAY && owns(lw, t, a)) return i;
  }
  return 0;
}

/* The kernel of the array builtin t, if it qualifies. */
static void plan_builtin(Lowering *lw, Term *t) {
  if (t->note && (t->note->fused || t->note->kernel)) return;
  switch (t->prim) {
  case PRIM_MAP:
  case PRIM_MAP2: {
    const Term *batch;
    /* a matrix product goes to BLAS even where it could fuse into the map
       that reads it (map g (map (row. dot row x) m)) */
    PlanMatrix *m = (!t->note || !t->note->matrix) && !ptrmap_get(&lw->inner, t) ? plan_matrix_of(t) : NULL;
    if (m && m->kind == PLAN_GEMV && t->prim == PRIM_MAP && t->kids[1]->kind == T_PRIM &&
        t->kids[1]->prim == PRIM_TRANSPOSE && t->kids[1]->kids[0]->kind == T_VAR) {
      /* map (p. dot p v) (transpose B): B^T v from B, as for a let (below) */
      m->x_let = true;
      m->untransposed = t->kids[1]->kids[0];
    }
    if (m && m->kind == PLAN_GEMM && m->other->kind == T_PRIM && m->other->prim == PRIM_TRANSPOSE &&
        m->other->kids[0]->kind == T_VAR)
      m->untransposed = m->other->kids[0]; /* Y = transpose B inline: BLAS reads B, as for a let */
    if (m) add_matrix(lw, t, m);
    else if (fusable(lw, t)) {
      PlanKernel *k = add_kernel(lw, PK_MAP, t);
      plan_src(lw, k, t, NULL, true);
      k->tree = tree_of(k);
      int over = over_arg(lw, t);
      /* a map computed in the pass is never made: nothing to write over */
      if (k->tree && over && !(over == 1 ? k->src->a : k->src->b)->leaf) over = 0;
      note_of(t)->over = over;
    }
    else if (tuple_elems(t)) note_of(t->kids[0])->step = cpu_elem_kernel_for(t->kids[0]);
    else if ((batch = batch_of(t))) note_of(t)->batch = batch;
    return;
  }
  case PRIM_REDUCE:
  case PRIM_FOLDL:
  case PRIM_SCANL:
  case PRIM_SCANR: {
    /* a foldl or scan whose accumulator and elements are reals or
       (nested) tuples of reals, not both reals: its function's step
       program (array_ops.c runs it element by element) */
    if (t->prim != PRIM_REDUCE && t->kids[2]->type->kind == TY_ARRAY) {
      int w = cpu_state_width(t->kids[1]->type), we = cpu_state_width(t->kids[2]->type->elem);
      if (w > 0 && we > 0 && (w > 1 || we > 1)) {
        const CpuKernel *k = cpu_fold_kernel_for(t->kids[0], t->prim == PRIM_SCANR ? 1 : 0);
        note_of(t->kids[0])->step = k;
        return;
      }
    }
    /* accumulator and elements R: the type of v, and of A's elements */
    if (!real(t->kids[1]->type) || !real_array(t->kids[2]->type)) return;
    const PlanFn *op = fn_of(lw, t->kids[0]);
    if (!op) return;
    PlanKernelKind kind = PK_FOLDL;
    CpuMonoid m = CPU_M_NONE;
    if (t->prim == PRIM_REDUCE) kind = PK_REDUCE;
    if (t->prim == PRIM_SCANL || t->prim == PRIM_SCANR) {
      bool swapped;
      m = cpu_monoid_of(t->kids[0], &swapped);
      kind = m != CPU_M_NONE ? PK_SCAN : PK_SCAN_SEQ;
    }
    PlanKernel *k = add_kernel(lw, kind, t);
    k->monoid = m;
    k->right = t->prim == PRIM_SCANR;
    k->ordered = kind == PK_REDUCE && !cpu_kernel_commutes(op->k);
    plan_src(lw, k, t->kids[2], op, false);
    return;
  }
  case PRIM_LOOP_WHILE: { /* the condition too */
    const CpuKernel *c = cpu_step_kernel_for(t->kids[2]);
    note_of(t->kids[2])->step = c;
  }
    /* fall through */
  case PRIM_LOOP_FOR: {
    const CpuKernel *b = cpu_step_kernel_for(t->kids[0]);
    note_of(t->kids[0])->step = b;
    own_state(lw, t);
    note_of(t)->state_map = state_map(lw, t);
    return;
  }
  case PRIM_REDUCE_BY_INDEX: {
    note_of(t)->in_place = owns(lw, t, t->kids[1]);
    /* values written as a map: computed into the scatter, never stored */
    if (!real_array(t->type) || !real_array(t->kids[3]->type) || !real_array(t->kids[4]->type)) return;
    bool swapped;
    CpuMonoid m = cpu_monoid_of(t->kids[0], &swapped);
    if (m == CPU_M_NONE) {
      if (fusable(lw, t->kids[4])) note_of(t->kids[4])->fused = true;
      return;
    }
    /* a builtin monoid: a kernel too (the GPU's; the indices its last
       leaf). V written as a map is fused, its arrays evaluated on their
       own, as the CPU's scatter takes them (backend/scatter.c) */
    PlanKernel *k = add_kernel(lw, PK_SCATTER, t);
    k->monoid = m;
    SrcBuild b = {0};
    k->src = src_of(lw, &b, t->kids[4], false, 1);
    src_of(lw, &b, t->kids[3], false, 0);
    k->leaves = b.leaves;
    k->nleaves = b.nleaves;
    k->fns = b.fns;
    k->nfns = b.nfns;
    return;
  }
  case PRIM_MAP3: { /* by blocks of indices, reading its arrays (variables), or one element at a time */
    const CpuKernel *k = cpu_step_kernel_for(t->kids[0]);
    note_of(t->kids[0])->step = k;
    const Term *arrays[3];
    bool vars = t->type->elem->kind == TY_REAL;
    for (int i = 0; i < 3; i++) {
      arrays[i] = t->kids[1 + i];
      vars = vars && arrays[i]->kind == T_VAR && fe_type_is_real_array(arrays[i]->type);
    }
    if (vars) note_of(t->kids[0])->indexed = cpu_kernel_compile_map3(t->kids[0], arrays);
    /* the GPU's kernel: that program at each index, the three arrays its
       leaves (evaluated in order, their lengths checked) */
    const PlanFn *f = vars ? fn_with(lw, t->kids[0], t->kids[0]->note->indexed) : NULL;
    if (f) map3_kernel(lw, t, f);
    return;
  }
  case PRIM_IOTA: add_kernel(lw, PK_IOTA, t); return;
  case PRIM_RAND: add_kernel(lw, PK_RAND, t); return;
  case PRIM_REPLICATE:
    if (real_array(t->type)) add_kernel(lw, PK_REPLICATE, t);
    return;
  default: return;
  }
}

/* ---- the walk ---- */

static void walk(Lowering *lw, Term *t);

/* Marks every variable read in t in lw->used. */
static void mark_uses(Lowering *lw, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_VAR) ptrmap_put(&lw->used, t->sym, &mark);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) mark_uses(lw, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

/* Whether a value of type t holds arrays (the values whose reads the
   ownership rule counts). */
static bool holds_arrays(const Type *t) {
  if (!t) return false;
  if (t->kind == TY_ARRAY) return true;
  if (t->kind != TY_TUPLE) return false;
  for (int i = 0; i < t->n; i++)
    if (holds_arrays(t->elems[i])) return true;
  return false;
}

/* Adds n to x's count of reads in reads. */
static void add_reads(PtrMap *reads, const void *x, intptr_t n) {
  ptrmap_put(reads, x, (void *)((intptr_t)ptrmap_get(reads, x) + n));
}

/* Adds to reads the counts of an if's two branches a and b, the larger of
   each variable's two (the branches exclude each other). The smaller map
   is merged into the larger, which reads takes over when it is empty, so
   an else-if chain costs what its reads do, not its depth times that. */
static void add_branches(PtrMap *reads, PtrMap a, PtrMap b) {
  PtrMap *big = a.n >= b.n ? &a : &b, *small = big == &a ? &b : &a;
  for (size_t i = 0; i < small->cap; i++) {
    const void *x = small->keys[i];
    if (x && (intptr_t)small->vals[i] > (intptr_t)ptrmap_get(big, x)) ptrmap_put(big, x, small->vals[i]);
  }
  if (reads->n == 0) {
    *reads = *big;
    return;
  }
  for (size_t i = 0; i < big->cap; i++)
    if (big->keys[i]) add_reads(reads, big->keys[i], (intptr_t)big->vals[i]);
}

/* Counts into reads the reads of every variable that holds arrays in t,
   along the path that reads it most (an if's branches exclude each other:
   a variable read once in each is read once), and records the lets of
   fresh arrays and the reduce_by_index terms with their lambda depth (for
   owns). */
static void scan_owned(Lowering *lw, PtrMap *reads, const Term *t, intptr_t depth) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_VAR && holds_arrays(t->type)) add_reads(reads, t->sym, 1);
    if (t->kind == T_LET && fresh_array(t->kids[0])) ptrmap_put(&lw->owned, t->sym, (void *)(depth + 1));
    if (t->kind == T_LETTUP ||
        (t->kind == T_PRIM && (t->prim == PRIM_REDUCE_BY_INDEX || t->prim == PRIM_LOOP_FOR ||
                               t->prim == PRIM_LOOP_WHILE || t->prim == PRIM_MAP || t->prim == PRIM_MAP2)))
      ptrmap_put(&lw->depth, t, (void *)(depth + 1));
    if (t->nkids == 0) return;
    if (t->kind == T_IF) {
      scan_owned(lw, reads, t->kids[0], depth);
      PtrMap br[2] = {{0}, {0}};
      for (int b = 0; b < 2; b++) scan_owned(lw, &br[b], t->kids[1 + b], depth);
      add_branches(reads, br[0], br[1]);
      return;
    }
    if (t->kind == T_LAM) depth++;
    for (int i = 0; i + 1 < t->nkids; i++) scan_owned(lw, reads, t->kids[i], depth);
    t = t->kids[t->nkids - 1];
  }
}

/* The copy of d in this plan, made (and walked) on first use. */
static Def *lower_def(Lowering *lw, const Def *d) {
  Def *c = ptrmap_get(&lw->defs, d);
  if (c) return c;
  c = NEW(Def);
  *c = *d;
  c->optimized = NULL;
  c->plan = lw->p;
  c->planned = true;
  ptrmap_put(&lw->defs, d, c);
  PUSH(lw->p->defs, lw->p->ndefs, lw->capd, c);
  lw->copies = (PtrMap){0};
  c->body = copy(lw, d->body);
  lw->copies = (PtrMap){0};
  mark_uses(lw, c->body);
  scan_owned(lw, &lw->reads, c->body, 0);
  walk(lw, c->body);
  return c;
}

/* How many times t reads x. */
static int reads_of(const Term *t, const Sym *x) {
  int n = 0;
  while (t) {
    if (t->kind == T_VAR && t->sym == x) n++;
    if (t->nkids == 0) break;
    for (int i = 0; i + 1 < t->nkids; i++) n += reads_of(t->kids[i], x);
    t = t->kids[t->nkids - 1];
  }
  return n;
}

/* `let y = transpose B in map ... X` whose map is a matrix product that
   reads y only as its Y, B and X variables (the prelude's matmul), or
   `let t = transpose B in map (p. dot p v) t` (a matvec gradient): the
   product reads B as it is, and the transpose is computed only when the
   map runs as written (note.h: PlanMatrix.let, x_let). */
static void plan_deferred_let(Lowering *lw, Term *t) {
  Term *rhs = t->kids[0], *map = t->kids[1];
  if (rhs->kind != T_PRIM || rhs->prim != PRIM_TRANSPOSE || rhs->kids[0]->kind != T_VAR) return;
  if (map->kind != T_PRIM || map->prim != PRIM_MAP || map->kids[1]->kind != T_VAR || map->note) return;
  PlanMatrix *m = plan_matrix_of(map);
  if (!m || reads_of(map, t->sym) != 1) return;
  if (m->kind == PLAN_GEMV) { /* X = transpose B, read only as X */
    if (map->kids[1]->sym != t->sym) return;
    m->x_let = true;
  } else if (m->other->kind != T_VAR || m->other->sym != t->sym) {
    return;
  }
  m->let = t;
  m->untransposed = rhs->kids[0];
  add_matrix(lw, map, m);
  note_of(t)->deferred = true;
}

/* A let of a map or map2 whose variable is never read: the optimizer keeps
   it only for the errors it may raise (map2's length check, an error in a
   leaf). It gets a kernel that computes nothing: its leaves are evaluated
   and its lengths checked. */
static void plan_dead_let(Lowering *lw, Term *t) {
  Term *rhs = t->kids[0];
  if (ptrmap_get(&lw->used, t->sym) || (rhs->note && rhs->note->kernel) || !fusable(lw, rhs)) return;
  PlanKernel *k = add_kernel(lw, PK_CHECK, rhs);
  plan_src(lw, k, rhs, NULL, true);
  const CpuKernel *f = lam_kernel(rhs->kids[0]); /* compiled by fusable */
  if (f && (cpu_kernel_gathers(f) || cpu_kernel_nloops(f) > 0)) k->check = cpu_kernel_compile_check(rhs->kids[0]);
}

static void walk(Lowering *lw, Term *t) {
  while (t) {
    fe_stack_check(t->span);
    switch (t->kind) {
    case T_LET:
      plan_dead_let(lw, t);
      plan_deferred_let(lw, t);
      break;
    case T_LETTUP: own_parts(lw, t); break;
    case T_LAM: lam_kernel(t); break;
    case T_PRIM:
      if (fe_prims[t->prim].cls == P_ARRAY) plan_builtin(lw, t);
      break;
    case T_CALL: t->def = lower_def(lw, t->def); break;
    default: break;
    }
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) walk(lw, t->kids[i]);
    t = t->kids[t->nkids - 1]; /* the last child in a loop: let chains are long */
  }
}

/* The sibling groups and the maps over scans, once every lambda has its
   program. */
static void walk_groups(Plan *p, Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_LET || t->kind == T_TUPLE) {
      const CpuSiblingPlan *g = cpu_sibling_plan(t);
      if (g) {
        note_of(t)->group = g;
        p->ngroups++;
      }
    }
    if (cpu_scan_map_candidate(t)) {
      note_of(t)->scan_map = true;
      p->nscan_maps++;
    }
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) walk_groups(p, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

Plan *plan_lower(const Def *d) {
  Lowering lw;
  memset(&lw, 0, sizeof lw);
  lw.p = NEW(Plan);
  lw.p->def = lower_def(&lw, d);
  for (int i = 0; i < lw.p->ndefs; i++) {
    walk_groups(lw.p, lw.p->defs[i]->body);
    plan_releases(lw.p->defs[i]->body);
  }
  return lw.p;
}

const Def *plan_runnable(const Def *d) { return d->planned ? d : plan_of_def(d)->def; }

Plan *plan_of_def(const Def *d) {
  if (!d->plan) ((Def *)d)->plan = plan_lower(d);
  return d->plan;
}
