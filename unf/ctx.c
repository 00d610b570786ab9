/* ctx.c: UNF contexts, persistent lists with shared tails and skew-binary
   jump pointers (Myers' random-access stack): O(1) push, O(log n) access
   to any entry (see unf.h). */
#include "unf.h"

int unf_ctx_len(const UnfCtx *c) { return c ? c->len : 0; }

/* The jump pointer of a new node on top of prev: if prev's jump spans as
   many entries as its jump's jump, the new node jumps twice as far. */
static const UnfCtx *jump_for(const UnfCtx *prev) {
  if (!prev) return NULL;
  const UnfCtx *j = prev->jump;
  if (j && prev->len - j->len == j->len - unf_ctx_len(j->jump)) return j->jump;
  return prev;
}

static UnfCtx *node(const UnfCtx *prev, UnfEntryKind kind) {
  UnfCtx *c = NEW(UnfCtx);
  c->prev = prev;
  c->jump = jump_for(prev);
  c->len = unf_ctx_len(prev) + 1;
  c->kind = kind;
  return c;
}

const UnfCtx *unf_ctx_push(const UnfCtx *c, const Type *t, Sym *sym) {
  ASSERT(t);
  UnfCtx *n = node(c, UE_TYPE);
  n->type = t;
  n->sym = sym;
  return n;
}

const UnfCtx *unf_ctx_push_cont(const UnfCtx *c, const UnfCtx *from) {
  UnfCtx *n = node(c, UE_CONT);
  n->from = from;
  return n;
}

const UnfCtx *unf_ctx_push_lin(const UnfCtx *c, const UnfCtx *from, const UnfCtx *to) {
  UnfCtx *n = node(c, UE_LIN);
  n->from = from;
  n->to = to;
  return n;
}

const UnfCtx *unf_ctx_repush(const UnfCtx *below, const UnfCtx *e) {
  UnfCtx *n = node(below, e->kind);
  n->type = e->type;
  n->sym = e->sym;
  n->konst = e->konst;
  n->from = e->from;
  n->to = e->to;
  return n;
}

const UnfCtx *unf_ctx_name(const UnfCtx *c, Sym *sym) {
  ASSERT(c && c->kind == UE_TYPE);
  UnfCtx *n = node(c->prev, UE_TYPE);
  n->type = c->type;
  n->sym = sym;
  n->konst = c->konst;
  return n;
}

const UnfCtx *unf_ctx_prefix(const UnfCtx *c, int len) {
  ASSERT(len >= 0 && len <= unf_ctx_len(c));
  while (unf_ctx_len(c) > len) {
    const UnfCtx *j = c->jump;
    c = unf_ctx_len(j) >= len ? j : c->prev;
  }
  return c;
}

const UnfCtx *unf_ctx_at(const UnfCtx *c, int i) {
  ASSERT(i >= 0 && i < unf_ctx_len(c));
  return unf_ctx_prefix(c, i + 1);
}

const UnfCtx *unf_ctx_of_syms(Sym **xs, int n) {
  const UnfCtx *c = NULL;
  for (int i = 0; i < n; i++) c = unf_ctx_push(c, xs[i]->type, xs[i]);
  return c;
}

static bool entry_eq(const UnfCtx *a, const UnfCtx *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case UE_TYPE: return fe_type_eq(a->type, b->type);
  case UE_CONT: return unf_ctx_eq(a->from, b->from);
  case UE_LIN: return unf_ctx_eq(a->from, b->from) && unf_ctx_eq(a->to, b->to);
  }
  UNREACHABLE();
}

bool unf_ctx_eq(const UnfCtx *a, const UnfCtx *b) {
  while (a != b) {
    if (!a || !b || a->len != b->len || !entry_eq(a, b)) return false;
    a = a->prev;
    b = b->prev;
  }
  return true;
}

const UnfCtx *unf_ctx_d(const UnfCtx *c) { return unf_ctx_push_cont(c, c); }
