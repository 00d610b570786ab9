/* d_rho.c: D_rho on Source UNF, the paper's figure 8:

     D_rho(e1; e2) = D_rho(e1); D_rho(e2)
     D_rho(P)      = F(P, J^T P)        for every primitive P
     F(A, B)       = < proj[T;(T)->rho;[]]; A,
                       proj[[];T;(T)->rho] o (proj[T;(T)->rho;[]]; B) >

   where T = in(P). The first component drops the continuation k and runs
   P on the values; the second keeps only k and precomposes it with the
   transpose Jacobian of P at the values, giving the continuation of
   out(P). The primitives Una adds to figure 6 (map, foldl, if, replicate,
   array literals, the non-differentiable builtins, constants) need no rule
   of their own: F covers them, and their J^T is given to UNF^-1. */
#include "d_rho.h"

/* F(P, J^T P) : D(in P) |- D(out P). */
static Unf *f_rule(const Unf *p) {
  const UnfCtx *t = p->in, *dt = unf_ctx_d(t);
  Span s = p->span;
  Unf *drop = unf_proj(s, dt, 1, 0); /* proj[T;(T)->rho;[]], used twice (terms are immutable) */
  Unf *drop_k[2] = {drop, (Unf *)p};
  Unf *first = unf_seq(2, drop_k);
  Unf *keep_k = unf_proj(s, dt, unf_ctx_len(t), 1);
  Unf *jt[2] = {drop, unf_jt(p)};
  Unf *second = unf_comp(keep_k, unf_seq(2, jt));
  Unf *f = unf_tpair(first, second);
  /* f : D(in P) |- D(out P) */
  ASSERT(f->out->prev == p->out && f->out->kind == UE_CONT && unf_ctx_eq(f->out->from, p->out));
  return f;
}

Unf *rev_d_rho(const Unf *e) {
  if (e->kind != U_SEQ) return f_rule(e);
  Unf **steps = NEW_ARRAY(Unf *, e->nkids);
  for (int i = 0; i < e->nkids; i++) steps[i] = f_rule(e->kids[i]);
  return unf_seq(e->nkids, steps);
}
