/* type.h: Una's types  T ::= R | B | (T, ..., T) | [T]. Types are immutable
   and may be shared; compare them with fe_type_eq, never by pointer. */
#ifndef UNA_TYPE_H
#define UNA_TYPE_H

#include "common.h"

typedef enum {
  TY_REAL,  /* R: 64-bit IEEE double */
  TY_BOOL,  /* B */
  TY_TUPLE, /* (T1, ..., Tn), n >= 2: n, elems */
  TY_ARRAY, /* [T]: elem */
  TY_FUN,   /* params -> result, for printing function signatures:
               n, elems (the parameters), elem (the result) */
} TypeKind;

typedef struct Type Type;
struct Type {
  TypeKind kind;
  int n;             /* TUPLE, FUN: number of elems */
  const Type **elems;/* TUPLE: components; FUN: parameter types */
  const Type *elem;  /* ARRAY: element type; FUN: result type */
};

const Type *fe_ty_real(void);
const Type *fe_ty_bool(void);
const Type *fe_ty_tuple(int n, const Type **elems); /* copies elems */
const Type *fe_ty_pair(const Type *a, const Type *b);
const Type *fe_ty_array(const Type *elem);
const Type *fe_ty_fun(int n, const Type **params, const Type *result);

bool fe_type_eq(const Type *a, const Type *b);
bool fe_type_is_real_array(const Type *t); /* [R] */
bool fe_type_is_real_matrix(const Type *t); /* [[R]] */
/* Whether a value of type t has reals in it (R, [R], (B, R), [[R]]...):
   the types with a tangent (LANGUAGE.md section 6). */
bool fe_type_has_reals(const Type *t);
/* The tangent type tau(t) (LANGUAGE.md section 6): tau(R) = R, tau(B)
   empty, a tuple's the tuple of its components' non-empty ones (one: that
   one), tau([T]) = [tau(T)]; NULL for empty. t itself when it has no
   boolean beside reals. */
const Type *fe_ty_tangent(const Type *t);
/* k when t is an array of reals nested k >= 1 deep ([R]: 1, [[R]]: 2, ...),
   else 0: the types that load and save read and write. */
int fe_type_real_rank(const Type *t);

/* "R", "[R]", "(R, [R])", "[R] -> [R] -> R" */
char *fe_type_str(const Type *t);

#endif
