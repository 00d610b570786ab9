/* kernel.h: the fast path for scalar lambda bodies. A lambda (x. e) or
   (x, y. e) whose parameters are R and whose body has type R or B and uses
   only scalar builtins, if, let, literals, the parameters, free variables of
   type R or B and calls of such scalar functions is compiled once into a
   small register program. cpu_kernel_block runs it over a block of up to
   CPU_BLOCK elements, one tight loop per instruction (the numexpr way);
   cpu_kernel_call1 runs it on one element, for sequential folds and scans.

   Parts of the body that do not depend on the parameters (`length a`,
   `sum w`, a let of an array) are evaluated once, when the kernel is bound
   to the current frame, with the tree evaluator. */
#ifndef UNA_KERNEL_H
#define UNA_KERNEL_H

#include "exec.h"
#include "vmath.h" /* CPU_VECTOR_LOOP */
#include "value.h"
#include "../frontend/ir/term.h"

/* Elements per block: each virtual register holds this many doubles. */
#define CPU_BLOCK 256


typedef struct CpuKernel CpuKernel;

/* The kernel of the LAM term lam: the one its execution plan compiled
   (backend/plan/plan.h: lam->note), or, for a lambda outside any plan,
   compiled now; NULL when the lambda does not qualify (then use the
   generic path). */
const CpuKernel *cpu_kernel_for(const Term *lam);

/* Compiles lam; NULL when it does not qualify. */
const CpuKernel *cpu_kernel_compile(const Term *lam);

/* The kernel of lam for its errors only (a dead map kept for them): no
   result, only its gathers and loops and what they read, and a gather
   whose element nothing then reads checks its indices without reading
   the array (the faults are lam's kernel's, in the same order); NULL when
   lam does not qualify. */
const CpuKernel *cpu_kernel_compile_check(const Term *lam);

/* cpu_kernel_compile, with a body too deeply nested for the compiler's
   recursion getting no kernel (an interrupt is raised again). */
const CpuKernel *cpu_kernel_compile_guarded(const Term *lam);

/* Whether a two-parameter scalar kernel is symmetric in its parameters,
   so that a reduce may combine its elements out of order (array_ops.c's
   lanes, the GPU's strided folds). reduce's contract is associativity
   only: an operator that is not known to commute is folded in element
   order (any bracketing, never a permutation). True when swapping k's two
   parameters gives the same program: the result's expression, with the
   operands of the builtins prims.def marks LAW_COMM (+ * == != && || max
   min) in a canonical order, is the same
   either way (max and min commute as reals: the sign of a zero result may
   change, as with the builtin monoids). False when that cannot be shown
   (the operator may still commute: `if x < y then x else y`). Decided
   when the kernel is compiled (kernel_commute.c). */
bool cpu_kernel_commutes(const CpuKernel *k);

/* True when the kernel's result is a boolean (produced as 0.0 / 1.0). */
bool cpu_kernel_returns_bool(const CpuKernel *k);

/* Number of instructions of the compiled program, and of the program that
   runs over blocks, where pairs of + - * / are fused (for tests). */
int cpu_kernel_size(const CpuKernel *k);
int cpu_kernel_block_size(const CpuKernel *k);

/* The compiled program, read-only, for code generators (backend/cuda).
   Virtual registers: 0 and 1 the parameters (1 unused with one parameter),
   then constants (value: cpu_kernel_const), inputs (bound by
   cpu_kernel_bind: run->sregs[v]) and temporaries, each the dst of one
   instruction (SSA), and arrays (a [R] that does not depend on the
   parameters, bound by cpu_kernel_bind: CPU_VR_ARRAY). An instruction's
   op is a scalar Prim applied to a (and b), CPU_K_SELECT: dst = c != 0 ?
   a : b, or CPU_K_GATHER: dst = a[b], a an array vreg and b an index,
   checked (an index that is not an integer in bounds is recorded with
   fe_fault and raised at the INDEX term cpu_kernel_index_term(k, dst)
   by the next poll; the element is then nan; where c >= 0, a gather in
   a branch, only the lanes whose c is not 0 read, the others are 0), or
   CPU_K_LOOP: the loop
   cpu_kernel_loop(k, c) (dst is its first state register). Booleans are
   0.0 / 1.0. */
typedef struct CpuKInstr {
  int op;
  int dst, a, b, c; /* vregs; b and c are -1 when unused */
} CpuKInstr;
enum { CPU_K_SELECT = PRIM__COUNT, CPU_K_GATHER = PRIM__COUNT + 2, CPU_K_LOOP = PRIM__COUNT + 3 };
typedef enum { CPU_VR_PARAM, CPU_VR_CONST, CPU_VR_INPUT, CPU_VR_TEMP, CPU_VR_ARRAY } CpuVregKind;
const CpuKInstr *cpu_kernel_code(const CpuKernel *k); /* cpu_kernel_size entries */
int cpu_kernel_nparams(const CpuKernel *k);
int cpu_kernel_nvregs(const CpuKernel *k);
int cpu_kernel_result(const CpuKernel *k);
CpuVregKind cpu_kernel_vreg_kind(const CpuKernel *k, int v);
double cpu_kernel_const(const CpuKernel *k, int v);
const struct Term *cpu_kernel_index_term(const CpuKernel *k, int v);

/* A loop in a kernel (`loop p = e0 for i < n do e` in a body, its state
   an R or a tuple of Rs, n the same for every element; or `loop p = e0
   while c do e`, whose condition and body may not gather): the state
   registers start as init, then n times (or while the condition holds)
   the body (its own instructions, which may hold loops in turn) runs with
   the index register set to the iteration and the state registers are
   set to next (all at once). Every
   register of a loop's body and state is defined there and nowhere else;
   uses are the registers the body reads that it does not define. The
   count is an input or a constant, checked when the kernel is bound (an
   integer >= 0, else the binding fails and the generic path raises the
   error). */
typedef struct CpuKLoop {
  const struct Term *term; /* the LOOP_FOR or LOOP_WHILE */
  int count, index, n;     /* a while loop: count -1, index unused (-1) */
  int *init, *state, *next;
  int nbody;
  const CpuKInstr *body;
  int nuses;
  int *uses;
  /* a while loop: the condition's program (run before each iteration,
     its result in the register cond), and a register for the lanes still
     running (over a block, the lanes whose condition failed keep their
     state while the others go on) */
  int ncond;
  const CpuKInstr *cond_code;
  int cond, mask;
} CpuKLoop;
int cpu_kernel_nloops(const CpuKernel *k);
const CpuKLoop *cpu_kernel_loop(const CpuKernel *k, int id);
/* The registers the instruction in reads: a, b and c as its op has them,
   or a loop's count, initial values and uses. Returns how many (at most
   max are written). */
int cpu_kinstr_operands(const CpuKernel *k, const CpuKInstr *in, int *out, int max);
/* Whether k's code reads an array (CPU_K_GATHER). */
bool cpu_kernel_gathers(const CpuKernel *k);

/* A kernel bound to a frame: the values of its free variables and hoisted
   parts, and its block buffers. Lives on the caller's stack. */
typedef struct CpuKernelRun {
  const CpuKernel *k;
  double *sregs;   /* one double per virtual register (scalar mode) */
  double *bcast;   /* inputs broadcast to blocks */
  double *scratch; /* temporaries, CPU_BLOCK doubles each */
  double *pad;     /* two padded parameter blocks for partial blocks */
  double **ptr;    /* per virtual register: its block */
  const Array **arr; /* per virtual register: the bound array (CPU_VR_ARRAY) */
  double *stage;   /* CPU_MAX_STATE blocks: a loop's next state, staged */
  signed char consec[2]; /* per parameter, in the current block: whether its
                            values are consecutive integers (a map over
                            indices), 1 or 0; -1 not known yet */
} CpuKernelRun;

/* Binds k to frame (the enclosing Def's frame): reads its free variables and
   evaluates its hoisted parts. Returns false when evaluating a hoisted part
   raised an error (the caller then uses the generic path, which raises the
   same error where and if the element evaluation needs it); an interrupt is
   raised again. */
bool cpu_kernel_bind(const Exec *ex, const CpuKernel *k, Value *frame, CpuKernelRun *run);

/* Allocates run's block buffers now (cpu_kernel_block would on its first
   call), so that no allocation happens inside a parallel loop. */
void cpu_kernel_prepare(CpuKernelRun *run);

/* dst: a copy of the bound run src with buffers of its own (allocated
   here), for another thread. */
void cpu_kernel_clone(const CpuKernelRun *src, CpuKernelRun *dst);

/* cpu_kernel_prepare and cpu_kernel_clone with the kernel's spare block
   buffers of parallel slot `slot` (0 .. CPU_MAX_THREADS - 1), reused
   from the previous run of the kernel in that slot: for the runs of one
   builtin (cpu_kernel_runs), which end before the kernel runs again. */
void cpu_kernel_prepare_slot(CpuKernelRun *run, int slot);
void cpu_kernel_clone_slot(const CpuKernelRun *src, CpuKernelRun *dst, int slot);

/* Runs the kernel on n <= CPU_BLOCK elements: x[i] (and y[i] for two
   parameters) -> out[i]. out may be x or y itself, but must not otherwise
   overlap them. */
void cpu_kernel_block(CpuKernelRun *run, const double *x, const double *y, size_t n, double *out);

/* Runs the kernel on n <= CPU_BLOCK elements: cpu_kernel_out(run, i) is
   then result i's block (n valid elements) until the next run. With outs
   (which may be NULL), result i is also stored at outs[i] where that is
   not NULL (a whole block's computed result is written there directly;
   outs[i] may be x or y itself, but must not otherwise overlap them). */
void cpu_kernel_block_into(CpuKernelRun *run, const double *x, const double *y, size_t n, double *const *outs);
const double *cpu_kernel_out(const CpuKernelRun *run, int i);

/* cpu_kernel_block_into over the indices i0 .. i0 + n - 1 (the elements of
   `iota`, never stored; both parameters), known to be consecutive. */
void cpu_kernel_block_indices(CpuKernelRun *run, size_t i0, size_t n, double *const *outs);

/* One kernel computing the bodies of the lambdas lams[0..n) together over
   two parameter blocks: parameter j of lams[i] is block params[i][j] (0
   for x, 1 for y). The bodies share their free variables, hoisted parts and
   equal instructions (value numbering), so work common to them is done
   once; result i is the body of lams[i], with the bits it has alone. NULL
   when a lambda does not qualify or a body is not a real. */
const CpuKernel *cpu_kernel_compile_multi(int n, const Term *const *lams, const int (*params)[2]);

/* The same over one block of indices (iota's elements): parameter j of
   lams[i] is the index itself where arrays[i][j] is NULL, else the element
   of that array (a term of type [R] not depending on the lambdas'
   parameters, an array variable) at the index. The maps and map2s of
   several arrays, and maps over `iota n` that read arrays at their index,
   become one kernel this way. The caller checks the arrays' lengths
   (a gather out of bounds faults at the array term). */
const CpuKernel *cpu_kernel_compile_indexed(int n, const Term *const *lams, const Term *const (*arrays)[2]);
/* The same for map3's lambda lam over the arrays arrays[0..3) (variables
   of type [R]): parameter j is arrays[j]'s element at the index. NULL when
   lam does not qualify. */
const CpuKernel *cpu_kernel_compile_map3(const Term *lam, const Term *const arrays[3]);
int cpu_kernel_nresults(const CpuKernel *k);

/* Arrays of at most this many elements are run one element at a time
   (cpu_kernel_call1): setting up a run's blocks (CPU_BLOCK doubles per
   input and temporary) costs more than the elements themselves. */
enum { CPU_SMALL_ARRAY = 32 };

/* Runs the kernel on one element (y is ignored for one parameter). */
double cpu_kernel_call1(CpuKernelRun *run, double x, double y);

/* Loop steps. A loop's state of up to CPU_MAX_STATE reals: an R, or a
   tuple of Rs or of such tuples; cpu_state_width is the number of reals of
   a state of type t (a nested tuple's in order, depth first), or 0 for any
   other type. cpu_kernel_compile_step compiles a loop's
   function (x. e) or (x, i. e) (LOOP_FOR and LOOP_WHILE, prims.def) whose
   x is such a state over parameters that are the state's reals, then i:
   the body (e of x's type: one result per real) or a while loop's
   condition (e a B: one result). NULL when it does not qualify.
   cpu_kernel_step runs it once: params in, results out. */
enum { CPU_MAX_STATE = 16 };
int cpu_state_width(const Type *t);
const CpuKernel *cpu_kernel_compile_step(const Term *lam);
void cpu_kernel_step(CpuKernelRun *run, const double *params, double *results);
/* Runs instruction pc of run's one-element program on the registers r
   (the compiled programs' call for what they leave to the engine,
   backend/jit.h). */
void cpu_kernel_run_pc(const void *run, double *r, int pc);
/* A lambda of up to CPU_MAX_STATE parameters, each an R or a (nested)
   tuple of reals (map3's, or a map's over an array of tuples), whose body
   is an R or such a tuple, compiled over their reals, in order, as
   cpu_kernel_step's params, the body's reals its results; NULL when it
   does not qualify. cpu_elem_kernel_for: the plan's (note.h: step), or
   compiled now. */
const CpuKernel *cpu_kernel_compile_params(const Term *lam);
const CpuKernel *cpu_elem_kernel_for(const Term *lam);
/* The step program of a loop's function lam, or of map3's lambda (three
   parameters, cpu_kernel_compile_params): the one its plan compiled
   (plan/note.h), or, outside any plan, compiled now; NULL when none. */
const CpuKernel *cpu_step_kernel_for(const Term *lam);
/* The step program of a foldl, scanl or scanr function lam whose
   accumulator (parameter `state`: 0, or 1 for scanr) is an R or a (nested)
   tuple of reals and whose element is too: its parameters the
   accumulator's reals, then the element's (cpu_state_width's order); its
   results the new accumulator's. The plan's, or compiled now; NULL when
   it does not qualify. */
const CpuKernel *cpu_kernel_compile_fold(const Term *lam, int state);
const CpuKernel *cpu_fold_kernel_for(const Term *lam, int state);

#endif
