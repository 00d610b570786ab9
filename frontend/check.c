/* check.c: the type checker: surface Terms -> typed Terms with resolved
   names, frame slots, and lambdas for operator sections and function names. */
#include "check.h"
#include "env.h"
#include "ir/prim_type.h"
#include "ir/build.h"
#include "ir/term_print.h"
#include "ir/subst.h"
#include <math.h>

#define NOINLINE __attribute__((noinline))

/* ---- Checker state: the local scope and the frame of the current Def ---- */

/* A local binding; bindings of one hash bucket form a stack, innermost first. */
typedef struct Local {
  const char *name;
  Sym *sym;
  struct Local *next;
} Local;

typedef struct Ck {
  Env *env;
  Local **tab; /* locals in scope, hashed by name */
  int ntab;    /* a power of two */
  int nlocals;
  int nslots;       /* slots handed out so far in the current Def */
  const char *self; /* the def being checked, or NULL */
} Ck;

static void ck_init(Ck *c, Env *env, const char *self) {
  c->env = env;
  c->ntab = 64;
  c->tab = NEW_ARRAY(Local *, c->ntab);
  c->nlocals = 0;
  c->nslots = 0;
  c->self = self;
}

/* Doubles the local table; bindings of one name keep their order. */
static void locals_grow(Ck *c) {
  int n = c->ntab * 2;
  Local **nt = NEW_ARRAY(Local *, n);
  Local **buf = NULL;
  int cap = 0;
  for (int i = 0; i < c->ntab; i++) {
    int k = 0;
    for (Local *l = c->tab[i]; l; l = l->next) {
      if (k == cap) {
        int ncap = cap ? cap * 2 : 16;
        Local **nbuf = NEW_ARRAY(Local *, ncap);
        if (k) memcpy(nbuf, buf, sizeof(Local *) * (size_t)k);
        buf = nbuf;
        cap = ncap;
      }
      buf[k++] = l;
    }
    while (k > 0) { /* outermost first, so the innermost ends up at the head */
      Local *l = buf[--k];
      unsigned h = fe_name_hash(l->name) & (unsigned)(n - 1);
      l->next = nt[h];
      nt[h] = l;
    }
  }
  c->tab = nt;
  c->ntab = n;
}

static Sym *local_find(const Ck *c, const char *name) {
  unsigned h = fe_name_hash(name) & (unsigned)(c->ntab - 1);
  for (Local *l = c->tab[h]; l; l = l->next)
    if (strcmp(l->name, name) == 0) return l->sym;
  return NULL;
}

/* Binds a fresh symbol with the next frame slot and brings it into scope. */
static Sym *local_push(Ck *c, const char *name, const Type *type, Span span) {
  if (c->nlocals >= 2 * c->ntab) locals_grow(c);
  Sym *x = fe_sym_new(name, type, span);
  x->slot = c->nslots++;
  x->user = true;
  Local *l = NEW(Local);
  l->name = name;
  l->sym = x;
  unsigned h = fe_name_hash(name) & (unsigned)(c->ntab - 1);
  l->next = c->tab[h];
  c->tab[h] = l;
  c->nlocals++;
  return x;
}

/* Ends the scope of the innermost binding of x (bindings end LIFO). */
static void local_pop(Ck *c, const Sym *x) {
  unsigned h = fe_name_hash(x->name) & (unsigned)(c->ntab - 1);
  Local *l = c->tab[h];
  ASSERT(l && l->sym == x);
  c->tab[h] = l->next;
  c->nlocals--;
}

/* ---- Names ---- */

typedef enum { RES_LOCAL, RES_DEF, RES_GLOBAL, RES_PRIM, RES_FST, RES_SND, RES_CONST, RES_NONE } ResKind;

typedef struct Res {
  ResKind kind;
  Sym *sym;
  Def *def;
  Global *global;
  Prim prim;
  double num;
} Res;

/* Locals, then top-level names, then builtins, then inf and nan. */
static Res resolve(const Ck *c, const char *name) {
  Res r;
  memset(&r, 0, sizeof r);
  if ((r.sym = local_find(c, name))) {
    r.kind = RES_LOCAL;
    return r;
  }
  const EnvBinding *b = fe_env_lookup(c->env, name);
  if (b) {
    r.kind = b->def ? RES_DEF : RES_GLOBAL;
    r.def = b->def;
    r.global = b->global;
    return r;
  }
  int p = fe_prim_lookup(name);
  if (p >= 0) {
    r.kind = RES_PRIM;
    r.prim = (Prim)p;
    return r;
  }
  if (strcmp(name, "fst") == 0) r.kind = RES_FST;
  else if (strcmp(name, "snd") == 0) r.kind = RES_SND;
  else if (strcmp(name, "inf") == 0) r.kind = RES_CONST, r.num = INFINITY;
  else if (strcmp(name, "nan") == 0) r.kind = RES_CONST, r.num = NAN;
  else r.kind = RES_NONE;
  return r;
}

static _Noreturn void unknown_name(const Ck *c, Span s, const char *name) {
  if (c->self && strcmp(c->self, name) == 0)
    fe_error(s, "'%s' cannot call itself: a function may call only functions defined before it", name);
  fe_error(s, "unknown name '%s'", name);
}

/* ---- Messages ---- */

static const char *tystr(const Type *t) { return t ? fe_type_str(t) : "a file name"; }

/* "1 argument", "2 arguments" */
static const char *count(int n, const char *word) {
  return una_sprintf("%d %s%s", n, word, n == 1 ? "" : "s");
}

static _Noreturn void arg_mismatch(Span s, int i, const char *who, const char *expected,
                                   const Type *found) {
  fe_error(s, "type mismatch in argument %d of '%s': expected %s, found %s", i + 1, who,
           expected, tystr(found));
}

static const char *lambda_shape(int np) {
  return np == 1 ? "(x. e)" : np == 2 ? "(x, y. e)" : "(x, y, z. e)";
}

/* ---- Constructors of checked nodes ---- */

static bool is_real(const Type *t) { return t && t->kind == TY_REAL; }
static bool is_bool(const Type *t) { return t && t->kind == TY_BOOL; }

static Term *mk_proj(Span s, Term *e, int index) {
  if (!e->type || e->type->kind != TY_TUPLE)
    fe_error(s, "projection of a non-tuple of type %s", tystr(e->type));
  if (index < 0 || index >= e->type->n)
    fe_error(s, "tuple has %d components; .%d is out of range", e->type->n, index + 1);
  Term *r = fe_term_kids(s, T_PROJ, e->type->elems[index], 1, &e);
  r->index = index;
  return r;
}

static Term *mk_call(Span s, Def *d, int n, Term **args) {
  Term *r = fe_term_kids(s, T_CALL, d->ret, n, args);
  r->def = d;
  return r;
}

static Term *mk_lam(Span s, int n, Sym **xs, Term *body) {
  const Type *pt[3];
  ASSERT(n <= 3);
  for (int i = 0; i < n; i++) pt[i] = xs[i]->type;
  Term *r = fe_term_kids(s, T_LAM, fe_ty_fun(n, pt, body->type), 1, &body);
  r->syms = NEW_ARRAY(Sym *, n);
  memcpy(r->syms, xs, sizeof(Sym *) * (size_t)n);
  r->nsyms = n;
  return r;
}

static Term *check(Ck *c, const Term *t);

/* ---- Patterns ----

   A pattern (p ::= x | (p, ..., p)) binds each of its names to a part of a
   value. The checker turns it into LETTUPs: a name binds the value
   itself; a tuple pattern splits its value into one symbol per component
   (the component's name, or a fresh symbol that a nested LETTUP splits in
   turn). */

typedef struct PatStep {
  Sym *src;  /* the symbol split, NULL for the root of a let (its rhs) */
  int n;
  Sym **xs;
  Span span;
} PatStep;

typedef struct PatBind {
  PatStep *steps; /* in post-order: a step's inner steps come before it */
  int nsteps, capsteps;
  Sym **pushed; /* the names in scope, in push order */
  int npushed, cappushed;
} PatBind;

/* "(x, (y, z))" */
static const char *pattern_str(const Term *q) {
  if (q->kind == T_NAME) return q->str;
  const char *s = "(";
  for (int i = 0; i < q->nkids; i++) s = una_sprintf("%s%s%s", s, i ? ", " : "", pattern_str(q->kids[i]));
  return una_sprintf("%s)", s);
}

/* "x_y_z": the name of the symbol that holds a tuple pattern's value. */
static const char *pattern_sym_name(const Term *q) {
  if (q->kind == T_NAME) return q->str;
  const char *s = "";
  for (int i = 0; i < q->nkids; i++) s = una_sprintf("%s%s%s", s, i ? "_" : "", pattern_sym_name(q->kids[i]));
  return s;
}

static void pat_push_sym(PatBind *pb, Sym *x) {
  if (pb->npushed == pb->cappushed) {
    int cap = pb->cappushed ? pb->cappushed * 2 : 8;
    Sym **v = NEW_ARRAY(Sym *, cap);
    if (pb->npushed) memcpy(v, pb->pushed, sizeof(Sym *) * (size_t)pb->npushed);
    pb->pushed = v;
    pb->cappushed = cap;
  }
  pb->pushed[pb->npushed++] = x;
}

/* Raises when a name of q is bound twice in the patterns bound so far. */
static void pat_check_dup(const PatBind *pb, const Term *q) {
  for (int i = 0; i < pb->npushed; i++)
    if (strcmp(pb->pushed[i]->name, q->str) == 0) fe_error(q->span, "duplicate name '%s' in pattern", q->str);
}

/* A fresh symbol (not a user's name) in the current frame. */
static Sym *hidden_sym(Ck *c, const char *name, const Type *t, Span s) {
  Sym *x = fe_sym_new(name, t, s);
  x->slot = c->nslots++;
  return x;
}

/* Binds pattern q to a value of type t held by root (NULL only for the
   root of a let's tuple pattern, split straight from its rhs). Returns
   the symbol bound to the whole value: q's name, or root. */
static Sym *bind_pattern(Ck *c, const Term *q, const Type *t, Sym *root, PatBind *pb) {
  if (q->kind == T_NAME) {
    ASSERT(!root);
    pat_check_dup(pb, q);
    Sym *x = local_push(c, q->str, t, q->span);
    pat_push_sym(pb, x);
    return x;
  }
  if (!t || t->kind != TY_TUPLE || t->n != q->nkids)
    fe_error(q->span, "pattern %s needs a tuple of %d components, found %s", pattern_str(q), q->nkids,
             tystr(t));
  Sym **xs = NEW_ARRAY(Sym *, q->nkids);
  for (int i = 0; i < q->nkids; i++) {
    const Term *k = q->kids[i];
    Sym *h = k->kind == T_NAME ? NULL : hidden_sym(c, pattern_sym_name(k), t->elems[i], k->span);
    xs[i] = bind_pattern(c, k, t->elems[i], h, pb);
  }
  if (pb->nsteps == pb->capsteps) {
    int cap = pb->capsteps ? pb->capsteps * 2 : 4;
    PatStep *v = NEW_ARRAY(PatStep, cap);
    if (pb->nsteps) memcpy(v, pb->steps, sizeof(PatStep) * (size_t)pb->nsteps);
    pb->steps = v;
    pb->capsteps = cap;
  }
  PatStep *st = &pb->steps[pb->nsteps++]; /* after its inner steps: it wraps them */
  st->src = root;
  st->n = q->nkids;
  st->xs = xs;
  st->span = q->span;
  return root;
}

/* Binds the parameter or state pattern q of type t: a name is pushed as
   it is; a tuple pattern gets a fresh symbol that its LETTUPs split. */
static Sym *bind_param(Ck *c, const Term *q, const Type *t, PatBind *pb) {
  if (q->kind == T_NAME) return bind_pattern(c, q, t, NULL, pb);
  Sym *root = hidden_sym(c, pattern_sym_name(q), t, q->span);
  return bind_pattern(c, q, t, root, pb);
}

/* Wraps body in the LETTUPs of pb (the root's, when its src is NULL,
   splitting rhs). */
static Term *pat_wrap(const PatBind *pb, Term *rhs, Term *body) {
  for (int k = 0; k < pb->nsteps; k++) {
    const PatStep *st = &pb->steps[k];
    const Type **ts = NEW_ARRAY(const Type *, st->n);
    for (int i = 0; i < st->n; i++) ts[i] = st->xs[i]->type;
    Term *src = st->src ? fe_term_var(st->span, st->src) : rhs;
    ASSERT(src);
    Term *kids[2] = {src, body};
    Term *r = fe_term_kids(st->span, T_LETTUP, body->type, 2, kids);
    r->syms = st->xs;
    r->nsyms = st->n;
    body = r;
  }
  return body;
}

static void pat_pop(Ck *c, const PatBind *pb) {
  for (int i = pb->npushed - 1; i >= 0; i--) local_pop(c, pb->pushed[i]);
}

/* ---- Builtins ---- */

/* The checked file name of load/save: a string literal. */
static Term *check_file_arg(const Term *a, const char *who) {
  if (a->kind != T_STR) fe_error(a->span, "%s expects a file name in double quotes", who);
  Term *k = fe_term_new(T_STR, a->span, NULL);
  k->str = a->str;
  return k;
}

/* A lambda applying a scalar builtin or operator p to its parameters. */
static Term *prim_lambda(Ck *c, Span s, Prim p, const char *name, const char *who, int np,
                         const Type **pt) {
  const PrimInfo *pi = &fe_prims[p];
  if (pi->cls != P_SCALAR1 && pi->cls != P_SCALAR2)
    fe_error(s, "%s's function must be a lambda %s, an operator section or a scalar function; "
                "'%s' is not", who, lambda_shape(np), name);
  if (pi->arity != np)
    fe_error(s, "%s's function takes %s, found %d", who, count(np, "parameter"), pi->arity);
  Sym *xs[2];
  Term *vs[2];
  for (int i = 0; i < np; i++) {
    if (!is_real(pt[i]))
      fe_error(s, "'%s' expects R operands, found %s", name, tystr(pt[i]));
    xs[i] = fe_sym_new(i == 0 ? "x" : "y", pt[i], s);
    xs[i]->slot = c->nslots++;
    vs[i] = fe_term_var(s, xs[i]);
  }
  return mk_lam(s, np, xs, fe_term_prim(s, fe_ty_real(), p, np, vs));
}

/* A derivative operator without arguments, (grad f), as a combinator's
   function: the surface lambda (x1 ... xn. grad f x1 ... xn), its
   parameters named so that no user name can capture them. */
static Term *deriv_lambda(const Term *f, int np) {
  Term *app = fe_term_new(T_GRADREF, f->span, NULL);
  *app = *f;
  app->nkids = np;
  app->kids = NEW_ARRAY(Term *, np);
  Term *lam = fe_term_new(T_LAM, f->span, NULL);
  lam->nnames = np;
  lam->names = NEW_ARRAY(const char *, np);
  for (int i = 0; i < np; i++) {
    lam->names[i] = una_sprintf("#%d", i + 1);
    app->kids[i] = fe_term_new(T_NAME, f->span, NULL);
    app->kids[i]->str = lam->names[i];
  }
  lam->nkids = 1;
  lam->kids = NEW_ARRAY(Term *, 1);
  lam->kids[0] = app;
  return lam;
}

/* Checks the function argument f of combinator who, given its parameter
   types; ret, when not NULL, is the result type it must have. Returns LAM. */
static NOINLINE Term *check_fun(Ck *c, const Term *f, const char *who, int np, const Type **pt,
                                const Type *ret) {
  Term *lam;
  switch (f->kind) {
  case T_LAM: {
    if (f->nnames != np) {
      bool curry = np == 1 && f->nnames > 1 && pt[0] && pt[0]->kind == TY_TUPLE && pt[0]->n == f->nnames;
      fe_error(f->span, "%s's function takes %s, found %d%s", who, count(np, "parameter"), f->nnames,
               curry ? "; to split a tuple element, use a tuple pattern: ((x, y). e)" : "");
    }
    for (int i = 0; i < np; i++)
      for (int j = 0; j < i && f->names[i]; j++)
        if (f->names[j] && strcmp(f->names[i], f->names[j]) == 0)
          fe_error(f->name_spans ? f->name_spans[i] : f->span, "duplicate parameter '%s' in lambda", f->names[i]);
    Sym *xs[3];
    PatBind pb = {0};
    for (int i = 0; i < np; i++) {
      const Term *q = f->pats && f->pats[i] ? f->pats[i] : NULL;
      if (!q) {
        Term *nm = fe_term_new(T_NAME, f->name_spans ? f->name_spans[i] : f->span, NULL);
        nm->str = f->names[i];
        q = nm;
      }
      xs[i] = bind_param(c, q, pt[i], &pb);
    }
    Term *body = pat_wrap(&pb, NULL, check(c, f->kids[0]));
    pat_pop(c, &pb);
    if (ret && !fe_type_eq(body->type, ret))
      fe_error(f->kids[0]->span, "%s's function must return %s, found %s", who, tystr(ret),
               tystr(body->type));
    return mk_lam(f->span, np, xs, body);
  }
  case T_OPREF: {
    const PrimInfo *pi = &fe_prims[f->prim];
    lam = prim_lambda(c, f->span, f->prim, pi->sym ? pi->sym : pi->name, who, np, pt);
    break;
  }
  case T_NAME: {
    Res r = resolve(c, f->str);
    switch (r.kind) {
    case RES_LOCAL:
    case RES_GLOBAL:
    case RES_CONST: fe_error(f->span, "'%s' is not a function", f->str);
    case RES_NONE: unknown_name(c, f->span, f->str);
    case RES_PRIM: lam = prim_lambda(c, f->span, r.prim, f->str, who, np, pt); break;
    case RES_FST:
    case RES_SND: {
      if (np != 1) fe_error(f->span, "%s's function takes %s, found 1", who, count(np, "parameter"));
      Sym *x = fe_sym_new("x", pt[0], f->span);
      x->slot = c->nslots++;
      Term *body = mk_proj(f->span, fe_term_var(f->span, x), r.kind == RES_FST ? 0 : 1);
      lam = mk_lam(f->span, 1, &x, body);
      break;
    }
    case RES_DEF: {
      Def *d = r.def;
      if (d->nparams != np)
        fe_error(f->span, "%s's function takes %s, found %d", who, count(np, "parameter"),
                 d->nparams);
      Sym *xs[3];
      Term *vs[3];
      for (int i = 0; i < np; i++) {
        if (!fe_type_eq(d->params[i]->type, pt[i]))
          arg_mismatch(f->span, i, f->str, tystr(d->params[i]->type), pt[i]);
        xs[i] = fe_sym_new(d->params[i]->name, pt[i], f->span);
        xs[i]->slot = c->nslots++;
        vs[i] = fe_term_var(f->span, xs[i]);
      }
      lam = mk_lam(f->span, np, xs, mk_call(f->span, d, np, vs));
      break;
    }
    default: UNREACHABLE();
    }
    break;
  }
  case T_GRADREF:
    /* an applied derivative is a value, not a function */
    if (f->nkids == 0) return check_fun(c, deriv_lambda(f, np), who, np, pt, ret);
    /* fall through */
  default:
    fe_error(f->span,
             "argument 1 of '%s' must be a function: a lambda %s, an operator section such as "
             "(+), a function name or a derivative operator such as (grad f)",
             who, lambda_shape(np));
  }
  const Type *bt = lam->kids[0]->type;
  if (ret && !fe_type_eq(bt, ret))
    fe_error(f->span, "%s's function must return %s, found %s", who, tystr(ret), tystr(bt));
  return lam;
}

/* Checks an array builtin applied to its (arity-checked) arguments: the
   arguments in order, the function argument last (its parameter types
   follow from the others), by the rules of prim_type.h. */
static NOINLINE Term *check_array_prim(Ck *c, Span s, Prim p, const char *who, Term *const *uargs) {
  enum { MAXA = 5 };
  Term *k[MAXA] = {NULL};
  const Type *ts[MAXA] = {NULL};
  Term *const *args = uargs;
  int n = fe_prims[p].arity;
  ASSERT(n <= MAXA);
  /* reduce_by_index D f v I V keeps its function first: f D v I V; user
     is the argument's number as the user wrote it */
  Term *swapped[MAXA];
  int user[MAXA];
  for (int i = 0; i < n; i++) user[i] = i;
  if (p == PRIM_REDUCE_BY_INDEX) {
    memcpy(swapped, uargs, sizeof(Term *) * (size_t)n);
    swapped[0] = uargs[1];
    swapped[1] = uargs[0];
    user[0] = 1;
    user[1] = 0;
    args = swapped;
  }
  bool fun = false;
  for (int i = 0; i < n; i++) {
    switch (fe_prim_arg_kind(p, i)) {
    case ARG_FUN: fun = true; continue;
    case ARG_FILE: k[i] = check_file_arg(args[i], who); continue;
    default: break;
    }
    k[i] = check(c, args[i]);
    ts[i] = k[i]->type;
    const char *want = fe_prim_arg_want(p, i, ts);
    if (want) arg_mismatch(args[i]->span, user[i], who, want, ts[i]);
  }
  if (fun) {
    const Type *pt[3], *ret;
    int np = fe_prim_fun_sig(p, ts, pt, &ret);
    k[0] = check_fun(c, args[0], who, np, pt, ret);
    ts[0] = k[0]->kids[0]->type;
  }
  return fe_term_prim(s, fe_prim_array_result(p, ts), p, n, k);
}

/* a[i], a[i:j]: the array, then R indices (an index's span is its '['). */
static NOINLINE Term *check_index(Ck *c, const Term *t) {
  Term *k[3];
  k[0] = check(c, t->kids[0]);
  if (!k[0]->type || k[0]->type->kind != TY_ARRAY)
    fe_error(t->span, "cannot index a value of type %s: only arrays have elements", tystr(k[0]->type));
  for (int i = 1; i < t->nkids; i++) {
    k[i] = check(c, t->kids[i]);
    if (!is_real(k[i]->type))
      fe_error(t->kids[i]->span, "an index must be R, found %s", tystr(k[i]->type));
  }
  const Type *ty = t->prim == PRIM_INDEX ? k[0]->type->elem : k[0]->type;
  return fe_term_prim(t->span, ty, t->prim, t->nkids, k);
}

/* A note "a call is written f a b, not f(a, b)" when the n arguments of a
   call that wants want are one tuple of want components: f(1, 2) written
   as in C or Python; else "". */
static const char *call_hint(int want, int n, Term *const *args) {
  if (n == 1 && want > 1 && args[0]->kind == T_TUPLE && args[0]->nkids == want)
    return fe_note(args[0]->span, "a call is written f a b, not f(a, b)");
  return "";
}

/* Raises a hinted error for `f -2` (f a function): a negative argument
   written without parentheses, which reads as f minus 2. */
static void check_minus_slip(Ck *c, const Term *t) {
  if (t->kind != T_PRIM || t->prim != PRIM_SUB || t->nkids != 2 || t->kids[0]->kind != T_NAME) return;
  const Term *f = t->kids[0];
  Res r = resolve(c, f->str);
  int np = r.kind == RES_DEF ? r.def->nparams : r.kind == RES_PRIM ? fe_prims[r.prim].arity : 0;
  if (np < 1) return;
  fe_error(f->span, "'%s' is a function of %s, and '%s -%s' subtracts from it%s", f->str, count(np, "parameter"),
           f->str, fe_term_str(t->kids[1]),
           fe_note(f->span, una_sprintf("write %s (-%s): application binds tighter than '-'", f->str,
                                        fe_term_str(t->kids[1]))));
}

/* Checks builtin p applied to n arguments; who is how the user wrote it
   (an operator symbol when op, else the function name). */
static NOINLINE Term *check_prim(Ck *c, Span s, Prim p, const char *who, bool op, int n,
                                 Term *const *args) {
  const PrimInfo *pi = &fe_prims[p];
  if (n != pi->arity)
    fe_error(s, "'%s' expects %s, found %d%s", who, count(pi->arity, "argument"), n, call_hint(pi->arity, n, args));
  if (p == PRIM_STOPGRAD) { /* any type: R has its scalar builtin */
    Term *a = check(c, args[0]);
    if (!is_real(a->type)) return fe_term_prim(s, a->type, PRIM_STOPGRAD_ANY, 1, &a);
    return fe_term_prim(s, a->type, p, 1, &a);
  }
  if (pi->cls == P_ARRAY) return check_array_prim(c, s, p, who, args);
  Term *k[2];
  const Type *ts[2];
  for (int i = 0; i < n; i++) {
    k[i] = check(c, args[i]);
    ts[i] = k[i]->type;
  }
  PrimMismatch m;
  const Type *type = fe_prim_scalar_type(p, ts, &m);
  if (!type) {
    Span as = args[m.arg]->span;
    if (m.differ)
      fe_error(as, "'%s' operands differ: left is %s, right is %s", who, tystr(ts[0]), tystr(ts[1]));
    if (!op) arg_mismatch(as, m.arg, who, m.want, ts[m.arg]);
    if (n == 1)
      fe_error(as, "'%s' expects %s %s operand, found %s", who, m.want[0] == 'R' ? "an" : "a",
               m.want, tystr(ts[m.arg]));
    fe_error(as, "'%s' expects %s operands, found %s", who, m.want, tystr(ts[m.arg]));
  }
  return fe_term_prim(s, type, p, n, k);
}

/* ---- Gradients ---- */


/* The function F of a derivative operator, resolved to a Def: a named
   def; a lambda, lifted to a def whose first nfree parameters are its free
   variables (passed as the variables free[] where it is used); or another
   derivative operator, a def whose body applies it to the parameters. */
typedef struct DFun {
  Def *d;
  int nfree;
  Term **free;
  const char *name; /* for messages */
} DFun;

/* What the operator t makes of fun: the parameters differentiated (wrt,
   indexes into fun.d's parameters), the extra arguments after f's own (a
   cotangent for vjp, the tangents for jvp) and the result type. */
typedef struct DSig {
  int *wrt, nwrt;
  const Type **extra;
  int nextra;
  const Type *ret;
} DSig;

static DFun deriv_fun(Ck *c, const Term *t, const Type **argt, int nargt);

static const char *op_name(const Term *t) { return fe_deriv_op_names[t->index]; }

static DSig deriv_sig(Ck *c, const Term *t, DFun fun) {
  const char *op = op_name(t), *name = fun.name;
  Def *d = fun.d;
  int nvis = d->nparams - fun.nfree;
  DSig g = {NEW_ARRAY(int, d->nparams > 0 ? d->nparams : 1), 0, NULL, 0, NULL};
  if ((t->index == DOP_GRAD || t->index == DOP_VALUE_AND_GRAD) && !is_real(d->ret))
    fe_error(t->span, "%s needs a function returning R; '%s' returns %s%s", op, name, tystr(d->ret),
             t->index == DOP_GRAD ? " (vjp takes any result)" : "");
  if ((t->index == DOP_VJP || t->index == DOP_JVP) && !fe_type_has_reals(d->ret))
    fe_error(t->span, "%s needs a function whose result has reals (R, arrays, tuples); '%s' "
                      "returns %s", op, name, tystr(d->ret));
  if (t->nnames == 0) {
    for (int i = fun.nfree; i < d->nparams; i++)
      if (fe_type_has_reals(d->params[i]->type)) g.wrt[g.nwrt++] = i;
    if (g.nwrt == 0)
      fe_error(t->span, "%s needs a function with a parameter that has reals in its type; '%s' has none",
               op, name);
  } else {
    if (t->nnames > nvis)
      fe_error(t->span, "'%s' has %s; wrt names %d", name, count(nvis, "parameter"), t->nnames);
    for (int j = 0; j < t->nnames; j++) {
      Span s = t->name_spans ? t->name_spans[j] : t->span;
      int i = fun.nfree;
      while (i < d->nparams && strcmp(d->params[i]->name, t->names[j]) != 0) i++;
      if (i == d->nparams) fe_error(s, "'%s' is not a parameter of '%s'", t->names[j], name);
      if (!fe_type_has_reals(d->params[i]->type))
        fe_error(s, "cannot differentiate with respect to '%s': its type %s has no reals", t->names[j],
                 tystr(d->params[i]->type));
      for (int k = 0; k < g.nwrt; k++)
        if (g.wrt[k] == i) fe_error(s, "'%s' is named twice after wrt", t->names[j]);
      g.wrt[g.nwrt++] = i;
    }
  }
  /* gradients, cotangents and tangents have the tangent types (tau) */
  const Type *gtype;
  if (g.nwrt == 1) {
    gtype = fe_ty_tangent(d->params[g.wrt[0]]->type);
  } else {
    const Type **gt = NEW_ARRAY(const Type *, g.nwrt);
    for (int k = 0; k < g.nwrt; k++) gt[k] = fe_ty_tangent(d->params[g.wrt[k]]->type);
    gtype = fe_ty_tuple(g.nwrt, gt);
  }
  const Type *rtan = fe_type_has_reals(d->ret) ? fe_ty_tangent(d->ret) : NULL;
  switch ((DerivOp)t->index) {
  case DOP_GRAD: g.ret = gtype; break;
  case DOP_VALUE_AND_GRAD: g.ret = fe_ty_pair(d->ret, gtype); break;
  case DOP_VJP:
    g.ret = gtype;
    g.nextra = 1;
    g.extra = NEW_ARRAY(const Type *, 1);
    g.extra[0] = rtan;
    break;
  case DOP_JVP:
    g.ret = fe_ty_pair(d->ret, rtan);
    g.nextra = g.nwrt;
    g.extra = NEW_ARRAY(const Type *, g.nwrt);
    for (int k = 0; k < g.nwrt; k++) {
      const Type *pt = d->params[g.wrt[k]]->type;
      if (!fe_type_tau_injective(pt))
        fe_error(t->span, "jvp: parameter '%s' has type %s: an array of booleans beside reals takes no "
                          "tangent yet", d->params[g.wrt[k]]->name, tystr(pt));
      g.extra[k] = fe_ty_tangent(pt);
    }
    break;
  }
  return g;
}

/* A lambda under a derivative operator, lifted to a def over its free
   variables and its parameters (whose types are those of the arguments). */
static DFun lift_lambda(Ck *c, const Term *t, const Term *fn, const Type **argt, int nargt) {
  int np = fn->nnames;
  const char *op = op_name(t);
  if (np > 3)
    fe_error(fn->span, "a lambda under %s takes at most 3 parameters, found %d; use a def", op, np);
  if (nargt < np)
    fe_error(fn->span, "the types of the lambda's parameters come from the arguments: apply %s to %s",
             op, count(np, "argument"));
  Term *lam = check_fun(c, fn, op, np, argt, NULL);
  Sym **fv = NULL;
  int nfv = fe_free_vars(lam, &fv);
  int n = nfv + np;
  Sym **from = NEW_ARRAY(Sym *, n), **params = NEW_ARRAY(Sym *, n);
  Term **to = NEW_ARRAY(Term *, n);
  DFun r = {NULL, nfv, NEW_ARRAY(Term *, nfv > 0 ? nfv : 1), NULL};
  for (int i = 0; i < n; i++) {
    from[i] = i < nfv ? fv[i] : lam->syms[i - nfv];
    params[i] = fe_sym_new(from[i]->name, from[i]->type, from[i]->span);
    to[i] = fe_term_var(fn->span, params[i]);
    if (i < nfv) r.free[i] = fe_term_var(fn->span, fv[i]);
  }
  Term *body = fe_subst(lam->kids[0], n, from, to);
  r.name = una_sprintf("(lambda at %d:%d)", fn->span.line, fn->span.col);
  r.d = fe_mk_def(una_sprintf("lambda_%d_%d", fn->span.line, fn->span.col), fn->span, n, params, body);
  r.d->ret = body->type;
  return r;
}

static DFun deriv_fun(Ck *c, const Term *t, const Type **argt, int nargt) {
  if (t->fn && t->fn->kind == T_LAM) return lift_lambda(c, t, t->fn, argt, nargt);
  if (t->fn) { /* another derivative operator: a def applying it */
    const Term *g = t->fn;
    DFun in = deriv_fun(c, g, argt, nargt);
    DSig sg = deriv_sig(c, g, in);
    Def *d = in.d;
    int n = d->nparams + sg.nextra;
    Sym **params = NEW_ARRAY(Sym *, n);
    Term **vars = NEW_ARRAY(Term *, n);
    for (int i = 0; i < n; i++) {
      const char *nm = i < d->nparams ? d->params[i]->name
                       : g->index == DOP_VJP ? "c"
                                             : una_sprintf("d%s", d->params[sg.wrt[i - d->nparams]]->name);
      const Type *ty = i < d->nparams ? d->params[i]->type : sg.extra[i - d->nparams];
      params[i] = fe_sym_new(nm, ty, g->span);
      vars[i] = fe_term_var(g->span, params[i]);
    }
    Term *body = fe_term_kids(g->span, T_GRAD, sg.ret, n, vars);
    body->def = d;
    body->wrt = sg.wrt;
    body->nwrt = sg.nwrt;
    body->index = g->index;
    DFun r = {NULL, in.nfree, in.free, una_sprintf("(%s %s)", op_name(g), in.name)};
    r.d = fe_mk_def(una_sprintf("%s_%s", op_name(g), in.d->name), g->span, n, params, body);
    r.d->ret = sg.ret;
    return r;
  }
  const char *name = t->str;
  Span at = t->str_span.line > 0 ? t->str_span : t->span;
  Res r = resolve(c, name);
  switch (r.kind) {
  case RES_DEF: break;
  case RES_NONE: unknown_name(c, at, name);
  case RES_PRIM:
  case RES_FST:
  case RES_SND:
    fe_error(at, "%s needs a user-defined function or a lambda; '%s' is a builtin (write (x. %s x))",
             op_name(t), name, name);
  default: fe_error(at, "%s needs a function; '%s' is not a function", op_name(t), name);
  }
  return (DFun){r.def, 0, NULL, name};
}

/* Resolves the function and the wrt list of a grad (T_GRADREF t): the
   def, its parameter indexes in wrt and nwrt, and the gradient's type. */
static const Type *grad_target(Ck *c, const Term *t, Def **def, int **wrt_out, int *nwrt_out) {
  DFun fun = deriv_fun(c, t, NULL, 0);
  DSig g = deriv_sig(c, t, fun);
  *def = fun.d;
  *wrt_out = g.wrt;
  *nwrt_out = g.nwrt;
  return g.ret;
}

/* Checks a derivative operator applied to its arguments. With unapplied
   set, one without arguments is allowed: returns NULL and sets
   *fun_type. */
static NOINLINE Term *check_grad(Ck *c, const Term *t, bool unapplied, const Type **fun_type) {
  const char *op = op_name(t);
  Term **k = NEW_ARRAY(Term *, t->nkids > 0 ? t->nkids : 1);
  const Type **argt = NEW_ARRAY(const Type *, t->nkids > 0 ? t->nkids : 1);
  for (int i = 0; i < t->nkids; i++) {
    k[i] = check(c, t->kids[i]);
    argt[i] = k[i]->type;
  }
  DFun fun = deriv_fun(c, t, argt, t->nkids);
  DSig g = deriv_sig(c, t, fun);
  Def *d = fun.d;
  int nvis = d->nparams - fun.nfree, nargs = nvis + g.nextra;
  const Type **pt = NEW_ARRAY(const Type *, nargs > 0 ? nargs : 1);
  for (int i = 0; i < nargs; i++) pt[i] = i < nvis ? d->params[fun.nfree + i]->type : g.extra[i - nvis];
  if (t->nkids == 0 && unapplied) {
    *fun_type = fe_ty_fun(nargs, pt, g.ret);
    return NULL;
  }
  const char *who = una_sprintf("%s %s", op, fun.name);
  if (t->nkids == 0) fe_error(t->span, "%s needs %s", who, count(nargs, "argument"));
  if (t->nkids != nargs)
    fe_error(t->span, "%s needs %s%s, found %d", who, count(nargs, "argument"),
             t->index == DOP_VJP ? " (the last one the cotangent of the result)"
             : t->index == DOP_JVP ? " (the points, then one tangent per parameter differentiated)"
                                   : "",
             t->nkids);
  for (int i = 0; i < nargs; i++)
    if (!fe_type_eq(k[i]->type, pt[i])) arg_mismatch(t->kids[i]->span, i, who, tystr(pt[i]), k[i]->type);
  Term **all = NEW_ARRAY(Term *, fun.nfree + nargs);
  for (int i = 0; i < fun.nfree; i++) all[i] = fun.free[i];
  for (int i = 0; i < nargs; i++) all[fun.nfree + i] = k[i];
  Term *r = fe_term_kids(t->span, T_GRAD, g.ret, fun.nfree + nargs, all);
  r->def = d;
  r->wrt = g.wrt;
  r->nwrt = g.nwrt;
  r->index = t->index;
  return r;
}

/* ---- Expressions ---- */

static NOINLINE Term *check_name(Ck *c, const Term *t) {
  Res r = resolve(c, t->str);
  switch (r.kind) {
  case RES_LOCAL: return fe_term_var(t->span, r.sym);
  case RES_DEF:
    if (r.def->nparams == 0) return mk_call(t->span, r.def, 0, NULL);
    fe_error(t->span, "'%s' is a function of %s; apply it to arguments", t->str,
             count(r.def->nparams, "parameter"));
  case RES_GLOBAL: {
    Term *g = fe_term_new(T_GLOBAL, t->span, r.global->type);
    g->global = r.global;
    return g;
  }
  case RES_PRIM:
    fe_error(t->span, "'%s' is a function of %s; apply it to arguments", t->str,
             count(fe_prims[r.prim].arity, "parameter"));
  case RES_FST:
  case RES_SND:
    fe_error(t->span, "'%s' is a function of 1 parameter; apply it to arguments", t->str);
  case RES_CONST: return fe_term_num(t->span, r.num);
  case RES_NONE: unknown_name(c, t->span, t->str);
  }
  UNREACHABLE();
}

/* `value_and_grad F args` written as an application of the name (not a
   keyword: a script may bind it, and then it is that binding): the
   derivative operator, as a GRADREF. NULL when t is not one. */
static Term *as_value_and_grad(Ck *c, const Term *t) {
  if (t->kind != T_APPLY || strcmp(t->str, "value_and_grad") != 0 || resolve(c, t->str).kind != RES_NONE)
    return NULL;
  const Term *fn = t->kids[0];
  Term *g = fe_term_new(T_GRADREF, t->span, NULL);
  g->index = DOP_VALUE_AND_GRAD;
  if (fn->kind == T_NAME) {
    g->str = fn->str;
    g->str_span = fn->span;
  } else if (fn->kind == T_LAM || (fn->kind == T_GRADREF && fn->nkids == 0)) {
    g->fn = (Term *)fn;
  } else {
    fe_error(fn->span, "value_and_grad needs a function: a name, a lambda (x. e) or a derivative such as (grad f)");
  }
  fe_term_set_kids(g, t->nkids - 1, t->kids + 1);
  return g;
}

static NOINLINE Term *check_apply(Ck *c, const Term *t) {
  const char *f = t->str;
  int n = t->nkids;
  Res r = resolve(c, f);
  Term *vag = as_value_and_grad(c, t);
  if (vag) return check_grad(c, vag, false, NULL);
  switch (r.kind) {
  case RES_LOCAL:
  case RES_GLOBAL:
  case RES_CONST: fe_error(t->span, "'%s' is not a function", f);
  case RES_NONE: unknown_name(c, t->span, f);
  case RES_PRIM: return check_prim(c, t->span, r.prim, f, false, n, t->kids);
  case RES_FST:
  case RES_SND:
    if (n != 1) fe_error(t->span, "'%s' expects 1 argument, found %d", f, n);
    return mk_proj(t->span, check(c, t->kids[0]), r.kind == RES_FST ? 0 : 1);
  case RES_DEF: {
    Def *d = r.def;
    if (n != d->nparams)
      fe_error(t->span, "'%s' expects %s, found %d%s", f, count(d->nparams, "argument"), n,
               call_hint(d->nparams, n, t->kids));
    Term **k = NEW_ARRAY(Term *, n);
    for (int i = 0; i < n; i++) {
      k[i] = check(c, t->kids[i]);
      if (!fe_type_eq(k[i]->type, d->params[i]->type))
        arg_mismatch(t->kids[i]->span, i, f, tystr(d->params[i]->type), k[i]->type);
    }
    return mk_call(t->span, d, n, k);
  }
  }
  UNREACHABLE();
}

/* The name bound by a surface let: str, or names[0]. */
static const char *let_name(const Term *t, Span *s) {
  *s = t->name_spans ? t->name_spans[0] : t->span;
  if (t->str) return t->str;
  ASSERT(t->nnames == 1);
  return t->names[0];
}

static NOINLINE Term *check_let(Ck *c, const Term *t) {
  Span ns;
  const char *name = let_name(t, &ns);
  Term *rhs = check(c, t->kids[0]);
  Sym *x = local_push(c, name, rhs->type, ns);
  Term *body = check(c, t->kids[1]);
  local_pop(c, x);
  Term *k[2] = {rhs, body};
  Term *r = fe_term_kids(t->span, T_LET, body->type, 2, k);
  r->sym = x;
  return r;
}

/* The pattern of a surface LETTUP: pats[0], or the tuple of its names. */
static const Term *lettup_pattern(const Term *t) {
  if (t->pats && t->pats[0]) return t->pats[0];
  Term **ks = NEW_ARRAY(Term *, t->nnames);
  for (int i = 0; i < t->nnames; i++) {
    ks[i] = fe_term_new(T_NAME, t->name_spans ? t->name_spans[i] : t->span, NULL);
    ks[i]->str = t->names[i];
  }
  return fe_term_kids(t->span, T_TUPLE, NULL, t->nnames, ks);
}

static NOINLINE Term *check_lettup(Ck *c, const Term *t) {
  Term *rhs = check(c, t->kids[0]);
  PatBind pb = {0};
  bind_pattern(c, lettup_pattern(t), rhs->type, NULL, &pb);
  Term *body = pat_wrap(&pb, rhs, check(c, t->kids[1]));
  pat_pop(c, &pb);
  return body;
}

/* The function of a loop: (p. e), or (p, i. e) with the index i, where
   p binds the state of type st; e must be a want (NULL: the state's
   type), else a located error. */
static Term *loop_fun(Ck *c, const Term *t, const Type *st, const Term *e, const Type *want) {
  PatBind pb = {0};
  Sym *xs[2];
  xs[0] = bind_param(c, t->pats[0], st, &pb);
  int n = 1;
  if (t->index == LOOP_FOR) {
    xs[1] = local_push(c, t->names[0], fe_ty_real(), t->name_spans[0]);
    n = 2;
  }
  Term *body = check(c, e);
  if (want && !fe_type_eq(body->type, want))
    fe_error(e->span, "the condition of a while loop must be B, found %s", tystr(body->type));
  if (!want && !fe_type_eq(body->type, st))
    fe_error(e->span, "the loop body has type %s, but the loop's initial value has type %s",
             tystr(body->type), tystr(st));
  body = pat_wrap(&pb, NULL, body);
  if (n == 2) local_pop(c, xs[1]);
  pat_pop(c, &pb);
  return mk_lam(e->span, n, xs, body);
}

/* loop p = e0 for i < n do e: LOOP_FOR (p, i. e) e0 n, at the 'for';
   loop p = e0 while c do e: LOOP_WHILE (p. e) e0 (p. c), at the 'loop'. */
static NOINLINE Term *check_loop(Ck *c, const Term *t) {
  Term *k[3];
  k[1] = check(c, t->kids[0]);
  const Type *st = k[1]->type;
  if (t->index == LOOP_FOR) {
    k[2] = check(c, t->kids[1]); /* the count: outside the scope of p */
    if (!is_real(k[2]->type))
      fe_error(t->kids[1]->span, "the count of a for loop must be R, found %s", tystr(k[2]->type));
    k[0] = loop_fun(c, t, st, t->kids[2], NULL);
    return fe_term_prim(t->str_span, st, PRIM_LOOP_FOR, 3, k);
  }
  k[2] = loop_fun(c, t, st, t->kids[1], fe_ty_bool());
  k[0] = loop_fun(c, t, st, t->kids[2], NULL);
  return fe_term_prim(t->span, st, PRIM_LOOP_WHILE, 3, k);
}

/* (e : T): e checked as a T. An empty array literal, and arrays and
   tuples of them, take the ascribed type; load reads a file of T's rank. */
static NOINLINE Term *check_as(Ck *c, const Term *e, const Type *want, Span s) {
  fe_stack_check(e->span);
  if (e->kind == T_ASCRIBE) {
    Term *inner = check_as(c, e->kids[0], e->type, e->span);
    if (!fe_type_eq(inner->type, want))
      fe_error(s, "type ascription mismatch: the expression has type %s, not %s", tystr(inner->type),
               tystr(want));
    return inner;
  }
  if (e->kind == T_ARRAY && want->kind == TY_ARRAY) {
    Term **k = NEW_ARRAY(Term *, e->nkids > 0 ? e->nkids : 1);
    for (int i = 0; i < e->nkids; i++) k[i] = check_as(c, e->kids[i], want->elem, s);
    return fe_term_kids(e->span, T_ARRAY, want, e->nkids, k);
  }
  if (e->kind == T_TUPLE && want->kind == TY_TUPLE && want->n == e->nkids) {
    Term **k = NEW_ARRAY(Term *, e->nkids);
    for (int i = 0; i < e->nkids; i++) k[i] = check_as(c, e->kids[i], want->elems[i], s);
    return fe_term_kids(e->span, T_TUPLE, want, e->nkids, k);
  }
  Term *k = check(c, e);
  if (k->kind == T_PRIM && k->prim == PRIM_LOAD && fe_type_real_rank(want) >= 1) {
    k->type = want; /* load reads a file of want's rank (backend/npy.h) */
    return k;
  }
  if (!fe_type_eq(k->type, want))
    fe_error(s, "type ascription mismatch: the expression has type %s, not %s", tystr(k->type), tystr(want));
  return k;
}

static NOINLINE Term *check_if(Ck *c, const Term *t) {
  Term *k[3];
  k[0] = check(c, t->kids[0]);
  if (!is_bool(k[0]->type))
    fe_error(t->kids[0]->span, "condition of if must be B, found %s", tystr(k[0]->type));
  k[1] = check(c, t->kids[1]);
  k[2] = check(c, t->kids[2]);
  if (!fe_type_eq(k[1]->type, k[2]->type))
    fe_error(t->span, "if branches differ: then is %s, else is %s", tystr(k[1]->type),
             tystr(k[2]->type));
  return fe_term_kids(t->span, T_IF, k[1]->type, 3, k);
}

static NOINLINE Term *check_tuple(Ck *c, const Term *t) {
  int n = t->nkids;
  Term **k = NEW_ARRAY(Term *, n);
  const Type **ts = NEW_ARRAY(const Type *, n);
  for (int i = 0; i < n; i++) {
    k[i] = check(c, t->kids[i]);
    ts[i] = k[i]->type;
  }
  return fe_term_kids(t->span, T_TUPLE, fe_ty_tuple(n, ts), n, k);
}

static NOINLINE Term *check_array(Ck *c, const Term *t) {
  int n = t->nkids;
  Term **k = NEW_ARRAY(Term *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    k[i] = check(c, t->kids[i]);
    if (i > 0 && !fe_type_eq(k[i]->type, k[0]->type))
      fe_error(t->kids[i]->span, "array literal elements differ: element 1 is %s, element %d is %s",
               tystr(k[0]->type), i + 1, tystr(k[i]->type));
  }
  const Type *et = n > 0 ? k[0]->type : fe_ty_real();
  return fe_term_kids(t->span, T_ARRAY, fe_ty_array(et), n, k);
}

static Term *check(Ck *c, const Term *t) {
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_NUM: return fe_term_num(t->span, t->num);
  case T_BOOL: return fe_term_bool(t->span, t->b);
  case T_STR: fe_error(t->span, "a string can only be the file name argument of load or save");
  case T_NAME: return check_name(c, t);
  case T_APPLY: return check_apply(c, t);
  case T_PRIM: {
    const PrimInfo *pi = &fe_prims[t->prim];
    if (t->prim == PRIM_INDEX || t->prim == PRIM_SLICE) return check_index(c, t);
    check_minus_slip(c, t);
    return check_prim(c, t->span, t->prim, pi->sym ? pi->sym : pi->name, pi->sym != NULL,
                      t->nkids, t->kids);
  }
  case T_LET: return check_let(c, t);
  case T_LETTUP: return check_lettup(c, t);
  case T_IF: return check_if(c, t);
  case T_LOOP: return check_loop(c, t);
  case T_ASCRIBE: return check_as(c, t->kids[0], t->type, t->span);
  case T_TUPLE: return check_tuple(c, t);
  case T_PROJ: return mk_proj(t->span, check(c, t->kids[0]), t->index);
  case T_ARRAY: return check_array(c, t);
  case T_LAM:
    fe_error(t->span,
             "a lambda can only be the function argument of map, map2, reduce, foldl, scanl or scanr");
  case T_OPREF:
    fe_error(t->span, "an operator section can only be the function argument of map, map2, "
                      "reduce, foldl, scanl or scanr");
  case T_GRADREF: return check_grad(c, t, false, NULL);
  case T_VAR:
  case T_GLOBAL:
  case T_CALL:
  case T_GRAD:
  case T_APP:
  case T__COUNT: break;
  }
  UNREACHABLE();
}

/* ---- Top-level items ---- */

static Def *wrap_def(const char *name, Span s, Term *body, int nslots) {
  Def *d = NEW(Def);
  d->name = name;
  d->span = s;
  d->nparams = 0;
  d->params = NEW_ARRAY(Sym *, 1);
  d->ret = body->type;
  d->body = body;
  d->nslots = nslots;
  return d;
}

/* Checks a def item; returns the Def, not yet bound. Raises FeError. */
Def *fe_check_def(Env *env, const Item *it) {
  Ck c;
  ck_init(&c, env, it->name);
  Def *d = NEW(Def);
  d->name = it->name;
  d->span = it->name_span.line > 0 ? it->name_span : it->span;
  d->nparams = it->nparams;
  d->params = NEW_ARRAY(Sym *, it->nparams > 0 ? it->nparams : 1);
  for (int i = 0; i < it->nparams; i++) {
    const Param *p = &it->params[i];
    for (int j = 0; j < i; j++)
      if (strcmp(p->name, it->params[j].name) == 0)
        fe_error(p->span, "duplicate parameter '%s' of '%s'", p->name, it->name);
    d->params[i] = local_push(&c, p->name, p->type, p->span);
    /* not a let the user wrote where the def is inlined: the optimizer may
       move `let a = arg` to a's single use (optimizer/forward.c) */
    d->params[i]->user = false;
  }
  d->body = check(&c, it->body);
  if (it->ret && !fe_type_eq(it->ret, d->body->type))
    fe_error(it->body->span, "type mismatch in the result of '%s': expected %s, found %s", it->name,
             tystr(it->ret), tystr(d->body->type));
  d->ret = it->ret ? it->ret : d->body->type;
  d->nslots = c.nslots;
  return d;
}

/* Checks an expression item into a Def "<expr>" without parameters. */
Def *fe_check_expr(Env *env, const Term *e) {
  Ck c;
  ck_init(&c, env, NULL);
  Term *body = check(&c, e);
  return wrap_def("<expr>", e->span, body, c.nslots);
}

/* Checks a top-level let item: a Def "<let>" computing the right-hand side,
   and one Global per bound name in *globals. */
Def *fe_check_let(Env *env, const Item *it, Global ***globals) {
  static int next_global_id = 1;
  Ck c;
  ck_init(&c, env, NULL);
  Term *body = check(&c, it->body);
  int n = it->nnames;
  if (it->pat && it->pat->kind == T_TUPLE) { /* the value of the <let> Def: the tuple of the names */
    PatBind pb = {0};
    bind_pattern(&c, it->pat, body->type, NULL, &pb);
    Term **vs = NEW_ARRAY(Term *, pb.npushed);
    const Type **ts = NEW_ARRAY(const Type *, pb.npushed);
    for (int i = 0; i < pb.npushed; i++) {
      vs[i] = fe_term_var(it->span, pb.pushed[i]);
      ts[i] = vs[i]->type;
    }
    ASSERT(pb.npushed == n);
    bool flat = pb.nsteps == 1;
    if (!flat) body = pat_wrap(&pb, body, fe_term_kids(it->span, T_TUPLE, fe_ty_tuple(n, ts), n, vs));
    pat_pop(&c, &pb);
  }
  Global **gs = NEW_ARRAY(Global *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    Global *g = NEW(Global);
    g->name = it->names[i];
    g->id = next_global_id++;
    g->type = it->tuple_pattern ? body->type->elems[i] : body->type;
    g->span = it->name_spans ? it->name_spans[i] : it->span;
    gs[i] = g;
  }
  *globals = gs;
  return wrap_def("<let>", it->span, body, c.nslots);
}

/* The type of e for ":type"; a TY_FUN type for the bare name of a function
   or a scalar builtin, and for grad f without arguments. */
void fe_check_grad_target(Env *env, const Term *e, Def **f, int **wrt, int *nwrt) {
  Ck c;
  ck_init(&c, env, NULL);
  ASSERT(e->kind == T_GRADREF);
  grad_target(&c, e, f, wrt, nwrt);
}

const Type *fe_check_type_of(Env *env, const Term *e) {
  Ck c;
  ck_init(&c, env, NULL);
  if (e->kind == T_NAME) {
    Res r = resolve(&c, e->str);
    if (r.kind == RES_DEF && r.def->nparams > 0) {
      const Type **pt = NEW_ARRAY(const Type *, r.def->nparams);
      for (int i = 0; i < r.def->nparams; i++) pt[i] = r.def->params[i]->type;
      return fe_ty_fun(r.def->nparams, pt, r.def->ret);
    }
    if (r.kind == RES_PRIM && (fe_prims[r.prim].cls == P_SCALAR1 || fe_prims[r.prim].cls == P_SCALAR2)) {
      const Type *pt[2] = {fe_ty_real(), fe_ty_real()};
      return fe_ty_fun(fe_prims[r.prim].arity, pt, fe_ty_real());
    }
  }
  Term *vag = as_value_and_grad(&c, e);
  if (vag) e = vag;
  if (e->kind == T_GRADREF && e->nkids == 0) {
    const Type *ft = NULL;
    check_grad(&c, e, true, &ft);
    return ft;
  }
  return fe_check_expr(env, e)->ret;
}

const char *fe_check_type_text(Env *env, const Term *e) {
  if (e->kind == T_NAME) {
    Ck c;
    ck_init(&c, env, NULL);
    Res r = resolve(&c, e->str);
    if (r.kind == RES_PRIM && fe_prim_signature(r.prim)) return fe_prim_signature(r.prim);
  }
  return fe_type_str(fe_check_type_of(env, e));
}
