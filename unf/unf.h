/* unf.h: Unary Normal Form, the paper's variable-free intermediate
   representation (section 4): Source UNF (figure 6) and Target UNF
   (figure 7) as one node type, contexts as persistent lists, UNF
   (figure 9), UNF^-1 (figure 10) of Source UNF and the printer. UNF^-1's
   interpretation of Target UNF (environments, continuations, bindings) is
   here too (unf/to_term_int.h), but the transpose Jacobians it applies are
   reverse/'s rules (reverse/unf_jt.c), and so is the gradient built from
   it (reverse/unf_grad.h).

   A UNF term is typed by two contexts, in |- e : out. A context is a list
   of entries, most of them Una types; each entry remembers the source
   variable (Sym) it stands for, or none for an intermediate value. Lists
   are persistent with shared tails (a context grows by one node on top of
   the one below it), so a program with 10,000 lets costs linear memory;
   each node also has a skew-binary jump pointer, so that entry i of a
   context of length n is found in O(log n).

   Target UNF contexts have two more kinds of entries (figure 7): the
   continuation of a context C (type cot(C) -> rho, printed "(C)->rho")
   and a linear map between cotangents (cot(C1) -o cot(C2)), the meaning
   of J^T P. Both refer to their contexts by pointer, never by a copied
   type, so D_rho stays linear too.

   Every node is built by a constructor below that checks the typing rule
   (ASSERT: a failure is a bug in Una, never a user error). Nodes are
   immutable. */
#ifndef UNA_UNF_H
#define UNA_UNF_H

#include "../frontend/ir/term.h"

/* ---- contexts ---- */

typedef enum {
  UE_TYPE, /* an ordinary value of type `type` */
  UE_CONT, /* a continuation cot(from) -> rho */
  UE_LIN,  /* a linear map cot(from) -o cot(to) */
} UnfEntryKind;

typedef struct UnfCtx UnfCtx;
struct UnfCtx {
  const UnfCtx *prev; /* the context without this last entry; NULL: [] */
  const UnfCtx *jump; /* an ancestor, for O(log n) random access */
  int len;            /* number of entries, this one included */
  UnfEntryKind kind;
  const Type *type;   /* UE_TYPE */
  Sym *sym;           /* UE_TYPE: the source variable, or NULL */
  bool konst;         /* UE_TYPE: a value with no derivative (a constant,
                         a cst, a comparison...): J^T adds nothing to it */
  const UnfCtx *from; /* UE_CONT, UE_LIN */
  const UnfCtx *to;   /* UE_LIN */
};

/* The length of c (0 for the empty context NULL). */
int unf_ctx_len(const UnfCtx *c);
/* c, A: one UE_TYPE entry of type t (sym may be NULL) on top of c. */
const UnfCtx *unf_ctx_push(const UnfCtx *c, const Type *t, Sym *sym);
/* c, (cot(from) -> rho). */
const UnfCtx *unf_ctx_push_cont(const UnfCtx *c, const UnfCtx *from);
/* c, (cot(from) -o cot(to)). */
const UnfCtx *unf_ctx_push_lin(const UnfCtx *c, const UnfCtx *from, const UnfCtx *to);
/* The top entry of c renamed sym (kind, type and konst kept). */
const UnfCtx *unf_ctx_name(const UnfCtx *c, Sym *sym);
/* c with its top entry e re-pushed on top of below (same kind, type,
   sym and references). */
const UnfCtx *unf_ctx_repush(const UnfCtx *below, const UnfCtx *e);
/* The prefix of c of length len (0 <= len <= |c|), in O(log |c|). */
const UnfCtx *unf_ctx_prefix(const UnfCtx *c, int len);
/* The node of entry i (0-based) of c. */
const UnfCtx *unf_ctx_at(const UnfCtx *c, int i);
/* The context of the Syms xs[0..n) in order (entries named by them). */
const UnfCtx *unf_ctx_of_syms(Sym **xs, int n);
/* Structural equality of contexts (entry kinds and types; names are
   ignored). Stops at the first shared tail, so comparing a context with
   one built on the same tail is O(what differs). */
bool unf_ctx_eq(const UnfCtx *a, const UnfCtx *b);
/* D(C) = C, (cot(C) -> rho), the differentiated context (figure 8). */
const UnfCtx *unf_ctx_d(const UnfCtx *c);

/* ---- terms ---- */

typedef enum {
#define UNF(id, name, target) U_##id,
#include "unf_kinds.def"
#undef UNF
  U__COUNT
} UnfKind;

extern const char *const unf_kind_names[U__COUNT];

typedef struct Unf Unf;
struct Unf {
  UnfKind kind;
  const UnfCtx *in, *out; /* the typing judgment in |- e : out */
  Span span;              /* the source construct this stands for */
  const UnfCtx *base;     /* primitives: T, the context below the operands */
  int index;              /* VAR: position; PI: component; PROJ: |T2| */
  int n;                  /* operand count (OP NDOP PAIR ARRAY); PROJ: |T3| */
  Prim prim;              /* OP, NDOP */
  const Term *term;       /* CONST CST MAP MAP2 REDUCE FOLDL IF SAVE NDOP PRIM */
  /* The free variables of term (lambda or branches or constant term) that
     have a position in the input context, and those positions. */
  int nfv;
  Sym **fv;
  int *fv_pos;
  bool checked;     /* MAP2: the source map2 was checked by construction
                       (term.h's b); its forward keeps the mark */
  const char *hint; /* a name for the value this produces (the let's), or NULL */
  bool user;        /* the hint is a let of the source program (Sym.user) */
  Unf **kids;       /* SEQ: the steps; TPAIR, COMP: 2; JT: 1 */
  int nkids;
};

/* Source UNF primitives. `in` is the whole input context; the operands are
   its last entries and must have the types the rule needs. */
Unf *unf_var(Span s, const UnfCtx *in, int i);
Unf *unf_const(Span s, const UnfCtx *in, const Term *c);
/* term: a checked source term whose free variables with a position in
   `in` are fv[0..nfv) at fv_pos (the others are constants). */
Unf *unf_cst(Span s, const UnfCtx *in, const Term *term, int nfv, Sym **fv, int *fv_pos);
Unf *unf_op(Span s, const UnfCtx *in, Prim p);
/* A non-differentiable builtin over its n UNF'd operands; t the original
   PRIM term (for its type and any argument that is not an operand). */
Unf *unf_ndop(Span s, const UnfCtx *in, const Term *t, int n);
Unf *unf_pair(Span s, const UnfCtx *in, int n);
/* proj[T1;T2;T3]: drops the n2 entries below the top n3 of in. */
Unf *unf_proj(Span s, const UnfCtx *in, int n2, int n3);
Unf *unf_pi(Span s, const UnfCtx *in, int i);
/* kind U_MAP, U_MAP2, U_REDUCE, U_FOLDL with lam the LAM term. */
Unf *unf_combinator(Span s, UnfKind kind, const UnfCtx *in, const Term *lam, int nfv, Sym **fv,
                    int *fv_pos);
/* if[T; t]: the condition is the top of in; t is the IF term. */
Unf *unf_if(Span s, const UnfCtx *in, const Term *t, int nfv, Sym **fv, int *fv_pos);
Unf *unf_replicate(Span s, const UnfCtx *in);
Unf *unf_array(Span s, const UnfCtx *in, int n);
Unf *unf_save(Span s, const UnfCtx *in, const Term *t);
/* prim[T; lambdas]: the builtin t (a PRIM term) over its n operands, the
   kids of t that are not lambdas, on top of in; fv as for unf_cst. */
Unf *unf_prim(Span s, const UnfCtx *in, const Term *t, int n, int nfv, Sym **fv, int *fv_pos);

/* Sequential composition e1; ...; en (n >= 1), flattening nested
   sequences; each step's output must equal the next step's input. */
Unf *unf_seq(int n, Unf **steps);

/* Target UNF. */
Unf *unf_jt(const Unf *p);
Unf *unf_tpair(const Unf *e1, const Unf *e2);
Unf *unf_comp(const Unf *e1, const Unf *e2);

/* True for the kinds that are Source UNF primitives (not SEQ, not
   target-only). */
bool unf_is_primitive(UnfKind k);

/* ---- passes ---- */

/* UNF (figure 9): the Source UNF of a checked term body (calls inlined or
   kept as reverse/grad.c decides,
   rev_check_supported passed) in the context of ctx[0..n):
   ctx |- UNF(body) : ctx, type(body). Free variables of body that are not
   in ctx are constants. Raises FeError (nested too deeply). */
Unf *unf_of_term(Sym **ctx, int n, const Term *body);

/* UNF^-1 of Source UNF: the term computing the top value of e's output
   when ctx[0..n) hold e's input (e : ctx |- ctx, ..., A). With D_rho left
   out, UNF followed by this is the ANF conversion of the paper's remark
   in section 4.4; the tests check that it preserves every value. */
Term *unf_to_term(const Unf *e, Sym **ctx, int n);

/* ---- printing ---- */

enum { UNF_PRINT_LINES = 1 }; /* the steps of the outer sequence one per line */

/* "R,R,[R],RxR" (runs of 3 or more equal entries as "R^3"); "[]" when
   empty. */
char *unf_ctx_str(const UnfCtx *c);
/* The paper's notation in ASCII: var[R,R;1], cos[R,R]; pair[R,R;RxR],
   proj[R;R,R;R], J^T cos[R,R], <e1, e2>, e1 o e2. */
char *unf_str(const Unf *e);
char *unf_str_opts(const Unf *e, int flags);

#endif
