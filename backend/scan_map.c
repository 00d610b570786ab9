/* scan_map.c: map2 of a scan, fused (see scan_map.h). The scan's elements
   E[0..n] (n = the length of its input X) are those of the scan alone:
   scanl: E[0] = v, E[i+1] = f(E[i], X[i]); scanr: E[n] = v, E[i] = f(X[i],
   E[i+1]); the same operator (monoid loop or kernel) gives the same bits.
   The map2 reads E[off + q] for q < m: off = 1 under shift1L, m = n under
   a shift and n + 1 without. Those m elements are scanned straight into
   the result array (a tight sequential loop: scans are bound by the
   latency of their operator), and the map2's kernel then runs over it in
   place: the scan takes no array of its own. */
#include "scan_map.h"

#include "array_int.h"
#include "array_ops.h"
#include "cost_meter.h"

#define B CPU_BLOCK

typedef struct ScanArg {
  const Term *scan;
  bool right;  /* scanr */
  size_t off;  /* 1 under shift1L */
  bool shifted;
} ScanArg;

static bool scan_arg(const Term *t, ScanArg *s) {
  s->off = 0;
  s->shifted = false;
  if (t->kind == T_PRIM && (t->prim == PRIM_SHIFT1L || t->prim == PRIM_SHIFT1R)) {
    s->off = t->prim == PRIM_SHIFT1L;
    s->shifted = true;
    t = t->kids[0];
  }
  if (t->kind != T_PRIM || (t->prim != PRIM_SCANL && t->prim != PRIM_SCANR)) return false;
  if (!t->type || t->type->kind != TY_ARRAY || t->type->elem->kind != TY_REAL) return false;
  const Term *x = t->kids[2];
  if (x->kind == T_PRIM && (x->prim == PRIM_MAP || x->prim == PRIM_MAP2)) return false; /* fused into the scan */
  s->scan = t;
  s->right = t->prim == PRIM_SCANR;
  return true;
}

bool cpu_map2_of_scan(const Exec *ex, const Term *t, Value *frame, Value *result) {
  if (ex->meter || !cpu_kernels_enabled(ex) || t->prim != PRIM_MAP2) return false;
  ScanArg s;
  int which;
  if (scan_arg(t->kids[1], &s)) which = 0;
  else if (scan_arg(t->kids[2], &s)) which = 1;
  else return false;
  const CpuKernel *g = cpu_kernel_for(t->kids[0]);
  if (!g || cpu_kernel_returns_bool(g) || !t->type->elem || t->type->elem->kind != TY_REAL) return false;
  /* the kernels bound first (their hoisted parts cannot raise or act, so
     binding before the arrays are evaluated is not observable); when one
     does not bind, the ordinary evaluation runs instead */
  const Term *lam = s.scan->kids[0];
  const MonoidFns *mf = cpu_monoid_loops(ex, lam);
  CpuKernelRun op, run;
  if ((!mf && !cpu_lam_kernel(ex, lam, frame, &op)) || !cpu_lam_kernel(ex, t->kids[0], frame, &run)) return false;

  /* the arguments in the ordinary order: kids[1] (scan: v, then X), kids[2] */
  Array *other = which == 1 ? cpu_eval_array(ex, t->kids[1], frame) : NULL;
  Value v = ex->eval(ex, s.scan->kids[1], frame);
  Array *x = cpu_eval_array(ex, s.scan->kids[2], frame);
  if (which == 0) other = cpu_eval_array(ex, t->kids[2], frame);
  size_t n = x->len, m = s.shifted ? n : n + 1;
  size_t la = which == 0 ? m : other->len, lb = which == 0 ? other->len : m;
  cpu_check_map2_lengths(t, la, lb);

  /* from here on nothing can raise (but an interrupt); the arrays are
     reals (their type says so), hence unboxed */
  ASSERT(v.kind == V_REAL && !x->boxed && !other->boxed);
  Array *out = val_new_real_array(m, t->span);
  double acc = v.u.r, *o = out->r;
  const double *xr = x->r;
  if (m > 0) {
    fe_poll_interrupt(t->span);
    if (!s.right) {
      /* o[q] = E[off + q], E[e] = f(E[e-1], X[e-1]), E[0] = v */
      size_t skip = s.off == 0;
      if (skip) o[0] = acc;
      if (mf) {
        mf->lscan(acc, xr + s.off + skip - 1, m - skip, o + skip);
      } else {
        for (size_t q = skip; q < m; q++) o[q] = acc = cpu_kernel_call1(&op, acc, xr[s.off + q - 1]);
      }
    } else {
      /* o[q] = E[off + q], E[e] = f(X[e], E[e+1]), E[n] = v */
      size_t skip = s.off + m - 1 == n;
      if (skip) o[m - 1] = acc;
      if (mf) {
        mf->rscan(acc, xr + s.off, m - skip, o);
      } else {
        for (size_t q = m - skip; q-- > 0;) o[q] = acc = cpu_kernel_call1(&op, xr[s.off + q], acc);
      }
    }
  }
  /* the map2, in place over the scan, on this core: spread over the cores
     it measured 1.5 times slower for ∇prod in bench/cpu (why is not
     understood; its pages were all first touched by this thread) */
  const double *ot = other->r;
  for (size_t q = 0; q < m; q += B) {
    if ((q & (64 * B - 1)) == 0) fe_poll_interrupt(t->span);
    size_t k = m - q < B ? m - q : B;
    if (which == 0) cpu_kernel_block(&run, o + q, ot + q, k, o + q);
    else cpu_kernel_block(&run, ot + q, o + q, k, o + q);
  }
  *result = val_array(out);
  return true;
}
