/* plan.h: the execution plan of an optimized Def, the one place where Una
   decides how array code runs, for the CPU engine and the CUDA backend
   alike (figure 1's last stage before the engines).

   plan_lower is a pure pass: from a checked (usually optimized) Def it
   builds a Plan that owns
   - the host program: a copy of the Def's body, and of the body of every
     Def it calls (each once, calls retargeted to the copies), whose nodes
     carry the plan's decisions as PlanNotes (Term.note);
   - the array kernels: one PlanKernel per array builtin that runs as a
     kernel over [R] elements (map, map2, reduce, scans, foldl, iota,
     replicate, rand), with the maps written inline in its array argument
     fused into its elements (a PlanSrc tree whose leaves are the arrays
     evaluated on their own), its operator, its element count and the
     scalar programs of its lambdas (backend/kernel.h);
   - the sibling groups: chains of lets of independent maps and reduces
     over arrays of one length that run as one pass (backend/siblings.h);
   - the maps of a scan run in place over the scan's result (∇prod's
     shape, backend/scan_map.h);
   - the maps that compute a matrix-vector or a matrix product, run with
     BLAS on the CPU (matrix.c, backend/blas.h).
   Nothing is decided again while the program runs: the engines read the
   notes (the CPU's tree evaluator and array builtins, the GPU's launches),
   so there is no cache keyed by terms. The original Def is not changed
   but for its plan field, which owns the result (d->plan).

   plan_str prints a plan (`:plan e`, `--dump-after=plan`). */
#ifndef UNA_PLAN_H
#define UNA_PLAN_H

#include "../../frontend/ir/term.h"
#include "../array_int.h"
#include "../kernel.h"
#include "note.h"

typedef enum {
  PK_MAP,       /* map, map2: out[i] = src(i) */
  PK_REDUCE,    /* reduce f v A: lanes, chunks, then the fold (any
                   bracketing of an associative f; in element order
                   unless f commutes) */
  PK_SCAN,      /* scanl/scanr with a builtin monoid (+ * max min) */
  PK_SCAN_SEQ,  /* scanl/scanr with any other operator: sequential */
  PK_FOLDL,     /* foldl f v A: sequential */
  PK_IOTA,      /* iota n */
  PK_REPLICATE, /* replicate n v */
  PK_RAND,      /* rand n seed */
  PK_CHECK,     /* a dead let's map/map2: its leaves evaluated and lengths
                   checked (the optimizer keeps it for its errors), no
                   element computed */
  PK_SCATTER    /* reduce_by_index D op v I V of [R]s, op a builtin
                   monoid (+ * max min): src the values V (maps written
                   inline fused), the last leaf the indices I; the GPU
                   combines each value into its place (atomics); the CPU
                   runs backend/scatter.c, V fused as the same notes say */
} PlanKernelKind;

/* One lambda of a kernel, with its scalar program (una_f<id> on the GPU). */
typedef struct PlanFn {
  const Term *lam;
  const CpuKernel *k;
  int id;
  int ninputs;
  int *inputs; /* the input vregs (free variables, hoisted parts) its code
                  reads, in increasing order */
  int narrays;
  int *arrays; /* the array vregs its gathers read (a[i], CPU_VR_ARRAY), in
                  increasing order */
} PlanFn;

/* The elements of a kernel: inner nodes are maps and map2s written inline
   (fused, never stored), leaves the arrays evaluated on their own. A
   map3 is a node of its own kernel, never fused: its function takes the
   element's index and reads its three arrays there (indexed: the CPU's
   program of a map3 over three array variables, note.h). */
typedef struct PlanSrc PlanSrc;
struct PlanSrc {
  bool leaf;
  const Term *term; /* leaf: the array term; node: the map/map2/map3 term */
  int index;        /* leaf: its place among the kernel's leaves */
  const PlanFn *fn; /* node: the mapped function */
  PlanSrc *a, *b;   /* node: its arrays (b NULL for map) */
  PlanSrc *c;       /* node: map3's third array, else NULL */
  bool indexed;     /* node: fn's parameter is the index (map3) */
};

typedef struct PlanKernel {
  PlanKernelKind kind;
  const Term *term; /* the builtin it evaluates */
  int id;
  const char *name; /* una_map_3 (the GPU's names; REDUCE and SCAN add
                       _a, _b, _c per launch) */
  PlanSrc *src;     /* MAP, REDUCE, SCAN, SCAN_SEQ, FOLDL, CHECK, SCATTER */
  int nleaves;
  PlanSrc **leaves;
  const PlanFn *op; /* REDUCE, SCAN, SCAN_SEQ, FOLDL */
  CpuMonoid monoid; /* SCAN, SCATTER: which builtin monoid op computes */
  bool right;       /* scanr */
  bool ordered;     /* REDUCE: op may not commute, so elements are folded
                       in contiguous runs, in order */
  int nfns;
  const PlanFn **fns; /* the functions whose inputs are parameters, in order */
  const CpuKernel *check; /* CHECK whose function gathers or loops: its
                             kernel for the errors only
                             (cpu_kernel_compile_check), or NULL */
  struct CpuJitTree *tree; /* MAP with maps fused into its arrays, each of
                              whose functions compiles inline: the pass
                              that computes them all, element by element
                              (backend/jit.h, backend/map_tree.c); or NULL */
} PlanKernel;


typedef struct Plan {
  Def *def;           /* the host program: the copy of the planned Def */
  int ndefs;
  Def **defs;         /* def and the copies of the Defs it calls, in the
                         order they were planned (def first) */
  int nkernels;
  PlanKernel **kernels;
  int nfns;
  PlanFn **fns;
  int ngroups, nscan_maps;
  int nmatrices;
  PlanMatrix **matrices; /* the matrix products, by id (note.h) */
  void *gpu;          /* the CUDA backend's compiled form, made on first
                         use and owned here (backend/cuda/gpu_eval.c) */
} Plan;

/* The plan of d (of a checked Def whose slots are assigned), built on
   first use and kept in d->plan. The plan's own copies have themselves
   as plan, so planning one of them returns the same plan. */
Plan *plan_of_def(const Def *d);

/* What runs when d is called: d itself when it is a plan's copy, else the
   copy of d in d's plan. */
const Def *plan_runnable(const Def *d);

/* Builds a new plan of d (d->plan is neither read nor set). */
Plan *plan_lower(const Def *d);

/* The matrix product that the map t computes (note.h: PlanMatrix; its id
   not set), or NULL (matrix.c). */
PlanMatrix *plan_matrix_of(const Term *t);

/* Marks the lets of body whose arrays are given back once their body has
   its value (note.h: release; release.c). */
void plan_releases(Term *body);

/* The plan as text: each Def of the host program with its array builtins
   named by their kernels, then each kernel. */
char *plan_str(const Plan *p);

#endif
