/* prim_type.h: the typing rules of the builtins, written once for the
   checker (frontend/check.c: user errors), the re-checker (retype.c:
   internal errors) and the typed constructors (build.c: assertions).
   Scalar builtins are typed by their signature code (prims.def); array
   builtins one by one here. */
#ifndef UNA_PRIM_TYPE_H
#define UNA_PRIM_TYPE_H

#include "term.h"

/* Why operands do not fit a scalar builtin. */
typedef struct PrimMismatch {
  int arg;          /* the operand (0-based) */
  const char *want; /* what it must be: "R", "B" or "R or B" */
  bool differ;      /* both operands fit on their own but are not alike */
} PrimMismatch;

/* The result type of scalar builtin p applied to operands of the types
   args (p's arity of them), or NULL when they do not fit; *m then says why
   (the first operand that does not fit, or differ). */
const Type *fe_prim_scalar_type(Prim p, const Type *const *args, PrimMismatch *m);

/* What argument i of an array builtin is. */
typedef enum {
  ARG_FUN,        /* the function argument (a lambda): typed last */
  ARG_ANY,        /* any value: a fold's initial value, replicate's value */
  ARG_ARRAY,      /* an array of any element type */
  ARG_R,          /* R */
  ARG_FILE,       /* a file name (a string literal; no type) */
  ARG_ARRAY_OF_1, /* [T], T the type of argument 1: reduce's array */
  ARG_R_ARRAY,    /* [R], [[R]], ...: the array of reals that save writes */
  ARG_INDICES,    /* [R]: reduce_by_index's indices */
  ARG_NESTED,     /* [[T]]: an array of arrays (transpose) */
  ARG_PAIRS,      /* [(S, T)]: an array of pairs (unzip) */
  ARG_LIKE_0,     /* the type of argument 0 (concat's second array) */
  ARG_LIKE_1,     /* the type of argument 1 (reduce_by_index's values) */
  ARG_ELEM_OF_1,  /* T, argument 1 a [T] (reduce_by_index's unit) */
  ARG_COND        /* a second function argument (a LAM (x. c) whose x has
                     the type of argument 1 and whose c is a B): a while
                     loop's condition */
} PrimArgKind;

PrimArgKind fe_prim_arg_kind(Prim p, int i);

/* NULL when argument i of array builtin p fits, given the types of the
   arguments (args[j] for j <= i that are not ARG_FUN); else what it must be,
   as text ("an array", "R", "[R]", ...). */
const char *fe_prim_arg_want(Prim p, int i, const Type *const *args);

/* The function argument of array builtin p, given the types of the other
   arguments: its parameter count (0: p takes none), their types in pt[0..],
   and in *ret the type its body must have (NULL: any). */
int fe_prim_fun_sig(Prim p, const Type *const *args, const Type **pt, const Type **ret);

/* The result type of array builtin p, given the types of its arguments
   (args[0] of a combinator: the type of its function's body). */
const Type *fe_prim_array_result(Prim p, const Type *const *args);

/* p's type as text, for :type: "R -> R" for sin, "(S -> T) -> [S] -> [T]"
   for map (S and T any types); NULL for a builtin without one. */
const char *fe_prim_signature(Prim p);

#endif
