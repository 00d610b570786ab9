/* prim_type.c: the typing rules of the builtins (see prim_type.h). */
#include "prim_type.h"

static const Type *R(void) { return fe_ty_real(); }
static const Type *Bt(void) { return fe_ty_bool(); }
static bool is(const Type *t, TypeKind k) { return t && t->kind == k; }

/* The operand and result types of each signature code: 'R', 'B', or 'A'
   (R or B, all operands alike). */
static char operand_of(PrimSig s) {
  switch (s) {
  case SIG_R_R:
  case SIG_RR_R:
  case SIG_RR_B: return 'R';
  case SIG_AA_B: return 'A';
  case SIG_BB_B:
  case SIG_B_B: return 'B';
  case SIG_ARRAY: break;
  }
  UNREACHABLE();
}

const Type *fe_prim_scalar_type(Prim p, const Type *const *args, PrimMismatch *m) {
  const PrimInfo *pi = &fe_prims[p];
  ASSERT(pi->sig != SIG_ARRAY);
  char o = operand_of(pi->sig);
  for (int i = 0; i < pi->arity; i++) {
    const Type *t = args[i];
    bool ok = o == 'R' ? is(t, TY_REAL) : o == 'B' ? is(t, TY_BOOL) : is(t, TY_REAL) || is(t, TY_BOOL);
    if (!ok) {
      m->arg = i;
      m->want = o == 'R' ? "R" : o == 'B' ? "B" : "R or B";
      m->differ = false;
      return NULL;
    }
  }
  if (o == 'A' && !fe_type_eq(args[0], args[1])) {
    m->arg = 1;
    m->want = fe_type_str(args[0]);
    m->differ = true;
    return NULL;
  }
  return pi->sig == SIG_R_R || pi->sig == SIG_RR_R ? R() : Bt();
}

PrimArgKind fe_prim_arg_kind(Prim p, int i) {
  ASSERT(fe_prims[p].sig == SIG_ARRAY && i >= 0 && i < fe_prims[p].arity);
  switch (p) {
  case PRIM_MAP:
  case PRIM_MAP2: return i == 0 ? ARG_FUN : ARG_ARRAY;
  case PRIM_REDUCE: return i == 0 ? ARG_FUN : i == 1 ? ARG_ANY : ARG_ARRAY_OF_1;
  case PRIM_FOLDL:
  case PRIM_SCANL:
  case PRIM_SCANR: return i == 0 ? ARG_FUN : i == 1 ? ARG_ANY : ARG_ARRAY;
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R:
  case PRIM_LENGTH: return ARG_ARRAY;
  case PRIM_IOTA:
  case PRIM_RAND: return ARG_R;
  case PRIM_REPLICATE: return i == 0 ? ARG_R : ARG_ANY;
  case PRIM_LOAD: return ARG_FILE;
  case PRIM_SAVE: return i == 0 ? ARG_FILE : ARG_R_ARRAY;
  case PRIM_INDEX:
  case PRIM_SLICE: return i == 0 ? ARG_ARRAY : ARG_R;
  case PRIM_MAP3: return i == 0 ? ARG_FUN : ARG_ARRAY;
  case PRIM_TRANSPOSE: return ARG_NESTED;
  case PRIM_CONCAT: return i == 0 ? ARG_ARRAY : ARG_LIKE_0;
  case PRIM_ZIP: return ARG_ARRAY;
  case PRIM_UNZIP: return ARG_PAIRS;
  case PRIM_REDUCE_BY_INDEX: /* kids f D v I V */
    return i == 0 ? ARG_FUN : i == 1 ? ARG_ARRAY : i == 2 ? ARG_ELEM_OF_1 : i == 3 ? ARG_INDICES : ARG_LIKE_1;
  case PRIM_STOPGRAD_ANY: return ARG_ANY;
  case PRIM_LOOP_FOR: return i == 0 ? ARG_FUN : i == 1 ? ARG_ANY : ARG_R;
  case PRIM_LOOP_WHILE: return i == 0 ? ARG_FUN : i == 1 ? ARG_ANY : ARG_COND;
  default: UNREACHABLE();
  }
}

const char *fe_prim_arg_want(Prim p, int i, const Type *const *args) {
  const Type *t = args[i];
  switch (fe_prim_arg_kind(p, i)) {
  case ARG_FUN:
  case ARG_COND:
  case ARG_FILE: return NULL;
  case ARG_ANY: return t ? NULL : "a value";
  case ARG_ARRAY: return is(t, TY_ARRAY) ? NULL : "an array";
  case ARG_R: return is(t, TY_REAL) ? NULL : "R";
  case ARG_ARRAY_OF_1: {
    const Type *want = fe_ty_array(args[1]);
    return t && fe_type_eq(t, want) ? NULL : fe_type_str(want);
  }
  case ARG_R_ARRAY: return t && fe_type_real_rank(t) >= 1 ? NULL : "an array of reals ([R], [[R]], ...)";
  case ARG_INDICES: return t && fe_type_is_real_array(t) ? NULL : "[R]";
  case ARG_NESTED: return is(t, TY_ARRAY) && is(t->elem, TY_ARRAY) ? NULL : "an array of arrays";
  case ARG_PAIRS:
    return is(t, TY_ARRAY) && is(t->elem, TY_TUPLE) && t->elem->n == 2 ? NULL : "an array of pairs";
  case ARG_LIKE_0:
  case ARG_LIKE_1: {
    const Type *want = args[fe_prim_arg_kind(p, i) == ARG_LIKE_0 ? 0 : 1];
    return t && fe_type_eq(t, want) ? NULL : fe_type_str(want);
  }
  case ARG_ELEM_OF_1: return t && fe_type_eq(t, args[1]->elem) ? NULL : fe_type_str(args[1]->elem);
  }
  UNREACHABLE();
}

int fe_prim_fun_sig(Prim p, const Type *const *args, const Type **pt, const Type **ret) {
  *ret = NULL;
  switch (p) {
  case PRIM_MAP: pt[0] = args[1]->elem; return 1;
  case PRIM_MAP2:
    pt[0] = args[1]->elem;
    pt[1] = args[2]->elem;
    return 2;
  case PRIM_REDUCE:
    pt[0] = pt[1] = *ret = args[1];
    return 2;
  case PRIM_FOLDL:
  case PRIM_SCANL: /* (accumulator, element) */
    pt[0] = *ret = args[1];
    pt[1] = args[2]->elem;
    return 2;
  case PRIM_SCANR: /* (element, accumulator) */
    pt[0] = args[2]->elem;
    pt[1] = *ret = args[1];
    return 2;
  case PRIM_MAP3:
    for (int i = 0; i < 3; i++) pt[i] = args[i + 1]->elem;
    return 3;
  case PRIM_REDUCE_BY_INDEX:
    pt[0] = pt[1] = *ret = args[1]->elem;
    return 2;
  case PRIM_LOOP_FOR: /* (state, index) */
    pt[0] = *ret = args[1];
    pt[1] = R();
    return 2;
  case PRIM_LOOP_WHILE:
    pt[0] = *ret = args[1];
    return 1;
  default: return 0;
  }
}

const Type *fe_prim_array_result(Prim p, const Type *const *args) {
  switch (p) {
  case PRIM_MAP:
  case PRIM_MAP2: return fe_ty_array(args[0]);
  case PRIM_REDUCE:
  case PRIM_FOLDL: return args[1];
  case PRIM_SCANL:
  case PRIM_SCANR: return fe_ty_array(args[1]);
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R: return args[0];
  case PRIM_LENGTH: return R();
  case PRIM_IOTA:
  case PRIM_RAND:
  case PRIM_LOAD: return fe_ty_array(R());
  case PRIM_REPLICATE: return fe_ty_array(args[1]);
  case PRIM_SAVE: return args[1];
  case PRIM_INDEX: return args[0]->elem;
  case PRIM_SLICE:
  case PRIM_TRANSPOSE:
  case PRIM_CONCAT: return args[0];
  case PRIM_MAP3: return fe_ty_array(args[0]);
  case PRIM_ZIP: return fe_ty_array(fe_ty_pair(args[0]->elem, args[1]->elem));
  case PRIM_UNZIP:
    return fe_ty_pair(fe_ty_array(args[0]->elem->elems[0]), fe_ty_array(args[0]->elem->elems[1]));
  case PRIM_REDUCE_BY_INDEX: return args[1];
  case PRIM_STOPGRAD_ANY: return args[0];
  case PRIM_LOOP_FOR:
  case PRIM_LOOP_WHILE: return args[1];
  default: UNREACHABLE();
  }
}

const char *fe_prim_signature(Prim p) {
  if (p == PRIM_STOPGRAD) return "T -> T";
  switch (fe_prims[p].sig) {
  case SIG_R_R: return "R -> R";
  case SIG_RR_R: return "R -> R -> R";
  case SIG_RR_B: return "R -> R -> B";
  case SIG_AA_B: return "R -> R -> B, or B -> B -> B";
  case SIG_BB_B: return "B -> B -> B";
  case SIG_B_B: return "B -> B";
  default: break;
  }
  switch (p) {
  case PRIM_MAP: return "(S -> T) -> [S] -> [T]";
  case PRIM_MAP2: return "(S -> S' -> T) -> [S] -> [S'] -> [T]";
  case PRIM_REDUCE: return "(T -> T -> T) -> T -> [T] -> T";
  case PRIM_FOLDL: return "(T -> S -> T) -> T -> [S] -> T";
  case PRIM_SCANL: return "(T -> S -> T) -> T -> [S] -> [T]";
  case PRIM_SCANR: return "(S -> T -> T) -> T -> [S] -> [T]";
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R: return "[T] -> [T]";
  case PRIM_LENGTH: return "[T] -> R";
  case PRIM_IOTA: return "R -> [R]";
  case PRIM_REPLICATE: return "R -> T -> [T]";
  case PRIM_RAND: return "R -> R -> [R]";
  case PRIM_LOAD: return "\"FILE.npy\" -> [R] (or [[R]], ... as ascribed)";
  case PRIM_SAVE: return "\"FILE.npy\" -> A -> A (A: [R], [[R]], ...)";
  case PRIM_MAP3: return "(S -> S' -> S'' -> T) -> [S] -> [S'] -> [S''] -> [T]";
  case PRIM_TRANSPOSE: return "[[T]] -> [[T]]";
  case PRIM_CONCAT: return "[T] -> [T] -> [T]";
  case PRIM_ZIP: return "[S] -> [T] -> [(S, T)]";
  case PRIM_UNZIP: return "[(S, T)] -> ([S], [T])";
  case PRIM_REDUCE_BY_INDEX: return "[T] -> (T -> T -> T) -> T -> [R] -> [T] -> [T]";
  default: return NULL;
  }
}
