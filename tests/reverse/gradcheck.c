/* gradcheck.c: the gradient-check harness (see gradcheck.h). */
#include "gradcheck.h"

#include <math.h>
#include <time.h>

#include "../../backend/eval.h"
#include "../../derive/derive.h"
#include "../../optimizer/program.h"
#include "../../frontend/parser.h"
#include "../../frontend/ir/retype.h"
#include "../testlib.h"

extern const char una_prelude_text[]; /* gen/prelude.c */

/* Checks and binds every def of text into env; false and *err on error. */
static bool load_into(Env *env, const char *file, const char *text, char **err) {
  ParseResult pr = fe_parse_program(file, text, strlen(text));
  if (pr.nerrors > 0) {
    *err = fe_error_text(pr.errors[0]);
    return false;
  }
  /* derivative operators in the program become calls of their derived
     functions, optimized, as the session does (derive.h) */
  OptOptions oo = {0};
  oo.enabled = true;
  oo.check_passes = true;
  DerivOpt dopt = {opt_derived, &oo};
  FeTry t;
  if (fe_try(&t)) {
    for (int i = 0; i < pr.nitems; i++) {
      const Item *it = pr.items[i];
      if (it->kind != ITEM_DEF) fe_error(it->span, "gradcheck: only defs may appear in a program");
      fe_env_bind_def(env, deriv_expand(fe_check_def(env, it), &dopt));
    }
    fe_untry(&t);
    return true;
  }
  *err = fe_error_text(t.err);
  return false;
}

GcProgram *gc_load(const char *file, const char *text, bool prelude, const char *fname, char **err) {
  GcProgram *p = NEW(GcProgram);
  p->text = text;
  p->env = fe_env_new();
  if (prelude && !load_into(p->env, "<prelude>", una_prelude_text, err)) return NULL;
  if (!load_into(p->env, file, text, err)) return NULL;
  p->f = fe_env_find_def(p->env, fname);
  if (!p->f) {
    *err = una_sprintf("gradcheck: no def named '%s'", fname);
    return NULL;
  }
  return p;
}

GcOptions gc_default_options(void) {
  static const int lengths[] = {0, 1, 3, 7};
  GcOptions o = {.lengths = lengths, .nlengths = 4, .points = 2, .lo = -1.5, .hi = 1.5};
  return o;
}

Value gc_value(const GcProgram *p, const char *text) {
  Term *e = fe_parse_expr("<gc>", text, strlen(text), 1, 1);
  return cpu_call(fe_check_expr(p->env, e), NULL);
}


int gc_wrt(const GcProgram *p, const char *names, int *wrt) {
  int n = 0;
  if (!names || !*names) {
    for (int i = 0; i < p->f->nparams; i++)
      if (fe_type_has_reals(p->f->params[i]->type)) wrt[n++] = i;
    return n;
  }
  const char *s = names;
  while (*s) {
    while (*s == ' ') s++;
    if (!*s) break;
    size_t len = strcspn(s, " ");
    int found = -1;
    for (int i = 0; i < p->f->nparams; i++)
      if (strlen(p->f->params[i]->name) == len && strncmp(p->f->params[i]->name, s, len) == 0)
        found = i;
    if (found < 0 || n >= p->f->nparams) return -1;
    wrt[n++] = found;
    s += len;
  }
  return n;
}

/* rev_grad (or o's hook), then the independent type check of the derived
   Def. */
static Def *derive(const Def *f, const int *wrt, int nwrt, RevPath path, const GcOptions *o) {
  Def *g = o && o->derive ? o->derive(f, wrt, nwrt, path, o->derive_ud) : rev_grad(f, wrt, nwrt, path);
  fe_retype(g);
  return g;
}

char *gc_grad_str(const GcProgram *p, const char *wrt_names, RevPath path, int nargs,
                  const char *const *args) {
  int *wrt = NEW_ARRAY(int, p->f->nparams + 1);
  int nwrt = gc_wrt(p, wrt_names, wrt);
  if (nwrt < 0) return una_sprintf("error: gradcheck: bad wrt list '%s'", wrt_names);
  if (nargs != p->f->nparams) return una_sprintf("error: gradcheck: %d arguments for %d parameters", nargs, p->f->nparams);
  FeTry t;
  char *volatile out = NULL;
  if (fe_try(&t)) {
    Value *vals = NEW_ARRAY(Value, nargs + 1);
    for (int i = 0; i < nargs; i++) vals[i] = gc_value(p, args[i]);
    Def *g = derive(p->f, wrt, nwrt, path, NULL);
    out = val_to_string(cpu_call(g, vals));
    fe_untry(&t);
    return out;
  }
  return una_sprintf("error: %s", fe_error_text(t.err));
}

Value gc_random_value(GenRng *r, const Type *t, size_t len, double lo, double hi) {
  switch (t->kind) {
  case TY_REAL: return val_real(lo + (hi - lo) * gen_unit(r));
  case TY_BOOL: return val_bool(gen_below(r, 2) == 1);
  case TY_TUPLE: {
    Value *items = NEW_ARRAY(Value, t->n);
    for (int i = 0; i < t->n; i++) items[i] = gc_random_value(r, t->elems[i], len, lo, hi);
    return val_tuple(t->n, items);
  }
  case TY_ARRAY: {
    Array *a = val_new_array_of(t->elem, len, fe_nospan);
    for (size_t i = 0; i < len; i++) val_array_set(a, i, gc_random_value(r, t->elem, len, lo, hi));
    return val_array(a);
  }
  default: break;
  }
  UNREACHABLE();
}

static double call_real(const Def *f, const Value *args) {
  Value v = cpu_call(f, args);
  ASSERT(v.kind == V_REAL);
  return v.u.r;
}

double gc_fd(const Def *f, const Value *args, double *x, double h) {
  double x0 = *x, d[2];
  for (int k = 0; k < 2; k++) {
    double hk = k == 0 ? h : h / 2;
    double xp = x0 + hk, xm = x0 - hk;
    *x = xp;
    double fp = call_real(f, args);
    *x = xm;
    double fm = call_real(f, args);
    *x = x0;
    d[k] = (fp - fm) / (xp - xm);
  }
  return (4 * d[1] - d[0]) / 3;
}

/* ---- the check ---- */

/* One real of a value: where it is and a label ("v[2]", "p.1"). */
typedef struct Comp {
  double *x;
  const char *label;
} Comp;

typedef struct Comps {
  Comp *v;
  int n, cap;
} Comps;

static void comps_add(Comps *c, double *x, const char *label) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 16;
    Comp *nv = NEW_ARRAY(Comp, c->cap);
    if (c->n) memcpy(nv, c->v, sizeof(Comp) * (size_t)c->n);
    c->v = nv;
  }
  c->v[c->n].x = x;
  c->v[c->n].label = label;
  c->n++;
}

/* Appends the reals of *v in order (tuple components, array elements). */
static void collect(Value *v, const char *label, Comps *c) {
  switch (v->kind) {
  case V_REAL: comps_add(c, &v->u.r, label); break;
  case V_TUPLE:
    for (int i = 0; i < v->u.t->n; i++)
      collect(&v->u.t->items[i], una_sprintf("%s.%d", label, i + 1), c);
    break;
  case V_ARRAY: {
    Array *a = v->u.a;
    for (size_t i = 0; i < a->len; i++) {
      const char *l = una_sprintf("%s[%zu]", label, i);
      if (a->boxed) collect(&a->v[i], l, c);
      else comps_add(c, &a->r[i], l);
    }
    break;
  }
  default: break;
  }
}

/* True when g has the shape of the argument a: same kinds, tuple sizes
   and array lengths. */
static bool same_shape(Value g, Value a) {
  if (g.kind != a.kind) return false;
  switch (g.kind) {
  case V_TUPLE:
    if (g.u.t->n != a.u.t->n) return false;
    for (int i = 0; i < g.u.t->n; i++)
      if (!same_shape(g.u.t->items[i], a.u.t->items[i])) return false;
    return true;
  case V_ARRAY:
    if (g.u.a->len != a.u.a->len || g.u.a->boxed != a.u.a->boxed) return false;
    if (g.u.a->boxed)
      for (size_t i = 0; i < g.u.a->len; i++)
        if (!same_shape(g.u.a->v[i], a.u.a->v[i])) return false;
    return true;
  default: return true;
  }
}

/* Whether g has the shape of the argument a's tangent (a of type t: its
   booleans left out, LANGUAGE.md section 6), so that their reals pair up
   in order. */
static bool same_tangent_shape(Value g, Value a, const Type *t) {
  if (fe_ty_tangent(t) == t) return same_shape(g, a);
  if (t->kind == TY_ARRAY) {
    if (g.kind != V_ARRAY || a.kind != V_ARRAY || g.u.a->len != a.u.a->len) return false;
    if (!g.u.a->boxed) return fe_ty_tangent(t->elem)->kind == TY_REAL;
    for (size_t i = 0; i < g.u.a->len; i++)
      if (!same_tangent_shape(g.u.a->v[i], a.u.a->v[i], t->elem)) return false;
    return true;
  }
  if (t->kind != TY_TUPLE || a.kind != V_TUPLE) return false;
  int m = 0, only = -1;
  for (int i = 0; i < t->n; i++)
    if (fe_ty_tangent(t->elems[i])) m++, only = i;
  if (m == 1) return same_tangent_shape(g, a.u.t->items[only], t->elems[only]);
  if (g.kind != V_TUPLE || g.u.t->n != m) return false;
  for (int i = 0, k = 0; i < t->n; i++)
    if (fe_ty_tangent(t->elems[i]) && !same_tangent_shape(g.u.t->items[k++], a.u.t->items[i], t->elems[i]))
      return false;
  return true;
}

/* The gradient value g (of all wrt parameters) split per parameter. */
static Value grad_part(Value g, int nwrt, int j) {
  if (nwrt == 1) return g;
  ASSERT(g.kind == V_TUPLE && g.u.t->n == nwrt);
  return g.u.t->items[j];
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *real_str(double x) {
  char buf[40];
  una_format_real(buf, sizeof buf, x);
  return una_strdup(buf);
}

typedef struct Ctx {
  const char *text;
  uint64_t seed;
  const Def *f;
  const Value *args;
  int len, point;
} Ctx;

static char *report(const Ctx *c, const char *what) {
  char *s = una_sprintf("gradient check failed: %s\n  seed: %llu\n", what, (unsigned long long)c->seed);
  if (c->args) {
    s = una_sprintf("%s  point (array length %d, point %d):", s, c->len, c->point);
    for (int i = 0; i < c->f->nparams; i++)
      s = una_sprintf("%s %s = %s%s", s, c->f->params[i]->name, val_to_string(c->args[i]),
                      i + 1 < c->f->nparams ? "," : "");
    s = una_sprintf("%s\n", s);
  }
  return una_sprintf("%s  program:\n%s", s, c->text);
}



/* Compares the two paths' flattened gradients; NULL when they agree.
   floor: an absolute tolerance of its own (0, or for random programs the
   rounding of cancellations in terms of f's size). */
static char *compare_paths(const Ctx *c, const Comps *a, const Comps *b, double floor) {
  if (a->n != b->n)
    return report(c, una_sprintf("the UNF path gives %d reals, the direct path %d", a->n, b->n));
  double scale = 0;
  for (int k = 0; k < a->n; k++) {
    if (isfinite(*a->v[k].x)) scale = fmax(scale, fabs(*a->v[k].x));
    if (isfinite(*b->v[k].x)) scale = fmax(scale, fabs(*b->v[k].x));
  }
  for (int k = 0; k < a->n; k++) {
    double x = *a->v[k].x, y = *b->v[k].x;
    if (x == y || (isnan(x) && isnan(y))) continue;
    if (isfinite(x) && isfinite(y) && fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y)) + 1e-12 * scale + floor) continue;
    return report(c, una_sprintf("UNF and direct paths differ at %s: unf = %s, direct = %s", a->v[k].label,
                                 real_str(x), real_str(y)));
  }
  return NULL;
}

/* Evaluates g at args into *out; a raised error becomes the report. */
static char *eval_grad(const Ctx *c, const Def *g, const char *path, Value *out, GcStats *st) {
  FeTry t;
  double t0 = now();
  if (fe_try(&t)) {
    *out = cpu_call(g, c->args);
    fe_untry(&t);
    st->eval_s += now() - t0;
    return NULL;
  }
  return report(c, una_sprintf("evaluating the %s gradient raised: %s", path, fe_error_text(t.err)));
}

/* Splits gradient g into per-parameter reals (checking the shapes). */
static char *flatten(const Ctx *c, Value g, const int *wrt, int nwrt, const char *path, Comps *out) {
  if (nwrt > 1 && (g.kind != V_TUPLE || g.u.t->n != nwrt))
    return report(c, una_sprintf("the %s gradient %s is not a tuple of %d", path, val_to_string(g), nwrt));
  for (int j = 0; j < nwrt; j++) {
    Value gj = tl_copy_value(grad_part(g, nwrt, j));
    if (!same_tangent_shape(gj, c->args[wrt[j]], c->f->params[wrt[j]]->type))
      return report(c, una_sprintf("the %s gradient for %s, %s, does not have the shape of the argument",
                                   path, c->f->params[wrt[j]]->name, val_to_string(gj)));
    Value *slot = NEW(Value);
    *slot = gj;
    collect(slot, c->f->params[wrt[j]]->name, out);
  }
  return NULL;
}

/* True when f has a kink or a jump at x itself (where the central
   differences of every step agree, on the average of the two sides): the
   one-sided derivatives (Richardson extrapolations of steps h and h/2)
   differ. This happens where two sides of a max or a comparison are equal
   at the point. Raises FeError when f does. */
static bool kink_at(const Def *f, const Value *args, double *x, double fx, double h) {
  double x0 = *x, d[2];
  for (int side = 0; side < 2; side++) {
    double s = side == 0 ? 1 : -1, q[2];
    for (int k = 0; k < 2; k++) {
      double xk = x0 + s * (k == 0 ? h : h / 2);
      *x = xk;
      q[k] = (call_real(f, args) - fx) / (xk - x0);
    }
    d[side] = 2 * q[1] - q[0];
  }
  *x = x0;
  return !(fabs(d[0] - d[1]) <= 1e-4 * fmax(1, fmax(fabs(d[0]), fabs(d[1]))));
}

/* Compares the gradient component a with finite differences in the real
   comp->x of args; NULL when they agree (or, lenient, when the finite
   differences are unreliable there). */
static char *fd_component(const Ctx *c, const Value *args, const Comp *comp, double a, double fx,
                          const GcOptions *o, GcStats *st) {
  double x = *comp->x, h = 1e-3 * fmax(1, fabs(x));
  volatile double fd = 0, fd2 = 0, fd3 = 0, tol = 0;
  FeTry t;
  st->components++;
  if (!fe_try(&t)) {
    *comp->x = x;
    return report(c, una_sprintf("evaluating f for finite differences at %s raised: %s", comp->label,
                                 fe_error_text(t.err)));
  }
  double t0 = now();
  fd = gc_fd(c->f, args, comp->x, h);
  tol = 1e-6 * fmax(fabs(a), fabs(fd)) + 1e-9 * fmax(1, fabs(fx));
  bool ok = fabs(a - fd) <= tol;
  fd2 = fd3 = fd;
  if (!ok && isfinite(fd)) {
    /* a kink or a steep function near x: try smaller steps */
    fd2 = gc_fd(c->f, args, comp->x, h / 8);
    tol = 1e-6 * fmax(fabs(a), fabs(fd2)) + 1e-9 * fmax(1, fabs(fx));
    ok = fabs(a - fd2) <= tol;
    if (!ok) fd3 = gc_fd(c->f, args, comp->x, h / 64);
  }
  volatile bool kink = !ok && kink_at(c->f, args, comp->x, fx, h);
  st->eval_s += now() - t0;
  fe_untry(&t);
  if (ok) {
    st->fd_checked++;
    st->nonzero += a != 0;
    return NULL;
  }
  /* The three steps disagree beyond what the comparison allows (a jump or
     a kink within the steps), or the derivative is beyond what floating
     point differences can estimate. */
  double spread = 1e-6 * fmax(fabs(fd2), fmax(fabs(fd), fabs(fd3))) + 1e-9 * fmax(1, fabs(fx));
  bool unreliable = !isfinite(fd) || !isfinite(fd2) || !isfinite(fd3) || fabs(fd - fd2) > spread / 4 ||
                    fabs(fd2 - fd3) > spread / 4 || fabs(fd2) > 1e30 || kink;
  if (o->lenient && unreliable) {
    st->fd_skipped++;
    return NULL;
  }
  return report(c, una_sprintf("gradient and finite differences differ at %s: unf = %s, fd = %s "
                               "(step %s), %s (step %s), %s (step %s)%s",
                               comp->label, real_str(a), real_str(fd), real_str(h), real_str(fd2),
                               real_str(h / 8), real_str(fd3), real_str(h / 64),
                               kink         ? " [f has a kink or a jump at the point]"
                               : unreliable ? " [finite differences unstable]"
                                            : ""));
}

/* The largest |f(x)| at which lenient checks compare with finite
   differences. */
#define LENIENT_FD_MAX 1e12

/* Checks one point; NULL when it passes (or is skipped in lenient mode). */
static char *check_point(Ctx *c, Def *const *g, const int *wrt, int nwrt, const GcOptions *o,
                         GcStats *st) {
  FeTry t;
  double fx = 0;
  if (fe_try(&t)) {
    fx = call_real(c->f, c->args);
    fe_untry(&t);
  } else {
    return report(c, una_sprintf("evaluating f raised: %s", fe_error_text(t.err)));
  }
  if (!isfinite(fx) || (o->lenient && fabs(fx) > 1e30)) {
    if (o->lenient) {
      st->points_skipped++;
      return NULL;
    }
    return report(c, una_sprintf("f = %s is not finite", real_str(fx)));
  }
  st->points++;
  Value ga, gb;
  Comps ca = {0}, cb = {0};
  char *r;
  if ((r = eval_grad(c, g[0], "UNF", &ga, st))) return r;
  if ((r = flatten(c, ga, wrt, nwrt, "UNF", &ca))) return r;
  if (!o->no_direct) {
    if ((r = eval_grad(c, g[1], "direct", &gb, st))) return r;
    if ((r = flatten(c, gb, wrt, nwrt, "direct", &cb))) return r;
    /* lenient: the two paths order their sums differently, and a
       component that cancels (1e-6 out of terms of size 1) keeps only
       their rounding, about 1e-16 times f's size */
    if ((r = compare_paths(c, &ca, &cb, o->lenient ? 1e-13 * fmax(1, fabs(fx)) : 0))) return r;
  }
  if (o->no_fd) return NULL;
  /* lenient: a bounded periodic function of values as large as f's (sin
     of 1e13) oscillates faster than any step resolves, and its finite
     differences average the oscillation out, the same at every step */
  if (o->lenient && fabs(fx) > LENIENT_FD_MAX) {
    st->fd_skipped_large++;
    return NULL;
  }
  /* finite differences on a private copy of the arguments */
  Value *args = NEW_ARRAY(Value, c->f->nparams + 1);
  for (int i = 0; i < c->f->nparams; i++) args[i] = tl_copy_value(c->args[i]);
  Comps cx = {0};
  for (int j = 0; j < nwrt; j++) collect(&args[wrt[j]], c->f->params[wrt[j]]->name, &cx);
  ASSERT(cx.n == ca.n);
  for (int k = 0; k < cx.n; k++)
    if ((r = fd_component(c, args, &cx.v[k], *ca.v[k].x, fx, o, st))) return r;
  return NULL;
}

/* Derives c->f's gradient on path into *out; a raised error becomes the
   report. */
static char *derive_path(const Ctx *c, const int *wrt, int nwrt, RevPath path, Def **out,
                         const GcOptions *o, GcStats *st) {
  FeTry t;
  double t0 = now();
  if (fe_try(&t)) {
    *out = derive(c->f, wrt, nwrt, path, o);
    fe_untry(&t);
    st->derive_s += now() - t0;
    return NULL;
  }
  return report(c, una_sprintf("deriving the %s gradient raised: %s", path == REV_UNF ? "UNF" : "direct",
                               fe_error_text(t.err)));
}

char *gc_check(const char *file, const char *text, const char *fname, uint64_t seed,
               const GcOptions *o, GcStats *st) {
  GcOptions defaults = gc_default_options();
  GcStats dummy = {0};
  if (!o) o = &defaults;
  if (!st) st = &dummy;
  Ctx c = {text, seed, NULL, NULL, 0, 0};
  char *err = NULL;
  GcProgram *p = gc_load(file, text, true, fname, &err);
  if (!p) return report(&c, una_sprintf("the program does not load: %s", err));
  c.f = p->f;
  st->programs++;
  int *wrt = NEW_ARRAY(int, p->f->nparams + 1), nwrt = 0;
  if (o->wrt) {
    for (int i = 0; i < o->nwrt; i++) wrt[nwrt++] = o->wrt[i];
  } else {
    nwrt = gc_wrt(p, NULL, wrt);
  }
  if (nwrt == 0) return report(&c, "no parameter to differentiate");

  Def *g[2] = {NULL, NULL};
  for (int k = 0; k < (o->no_direct ? 1 : 2); k++) {
    char *rep = derive_path(&c, wrt, nwrt, k == 0 ? REV_UNF : REV_DIRECT, &g[k], o, st);
    if (rep) return rep;
  }

  for (int li = 0; li < o->nlengths; li++)
    for (int pt = 0; pt < o->points; pt++) {
      GenRng r = gen_rng(seed * 1000003u + (uint64_t)li * 7919u + (uint64_t)pt + 1);
      Value *args = NEW_ARRAY(Value, p->f->nparams + 1);
      for (int i = 0; i < p->f->nparams; i++)
        args[i] = gc_random_value(&r, p->f->params[i]->type, (size_t)o->lengths[li], o->lo, o->hi);
      c.args = args;
      c.len = o->lengths[li];
      c.point = pt;
      char *rep = check_point(&c, g, wrt, nwrt, o, st);
      if (rep) return rep;
    }
  return NULL;
}
