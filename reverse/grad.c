/* grad.c: the gradient of a function (figure 4's assembly): inline its
   calls, check that everything can be differentiated, take the gradient
   body on one of the two paths, wrap it as the Def grad_NAME; and ∇ of a
   term for the transpose Jacobians of lambda bodies. Gradients are cached
   per (function, wrt, path), on the function's Def (so that they are
   collected with it). */
#include "grad.h"
#include "paths.h"
#include "../frontend/ir/build.h"
#include "../frontend/inline.h"
#include "jt_util.h"
#include "../frontend/ir/strbuf.h"

/* ---- the cache: each function's derivatives, kept on its Def ---- */

typedef enum { KIND_GRAD, KIND_VJP, KIND_VALUE_GRAD } Kind;

typedef struct CacheEntry {
  const Def *f;
  int *wrt;
  int nwrt;
  RevPath path;
  Kind kind;
  Def *grad;
  struct CacheEntry *next;
} CacheEntry;

static Def *cache_find(const Def *f, Kind kind, const int *wrt, int nwrt, RevPath path) {
  for (CacheEntry *e = f->derivs; e; e = e->next)
    if (e->kind == kind && e->path == path && e->nwrt == nwrt && memcmp(e->wrt, wrt, sizeof(int) * (size_t)nwrt) == 0)
      return e->grad;
  return NULL;
}

static void cache_add(const Def *f, Kind kind, const int *wrt, int nwrt, RevPath path, Def *g) {
  CacheEntry *e = NEW(CacheEntry);
  e->f = f;
  e->kind = kind;
  e->wrt = NEW_ARRAY(int, nwrt > 0 ? nwrt : 1);
  memcpy(e->wrt, wrt, sizeof(int) * (size_t)nwrt);
  e->nwrt = nwrt;
  e->path = path;
  e->grad = g;
  Def *owner = (Def *)f; /* the derivs field is a cache */
  e->next = owner->derivs;
  owner->derivs = e;
  if (kind == KIND_VJP) g->vjp_of = e;
}

/* ---- parameter types ---- */

static bool has_kind(const Type *t, TypeKind k) {
  if (t->kind == k) return true;
  if (t->kind == TY_ARRAY) return has_kind(t->elem, k);
  if (t->kind == TY_TUPLE)
    for (int i = 0; i < t->n; i++)
      if (has_kind(t->elems[i], k)) return true;
  return false;
}

/* What is wrong with the type of a parameter named after wrt, or NULL. */
static const char *param_problem(const Type *t) {
  if (has_kind(t, TY_FUN)) return "functions are";
  return NULL;
}

/* ---- gradients ---- */

Term *rev_nabla(Sym **ctx, int n, const Term *body, RevPath path) {
  int *wrt = NEW_ARRAY(int, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) wrt[i] = i;
  return path == REV_UNF ? rev_unf_gradient(ctx, n, wrt, n, body)
                         : rev_direct_gradient(ctx, n, wrt, n, body);
}

/* ---- inlining: which calls stay calls ---- */

/* The calls the UNF path keeps (modular differentiation): those of a
   function whose inlined body has more than KEEP_CALLS_OVER nodes, or
   that f calls n >= 2 times with n times that size over
   KEEP_CALLS_TOTAL (a step of a loop unrolled by hand). Other
   functions are inlined, so the optimizer sees across them; a kept call
   is differentiated once per (function, active arguments) as vjp_NAME
   (rev_vjp), which the gradient calls. */
enum { KEEP_CALLS_OVER = 400, KEEP_CALLS_TOTAL = 2000 };

static bool bool_only(const Type *t) { return !fe_type_has_reals(t) && !has_kind(t, TY_FUN); }

/* A call of d can be differentiated as a call: its parameters are
   constants (booleans) or ground (reals, arrays, tuples of them), and so
   is its result. */
static bool callable(const Def *d, void *ud) {
  (void)ud;
  for (int i = 0; i < d->nparams; i++)
    if (!bool_only(d->params[i]->type) && !fe_type_is_ground(d->params[i]->type)) return false;
  return fe_type_is_ground(d->ret);
}

static const FeInlinePolicy keep_large = {KEEP_CALLS_OVER, KEEP_CALLS_TOTAL, callable, NULL};

const FeInlinePolicy *rev_inline_policy(void) { return &keep_large; }

/* f with its calls inlined as the path needs: the direct path (figure 5)
   has no rule for calls, so it inlines all of them. */
static Def *inline_for(const Def *f, RevPath path) {
  return fe_inline_some(f, path == REV_UNF ? &keep_large : NULL);
}

/* The inlined f (inl, with f's parameters in order), checked for what
   grad supports; *ctx gets its non-B parameters and wrt_ctx the positions
   of wrt in ctx. */
static void prepare_inlined(const Def *f, const Def *inl, const int *wrt, int nwrt, Sym ***ctx, int *nctx,
                            int **wrt_ctx) {
  bool *named = NEW_ARRAY(bool, f->nparams > 0 ? f->nparams : 1);
  for (int k = 0; k < nwrt; k++) {
    ASSERT(wrt[k] >= 0 && wrt[k] < f->nparams);
    named[wrt[k]] = true;
  }
  for (int i = 0; i < f->nparams; i++) {
    if (!named[i]) continue; /* a constant: any type */
    const char *p = param_problem(f->params[i]->type);
    if (p)
      fe_error(f->params[i]->span, "grad: %s not supported under grad yet (parameter '%s' has type %s)",
               p, f->params[i]->name, fe_type_str(f->params[i]->type));
  }
  /* The context: the parameters named by wrt, in the order of the
     parameters; the others are free in the body, so constants. */
  *ctx = NEW_ARRAY(Sym *, inl->nparams > 0 ? inl->nparams : 1);
  int *where = NEW_ARRAY(int, inl->nparams > 0 ? inl->nparams : 1);
  *nctx = 0;
  for (int i = 0; i < inl->nparams; i++) {
    where[i] = -1;
    if (!named[i] || inl->params[i]->type->kind == TY_BOOL) continue;
    where[i] = *nctx;
    (*ctx)[(*nctx)++] = inl->params[i];
  }
  rev_check_supported(inl->body, *ctx, *nctx);
  *wrt_ctx = NEW_ARRAY(int, nwrt > 0 ? nwrt : 1);
  for (int k = 0; k < nwrt; k++) {
    ASSERT(where[wrt[k]] >= 0);
    (*wrt_ctx)[k] = where[wrt[k]];
  }
}

static Def *prepare(const Def *f, RevPath path, const int *wrt, int nwrt, Sym ***ctx, int *nctx,
                    int **wrt_ctx) {
  Def *inl = inline_for(f, path);
  prepare_inlined(f, inl, wrt, nwrt, ctx, nctx, wrt_ctx);
  return inl;
}

/* The gradient Def NAME of the inlined function inl (f's parameters);
   with_value: (the value, the gradient), on the UNF path. */
static Def *gradient_def(const char *name, const Def *f, const Def *inl, const int *wrt, int nwrt,
                         RevPath path, bool with_value) {
  Sym **ctx;
  int nctx, *wrt_ctx;
  prepare_inlined(f, inl, wrt, nwrt, &ctx, &nctx, &wrt_ctx);
  ASSERT(!with_value || path == REV_UNF);
  Term *body = with_value        ? rev_unf_value_and_gradient(ctx, nctx, wrt_ctx, nwrt, inl->body)
               : path == REV_UNF ? rev_unf_gradient_top(ctx, nctx, wrt_ctx, nwrt, inl->body)
                                 : rev_direct_gradient(ctx, nctx, wrt_ctx, nwrt, inl->body);
  /* cotangents have the parameters' types, false at their booleans: the
     user gets their tangent types (fe_ty_tangent) */
  body = fe_mk_tau_project(f->span, body);
  /* The gradient takes the parameters of inl (the same Syms: their slots
     are 0..nparams-1 there and here alike). */
  Def *g = fe_mk_def(name, f->span, inl->nparams, inl->params, body);
  for (int i = 0; i < g->nparams; i++) ASSERT(g->params[i]->slot == i);
  g->derived = true;
  return g;
}

Def *rev_grad(const Def *f, const int *wrt, int nwrt, RevPath path) {
  ASSERT(nwrt >= 1);
  Def *g = cache_find(f, KIND_GRAD, wrt, nwrt, path);
  if (g) return g;
  g = gradient_def(una_sprintf("grad_%s", f->name), f, inline_for(f, path), wrt, nwrt, path, false);
  cache_add(f, KIND_GRAD, wrt, nwrt, path, g);
  return g;
}

Def *rev_value_and_grad(const Def *f, const int *wrt, int nwrt) {
  ASSERT(nwrt >= 1);
  Def *g = cache_find(f, KIND_VALUE_GRAD, wrt, nwrt, REV_UNF);
  if (g) return g;
  g = gradient_def(rev_derived_name("value_and_grad", f, wrt, nwrt), f, inline_for(f, REV_UNF), wrt, nwrt,
                   REV_UNF, true);
  cache_add(f, KIND_VALUE_GRAD, wrt, nwrt, REV_UNF, g);
  return g;
}

const char *rev_derived_name(const char *op, const Def *f, const int *wrt, int nwrt) {
  int k = 0;
  for (int i = 0; i < f->nparams; i++) {
    if (bool_only(f->params[i]->type)) continue;
    if (k >= nwrt || wrt[k] != i) goto partial;
    k++;
  }
  if (k == nwrt) return una_sprintf("%s_%s", op, f->name);
partial:;
  StrBuf b = {0};
  sb_put(&b, una_sprintf("%s_%s_wrt", op, f->name));
  for (int j = 0; j < nwrt; j++) sb_put(&b, una_sprintf("_%s", f->params[wrt[j]]->name));
  return sb_str(&b);
}

/* vjp_NAME (params, c) = ∇ of ⟨c, body of f⟩ with respect to wrt: one
   reverse pass, the cotangent c a constant. f's body is inlined into the
   inner product (never called from it: a kept call of f would be
   differentiated by this very vjp). */
Def *rev_vjp(const Def *f, const int *wrt, int nwrt, RevPath path) {
  ASSERT(nwrt >= 1);
  Def *g = cache_find(f, KIND_VJP, wrt, nwrt, path);
  if (g) return g;
  Def *inl = inline_for(f, path);
  Span s = f->span;
  Sym **ps = NEW_ARRAY(Sym *, inl->nparams + 1);
  for (int i = 0; i < inl->nparams; i++) ps[i] = inl->params[i];
  /* c has the result's tangent type: <c, tau(body)> */
  Sym *c = fe_mk_sym(fe_fresh_param_name("c", ps, inl->nparams), fe_ty_tangent(f->ret), s);
  ps[inl->nparams] = c;
  Term *body = rev_jt_inner(s, fe_mk_var(s, c), fe_mk_tau_project(s, inl->body));
  Def *inner = fe_mk_def(una_sprintf("%s_dot", f->name), s, inl->nparams + 1, ps, body);
  g = gradient_def(rev_derived_name("vjp", f, wrt, nwrt), inner, inner, wrt, nwrt, path, false);
  cache_add(f, KIND_VJP, wrt, nwrt, path, g);
  return g;
}

bool rev_vjp_source(const Def *v, const Def **f, const int **wrt, int *nwrt) {
  const CacheEntry *e = v->vjp_of;
  if (!e) return false;
  *f = e->f;
  *wrt = e->wrt;
  *nwrt = e->nwrt;
  return true;
}

Def *rev_prepare(const Def *f, RevPath path, const int *wrt, int nwrt, Sym ***ctx, int *nctx,
                 int **wrt_ctx) {
  return prepare(f, path, wrt, nwrt, ctx, nctx, wrt_ctx);
}
