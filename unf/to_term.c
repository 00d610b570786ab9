/* to_term.c: UNF^-1, Target UNF -> target Term (the paper's figure 10).

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
   entry at every step would make it quadratic). For a whole function the
   first continuation Y and the last one K stay lambda values in the
   output (K (0_G, 1)); everything between is applied here. Cotangents are kept in an array over the
   context with "zero" entries that cost nothing until something is added
   (0 + c = c); J^T P reads the last entries and adds to its operands'
   entries (the rules of figure 10):
     J^T var[G;i]   cot x_i += z
     J^T op[G]      cot a_j += d_j op(a..) * z     (reverse/partials.h)
     J^T pair       the components of z go to the components
     J^T proj       zeros for the hidden entries
     J^T pi_i[G;A]  cot t += (0, .., z, .., 0)
     J^T map, map2, reduce, foldl, if               (reverse/jt.h)
     J^T replicate  cot v += sum z
     J^T [e1..en]   cot e_j += z's element j
     J^T save       cot A += z
     J^T const, cst, comparisons, length, iota, rand: nothing. */
#include "unf.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"
#include "../reverse/jt.h"
#include "../reverse/partials.h"

typedef struct MetaK MetaK;
typedef struct MetaL MetaL;
typedef struct UEnv UEnv;

/* The meaning of a context: a persistent list like UnfCtx. */
struct UEnv {
  const UEnv *prev, *jump;
  int len;
  Term *atom; /* an ordinary entry: a T_VAR or a constant leaf */
  MetaK *k;   /* a continuation entry */
  MetaL *lin; /* a J^T entry */
};

/* J^T P at the values env of P's input. */
struct MetaL {
  const Unf *p;
  const UEnv *env;
};

/* A continuation: the initial Y (projection onto wrt) or K o L. */
struct MetaK {
  bool init;
  MetaK *next;
  MetaL *lin;
  bool used;
};

typedef struct {
  Span span;
  Sym *x;    /* let x = rhs, or */
  Sym **xs;  /* let (xs...) = rhs */
  int nxs;
  Term *rhs;
} Bind;

typedef struct {
  Bind *binds;
  int n, cap;
  UnfNablaFn nabla;
  void *ud;
  /* the gradient's context and wrt */
  Sym **ctx;
  int nctx;
  const int *wrt;
  int nwrt;
  Sym *y; /* the projection continuation Y as a variable, or NULL */
} St;

/* Cotangents of the entries of a context; NULL is zero. */
typedef struct {
  Term **v;
  int len, cap;
} Cot;

/* ---- environments ---- */

static int env_len(const UEnv *e) { return e ? e->len : 0; }

static const UEnv *env_push(const UEnv *prev, Term *atom, MetaK *k, MetaL *lin) {
  UEnv *e = NEW(UEnv);
  e->prev = prev;
  e->len = env_len(prev) + 1;
  const UEnv *j = prev ? prev->jump : NULL;
  if (!prev)
    e->jump = NULL;
  else if (j && prev->len - j->len == j->len - env_len(j->jump))
    e->jump = j->jump;
  else
    e->jump = prev;
  e->atom = atom;
  e->k = k;
  e->lin = lin;
  return e;
}

static const UEnv *env_prefix(const UEnv *e, int len) {
  ASSERT(len >= 0 && len <= env_len(e));
  while (env_len(e) > len) e = env_len(e->jump) >= len ? e->jump : e->prev;
  return e;
}

static Term *env_atom(const UEnv *e, int i) {
  const UEnv *n = env_prefix(e, i + 1);
  ASSERT(n->atom);
  return n->atom;
}

/* ---- atoms and bindings ---- */

static bool is_leaf(const Term *t) {
  return t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL || t->kind == T_GLOBAL;
}

/* A fresh node for a use of an atom (leaves are never shared in the tree). */
static Term *use(const Term *atom) {
  ASSERT(is_leaf(atom));
  Term *t = NEW(Term);
  *t = *atom;
  return t;
}

static void add_bind(St *st, Bind b) {
  if (st->n == st->cap) {
    st->cap = st->cap ? st->cap * 2 : 256;
    Bind *a = NEW_ARRAY(Bind, st->cap);
    if (st->n) memcpy(a, st->binds, sizeof(Bind) * (size_t)st->n);
    st->binds = a;
  }
  st->binds[st->n++] = b;
}

/* let x = rhs (x fresh, named name); returns the atom x. */
static Term *bind(St *st, Span s, const char *name, Term *rhs) {
  Sym *x = fe_mk_sym(name, rhs->type, s);
  Bind b = {s, x, NULL, 0, rhs};
  add_bind(st, b);
  return fe_mk_var(s, x);
}

/* rhs itself when it is a leaf, else a variable bound to it. */
static Term *atomize(St *st, Span s, const char *name, Term *rhs) {
  return is_leaf(rhs) ? rhs : bind(st, s, name, rhs);
}

/* let (x1, ..., xn) = rhs for a tuple rhs with n components (or let x =
   rhs when n == 1); the atoms go to out[0..n). */
static void bind_parts(St *st, Span s, const char *name, Term *rhs, int n, Term **out) {
  if (n == 1) {
    out[0] = atomize(st, s, name, rhs);
    return;
  }
  ASSERT(rhs->type->kind == TY_TUPLE && rhs->type->n == n);
  Sym **xs = NEW_ARRAY(Sym *, n);
  for (int i = 0; i < n; i++) {
    xs[i] = fe_mk_sym(name, rhs->type->elems[i], s);
    out[i] = fe_mk_var(s, xs[i]);
  }
  Bind b = {s, NULL, xs, n, rhs};
  add_bind(st, b);
}

/* Wraps the bindings from `from` on around body, innermost last. */
static Term *wrap(St *st, int from, Term *body) {
  for (int i = st->n - 1; i >= from; i--) {
    Bind *b = &st->binds[i];
    body = b->x ? fe_mk_let(b->span, b->x, b->rhs, body)
                : fe_mk_lettup(b->span, b->nxs, b->xs, b->rhs, body);
  }
  st->n = from;
  return body;
}

/* The name of the cotangent of an atom. */
static const char *cot_name(const Term *atom) {
  if (atom && atom->kind == T_VAR) return una_sprintf("d%s", atom->sym->name);
  return "d";
}

/* ---- forward: the primitives of Source UNF ---- */

/* term with its free variables u->fv replaced by the atoms of their
   positions in env (u's input). */
static Term *subst_fv(const Unf *u, const UEnv *env, const Term *term) {
  Term **to = NEW_ARRAY(Term *, u->nfv > 0 ? u->nfv : 1);
  for (int i = 0; i < u->nfv; i++) to[i] = use(env_atom(env, u->fv_pos[i]));
  return fe_subst(term, u->nfv, u->fv, to);
}

/* The atom of the i-th operand (0-based) of primitive u. */
static Term *operand(const Unf *u, const UEnv *env, int i) {
  return use(env_atom(env, unf_ctx_len(u->base) + i));
}

/* Marks the variable v just bound for u as the user's (Sym.user) when u
   computes a let of the source program. */
static void mark_user(St *st, const Unf *u, Term *v) {
  if (u->user && v->kind == T_VAR && st->n > 0 && st->binds[st->n - 1].x == v->sym) v->sym->user = true;
}

static const UEnv *forward(St *st, const Unf *u, const UEnv *env) {
  Span s = u->span;
  const char *name = u->hint ? u->hint : "t";
  Term *v = NULL;
  switch (u->kind) {
  case U_VAR: return env_push(env, env_atom(env, u->index), NULL, NULL);
  case U_CONST: return env_push(env, use(u->term), NULL, NULL);
  case U_CST:
    if (is_leaf(u->term) && u->nfv == 0) return env_push(env, use(u->term), NULL, NULL);
    v = atomize(st, s, name, subst_fv(u, env, u->term));
    break;
  case U_OP: {
    Term *a = operand(u, env, 0);
    v = bind(st, s, name,
             u->n == 1 ? fe_mk_op1(s, u->prim, a) : fe_mk_op2(s, u->prim, a, operand(u, env, 1)));
    break;
  }
  case U_NDOP: {
    Term **args = NEW_ARRAY(Term *, u->n > 0 ? u->n : 1);
    for (int i = 0; i < u->n; i++) args[i] = operand(u, env, i);
    v = bind(st, s, name, fe_term_prim(s, u->term->type, u->prim, u->n, args));
    break;
  }
  case U_PAIR: {
    Term **items = NEW_ARRAY(Term *, u->n);
    for (int i = 0; i < u->n; i++) items[i] = operand(u, env, i);
    v = bind(st, s, name, fe_mk_tuple(s, u->n, items));
    return env_push(env_prefix(env, unf_ctx_len(u->base)), v, NULL, NULL);
  }
  case U_PI: v = bind(st, s, name, fe_mk_proj(s, operand(u, env, 0), u->index)); break;
  case U_MAP:
    v = bind(st, s, name, fe_mk_map(s, subst_fv(u, env, u->term), operand(u, env, 0)));
    break;
  case U_MAP2:
  case U_REDUCE:
  case U_FOLDL: {
    /* the lambda and two operands (map2's arrays; the initial value and
       the array) */
    Term *(*mk)(Span, Term *, Term *, Term *) = u->kind == U_MAP2     ? fe_mk_map2
                                                : u->kind == U_REDUCE ? fe_mk_reduce
                                                                      : fe_mk_foldl;
    v = bind(st, s, name, mk(s, subst_fv(u, env, u->term), operand(u, env, 0), operand(u, env, 1)));
    break;
  }
  case U_IF:
    v = bind(st, s, name,
             fe_mk_if(s, operand(u, env, 0), subst_fv(u, env, u->term->kids[1]),
                      subst_fv(u, env, u->term->kids[2])));
    break;
  case U_REPLICATE:
    v = bind(st, s, name, fe_mk_replicate(s, operand(u, env, 0), operand(u, env, 1)));
    break;
  case U_ARRAY: {
    Term **items = NEW_ARRAY(Term *, u->n > 0 ? u->n : 1);
    for (int i = 0; i < u->n; i++) items[i] = operand(u, env, i);
    v = bind(st, s, name, fe_term_kids(s, T_ARRAY, u->out->type, u->n, items));
    break;
  }
  case U_SAVE: {
    Term *args[2] = {fe_copy(u->term->kids[0]), operand(u, env, 0)};
    v = bind(st, s, name, fe_term_prim(s, u->term->type, PRIM_SAVE, 2, args));
    break;
  }
  default: UNREACHABLE();
  }
  mark_user(st, u, v);
  return env_push(env, v, NULL, NULL);
}

/* proj[T1;T2;T3] on any environment. */
static const UEnv *env_proj(const Unf *u, const UEnv *env) {
  int n3 = u->n;
  const UEnv **keep = NEW_ARRAY(const UEnv *, n3 > 0 ? n3 : 1);
  const UEnv *e = env;
  for (int i = n3 - 1; i >= 0; i--, e = e->prev) keep[i] = e;
  const UEnv *out = env_prefix(e, env_len(e) - u->index);
  for (int i = 0; i < n3; i++) out = env_push(out, keep[i]->atom, keep[i]->k, keep[i]->lin);
  return out;
}

/* ---- backward: J^T of each primitive on the cotangent array ---- */

static void cot_push(Cot *c, Term *t) {
  if (c->len == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    Term **v = NEW_ARRAY(Term *, c->cap);
    if (c->len) memcpy(v, c->v, sizeof(Term *) * (size_t)c->len);
    c->v = v;
  }
  c->v[c->len++] = t;
}

static Term *cot_pop(Cot *c) {
  ASSERT(c->len > 0);
  return c->v[--c->len];
}

/* cot[i] += t (t of the entry's type, any term; NULL adds nothing). */
static void cot_add(St *st, Cot *c, Span s, const UEnv *env, int i, Term *t) {
  if (!t) return;
  ASSERT(i >= 0 && i < c->len);
  const char *name = cot_name(env_atom(env, i));
  if (!c->v[i])
    c->v[i] = atomize(st, s, name, t);
  else
    c->v[i] = atomize(st, s, name, fe_mk_gadd(s, use(c->v[i]), t));
}

/* z as a variable (the J^T builders want one). */
static Term *as_var(St *st, Span s, Term *z) {
  return z->kind == T_VAR ? z : bind(st, s, "z", z);
}

static bool is_num(const Term *t, double v) { return t->kind == T_NUM && t->num == v; }

/* Element j of the array z: reduce (+) 0 (map2 (i, y. if i == j then y else 0) (iota (length z)) z). */
static Term *element(Span s, Term *z, int j) {
  const Type *R = fe_ty_real();
  Sym *xs[2] = {fe_mk_sym("i", R, s), fe_mk_sym("y", R, s)};
  Term *pick = fe_mk_if(s, fe_mk_op2(s, PRIM_EQ, fe_mk_var(s, xs[0]), fe_mk_num(s, j)),
                        fe_mk_var(s, xs[1]), fe_mk_num(s, 0));
  Term *len = fe_mk_length(s, use(z));
  Term *iota = fe_term_prim(s, fe_ty_array(R), PRIM_IOTA, 1, &len);
  Term *m = fe_mk_map2(s, fe_mk_lam(s, 2, xs, pick), iota, use(z));
  return fe_mk_reduce(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), m);
}

/* The transpose Jacobian of a combinator or if: the cotangents of the
   free variables of its lambda (or branches) and of its operands. */
static void jt_combinator(St *st, const Unf *u, const UEnv *env, Cot *c, Term *z) {
  Span s = u->span;
  /* Free variables that get cotangents: distinct variables of ground type. */
  Sym **fv = NEW_ARRAY(Sym *, u->nfv > 0 ? u->nfv : 1);
  int *fv_pos = NEW_ARRAY(int, u->nfv > 0 ? u->nfv : 1);
  int nfv = 0;
  for (int i = 0; i < u->nfv; i++) {
    Term *a = env_atom(env, u->fv_pos[i]);
    if (a->kind != T_VAR || !fe_type_is_ground(a->type)) continue;
    bool dup = false;
    for (int k = 0; k < nfv && !dup; k++) dup = fv[k] == a->sym;
    if (dup) continue;
    fv[nfv] = a->sym;
    fv_pos[nfv] = u->fv_pos[i];
    nfv++;
  }
  RevJt j = {s, fv, nfv, st->nabla, st->ud};
  Term *zv = as_var(st, s, z);
  int nin = 0;
  Term *r = NULL;
  switch (u->kind) {
  case U_MAP:
    nin = 1;
    r = rev_jt_map(&j, subst_fv(u, env, u->term), operand(u, env, 0), use(zv));
    break;
  case U_MAP2:
    nin = 2;
    r = rev_jt_map2(&j, subst_fv(u, env, u->term), operand(u, env, 0), operand(u, env, 1),
                    use(zv));
    break;
  case U_REDUCE:
  case U_FOLDL:
    nin = 2;
    r = (u->kind == U_REDUCE ? rev_jt_reduce : rev_jt_foldl)(
        &j, subst_fv(u, env, u->term), operand(u, env, 0), operand(u, env, 1), use(zv));
    break;
  case U_IF:
    if (nfv == 0) return;
    r = rev_jt_if(&j, operand(u, env, 0), subst_fv(u, env, u->term->kids[1]),
                  subst_fv(u, env, u->term->kids[2]), use(zv));
    break;
  default: UNREACHABLE();
  }
  int ncomp = nfv + nin;
  Term **parts = NEW_ARRAY(Term *, ncomp);
  bind_parts(st, s, "g", r, ncomp, parts);
  for (int k = 0; k < nfv; k++) cot_add(st, c, s, env, fv_pos[k], use(parts[k]));
  int base = unf_ctx_len(u->base);
  for (int k = 0; k < nin; k++) cot_add(st, c, s, env, base + k, use(parts[nfv + k]));
}

/* Applies J^T u (u a Source UNF primitive, env the values of its input)
   to the cotangents c of its output, leaving those of its input. */
static void jt_apply(St *st, const Unf *u, const UEnv *env, Cot *c) {
  Span s = u->span;
  ASSERT(c->len == unf_ctx_len(u->out));
  int base = unf_ctx_len(u->base);
  if (u->kind == U_PROJ) {
    int n3 = u->n;
    Term **keep = NEW_ARRAY(Term *, n3 > 0 ? n3 : 1);
    for (int i = n3 - 1; i >= 0; i--) keep[i] = cot_pop(c);
    for (int i = 0; i < u->index; i++) cot_push(c, NULL);
    for (int i = 0; i < n3; i++) cot_push(c, keep[i]);
    ASSERT(c->len == unf_ctx_len(u->in));
    return;
  }
  Term *z = cot_pop(c);
  if (u->kind == U_PAIR) {
    Term **parts = NEW_ARRAY(Term *, u->n);
    if (z) bind_parts(st, s, "dp", use(z), u->n, parts);
    for (int i = 0; i < u->n; i++) cot_push(c, z ? parts[i] : NULL);
    ASSERT(c->len == unf_ctx_len(u->in));
    return;
  }
  ASSERT(c->len == unf_ctx_len(u->in));
  if (!z) return; /* J^T is linear: nothing to add */
  switch (u->kind) {
  case U_VAR: cot_add(st, c, s, env, u->index, use(z)); return;
  case U_CONST:
  case U_CST:
  case U_NDOP: return;
  case U_OP: {
    Term **args = NEW_ARRAY(Term *, u->n);
    for (int i = 0; i < u->n; i++) args[i] = operand(u, env, i);
    for (int i = 0; i < u->n; i++) {
      Term *d = rev_partial(s, u->prim, i, args);
      if (is_num(d, 0)) continue; /* floor, neg's constant parts: exactly 0 */
      Term *t = is_num(d, 1)    ? use(z)
                : is_num(d, -1) ? fe_mk_op1(s, PRIM_NEG, use(z))
                                : fe_mk_mul(s, d, use(z));
      cot_add(st, c, s, env, base + i, t);
    }
    return;
  }
  case U_PI: {
    Term *tup = operand(u, env, 0);
    const Type *tt = tup->type;
    Term **items = NEW_ARRAY(Term *, tt->n);
    for (int i = 0; i < tt->n; i++)
      items[i] = i == u->index ? use(z) : fe_mk_zero_like(s, fe_mk_proj(s, use(tup), i));
    cot_add(st, c, s, env, base, fe_mk_tuple(s, tt->n, items));
    return;
  }
  case U_MAP:
  case U_MAP2:
  case U_REDUCE:
  case U_FOLDL:
  case U_IF: jt_combinator(st, u, env, c, z); return;
  case U_REPLICATE:
    cot_add(st, c, s, env, base + 1,
            fe_mk_reduce(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), use(z)));
    return;
  case U_ARRAY:
    for (int i = 0; i < u->n; i++) cot_add(st, c, s, env, base + i, element(s, z, i));
    return;
  case U_SAVE: cot_add(st, c, s, env, base, use(z)); return;
  default: break;
  }
  UNREACHABLE();
}

/* Applies the continuation k to the cotangents c: the J^T of every
   primitive back to the start, then Y (the projection onto wrt). */
static Term *apply_k(St *st, MetaK *k, Cot *c) {
  for (; !k->init; k = k->next) {
    ASSERT(!k->used); /* linear use (lemma 5.1) */
    k->used = true;
    jt_apply(st, k->lin->p, k->lin->env, c);
  }
  ASSERT(!k->used && c->len == st->nctx);
  k->used = true;
  if (st->y) { /* Y (cot x1, ..., cot xn) */
    Term **args = NEW_ARRAY(Term *, st->nctx > 0 ? st->nctx : 1);
    for (int i = 0; i < st->nctx; i++) {
      Sym *x = st->ctx[i];
      args[i] = c->v[i] ? use(c->v[i]) : fe_mk_zero_like(x->span, fe_mk_var(x->span, x));
    }
    return fe_mk_app(st->y->span, fe_mk_var(st->y->span, st->y), st->nctx, args);
  }
  Term **items = NEW_ARRAY(Term *, st->nwrt > 0 ? st->nwrt : 1);
  for (int i = 0; i < st->nwrt; i++) {
    int w = st->wrt[i];
    Sym *x = st->ctx[w];
    items[i] = c->v[w] ? use(c->v[w]) : fe_mk_zero_like(x->span, fe_mk_var(x->span, x));
  }
  ASSERT(st->nwrt >= 1);
  return st->nwrt == 1 ? items[0] : fe_mk_tuple(items[0]->span, st->nwrt, items);
}

/* ---- the interpreter ---- */

static const UEnv *run(St *st, const Unf *e, const UEnv *env) {
  fe_stack_check(e->span);
  ASSERT(env_len(env) == unf_ctx_len(e->in));
  switch (e->kind) {
  case U_SEQ:
    for (int i = 0; i < e->nkids; i++) env = run(st, e->kids[i], env);
    return env;
  case U_TPAIR: {
    const UEnv *a = run(st, e->kids[0], env);
    const UEnv *b = run(st, e->kids[1], env);
    int nb = env_len(b);
    const UEnv **top = NEW_ARRAY(const UEnv *, nb > 0 ? nb : 1);
    for (int i = nb - 1; i >= 0; i--, b = b->prev) top[i] = b;
    for (int i = 0; i < nb; i++) a = env_push(a, top[i]->atom, top[i]->k, top[i]->lin);
    return a;
  }
  case U_COMP: {
    const UEnv *a = run(st, e->kids[0], env);
    const UEnv *b = run(st, e->kids[1], env);
    ASSERT(env_len(a) == 1 && a->k && env_len(b) == 1 && b->lin);
    MetaK *k = NEW(MetaK);
    k->next = a->k;
    k->lin = b->lin;
    return env_push(NULL, NULL, k, NULL);
  }
  case U_JT: {
    MetaL *l = NEW(MetaL);
    l->p = e->kids[0];
    l->env = env;
    return env_push(NULL, NULL, NULL, l);
  }
  case U_PROJ: return env_proj(e, env);
  default: return forward(st, e, env);
  }
}

static const UEnv *ctx_env(Sym **ctx, int n) {
  const UEnv *env = NULL;
  for (int i = 0; i < n; i++) env = env_push(env, fe_mk_var(ctx[i]->span, ctx[i]), NULL, NULL);
  return env;
}

Term *unf_to_term(const Unf *e, Sym **ctx, int n) {
  St st = {0};
  const UEnv *out = run(&st, e, ctx_env(ctx, n));
  return wrap(&st, 0, use(out->atom));
}

/* Y = fun (dx1, ..., dxn) -> (dx_wrt0, ...): the projection continuation
   of section 3.3 as a value. */
static Term *projection_continuation(St *st, Span s) {
  int n = st->nctx;
  Sym **ps = NEW_ARRAY(Sym *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    ps[i] = fe_mk_sym(una_sprintf("d%s", st->ctx[i]->name), st->ctx[i]->type, s);
  Term **items = NEW_ARRAY(Term *, st->nwrt);
  for (int i = 0; i < st->nwrt; i++) items[i] = fe_mk_var(s, ps[st->wrt[i]]);
  return fe_mk_lam(s, n, ps, st->nwrt == 1 ? items[0] : fe_mk_tuple(s, st->nwrt, items));
}

Term *unf_to_term_grad(const Unf *d, Sym **ctx, int n, const int *wrt, int nwrt, bool values,
                       UnfNablaFn nabla, void *ud) {
  St st = {0};
  Span s = d->span;
  st.nabla = nabla;
  st.ud = ud;
  st.ctx = ctx;
  st.nctx = n;
  st.wrt = wrt;
  st.nwrt = nwrt;
  ASSERT(nwrt >= 1);
  if (values) {
    Term *y = projection_continuation(&st, s);
    st.y = fe_mk_sym("Y", y->type, s);
    Bind b = {s, st.y, NULL, 0, y};
    add_bind(&st, b);
  }
  MetaK *y = NEW(MetaK);
  y->init = true;
  const UEnv *out = run(&st, d, env_push(ctx_env(ctx, n), NULL, y, NULL));
  ASSERT(env_len(out) == n + 2 && out->k && out->prev->atom);
  Cot c = {0};
  if (!values) { /* pi_2 (...) (0_ctx, 1), applied here */
    for (int i = 0; i < n; i++) cot_push(&c, NULL);
    cot_push(&c, fe_mk_num(s, 1));
    return wrap(&st, 0, apply_k(&st, out->k, &c));
  }
  /* K = fun (dx1, ..., dxn, z) -> ... Y (...), the continuation of D(e) */
  Sym **ps = NEW_ARRAY(Sym *, n + 1);
  for (int i = 0; i < n; i++) {
    ps[i] = fe_mk_sym(una_sprintf("d%s", ctx[i]->name), ctx[i]->type, s);
    cot_push(&c, fe_mk_var(s, ps[i]));
  }
  ps[n] = fe_mk_sym("z", fe_ty_real(), s);
  cot_push(&c, fe_mk_var(s, ps[n]));
  int mark = st.n;
  Term *kbody = wrap(&st, mark, apply_k(&st, out->k, &c));
  Term *k = fe_mk_lam(s, n + 1, ps, kbody);
  /* let (y, K) = (v, k) in K (0_ctx, 1) */
  Term *pair[2] = {use(out->prev->atom), k};
  Term *dv = fe_mk_tuple(s, 2, pair);
  Sym *yk[2] = {fe_mk_sym("y", dv->type->elems[0], s), fe_mk_sym("K", k->type, s)};
  Term **args = NEW_ARRAY(Term *, n + 1);
  for (int i = 0; i < n; i++) args[i] = fe_mk_zero_like(ctx[i]->span, fe_mk_var(ctx[i]->span, ctx[i]));
  args[n] = fe_mk_num(s, 1);
  Term *apply = fe_mk_app(s, fe_mk_var(s, yk[1]), n + 1, args);
  Bind b = {s, NULL, NEW_ARRAY(Sym *, 2), 2, dv};
  b.xs[0] = yk[0];
  b.xs[1] = yk[1];
  add_bind(&st, b);
  return wrap(&st, 0, apply);
}
