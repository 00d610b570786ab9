/* kernel.c: compiles scalar lambda bodies to register programs (see
   kernel.h); kernel_run.c binds and runs them.

   Compilation walks the body once. Virtual registers (vregs) are numbered:
   0 and 1 the parameters, then inputs (constants, free variables, globals
   and hoisted parts: one value per binding, broadcast to a block) and
   temporaries (one per instruction result: the program is in SSA form).
   A subterm of type R or B that does not depend on the parameters and is not
   a leaf is "hoisted": evaluated once at bind time by the tree evaluator
   (depends() decides, memoised per term). Calls of functions whose
   parameters and result are R or B are inlined, each in its own context
   with a fresh frame for its hoisted parts. Equal instructions are emitted
   once (value numbering, see emit). After compilation, dead
   instructions are dropped, pairs of arithmetic are fused for the block
   loops (fuse_pairs) and temporaries are packed into as few block buffers
   as their live ranges allow. */
#include "kernel.h"
#include "plan/note.h"
#include "../frontend/ir/ptrmap.h"
#include "kernel_int.h"

/* Limits: a body beyond them gets no kernel. MAX_VISITS bounds the work of
   inlining (calls nested in calls can multiply). */
enum { MAX_INSTR = 4096, MAX_INLINE_DEPTH = 32, MAX_VISITS = 200000 };

/* ---- int-valued maps over frontend/ir/ptrmap.h (an int v is stored as v + 1,
   since a NULL value reads as absent; every int stored here is >= -1) ---- */

typedef PtrMap PMap;

static int pmap_get(const PMap *m, const void *k, int dflt) {
  void *v = ptrmap_get(m, k);
  return v ? (int)((intptr_t)v - 1) : dflt;
}

static void pmap_put(PMap *m, const void *k, int v) {
  ASSERT(v >= -1);
  ptrmap_put(m, k, (void *)((intptr_t)v + 1));
}

/* ---- operands ---- */

static int loop_operands(const CpuKLoop *l, int *out, int max) {
  int n = 0;
  if (l->count >= 0) {
    if (n < max) out[n] = l->count;
    n++;
  }
  for (int i = 0; i < l->n; i++, n++)
    if (n < max) out[n] = l->init[i];
  for (int i = 0; i < l->nuses; i++, n++)
    if (n < max) out[n] = l->uses[i];
  return n;
}

static int operands_in(const CpuKLoop *loops, const KInstr *in, int *out, int max) {
  if (in->op == K_LOOP) return loop_operands(&loops[in->c], out, max);
  int n = 0;
  int ops[3] = {in->a, in->b, in->op == K_SELECT || in->op == K_GATHER ? in->c : -1};
  for (int i = 0; i < 3; i++)
    if (ops[i] >= 0) {
      if (n < max) out[n] = ops[i];
      n++;
    }
  return n;
}

int cpu_kinstr_operands(const CpuKernel *k, const CpuKInstr *in, int *out, int max) {
  return operands_in(k->loops, in, out, max);
}

int cpu_kernel_nloops(const CpuKernel *k) { return k->nloops; }
const CpuKLoop *cpu_kernel_loop(const CpuKernel *k, int id) { return &k->loops[id]; }

/* ---- compilation ---- */

typedef struct Compiler {
  KInstr *code;
  int ninstr, capinstr;
  BindStep *steps;
  int nsteps, capsteps;
  double *init;
  char *vkind;
  const Term **vterm;
  int nvregs, capv;
  int *ctx_nslots;
  int nctx, capctx;
  PMap globals; /* Global* -> vreg */
  int *vn;      /* value numbering: open hash of instruction indices, -1 empty */
  int capvn;
  int depth;
  long visits;
  int branch; /* > 0 inside a while loop's condition or body */
  const struct Path *path; /* inside an if's branch or the right operand of
                              && ||: the conditions that lead there (NULL:
                              all lanes) */
  CpuKLoop *loops;
  int nloops, caploops;
  int body_instrs; /* instructions moved into loops' bodies (MAX_INSTR counts them) */
} Compiler;

/* The branches a term is in, innermost first: condition k (the vreg of a
   boolean), or its negation, within outer. A gather there is masked by
   their conjunction, computed when a gather needs it. */
typedef struct Path {
  int k;
  bool negate;
  const struct Path *outer;
} Path;

/* A compilation context: the lambda's body, or one inlined call. */
typedef struct Ctx {
  int id;
  PMap env;    /* Sym* -> vreg: parameters and compiled lets */
  PMap dep;    /* Sym* -> 1: variables that depend on the parameters */
  PMap memo;   /* Term* -> 1 independent, 2 dependent */
  PMap inputs; /* Sym* -> vreg: variables read from the frame */
  PMap arrays; /* Sym* -> vreg: array variables gathered from (VK_ARRAY) */
  PMap matrices; /* Sym* or Global* -> vreg: [[R]] variables read as m[i][j] (B_MATRIX's three) */
  PMap records; /* Sym* or Global* -> vreg: arrays of tuples read as a[i] (B_TUPLES's, one a real component) */
  PtrMap tuples; /* Sym* -> int[]: a loop state's tuple, one vreg per component */
} Ctx;

#define GROW(arr, n, cap, T)                                   \
  do {                                                         \
    if ((n) >= (cap)) {                                        \
      int nc_ = (cap) ? (cap) * 2 : 16;                        \
      T *na_ = una_alloc(sizeof(T) * (size_t)nc_);             \
      if (n) memcpy(na_, (arr), sizeof(T) * (size_t)(n));      \
      (arr) = na_;                                             \
      (cap) = nc_;                                             \
    }                                                          \
  } while (0)

static int new_vreg(Compiler *c, int kind, double init) {
  if (c->nvregs >= c->capv) {
    int nc = c->capv ? c->capv * 2 : 16;
    double *ni = una_alloc(sizeof(double) * (size_t)nc);
    char *nk = una_alloc((size_t)nc);
    const Term **nt = una_alloc(sizeof(Term *) * (size_t)nc);
    if (c->nvregs) {
      memcpy(ni, c->init, sizeof(double) * (size_t)c->nvregs);
      memcpy(nk, c->vkind, (size_t)c->nvregs);
      memcpy(nt, c->vterm, sizeof(Term *) * (size_t)c->nvregs);
    }
    c->init = ni;
    c->vkind = nk;
    c->vterm = nt;
    c->capv = nc;
  }
  c->init[c->nvregs] = init;
  c->vkind[c->nvregs] = (char)kind;
  return c->nvregs++;
}

static int konst(Compiler *c, double v) {
  for (int i = 0; i < c->nvregs; i++)
    if (c->vkind[i] == VK_CONST && memcmp(&c->init[i], &v, sizeof v) == 0) return i;
  return new_vreg(c, VK_CONST, v);
}

static void add_step(Compiler *c, BindStep s) {
  GROW(c->steps, c->nsteps, c->capsteps, BindStep);
  c->steps[c->nsteps++] = s;
}

static BindStep step(BindKind kind, int ctx, int vreg, int slot, const Term *term) {
  BindStep s = {kind, ctx, vreg, slot, NULL, term};
  return s;
}

/* ---- value numbering: an instruction whose op and operands equal an
   earlier one's reuses its result (every op is pure), so the three
   `sigmoid a` of a gradient's partials are computed once. Operands of the
   ops that commute bit for bit in IEEE arithmetic (LAW_COMM_BITS in
   prims.def: + * == != && ||) are compared in either order. ---- */

static bool commutative(int op) {
  return op >= 0 && op < PRIM__COUNT && (fe_prims[op].laws & LAW_COMM_BITS);
}

static bool same_instr(const KInstr *in, int op, int a, int b, int cc) {
  if (in->op != op || in->c != cc) return false;
  return (in->a == a && in->b == b) || (commutative(op) && in->a == b && in->b == a);
}

static unsigned vn_hash(int op, int a, int b, int cc) {
  if (commutative(op) && a > b) {
    int t = a;
    a = b;
    b = t;
  }
  unsigned h = (unsigned)op * 0x9E3779B1u;
  h = (h ^ (unsigned)a) * 0x85EBCA77u;
  h = (h ^ (unsigned)(b + 1)) * 0xC2B2AE3Du;
  return (h ^ (unsigned)(cc + 1)) * 0x27D4EB2Fu;
}

static void vn_insert(Compiler *c, int i) {
  const KInstr *in = &c->code[i];
  unsigned m = (unsigned)c->capvn - 1, h = vn_hash(in->op, in->a, in->b, in->c) & m;
  while (c->vn[h] >= 0) h = (h + 1) & m;
  c->vn[h] = i;
}

/* The result of an earlier instruction equal to (op, a, b, cc), or -1. */
static int vn_find(Compiler *c, int op, int a, int b, int cc) {
  if (!c->capvn) return -1;
  unsigned m = (unsigned)c->capvn - 1;
  for (unsigned h = vn_hash(op, a, b, cc) & m; c->vn[h] >= 0; h = (h + 1) & m)
    if (same_instr(&c->code[c->vn[h]], op, a, b, cc)) return c->code[c->vn[h]].dst;
  return -1;
}

/* Keeps the table at most half full. */
static void vn_reserve(Compiler *c) {
  if (2 * (c->ninstr + 1) <= c->capvn) return;
  c->capvn = c->capvn ? 2 * c->capvn : 64;
  c->vn = una_alloc(sizeof(int) * (size_t)c->capvn);
  for (int i = 0; i < c->capvn; i++) c->vn[i] = -1;
  for (int i = 0; i < c->ninstr; i++) vn_insert(c, i);
}

static int emit(Compiler *c, int op, int a, int b, int cc) {
  int prev = vn_find(c, op, a, b, cc);
  if (prev >= 0) return prev;
  if (c->ninstr + c->body_instrs >= MAX_INSTR) return -1;
  int d = new_vreg(c, VK_TEMP, 0);
  GROW(c->code, c->ninstr, c->capinstr, KInstr);
  KInstr in = {op, d, a, b, cc};
  vn_reserve(c);
  c->code[c->ninstr++] = in;
  vn_insert(c, c->ninstr - 1);
  return d;
}

static bool scalar_type(const Type *t) {
  return t && (t->kind == TY_REAL || t->kind == TY_BOOL);
}

/* Where component k of a (nested) tuple of reals starts among its reals
   (cpu_state_width's flat order). */
static int part_offset(const Type *t, int k) {
  int o = 0;
  for (int i = 0; i < k; i++) o += cpu_state_width(t->elems[i]);
  return o;
}

/* Binds x, of type R or a (nested) tuple of reals, to the registers
   regs[0..width) (a copy of them for a tuple). */
static void bind_parts(Ctx *x, const Sym *s, const int *regs);

/* Whether t depends on the context's parameters; records the let-bound
   variables that do in x->dep. Visits every kid (so that the lets inside are
   all classified). A save is never hoisted, so it counts as dependent. */
static bool depends(Ctx *x, const Term *t) {
  fe_stack_check(t->span);
  int m = pmap_get(&x->memo, t, 0);
  if (m) return m == 2;
  bool d = false;
  switch (t->kind) {
  case T_VAR: d = pmap_get(&x->dep, t->sym, 0) != 0; break;
  case T_LET:
    d = depends(x, t->kids[0]);
    if (d) pmap_put(&x->dep, t->sym, 1);
    d = depends(x, t->kids[1]) || d;
    break;
  case T_LETTUP:
    d = depends(x, t->kids[0]);
    if (d)
      for (int i = 0; i < t->nsyms; i++) pmap_put(&x->dep, t->syms[i], 1);
    d = depends(x, t->kids[1]) || d;
    break;
  default:
    for (int i = 0; i < t->nkids; i++) d = depends(x, t->kids[i]) || d;
    if (t->kind == T_PRIM && t->prim == PRIM_SAVE) d = true;
    break;
  }
  pmap_put(&x->memo, t, d ? 2 : 1);
  return d;
}

static int compile(Compiler *c, Ctx *x, const Term *t);
static bool compile_binding(Compiler *c, Ctx *x, const Term *t);
static bool compile_parts(Compiler *c, Ctx *x, const Term *t, int n, int *out);

static int compile_call(Compiler *c, Ctx *x, const Term *t) {
  const Def *d = t->def;
  if (c->depth >= MAX_INLINE_DEPTH || d->nparams != t->nkids || !scalar_type(d->ret)) return -1;
  for (int i = 0; i < d->nparams; i++)
    if (!scalar_type(d->params[i]->type)) return -1;
  int *args = una_alloc(sizeof(int) * (size_t)(t->nkids + 1));
  for (int i = 0; i < t->nkids; i++)
    if ((args[i] = compile(c, x, t->kids[i])) < 0) return -1;
  GROW(c->ctx_nslots, c->nctx, c->capctx, int);
  Ctx y = {0};
  y.id = c->nctx;
  c->ctx_nslots[c->nctx++] = d->nslots;
  for (int i = 0; i < d->nparams; i++) {
    pmap_put(&y.env, d->params[i], args[i]);
    pmap_put(&y.dep, d->params[i], 1);
  }
  c->depth++;
  depends(&y, d->body);
  int r = compile(c, &y, d->body);
  c->depth--;
  return r;
}

static int compile_var(Compiler *c, Ctx *x, const Sym *s) {
  int v = pmap_get(&x->env, s, -1);
  if (v >= 0) return v;
  if (pmap_get(&x->dep, s, 0) || s->slot < 0) return -1;
  v = pmap_get(&x->inputs, s, -1);
  if (v >= 0) return v;
  v = new_vreg(c, VK_INPUT, 0);
  add_step(c, step(B_SLOT, x->id, v, s->slot, NULL));
  pmap_put(&x->inputs, s, v);
  return v;
}

/* Compiles the binding of the LET or LETTUP t (not its body): a part that
   does not depend on the parameters is evaluated when binding; a tuple
   split must be a tuple written out or a loop state's tuple. */
static bool compile_binding(Compiler *c, Ctx *x, const Term *t) {
  const Term *rhs = t->kids[0];
  if (t->kind == T_LET) {
    if (!depends(x, rhs)) {
      int v = scalar_type(rhs->type) ? new_vreg(c, VK_INPUT, 0) : -1;
      if (t->sym->slot < 0) return false;
      add_step(c, step(B_LET, x->id, v, t->sym->slot, rhs));
      if (v >= 0) pmap_put(&x->env, t->sym, v);
      return true;
    }
    int w = scalar_type(rhs->type) ? 0 : cpu_state_width(rhs->type);
    if (w >= 2) { /* a tuple of reals: one register per component */
      int *parts = NEW_ARRAY(int, w);
      if (!compile_parts(c, x, rhs, w, parts)) return false;
      ptrmap_put(&x->tuples, t->sym, parts);
      return true;
    }
    int r = compile(c, x, rhs);
    if (r < 0) return false;
    pmap_put(&x->env, t->sym, r);
    return true;
  }
  if (!depends(x, rhs)) {
    for (int i = 0; i < t->nsyms; i++)
      if (t->syms[i]->slot < 0) return false;
    add_step(c, step(B_LETTUP, x->id, -1, -1, t));
    return true;
  }
  if (rhs->kind == T_TUPLE && rhs->nkids == t->nsyms) {
    for (int i = 0; i < t->nsyms; i++) {
      int w = scalar_type(rhs->kids[i]->type) ? 1 : cpu_state_width(rhs->kids[i]->type), parts[CPU_MAX_STATE];
      if (w == 0 || !compile_parts(c, x, rhs->kids[i], w, parts)) return false;
      bind_parts(x, t->syms[i], parts);
    }
    return true;
  }
  int w = cpu_state_width(rhs->type), parts[CPU_MAX_STATE];
  if (w == 0 || !compile_parts(c, x, rhs, w, parts)) return false;
  for (int i = 0; i < t->nsyms; i++) bind_parts(x, t->syms[i], parts + part_offset(rhs->type, i));
  return true;
}

static void bind_parts(Ctx *x, const Sym *s, const int *regs) {
  if (scalar_type(s->type)) {
    pmap_put(&x->env, s, regs[0]);
    return;
  }
  int w = cpu_state_width(s->type);
  int *copy = NEW_ARRAY(int, w);
  memcpy(copy, regs, sizeof(int) * (size_t)w);
  ptrmap_put(&x->tuples, s, copy);
}

/* Forgets what depends() found for t and below (a loop's body, before
   its state and index are marked as depending on the parameters). */
static void forget(Ctx *x, const Term *t) {
  fe_stack_check(t->span);
  pmap_put(&x->memo, t, -1);
  for (int i = 0; i < t->nkids; i++) forget(x, t->kids[i]);
}

/* Compiles the body of the loop function lam (its state sym bound to the
   registers state, its index to index) into *code, cut out of the main
   program: results into out[0..nout). */
static bool compile_loop_fn(Compiler *c, Ctx *x, const Term *lam, int n, int *state, int index, int nout,
                            int *out, KInstr **code, int *ncode) {
  const Sym *st = lam->syms[0];
  bind_parts(x, st, state);
  pmap_put(&x->dep, st, 1);
  if (lam->nsyms == 2) {
    pmap_put(&x->env, lam->syms[1], index);
    pmap_put(&x->dep, lam->syms[1], 1);
  }
  forget(x, lam->kids[0]);
  depends(x, lam->kids[0]);
  int start = c->ninstr;
  bool ok = nout == 1 && scalar_type(lam->kids[0]->type) ? (out[0] = compile(c, x, lam->kids[0])) >= 0
                                                         : compile_parts(c, x, lam->kids[0], nout, out);
  if (!ok) return false;
  /* the instructions leave the main program for the loop's */
  *ncode = c->ninstr - start;
  *code = NEW_ARRAY(KInstr, *ncode + 1);
  if (*ncode > 0) memcpy(*code, c->code + start, sizeof(KInstr) * (size_t)*ncode);
  c->ninstr = start;
  c->body_instrs += *ncode;
  for (int i = 0; i < c->capvn; i++) c->vn[i] = -1; /* no later instruction reuses them */
  for (int i = 0; i < c->ninstr; i++) vn_insert(c, i);
  return true;
}

/* Adds the registers that code reads and does not define (per defined)
   to uses, once each (per seen). */
static void free_uses(Compiler *c, const KInstr *code, int ncode, char *defined, char *seen, int *uses, int *nuses) {
  for (int i = 0; i < ncode; i++) {
    defined[code[i].dst] = 1;
    if (code[i].op == K_LOOP) {
      const CpuKLoop *inner = &c->loops[code[i].c];
      for (int j = 0; j < inner->n; j++) defined[inner->state[j]] = 1;
    }
  }
  int *ops = NEW_ARRAY(int, c->nvregs + 8);
  for (int i = 0; i < ncode; i++) {
    int m = operands_in(c->loops, &code[i], ops, c->nvregs + 8);
    for (int j = 0; j < m; j++)
      if (!defined[ops[j]] && !seen[ops[j]]) {
        seen[ops[j]] = 1;
        uses[(*nuses)++] = ops[j];
      }
  }
}

/* A loop in a body, its state n reals (a CpuKLoop): LOOP_FOR (s, i. e) e0
   n whose n does not depend on the parameters (every element runs the
   body as many times), or LOOP_WHILE (s. e) e0 (s. c) whose condition and
   body do not gather (a lane whose condition failed computes the body
   anyway, its result dropped). The state's registers into out. */
static bool compile_loop(Compiler *c, Ctx *x, const Term *t, int *out) {
  bool is_while = t->prim == PRIM_LOOP_WHILE;
  const Term *lam = t->kids[0];
  int n = cpu_state_width(t->type);
  if (!n || (!is_while && (lam->nsyms != 2 || depends(x, t->kids[2])))) return false;
  int count = is_while ? -1 : compile(c, x, t->kids[2]);
  int *init = NEW_ARRAY(int, n);
  if ((!is_while && count < 0) || !compile_parts(c, x, t->kids[1], n, init)) return false;
  int *state = NEW_ARRAY(int, n);
  for (int i = 0; i < n; i++) state[i] = new_vreg(c, VK_TEMP, 0);
  int index = is_while ? -1 : new_vreg(c, VK_TEMP, 0), mask = is_while ? new_vreg(c, VK_TEMP, 0) : -1;
  KInstr *cond_code = NULL, *body = NULL;
  int ncond = 0, nbody = 0, cond = -1, *next = NEW_ARRAY(int, n);
  if (is_while) c->branch++;
  bool ok = (!is_while || compile_loop_fn(c, x, t->kids[2], n, state, -1, 1, &cond, &cond_code, &ncond)) &&
            compile_loop_fn(c, x, lam, n, state, index, n, next, &body, &nbody);
  if (is_while) c->branch--;
  if (!ok) return false;
  /* the registers the condition and the body read and do not define */
  char *defined = una_alloc((size_t)c->nvregs + 1), *seen = una_alloc((size_t)c->nvregs + 1);
  for (int i = 0; i < n; i++) defined[state[i]] = 1;
  if (index >= 0) defined[index] = 1;
  if (mask >= 0) defined[mask] = 1;
  int *uses = NEW_ARRAY(int, c->nvregs + n + 1), nuses = 0;
  free_uses(c, cond_code, ncond, defined, seen, uses, &nuses);
  free_uses(c, body, nbody, defined, seen, uses, &nuses);
  for (int j = 0; j < n; j++)
    if (!defined[next[j]] && !seen[next[j]]) {
      seen[next[j]] = 1;
      uses[nuses++] = next[j];
    }
  if (cond >= 0 && !defined[cond] && !seen[cond]) {
    seen[cond] = 1;
    uses[nuses++] = cond;
  }
  GROW(c->loops, c->nloops, c->caploops, CpuKLoop);
  int id = c->nloops++;
  c->loops[id] = (CpuKLoop){t, count, index, n, init, state, next, nbody, body, nuses, uses,
                            ncond, cond_code, cond, mask};
  if (c->ninstr + c->body_instrs >= MAX_INSTR) return false;
  GROW(c->code, c->ninstr, c->capinstr, KInstr);
  c->code[c->ninstr++] = (KInstr){K_LOOP, state[0], count, -1, id};
  vn_reserve(c);
  memcpy(out, state, sizeof(int) * (size_t)n);
  return true;
}

/* The vreg of the lanes that take the branches p (1.0 or 0.0); -1 when an
   instruction could not be added. */
static int path_mask(Compiler *c, const Path *p) {
  int k = p->negate ? emit(c, PRIM_NOT, p->k, -1, -1) : p->k;
  if (k < 0 || !p->outer) return k;
  int o = path_mask(c, p->outer);
  return o < 0 ? -1 : emit(c, PRIM_AND, o, k, -1);
}

/* A gather from the VK_ARRAY a at the index in vreg i, masked in a
   branch, whose fault is raised at the term at. */
static int gather_reg(Compiler *c, int a, int i, const Term *at) {
  int m = c->path ? path_mask(c, c->path) : -1;
  if (c->path && m < 0) return -1;
  int d = emit(c, K_GATHER, a, i, m);
  if (d >= 0 && !c->vterm[d]) c->vterm[d] = at;
  return d;
}

/* a[i] with a an array of reals that does not depend on the parameters
   (bound once, as a hoisted part) and i that does: a gather, the element
   of a at the index in vreg i; at is the term a fault is raised at. In a
   branch, the gather is masked by path_mask. */
static int gather_at(Compiler *c, Ctx *x, const Term *a, int i, const Term *at) {
  /* one array register per variable, so that equal reads are one value
     (value numbering) and so is all that is computed from them */
  bool var = a->kind == T_VAR;
  int av = var ? pmap_get(&x->arrays, a->sym, -1) : -1;
  if (av < 0) {
    av = new_vreg(c, VK_ARRAY, 0);
    add_step(c, step(B_ARRAY, x->id, av, -1, a));
    if (var) pmap_put(&x->arrays, a->sym, av);
  }
  return gather_reg(c, av, i, at);
}

/* The key of an array read in a kernel, for one binding per array: its
   Sym or Global, NULL for any other term. */
static const void *array_key(const Term *a) {
  return a->kind == T_VAR ? (const void *)a->sym : a->kind == T_GLOBAL ? (const void *)a->global : NULL;
}

/* t = m[i][j], m a [[R]] variable (or global) that does not depend on the parameters
   and i, j that do: three gathers from the arrays the binding makes of m
   (B_MATRIX, kernel_int.h): its row offsets at i (i checked against the
   number of rows, a fault raised at m[i]), its column numbers at j (j
   checked against the rows' length, at m[i][j]) and its rows' one
   buffer at their sum. A ragged m fails the binding, and the tree
   evaluator runs the builtin. */
static int gather2(Compiler *c, Ctx *x, const Term *t) {
  const Term *row = t->kids[0], *m = row->kids[0];
  const void *key = array_key(m);
  int base = pmap_get(&x->matrices, key, -1);
  if (base < 0) {
    base = new_vreg(c, VK_ARRAY, 0); /* the rows' buffer, then the offsets, then the columns */
    new_vreg(c, VK_ARRAY, 0);
    new_vreg(c, VK_ARRAY, 0);
    add_step(c, step(B_MATRIX, x->id, base, -1, m));
    pmap_put(&x->matrices, key, base);
  }
  int i = compile(c, x, row->kids[1]);
  int off = i < 0 ? -1 : gather_reg(c, base + 1, i, row);
  int j = off < 0 ? -1 : compile(c, x, t->kids[1]);
  int col = j < 0 ? -1 : gather_reg(c, base + 2, j, t);
  int at = col < 0 ? -1 : emit(c, PRIM_ADD, off, col, -1);
  return at < 0 ? -1 : gather_reg(c, base, at, t);
}

static int compile_gather(Compiler *c, Ctx *x, const Term *t) {
  const Term *a = t->kids[0];
  /* a branch is computed whether taken or not (K_SELECT): a gather there
     is masked (the lanes that do not take it read nothing and cannot
     fault); in a while loop, whose lanes run on after their condition
     failed, it is not compiled */
  if (c->branch > 0 || !fe_type_is_real_array(a->type)) return -1;
  if (a->kind == T_PRIM && a->prim == PRIM_INDEX && (a->kids[0]->kind == T_VAR || a->kids[0]->kind == T_GLOBAL) &&
      fe_type_is_real_array(a->kids[0]->type->elem) && !depends(x, a->kids[0]) && depends(x, a))
    return gather2(c, x, t);
  if (depends(x, a)) return -1;
  int i = compile(c, x, t->kids[1]);
  return i < 0 ? -1 : gather_at(c, x, a, i, t);
}

/* t = a[i] of a (nested) tuple of n reals, a that does not depend on the
   parameters (bound once, as a hoisted part) and i that does: one gather
   per real component, from the arrays of components that the binding
   makes of a (B_TUPLES, kernel_int.h), into out. Not in a while loop, as
   compile_gather. */
static bool gather_parts(Compiler *c, Ctx *x, const Term *t, int n, int *out) {
  const Term *a = t->kids[0];
  if (c->branch > 0 || depends(x, a)) return false;
  /* one set of arrays per variable (value numbering, as gather_at) */
  const void *key = array_key(a);
  int base = key ? pmap_get(&x->records, key, -1) : -1;
  if (base < 0) {
    base = new_vreg(c, VK_ARRAY, 0); /* the components' arrays, in consecutive vregs */
    for (int k = 1; k < n; k++) new_vreg(c, VK_ARRAY, 0);
    add_step(c, step(B_TUPLES, x->id, base, n, a));
    if (key) pmap_put(&x->records, key, base);
  }
  int i = compile(c, x, t->kids[1]);
  if (i < 0) return false;
  for (int k = 0; k < n; k++)
    if ((out[k] = gather_reg(c, base + k, i, t)) < 0) return false;
  return true;
}

/* Compiles t (of type R or B) in context x; returns its vreg or -1 when t
   cannot be compiled. */
static int compile(Compiler *c, Ctx *x, const Term *t) {
  fe_stack_check(t->span);
  if (++c->visits > MAX_VISITS || !scalar_type(t->type)) return -1;
  switch (t->kind) {
  case T_NUM: return konst(c, t->num);
  case T_BOOL: return konst(c, t->b ? 1.0 : 0.0);
  case T_VAR: return compile_var(c, x, t->sym);
  case T_GLOBAL: {
    int v = pmap_get(&c->globals, t->global, -1);
    if (v >= 0) return v;
    v = new_vreg(c, VK_INPUT, 0);
    BindStep s = step(B_GLOBAL, x->id, v, -1, NULL);
    s.global = t->global;
    add_step(c, s);
    pmap_put(&c->globals, t->global, v);
    return v;
  }
  default: break;
  }
  if (!depends(x, t)) {
    int v = new_vreg(c, VK_INPUT, 0);
    add_step(c, step(B_EXPR, x->id, v, -1, t));
    return v;
  }
  switch (t->kind) {
  case T_LET:
  case T_LETTUP:
    if (!compile_binding(c, x, t)) return -1;
    return compile(c, x, t->kids[1]);
  case T_IF: {
    int k = compile(c, x, t->kids[0]), a = -1, b = -1;
    const Path *outer = c->path;
    Path then = {k, false, outer}, other = {k, true, outer};
    c->path = &then;
    if (k >= 0) a = compile(c, x, t->kids[1]);
    c->path = &other;
    if (a >= 0) b = compile(c, x, t->kids[2]);
    c->path = outer;
    return b < 0 ? -1 : emit(c, K_SELECT, a, b, k);
  }
  case T_PRIM: {
    PrimClass cls = fe_prims[t->prim].cls;
    if (t->prim == PRIM_INDEX) return compile_gather(c, x, t);
    if (t->prim == PRIM_LOOP_FOR || t->prim == PRIM_LOOP_WHILE) {
      int r;
      return compile_loop(c, x, t, &r) ? r : -1;
    }
    if (cls == P_SCALAR1 || cls == P_NOT) {
      int a = compile(c, x, t->kids[0]);
      if (t->prim == PRIM_STOPGRAD) return a; /* the identity */
      return a < 0 ? -1 : emit(c, (int)t->prim, a, -1, -1);
    }
    if (cls == P_SCALAR2 || cls == P_CMP || cls == P_LOGIC) {
      int a = compile(c, x, t->kids[0]), b = -1;
      /* && and || evaluate their right side when needed */
      const Path *outer = c->path;
      Path right = {a, t->prim == PRIM_OR, outer};
      if (cls == P_LOGIC) c->path = &right;
      if (a >= 0) b = compile(c, x, t->kids[1]);
      c->path = outer;
      if (b >= 0 && t->prim == PRIM_POW && c->vkind[b] == VK_CONST && c->init[b] == 2)
        return emit(c, PRIM_MUL, a, a, -1); /* as cpu_pow */
      return b < 0 ? -1 : emit(c, (int)t->prim, a, b, -1);
    }
    return -1;
  }
  case T_CALL: return compile_call(c, x, t);
  case T_PROJ: { /* a real component of a loop's state */
    int w = cpu_state_width(t->kids[0]->type), parts[CPU_MAX_STATE];
    if (w < 2 || !scalar_type(t->type) || !compile_parts(c, x, t->kids[0], w, parts)) return -1;
    return parts[part_offset(t->kids[0]->type, t->index)];
  }
  default: return -1;
  }
}

/* ---- the block program: pairs of arithmetic fused ----

   Each instruction of the block program is a loop over a block, whose
   cost is mostly its loads and stores. An arithmetic instruction (+ - * /)
   whose result only feeds another one becomes part of it: the pair
   (a * b) + c runs as one loop that keeps a * b in a register. The
   operations and their roundings are the same (no FMA), so are the bits.
   cpu_kernel_code and the one-element path keep the unfused program. */

static void fuse_pairs(CpuKernel *k) {
  int n = k->ninstr, nv = k->nvregs;
  int *uses = una_alloc(sizeof(int) * (size_t)(nv + 1)), *def = una_alloc(sizeof(int) * (size_t)(nv + 1));
  for (int v = 0; v < nv; v++) def[v] = -1;
  int *ops = NEW_ARRAY(int, nv + 8);
  for (int i = 0; i < n; i++) {
    const KInstr *in = &k->code[i];
    def[in->dst] = i;
    int m = operands_in(k->loops, in, ops, nv + 8);
    for (int j = 0; j < m; j++) uses[ops[j]]++;
  }
  for (int i = 0; i < k->nresults; i++) uses[k->results[i]] += 2; /* never folded away */
  bool *gone = una_alloc(sizeof(bool) * (size_t)(n + 1)), *fused = una_alloc(sizeof(bool) * (size_t)(n + 1));
  XInstr *x = NEW_ARRAY(XInstr, n + 1);
  for (int j = 0; j < n; j++) {
    const KInstr *in = &k->code[j];
    x[j] = (XInstr){in->op, -1, -1, false, in->dst, in->a, in->b, in->c};
    if (arith_index(in->op) < 0 || in->a == in->b) continue;
    for (int side = 0; side < 2; side++) {
      int v = side == 0 ? in->a : in->b, i = def[v];
      if (i < 0 || uses[v] != 1 || gone[i] || fused[i] || arith_index(k->code[i].op) < 0) continue;
      const KInstr *inner = &k->code[i];
      x[j] = (XInstr){X_FUSED, inner->op, in->op, side == 1, in->dst, inner->a, inner->b, side == 0 ? in->b : in->a};
      gone[i] = fused[j] = true;
      break;
    }
  }
  k->exec = NEW_ARRAY(XInstr, n + 1);
  for (int i = 0; i < n; i++)
    if (!gone[i]) k->exec[k->nexec++] = x[i];
}

int cpu_xinstr_operands(const CpuKernel *k, const XInstr *in, int *out, int max) {
  if (in->op == K_LOOP) return loop_operands(&k->loops[in->c], out, max);
  int n = 0;
  int v[3] = {in->a, in->b, in->c};
  for (int i = 0; i < 3; i++)
    if (v[i] >= 0 && n < max) out[n++] = v[i];
  return n;
}

static void loop_buffers(CpuKernel *k, const CpuKLoop *l);

/* Buffers of their own for the registers of loop l: its state, its index
   and what its body defines (its inner loops' too). */
static void code_buffers(CpuKernel *k, const KInstr *code, int n) {
  for (int i = 0; i < n; i++) {
    const KInstr *in = &code[i];
    if (in->op == K_LOOP) loop_buffers(k, &k->loops[in->c]);
    else if (k->phys[in->dst] < 0) k->phys[in->dst] = k->nphys++;
  }
}

static void loop_buffers(CpuKernel *k, const CpuKLoop *l) {
  for (int i = 0; i < l->n; i++) k->phys[l->state[i]] = k->nphys++;
  if (l->index >= 0) k->phys[l->index] = k->nphys++;
  if (l->mask >= 0) k->phys[l->mask] = k->nphys++;
  code_buffers(k, l->cond_code, l->ncond);
  code_buffers(k, l->body, l->nbody);
}

/* Drops dead instructions, numbers inputs, packs temporaries into buffers. */
static CpuKernel *finish(Compiler *c, int nparams, bool result_bool, int nresults, int *results, bool check) {
  CpuKernel *k = NEW(CpuKernel);
  k->nparams = nparams;
  k->result_bool = result_bool;
  k->nvregs = c->nvregs;
  k->result = results[0];
  k->nresults = nresults;
  k->results = results;
  k->init = c->init;
  k->vkind = c->vkind;
  k->vterm = c->vterm;
  k->steps = c->steps;
  k->nsteps = c->nsteps;
  k->nctx = c->nctx;
  k->ctx_nslots = c->ctx_nslots;

  k->loops = c->loops;
  k->nloops = c->nloops;
  int *ops = NEW_ARRAY(int, c->nvregs + 8), maxops = c->nvregs + 8;
  char *live = una_alloc((size_t)c->nvregs + 1);
  for (int i = 0; i < nresults; i++) live[results[i]] = 1;
  bool *keep = una_alloc(sizeof(bool) * (size_t)(c->ninstr + 1));
  for (int i = c->ninstr - 1; i >= 0; i--) {
    const KInstr *in = &c->code[i];
    /* a gather, or a loop (whose body may gather), may raise: kept */
    if (!live[in->dst] && in->op != K_GATHER && in->op != K_LOOP) continue;
    keep[i] = true;
    if (check && in->op == K_GATHER && !live[in->dst]) {
      if (!k->noload) k->noload = una_alloc((size_t)c->nvregs + 1);
      k->noload[in->dst] = 1;
    }
    int m = operands_in(c->loops, in, ops, maxops);
    for (int j = 0; j < m; j++) live[ops[j]] = 1;
  }
  k->code = NEW_ARRAY(KInstr, c->ninstr + 1);
  for (int i = 0; i < c->ninstr; i++)
    if (keep[i]) k->code[k->ninstr++] = c->code[i];

  k->inputs = una_alloc(sizeof(int) * (size_t)(c->nvregs + 1));
  for (int v = 0; v < c->nvregs; v++)
    if (c->vkind[v] == VK_CONST || c->vkind[v] == VK_INPUT) k->inputs[k->ninputs++] = v;
  fuse_pairs(k);

  /* Live ranges (in the block program): a temporary's buffer is free after
     its last use; the destination never shares a buffer with an operand of
     its instruction. A loop's registers (state, index, body) get buffers
     of their own, never shared. */
  int *last = una_alloc(sizeof(int) * (size_t)(c->nvregs + 1));
  for (int v = 0; v < c->nvregs; v++) last[v] = -1;
  for (int i = 0; i < k->nexec; i++) {
    int m = cpu_xinstr_operands(k, &k->exec[i], ops, maxops);
    for (int j = 0; j < m; j++) last[ops[j]] = i;
  }
  for (int i = 0; i < nresults; i++) last[results[i]] = k->nexec;
  k->phys = una_alloc(sizeof(int) * (size_t)(c->nvregs + 1));
  for (int v = 0; v < c->nvregs; v++) k->phys[v] = -1;
  int *freelist = una_alloc(sizeof(int) * (size_t)(c->nvregs + 1));
  int nfree = 0;
  for (int i = 0; i < k->nexec; i++) {
    const XInstr *in = &k->exec[i];
    if (in->op == K_LOOP) loop_buffers(k, &k->loops[in->c]);
    else k->phys[in->dst] = nfree ? freelist[--nfree] : k->nphys++;
    int m = cpu_xinstr_operands(k, in, ops, maxops);
    for (int j = 0; j < m; j++) {
      int v = ops[j];
      if (v < 0 || c->vkind[v] != VK_TEMP || last[v] != i || k->phys[v] < 0) continue;
      bool dup = false;
      for (int q = 0; q < j; q++) dup = dup || ops[q] == v;
      if (!dup) freelist[nfree++] = k->phys[v];
    }
  }
  return k;
}

/* Whether t holds a function value (a LAM that is not a combinator's
   argument) or an application: such bodies (target terms of the AD
   pipeline, whose continuations write into the frame) are left to the tree
   evaluator, never hoisted or compiled. */
static bool has_closure(const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_APP || t->kind == T_LAM) return true;
    if (t->nkids == 0) return false;
    /* a combinator's function arguments (a while loop's condition is its
       last argument) are not values */
    bool combinator = t->kind == T_PRIM && fe_prims[t->prim].cls == P_ARRAY;
    for (int i = 0; i + 1 < t->nkids; i++) {
      const Term *k = t->kids[i];
      if (combinator && k->kind == T_LAM) k = k->kids[0];
      if (has_closure(k)) return true;
    }
    t = t->kids[t->nkids - 1]; /* the last child in a loop: let chains are long */
    if (combinator && t->kind == T_LAM) t = t->kids[0];
  }
  return false;
}

/* The kernel of the bodies of lams[0..n), parameter j of lams[i] being
   block params[i][j], or, where gathers[i][j] is not NULL, that array's
   element at block 0 (an index); one body may be boolean when bool_ok. A
   third parameter must be gathered (map3's). */
static const CpuKernel *compile_bodies(int n, const Term *const *lams, const int (*params)[3],
                                       const Term *const (*gathers)[3], bool bool_ok, bool check) {
  Compiler c = {0};
  GROW(c.ctx_nslots, c.nctx, c.capctx, int);
  c.ctx_nslots[c.nctx++] = 0;
  Ctx x = {0}; /* one context: the bodies share their inputs (and so their values) */
  x.id = 0;
  new_vreg(&c, VK_PARAM, 0);
  new_vreg(&c, VK_PARAM, 0); /* vreg 1 exists even for one parameter */
  int nparams = 1, *r = NEW_ARRAY(int, n > 0 ? n : 1);
  bool result_bool = false;
  for (int i = 0; i < n; i++) {
    const Term *lam = lams[i];
    if (lam->kind != T_LAM || lam->nsyms < 1 || lam->nsyms > 3 || lam->nkids < 1) return NULL;
    if (lam->nsyms == 3 && !(gathers && gathers[i][2])) return NULL;
    const Type *rt = lam->kids[0]->type;
    /* the type first: a body of nested maps is refused without a walk */
    if (!scalar_type(rt) || (rt->kind == TY_BOOL && !bool_ok) || has_closure(lam->kids[0])) return NULL;
    result_bool = rt->kind == TY_BOOL;
    for (int j = 0; j < lam->nsyms; j++) {
      if (!lam->syms[j]->type || lam->syms[j]->type->kind != TY_REAL) return NULL;
      ASSERT(params[i][j] == 0 || params[i][j] == 1);
      if (params[i][j] == 1) nparams = 2;
      const Term *a = gathers ? gathers[i][j] : NULL;
      if (a && (!fe_type_is_real_array(a->type) || depends(&x, a))) return NULL;
      pmap_put(&x.env, lam->syms[j], a ? gather_at(&c, &x, a, params[i][j], a) : params[i][j]);
      pmap_put(&x.dep, lam->syms[j], 1);
    }
    depends(&x, lam->kids[0]);
    if ((r[i] = compile(&c, &x, lam->kids[0])) < 0) return NULL;
  }
  if (check) { /* no result: what is kept is what may raise (gathers, loops) and what they read */
    r[0] = konst(&c, 0);
    n = 1;
    result_bool = false;
  }
  CpuKernel *k = finish(&c, nparams, result_bool, n, r, check);
  k->commutes = n == 1 && cpu_kernel_decide_commutes(k);
  return k;
}

const CpuKernel *cpu_kernel_compile(const Term *lam) {
  static const int in_order[1][3] = {{0, 1, 0}};
  return compile_bodies(1, &lam, in_order, NULL, true, false);
}

const CpuKernel *cpu_kernel_compile_check(const Term *lam) {
  static const int in_order[1][3] = {{0, 1, 0}};
  return compile_bodies(1, &lam, in_order, NULL, true, true);
}

const CpuKernel *cpu_kernel_compile_multi(int n, const Term *const *lams, const int (*params)[2]) {
  int(*p3)[3] = una_alloc(sizeof(int[3]) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) p3[i][0] = params[i][0], p3[i][1] = params[i][1];
  return compile_bodies(n, lams, (const int(*)[3])p3, NULL, false, false);
}

const CpuKernel *cpu_kernel_compile_indexed(int n, const Term *const *lams, const Term *const (*arrays)[2]) {
  int(*params)[3] = una_alloc(sizeof(int[3]) * (size_t)(n > 0 ? n : 1)); /* zeroed: all block 0 */
  const Term *(*g3)[3] = una_alloc(sizeof(const Term *[3]) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) g3[i][0] = arrays[i][0], g3[i][1] = arrays[i][1];
  return compile_bodies(n, lams, (const int(*)[3])params, (const Term *const(*)[3])g3, false, false);
}

const CpuKernel *cpu_kernel_compile_map3(const Term *lam, const Term *const arrays[3]) {
  static const int at_index[1][3] = {{0, 0, 0}};
  const Term *g[1][3] = {{arrays[0], arrays[1], arrays[2]}};
  return compile_bodies(1, &lam, at_index, (const Term *const(*)[3])g, false, false);
}

/* ---- loop steps ---- */

int cpu_state_width(const Type *t) {
  if (t->kind == TY_REAL) return 1;
  if (t->kind != TY_TUPLE) return 0;
  int n = 0;
  for (int i = 0; i < t->n; i++) {
    int w = cpu_state_width(t->elems[i]);
    if (w == 0) return 0;
    n += w;
  }
  return n <= CPU_MAX_STATE ? n : 0;
}

/* Compiles t, a value of a loop state's type (n reals), into out[0..n). */
static bool compile_parts(Compiler *c, Ctx *x, const Term *t, int n, int *out) {
  fe_stack_check(t->span);
  if (scalar_type(t->type)) return n == 1 && (out[0] = compile(c, x, t)) >= 0;
  switch (t->kind) {
  case T_TUPLE:
    for (int i = 0, o = 0; i < t->nkids; i++) {
      const Type *ki = t->kids[i]->type;
      int w = scalar_type(ki) ? 1 : cpu_state_width(ki);
      if (w == 0 || o + w > n || !compile_parts(c, x, t->kids[i], w, out + o)) return false;
      o += w;
    }
    return true;
  case T_PROJ: { /* a tuple component of a (nested) tuple */
    int w = cpu_state_width(t->kids[0]->type), parts[CPU_MAX_STATE];
    if (w == 0 || !compile_parts(c, x, t->kids[0], w, parts)) return false;
    memcpy(out, parts + part_offset(t->kids[0]->type, t->index), sizeof(int) * (size_t)n);
    return true;
  }
  case T_VAR: {
    const int *parts = ptrmap_get(&x->tuples, t->sym);
    if (!parts) return false;
    memcpy(out, parts, sizeof(int) * (size_t)n);
    return true;
  }
  case T_LET:
  case T_LETTUP: return compile_binding(c, x, t) && compile_parts(c, x, t->kids[1], n, out);
  case T_PRIM:
    if (t->prim == PRIM_INDEX) return gather_parts(c, x, t, n, out);
    return (t->prim == PRIM_LOOP_FOR || t->prim == PRIM_LOOP_WHILE) && compile_loop(c, x, t, out);
  case T_IF: {
    int k = compile(c, x, t->kids[0]);
    if (k < 0) return false;
    int a[CPU_MAX_STATE], b[CPU_MAX_STATE];
    const Path *outer = c->path;
    Path then = {k, false, outer}, other = {k, true, outer};
    c->path = &then;
    bool ok = compile_parts(c, x, t->kids[1], n, a);
    c->path = &other;
    ok = ok && compile_parts(c, x, t->kids[2], n, b);
    c->path = outer;
    if (!ok) return false;
    for (int i = 0; i < n; i++) out[i] = emit(c, K_SELECT, a[i], b[i], k);
    return true;
  }
  default: return false;
  }
}

/* The step program of lam (s. e), (s, i. e) or, for a fold, (s, a. e) or
   (a, s. e): parameter `state` is s, of type R or a (nested) tuple of
   reals, the other (elem: of the same kind; else a real) follows its reals
   among the program's parameters; e of s's type (or a B when cond is
   allowed). */
static const CpuKernel *compile_step(const Term *lam, int state, bool elem_tuple) {
  if (lam->kind != T_LAM || lam->nsyms < 1 || lam->nsyms > 2 || has_closure(lam->kids[0])) return NULL;
  if (state >= lam->nsyms) return NULL;
  const Sym *st = lam->syms[state], *el = lam->nsyms == 2 ? lam->syms[1 - state] : NULL;
  int n = st->type ? cpu_state_width(st->type) : 0;
  int ne = !el ? 0 : elem_tuple ? cpu_state_width(el->type) : el->type->kind == TY_REAL;
  if (n == 0 || (el && ne == 0) || (elem_tuple && n + ne > 2 * CPU_MAX_STATE)) return NULL;
  const Type *rt = lam->kids[0]->type;
  bool cond = rt->kind == TY_BOOL && !elem_tuple;
  if (!cond && !fe_type_eq(rt, st->type)) return NULL;
  Compiler c = {0};
  GROW(c.ctx_nslots, c.nctx, c.capctx, int);
  c.ctx_nslots[c.nctx++] = 0;
  Ctx x = {0};
  int *parts = NEW_ARRAY(int, n + ne);
  for (int i = 0; i < n + ne; i++) parts[i] = new_vreg(&c, VK_PARAM, 0);
  bind_parts(&x, st, parts);
  pmap_put(&x.dep, st, 1);
  if (el) {
    bind_parts(&x, el, parts + n);
    pmap_put(&x.dep, el, 1);
  }
  depends(&x, lam->kids[0]);
  int nr = cond ? 1 : n;
  int *r = NEW_ARRAY(int, nr);
  if (!compile_parts(&c, &x, lam->kids[0], nr, r)) return NULL;
  return finish(&c, n + ne, cond, nr, r, false);
}

const CpuKernel *cpu_kernel_compile_step(const Term *lam) { return compile_step(lam, 0, false); }

const CpuKernel *cpu_kernel_compile_fold(const Term *lam, int state) { return compile_step(lam, state, true); }

const CpuKernel *cpu_kernel_compile_params(const Term *lam) {
  if (lam->kind != T_LAM || lam->nsyms < 1 || lam->nsyms > CPU_MAX_STATE || lam->nkids < 1) return NULL;
  const Type *rt = lam->kids[0]->type;
  int nr = !rt ? 0 : rt->kind == TY_REAL ? 1 : cpu_state_width(rt);
  if (nr == 0 || has_closure(lam->kids[0])) return NULL;
  int np = 0;
  for (int i = 0; i < lam->nsyms; i++) {
    int w = lam->syms[i]->type ? cpu_state_width(lam->syms[i]->type) : 0;
    if (w == 0) return NULL;
    np += w;
  }
  if (np > 2 * CPU_MAX_STATE) return NULL;
  Compiler c = {0};
  GROW(c.ctx_nslots, c.nctx, c.capctx, int);
  c.ctx_nslots[c.nctx++] = 0;
  Ctx x = {0};
  int *parts = NEW_ARRAY(int, np);
  for (int i = 0; i < np; i++) parts[i] = new_vreg(&c, VK_PARAM, 0);
  for (int i = 0, o = 0; i < lam->nsyms; i++) {
    bind_parts(&x, lam->syms[i], parts + o);
    pmap_put(&x.dep, lam->syms[i], 1);
    o += cpu_state_width(lam->syms[i]->type);
  }
  depends(&x, lam->kids[0]);
  int *r = NEW_ARRAY(int, nr);
  if (!compile_parts(&c, &x, lam->kids[0], nr, r)) return NULL;
  return finish(&c, np, false, nr, r, false);
}

/* ---- the kernel of a lambda ---- */

const CpuKernel *cpu_kernel_compile_guarded(const Term *lam) {
  FeTry t;
  if (fe_try(&t)) {
    const CpuKernel *k = cpu_kernel_compile(lam);
    fe_untry(&t);
    return k;
  }
  if (t.err.msg && strcmp(t.err.msg, "interrupted") == 0) fe_raise(t.err);
  return NULL;
}

/* What a lambda's program over reals is compiled as (note.h: step). */
enum { AS_STEP, AS_ELEM, AS_FOLD_LEFT, AS_FOLD_RIGHT };

/* The plan's step program of lam (its note), or, outside any plan, lam
   compiled now as `as` says; NULL when it does not qualify. */
static const CpuKernel *step_program(const Term *lam, int as) {
  if (lam->note) return lam->note->step;
  FeTry t;
  if (fe_try(&t)) {
    const CpuKernel *k = as == AS_ELEM || (as == AS_STEP && lam->nsyms == 3) ? cpu_kernel_compile_params(lam)
                         : as == AS_STEP                                     ? cpu_kernel_compile_step(lam)
                                                                             : cpu_kernel_compile_fold(lam, as == AS_FOLD_RIGHT);
    fe_untry(&t);
    return k;
  }
  if (t.err.msg && strcmp(t.err.msg, "interrupted") == 0) fe_raise(t.err);
  return NULL;
}

const CpuKernel *cpu_step_kernel_for(const Term *lam) { return step_program(lam, AS_STEP); }

const CpuKernel *cpu_elem_kernel_for(const Term *lam) { return step_program(lam, AS_ELEM); }

const CpuKernel *cpu_fold_kernel_for(const Term *lam, int state) {
  return step_program(lam, state ? AS_FOLD_RIGHT : AS_FOLD_LEFT);
}

const CpuKernel *cpu_kernel_for(const Term *lam) {
  if (lam->note) return lam->note->k;
  return cpu_kernel_compile_guarded(lam);
}

bool cpu_kernel_returns_bool(const CpuKernel *k) { return k->result_bool; }
bool cpu_kernel_commutes(const CpuKernel *k) { return k->commutes; }

int cpu_kernel_size(const CpuKernel *k) { return k->ninstr; }
int cpu_kernel_block_size(const CpuKernel *k) { return k->nexec; }

const CpuKInstr *cpu_kernel_code(const CpuKernel *k) { return k->code; }
int cpu_kernel_nparams(const CpuKernel *k) { return k->nparams; }
int cpu_kernel_nvregs(const CpuKernel *k) { return k->nvregs; }
int cpu_kernel_result(const CpuKernel *k) { return k->result; }
int cpu_kernel_nresults(const CpuKernel *k) { return k->nresults; }
CpuVregKind cpu_kernel_vreg_kind(const CpuKernel *k, int v) { return (CpuVregKind)k->vkind[v]; }
double cpu_kernel_const(const CpuKernel *k, int v) { return k->init[v]; }
const Term *cpu_kernel_index_term(const CpuKernel *k, int v) { return k->vterm[v]; }
bool cpu_kernel_gathers(const CpuKernel *k) {
  for (int i = 0; i < k->ninstr; i++)
    if (k->code[i].op == K_GATHER) return true;
  return false;
}

