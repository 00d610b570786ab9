/* direct_int.h: internals of the direct transform shared by direct.c
   (driver, contexts, continuations, scalar rules, let, tuples, if) and
   direct_array.c (map, map2, reduce, foldl, replicate, array literals).

   Vocabulary. The transform reads a normalized source term (free variables
   are output variables: the caller's ctx, or the primal values of an
   enclosing transform) and writes a flat block of forward bindings
       let (y, Y') = (value, fun (d_k1, ..., d_km, z) -> ... Y (args)) in ...
   A continuation (RevCont) is a let-bound variable Y of function type with
   its domain: the output variables ("slots") whose cotangents it takes, in
   parameter order; the slot of a value y is y itself. D(e) = (y, Y') where
   Y' takes the live-out slots K and then z, the cotangent of y. */
#ifndef UNA_DIRECT_INT_H
#define UNA_DIRECT_INT_H

#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/term.h"

/* ---- pointer maps (open addressing, keys compared by address) ---- */

typedef PtrMap RevPMap;
#define rev_dx_map_init ptrmap_init
#define rev_dx_map_get ptrmap_get
#define rev_dx_map_put ptrmap_put

/* ---- symbol sets (sorted by id) ---- */

typedef struct RevSyms {
  Sym **v;
  int n;
} RevSyms;

/* ---- blocks of bindings ---- */

typedef struct RevBind {
  Sym *x;    /* let x = rhs, or */
  Sym **xs;  /* let (xs...) = rhs when xs != NULL */
  int nxs;
  Term *rhs;
  Span span;
} RevBind;

typedef struct RevBlock {
  RevBind *b;
  int n, cap;
} RevBlock;

/* ---- continuations and results ---- */

typedef struct RevCont {
  Sym *fn;   /* the let-bound continuation */
  Sym **dom; /* its parameters' slots, in order */
  int n;
} RevCont;

typedef struct RevRes {
  Term *val; /* an atom: the value's variable, or a constant */
  RevCont c;
} RevRes;

/* The state of one run of the transform (one gradient; the gradients of
   lambda bodies and branches are runs of their own). */
typedef struct RevDx {
  bool dense;     /* REV_DIRECT_DENSE */
  RevPMap env;    /* source binder -> output atom (its value) */
  RevPMap fvd;    /* source term -> RevSyms*: its differentiable free vars */
  RevPMap active; /* Sym -> non-NULL: can carry a gradient */
  RevBlock *blk;  /* where bindings go now */
} RevDx;

/* A continuation under construction: fun (d_K..., z) -> [blk] callee(args). */
typedef struct RevBack {
  RevDx *st;
  RevBlock blk, *saved;
  Span span;
  Sym **params; /* one per K slot, then z */
  int np;
  Sym **K;
  int nK;
  Sym *z; /* NULL when the value has no cotangent */
  RevCont callee;
  RevPMap idx;  /* callee slot -> index + 1 */
  Term **args;  /* the callee's arguments so far (NULL: zero) */
} RevBack;

/* ---- helpers (direct.c) ---- */

_Noreturn void rev_dx_unsupported(Span s, const char *what);
/* A fresh node for an atom (variable, number, boolean, global). */
Term *rev_dx_clone_atom(Span s, const Term *a);
/* The slot of an atom value (its variable when it carries a gradient). */
Sym *rev_dx_atom_slot(const Term *a);
/* Component i of a value of ncomp components (itself when ncomp == 1). */
Term *rev_dx_pick(Span s, Term *t, int ncomp, int i);

/* Binds rhs to a fresh variable in the current block; returns the Sym. */
Sym *rev_dx_bind(RevDx *st, const char *name, Term *rhs, Span s);
/* rhs itself when it is an atom, else a variable bound to it. */
Term *rev_dx_atomize(RevDx *st, const char *name, Term *rhs, Span s);
Term *rev_dx_close(const RevBlock *b, Term *final);

/* A copy of the source term t with bound source variables replaced by
   their values (env) and every binder fresh (recorded in env). */
Term *rev_dx_copy(RevDx *st, const Term *t);
/* The differentiable free variables of a normalized source term. */
RevSyms *rev_dx_fvd(RevDx *st, const Term *t);
/* The slot of a source variable: its value's variable (env), itself when
   it is free, NULL when it carries no gradient. */
Sym *rev_dx_slot(RevDx *st, Sym *x);
/* dom filtered to the slots marked in keep, in dom's order. */
int rev_dx_filter(Sym **dom, int n, const RevPMap *keep, Sym ***out);
/* Marks the slots of the source variables in set into keep. */
void rev_dx_mark_slots(RevDx *st, const RevSyms *set, RevPMap *keep);

/* D(e) with base continuation Y and live-out slots K (a subset of Y.dom;
   ignored in dense mode). */
RevRes rev_dx_D(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK);
/* D of es[0..m) left to right (the paper's "differentiate the arguments
   from the left to the right"); keeping K alive; vals[] gets the values;
   returns the continuation after the last. */
RevCont rev_dx_seq(RevDx *st, Term *const *es, int m, RevCont Y, Sym **K, int nK, Term **vals);

void rev_dx_back_begin(RevBack *b, RevDx *st, Span s, Sym **K, int nK, const Type *ztype,
                       RevCont callee);
bool rev_dx_back_wants(const RevBack *b, const Sym *slot);
void rev_dx_back_add(RevBack *b, Sym *slot, Term *cot);
/* The lambda; restores the block. */
Term *rev_dx_back_lam(RevBack *b);
/* let (y, Y') = (value, lam): the result with domain K then y. */
RevRes rev_dx_pair(RevDx *st, Span s, Term *value, Term *lam, Sym **K, int nK);

/* ∇ of body (free variables: output variables) with respect to ctx, all
   of them, against the cotangent seed (NULL: 1) — a run of its own. */
Term *rev_dx_nabla(RevDx *st, Span s, Sym **ctx, int n, Term *body, Term *seed);

/* ---- array rules (direct_array.c) ---- */

RevRes rev_dx_map(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK);
RevRes rev_dx_fold(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK);
RevRes rev_dx_replicate(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK);
RevRes rev_dx_array_lit(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK);
RevRes rev_dx_save(RevDx *st, const Term *e, RevCont Y, Sym **K, int nK);

#endif
