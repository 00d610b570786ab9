/* print.c: an execution plan as text (plan.h's plan_str).

   Each Def of the host program is printed as Una text in which every
   array builtin that runs as a kernel reads `kN v L0 L1 ...`: kernel N
   applied to its initial value (folds and scans) and its leaves, the
   arrays it reads that are evaluated on their own (a map fused into a
   kernel is not there: it is part of the kernel's elements). Then each
   kernel: its kind, its element count, its elements as an expression over
   the leaves (fN is the kernel function N, printed below it), its
   operator; then the sibling groups (lets run as one pass) and the maps
   run in place over a scan. For ∇prod:

     def grad_prod (a: [R]) : [R] =
       k2 (shift1L (k0 1 a)) (shift1R (k1 1 a))
     k0 = scanr, monoid (*), n = length L0, elements L0[i]
     ...                                                                  */
#include "plan.h"

#include "../../frontend/ir/term_print.h"
#include "../siblings.h"

typedef struct Buf {
  char *s;
  size_t n, cap;
} Buf;

static void put(Buf *b, const char *s) {
  size_t k = strlen(s);
  if (b->n + k + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->n + k + 1) cap *= 2;
    char *ns = una_alloc(cap);
    if (b->n) memcpy(ns, b->s, b->n);
    b->s = ns;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, k + 1);
  b->n += k;
}

/* ---- the host program ---- */

static Term *display(const Term *t);

/* `kN [v] L0 L1 ...` for the kernel k at the builtin t. */
static Term *kernel_ref(const PlanKernel *k, const Term *t) {
  Term *r = fe_term_new(T_APPLY, t->span, t->type);
  r->str = una_sprintf("k%d", k->id);
  int n = 0, cap = k->nleaves + 2;
  Term **kids = NEW_ARRAY(Term *, cap);
  switch (k->kind) {
  case PK_REDUCE:
  case PK_SCAN:
  case PK_SCAN_SEQ:
  case PK_FOLDL: kids[n++] = display(t->kids[1]); break;
  case PK_IOTA: kids[n++] = display(t->kids[0]); break;
  case PK_REPLICATE:
  case PK_RAND:
    kids[n++] = display(t->kids[0]);
    kids[n++] = display(t->kids[1]);
    break;
  default: break;
  }
  for (int i = 0; i < k->nleaves; i++) kids[n++] = display(k->leaves[i]->term);
  fe_term_set_kids(r, n, kids);
  return r;
}

/* A copy of the host program t with kernels shown as kernel_ref does. */
static Term *display(const Term *t) {
  fe_stack_check(t->span);
  if (t->note && t->note->kernel) return kernel_ref(t->note->kernel, t);
  if (t->nkids == 0) return (Term *)t;
  Term *c = NEW(Term);
  *c = *t;
  c->kids = NEW_ARRAY(Term *, t->nkids);
  for (int i = 0; i < t->nkids; i++) c->kids[i] = display(t->kids[i]);
  return c;
}

/* ---- kernels ---- */

static const char *const kind_names[] = {"map", "reduce", "scan", "sequential scan", "foldl",
                                         "iota", "replicate", "rand", "check (nothing computed)"};

static void put_src(Buf *b, const PlanSrc *s) {
  if (s->leaf) {
    put(b, una_sprintf("L%d[i]", s->index));
    return;
  }
  put(b, una_sprintf("f%d(", s->fn->id));
  put_src(b, s->a);
  if (s->b) {
    put(b, ", ");
    put_src(b, s->b);
  }
  put(b, ")");
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

static void put_kernel(Buf *b, const PlanKernel *k) {
  put(b, una_sprintf("k%d = %s (%s)", k->id, kind_names[k->kind], k->name));
  if (k->kind == PK_SCAN || k->kind == PK_SCAN_SEQ) put(b, k->right ? " from the right" : " from the left");
  switch (k->kind) {
  case PK_IOTA:
  case PK_REPLICATE:
  case PK_RAND: put(b, ", n = its first argument\n"); return;
  default: break;
  }
  put(b, ", n = length L0, elements ");
  put_src(b, k->src);
  if (k->op) {
    put(b, una_sprintf(", operator f%d", k->op->id));
    if (k->kind == PK_SCAN) put(b, una_sprintf(" (monoid %s)", monoid_name(k->monoid)));
    if (k->kind == PK_REDUCE) put(b, k->ordered ? " (in element order)" : " (commutes: in lanes)");
  }
  put(b, "\n");
}

/* ---- the whole plan ---- */

static void walk_notes(Buf *b, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->note && t->note->group)
      put(b, una_sprintf("group at let %s: %s\n", t->sym->name, cpu_sibling_plan_str(t->note->group)));
    if (t->note && t->note->scan_map) put(b, "map2 over a scan, computed in place (scan_map)\n");
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) walk_notes(b, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

char *plan_str(const Plan *p) {
  Buf b = {0};
  put(&b, "");
  for (int i = 0; i < p->ndefs; i++) {
    Def shown = *p->defs[i];
    shown.body = display(p->defs[i]->body);
    put(&b, fe_def_str_opts(&shown, FE_PRINT_MULTILINE));
    put(&b, "\n");
  }
  for (int i = 0; i < p->nkernels; i++) put_kernel(&b, p->kernels[i]);
  for (int i = 0; i < p->nfns; i++) {
    const PlanFn *f = p->fns[i];
    put(&b, una_sprintf("f%d = (", f->id));
    for (int j = 0; j < f->lam->nsyms; j++) put(&b, una_sprintf("%s%s", j ? ", " : "", f->lam->syms[j]->name));
    put(&b, una_sprintf(". %s)\n", fe_term_str(f->lam->kids[0])));
  }
  for (int i = 0; i < p->ndefs; i++) walk_notes(&b, p->defs[i]->body);
  return b.s;
}
