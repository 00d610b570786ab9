/* index_map.c: a map over indices that only reads arrays at its own index
   becomes a map over those arrays (arrays.c calls it on every map):

     map (i. e[X1[i], ..., Xk[i]]) (iota N)  ->  mapk (x1 ... xk. e[x1, ..., xk]) X1 ... Xk

   when every occurrence of i in e is a read `Xj[i]` of an array Xj bound
   outside the lambda, each Xj is known to have length N (so every read is
   in range and the map2/map3 check cannot fail), and k is 1 to 3. The
   forward derivative of a map builds the index form (forward/jvp.c); the
   map form is an elementwise kernel with plain loads instead of a gather
   with its bounds and integer checks per element, and a map over rows
   reads each row once. */
#include "index_map.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"
#include "pe_util.h"

#define MAX_ARRAYS 3

typedef struct Reads {
  const Sym *i;           /* the index */
  Term *arrays[MAX_ARRAYS]; /* the arrays read at i (variables) */
  Sym *elems[MAX_ARRAYS];   /* their elements' new parameters */
  int n;
  OptSymMap *bound; /* binders inside the lambda's body */
} Reads;

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

static bool is_read(const Reads *r, const Term *t) {
  return is_prim(t, PRIM_INDEX) && t->nkids == 2 && t->kids[1]->kind == T_VAR && t->kids[1]->sym == r->i &&
         t->kids[0]->kind == T_VAR;
}

/* Records the binders of t in r->bound. */
static void binders(Reads *r, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET) opt_map_add(r->bound, t->sym, 1);
  if (t->kind == T_LETTUP || t->kind == T_LAM)
    for (int k = 0; k < t->nsyms; k++) opt_map_add(r->bound, t->syms[k], 1);
  for (int k = 0; k < t->nkids; k++) binders(r, t->kids[k]);
}

/* True when every occurrence of the index in t is a read of an array bound
   outside (recorded in r, at most MAX_ARRAYS of them). */
static bool reads_only(Reads *r, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_VAR) return t->sym != r->i;
  if (is_read(r, t)) {
    Sym *x = t->kids[0]->sym;
    if (opt_map_count(r->bound, x)) return false;
    for (int k = 0; k < r->n; k++)
      if (r->arrays[k]->sym == x) return true;
    if (r->n == MAX_ARRAYS) return false;
    r->arrays[r->n++] = t->kids[0];
    return true;
  }
  for (int k = 0; k < t->nkids; k++)
    if (!reads_only(r, t->kids[k])) return false;
  return true;
}

/* t with each read Xj[i] replaced by xj. */
static Term *replace(const Reads *r, const Term *t) {
  fe_stack_check(t->span);
  if (is_read(r, t))
    for (int k = 0; k < r->n; k++)
      if (r->arrays[k]->sym == t->kids[0]->sym) return fe_mk_var(t->span, r->elems[k]);
  if (t->nkids == 0) return (Term *)t;
  OPT_KIDS(kids, t->nkids);
  for (int k = 0; k < t->nkids; k++) kids[k] = replace(r, t->kids[k]);
  return opt_with_kids(t, kids);
}

Term *opt_index_map(OptRw *c, Term *t) {
  Term *lam = t->kids[0], *over = t->kids[1];
  if (!is_prim(t, PRIM_MAP) || lam->nsyms != 1 || !is_prim(opt_rw_resolve(c, over), PRIM_IOTA) ||
      !opt_rw_safe(c, over))
    return NULL;
  Reads r = {.i = lam->syms[0], .bound = opt_map_new()};
  binders(&r, lam->kids[0]);
  if (!reads_only(&r, lam->kids[0]) || r.n == 0) return NULL;
  for (int k = 0; k < r.n; k++) {
    if (!opt_rw_same_length(c, r.arrays[k], over)) return NULL;
    r.elems[k] = fe_mk_sym("x", r.arrays[k]->type->elem, lam->span);
  }
  Term *body = replace(&r, lam->kids[0]);
  Term *kids[1 + MAX_ARRAYS] = {fe_mk_lam(lam->span, r.n, r.elems, body)};
  for (int k = 0; k < r.n; k++) kids[1 + k] = fe_copy(r.arrays[k]);
  static const Prim maps[1 + MAX_ARRAYS] = {PRIM_MAP, PRIM_MAP, PRIM_MAP2, PRIM_MAP3};
  Term *m = fe_mk_array_prim(t->span, maps[r.n], 1 + r.n, kids);
  m->b = r.n > 1; /* map2/map3 of arrays of one length: its check cannot fail */
  return m;
}
