/* grad.c: the gradient of a function (figure 4's assembly): inline its
   calls, check that everything can be differentiated, take the gradient
   body on one of the two paths, wrap it as the Def grad_NAME; and ∇ of a
   term for the transpose Jacobians of lambda bodies. Gradients are cached
   per (function, wrt, path). */
#include "grad.h"
#include "paths.h"
#include "../frontend/ir/build.h"
#include "../frontend/inline.h"

/* ---- the cache (also the registry of gradient Defs) ---- */

typedef struct CacheEntry {
  const Def *f;
  int *wrt;
  int nwrt;
  RevPath path;
  Def *grad;
  struct CacheEntry *next;
} CacheEntry;

#define CACHE_SLOTS 256
static CacheEntry *cache[CACHE_SLOTS]; /* static: a root for the collector */

static size_t cache_slot(const Def *f) {
  return (size_t)(((uintptr_t)f >> 4) * 0x9E3779B97F4A7C15ull >> 20) % CACHE_SLOTS;
}

static Def *cache_find(const Def *f, const int *wrt, int nwrt, RevPath path) {
  for (CacheEntry *e = cache[cache_slot(f)]; e; e = e->next)
    if (e->f == f && e->path == path && e->nwrt == nwrt &&
        memcmp(e->wrt, wrt, sizeof(int) * (size_t)nwrt) == 0)
      return e->grad;
  return NULL;
}

static void cache_add(const Def *f, const int *wrt, int nwrt, RevPath path, Def *g) {
  CacheEntry *e = NEW(CacheEntry);
  e->f = f;
  e->wrt = NEW_ARRAY(int, nwrt > 0 ? nwrt : 1);
  memcpy(e->wrt, wrt, sizeof(int) * (size_t)nwrt);
  e->nwrt = nwrt;
  e->path = path;
  e->grad = g;
  size_t h = cache_slot(f);
  e->next = cache[h];
  cache[h] = e;
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
  if (has_kind(t, TY_BOOL) && has_kind(t, TY_REAL)) return "tuples with boolean components are";
  return NULL;
}

/* ---- gradients ---- */

Term *rev_nabla(Sym **ctx, int n, const Term *body, RevPath path) {
  int *wrt = NEW_ARRAY(int, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) wrt[i] = i;
  return path == REV_UNF ? rev_unf_gradient(ctx, n, wrt, n, body)
                         : rev_direct_gradient(ctx, n, wrt, n, body);
}

/* The inlined f, checked for what grad supports; *ctx gets its non-B
   parameters and wrt_ctx the positions of wrt in ctx. */
static Def *prepare(const Def *f, const int *wrt, int nwrt, Sym ***ctx, int *nctx, int **wrt_ctx) {
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
  Def *inl = fe_inline(f);
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
  return inl;
}

Def *rev_grad(const Def *f, const int *wrt, int nwrt, RevPath path) {
  ASSERT(nwrt >= 1);
  Def *g = cache_find(f, wrt, nwrt, path);
  if (g) return g;
  Sym **ctx;
  int nctx, *wrt_ctx;
  Def *inl = prepare(f, wrt, nwrt, &ctx, &nctx, &wrt_ctx);
  Term *body = path == REV_UNF ? rev_unf_gradient_top(ctx, nctx, wrt_ctx, nwrt, inl->body)
                               : rev_direct_gradient(ctx, nctx, wrt_ctx, nwrt, inl->body);
  /* The gradient takes f's parameters (the same Syms: their slots are
     0..nparams-1 in f, in the inlined f and here alike). */
  g = fe_mk_def(una_sprintf("grad_%s", f->name), f->span, inl->nparams, inl->params, body);
  for (int i = 0; i < g->nparams; i++) ASSERT(g->params[i]->slot == i);
  cache_add(f, wrt, nwrt, path, g);
  return g;
}

Def *rev_prepare(const Def *f, const int *wrt, int nwrt, Sym ***ctx, int *nctx, int **wrt_ctx) {
  return prepare(f, wrt, nwrt, ctx, nctx, wrt_ctx);
}
