/* siblings.c: sibling fusion (see siblings.h). A group's plan is made
   once, when the execution plan is lowered (backend/plan/lower.c), and
   kept in the let's note, with one kernel computing all the siblings'
   maps when they read at most two arrays. Running it binds the kernels,
   then one parallel loop over the chunks of the arrays runs, per block,
   the kernel and every sibling's block step: a map's block is written to
   its result, a reduce folds its block into its lanes (cpu_red_fold, the
   step a lone reduce takes). */
#include "siblings.h"

#include <math.h>

#include "plan/note.h"
#include "array_int.h"
#include "cost_meter.h"

/* One sibling: `let x = rhs` (slot >= 0) or item `item` of the tuple. */
typedef struct Sibling {
  const Term *rhs;
  const Sym *sym; /* the let's variable, or NULL for a tuple item */
  int slot, item;
  const Term *map; /* the map/map2 computing the elements, or NULL for a
                      reduce of an array variable */
  const Term *count; /* n when map is `map (i. e) (iota n)`, else NULL */
} Sibling;

typedef struct CpuSiblingPlan {
  int n;
  Sibling *s;
  /* The siblings' maps as one kernel over at most two arrays (NULL when
     they read more, or a body does not compile with the others): */
  const CpuKernel *k;
  const Sym *arr[2]; /* its parameter arrays (arr[1] NULL for one) */
  int *out;          /* per sibling: its result in k, or -1 (no map) */
  bool indexed;      /* a map is over `iota n`: k is over the indices,
                        reading the other maps' arrays at them */
  const Term *rest;  /* what follows the group's lets */
  const Term *tuple; /* rest when the group took some of its items, else NULL */
} CpuSiblingPlan;


static bool is_real_array(const Type *t) { return t && t->kind == TY_ARRAY && t->elem->kind == TY_REAL; }

static bool array_var(const Term *t) { return t->kind == T_VAR && is_real_array(t->type) && t->sym->slot >= 0; }

/* map/map2 over array variables with a kernel that gives reals. */
static bool kernel_map(const Term *t) {
  if (t->kind != T_PRIM || (t->prim != PRIM_MAP && t->prim != PRIM_MAP2) || !is_real_array(t->type)) return false;
  if (!array_var(t->kids[1]) || (t->prim == PRIM_MAP2 && !array_var(t->kids[2]))) return false;
  const CpuKernel *k = cpu_kernel_for(t->kids[0]);
  return k && !cpu_kernel_returns_bool(k);
}

/* A real computed from literals and variables by scalar builtins (which
   cannot raise). */
static bool plain_scalar(const Term *t) {
  if (!t->type || t->type->kind != TY_REAL) return false;
  if (t->kind == T_NUM) return true;
  if (t->kind == T_VAR) return t->sym->slot >= 0;
  if (t->kind != T_PRIM || (fe_prims[t->prim].cls != P_SCALAR1 && fe_prims[t->prim].cls != P_SCALAR2)) return false;
  for (int i = 0; i < t->nkids; i++)
    if (!plain_scalar(t->kids[i])) return false;
  return true;
}

/* A size that evaluating cannot fail to give: plain, or `length x`. */
static bool size_term(const Term *t) {
  if (t->kind == T_PRIM && t->prim == PRIM_LENGTH) {
    const Term *x = t->kids[0];
    return x->kind == T_VAR && x->sym->slot >= 0 && x->type && x->type->kind == TY_ARRAY;
  }
  return plain_scalar(t);
}

/* `map (i. e) (iota n)` with a kernel that gives reals, n computed by
   scalar builtins (its elements are e at the indices: the gradients and
   tangents of maps over shifted arrays read them so). */
static bool index_map(const Term *t) {
  if (t->kind != T_PRIM || t->prim != PRIM_MAP || !is_real_array(t->type)) return false;
  const Term *a = t->kids[1];
  if (a->kind != T_PRIM || a->prim != PRIM_IOTA || !size_term(a->kids[0])) return false;
  const CpuKernel *k = cpu_kernel_for(t->kids[0]);
  return k && !cpu_kernel_returns_bool(k);
}

/* s's map: t itself or the map t reduces. */
static bool set_map(Sibling *s, const Term *t) {
  if (kernel_map(t)) s->map = t;
  else if (index_map(t)) {
    s->map = t;
    s->count = t->kids[1]->kids[0];
  }
  return s->map != NULL;
}

static bool sibling_of(const Term *t, Sibling *s) {
  s->rhs = t;
  s->map = NULL;
  s->count = NULL;
  if (set_map(s, t)) return true;
  if (t->kind != T_PRIM || t->prim != PRIM_REDUCE || !t->type || t->type->kind != TY_REAL) return false;
  const Term *v = t->kids[1], *arg = t->kids[2];
  if (!plain_scalar(v)) return false;
  bool sw;
  if (cpu_monoid_of(t->kids[0], &sw) == CPU_M_NONE && !cpu_kernel_for(t->kids[0])) return false;
  return set_map(s, arg) || array_var(arg);
}

bool cpu_sibling_candidate(const Term *rhs) {
  return rhs->kind == T_PRIM && (rhs->prim == PRIM_MAP || rhs->prim == PRIM_MAP2 || rhs->prim == PRIM_REDUCE);
}

/* A tuple item that is no sibling: evaluating it cannot raise. */
static bool trivial(const Term *t) { return t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL; }

/* Whether t reads one of the variables xs[0..n). */
static bool reads(const Term *t, const Sym **xs, int n) {
  if (t->kind == T_VAR) {
    for (int i = 0; i < n; i++)
      if (t->sym == xs[i]) return true;
    return false;
  }
  for (int i = 0; i < t->nkids; i++)
    if (reads(t->kids[i], xs, n)) return true;
  return false;
}

/* The index of array variable x among p->arr, added when there is room;
   -1 when there is none. */
static int param_of(CpuSiblingPlan *p, const Sym *x) {
  for (int i = 0; i < 2; i++) {
    if (!p->arr[i]) p->arr[i] = x;
    if (p->arr[i] == x) return i;
  }
  return -1;
}

/* Compiles the siblings' maps into one kernel over the indices (p->k),
   where one is a map over `iota n`; every sibling must have a map. */
static void merge_indexed(CpuSiblingPlan *p) {
  const Term **lams = NEW_ARRAY(const Term *, p->n);
  const Term *(*arrays)[2] = una_alloc(sizeof(const Term *[2]) * (size_t)p->n);
  p->out = NEW_ARRAY(int, p->n);
  for (int i = 0; i < p->n; i++) {
    const Term *map = p->s[i].map;
    if (!map) return;
    if (!p->s[i].count)
      for (int j = 0; j < (map->prim == PRIM_MAP2 ? 2 : 1); j++) arrays[i][j] = map->kids[1 + j];
    p->out[i] = i;
    lams[i] = map->kids[0];
  }
  p->k = cpu_kernel_compile_indexed(p->n, lams, (const Term *const(*)[2])arrays);
}

/* Compiles the siblings' maps into one kernel (p->k), when they read at
   most two arrays: work they share (the residual of a loss, a sigmoid)
   is then done once per element. */
static void merge(CpuSiblingPlan *p) {
  const Term **lams = NEW_ARRAY(const Term *, p->n);
  int (*params)[2] = una_alloc(sizeof(int[2]) * (size_t)p->n);
  int m = 0;
  p->out = NEW_ARRAY(int, p->n);
  for (int i = 0; i < p->n; i++) {
    const Term *map = p->s[i].map;
    p->out[i] = -1;
    if (!map) continue;
    for (int j = 0; j < (map->prim == PRIM_MAP2 ? 2 : 1); j++)
      if ((params[m][j] = param_of(p, map->kids[1 + j]->sym)) < 0) return;
    p->out[i] = m;
    lams[m++] = map->kids[0];
  }
  if (m >= 2) p->k = cpu_kernel_compile_multi(m, lams, (const int(*)[2])params);
}

const CpuSiblingPlan *cpu_sibling_plan(const Term *t) {
  if (t->kind != T_TUPLE && !cpu_sibling_candidate(t->kids[0])) return NULL;
  int cap = 8, n = 0;
  Sibling *s = NEW_ARRAY(Sibling, cap);
  const Sym **bound = NEW_ARRAY(const Sym *, cap);
  const Term *cur = t;
  for (; cur->kind == T_LET; cur = cur->kids[1]) {
    Sibling x;
    if (cur->sym->slot < 0 || !sibling_of(cur->kids[0], &x) || reads(cur->kids[0], bound, n)) break;
    if (n == cap) {
      Sibling *ns = NEW_ARRAY(Sibling, 2 * cap);
      const Sym **nb = NEW_ARRAY(const Sym *, 2 * cap);
      memcpy(ns, s, sizeof *s * (size_t)n);
      memcpy(nb, bound, sizeof *bound * (size_t)n);
      s = ns;
      bound = nb;
      cap *= 2;
    }
    x.slot = cur->sym->slot;
    x.sym = cur->sym;
    x.item = -1;
    s[n] = x;
    bound[n++] = cur->sym;
  }
  CpuSiblingPlan *p = NEW(CpuSiblingPlan);
  p->rest = cur;
  /* the closing tuple: its items that are siblings join; the others must be
     variables or literals (evaluating them cannot raise) */
  if ((n > 0 || cur == t) && cur->kind == T_TUPLE) {
    int m = 0;
    bool ok = true;
    for (int i = 0; i < cur->nkids && ok; i++) {
      const Term *k = cur->kids[i];
      Sibling x;
      if (trivial(k)) continue;
      ok = sibling_of(k, &x) && !reads(k, bound, n);
      m++;
    }
    if (ok && m > 0) {
      Sibling *ns = NEW_ARRAY(Sibling, n + m);
      memcpy(ns, s, sizeof *s * (size_t)n);
      for (int i = 0; i < cur->nkids; i++) {
        const Term *k = cur->kids[i];
        if (trivial(k)) continue;
        sibling_of(k, &ns[n]);
        ns[n].slot = -1;
        ns[n].sym = NULL;
        ns[n++].item = i;
      }
      s = ns;
      p->tuple = cur;
    }
  }
  if (n < 2) return NULL;
  p->n = n;
  p->s = s;
  for (int i = 0; i < n; i++) p->indexed = p->indexed || s[i].count;
  if (!p->indexed) merge(p);
  else {
    merge_indexed(p);
    if (!p->k) return NULL; /* index maps run only in the merged kernel */
  }
  return p;
}

char *cpu_sibling_plan_str(const CpuSiblingPlan *p, CpuSymName name, void *ud) {
  char *s = una_strdup("one pass computing");
  for (int i = 0; i < p->n; i++) {
    const Sibling *x = &p->s[i];
    const char *what = x->rhs->prim == PRIM_REDUCE ? "reduce" : fe_prims[x->rhs->prim].name;
    s = una_sprintf("%s%s %s (%s)", s, i ? "," : "",
                    x->sym ? name(ud, x->sym)->name : una_sprintf("item %d of the tuple", x->item), what);
  }
  if (p->indexed)
    s = una_sprintf("%s; the maps in one kernel over the indices", s);
  else if (p->k)
    s = una_sprintf("%s; the maps in one kernel over %s%s%s", s, name(ud, p->arr[0])->name, p->arr[1] ? " and " : "",
                    p->arr[1] ? name(ud, p->arr[1])->name : "");
  return s;
}

/* ---- running ---- */

typedef struct Run {
  const Sibling *s;
  const double *x, *y; /* the map's arrays */
  Array *out;          /* a map's result */
  CpuKernelRun runs[CPU_MAX_THREADS];
  RedJob *red;         /* a reduce's job */
} Run;

typedef struct Group {
  int n;
  Run *r;
  size_t len;
  int nchunks, nthreads;
  const CpuSiblingPlan *p;
  const double *x, *y;                 /* the merged kernel's arrays */
  CpuKernelRun runs[CPU_MAX_THREADS];  /* ... and its runs (p->k bound) */
  double **dst[CPU_MAX_THREADS];       /* ... and, per thread, where its results go */
} Group;

/* The array of real variable x in frame, on the host; NULL when it is not one. */
static const Array *array_of(const Exec *ex, Value *frame, const Sym *x) {
  Value v = frame[x->slot];
  if (v.kind != V_ARRAY) return NULL;
  val_host(v.u.a);
  return v.u.a->boxed ? NULL : v.u.a;
}

/* The number of elements of sibling s (false when it has none yet: its
   array is no real array, its count no size; the ordinary evaluation then
   runs it and raises what it must). */
static bool sibling_len(const Exec *ex, const Sibling *s, Value *frame, size_t *len) {
  if (s->count) {
    Value v = ex->eval(ex, s->count, frame);
    if (v.kind != V_REAL || !(v.u.r >= 0 && v.u.r <= 0x1p52) || v.u.r != floor(v.u.r)) return false;
    *len = (size_t)v.u.r;
    return true;
  }
  const Array *a = array_of(ex, frame, (s->map ? s->map->kids[1] : s->rhs->kids[2])->sym);
  if (a) *len = a->len;
  return a != NULL;
}

/* Binds sibling s into r: its arrays read (all of length g->len), its
   kernels bound, its result allocated. False when the group cannot run
   (the ordinary evaluation then runs the chain). */
static bool prepare(const Exec *ex, Group *g, const Sibling *s, Value *frame, Run *r) {
  memset(r, 0, sizeof *r);
  r->s = s;
  const Array *a = NULL, *b = NULL;
  if (s->count) {
    size_t n;
    if (!sibling_len(ex, s, frame, &n) || n != g->len || n == 0) return false;
  } else if (s->map) {
    a = array_of(ex, frame, s->map->kids[1]->sym);
    if (s->map->prim == PRIM_MAP2) b = array_of(ex, frame, s->map->kids[2]->sym);
    if (!a || (s->map->prim == PRIM_MAP2 && (!b || b->len != a->len))) return false;
  } else {
    a = array_of(ex, frame, s->rhs->kids[2]->sym);
    if (!a) return false;
  }
  if (a && (a->len != g->len || a->len == 0)) return false;
  r->x = a ? a->r : NULL;
  r->y = b ? b->r : NULL;
  CpuKernelRun k;
  bool merged = g->p->k && s->map;
  if (s->map && !merged && !cpu_lam_kernel(ex, s->map->kids[0], frame, &k)) return false;
  if (s->rhs->prim == PRIM_REDUCE) {
    Value v = ex->eval(ex, s->rhs->kids[1], frame);
    if (v.kind != V_REAL) return false;
    RedJob *j = NEW(RedJob);
    j->v = v.u.r;
    j->n = g->len;
    j->nchunks = g->nchunks;
    if (!cpu_red_operator(ex, j, s->rhs->kids[0], frame)) return false;
    if (merged) {
      j->r = NULL;
    } else if (s->map) {
      j->x = r->x;
      j->y = r->y;
      cpu_kernel_runs(j->nthreads, j->g, &k, j->nchunks);
    } else {
      j->r = r->x;
    }
    r->red = j;
  } else {
    if (!merged) cpu_kernel_runs(g->nthreads, r->runs, &k, g->nchunks);
    r->out = val_new_array_of(s->rhs->type->elem, g->len, s->rhs->span);
  }
  return true;
}

/* Binds the merged kernel, when the plan has one, over its arrays. */
static bool prepare_merged(const Exec *ex, Group *g, Value *frame) {
  const CpuSiblingPlan *p = g->p;
  if (!p->k) return true;
  if (!cpu_kernels_enabled(ex)) return false;
  for (int i = 0; i < 2 && !p->indexed && p->arr[i]; i++) {
    const Array *a = array_of(ex, frame, p->arr[i]);
    if (!a || a->len != g->len) return false;
    *(i ? &g->y : &g->x) = a->r;
  }
  CpuKernelRun run;
  if (!cpu_kernel_bind(ex, p->k, frame, &run)) return false;
  cpu_kernel_runs(g->nthreads, g->runs, &run, g->nchunks);
  return true;
}

static void group_chunk(void *ctx, int thread, int c) {
  Group *g = ctx;
  size_t lo, hi;
  cpu_chunk_bounds(g->len, CPU_BLOCK, g->nchunks, c, &lo, &hi);
  const int *out = g->p->k ? g->p->out : NULL;
  double **dst = out ? g->dst[thread] : NULL; /* per result of the merged kernel */
  for (size_t i = lo; i < hi && !fe_stopping(); i += CPU_BLOCK) { /* Ctrl-C or a fault: stop */
    size_t k = hi - i < CPU_BLOCK ? hi - i : CPU_BLOCK;
    if (out) {
      for (int m = 0; m < g->n; m++)
        if (out[m] >= 0) dst[out[m]] = g->r[m].red ? NULL : g->r[m].out->r + i;
      if (g->p->indexed) cpu_kernel_block_indices(&g->runs[thread], i, k, dst);
      else cpu_kernel_block_into(&g->runs[thread], g->x + i, g->y ? g->y + i : NULL, k, dst);
    }
    for (int m = 0; m < g->n; m++) {
      Run *r = &g->r[m];
      if (out && out[m] >= 0) {
        if (r->red) cpu_red_fold(r->red, thread, c, lo, i, k, cpu_kernel_out(&g->runs[thread], out[m]));
      } else if (r->red) {
        cpu_red_block(r->red, thread, c, lo, i, k);
      } else {
        cpu_kernel_block(&r->runs[thread], r->x + i, r->y ? r->y + i : NULL, k, r->out->r + i);
      }
    }
  }
}

bool cpu_siblings(const Exec *ex, const Term **t, Value *frame, Value *result) {
  if (ex->meter) return false;
  const CpuSiblingPlan *p = (*t)->note ? (*t)->note->group : NULL;
  if (!p) return false;
  Group g;
  memset(&g, 0, sizeof g);
  g.n = p->n;
  g.r = NEW_ARRAY(Run, p->n);
  g.p = p;
  /* the length first: the chunks (and so the reduce jobs) depend on it */
  if (!sibling_len(ex, &p->s[0], frame, &g.len)) return false;
  g.nchunks = cpu_chunks_for(g.len);
  g.nthreads = cpu_exec_threads(ex);
  if (!prepare_merged(ex, &g, frame)) return false;
  if (p->k)
    for (int i = 0; i < CPU_MAX_THREADS; i++) g.dst[i] = NEW_ARRAY(double *, p->n); /* not on the workers */
  for (int m = 0; m < p->n; m++)
    if (!prepare(ex, &g, &p->s[m], frame, &g.r[m])) return false;
  cpu_parallel_chunks(g.nthreads, g.nchunks, group_chunk, &g, p->s[0].rhs->span);
  Value *items = p->tuple ? NEW_ARRAY(Value, p->tuple->nkids) : NULL;
  for (int m = 0; m < p->n; m++) {
    const Sibling *s = &p->s[m];
    Value v = g.r[m].red ? val_real(cpu_red_finish(g.r[m].red)) : val_array(g.r[m].out);
    if (s->slot >= 0) frame[s->slot] = v;
    else items[s->item] = v;
  }
  if (!p->tuple) {
    *t = p->rest;
    return false;
  }
  for (int i = 0; i < p->tuple->nkids; i++) {
    const Term *k = p->tuple->kids[i];
    if (trivial(k)) items[i] = ex->eval(ex, k, frame);
  }
  *result = val_tuple(p->tuple->nkids, items);
  return true;
}
