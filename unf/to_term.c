/* to_term.c: UNF^-1, Target UNF -> target Term (the paper's figure 10):
   the interpretation of a UNF term over an environment and the bindings it
   emits. The transpose Jacobians are reverse/'s (reverse/unf_jt.c, called
   through the hook of to_term_int.h), and so is the gradient's assembly
   (reverse/unf_grad.c).

   UNF terms have no variables: a context is a tuple of values. UNF^-1
   interprets a term over an environment that gives each context entry a
   meaning, and emits SSA-like lets as it goes:
   - an ordinary entry is an atom (a variable or a constant of the target
     term), so var[G;i] is x_i itself (forward substitution: no copy) and
     every other primitive binds its result to a fresh variable;
   - a continuation entry (cot(C) -> rho) is a compile-time continuation
     K, a linear map entry (J^T P) is P with the values of its input;
   - e1; e2 runs e1 then e2; <e1, e2> runs both on the same input and
     concatenates; proj keeps and drops entries; e1 o e2 is K o L.
   The continuation is used linearly (lemma 5.1), so applying K at compile
   time, pi_2 (UNF^-1 D(e)) (0_G, 1), generates each transpose Jacobian
   exactly once: that is the beta-reduction and forward substitution of
   the paper's section 5.1, done during generation, so the output is
   linear in the program (the figure's literal tuples of every context
   entry at every step would make it quadratic). unf_tt_apply_cont walks a
   continuation K o L o ... down to Y, handing each J^T to the hook. */
#include "to_term_int.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"

/* ---- environments ---- */

int unf_tt_env_len(const UnfEnv *e) { return e ? e->len : 0; }

const UnfEnv *unf_tt_env_push(const UnfEnv *prev, Term *atom, UnfCont *k, UnfLin *lin) {
  UnfEnv *e = NEW(UnfEnv);
  e->prev = prev;
  e->len = unf_tt_env_len(prev) + 1;
  const UnfEnv *j = prev ? prev->jump : NULL;
  if (!prev)
    e->jump = NULL;
  else if (j && prev->len - j->len == j->len - unf_tt_env_len(j->jump))
    e->jump = j->jump;
  else
    e->jump = prev;
  e->atom = atom;
  e->k = k;
  e->lin = lin;
  return e;
}

static const UnfEnv *env_prefix(const UnfEnv *e, int len) {
  ASSERT(len >= 0 && len <= unf_tt_env_len(e));
  while (unf_tt_env_len(e) > len) e = unf_tt_env_len(e->jump) >= len ? e->jump : e->prev;
  return e;
}

Term *unf_tt_env_atom(const UnfEnv *e, int i) {
  const UnfEnv *n = env_prefix(e, i + 1);
  ASSERT(n->atom);
  return n->atom;
}

/* ---- atoms and bindings ---- */

static bool is_leaf(const Term *t) {
  return t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL || t->kind == T_GLOBAL;
}

/* A fresh node for a use of an atom (leaves are never shared in the tree). */
Term *unf_tt_use(const Term *atom) {
  ASSERT(is_leaf(atom));
  Term *t = NEW(Term);
  *t = *atom;
  return t;
}

void unf_tt_add_bind(UnfTt *st, UnfBind b) {
  if (st->n == st->cap) {
    st->cap = st->cap ? st->cap * 2 : 8;
    UnfBind *a = NEW_ARRAY(UnfBind, st->cap);
    if (st->n) memcpy(a, st->binds, sizeof(UnfBind) * (size_t)st->n);
    st->binds = a;
  }
  st->binds[st->n++] = b;
}

/* let x = rhs (x fresh, named name); returns the atom x. */
Term *unf_tt_bind(UnfTt *st, Span s, const char *name, Term *rhs) {
  Sym *x = fe_mk_sym(name, rhs->type, s);
  UnfBind b = {s, x, NULL, 0, rhs};
  unf_tt_add_bind(st, b);
  return fe_mk_var(s, x);
}

/* rhs itself when it is a leaf, else a variable bound to it. */
Term *unf_tt_atomize(UnfTt *st, Span s, const char *name, Term *rhs) {
  return is_leaf(rhs) ? rhs : unf_tt_bind(st, s, name, rhs);
}

/* let (x1, ..., xn) = rhs for a tuple rhs with n components (or let x =
   rhs when n == 1); the atoms go to out[0..n). */
void unf_tt_bind_parts(UnfTt *st, Span s, const char *name, Term *rhs, int n, Term **out) {
  if (n == 1) {
    out[0] = unf_tt_atomize(st, s, name, rhs);
    return;
  }
  ASSERT(rhs->type->kind == TY_TUPLE && rhs->type->n == n);
  Sym **xs = NEW_ARRAY(Sym *, n);
  for (int i = 0; i < n; i++) {
    xs[i] = fe_mk_sym(name, rhs->type->elems[i], s);
    out[i] = fe_mk_var(s, xs[i]);
  }
  UnfBind b = {s, NULL, xs, n, rhs};
  unf_tt_add_bind(st, b);
}

/* Wraps the bindings from `from` on around body, innermost last. */
Term *unf_tt_wrap(UnfTt *st, int from, Term *body) {
  for (int i = st->n - 1; i >= from; i--) {
    UnfBind *b = &st->binds[i];
    body = b->x ? fe_mk_let(b->span, b->x, b->rhs, body)
                : fe_mk_lettup(b->span, b->nxs, b->xs, b->rhs, body);
  }
  st->n = from;
  return body;
}

/* ---- forward: the primitives of Source UNF ---- */

/* term with its free variables u->fv replaced by the atoms of their
   positions in env (u's input). */
Term *unf_tt_subst_fv(const Unf *u, const UnfEnv *env, const Term *term) {
  Term **to = NEW_ARRAY(Term *, u->nfv > 0 ? u->nfv : 1);
  for (int i = 0; i < u->nfv; i++) to[i] = unf_tt_use(unf_tt_env_atom(env, u->fv_pos[i]));
  return fe_subst(term, u->nfv, u->fv, to);
}

/* The atom of the i-th operand (0-based) of primitive u. */
Term *unf_tt_operand(const Unf *u, const UnfEnv *env, int i) {
  return unf_tt_use(unf_tt_env_atom(env, unf_ctx_len(u->base) + i));
}

/* Marks the variable v just bound for u as the user's (Sym.user) when u
   computes a let of the source program. */
static void mark_user(UnfTt *st, const Unf *u, Term *v) {
  if (u->user && v->kind == T_VAR && st->n > 0 && st->binds[st->n - 1].x == v->sym) v->sym->user = true;
}

static const UnfEnv *forward(UnfTt *st, const Unf *u, const UnfEnv *env) {
  Span s = u->span;
  const char *name = u->hint ? u->hint : "t";
  Term *v = NULL;
  switch (u->kind) {
  case U_VAR: return unf_tt_env_push(env, unf_tt_env_atom(env, u->index), NULL, NULL);
  case U_CONST: return unf_tt_env_push(env, unf_tt_use(u->term), NULL, NULL);
  case U_CST:
    if (is_leaf(u->term) && u->nfv == 0) return unf_tt_env_push(env, unf_tt_use(u->term), NULL, NULL);
    v = unf_tt_atomize(st, s, name, unf_tt_subst_fv(u, env, u->term));
    break;
  case U_OP: {
    Term *a = unf_tt_operand(u, env, 0);
    v = unf_tt_bind(st, s, name,
             u->n == 1 ? fe_mk_op1(s, u->prim, a) : fe_mk_op2(s, u->prim, a, unf_tt_operand(u, env, 1)));
    break;
  }
  case U_NDOP: {
    Term **args = NEW_ARRAY(Term *, u->n > 0 ? u->n : 1);
    for (int i = 0; i < u->n; i++) args[i] = unf_tt_operand(u, env, i);
    v = unf_tt_bind(st, s, name, fe_term_prim(s, u->term->type, u->prim, u->n, args));
    break;
  }
  case U_PAIR: {
    Term **items = NEW_ARRAY(Term *, u->n);
    for (int i = 0; i < u->n; i++) items[i] = unf_tt_operand(u, env, i);
    v = unf_tt_bind(st, s, name, fe_mk_tuple(s, u->n, items));
    return unf_tt_env_push(env_prefix(env, unf_ctx_len(u->base)), v, NULL, NULL);
  }
  case U_PI: v = unf_tt_bind(st, s, name, fe_mk_proj(s, unf_tt_operand(u, env, 0), u->index)); break;
  case U_MAP:
    v = unf_tt_bind(st, s, name, fe_mk_map(s, unf_tt_subst_fv(u, env, u->term), unf_tt_operand(u, env, 0)));
    break;
  case U_MAP2:
  case U_REDUCE:
  case U_FOLDL: {
    /* the lambda and two operands (map2's arrays; the initial value and
       the array) */
    Term *(*mk)(Span, Term *, Term *, Term *) = u->kind == U_MAP2     ? fe_mk_map2
                                                : u->kind == U_REDUCE ? fe_mk_reduce
                                                                      : fe_mk_foldl;
    Term *r = mk(s, unf_tt_subst_fv(u, env, u->term), unf_tt_operand(u, env, 0), unf_tt_operand(u, env, 1));
    r->b = u->checked;
    v = unf_tt_bind(st, s, name, r);
    break;
  }
  case U_IF:
    v = unf_tt_bind(st, s, name,
             fe_mk_if(s, unf_tt_operand(u, env, 0), unf_tt_subst_fv(u, env, u->term->kids[1]),
                      unf_tt_subst_fv(u, env, u->term->kids[2])));
    break;
  case U_REPLICATE:
    v = unf_tt_bind(st, s, name, fe_mk_replicate(s, unf_tt_operand(u, env, 0), unf_tt_operand(u, env, 1)));
    break;
  case U_ARRAY: {
    Term **items = NEW_ARRAY(Term *, u->n > 0 ? u->n : 1);
    for (int i = 0; i < u->n; i++) items[i] = unf_tt_operand(u, env, i);
    v = unf_tt_bind(st, s, name, fe_term_kids(s, T_ARRAY, u->out->type, u->n, items));
    break;
  }
  case U_PRIM: {
    const Term *t = u->term;
    Term **kids = NEW_ARRAY(Term *, t->nkids);
    for (int i = 0, k = 0; i < t->nkids; i++)
      kids[i] = t->kids[i]->kind == T_LAM ? unf_tt_subst_fv(u, env, t->kids[i]) : unf_tt_operand(u, env, k++);
    Term *r = fe_term_kids(s, t->kind, t->type, t->nkids, kids);
    r->prim = t->prim;
    r->def = t->def;
    r->b = t->b; /* checked by construction (term.h) */
    v = unf_tt_bind(st, s, name, r);
    break;
  }
  case U_SAVE: {
    Term *args[2] = {fe_copy(u->term->kids[0]), unf_tt_operand(u, env, 0)};
    v = unf_tt_bind(st, s, name, fe_term_prim(s, u->term->type, PRIM_SAVE, 2, args));
    break;
  }
  default: UNREACHABLE();
  }
  mark_user(st, u, v);
  return unf_tt_env_push(env, v, NULL, NULL);
}

/* proj[T1;T2;T3] on any environment. */
static const UnfEnv *env_proj(const Unf *u, const UnfEnv *env) {
  int n3 = u->n;
  const UnfEnv **keep = NEW_ARRAY(const UnfEnv *, n3 > 0 ? n3 : 1);
  const UnfEnv *e = env;
  for (int i = n3 - 1; i >= 0; i--, e = e->prev) keep[i] = e;
  const UnfEnv *out = env_prefix(e, unf_tt_env_len(e) - u->index);
  for (int i = 0; i < n3; i++) out = unf_tt_env_push(out, keep[i]->atom, keep[i]->k, keep[i]->lin);
  return out;
}

/* ---- the interpreter ---- */

const UnfEnv *unf_tt_run(UnfTt *st, const Unf *e, const UnfEnv *env) {
  fe_stack_check(e->span);
  ASSERT(unf_tt_env_len(env) == unf_ctx_len(e->in));
  switch (e->kind) {
  case U_SEQ:
    for (int i = 0; i < e->nkids; i++) env = unf_tt_run(st, e->kids[i], env);
    return env;
  case U_TPAIR: {
    const UnfEnv *a = unf_tt_run(st, e->kids[0], env);
    const UnfEnv *b = unf_tt_run(st, e->kids[1], env);
    int nb = unf_tt_env_len(b);
    const UnfEnv **top = NEW_ARRAY(const UnfEnv *, nb > 0 ? nb : 1);
    for (int i = nb - 1; i >= 0; i--, b = b->prev) top[i] = b;
    for (int i = 0; i < nb; i++) a = unf_tt_env_push(a, top[i]->atom, top[i]->k, top[i]->lin);
    return a;
  }
  case U_COMP: {
    const UnfEnv *a = unf_tt_run(st, e->kids[0], env);
    const UnfEnv *b = unf_tt_run(st, e->kids[1], env);
    ASSERT(unf_tt_env_len(a) == 1 && a->k && unf_tt_env_len(b) == 1 && b->lin);
    UnfCont *k = NEW(UnfCont);
    k->next = a->k;
    k->lin = b->lin;
    return unf_tt_env_push(NULL, NULL, k, NULL);
  }
  case U_JT: {
    UnfLin *l = NEW(UnfLin);
    l->p = e->kids[0];
    l->env = env;
    return unf_tt_env_push(NULL, NULL, NULL, l);
  }
  case U_PROJ: return env_proj(e, env);
  default: return forward(st, e, env);
  }
}

UnfCont *unf_tt_apply_cont(UnfTt *st, UnfCont *k, void *cot) {
  for (; !k->init; k = k->next) {
    ASSERT(!k->used); /* linear use (lemma 5.1) */
    k->used = true;
    ASSERT(st->jt);
    st->jt(st, k->lin->p, k->lin->env, cot);
  }
  ASSERT(!k->used);
  k->used = true;
  return k;
}

const UnfEnv *unf_tt_ctx_env(Sym **ctx, int n) {
  const UnfEnv *env = NULL;
  for (int i = 0; i < n; i++) env = unf_tt_env_push(env, fe_mk_var(ctx[i]->span, ctx[i]), NULL, NULL);
  return env;
}

Term *unf_to_term(const Unf *e, Sym **ctx, int n) {
  UnfTt st = {0};
  const UnfEnv *out = unf_tt_run(&st, e, unf_tt_ctx_env(ctx, n));
  return unf_tt_wrap(&st, 0, unf_tt_use(out->atom));
}
