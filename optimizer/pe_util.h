/* pe_util.h: helpers shared by the partial-evaluation passes (beta,
   forward, letnorm, tuples, dce): symbol maps, use counts, the may-raise
   test, rebuilding a node with new kids, and let chains walked with loops
   (gradients are chains of many thousand lets). */
#ifndef UNA_PE_UTIL_H
#define UNA_PE_UTIL_H

#include "../frontend/ir/term.h"

/* A hash map from symbols (by pointer) to counts and terms: ncounts
   counts (32 bits) and nterms terms per symbol, in one slot with its key (one cache line
   read per lookup, however many facts a pass keeps per symbol). The plain
   functions use count 0 and term 0. */
typedef struct OptSymMap {
  uintptr_t *w; /* cap slots of stride words: key, terms, counts */
  long cap, n;
  int nterms, stride;
} OptSymMap;

/* Declares name, a buffer for the n rebuilt kids of a node: on the
   caller's stack when small (fe_term_set_kids, opt_with_kids and the fe_mk_
   builders copy the kids they keep), so that a walk that changes nothing
   allocates nothing. */
#define OPT_KIDS(name, n)                                                                          \
  Term *name##_small[8];                                                                           \
  Term **name = (n) <= 8 ? name##_small : NEW_ARRAY(Term *, (n))

/* True for a variable or a literal: what forward substitution moves and
   the rules copy freely. */
static inline bool opt_is_atom(const Term *t) { return t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL; }

/* An empty map with one count and one term per symbol. */
OptSymMap *opt_map_new(void);
/* An empty map with ncounts counts and nterms terms per symbol. */
OptSymMap *opt_map_new_fields(int ncounts, int nterms);
/* Count k, term k of x (0, NULL when absent); adding to count k, setting
   term k (NULL on an absent x adds nothing). */
long opt_map_count_at(const OptSymMap *m, const Sym *x, int k);
void opt_map_add_at(OptSymMap *m, Sym *x, int k, long delta);
Term *opt_map_term_at(const OptSymMap *m, const Sym *x, int k);
void opt_map_set_at(OptSymMap *m, Sym *x, int k, Term *t);
/* The count of x (0 when absent). */
long opt_map_count(const OptSymMap *m, const Sym *x);
/* Adds delta to the count of x. */
void opt_map_add(OptSymMap *m, Sym *x, long delta);
/* The term of x (NULL when absent). */
Term *opt_map_term(const OptSymMap *m, const Sym *x);
/* Sets the term of x (NULL removes it). */
void opt_map_set(OptSymMap *m, Sym *x, Term *t);

/* Adds sign to the count of every variable occurrence (T_VAR) in t, in m;
   iterative, so any depth is fine. */
void opt_count_uses(const Term *t, OptSymMap *m, long sign);

/* True when evaluating t may raise a run-time error or has an effect:
   map2 (lengths may differ), iota, replicate, rand (sizes), load, save,
   calls of functions whose bodies may, gradients and applications of
   closures, anywhere in t including
   combinator bodies. A lambda value itself (a closure not applied) is
   pure. Iterative. */
bool opt_may_raise(const Term *t);
/* Whether a call of d may raise (its body may), and whether it reads or
   writes a file: memoized in d->effects (a Def's body never changes). */
bool opt_def_may_raise(Def *d);
bool opt_def_io(Def *d);
/* n (a map2 rebuilt from the map2 `from` over arrays of the same lengths)
   with from's checked-by-construction flag (term.h). */
Term *opt_checked_as(Term *n, const Term *from);

/* True when a and b are the same term up to the names of their bound
   variables (calls, gradients and applications are never equal; in
   cse.c). */
bool opt_alpha_eq(const Term *a, const Term *b);

/* A shallow copy of t with kids replaced (same kind, type and fields);
   t itself when every new kid is the old one. */
Term *opt_with_kids(const Term *t, Term **kids);

/* One binding of a let chain: `let x = rhs` (tup false) or
   `let (xs...) = rhs` (tup true), with the span of its let. */
typedef struct OptBind {
  bool tup;
  Sym *x;
  Sym **xs;
  int n;
  Span span;
  Term *rhs;
} OptBind;

/* A growing list of bindings. */
typedef struct OptBinds {
  OptBind *v;
  long n, cap;
} OptBinds;

/* Appends `let x = rhs`. */
void opt_binds_let(OptBinds *b, Span s, Sym *x, Term *rhs);
/* Appends the binding of the T_LET or T_LETTUP node t with rhs. */
void opt_binds_node(OptBinds *b, const Term *t, Term *rhs);

/* The lets b->v[from..n) around tail, innermost last, built with
   fe_mk_let/fe_mk_lettup (a loop, no recursion). */
Term *opt_build_chain(const OptBinds *b, long from, Term *tail);

/* The let chain t (lets and let-tuples) with the value at its end
   replaced by e; the binders are shared (copy the result where it must
   have fresh ones). */
Term *opt_with_tail(const Term *t, Term *e);

/* When r is map (p. dot p v) A (dot p v being reduce (+) 0 (map2 (*) p
   v), the operands either way, an inlined dot's lets seen through, v not
   reading p): a matrix-vector product, which the plan gives to BLAS, and
   fused into its consumer would be one dot product per element instead.
   Returns v, else NULL. */
const Term *opt_row_product(const Term *r);

/* t with its subterm at (a pointer into t, not inside a lambda) replaced
   by r; the rest shared. */
Term *opt_replace_at(const Term *t, const Term *at, Term *r);

/* Moves the leading lets of t into b and returns the first non-let
   subterm (a loop). */
Term *opt_peel_lets(Term *t, OptBinds *b);

/* Visits the kids of t with visit(ctx, kid) and rebuilds t when any kid
   changed (t itself otherwise). */
Term *opt_map_kids(const Term *t, Term *(*visit)(void *ctx, const Term *k), void *ctx);



/* A copy of t in which every binder is a fresh Sym (and each from[i] is
   replaced by the variable to[i]), so that assigning the copy's slots
   leaves t's Syms alone. Let chains are copied with a loop. */
Term *opt_freshen(const Term *t, int n, Sym **from, Sym **to);

#endif
