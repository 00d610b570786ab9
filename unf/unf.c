/* unf.c: the constructors of Source and Target UNF terms; each checks its
   typing rule (figures 6 and 7, generalized as unf_kinds.def says). */
#include "unf.h"

const char *const unf_kind_names[U__COUNT] = {
#define UNF(id, name, target) name,
#include "unf_kinds.def"
#undef UNF
};

bool unf_is_primitive(UnfKind k) {
  switch (k) {
#define UNF(id, name, target) \
  case U_##id: return !(target) && U_##id != U_SEQ;
#include "unf_kinds.def"
#undef UNF
  case U__COUNT: break;
  }
  return false;
}

static const Type *R(void) { return fe_ty_real(); }

/* The type of entry i from the top (0 = the top) of c, which must be an
   ordinary value. */
static const Type *top_type(const UnfCtx *c, int i) {
  for (; i > 0; i--) {
    ASSERT(c);
    c = c->prev;
  }
  ASSERT(c && c->kind == UE_TYPE);
  return c->type;
}

static Unf *prim(UnfKind k, Span s, const UnfCtx *in, int nops, const Type *result) {
  ASSERT(unf_ctx_len(in) >= nops);
  Unf *u = NEW(Unf);
  u->kind = k;
  u->span = s;
  u->in = in;
  u->base = unf_ctx_prefix(in, unf_ctx_len(in) - nops);
  u->out = result ? unf_ctx_push(in, result, NULL) : NULL;
  if (u->out && (k == U_CONST || k == U_CST || k == U_NDOP)) ((UnfCtx *)u->out)->konst = true;
  return u;
}

/* Checks that the free variables have the positions claimed. */
static void set_fv(Unf *u, int nfv, Sym **fv, int *fv_pos) {
  u->nfv = nfv;
  u->fv = NEW_ARRAY(Sym *, nfv > 0 ? nfv : 1);
  u->fv_pos = NEW_ARRAY(int, nfv > 0 ? nfv : 1);
  for (int i = 0; i < nfv; i++) {
    const UnfCtx *e = unf_ctx_at(u->in, fv_pos[i]);
    ASSERT(e->kind == UE_TYPE && e->sym == fv[i] && fe_type_eq(e->type, fv[i]->type));
    u->fv[i] = fv[i];
    u->fv_pos[i] = fv_pos[i];
  }
}

Unf *unf_var(Span s, const UnfCtx *in, int i) {
  const UnfCtx *e = unf_ctx_at(in, i);
  ASSERT(e->kind == UE_TYPE);
  Unf *u = prim(U_VAR, s, in, 0, e->type);
  ((UnfCtx *)u->out)->konst = e->konst;
  u->index = i;
  return u;
}

Unf *unf_const(Span s, const UnfCtx *in, const Term *c) {
  ASSERT(c->kind == T_NUM || c->kind == T_BOOL);
  Unf *u = prim(U_CONST, s, in, 0, c->type);
  u->term = c;
  return u;
}

Unf *unf_cst(Span s, const UnfCtx *in, const Term *term, int nfv, Sym **fv, int *fv_pos) {
  ASSERT(term->type);
  Unf *u = prim(U_CST, s, in, 0, term->type);
  u->term = term;
  set_fv(u, nfv, fv, fv_pos);
  return u;
}

Unf *unf_op(Span s, const UnfCtx *in, Prim p) {
  ASSERT(fe_prims[p].cls == P_SCALAR1 || fe_prims[p].cls == P_SCALAR2);
  int n = fe_prims[p].arity;
  for (int i = 0; i < n; i++) ASSERT(fe_type_eq(top_type(in, i), R()));
  Unf *u = prim(U_OP, s, in, n, R());
  u->prim = p;
  u->n = n;
  return u;
}

Unf *unf_ndop(Span s, const UnfCtx *in, const Term *t, int n) {
  ASSERT(t->kind == T_PRIM && t->nkids == n);
  for (int i = 0; i < n; i++) ASSERT(fe_type_eq(top_type(in, i), t->kids[n - 1 - i]->type));
  Unf *u = prim(U_NDOP, s, in, n, t->type);
  u->prim = t->kind == T_PRIM ? t->prim : PRIM__COUNT;
  u->term = t;
  u->n = n;
  return u;
}

Unf *unf_pair(Span s, const UnfCtx *in, int n) {
  ASSERT(n >= 2);
  const Type **ts = NEW_ARRAY(const Type *, n);
  for (int i = 0; i < n; i++) ts[n - 1 - i] = top_type(in, i);
  Unf *u = prim(U_PAIR, s, in, n, NULL);
  u->out = unf_ctx_push(u->base, fe_ty_tuple(n, ts), NULL);
  u->n = n;
  return u;
}

Unf *unf_proj(Span s, const UnfCtx *in, int n2, int n3) {
  ASSERT(n2 >= 0 && n3 >= 0 && n2 + n3 <= unf_ctx_len(in));
  const UnfCtx **keep = NEW_ARRAY(const UnfCtx *, n3 > 0 ? n3 : 1);
  const UnfCtx *c = in;
  for (int i = n3 - 1; i >= 0; i--) {
    keep[i] = c;
    c = c->prev;
  }
  Unf *u = NEW(Unf);
  u->kind = U_PROJ;
  u->span = s;
  u->in = in;
  u->base = unf_ctx_prefix(c, unf_ctx_len(c) - n2);
  u->index = n2;
  u->n = n3;
  const UnfCtx *out = u->base;
  for (int i = 0; i < n3; i++) out = unf_ctx_repush(out, keep[i]);
  u->out = out;
  return u;
}

Unf *unf_pi(Span s, const UnfCtx *in, int i) {
  const Type *t = top_type(in, 0);
  ASSERT(t->kind == TY_TUPLE && i >= 0 && i < t->n);
  Unf *u = prim(U_PI, s, in, 1, t->elems[i]);
  u->index = i;
  return u;
}

Unf *unf_combinator(Span s, UnfKind kind, const UnfCtx *in, const Term *lam, int nfv, Sym **fv,
                    int *fv_pos) {
  ASSERT(lam->kind == T_LAM);
  const Type *body = lam->kids[0]->type;
  Unf *u = NULL;
  switch (kind) {
  case U_MAP: {
    ASSERT(lam->nsyms == 1);
    const Type *a = top_type(in, 0);
    ASSERT(a->kind == TY_ARRAY && fe_type_eq(a->elem, lam->syms[0]->type));
    u = prim(kind, s, in, 1, fe_ty_array(body));
    break;
  }
  case U_MAP2: {
    ASSERT(lam->nsyms == 2);
    const Type *a = top_type(in, 1), *b = top_type(in, 0);
    ASSERT(a->kind == TY_ARRAY && fe_type_eq(a->elem, lam->syms[0]->type));
    ASSERT(b->kind == TY_ARRAY && fe_type_eq(b->elem, lam->syms[1]->type));
    u = prim(kind, s, in, 2, fe_ty_array(body));
    break;
  }
  case U_REDUCE:
  case U_FOLDL: {
    ASSERT(lam->nsyms == 2);
    const Type *v = top_type(in, 1), *a = top_type(in, 0);
    ASSERT(fe_type_eq(v, lam->syms[0]->type) && fe_type_eq(v, body));
    ASSERT(a->kind == TY_ARRAY && fe_type_eq(a->elem, lam->syms[1]->type));
    u = prim(kind, s, in, 2, v);
    break;
  }
  default: UNREACHABLE();
  }
  u->term = lam;
  set_fv(u, nfv, fv, fv_pos);
  return u;
}

Unf *unf_if(Span s, const UnfCtx *in, const Term *t, int nfv, Sym **fv, int *fv_pos) {
  ASSERT(t->kind == T_IF && top_type(in, 0)->kind == TY_BOOL);
  Unf *u = prim(U_IF, s, in, 1, t->type);
  u->term = t;
  set_fv(u, nfv, fv, fv_pos);
  return u;
}

Unf *unf_replicate(Span s, const UnfCtx *in) {
  ASSERT(fe_type_eq(top_type(in, 1), R()));
  return prim(U_REPLICATE, s, in, 2, fe_ty_array(top_type(in, 0)));
}

Unf *unf_array(Span s, const UnfCtx *in, int n) {
  ASSERT(n >= 0);
  const Type *elem = n > 0 ? top_type(in, 0) : R();
  for (int i = 0; i < n; i++) ASSERT(fe_type_eq(top_type(in, i), elem));
  Unf *u = prim(U_ARRAY, s, in, n, fe_ty_array(elem));
  u->n = n;
  return u;
}

Unf *unf_save(Span s, const UnfCtx *in, const Term *t) {
  ASSERT(t->kind == T_PRIM && t->prim == PRIM_SAVE);
  ASSERT(fe_type_eq(top_type(in, 0), t->type));
  Unf *u = prim(U_SAVE, s, in, 1, t->type);
  u->term = t;
  return u;
}

Unf *unf_prim(Span s, const UnfCtx *in, const Term *t, int n, int nfv, Sym **fv, int *fv_pos) {
  ASSERT(t->kind == T_PRIM || t->kind == T_CALL);
  int k = n;
  for (int i = 0; i < t->nkids; i++) {
    if (t->kids[i]->kind == T_LAM) continue;
    k--;
    ASSERT(k >= 0 && fe_type_eq(top_type(in, k), t->kids[i]->type));
  }
  ASSERT(k == 0);
  Unf *u = prim(U_PRIM, s, in, n, t->type);
  u->prim = t->prim;
  u->term = t;
  u->n = n;
  set_fv(u, nfv, fv, fv_pos);
  return u;
}

/* ---- composition ---- */

static void seq_add(Unf ***steps, int *n, int *cap, Unf *e) {
  if (e->kind == U_SEQ) {
    for (int i = 0; i < e->nkids; i++) seq_add(steps, n, cap, e->kids[i]);
    return;
  }
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 8;
    Unf **a = NEW_ARRAY(Unf *, *cap);
    if (*n) memcpy(a, *steps, sizeof(Unf *) * (size_t)*n);
    *steps = a;
  }
  if (*n > 0) ASSERT(unf_ctx_eq((*steps)[*n - 1]->out, e->in));
  (*steps)[(*n)++] = e;
}

Unf *unf_seq(int n, Unf **steps) {
  ASSERT(n >= 1);
  Unf **all = NULL;
  int m = 0, cap = 0;
  for (int i = 0; i < n; i++) seq_add(&all, &m, &cap, steps[i]);
  if (m == 1) return all[0];
  Unf *u = NEW(Unf);
  u->kind = U_SEQ;
  u->span = all[0]->span;
  u->in = all[0]->in;
  u->out = all[m - 1]->out;
  u->kids = all;
  u->nkids = m;
  return u;
}

Unf *unf_jt(const Unf *p) {
  ASSERT(unf_is_primitive(p->kind));
  Unf *u = NEW(Unf);
  u->kind = U_JT;
  u->span = p->span;
  u->in = p->in;
  u->out = unf_ctx_push_lin(NULL, p->out, p->in);
  u->kids = NEW_ARRAY(Unf *, 1);
  u->kids[0] = (Unf *)p;
  u->nkids = 1;
  return u;
}

Unf *unf_tpair(const Unf *e1, const Unf *e2) {
  ASSERT(unf_ctx_eq(e1->in, e2->in));
  int n2 = unf_ctx_len(e2->out);
  const UnfCtx **top = NEW_ARRAY(const UnfCtx *, n2 > 0 ? n2 : 1);
  const UnfCtx *c = e2->out;
  for (int i = n2 - 1; i >= 0; i--, c = c->prev) top[i] = c;
  const UnfCtx *out = e1->out;
  for (int i = 0; i < n2; i++) out = unf_ctx_repush(out, top[i]);
  Unf *u = NEW(Unf);
  u->kind = U_TPAIR;
  u->span = e1->span;
  u->in = e1->in;
  u->out = out;
  u->kids = NEW_ARRAY(Unf *, 2);
  u->kids[0] = (Unf *)e1;
  u->kids[1] = (Unf *)e2;
  u->nkids = 2;
  return u;
}

Unf *unf_comp(const Unf *e1, const Unf *e2) {
  ASSERT(unf_ctx_eq(e1->in, e2->in));
  const UnfCtx *k = e1->out, *l = e2->out;
  ASSERT(unf_ctx_len(k) == 1 && k->kind == UE_CONT);
  ASSERT(unf_ctx_len(l) == 1 && l->kind == UE_LIN);
  ASSERT(unf_ctx_eq(k->from, l->to));
  Unf *u = NEW(Unf);
  u->kind = U_COMP;
  u->span = e2->span;
  u->in = e1->in;
  u->out = unf_ctx_push_cont(NULL, l->from);
  u->kids = NEW_ARRAY(Unf *, 2);
  u->kids[0] = (Unf *)e1;
  u->kids[1] = (Unf *)e2;
  u->nkids = 2;
  return u;
}
