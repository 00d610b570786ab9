/* rw.h: the bottom-up rewriting walker shared by the figure 12 passes
   (algebra, arrays, fusion, cse) and the facts their rules consult: what
   a let-bound variable stands for, how often it is used, which arrays are
   known to have equal lengths, which terms cannot raise, constant arrays
   (OnesLike / ZerosLike) and finite elements. */
#ifndef UNA_RW_H
#define UNA_RW_H

#include "../frontend/ir/term.h"

typedef struct OptRw OptRw;

/* A rule: given a node whose kids are already rewritten, returns the node
   rewritten (a term of the same type) or t itself. */
typedef Term *(*OptRule)(OptRw *c, Term *t);

/* t with rule applied bottom-up to every node (let chains by a loop,
   lambda bodies and combinator functions included); t itself when no rule
   fired. At each node the rule is re-applied while it fires (a bound).
   A let whose variable the input never uses and whose rhs is safe (below)
   is dropped, and so is a let whose rewritten rhs is a scalar variable or a
   constant, its variable replaced by that atom in the rest of the walk. */
Term *opt_rw_run(const Term *t, OptRule rule);

/* True when the boolean t is known where the walk is (*value its
   value): t, or its negation, is the condition of an if whose branch
   contains t, or t compares an index x of a map over iota n with the
   bounds it has (0 <= x, x >= 0, x < n, floor x == x, x - x == 0; x < 0
   and 0 > x are false), or t is `length a == 0` in the function of a map over the
   array variable a (false: the function runs on an element). Only the innermost few conditions are consulted. */
bool opt_rw_known(OptRw *c, const Term *t, bool *value);

/* The right-hand side of the single-variable let that binds x in the
   term being rewritten (rewritten already when x is in scope), or NULL. */
Term *opt_rw_rhs(OptRw *c, const Sym *x);

/* t with let-bound variables followed to their right-hand sides (for
   recognising patterns; never for building). */
Term *opt_rw_resolve(OptRw *c, Term *t);

/* The number of occurrences of x in the input term. */
long opt_rw_uses(OptRw *c, const Sym *x);

/* The number of occurrences of x in the input term as an array of a map,
   map2 or map3 (elementwise reads). */
long opt_rw_elem_uses(OptRw *c, const Sym *x);

/* True when x is bound in the input term and occurs nowhere in it: no
   rewrite of the term can mention it (a Sym made by a rule is not bound
   in the input: false). */
bool opt_rw_unused(OptRw *c, const Sym *x);

/* True when x's only occurrence is in the same lambda body as its binder
   (not under a lambda that its let does not contain). */
bool opt_rw_same_depth(OptRw *c, const Sym *x);

/* True when the arrays a and b are known to have the same length wherever
   both evaluate without error: by construction (map, shifts of scans,
   replicate (length A)) or because a dominating `let x = map2 f A B` has
   checked it. */
bool opt_rw_same_length(OptRw *c, Term *a, Term *b);

/* True when evaluating t can neither raise an error nor have an effect
   (map2 of arrays of known equal lengths and replicate/iota of a length
   count as safe). */
bool opt_rw_safe(OptRw *c, const Term *t);

/* When the array a (followed through lets) is constant, `map (x. c) B`
   with c a number or a variable other than x, or `replicate n c`, returns
   c (the element); else NULL. */
Term *opt_rw_const_elem(OptRw *c, Term *a);

/* True when t is the literal v (bitwise, so 0 and -0 differ). */
bool opt_is_num(const Term *t, double v);

/* True when t mentions the variable x. */
bool opt_mentions(const Term *t, const Sym *x);
/* Whether t mentions one of the variables xs[0..n). */
bool opt_mentions_any(const Term *t, Sym *const *xs, int n);

/* True when the lambda lam is (x, y. x OP y) for the scalar operator p. */
bool opt_is_oplam(const Term *lam, Prim p);

#endif
