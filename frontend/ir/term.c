/* term.c: the prim and kind tables, symbols and node constructors. */
#include "term.h"

#include <math.h>

/* The class of each signature code. */
#define CLASS_R_R P_SCALAR1
#define CLASS_RR_R P_SCALAR2
#define CLASS_RR_B P_CMP
#define CLASS_AA_B P_CMP
#define CLASS_BB_B P_LOGIC
#define CLASS_B_B P_NOT
#define GRAD_R_R G_RULE
#define GRAD_RR_R G_RULE
#define GRAD_RR_B G_CONST
#define GRAD_AA_B G_CONST
#define GRAD_BB_B G_CONST
#define GRAD_B_B G_CONST
#define NOUNIT NAN
#define NODERIV /* none: the rule's name is "" */
/* Array builtins are called by name, except the ones written otherwise
   (prims.def). */
#define ARRAY_WRIT(p)                                                                        \
  ((p) == PRIM_INDEX || (p) == PRIM_SLICE || (p) == PRIM_STOPGRAD_ANY || (p) == PRIM_LOOP_FOR || \
           (p) == PRIM_LOOP_WHILE                                                            \
       ? 0u                                                                                  \
       : (unsigned)W_CALL)
#define STR(x) STR_(x)
#define STR_(x) #x

const PrimInfo fe_prims[PRIM__COUNT] = {
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) \
  {name, sym, arity, SIG_##sig, CLASS_##sig, writ, prec, laws, unit, cost, #c, cuda, STR(deriv), E_PURE, GRAD_##sig, 0, 0, 0},
#define ARRAY(ID, name, arity, effect, grad, moves_n, moves_1, nlops_n) \
  {name, NULL, arity, SIG_ARRAY, P_ARRAY, ARRAY_WRIT(PRIM_##ID), PREC_NONE, 0, NAN, COST_MOVES, NULL, NULL, "", effect, grad, moves_n, moves_1, nlops_n},
#include "prims.def"
#undef SCALAR
#undef ARRAY
};

const char *const fe_deriv_op_names[4] = {"grad", "vjp", "jvp", "value_and_grad"};

const char *const fe_term_kind_names[T__COUNT] = {
#define TERM(id, name, surface) name,
#include "term_kinds.def"
#undef TERM
};

int fe_prim_lookup(const char *name) {
  for (int i = 0; i < PRIM__COUNT; i++)
    if ((fe_prims[i].writ & W_CALL) && strcmp(fe_prims[i].name, name) == 0) return i;
  return -1;
}

int fe_prim_by_sym(const char *sym, unsigned writ) {
  for (int i = 0; i < PRIM__COUNT; i++)
    if ((fe_prims[i].writ & writ) && fe_prims[i].sym && strcmp(fe_prims[i].sym, sym) == 0) return i;
  return -1;
}

int fe_prim_section(const char *text, bool is_name) {
  for (int i = 0; i < PRIM__COUNT; i++) {
    const PrimInfo *p = &fe_prims[i];
    if (!(p->writ & W_SECTION)) continue;
    const char *t = is_name ? ((p->writ & W_CALL) ? p->name : NULL) : p->sym;
    if (t && strcmp(t, text) == 0) return i;
  }
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

/* term.h orders Term's fields to leave no padding: 11 granules of the
   collector on a 64-bit machine. */
_Static_assert(sizeof(void *) != 8 || sizeof(Term) == 176, "Term has padding again (term.h)");

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

/* A node and its kids array in one allocation (half the objects for the
   collector to allocate and mark; a later fe_term_set_kids replaces the
   array and leaves the inline one unused). */
static Term *with_kids(int n) {
  Term *t = una_alloc(sizeof(Term) + sizeof(Term *) * (size_t)(n > 0 ? n : 1));
  t->kids = (Term **)(t + 1);
  return t;
}

Term *fe_term_kids(Span s, TermKind kind, const Type *type, int n, Term **kids) {
  Term *t = with_kids(n);
  t->kind = kind;
  t->span = s;
  t->type = type;
  t->nkids = n;
  if (n > 0) memcpy(t->kids, kids, sizeof(Term *) * (size_t)n);
  return t;
}

int fe_term_size_upto(const Term *t, int limit) {
  int n = 1;
  for (int i = 0; i < t->nkids && n <= limit; i++) n += fe_term_size_upto(t->kids[i], limit - n);
  return n;
}

Term *fe_term_copy_with_kids(const Term *t, Term **kids) {
  Term *c = with_kids(t->nkids);
  Term **own = c->kids;
  *c = *t;
  c->kids = own;
  if (t->nkids > 0) memcpy(own, kids, sizeof(Term *) * (size_t)t->nkids);
  return c;
}

Term *fe_term_prim(Span s, const Type *type, Prim p, int n, Term **args) {
  Term *t = fe_term_kids(s, T_PRIM, type, n, args);
  t->prim = p;
  return t;
}
