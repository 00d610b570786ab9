/* map_tree.c: a map whose arrays are maps written inline, computed in one
   pass over the elements (the plan's kernel with fused maps, plan.h:
   PlanKernel.tree; the pass's C source is jit_emit.c's).

   `map2 f y (map2 g (map2 (+) k1 k4) (map2 (+) k2 k3))` (the last stage
   of a Runge-Kutta step) made three arrays of its length before, each
   inner map writing its elements to memory for the next to read. The
   pass reads the leaves (y, k1, k4, k2, k3) once and computes each
   element through all the maps in registers: one loop, no array but the
   result.

   The errors are the nested maps' own, in their order: the leaves are
   evaluated and map2's lengths checked in the order the maps as written
   evaluate them (each map's arrays, then its check, then its kernel
   bound). No function of the pass can fault (all its instructions are
   arithmetic, jit.h: cpu_jit_inline_kernel), so nothing is raised
   after that. Each element is computed by the maps' own operations in
   their order, so the bits are the maps' as written. Until the pass is
   compiled (jit.h: after enough work, as every kernel), the maps run one
   after the other over the leaves already evaluated, their arrays given
   back once read. */
#include "array_int.h"
#include "jit.h"
#include "plan/plan.h"

/* The most leaves of a pass run here (its chunks keep their pointers on
   the stack); a map with more runs as written. */
enum { MAX_LEAVES = 64 };

static _Atomic size_t passes;

size_t cpu_tree_passes(void) { return passes; }

typedef struct TreeJob {
  CpuJitTreeFn fn;
  const Array **leaves;
  int nleaves;
  const double **sr;
  Array *out;
  size_t n;
  int nchunks;
} TreeJob;

/* Evaluates the arrays of the map s (the map t as written evaluates
   them so) into leaves, checks map2's lengths, and binds each map's
   kernel: map q of the pass (numbered in post-order, as lower.c's
   tree_nodes numbers them) into runs[q], its term into terms[q]; *len
   its length. False when a kernel cannot be bound (a part it evaluates
   when bound raised: the map as written raises it where its elements
   need it). */
static bool eval_src(const Exec *ex, Value *frame, const PlanSrc *s, Array **leaves, CpuKernelRun *runs,
                     const Term **terms, int *q, size_t *len) {
  if (s->leaf) {
    leaves[s->index] = cpu_eval_array(ex, s->term, frame);
    *len = leaves[s->index]->len;
    return !leaves[s->index]->boxed;
  }
  size_t la, lb;
  if (!eval_src(ex, frame, s->a, leaves, runs, terms, q, &la)) return false;
  if (s->b) {
    if (!eval_src(ex, frame, s->b, leaves, runs, terms, q, &lb)) return false;
    cpu_check_map2_lengths(s->term, la, lb);
  }
  *len = la;
  terms[*q] = s->term;
  CpuKernelRun *run = &runs[(*q)++];
  return la == 0 || cpu_lam_kernel(ex, s->term->kids[0], frame, run);
}

static void tree_chunk(void *ctx, int thread, int c) {
  TreeJob *j = ctx;
  size_t lo, hi;
  cpu_chunk_bounds(j->n, CPU_BLOCK, j->nchunks, c, &lo, &hi);
  const double *in[MAX_LEAVES];
  /* in loops of 64 Ki elements (Ctrl-C between) */
  for (size_t i = lo; i < hi && !fe_stopping(); i += 65536) {
    for (int l = 0; l < j->nleaves; l++) in[l] = j->leaves[l]->r + i;
    j->fn(in, j->out->r + i, j->sr, hi - i < 65536 ? hi - i : 65536);
  }
}

/* The maps one after the other (the pass not compiled yet). */
static void one_by_one(const Exec *ex, CpuJitTree *tree, const Term **terms, CpuKernelRun *runs, Array **leaves,
                       Array *out) {
  size_t n = out->len;
  Array **res = NEW_ARRAY(Array *, tree->n);
  for (int q = 0; q < tree->n; q++) {
    const Array *ab[2] = {NULL, NULL};
    for (int k = 0; k < cpu_kernel_nparams(tree->k[q]); k++) {
      int s = tree->in[q][k];
      ab[k] = s >= 0 ? leaves[s] : res[-1 - s];
    }
    res[q] = q == tree->n - 1 ? out : val_new_real_array(n, terms[q]->span);
    cpu_map_kernel(ex, &runs[q], terms[q], ab[0], ab[1], n, res[q]);
    for (int k = 0; k < cpu_kernel_nparams(tree->k[q]); k++)
      if (tree->in[q][k] < 0) val_give_back(res[-1 - tree->in[q][k]]);
  }
}

bool cpu_map_tree(const Exec *ex, const Term *t, Value *frame, Value *r) {
  const PlanKernel *pk = t->note ? t->note->kernel : NULL;
  if (!pk || pk->kind != PK_MAP || pk->term != t || !pk->tree || pk->nleaves > MAX_LEAVES || !ex->kernel ||
      ex->meter || ex->gpu)
    return false;
  CpuJitTree *tree = pk->tree;
  Array **leaves = NEW_ARRAY(Array *, pk->nleaves);
  CpuKernelRun *runs = NEW_ARRAY(CpuKernelRun, tree->n);
  const Term **terms = NEW_ARRAY(const Term *, tree->n);
  int q = 0;
  size_t n;
  if (!eval_src(ex, frame, pk->src, leaves, runs, terms, &q, &n)) return false;
  const PlanSrc *s = pk->src;
  Array *out = cpu_map_out(ex, t, s->a->leaf ? leaves[s->a->index] : NULL,
                           s->b && s->b->leaf ? leaves[s->b->index] : NULL, n);
  *r = val_array(out);
  if (n == 0) return true;
  CpuJitTreeFn fn = cpu_jit_tree(tree, n);
  if (!fn) {
    one_by_one(ex, tree, terms, runs, leaves, out);
    return true;
  }
  TreeJob j = {fn, (const Array **)leaves, pk->nleaves, NEW_ARRAY(const double *, tree->n), out, n, cpu_chunks_for(n)};
  for (q = 0; q < tree->n; q++) j.sr[q] = runs[q].sregs;
  cpu_parallel_chunks(cpu_exec_threads(ex), j.nchunks, tree_chunk, &j, t->span);
  passes++;
  return true;
}
