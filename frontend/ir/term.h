/* term.h: Term, the one tree type for source and target programs, with its
   symbols (Sym), functions (Def) and top-level values (Global).

   A Term is immutable once built; passes return new trees. Every node has a
   span; checked nodes have a type. Node kinds and the fields each one uses
   are listed in term_kinds.def. */
#ifndef UNA_TERM_H
#define UNA_TERM_H

#include "error.h"
#include "type.h"

typedef enum {
#define PRIM(id, name, infix, arity, cls) PRIM_##id,
#include "prims.def"
#undef PRIM
  PRIM__COUNT
} Prim;

typedef enum { P_SCALAR1, P_SCALAR2, P_CMP, P_LOGIC, P_NOT, P_ARRAY } PrimClass;

typedef struct PrimInfo {
  const char *name;  /* function name: "sin", "map2", "add" */
  const char *infix; /* operator symbol or NULL: "+", "-", "==" */
  int arity;
  PrimClass cls;
} PrimInfo;

extern const PrimInfo fe_prims[PRIM__COUNT];
/* The builtin called NAME by users (not the internal names add/sub/...), or -1. */
int fe_prim_lookup(const char *name);

typedef enum {
#define TERM(id, name, surface) T_##id,
#include "term_kinds.def"
#undef TERM
  T__COUNT
} TermKind;

extern const char *const fe_term_kind_names[T__COUNT];

/* A variable: unique by pointer and by id. slot is its index in the frame of
   the enclosing Def (the interpreter keeps locals in a flat frame). */
typedef struct Sym {
  const char *name;
  int id;
  int slot;
  const Type *type;
  Span span;
  bool user; /* named in the source (copies and UNF⁻¹ keep it): the
                optimizer keeps the user's lets (optimizer/forward.c) */
} Sym;

typedef struct Term Term;

/* A top-level function. */
typedef struct Def {
  const char *name;
  Span span;
  int nparams;
  Sym **params;
  const Type *ret;
  Term *body;
  int nslots; /* frame size: every Sym bound in body has slot < nslots */
  struct Def *optimized; /* cache: this Def after the optimizer, or NULL */
  struct Plan *plan;     /* its execution plan (backend/plan/plan.h), built
                            once by the backend when first run, or NULL */
  bool planned;          /* this Def is a copy that its plan owns (its body
                            carries the plan's notes) */
} Def;

struct Value; /* backend/value.h */

/* A top-level let: a value computed once. */
typedef struct Global {
  const char *name;
  int id;
  const Type *type;
  Span span;
  struct Value *value; /* set by the driver once evaluated */
} Global;

struct Term {
  TermKind kind;
  const Type *type; /* NULL on surface terms */
  Span span;
  double num;
  bool b;
  const char *str;
  Span str_span; /* where str is written (GRADREF: the function name) */
  Prim prim;
  int index;
  Sym *sym;
  Sym **syms;
  int nsyms;
  const char **names;
  Span *name_spans;
  int nnames;
  Def *def;
  Global *global;
  int *wrt;
  int nwrt;
  Term **kids;
  int nkids;
  /* The execution plan's decisions about this node (backend/plan/plan.h):
     set only on the copy of a Def's body that its plan owns, NULL
     everywhere else. */
  const struct PlanNote *note;
};

/* Fresh symbols: ids are unique in the process. */
Sym *fe_sym_new(const char *name, const Type *type, Span span);

/* Node constructors. Kids arrays are copied. The type may be NULL
   (surface). */
Term *fe_term_new(TermKind kind, Span span, const Type *type);
Term *fe_term_num(Span s, double v);
Term *fe_term_bool(Span s, bool v);
Term *fe_term_var(Span s, Sym *x);
Term *fe_term_prim(Span s, const Type *type, Prim p, int n, Term **args);
Term *fe_term_kids(Span s, TermKind kind, const Type *type, int n, Term **kids);
void fe_term_set_kids(Term *t, int n, Term **kids);

#endif
