/* split.c: deriv_split_calls (derive.h): a kept call's forward and
   reverse parts, so that the callee's forward pass runs once.

   A gradient calls a large function g twice: `let y = g a` in its forward
   pass and `vjp_g a c` in its reverse pass, which runs g's forward pass
   again. When both are in the same let chain, with the same arguments,
   they become
     let (y, r) = fwd_g a in ... rev_g r c
   where fwd_g returns g's value and the residuals r, the values of g's
   own forward pass that its reverse pass reads, and rev_g computes the
   cotangents from them. Both come from one body, (g a, vjp_g a c),
   optimized (so that the two share g's forward pass) and split by binding
   time: the lets that do not depend on the cotangent c go to fwd_g (in
   order), the others to rev_g; the residuals are the variables of fwd_g's
   lets and of the parameters that rev_g reads. The split is built once per
   (g, wrt); its own kept calls are split the same way first. */
#include "derive.h"
#include "../frontend/inline.h"
#include "../frontend/ir/build.h"
#include "../frontend/ir/ptrmap.h"
#include "../frontend/ir/subst.h"
#include "../reverse/reverse.h"

/* g's split by wrt, kept on g (Def.splits) so that it goes with it. */
typedef struct Split {
  const int *wrt;
  int nwrt;
  Def *fwd, *rev; /* NULL: g does not split (the pair stays as it is) */
  struct Split *next;
} Split;

/* Whether t reads a variable of the set dyn. */
static bool reads(const Term *t, const PtrMap *dyn) {
  Sym **fv = NULL;
  int k = fe_free_vars(t, &fv);
  for (int i = 0; i < k; i++)
    if (ptrmap_get(dyn, fv[i])) return true;
  return false;
}

/* The let node l (T_LET or T_LETTUP) with body in place of its own. */
static Term *rewrap(const Term *l, Term *body) {
  return l->kind == T_LET ? fe_mk_let(l->span, l->sym, l->kids[0], body)
                          : fe_mk_lettup(l->span, l->nsyms, l->syms, l->kids[0], body);
}

/* fwd_g and rev_g for (g, wrt), or false when g's joint body does not
   have the shape to split. */
static bool build(const Def *g, const int *wrt, int nwrt, const DerivOpt *o, Def **fwd, Def **rev) {
  Span s = g->span;
  Def *v = rev_vjp(g, wrt, nwrt, REV_UNF);
  /* joint (params, c) = (g params, vjp_g params c), both bodies pasted */
  int n = g->nparams;
  Sym **ps = NEW_ARRAY(Sym *, n + 1);
  Term **args = NEW_ARRAY(Term *, n + 1);
  for (int i = 0; i < n; i++) {
    ps[i] = fe_mk_sym(g->params[i]->name, g->params[i]->type, s);
    args[i] = fe_mk_var(s, ps[i]);
  }
  Sym *c = fe_mk_sym(fe_fresh_param_name("c", ps, n), v->params[n]->type, s);
  ps[n] = c;
  args[n] = fe_mk_var(s, c);
  Term *items[2] = {fe_subst(g->body, n, g->params, args), fe_subst(v->body, n + 1, v->params, args)};
  Def *joint = fe_mk_def(una_sprintf("joint_%s", g->name), s, n + 1, ps, fe_mk_tuple(s, 2, items));
  joint = fe_inline_some(joint, rev_inline_policy());
  joint = deriv_split_calls(o->run(joint, o->ud), o);
  /* the let chain and its tail (value, cotangents) */
  int nl = 0, cap = 16;
  const Term **lets = NEW_ARRAY(const Term *, cap);
  const Term *t = joint->body;
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    if (nl == cap) {
      cap *= 2;
      const Term **w = NEW_ARRAY(const Term *, cap);
      memcpy(w, lets, sizeof *w * (size_t)nl);
      lets = w;
    }
    lets[nl++] = t;
    t = t->kids[1];
  }
  if (t->kind != T_TUPLE || t->nkids != 2) return false;
  /* binding time: dynamic = depends on c (a set of Syms) */
  PtrMap dyn;
  ptrmap_init(&dyn, 64);
  Sym *jc = joint->params[n];
  ptrmap_put(&dyn, jc, jc);
  bool *late = NEW_ARRAY(bool, nl > 0 ? nl : 1);
  for (int i = 0; i < nl; i++) {
    late[i] = reads(lets[i]->kids[0], &dyn);
    if (!late[i]) continue;
    if (lets[i]->kind == T_LET) ptrmap_put(&dyn, lets[i]->sym, lets[i]->sym);
    else
      for (int j = 0; j < lets[i]->nsyms; j++) ptrmap_put(&dyn, lets[i]->syms[j], lets[i]->syms[j]);
  }
  if (reads(t->kids[0], &dyn)) return false;
  /* the reverse part and what it reads from the forward part */
  Term *rbody = t->kids[1];
  for (int i = nl - 1; i >= 0; i--)
    if (late[i]) rbody = rewrap(lets[i], rbody);
  Sym **fv = NULL;
  int nfv = fe_free_vars(rbody, &fv);
  Sym **res = NEW_ARRAY(Sym *, nfv + 1);
  int nres = 0;
  for (int i = 0; i < nfv; i++)
    if (fv[i] != jc) res[nres++] = fv[i];
  /* fwd_g (params) = let <early lets> in (value, residuals) */
  Term *rtuple;
  if (nres == 0) rtuple = fe_mk_num(s, 0);
  else if (nres == 1) rtuple = fe_mk_var(s, res[0]);
  else {
    Term **rs = NEW_ARRAY(Term *, nres);
    for (int i = 0; i < nres; i++) rs[i] = fe_mk_var(s, res[i]);
    rtuple = fe_mk_tuple(s, nres, rs);
  }
  Term *pair[2] = {t->kids[0], rtuple};
  Term *fbody = fe_mk_tuple(s, 2, pair);
  for (int i = nl - 1; i >= 0; i--)
    if (!late[i]) fbody = rewrap(lets[i], fbody);
  const char *base = rev_derived_name("vjp", g, wrt, nwrt) + 4; /* NAME or NAME_wrt_... */
  Def *f = fe_mk_def(una_sprintf("fwd_%s", base), s, n, joint->params, fe_copy(fbody));
  /* rev_g (r, c) = let residuals = r in <late lets> in cotangents */
  Sym *r = fe_mk_sym("r", rtuple->type, s);
  Term *rb = rbody;
  if (nres == 1) rb = fe_mk_let(s, res[0], fe_mk_var(s, r), rb);
  else if (nres > 1) rb = fe_mk_lettup(s, nres, res, fe_mk_var(s, r), rb);
  Sym *rp[2] = {r, jc};
  Def *b = fe_mk_def(una_sprintf("rev_%s", base), s, 2, rp, fe_copy(rb));
  f->derived = b->derived = true;
  *fwd = o->run(f, o->ud);
  *rev = o->run(b, o->ud);
  return true;
}

static Split *split_of(const Def *g, const int *wrt, int nwrt, const DerivOpt *o) {
  for (Split *e = g->splits; e; e = e->next)
    if (e->nwrt == nwrt && memcmp(e->wrt, wrt, sizeof(int) * (size_t)nwrt) == 0) return e;
  Split *e = NEW(Split);
  e->wrt = wrt;
  e->nwrt = nwrt;
  if (!build(g, wrt, nwrt, o, &e->fwd, &e->rev)) e->fwd = e->rev = NULL;
  Def *owner = (Def *)g; /* the field is a cache */
  e->next = owner->splits;
  owner->splits = e;
  return e;
}

static bool is_atom(const Term *t) { return t->kind == T_VAR || t->kind == T_NUM || t->kind == T_BOOL; }

static bool same_atom(const Term *a, const Term *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == T_VAR) return a->sym == b->sym;
  if (a->kind == T_NUM) return a->num == b->num;
  return a->b == b->b;
}

/* One binding of the top-level let chain. */
typedef struct Bind {
  Span span;
  Sym *x;     /* let x = rhs, or */
  Sym **xs;   /* let (xs...) = rhs */
  int nxs;
  Term *rhs;
  Sym *res;   /* a forward call split: its residual variable */
  Def *fwd;
} Bind;

typedef struct Binds {
  Bind *v;
  int n, cap;
} Binds;

static void insert(Binds *b, int at, Bind x) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 16;
    Bind *v = NEW_ARRAY(Bind, b->cap);
    if (b->n) memcpy(v, b->v, sizeof *v * (size_t)b->n);
    b->v = v;
  }
  memmove(b->v + at + 1, b->v + at, sizeof *b->v * (size_t)(b->n - at));
  b->v[at] = x;
  b->n++;
}

/* Whether x is bound by the bindings from `from` on. */
static bool bound_from(const Binds *b, int from, const Sym *x) {
  for (int i = from; i < b->n; i++) {
    if (b->v[i].x == x) return true;
    for (int k = 0; k < b->v[i].nxs; k++)
      if (b->v[i].xs[k] == x) return true;
  }
  return false;
}

static bool vjp_call(const Term *e, const Def **g, const int **wrt, int *nwrt) {
  return e->kind == T_CALL && rev_vjp_source(e->def, g, wrt, nwrt);
}

Def *deriv_split_calls(Def *d, const DerivOpt *o) {
  Binds b = {0};
  const Term *t = d->body;
  bool any_vjp = false;
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    Bind x = {t->span, t->kind == T_LET ? t->sym : NULL, t->kind == T_LET ? NULL : t->syms,
              t->kind == T_LET ? 0 : t->nsyms, t->kids[0], NULL, NULL};
    const Def *g;
    const int *wrt;
    int nwrt;
    if (vjp_call(x.rhs, &g, &wrt, &nwrt)) {
      any_vjp = true;
      /* its arguments bound first, in order (where the call evaluated them) */
      Term **kids = NEW_ARRAY(Term *, x.rhs->nkids);
      for (int k = 0; k < x.rhs->nkids; k++) {
        kids[k] = x.rhs->kids[k];
        if (is_atom(kids[k])) continue;
        Sym *a = fe_mk_sym("a", kids[k]->type, kids[k]->span);
        insert(&b, b.n, (Bind){kids[k]->span, a, NULL, 0, kids[k], NULL, NULL});
        kids[k] = fe_mk_var(kids[k]->span, a);
      }
      Term *c = fe_term_kids(x.rhs->span, T_CALL, x.rhs->type, x.rhs->nkids, kids);
      c->def = x.rhs->def;
      x.rhs = c;
    }
    insert(&b, b.n, x);
    t = t->kids[1];
  }
  if (!any_vjp) return d;
  bool any = false;
  for (int i = 0; i < b.n; i++) {
    const Term *e = b.v[i].rhs;
    const Def *g;
    const int *wrt;
    int nwrt;
    if (!vjp_call(e, &g, &wrt, &nwrt)) continue;
    int n = g->nparams;
    for (int j = 0; j < b.n; j++) {
      const Term *f = b.v[j].rhs;
      if (j == i || !b.v[j].x || f->kind != T_CALL || (f->def != g && f->def != g->optimized)) continue;
      bool same = true;
      for (int k = 0; k < n && same; k++) same = same_atom(f->kids[k], e->kids[k]);
      if (!same) continue;
      if (j > i) {
        /* the forward call comes later: moved before the reverse one when
           its arguments are bound by then */
        bool ok = true;
        for (int k = 0; k < n && ok; k++)
          ok = f->kids[k]->kind != T_VAR || !bound_from(&b, i, f->kids[k]->sym);
        if (!ok) continue;
        Bind m = b.v[j];
        memmove(b.v + i + 1, b.v + i, sizeof *b.v * (size_t)(j - i));
        b.v[i] = m;
        j = i++;
      }
      Split *sp = split_of(g, wrt, nwrt, o);
      if (!sp->fwd) break;
      if (!b.v[j].res) {
        b.v[j].res = fe_mk_sym("r", sp->rev->params[0]->type, f->span);
        b.v[j].fwd = sp->fwd;
      } else if (b.v[j].fwd != sp->fwd) {
        break; /* one forward call with two splits (other wrt): leave it */
      }
      Term *args[2] = {fe_mk_var(e->span, b.v[j].res), e->kids[n]};
      Term *call = fe_term_kids(e->span, T_CALL, sp->rev->ret, 2, args);
      call->def = sp->rev;
      b.v[i].rhs = call;
      any = true;
      break;
    }
  }
  if (!any) return d;
  Term *body = (Term *)t;
  for (int i = b.n - 1; i >= 0; i--) {
    const Bind *x = &b.v[i];
    if (x->res) {
      Term *c = fe_term_kids(x->span, T_CALL, x->fwd->ret, x->rhs->nkids, x->rhs->kids);
      c->def = x->fwd;
      Sym *xs[2] = {x->x, x->res};
      body = fe_mk_lettup(x->span, 2, xs, c, body);
    } else if (x->x) {
      body = fe_mk_let(x->span, x->x, x->rhs, body);
    } else {
      body = fe_mk_lettup(x->span, x->nxs, x->xs, x->rhs, body);
    }
  }
  Def *r = fe_mk_def(d->name, d->span, d->nparams, d->params, body);
  r->ret = d->ret;
  r->derived = d->derived;
  r->vjp_of = d->vjp_of;
  r->optimized = r; /* already optimized */
  return r;
}
