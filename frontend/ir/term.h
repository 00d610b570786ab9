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
#define SCALAR(ID, name, arity, sig, sym, writ, prec, laws, unit, cost, c, cuda, deriv) PRIM_##ID,
#define ARRAY(ID, name, arity, effect, grad, moves_n, moves_1, nlops_n) PRIM_##ID,
#include "prims.def"
#undef SCALAR
#undef ARRAY
  PRIM__COUNT
} Prim;

/* Signature codes of scalar builtins (prims.def): operands -> result. */
typedef enum {
  SIG_R_R,  /* R -> R */
  SIG_RR_R, /* R x R -> R */
  SIG_RR_B, /* R x R -> B */
  SIG_AA_B, /* R x R -> B or B x B -> B: both operands alike */
  SIG_BB_B, /* B x B -> B */
  SIG_B_B,  /* B -> B */
  SIG_ARRAY /* an array builtin, typed one by one (prim_type.h) */
} PrimSig;

/* The coarse classes, one per signature code. */
typedef enum { P_SCALAR1, P_SCALAR2, P_CMP, P_LOGIC, P_NOT, P_ARRAY } PrimClass;

/* How a builtin is written (prims.def's writ column). */
enum {
  W_CALL = 1,    /* f a b: by its name */
  W_INFIX = 2,   /* a SYM b */
  W_PREFIX = 4,  /* SYM a */
  W_SECTION = 8  /* (SYM) or (name) as a combinator's function argument */
};

/* Operator precedence, loosest first; the parser and the printer both read
   it. Infix operators associate to the left, except comparisons (not at
   all) and PREC_POW (to the right, through prefix operators). */
typedef enum {
  PREC_NONE = 0, /* not an operator */
  PREC_OR,
  PREC_AND,
  PREC_CMP,
  PREC_ADD,
  PREC_MUL,
  PREC_UNARY, /* prefix - ! */
  PREC_POW
} FePrec;

/* Algebraic laws. */
enum {
  LAW_ASSOC = 1,     /* associative on reals */
  LAW_COMM = 2,      /* commutative on reals (max, min too) */
  LAW_COMM_BITS = 4  /* op(a, b) and op(b, a) are the same bits in IEEE
                        arithmetic, so operands may be swapped */
};

/* The figure 11 cost class of a scalar builtin (optimizer/cost.h): what it
   counts beside its arity + 1 MOVES. */
typedef enum { COST_MOVES, COST_ADDS, COST_MULTS, COST_NLOPS } PrimCost;

/* What an array builtin does beside computing its value (scalar builtins
   are E_PURE). */
typedef enum {
  E_PURE,
  E_RAISES, /* may raise a run-time error by itself */
  E_IO      /* reads or writes a file (and may raise) */
} PrimEffect;

/* How reverse mode treats a builtin. */
typedef enum {
  G_RULE,  /* differentiated by its rule (scalars: reverse/partials.c) */
  G_CONST, /* carries no derivative: comparisons, length, iota, rand, load */
  G_NONE   /* not supported under grad yet */
} PrimGrad;

typedef struct PrimInfo {
  const char *name;  /* function name: "sin", "map2", "add" */
  const char *sym;   /* operator symbol or NULL: "+", "-", "==" */
  int arity;
  PrimSig sig;
  PrimClass cls;     /* follows from sig */
  unsigned writ;     /* W_ flags */
  FePrec prec;
  unsigned laws;     /* LAW_ flags */
  double unit;       /* the unit element, NAN when none */
  PrimCost cost;
  const char *c;     /* the CPU's C expression as text (scalar.h compiles it) */
  const char *cuda;  /* CUDA C template, $a $b the operands */
  const char *deriv; /* the derivative rule's name (reverse/partials.c), "" if none */
  PrimEffect effect;
  PrimGrad grad;
  int moves_n, moves_1, nlops_n; /* array builtins' own cost (prims.def) */
} PrimInfo;

extern const PrimInfo fe_prims[PRIM__COUNT];
/* The builtin called NAME by users (not the internal names add/sub/...), or -1. */
int fe_prim_lookup(const char *name);
/* The builtin written as the operator SYM in the way writ (W_INFIX or
   W_PREFIX), or -1. */
int fe_prim_by_sym(const char *sym, unsigned writ);
/* The builtin that the section (TEXT) denotes (TEXT an operator symbol, or
   a name when is_name), or -1. */
int fe_prim_section(const char *text, bool is_name);

/* A LOOP's form (its index field). */
enum { LOOP_FOR = 0, LOOP_WHILE = 1 };

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
  bool errors_only; /* a dead let's variable whose right-hand side dce
                       already reduced to its errors (optimizer/raises.c):
                       not reduced again */
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
  bool derived;          /* made by differentiation (grad_f, vjp_f, ...):
                            printed with a derived program that calls it
                            (fe_program_str_readable) */
  unsigned char effects; /* the optimizer's memo of what a call of it may
                            do (optimizer/pe_util.c): 0 not yet known */
  void *derivs;          /* reverse/grad.c: its derivatives, derived once
                            per (wrt, path), kept here so that they go
                            with it (opaque) */
  const void *vjp_of;    /* reverse/grad.c: a vjp Def's entry in its
                            source's derivs (kept by the optimizer's
                            copies), or NULL */
  void *deriv_ops;       /* derive/expand.c: its derived functions by
                            (operator, wrt), built and optimized once */
  void *jvps;            /* forward/jvp.c: its jvp Defs by wrt */
  void *splits;          /* derive/split.c: its forward and reverse
                            parts by wrt */
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

/* The fields are ordered so that the struct has no padding (176 bytes,
   11 of the collector's 16-byte granules): gradients are large terms. */
struct Term {
  TermKind kind;
  Prim prim;
  int index;
  int nsyms;
  int nnames;
  int nwrt;
  int nkids;
  bool b; /* T_BOOL: the value. A PRIM index, map2, map3 or zip: checked
             by construction, so its own check cannot fail (a gradient
             reading again where its primal read; pairing arrays its
             primal paired, or a value with its cotangent): the optimizer
             may drop it when dead. Printed like any other */
  const Type *type; /* NULL on surface terms */
  Span span;
  double num;
  const char *str;
  Span str_span; /* where str is written (GRADREF: the function name) */
  Sym *sym;
  Sym **syms;
  const char **names;
  Span *name_spans;
  Def *def;
  Global *global;
  int *wrt;
  Term **kids;
  /* Surface patterns (p ::= x | (p, ..., p): a NAME, or a TUPLE of
     patterns): LETTUP and LOOP: pats[0]; LAM: pats[i] for parameter i when
     it is a tuple pattern (names[i] is then NULL), else NULL. The checker
     turns patterns into LETTUPs; checked terms have none. */
  Term **pats;
  /* The execution plan's decisions about this node (backend/plan/plan.h):
     set only on the copy of a Def's body that its plan owns, NULL
     everywhere else. */
  const struct PlanNote *note;
  /* GRADREF: the function when it is not a name (str NULL): a surface
     LAM, or another GRADREF without arguments, (grad f) in jvp (grad f) */
  struct Term *fn;
};

/* The derivative operators, T_GRADREF's and T_GRAD's index. */
typedef enum { DOP_GRAD, DOP_VJP, DOP_JVP, DOP_VALUE_AND_GRAD } DerivOp;
extern const char *const fe_deriv_op_names[4];

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
/* A copy of t with its t->nkids kids replaced by kids (copied). */
Term *fe_term_copy_with_kids(const Term *t, Term **kids);
/* The node count of t, counted up to limit + 1 at most (stops there). */
int fe_term_size_upto(const Term *t, int limit);

#endif
