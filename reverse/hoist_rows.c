/* hoist_rows.c: rows read in inner lambdas, read once at the body's top
   (see hoist_rows.h). */
#include "hoist_rows.h"

#include <string.h>

#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/subst.h"

static char inner_mark;

typedef struct {
  Sym *const *fv;
  int nfv;
  PtrMap lets;  /* the body's lets outside inner lambdas: their right-hand sides */
  PtrMap bound; /* every other variable bound in the body */
  int n, cap;
  Sym **row;     /* per hoisted row: its variable */
  Sym **matrix;  /* ... the matrix */
  Term **index;  /* ... its index, the lets expanded */
} Hoist;

static bool is_matrix(const Type *t) {
  return t->kind == TY_ARRAY && t->elem->kind == TY_ARRAY && t->elem->elem->kind == TY_REAL;
}

static Sym *matrix_of(const Hoist *h, const Term *t) {
  if (t->kind != T_VAR || !is_matrix(t->sym->type)) return NULL;
  for (int k = 0; k < h->nfv; k++)
    if (h->fv[k] == t->sym) return t->sym;
  return NULL;
}

/* The most nodes an expanded index may have (lets that use each other
   twice would otherwise expand exponentially). */
enum { INDEX_NODES = 64 };

/* e over the parameters and free variables, the body's lets expanded,
   built of arithmetic that cannot fail, of at most *budget nodes (taken
   from it); NULL when it is not. */
static Term *expand(const Hoist *h, const Term *e, int *budget) {
  fe_stack_check(e->span);
  if (--*budget < 0) return NULL;
  switch (e->kind) {
  case T_NUM: return (Term *)e;
  case T_VAR: {
    if (ptrmap_get(&h->bound, e->sym)) return NULL;
    const Term *rhs = ptrmap_get(&h->lets, e->sym);
    return rhs ? expand(h, rhs, budget) : (Term *)e;
  }
  case T_PRIM:
    switch (e->prim) {
    case PRIM_LENGTH:
      /* of a parameter or free variable: its value is there */
      return e->kids[0]->kind == T_VAR && !ptrmap_get(&h->bound, e->kids[0]->sym) &&
                     !ptrmap_get(&h->lets, e->kids[0]->sym)
                 ? (Term *)e
                 : NULL;
    case PRIM_ADD:
    case PRIM_SUB:
    case PRIM_MUL:
    case PRIM_NEG:
    case PRIM_MIN:
    case PRIM_MAX:
    case PRIM_FLOOR:
    case PRIM_ABS: {
      Term **kids = NEW_ARRAY(Term *, e->nkids);
      for (int i = 0; i < e->nkids; i++)
        if (e->kids[i]->type->kind != TY_REAL || !(kids[i] = expand(h, e->kids[i], budget))) return NULL;
      return fe_term_copy_with_kids(e, kids);
    }
    default: return NULL;
    }
  default: return NULL;
  }
}

static bool same(const Term *a, const Term *b) {
  if (a->kind != b->kind || a->nkids != b->nkids) return false;
  if (a->kind == T_NUM && a->num != b->num) return false;
  if (a->kind == T_VAR && a->sym != b->sym) return false;
  if (a->kind == T_PRIM && a->prim != b->prim) return false;
  for (int i = 0; i < a->nkids; i++)
    if (!same(a->kids[i], b->kids[i])) return false;
  return true;
}

/* The row variable for m[ix]: an earlier one of an equal index, or new. */
static Sym *row_for(Hoist *h, Span s, Sym *m, Term *ix) {
  for (int i = 0; i < h->n; i++)
    if (h->matrix[i] == m && same(h->index[i], ix)) return h->row[i];
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 4;
    Sym **r = NEW_ARRAY(Sym *, cap), **mx = NEW_ARRAY(Sym *, cap);
    Term **x = NEW_ARRAY(Term *, cap);
    if (h->n) {
      memcpy(r, h->row, sizeof *r * (size_t)h->n);
      memcpy(mx, h->matrix, sizeof *mx * (size_t)h->n);
      memcpy(x, h->index, sizeof *x * (size_t)h->n);
    }
    h->row = r;
    h->matrix = mx;
    h->index = x;
    h->cap = cap;
  }
  h->matrix[h->n] = m;
  h->index[h->n] = ix;
  return h->row[h->n++] = fe_mk_sym("row", m->type->elem, s);
}

static void bind(Hoist *h, const Term *t, bool inner) {
  if (t->kind == T_LET) {
    if (inner) ptrmap_put(&h->bound, t->sym, &inner_mark);
    else ptrmap_put(&h->lets, t->sym, t->kids[0]);
  }
  if (t->kind == T_LETTUP || t->kind == T_LAM)
    for (int i = 0; i < t->nsyms; i++) ptrmap_put(&h->bound, t->syms[i], &inner_mark);
}

static Term *walk(Hoist *h, const Term *t, bool inner) {
  fe_stack_check(t->span);
  bind(h, t, inner);
  if (inner && t->kind == T_PRIM && t->prim == PRIM_INDEX) {
    Sym *m = matrix_of(h, t->kids[0]);
    int budget = INDEX_NODES;
    Term *ix = m ? expand(h, t->kids[1], &budget) : NULL;
    if (ix) return fe_mk_var(t->span, row_for(h, t->span, m, ix));
  }
  if (t->nkids == 0) return (Term *)t;
  bool in = inner || t->kind == T_LAM;
  Term **kids = NULL;
  for (int i = 0; i < t->nkids; i++) {
    Term *k = walk(h, t->kids[i], in);
    if (k != t->kids[i] && !kids) {
      kids = NEW_ARRAY(Term *, t->nkids);
      memcpy(kids, t->kids, sizeof(Term *) * (size_t)t->nkids);
    }
    if (kids) kids[i] = k;
  }
  return kids ? fe_term_copy_with_kids(t, kids) : (Term *)t;
}

Term *rev_hoist_safe_index(Span s, const RevHoisted *h, int i) {
  Term *e = h->index[i];
  Term *len = fe_mk_length(s, fe_mk_var(s, h->matrix[i]));
  Term *in = fe_mk_op2(s, PRIM_AND, fe_mk_op2(s, PRIM_LE, fe_mk_num(s, 0), fe_copy(e)),
                       fe_mk_op2(s, PRIM_AND, fe_mk_op2(s, PRIM_LT, fe_copy(e), len),
                                 fe_mk_op2(s, PRIM_EQ, fe_mk_op1(s, PRIM_FLOOR, fe_copy(e)), fe_copy(e))));
  return fe_mk_if(s, in, fe_copy(e), fe_mk_num(s, 0));
}

Term *rev_hoist_safe_read(Span s, const RevHoisted *h, int i) {
  Sym *m = h->matrix[i];
  Term *ix[2] = {fe_mk_var(s, m), rev_hoist_safe_index(s, h, i)};
  Term *read = fe_mk_array_prim(s, PRIM_INDEX, 2, ix);
  read->b = true; /* in range: m is not empty there */
  Term *empty = fe_mk_replicate(s, fe_mk_num(s, 0), fe_mk_num(s, 0));
  Term *none = fe_mk_op2(s, PRIM_EQ, fe_mk_length(s, fe_mk_var(s, m)), fe_mk_num(s, 0));
  return fe_mk_if(s, none, empty, read);
}

Term *rev_hoist_bind(const RevHoisted *h, Term *body) {
  for (int i = h->n - 1; i >= 0; i--) {
    Span s = h->index[i]->span;
    body = fe_mk_let(s, h->row[i], rev_hoist_safe_read(s, h, i), body);
  }
  return body;
}

Term *rev_hoist_rows(const Term *body, Sym *const *fv, int nfv, RevHoisted *out) {
  memset(out, 0, sizeof *out);
  bool any = false;
  for (int k = 0; k < nfv; k++) any |= is_matrix(fv[k]->type);
  if (!any) return (Term *)body;
  Hoist h;
  memset(&h, 0, sizeof h);
  h.fv = fv;
  h.nfv = nfv;
  ptrmap_init(&h.lets, 8);
  ptrmap_init(&h.bound, 8);
  Term *r = walk(&h, body, false);
  out->n = h.n;
  out->row = h.row;
  out->matrix = h.matrix;
  out->index = h.index;
  return r;
}
