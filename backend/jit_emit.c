/* jit_emit.c: the C source of a kernel's programs, which backend/jit.c
   compiles to native code: its block program (kernel_int.h: exec), its
   one-element program (code), and a whole scalar loop whose body (and
   condition) are step programs (loop_ops.c). The block program computes
   what exec_block in kernel_run.c computes, instruction for instruction:

   - a run of consecutive arithmetic instructions (+ - * /, their fused
     pairs, neg, abs, sqrt, floor, min, max, comparisons, and, or, not,
     select) becomes one loop over the block's CPU_BLOCK lanes, its
     temporaries in locals: each operand defined before the run is read
     once per lane, and only the registers read after the run (by a later
     instruction, a loop or as a result) are stored;
   - any other instruction (exp, log, sin ... whose block forms are
     SLEEF's, pow, a gather, a loop) is done by the engine itself: the
     function calls back `one(run, n, p, pc)` for instruction pc.

   Each operation is the C column of prims.def on doubles, with no
   contraction into fused multiply-adds (jit.c compiles with
   -ffp-contract=off, as the engine is compiled in ISO C mode), so the
   bits are the engine's. A run's loop is a function of its own whose
   pointers are `restrict` unless a stored register shares a block buffer
   with one it reads (the engine packs temporaries into buffers by their
   live ranges); then each lane reads all its operands before it stores,
   as the engine's order requires.

   The registers are the engine's block pointers, p[v] (kernel_run.c
   sets them: parameters, broadcast inputs and constants, temporaries'
   buffers, a gather's view); an input or a constant is read as the
   scalar p[v][0]. */
#include "jit.h"
#include "kernel_int.h"
#include "scalar.h"
#include "../frontend/ir/strbuf.h"

static const char *const c_text[PRIM__COUNT] = {
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) [PRIM_##ID] = #c,
#include "../frontend/ir/prims.def"
#undef SCALAR
};

static const int c_arity[PRIM__COUNT] = {
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) [PRIM_##ID] = arity,
#include "../frontend/ir/prims.def"
#undef SCALAR
};

/* The scalar builtins computed in the compiled loops: their C column
   uses operators, fabs, floor, sqrt, cpu_max and cpu_min only. */
static bool inline_prim(int op) {
  switch (op) {
  case PRIM_NEG:
  case PRIM_SQRT:
  case PRIM_ABS:
  case PRIM_FLOOR:
  case PRIM_STOPGRAD:
  case PRIM_ADD:
  case PRIM_SUB:
  case PRIM_MUL:
  case PRIM_DIV:
  case PRIM_MAX:
  case PRIM_MIN:
  case PRIM_EQ:
  case PRIM_NE:
  case PRIM_LT:
  case PRIM_LE:
  case PRIM_GT:
  case PRIM_GE:
  case PRIM_AND:
  case PRIM_OR:
  case PRIM_NOT: return true;
  default: return false;
  }
}

static bool is_inline(const XInstr *in) {
  return in->op == X_FUSED || in->op == K_SELECT || (in->op >= 0 && in->op < PRIM__COUNT && inline_prim(in->op));
}

/* dst = the C column of op on the locals ra (and rb). */
static void emit_op(StrBuf *b, int op, const char *dst, const char *ra, const char *rb) {
  if (c_arity[op] == 2)
    sb_printf(b, "      { const double a = %s, b = %s; %s = (double)(%s); }\n", ra, rb, dst, c_text[op]);
  else
    sb_printf(b, "      { const double a = %s; %s = (double)(%s); }\n", ra, dst, c_text[op]);
}

/* Register v's C name: R[v] for the one-element programs' array of
   registers (R never a or b: the C column's operands), else a local (cN
   for an input or constant, rN otherwise). */
static char *reg(const CpuKernel *k, int v, const char *R) {
  if (R) return una_sprintf("%s[%d]", R, v);
  char kind = k->vkind[v];
  return una_sprintf(kind == VK_CONST || kind == VK_INPUT ? "c%d" : "r%d", v);
}

/* A compiled instruction (is_inline) at indent, its registers named by
   reg; a local destination is declared. */
static void emit_instr(StrBuf *b, const CpuKernel *k, const XInstr *in, const char *R, const char *indent) {
  char *d = reg(k, in->dst, R);
  if (!R) sb_printf(b, "%sdouble %s;\n", indent, d);
  if (in->op == K_SELECT) {
    sb_printf(b, "%s%s = %s != 0 ? %s : %s;\n", indent, d, reg(k, in->c, R), reg(k, in->a, R), reg(k, in->b, R));
  } else if (in->op == X_FUSED) {
    sb_printf(b, "%s{\n%s  double t;\n", indent, indent);
    emit_op(b, in->inner, "t", reg(k, in->a, R), reg(k, in->b, R));
    if (in->left) emit_op(b, in->outer, d, reg(k, in->c, R), "t");
    else emit_op(b, in->outer, d, "t", reg(k, in->c, R));
    sb_printf(b, "%s}\n", indent);
  } else {
    emit_op(b, in->op, d, reg(k, in->a, R), c_arity[in->op] == 2 ? reg(k, in->b, R) : "0");
  }
}

/* The run exec[s..e): a function g<s> and its call. */
static void emit_run(StrBuf *fns, StrBuf *body, const CpuKernel *k, int s, int e, const char *live_after) {
  int nv = k->nvregs;
  char *defined = una_alloc((size_t)nv + 1), *seen = una_alloc((size_t)nv + 1);
  int *loads = NEW_ARRAY(int, 3 * (e - s) + 1), *stores = NEW_ARRAY(int, e - s + 1);
  int nloads = 0, nstores = 0;
  for (int i = s; i < e; i++) {
    const XInstr *in = &k->exec[i];
    int ops[3], m = cpu_xinstr_operands(k, in, ops, 3);
    for (int j = 0; j < m; j++)
      if (!defined[ops[j]] && !seen[ops[j]]) {
        seen[ops[j]] = 1;
        loads[nloads++] = ops[j];
      }
    defined[in->dst] = 1;
    if (live_after[in->dst]) stores[nstores++] = in->dst;
  }
  /* restrict unless a store shares a buffer with a load */
  bool shared = false;
  for (int i = 0; i < nstores; i++)
    for (int j = 0; j < nloads; j++)
      if (k->phys[loads[j]] >= 0 && k->phys[loads[j]] == k->phys[stores[i]]) shared = true;
  const char *rq = shared ? "" : " restrict";
  sb_printf(fns, "static void g%d(", s);
  StrBuf call = {0};
  sb_printf(&call, "  g%d(", s);
  bool first = true;
  for (int i = 0; i < nstores; i++, first = false) {
    sb_printf(fns, "%sdouble *%s s%d", first ? "" : ", ", rq, stores[i]);
    sb_printf(&call, "%sp[%d]", first ? "" : ", ", stores[i]);
  }
  for (int j = 0; j < nloads; j++, first = false) {
    int v = loads[j];
    char kind = k->vkind[v];
    if (kind == VK_CONST || kind == VK_INPUT) {
      sb_printf(fns, "%sconst double c%d", first ? "" : ", ", v);
      sb_printf(&call, "%sp[%d][0]", first ? "" : ", ", v);
    } else {
      sb_printf(fns, "%sconst double *%s l%d", first ? "" : ", ", rq, v);
      sb_printf(&call, "%sp[%d]", first ? "" : ", ", v);
    }
  }
  if (first) sb_put(fns, "void");
  sb_printf(fns, ") {\n  for (int i = 0; i < %d; i++) {\n", CPU_BLOCK);
  for (int j = 0; j < nloads; j++) {
    char kind = k->vkind[loads[j]];
    if (kind != VK_CONST && kind != VK_INPUT) sb_printf(fns, "    const double r%d = l%d[i];\n", loads[j], loads[j]);
  }
  for (int i = s; i < e; i++) emit_instr(fns, k, &k->exec[i], NULL, "    ");
  for (int i = 0; i < nstores; i++) sb_printf(fns, "    s%d[i] = r%d;\n", stores[i], stores[i]);
  sb_put(fns, "  }\n}\n\n");
  sb_printf(body, "%s);\n", sb_str(&call));
}

static const char *const prelude =
    "/* Una: a kernel's program (backend/jit_emit.c) */\n"
    "typedef __SIZE_TYPE__ size_t;\n"
    "double fabs(double);\ndouble floor(double);\ndouble sqrt(double);\n"
    "typedef void (*una_one)(const void *, size_t, double **, int);\n"
    "typedef void (*una_one1)(const void *, double *, int);\n";

/* The start of every source: the prelude, then min and max. */
static void begin(StrBuf *b) {
  sb_put(b, prelude);
  sb_put(b, CPU_MINMAX(CPU_TEXT));
  sb_put(b, "\n\n");
}

char *cpu_jit_block_source(const CpuKernel *k) {
  int nv = k->nvregs, nx = k->nexec;
  /* the last instruction reading each register; the results are read after */
  int *last = NEW_ARRAY(int, nv + 1);
  for (int v = 0; v < nv; v++) last[v] = -1;
  int maxops = nv + 8, *ops = NEW_ARRAY(int, maxops);
  for (int i = 0; i < nx; i++) {
    int m = cpu_xinstr_operands(k, &k->exec[i], ops, maxops);
    for (int j = 0; j < m; j++) last[ops[j]] = i;
  }
  for (int i = 0; i < k->nresults; i++) last[k->results[i]] = nx;
  int worth = 0;
  for (int s = 0; s < nx;) {
    int e = s, n = 0;
    while (e < nx && is_inline(&k->exec[e])) n += k->exec[e++].op == X_FUSED ? 2 : 1;
    if (n > worth) worth = n;
    s = e > s ? e : s + 1;
  }
  if (worth < 2) return NULL;

  StrBuf fns = {0}, body = {0};
  begin(&fns);
  char *live_after = una_alloc((size_t)nv + 1);
  for (int s = 0; s < nx;) {
    if (!is_inline(&k->exec[s])) {
      sb_printf(&body, "  one(run, n, p, %d);\n", s);
      s++;
      continue;
    }
    int e = s;
    while (e < nx && is_inline(&k->exec[e])) e++;
    for (int v = 0; v < nv; v++) live_after[v] = last[v] >= e;
    emit_run(&fns, &body, k, s, e, live_after);
    s = e;
  }
  sb_printf(&fns, "void una_block(double **p, const void *run, size_t n, una_one one) {\n%s}\n", sb_str(&body));
  return sb_str(&fns);
}

/* The longest run of compiled instructions in k's one-element program. */
static int scalar_worth(const CpuKernel *k) {
  int run = 0, worth = 0;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->code[i];
    XInstr x = {in->op, -1, -1, false, in->dst, in->a, in->b, in->c};
    run = is_inline(&x) ? run + 1 : 0;
    if (run > worth) worth = run;
  }
  return worth;
}

/* k's one-element program over the registers R[] (reg); an instruction
   not compiled is one(RUN, R, pc). */
static void emit_scalar(StrBuf *b, const CpuKernel *k, const char *R, const char *RUN, const char *indent) {
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->code[i];
    XInstr x = {in->op, -1, -1, false, in->dst, in->a, in->b, in->c};
    if (is_inline(&x)) emit_instr(b, k, &x, R, indent);
    else sb_printf(b, "%sone(%s, %s, %d);\n", indent, RUN, R, i);
  }
}

/* The one-element program: the registers are r[] (the run's sregs); an
   instruction not compiled is one(run, r, pc) over k->code[pc]. */
char *cpu_jit_scalar_source(const CpuKernel *k) {
  if (scalar_worth(k) < 2) return NULL;
  StrBuf b = {0};
  begin(&b);
  sb_put(&b, "void una_scalar(double *r, const void *run, una_one1 one) {\n");
  emit_scalar(&b, k, "r", "run", "  ");
  sb_put(&b, "}\n");
  return sb_str(&b);
}

/* A whole loop over a state of w reals s[]: `for` (cond NULL) count
   times, the body's parameters the state then the index; or `while`
   cond holds. The registers are local copies of the runs' (rc, rb), so
   the compiler keeps them in its own; poll(pt) every poll_mask + 1
   iterations, as loop_ops.c's loops do. */
char *cpu_jit_loop_source(const CpuKernel *cond, const CpuKernel *body, int w, int poll_mask) {
  if (scalar_worth(body) < 2 && (!cond || scalar_worth(cond) < 2)) return NULL;
  StrBuf b = {0};
  begin(&b);
  sb_printf(&b, "typedef void (*una_poll)(const void *);\n"
                "void una_loop(double *s, double count, double *rc, double *rb, const void *crun, const void *brun,\n"
                "              una_one1 one, una_poll poll, const void *pt) {\n"
                "  double breg[%d];\n  for (int j = 0; j < %d; j++) breg[j] = rb[j];\n",
            body->nvregs + 1, body->nvregs);
  if (cond)
    sb_printf(&b, "  double creg[%d];\n  for (int j = 0; j < %d; j++) creg[j] = rc[j];\n"
                  "  for (unsigned long long i = 0;; i++) {\n    if ((i & %d) == 0) poll(pt);\n",
              cond->nvregs + 1, cond->nvregs, poll_mask);
  else
    sb_printf(&b, "  for (double i = 0; i < count; i++) {\n    if (((long long)i & %d) == 0) poll(pt);\n", poll_mask);
  if (cond) {
    for (int j = 0; j < w; j++) sb_printf(&b, "    creg[%d] = s[%d];\n", j, j);
    emit_scalar(&b, cond, "creg", "crun", "    ");
    sb_printf(&b, "    if (creg[%d] == 0) break;\n", cond->result);
  }
  for (int j = 0; j < w; j++) sb_printf(&b, "    breg[%d] = s[%d];\n", j, j);
  if (!cond) sb_printf(&b, "    breg[%d] = i;\n", w);
  emit_scalar(&b, body, "breg", "brun", "    ");
  for (int j = 0; j < body->nresults; j++) sb_printf(&b, "    s[%d] = breg[%d];\n", j, body->results[j]);
  sb_put(&b, "  }\n}\n");
  return sb_str(&b);
}

bool cpu_jit_inline_kernel(const CpuKernel *k) {
  if (k->nresults != 1 || k->result_bool || k->nparams > 2 || k->nloops > 0 || k->nexec < 1) return false;
  for (int i = 0; i < k->nexec; i++)
    if (!is_inline(&k->exec[i])) return false;
  return true;
}

/* A kernel all of whose instructions are compiled, with one real result:
   the whole range x[0..n) (and y) into out[0..n), one loop, no blocks. out
   may be x or y itself (each element is read before it is written: the
   loop may run in vectors, ivdep); sr are the run's sregs (its inputs'
   and constants' values). NULL for any other kernel. One instruction is
   enough: the loop saves the block runner's calls. */
char *cpu_jit_range_source(const CpuKernel *k) {
  if (!cpu_jit_inline_kernel(k)) return NULL;
  StrBuf b = {0};
  begin(&b);
  sb_put(&b, "void una_range(const double *x, const double *y, double *out, const double *sr, size_t n) {\n");
  for (int v = 0; v < k->nvregs; v++)
    if (k->vkind[v] == VK_CONST || k->vkind[v] == VK_INPUT) sb_printf(&b, "  const double c%d = sr[%d];\n", v, v);
  sb_put(&b, "#pragma GCC ivdep\n  for (size_t i = 0; i < n; i++) {\n    const double r0 = x[i];\n");
  if (k->nparams == 2) sb_put(&b, "    const double r1 = y[i];\n");
  for (int i = 0; i < k->nexec; i++) emit_instr(&b, k, &k->exec[i], NULL, "    ");
  sb_printf(&b, "    out[i] = %s;\n  }\n}\n", reg(k, k->result, NULL));
  return sb_str(&b);
}


/* The fused pass t (jit.h: CpuJitTree) over the whole range: per element,
   each map's instructions in its own scope, its parameters the leaves'
   elements or the results of the maps before it, its inputs and
   constants read once before the loop (map q's register v as q<q>c<v>).
   The operations are each map's own, in its order, so the bits are the
   maps' one after the other. */
char *cpu_jit_tree_source(const CpuJitTree *t) {
  for (int q = 0; q < t->n; q++)
    if (!cpu_jit_inline_kernel(t->k[q])) return NULL;
  StrBuf b = {0};
  begin(&b);
  sb_put(&b, "void una_tree(const double *const *in, double *out, const double *const *sr, size_t n) {\n");
  for (int q = 0; q < t->n; q++) {
    const CpuKernel *k = t->k[q];
    for (int v = 0; v < k->nvregs; v++)
      if (k->vkind[v] == VK_CONST || k->vkind[v] == VK_INPUT) sb_printf(&b, "  const double q%dc%d = sr[%d][%d];\n", q, v, q, v);
  }
  sb_put(&b, "#pragma GCC ivdep\n  for (size_t i = 0; i < n; i++) {\n");
  for (int q = 0; q < t->n; q++) {
    const CpuKernel *k = t->k[q];
    sb_printf(&b, "    double v%d;\n    {\n", q);
    for (int j = 0; j < k->nparams; j++) {
      int s = t->in[q][j];
      if (s >= 0) sb_printf(&b, "      const double r%d = in[%d][i];\n", j, s);
      else sb_printf(&b, "      const double r%d = v%d;\n", j, -1 - s);
    }
    for (int v = 0; v < k->nvregs; v++)
      if (k->vkind[v] == VK_CONST || k->vkind[v] == VK_INPUT) sb_printf(&b, "      const double c%d = q%dc%d;\n", v, q, v);
    for (int i = 0; i < k->nexec; i++) emit_instr(&b, k, &k->exec[i], NULL, "      ");
    sb_printf(&b, "      v%d = %s;\n    }\n", q, reg(k, k->results[0], NULL));
  }
  sb_printf(&b, "    out[i] = v%d;\n  }\n}\n", t->n - 1);
  return sb_str(&b);
}
