/* to_term_int.h: the inside of UNF^-1 (unf/to_term.c) that the transpose
   Jacobian rules need: the interpretation of a Target UNF term over an
   environment (each context entry an atom, a continuation or a J^T), the
   SSA-like bindings it emits, and the walk of a continuation, which calls
   back a hook for each J^T on the way. unf/ knows no J^T rule: the gradient
   assembly and the rules of figure 10 live in reverse/ (reverse/unf_grad.c,
   reverse/unf_jt.c), which include this header; nothing else should. */
#ifndef UNA_UNF_TO_TERM_INT_H
#define UNA_UNF_TO_TERM_INT_H

#include "unf.h"

typedef struct UnfEnv UnfEnv;
typedef struct UnfCont UnfCont;
typedef struct UnfLin UnfLin;
typedef struct UnfTt UnfTt;

/* The meaning of a context: a persistent list like UnfCtx. Exactly one
   of atom, k and lin is set. */
struct UnfEnv {
  const UnfEnv *prev, *jump;
  int len;
  Term *atom;  /* an ordinary entry: a T_VAR or a constant leaf */
  UnfCont *k;  /* a continuation entry */
  UnfLin *lin; /* a J^T entry */
};

/* J^T P at the values env of P's input. */
struct UnfLin {
  const Unf *p;
  const UnfEnv *env;
};

/* A continuation: the initial one Y (init) or K o L (next = K, lin = L).
   used marks its one application (lemma 5.1). */
struct UnfCont {
  bool init;
  UnfCont *next;
  UnfLin *lin;
  bool used;
};

/* One emitted binding: let x = rhs, or let (xs...) = rhs when x is NULL. */
typedef struct UnfBind {
  Span span;
  Sym *x;
  Sym **xs;
  int nxs;
  Term *rhs;
} UnfBind;

/* The hook that applies J^T p (p a Source UNF primitive, env the values of
   its input) to the cotangents cot of p's output, leaving those of its
   input; st->jt_ud is the caller's state. */
typedef void (*UnfJtHook)(UnfTt *st, const Unf *p, const UnfEnv *env, void *cot);

/* The state of one run of UNF^-1: the bindings emitted so far, in order,
   and the J^T hook (NULL when the term has no continuation to apply). */
struct UnfTt {
  UnfBind *binds;
  int n, cap;
  UnfJtHook jt;
  void *jt_ud;
};

/* ---- environments ---- */

/* The length of e (0 for NULL). */
int unf_tt_env_len(const UnfEnv *e);
/* e with one entry on top (one of atom, k, lin set). */
const UnfEnv *unf_tt_env_push(const UnfEnv *prev, Term *atom, UnfCont *k, UnfLin *lin);
/* The atom of entry i (0-based) of e, which must be an ordinary entry. */
Term *unf_tt_env_atom(const UnfEnv *e, int i);
/* The environment of the variables ctx[0..n), in order. */
const UnfEnv *unf_tt_ctx_env(Sym **ctx, int n);

/* ---- atoms and bindings ---- */

/* A fresh node for a use of an atom (leaves are never shared in the tree). */
Term *unf_tt_use(const Term *atom);
/* Appends the binding b. */
void unf_tt_add_bind(UnfTt *st, UnfBind b);
/* let x = rhs (x fresh, named name); returns the atom x. */
Term *unf_tt_bind(UnfTt *st, Span s, const char *name, Term *rhs);
/* rhs itself when it is a leaf, else a variable bound to it. */
Term *unf_tt_atomize(UnfTt *st, Span s, const char *name, Term *rhs);
/* let (x1, ..., xn) = rhs for a tuple rhs with n components (or let x =
   rhs when n == 1); the atoms go to out[0..n). */
void unf_tt_bind_parts(UnfTt *st, Span s, const char *name, Term *rhs, int n, Term **out);
/* Wraps the bindings from `from` on around body, innermost last, and
   forgets them. */
Term *unf_tt_wrap(UnfTt *st, int from, Term *body);

/* ---- the operands of a primitive ---- */

/* term with the free variables u->fv replaced by the atoms of their
   positions in env (u's input). */
Term *unf_tt_subst_fv(const Unf *u, const UnfEnv *env, const Term *term);
/* The atom of the i-th operand (0-based) of primitive u. */
Term *unf_tt_operand(const Unf *u, const UnfEnv *env, int i);

/* ---- the interpreter ---- */

/* Runs e on the environment env of its input, emitting the bindings of
   its forward primitives; returns the environment of its output. */
const UnfEnv *unf_tt_run(UnfTt *st, const Unf *e, const UnfEnv *env);

/* Applies the continuation k: st->jt for the J^T of each composed step,
   last first, on cot, down to the initial continuation, which is
   returned for the caller to apply. Each continuation is applied once. */
UnfCont *unf_tt_apply_cont(UnfTt *st, UnfCont *k, void *cot);

#endif
