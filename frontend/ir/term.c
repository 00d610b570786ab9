/* term.c: the prim and kind tables, symbols and node constructors. */
#include "term.h"

const PrimInfo fe_prims[PRIM__COUNT] = {
#define PRIM(id, name, infix, arity, cls) {name, infix, arity, cls},
#include "prims.def"
#undef PRIM
};

const char *const fe_term_kind_names[T__COUNT] = {
#define TERM(id, name, surface) name,
#include "term_kinds.def"
#undef TERM
};

int fe_prim_lookup(const char *name) {
  for (int i = 0; i < PRIM__COUNT; i++) {
    const PrimInfo *p = &fe_prims[i];
    /* Operators are reached through their symbols, not internal names. */
    if (p->infix && i != PRIM_POW) continue;
    if (strcmp(p->name, name) == 0) return i;
  }
  if (strcmp(name, "neg") == 0) return PRIM_NEG;
  return -1;
}

Sym *fe_sym_new(const char *name, const Type *type, Span span) {
  static int next_id = 1;
  Sym *x = NEW(Sym);
  x->name = name;
  x->id = next_id++;
  x->slot = -1;
  x->type = type;
  x->span = span;
  return x;
}

Term *fe_term_new(TermKind kind, Span span, const Type *type) {
  Term *t = NEW(Term);
  t->kind = kind;
  t->span = span;
  t->type = type;
  return t;
}

Term *fe_term_num(Span s, double v) {
  Term *t = fe_term_new(T_NUM, s, fe_ty_real());
  t->num = v;
  return t;
}

Term *fe_term_bool(Span s, bool v) {
  Term *t = fe_term_new(T_BOOL, s, fe_ty_bool());
  t->b = v;
  return t;
}

Term *fe_term_var(Span s, Sym *x) {
  Term *t = fe_term_new(T_VAR, s, x->type);
  t->sym = x;
  return t;
}

void fe_term_set_kids(Term *t, int n, Term **kids) {
  t->nkids = n;
  t->kids = NEW_ARRAY(Term *, n > 0 ? n : 1);
  if (n > 0) memcpy(t->kids, kids, sizeof(Term *) * (size_t)n);
}

Term *fe_term_kids(Span s, TermKind kind, const Type *type, int n, Term **kids) {
  Term *t = fe_term_new(kind, s, type);
  fe_term_set_kids(t, n, kids);
  return t;
}

Term *fe_term_prim(Span s, const Type *type, Prim p, int n, Term **args) {
  Term *t = fe_term_kids(s, T_PRIM, type, n, args);
  t->prim = p;
  return t;
}
