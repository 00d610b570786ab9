/* kernel_int.h: the compiled kernel as kernel.c builds it and kernel_run.c
   binds and runs it. Internal to backend/. */
#ifndef UNA_KERNEL_INT_H
#define UNA_KERNEL_INT_H

#include "kernel.h"
#include "parallel.h"

enum { K_SELECT = CPU_K_SELECT, K_GATHER = CPU_K_GATHER, K_LOOP = CPU_K_LOOP }; /* opcodes: the Prim of a scalar builtin, or these */
enum { VK_PARAM = CPU_VR_PARAM, VK_CONST = CPU_VR_CONST, VK_INPUT = CPU_VR_INPUT, VK_TEMP = CPU_VR_TEMP,
       VK_ARRAY = CPU_VR_ARRAY };

typedef CpuKInstr KInstr;

enum { CPU_JIT_BLOCK, CPU_JIT_SCALAR, CPU_JIT_FOR, CPU_JIT_WHILE, CPU_JIT_RANGE, CPU_JIT_KINDS };
enum { CPU_JIT_TREE = CPU_JIT_KINDS }; /* a fused pass's (jit.h: CpuJitTree), not a kernel's */

/* What binding does, in order:
   B_SLOT    vals[vreg] = frame[slot]           (a free or hoisted variable)
   B_GLOBAL  vals[vreg] = *global->value
   B_EXPR    vals[vreg] = eval(term)            (a hoisted subterm)
   B_LET     frame[slot] = eval(term); vals[vreg] = it when vreg >= 0
   B_LETTUP  term is a LETTUP: frame[sym_i->slot] = component i of eval(rhs)
   B_ARRAY   arr[vreg] = eval(term), an array of reals (on the host)
   B_MATRIX  m = eval(term), a [[R]] of rows of one length L (else the
             binding fails): arr[vreg] = its rows in one buffer,
             arr[vreg + 1] = the offsets 0, L, 2 L, ... of its rows,
             arr[vreg + 2] = the column numbers 0, 1, ..., L - 1 (the
             gathers of m[i][j], kernel.c: gather2)
   B_TUPLES  a = eval(term), an array of (nested) tuples of slot reals:
             arr[vreg + k] = the k-th real of each element, as an array
             of reals (the gathers of a[i], kernel.c: gather_parts) */
typedef enum { B_SLOT, B_GLOBAL, B_EXPR, B_LET, B_LETTUP, B_ARRAY, B_MATRIX, B_TUPLES } BindKind;

typedef struct BindStep {
  BindKind kind;
  int ctx; /* 0: the lambda's enclosing frame; > 0: an inlined call's frame */
  int vreg;
  int slot;
  const Global *global;
  const Term *term;
} BindStep;

struct CpuKernel {
  int nparams;
  bool result_bool;
  int nvregs;
  int result;
  int nresults; /* 1, or the bodies of cpu_kernel_compile_multi */
  int *results;
  int ninstr;
  KInstr *code;
  int nexec;    /* the block program: code with pairs of arithmetic */
  struct XInstr *exec; /* instructions fused (see fuse_pairs) */
  int nsteps;
  BindStep *steps;
  int nctx;
  int *ctx_nslots;
  double *init;  /* per vreg: constants' values, else 0 */
  char *vkind;   /* per vreg: VK_* */
  const Term **vterm; /* per vreg: the INDEX term a gather's dst computes, else NULL */
  char *noload;  /* per vreg, or NULL: a gather whose element nothing reads
                    (a check kernel's, cpu_kernel_compile_check): its
                    indices are checked, nothing is read */
  int ninputs;
  int *inputs;   /* the vregs of kind VK_CONST or VK_INPUT */
  int nphys;     /* block buffers for temporaries */
  int *phys;     /* per vreg: its buffer (temporaries), else -1 */
  bool commutes; /* symmetric in its two parameters (kernel_commute.c), decided
                    when compiled */
  int nloops;
  CpuKLoop *loops; /* the K_LOOP instructions' loops, by number */
  /* Block buffers kept between runs, one set per parallel slot
     (cpu_kernel_runs' runs[i]): one builtin's runs of a kernel end before
     the next builtin runs it (kernels do not nest, and evaluation is one
     thread), so the next run reuses them instead of allocating
     (CPU_BLOCK doubles per input and temporary; the collector's cost on
     mid-sized arrays). Mutable: a cache on a compiled kernel. */
  double *spare[CPU_MAX_THREADS];
  double **spare_ptr[CPU_MAX_THREADS];
  /* jit.c's, per kind of compiled function (the block program, the
     one-element program, a for or while loop whose body this is, a range
     of elements): the
     work run before the kernel had an entry, and its entry (its source,
     its compiled function once there is one) */
  _Atomic long jit_work[CPU_JIT_KINDS];
  struct JitEntry *_Atomic jit[CPU_JIT_KINDS];
};

/* Whether k, just compiled, is symmetric in its parameters
   (kernel_commute.c; cpu_kernel_commutes then answers from k). */
bool cpu_kernel_decide_commutes(const CpuKernel *k);

/* An instruction of the block program (see fuse_pairs in kernel.c). */
typedef struct XInstr {
  int op;        /* as KInstr, or X_FUSED: */
  int inner, outer; /* ... dst = outer(inner(a, b), c), or outer(c, inner(a, b)) when left */
  bool left;
  int dst, a, b, c;
} XInstr;
enum { X_FUSED = CPU_K_SELECT + 1 };

/* The registers an instruction of the block program reads (a loop's:
   its count, initial values and uses); how many (at most max written). */
int cpu_xinstr_operands(const CpuKernel *k, const XInstr *in, int *out, int max);

static inline int arith_index(int op) {
  switch (op) {
  case PRIM_ADD: return 0;
  case PRIM_SUB: return 1;
  case PRIM_MUL: return 2;
  case PRIM_DIV: return 3;
  default: return -1;
  }
}

#endif
