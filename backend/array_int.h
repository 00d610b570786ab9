/* array_int.h: what the array builtins (array_ops.c), the scans and
   their fused map2s (scan_map.c) and the sibling groups (siblings.c)
   share, implemented in array_int.c: the builtin monoids and their loops,
   kernel binding, the reduce job, whose block-by-block bracketing all use
   so that a reduce gives the same bits alone or in a sibling group, and
   map2's length check. Internal to backend/. */
#ifndef UNA_ARRAY_INT_H
#define UNA_ARRAY_INT_H

#include "kernel.h"
#include "parallel.h"
#include "exec.h"
#include "value.h"
#include "../frontend/ir/term.h"

/* The builtin monoid a two-parameter lambda computes, if any: its body is
   x OP y of its parameters x, y (in either order: *swapped is set when the
   body is y OP x), all of type R, OP a builtin R x R -> R that prims.def
   gives LAW_ASSOC and a unit and that has dedicated loops here: + * max
   min. */
typedef enum { CPU_M_NONE, CPU_M_ADD, CPU_M_MUL, CPU_M_MAX, CPU_M_MIN } CpuMonoid;
CpuMonoid cpu_monoid_of(const Term *lam, bool *swapped);
/* The builtin of monoid m (not CPU_M_NONE): its laws and unit are in
   fe_prims. */
Prim cpu_monoid_prim(CpuMonoid m);


/* Raises map2's located error when the lengths la and lb of the map2 term
   t's arrays differ. */
void cpu_check_map2_lengths(const Term *t, size_t la, size_t lb);
void cpu_check_map3_lengths(const Term *t, size_t la, size_t lb, size_t lc);

/* The map or map2 t over a (and b) whose function only checks a map2's
   lengths (map_checks.c), run as those checks into out; false when t is
   not such a map. */
bool cpu_map_checks_only(const Exec *ex, const Term *t, Value *frame, const Array *a, const Array *b, Array *out);

typedef struct MonoidFns {
  double (*foldl)(double, const double *, size_t, Span);
  void (*lanes)(double *, const double *, size_t); /* acc[j] = OP(acc[j], x[j]) */
  double (*op)(double, double);
  /* k steps of a scan from acc, into out[0..k): left to right
     (out[j] = acc = OP(acc, x[j])), or right to left (out[j] = acc =
     OP(x[j], acc)); the last acc is returned */
  double (*lscan)(double acc, const double *x, size_t k, double *out);
  double (*rscan)(double acc, const double *x, size_t k, double *out);
  /* the same steps, each result combined with the carry c as it is
     stored: out[j] = OP(c, acc) (left), out[j] = OP(acc, c) (right) */
  double (*lscanc)(double acc, const double *x, size_t k, double *out, double c);
  double (*rscanc)(double acc, const double *x, size_t k, double *out, double c);
  /* in place: x[j] = OP(c, x[j]) (combl), x[j] = OP(x[j], c) (combr) */
  void (*combl)(double c, double *x, size_t k);
  void (*combr)(double c, double *x, size_t k);
  void (*zipr)(double *acc, const double *x, size_t k); /* acc[j] = OP(x[j], acc[j]) */
  /* k scan steps as lscan/rscan, and, in the same loop, lanes[j] =
     OP(lanes[j], y[j]) (another block folded into a reduce's lanes) */
  double (*lscanf)(double acc, const double *x, size_t k, double *out, double *lanes, const double *y);
  double (*rscanf)(double acc, const double *x, size_t k, double *out, double *lanes, const double *y);
  /* k scan steps as lscan/rscan, each result r put into o as o[j] =
     OP(OP(o[j], c1), OP(c2, r)) (for a monoid that commutes) */
  double (*lzscan)(double acc, const double *x, size_t k, double *o, double c1, double c2);
  double (*rzscan)(double acc, const double *x, size_t k, double *o, double c1, double c2);
  /* d[idx[j]] = OP(d[idx[j]], v[j]) for j = 0 .. k - 1 in order, the
     indices checked (reduce_by_index) */
  void (*scatter)(double *d, const double *idx, const double *v, size_t k);
  bool commutes; /* OP(x, y) and OP(y, x) have the same bits, and unit is exact: OP(x, unit) is x */
  double unit;
} MonoidFns;

/* Evaluates the array term t in frame, its elements on the host. */
Array *cpu_eval_array(const Exec *ex, const Term *t, Value *frame);

/* The loops for lam when it is a builtin monoid and the loops are enabled
   (and the cost meter is off); NULL otherwise. */
const MonoidFns *cpu_monoid_loops(const Exec *ex, const Term *lam);

/* Whether the kernels are on in ex (exec.h: ex->kernel, and no meter). */
bool cpu_kernels_enabled(const Exec *ex);

/* Binds lam's kernel to frame when it has one and kernels are enabled. */
bool cpu_lam_kernel(const Exec *ex, const Term *lam, Value *frame, CpuKernelRun *run);
/* Runs the bound kernel run over the indices 0 .. n - 1 into out (reals),
   on all cores when large; t is the builtin (for its place). */
void cpu_map_indices(const Exec *ex, CpuKernelRun *run, const Term *t, size_t n, Array *out);

/* A map or map2 that the plan fused into the builtin reading it
   (plan/note.h: fused) and that builtin's view of its elements: its arrays
   x and y (x NULL: a map over iota n, never materialised), n elements, and
   its kernel g when bound. */
typedef struct CpuFusedMap {
  Array *x, *y;
  size_t n;
  CpuKernelRun g;
} CpuFusedMap;

/* Evaluates the arrays of the fused map arg (map2's lengths checked) and
   binds its kernel; true when it has more than min elements and its
   elements are reals computed by the kernel (cpu_fused_map_block), false
   when they must be materialised (cpu_fused_map_array). */
bool cpu_fused_map_bind(const Exec *ex, const Term *arg, Value *frame, size_t min, CpuFusedMap *f);

/* The elements of the fused map arg as an array, from the arrays that
   cpu_fused_map_bind evaluated. */
Array *cpu_fused_map_array(const Exec *ex, const Term *arg, Value *frame, const CpuFusedMap *f);

/* Elements i .. i + n - 1 (n <= CPU_BLOCK) of a bound fused map into out,
   by g (f's run, or a clone of it for another thread). */
void cpu_fused_map_block(const CpuFusedMap *f, CpuKernelRun *g, size_t i, size_t n, double *out);

/* The array that the map t over a and b (NULL: not an array of its own,
   as a concat's pieces or a fused map's elements), whose kernel computes
   its n elements, writes into: its loop's state or the array the plan
   lets it write over (note.h: over), its place in a row buffer, or new
   memory. */
Array *cpu_map_out(const Exec *ex, const Term *t, Array *a, Array *b, size_t n);

/* Runs the bound kernel run of the map t over a (and b) into out, n
   elements, on all cores when large (array_ops.c's kernel loop). */
void cpu_map_kernel(const Exec *ex, CpuKernelRun *run, const Term *t, const Array *a, const Array *b, size_t n,
                    Array *out);

/* The map t whose plan computes the maps fused into its arrays in one
   compiled pass (plan.h: tree; map_tree.c); false, with nothing
   evaluated, when it has none (then t runs as written). */
bool cpu_map_tree(const Exec *ex, const Term *t, Value *frame, Value *r);
/* How many such passes ran compiled in this process (tests). */
size_t cpu_tree_passes(void);

/* reduce_by_index on the CPU (scatter.c). */
Value cpu_reduce_by_index(const Exec *ex, const Term *t, Value *frame);

/* A state of type t (an R, or a tuple of reals or of such tuples) as its
   reals s[0..cpu_state_width(t)), and back (loop_ops.c): for the step
   programs of loops and folds. */
void cpu_state_in(Value x, const Type *t, double *s);
Value cpu_state_out(const double *s, const Type *t);

/* Kernel runs for every thread of a parallel loop of nthreads threads
   over nchunks chunks: runs[0] the bound run itself, the others clones;
   all with their buffers allocated. Returns the number of runs. */
int cpu_kernel_runs(int nthreads, CpuKernelRun *runs, const CpuKernelRun *run, int nchunks);

/* A reduce over reals: its operator (a monoid loop or a kernel, one run per
   thread) and its elements (an array, or a map/map2 kernel over one or two
   arrays computed block by block), bracketed as array_ops.c says. */
typedef struct RedJob {
  const MonoidFns *m;                   /* the operator as a monoid, or */
  CpuKernelRun op[CPU_MAX_THREADS];     /* ... as a kernel */
  const double *r;                      /* the elements, or */
  const double *x, *y;                  /* ... g over x (and y); x NULL: over
                                           the indices 0, 1, ... (a map over
                                           iota, never materialised) */
  CpuKernelRun g[CPU_MAX_THREADS];
  bool ordered;                         /* the kernel may not commute: one lane */
  double v;
  size_t n;
  int nchunks;
  int nthreads;                         /* of its loop (cpu_red_operator sets it) */
  double acc[CPU_CHUNKS][CPU_BLOCK];
  size_t nlanes[CPU_CHUNKS];
} RedJob;

/* Readies j: every field empty but the kernel runs and the lanes (large,
   and set before they are read: cpu_red_operator, cpu_kernel_runs, each
   chunk's first block), which a reduce of a few elements would
   otherwise spend most of its time clearing. */
void cpu_red_job_init(RedJob *j);

/* Sets up j's operator for lam (j->nchunks set); false when lam has
   neither a monoid loop nor a kernel. */
bool cpu_red_operator(const Exec *ex, RedJob *j, const Term *lam, Value *frame);

/* Folds the k <= CPU_BLOCK elements at i of chunk c (which starts at lo)
   into the chunk's lanes, on thread `thread`. */
void cpu_red_block(RedJob *j, int thread, int c, size_t lo, size_t i, size_t k);

/* The same with the block's elements given: e[0..k). */
void cpu_red_fold(RedJob *j, int thread, int c, size_t lo, size_t i, size_t k, const double *e);

/* After every block: the chunks' lanes combined and folded; the result. */
double cpu_red_finish(RedJob *j);

#endif
