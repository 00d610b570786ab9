/* build.h: typed constructors for checked and target Terms, used by every
   pass that builds programs (AD, inliner, optimizer). Each constructor
   computes the node's type from its children and ASSERTs that they fit, so
   a pass cannot build an ill-typed tree without tripping an assertion.
   Spans are taken from the argument `s` (the user's text that the new code
   stands for). New binders get fresh Syms with slot -1; run
   fe_assign_slots on the finished Def before evaluating it. */
#ifndef UNA_BUILD_H
#define UNA_BUILD_H

#include "term.h"

Term *fe_mk_num(Span s, double v);
Term *fe_mk_bool(Span s, bool v);
Term *fe_mk_var(Span s, Sym *x);
/* A fresh variable of the given type (slot -1). */
Sym *fe_mk_sym(const char *name, const Type *type, Span s);

/* Scalar and comparison prims: fe_mk_op1(s, PRIM_SIN, a), fe_mk_op2(s,
   PRIM_MUL, a, b). Typed by the builtin's signature (prim_type.h). */
Term *fe_mk_op1(Span s, Prim p, Term *a);
Term *fe_mk_op2(Span s, Prim p, Term *a, Term *b);
Term *fe_mk_add(Span s, Term *a, Term *b);
Term *fe_mk_mul(Span s, Term *a, Term *b);

Term *fe_mk_if(Span s, Term *c, Term *a, Term *b);
Term *fe_mk_let(Span s, Sym *x, Term *rhs, Term *body);
Term *fe_mk_lettup(Span s, int n, Sym **xs, Term *rhs, Term *body);
/* n >= 2 */
Term *fe_mk_tuple(Span s, int n, Term **items);
/* 0-based index */
Term *fe_mk_proj(Span s, Term *e, int index);

/* A lambda over params xs (their types must be set); type TY_FUN. */
Term *fe_mk_lam(Span s, int n, Sym **xs, Term *body);
/* Application of a function-valued term (type TY_FUN) to n arguments. */
Term *fe_mk_app(Span s, Term *f, int n, Term **args);

/* Array builtins: the lambda (a LAM term) first, as in the source. */
Term *fe_mk_map(Span s, Term *lam, Term *a);
Term *fe_mk_map2(Span s, Term *lam, Term *a, Term *b);
Term *fe_mk_reduce(Span s, Term *lam, Term *v, Term *a);
Term *fe_mk_foldl(Span s, Term *lam, Term *v, Term *a);
Term *fe_mk_scanl(Span s, Term *lam, Term *v, Term *a);
Term *fe_mk_scanr(Span s, Term *lam, Term *v, Term *a);
Term *fe_mk_shift(Span s, Prim p /* PRIM_SHIFT1L or PRIM_SHIFT1R */, Term *a);
Term *fe_mk_length(Span s, Term *a);
/* Any builtin of prims.def's array class over args[0..n), typed by its
   prim_type rule (index, slice, concat, zip, unzip, transpose, iota,
   map3, reduce_by_index, loops...). */
Term *fe_mk_array_prim(Span s, Prim p, int n, Term **args);
Term *fe_mk_replicate(Span s, Term *n, Term *v);
/* The builtin-monoid lambda (x, y. x OP y) for OP in + * max min, over R. */
Term *fe_mk_oplam(Span s, Prim op);
/* Whether lam is (x, y. x OP y) or (x, y. y OP x): a section of the
   binary builtin op, its operands in either order. */
bool fe_is_oplam_either(const Term *lam, Prim op);
/* min or max when lam is (u, v. map2 op u v) (*acc_first) or (u, v. map2
   op v u), op written as (min) or (max) (the fold of an elementwise
   extremum of rows); PRIM__COUNT otherwise. */
Prim fe_rows_extremum(const Term *lam, bool *acc_first);
/* Whether lam is (g, h. g +^ h): addition over R, componentwise over
   tuples and elementwise over arrays of them, as fe_mk_gadd writes it
   (the operator the reverse pass gives a reduce_by_index of cotangents). */
bool fe_is_gadd_lam(const Term *lam);

/* Ground types G ::= R | (G, ..., G) | [R] (and arrays of ground types).
   0_G shaped like the value of `like` (arrays take its length), and the
   monoid sum a +^ b (element-wise on arrays, component-wise on tuples). */
bool fe_type_is_ground(const Type *t);
Term *fe_mk_zero_like(Span s, Term *like);
Term *fe_mk_gadd(Span s, Term *a, Term *b);
/* Tangent types (fe_ty_tangent): e, of a type T with reals, as a value
   of tau(T) (its booleans dropped); and e, of tau(T), as a value of T
   (false at its booleans), which needs every array of T to have reals in
   its elements (fe_type_tau_injective: an array of booleans beside reals
   would need a length). A cotangent or tangent of T inside a derivative
   has type T, its booleans false; the user sees tau(T). */
Term *fe_mk_tau_project(Span s, Term *e);
bool fe_type_tau_injective(const Type *t);
Term *fe_mk_tau_inject(Span s, Term *e, const Type *t);
/* z *^ e: scales every real in e by the real z. */
Term *fe_mk_gscale(Span s, Term *z, Term *e);

/* The loop that counts the trips of `loop x = init while c do e` (body
   (x. e), cond (x. c)): loop (x, k) = (init, 0) while c do (e, k + 1),
   whose .1 is the count and .0 the loop's value (fresh binders; init is
   used as it is). */
Term *fe_mk_counting_loop(Span s, const Term *body, Term *init, const Term *cond);

/* t with every builtin in it that may raise (prims.def's E_RAISES: an
   index, a map2's lengths, a transpose, a loop's count) marked checked
   (t->b, term.h), rand excepted: for a recomputation of a value already
   computed without error (a replay), which cannot raise. t itself,
   changed in place: mark a copy of anything shared. */
Term *fe_mark_checked(Term *t);

/* Number of Sym-binding sites in t is counted and slots 0.. are handed
   out afresh to d's parameters and to every binder in d's body (let,
   let-tuple, lambda parameters), so that the Def can be evaluated. */
void fe_assign_slots(Def *d);

/* want, or want2, want3, ...: the first that none of params[0..n) is
   named (a derived function's new parameter, printed and read back,
   must not repeat one: vjp of a vjp has two cotangents). */
const char *fe_fresh_param_name(const char *want, Sym *const *params, int n);

/* A Def named name with params and body, slots assigned. */
Def *fe_mk_def(const char *name, Span s, int nparams, Sym **params, Term *body);

#endif
