/* print.c: an execution plan as text (plan.h's plan_str).

   Each Def of the host program is printed as Una text in which every
   array builtin that runs as a kernel reads `kN v L0 L1 ...`: kernel N
   applied to its initial value (folds and scans) and its leaves, the
   arrays it reads that are evaluated on their own (a map fused into a
   kernel is not there: it is part of the kernel's elements). Then each
   kernel: its kind, its element count, its elements as an expression over
   the leaves (fN is the kernel function N, printed below it), its
   operator; then the matrix products (`bN X v` in the program), then the
   sibling groups (lets run as one pass) and the maps
   run in place over a scan. For ∇prod:

     def grad_prod (a: [R]) : [R] =
       k2 (shift1L (k0 1 a)) (shift1R (k1 1 a))
     k0 = scanr, monoid (*), n = length L0, elements L0[i]
     ...                                                                  */
#include "plan.h"

#include "../../frontend/ir/term_print.h"
#include "../../frontend/ir/ptrmap.h"
#include "../../frontend/ir/strbuf.h"
#include "../siblings.h"

/* ---- the host program ---- */

/* Readable names, one per symbol across the whole plan: a name's first
   symbol keeps it, the next ones get NAME_2, NAME_3, ... (as :grad does),
   so the defs, the kernel functions and the groups agree. */
typedef struct Names {
  PtrMap syms; /* Sym* -> its display Sym* */
  const char **used;
  int *count;
  int n, cap;
} Names;

static Sym *shown_sym(Names *nm, const Sym *x) {
  Sym *d = ptrmap_get(&nm->syms, x);
  if (d) return d;
  int i = 0;
  while (i < nm->n && strcmp(nm->used[i], x->name) != 0) i++;
  if (i == nm->n) {
    if (nm->n == nm->cap) {
      nm->cap = nm->cap ? 2 * nm->cap : 16;
      const char **u = NEW_ARRAY(const char *, nm->cap);
      int *c = NEW_ARRAY(int, nm->cap);
      if (nm->n) {
        memcpy(u, nm->used, sizeof *u * (size_t)nm->n);
        memcpy(c, nm->count, sizeof *c * (size_t)nm->n);
      }
      nm->used = u;
      nm->count = c;
    }
    nm->used[nm->n] = x->name;
    nm->count[nm->n++] = 0;
  }
  int k = ++nm->count[i];
  d = NEW(Sym);
  *d = *x;
  if (k > 1) d->name = una_sprintf("%s_%d", x->name, k);
  ptrmap_put(&nm->syms, x, d);
  return d;
}

static Term *display(Names *nm, const Term *t);

/* `kN [v] L0 L1 ...` for the kernel k at the builtin t. */
static Term *kernel_ref(Names *nm, const PlanKernel *k, const Term *t) {
  Term *r = fe_term_new(T_APPLY, t->span, t->type);
  r->str = una_sprintf("k%d", k->id);
  int n = 0, cap = k->nleaves + 2;
  Term **kids = NEW_ARRAY(Term *, cap);
  switch (k->kind) {
  case PK_REDUCE:
  case PK_SCAN:
  case PK_SCAN_SEQ:
  case PK_FOLDL: kids[n++] = display(nm, t->kids[1]); break;
  case PK_SCATTER: /* the destination and unit; the indices are the last leaf */
    kids[n++] = display(nm, t->kids[1]);
    kids[n++] = display(nm, t->kids[2]);
    break;
  case PK_IOTA: kids[n++] = display(nm, t->kids[0]); break;
  case PK_REPLICATE:
  case PK_RAND:
    kids[n++] = display(nm, t->kids[0]);
    kids[n++] = display(nm, t->kids[1]);
    break;
  default: break;
  }
  for (int i = 0; i < k->nleaves; i++) kids[n++] = display(nm, k->leaves[i]->term);
  fe_term_set_kids(r, n, kids);
  return r;
}

/* `bN X v` for the matrix product m at the map t over X. */
static Term *matrix_ref(Names *nm, const PlanMatrix *m, const Term *t) {
  Term *r = fe_term_new(T_APPLY, t->span, t->type);
  r->str = una_sprintf("b%d", m->id);
  Term **kids = NEW_ARRAY(Term *, 2);
  kids[0] = display(nm, t->kids[1]);
  kids[1] = display(nm, m->other);
  fe_term_set_kids(r, 2, kids);
  return r;
}

/* A copy of the host program t with kernels shown as kernel_ref does, matrix
   products as matrix_ref does, and binders renamed. */
static Term *display(Names *nm, const Term *t) {
  fe_stack_check(t->span);
  if (t->note && t->note->kernel) return kernel_ref(nm, t->note->kernel, t);
  if (t->note && t->note->matrix) return matrix_ref(nm, t->note->matrix, t);
  Term *c = NEW(Term);
  *c = *t;
  if (t->sym) c->sym = shown_sym(nm, t->sym);
  if (t->nsyms) {
    c->syms = NEW_ARRAY(Sym *, t->nsyms);
    for (int i = 0; i < t->nsyms; i++) c->syms[i] = shown_sym(nm, t->syms[i]);
  }
  if (t->nkids) {
    c->kids = NEW_ARRAY(Term *, t->nkids);
    for (int i = 0; i < t->nkids; i++) c->kids[i] = display(nm, t->kids[i]);
  }
  return c;
}

/* ---- kernels ---- */

static const char *const kind_names[] = {"map",  "reduce",    "scan", "sequential scan",          "foldl",
                                         "iota", "replicate", "rand", "check (nothing computed)", "scatter"};

static void put_src(StrBuf *b, const PlanSrc *s) {
  if (s->leaf) {
    sb_printf(b, "L%d[i]", s->index);
    return;
  }
  sb_printf(b, "f%d(", s->fn->id);
  put_src(b, s->a);
  if (s->b) {
    sb_put(b, ", ");
    put_src(b, s->b);
  }
  if (s->c) {
    sb_put(b, ", ");
    put_src(b, s->c);
  }
  sb_put(b, ")");
}

static const char *monoid_name(CpuMonoid m) {
  switch (m) {
  case CPU_M_ADD: return "(+)";
  case CPU_M_MUL: return "(*)";
  case CPU_M_MAX: return "(max)";
  case CPU_M_MIN: return "(min)";
  case CPU_M_NONE: break;
  }
  return "none";
}

static void put_kernel(StrBuf *b, const PlanKernel *k) {
  if (k->kind == PK_CHECK && k->check) /* its function gathers or loops (lower.c) */
    sb_printf(b, "k%d = check (gathers' indices and loops only, nothing stored) (%s)", k->id, k->name);
  else
    sb_printf(b, "k%d = %s (%s)", k->id, kind_names[k->kind], k->name);
  if (k->kind == PK_SCAN || k->kind == PK_SCAN_SEQ) sb_put(b, k->right ? " from the right" : " from the left");
  switch (k->kind) {
  case PK_IOTA:
  case PK_REPLICATE:
  case PK_RAND: sb_put(b, ", n = its first argument\n"); return;
  default: break;
  }
  if (k->kind == PK_SCATTER) {
    sb_printf(b, ", n = length L%d, elements ", k->nleaves - 1);
    put_src(b, k->src);
    sb_printf(b, " combined by %s into place L%d[i] (atomics on the GPU; the CPU runs its scatter)\n",
              monoid_name(k->monoid), k->nleaves - 1);
    return;
  }
  sb_put(b, ", n = length L0, elements ");
  put_src(b, k->src);
  if (k->op) {
    sb_printf(b, ", operator f%d", k->op->id);
    if (k->kind == PK_SCAN) sb_printf(b, " (monoid %s)", monoid_name(k->monoid));
    if (k->kind == PK_REDUCE) sb_put(b, k->ordered ? " (in element order)" : " (commutes: in lanes)");
  }
  if (k->tree) sb_put(b, "; on the CPU one compiled loop over the elements");
  sb_put(b, "\n");
}

static void put_matrix(StrBuf *b, Names *nm, const PlanMatrix *m) {
  if (m->kind == PLAN_GEMV && m->x_let) { /* a let of the transpose, or the map's own array */
    const char *u = fe_term_str(display(nm, m->untransposed));
    sb_printf(b, "b%d = matrix-vector product (cblas_dgemv, transposed), element i = dot L0[i] L1, L0 = %s "
                 "computed only for the map as written (BLAS reads %s)",
              m->id, m->let ? fe_term_str(display(nm, m->let->kids[0])) : una_sprintf("transpose %s", u), u);
  }
  else if (m->kind == PLAN_OUTER) {
    sb_printf(b, "b%d = outer product, element (i, j) = %s: one loop over its rows on the CPU; on the GPU and "
                 "under :cost, the map as written\n",
              m->id, m->swapped ? "L1[j] * L0[i]" : "L0[i] * L1[j]");
    return;
  }
  else if (m->kind == PLAN_GEMV)
    sb_printf(b, "b%d = matrix-vector product (cblas_dgemv), element i = dot L0[i] L1", m->id);
  else if (!m->untransposed)
    sb_printf(b, "b%d = matrix product (cblas_dgemm, L1 transposed), element (i, j) = dot L0[i] L1[j]", m->id);
  else {
    const char *u = fe_term_str(display(nm, m->untransposed));
    sb_printf(b, "b%d = matrix product (cblas_dgemm), element (i, j) = dot L0[i] L1[j], L1 = %s computed only "
                 "for the map as written (BLAS reads %s)",
              m->id, m->let ? fe_term_str(display(nm, m->let->kids[0])) : una_sprintf("transpose %s", u), u);
  }
  sb_put(b, ": BLAS on the CPU; on the GPU and under :cost, the map as written\n");
}

/* ---- the whole plan ---- */

static Sym *name_of(void *nm, const Sym *x) { return shown_sym(nm, x); }

static void walk_notes(StrBuf *b, Names *nm, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->note && t->note->group && t->kind == T_TUPLE)
      sb_printf(b, "group at a tuple: %s\n", cpu_sibling_plan_str(t->note->group, name_of, nm));
    else if (t->note && t->note->group)
      sb_printf(b, "group at let %s: %s\n", shown_sym(nm, t->sym)->name,
                cpu_sibling_plan_str(t->note->group, name_of, nm));
    if (t->note && t->note->scan_map) {
      sb_printf(b, "k%d and the scans it reads (", t->note->kernel ? t->note->kernel->id : -1);
      int n = 0;
      for (int i = 1; i < 3; i++) {
        const Term *a = t->kids[i];
        if (a->kind == T_PRIM && (a->prim == PRIM_SHIFT1L || a->prim == PRIM_SHIFT1R)) a = a->kids[0];
        if (a->note && a->note->kernel && (a->prim == PRIM_SCANL || a->prim == PRIM_SCANR))
          sb_printf(b, "%sk%d", n++ ? ", " : "", a->note->kernel->id);
      }
      sb_put(b, "): on the CPU, two passes over the scans' input and the result, the scans stored in the result\n");
    }
    if (t->note && t->note->batch) {
      const Term *m = t->note->batch;
      sb_printf(b, "map at %d:%d: b%d for all its rows at once (cblas_dgemm) when they and %s are of one length\n",
                t->span.line, t->span.col, m->note && m->note->matrix ? m->note->matrix->id : -1,
                shown_sym(nm, m->kids[1]->sym)->name);
    }
    if (t->note && t->note->over)
      sb_printf(b, "%s at %d:%d: its result written over its array %d, which nothing else holds\n",
                t->prim == PRIM_MAP ? "map" : "map2", t->span.line, t->span.col, t->note->over);
    if (t->note && t->note->state_map) {
      const Term *m = t->note->state_map;
      sb_printf(b, "loop at %d:%d: its state %s, read once, is overwritten by the map at %d:%d from the second iteration on\n",
                t->span.line, t->span.col, shown_sym(nm, t->kids[0]->syms[0])->name, m->span.line, m->span.col);
    }
    if (t->note && t->note->release && t->kind == T_LET)
      sb_printf(b, "let %s: its array, read only by maps and reductions, given back once the let's body has its value\n",
                shown_sym(nm, t->sym)->name);
    if (t->note && t->note->release && t->kind == T_PRIM)
      sb_printf(b, "loop at %d:%d: each state but the first given back once the next is made\n", t->span.line,
                t->span.col);
    if (t->note && t->note->in_place) {
      const Term *d = t->kids[1];
      if (d->kind == T_VAR)
        sb_printf(b, "reduce_by_index at %d:%d: its destination %s holds a fresh array read only here, updated in place\n",
                  t->span.line, t->span.col, d->sym->name);
      else
        sb_printf(b, "reduce_by_index at %d:%d: its destination is fresh and updated in place\n", t->span.line,
                  t->span.col);
    }
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) walk_notes(b, nm, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

char *plan_str(const Plan *p) {
  StrBuf b = {0};
  Names nm;
  memset(&nm, 0, sizeof nm);
  for (int i = 0; i < p->ndefs; i++) {
    const Def *d = p->defs[i];
    Def shown = *d;
    shown.params = NEW_ARRAY(Sym *, d->nparams + 1);
    for (int j = 0; j < d->nparams; j++) shown.params[j] = shown_sym(&nm, d->params[j]);
    shown.body = display(&nm, d->body);
    sb_put(&b, fe_def_str_opts(&shown, FE_PRINT_MULTILINE));
    sb_put(&b, "\n");
  }
  for (int i = 0; i < p->nkernels; i++) put_kernel(&b, p->kernels[i]);
  for (int i = 0; i < p->nmatrices; i++) put_matrix(&b, &nm, p->matrices[i]);
  for (int i = 0; i < p->nfns; i++) {
    const Term *lam = display(&nm, p->fns[i]->lam);
    sb_printf(&b, "f%d = (", p->fns[i]->id);
    for (int j = 0; j < lam->nsyms; j++) sb_printf(&b, "%s%s", j ? ", " : "", lam->syms[j]->name);
    sb_printf(&b, ". %s)\n", fe_term_str(lam->kids[0]));
  }
  for (int i = 0; i < p->ndefs; i++) walk_notes(&b, &nm, p->defs[i]->body);
  return sb_str(&b);
}
