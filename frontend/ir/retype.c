/* retype.c: the re-checker of checked and target Defs (see retype.h). Each
   node's type is compared with the type its kids' (already stored) types
   give by the checker's rules; the kids are then checked in turn. Let
   chains are walked in a loop, so long straight-line bodies need no deep
   recursion. */
#include "retype.h"
#include "prim_type.h"

/* Binder states in the table. */
enum { IN_SCOPE = 1, OUT_OF_SCOPE = 2 };

typedef struct Rt {
  const Def *def;
  const Sym **keys; /* open addressing on the Sym pointer */
  char *state;
  size_t cap, n;
  int *slot_owner_id; /* per slot: id of the Sym holding it, 0 = free */
} Rt;

static _Noreturn void bad(const Term *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static _Noreturn void bad(const Term *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = una_vsprintf(fmt, ap);
  va_end(ap);
  fe_error(t->span, "internal: '%s' node at %d:%d: %s", fe_term_kind_names[t->kind], t->span.line,
           t->span.col, msg);
}

static const char *ty(const Type *t) { return t ? fe_type_str(t) : "no type"; }

static bool eq(const Type *a, const Type *b) { return a && b && fe_type_eq(a, b); }

static size_t slot_of(const Rt *r, const Sym *x) {
  size_t i = ((uintptr_t)x >> 4) * 0x9E3779B97F4A7C15ull >> 17 & (r->cap - 1);
  while (r->keys[i] && r->keys[i] != x) i = (i + 1) & (r->cap - 1);
  return i;
}

static void grow(Rt *r) {
  Rt g = *r;
  g.cap = r->cap ? r->cap * 2 : 64;
  g.keys = NEW_ARRAY(const Sym *, g.cap);
  g.state = una_alloc(g.cap);
  for (size_t i = 0; i < r->cap; i++)
    if (r->keys[i]) {
      size_t j = slot_of(&g, r->keys[i]);
      g.keys[j] = r->keys[i];
      g.state[j] = r->state[i];
    }
  *r = g;
}

static int state_of(const Rt *r, const Sym *x) {
  if (!r->cap) return 0;
  size_t i = slot_of(r, x);
  return r->keys[i] ? r->state[i] : 0;
}

static void set_state(Rt *r, const Sym *x, int st) {
  if ((r->n + 1) * 2 > r->cap) grow(r);
  size_t i = slot_of(r, x);
  if (!r->keys[i]) {
    r->keys[i] = x;
    r->n++;
  }
  r->state[i] = (char)st;
}

/* Brings the binder x (bound by node t) into scope: it must be typed, not
   bound before in the Def, and own a slot of its own. */
static void bind(Rt *r, const Term *t, const Sym *x) {
  if (!x) bad(t, "binder missing");
  if (!x->type) bad(t, "binder '%s' (#%d) has no type", x->name, x->id);
  if (state_of(r, x)) bad(t, "'%s' (#%d) is bound twice in '%s'", x->name, x->id, r->def->name);
  if (x->slot < 0 || x->slot >= r->def->nslots)
    bad(t, "'%s' (#%d) has slot %d outside the frame of %d", x->name, x->id, x->slot,
        r->def->nslots);
  if (r->slot_owner_id[x->slot])
    bad(t, "'%s' (#%d) shares slot %d with #%d", x->name, x->id, x->slot,
        r->slot_owner_id[x->slot]);
  r->slot_owner_id[x->slot] = x->id ? x->id : -1;
  set_state(r, x, IN_SCOPE);
}

static void unbind(Rt *r, const Sym *x) { set_state(r, x, OUT_OF_SCOPE); }

static void check(Rt *r, const Term *t);

/* The node's stored type must be want. */
static void expect_type(const Term *t, const Type *want) {
  if (!eq(t->type, want)) bad(t, "has type %s, its parts give %s", ty(t->type), ty(want));
}

static void expect_kid(const Term *t, int i, const Type *want, const char *what) {
  if (!eq(t->kids[i]->type, want))
    bad(t, "%s must be %s, found %s", what, ty(want), ty(t->kids[i]->type));
}

static void expect_nkids(const Term *t, int n) {
  if (t->nkids != n || (n > 0 && !t->kids)) bad(t, "has %d children, expected %d", t->nkids, n);
  for (int i = 0; i < n; i++)
    if (!t->kids[i]) bad(t, "child %d is missing", i + 1);
}

static const Type *R(void) { return fe_ty_real(); }
static const Type *Bt(void) { return fe_ty_bool(); }

/* A combinator's function argument: a LAM with n parameters of the given
   types whose body has type ret (when ret is not NULL). Returns the body
   type. */
static const Type *check_fun_arg(Rt *r, const Term *t, int k, int n, const Type *const *ps,
                                 const Type *ret) {
  const Term *f = t->kids[k];
  const char *who = fe_prims[t->prim].name;
  if (f->kind != T_LAM) bad(t, "%s's function must be a lambda, found a '%s' node", who,
                            fe_term_kind_names[f->kind]);
  if (f->nsyms != n) bad(t, "%s's function takes %d parameters, expected %d", who, f->nsyms, n);
  for (int i = 0; i < n; i++)
    if (!f->syms || !f->syms[i] || !eq(f->syms[i]->type, ps[i]))
      bad(t, "parameter %d of %s's function must be %s, found %s", i + 1, who, ty(ps[i]),
          f->syms && f->syms[i] ? ty(f->syms[i]->type) : "nothing");
  if (f->nkids != 1 || !f->kids || !f->kids[0]) bad(f, "lambda without a body");
  const Type *bt = f->kids[0]->type;
  if (ret && !eq(bt, ret)) bad(t, "%s's function must return %s, found %s", who, ty(ret), ty(bt));
  if (!bt) bad(f, "lambda body has no type");
  return bt;
}

static void check_file_arg(const Term *t, int i) {
  const Term *k = t->kids[i];
  if (k->kind != T_STR || !k->str) bad(t, "argument %d must be a file name, found a '%s' node",
                                       i + 1, fe_term_kind_names[k->kind]);
}

static bool is_array(const Type *t) { return t && t->kind == TY_ARRAY; }

/* An array builtin, by the rules of prim_type.h. */
static void check_array_prim(Rt *r, const Term *t) {
  const Type *ts[5] = {NULL};
  bool fun = false;
  int cond = -1;
  ASSERT(t->nkids <= 5);
  for (int i = 0; i < t->nkids; i++) {
    switch (fe_prim_arg_kind(t->prim, i)) {
    case ARG_FUN: fun = true; continue;
    case ARG_COND: cond = i; continue;
    case ARG_FILE: check_file_arg(t, i); continue;
    default: break;
    }
    ts[i] = t->kids[i]->type;
    const char *want = fe_prim_arg_want(t->prim, i, ts);
    if (want) bad(t, "argument %d of %s must be %s, found %s", i + 1, fe_prims[t->prim].name, want, ty(ts[i]));
  }
  if (cond >= 0) {
    const Type *pt[1] = {ts[1]};
    check_fun_arg(r, t, cond, 1, pt, Bt());
  }
  if (fun) {
    const Type *pt[3] = {NULL, NULL, NULL}, *ret;
    int np = fe_prim_fun_sig(t->prim, ts, pt, &ret);
    ts[0] = check_fun_arg(r, t, 0, np, pt, ret);
  }
  if (t->prim == PRIM_LOAD) { /* [R], or deeper when ascribed: (load "m.npy" : [[R]]) */
    if (!t->type || fe_type_real_rank(t->type) < 1) bad(t, "load of type %s", ty(t->type));
    return;
  }
  expect_type(t, fe_prim_array_result(t->prim, ts));
}

static void check_prim(Rt *r, const Term *t) {
  if ((int)t->prim < 0 || t->prim >= PRIM__COUNT) bad(t, "unknown builtin %d", (int)t->prim);
  const PrimInfo *pi = &fe_prims[t->prim];
  expect_nkids(t, pi->arity);
  if (pi->cls == P_ARRAY) {
    check_array_prim(r, t);
    return;
  }
  const Type *ts[2];
  for (int i = 0; i < t->nkids; i++) ts[i] = t->kids[i]->type;
  PrimMismatch m;
  const Type *type = fe_prim_scalar_type(t->prim, ts, &m);
  if (!type && m.differ) bad(t, "operand 2 of '%s' must be %s, found %s", pi->name, m.want, ty(ts[1]));
  if (!type) bad(t, "operand %d of '%s' must be %s, found %s", m.arg + 1, pi->name, m.want, ty(ts[m.arg]));
  expect_type(t, type);
}

/* Checks a function's arguments (kids[first..]) against its parameters. */
static void check_args(const Term *t, const Def *d, int first) {
  if (!d) bad(t, "no function");
  if (t->nkids - first != d->nparams)
    bad(t, "'%s' takes %d arguments, found %d", d->name, d->nparams, t->nkids - first);
  for (int i = 0; i < d->nparams; i++)
    if (!eq(t->kids[first + i]->type, d->params[i]->type))
      bad(t, "argument %d of '%s' must be %s, found %s", i + 1, d->name, ty(d->params[i]->type),
          ty(t->kids[first + i]->type));
}

/* A derivative operator (index: DerivOp): f's arguments, then the
   cotangent (vjp) or the tangents (jvp). */
static void check_grad(const Term *t) {
  const Def *d = t->def;
  if (!d) bad(t, "no function");
  if (t->index < DOP_GRAD || t->index > DOP_VALUE_AND_GRAD) bad(t, "unknown derivative operator");
  int extra = t->index == DOP_VJP ? 1 : t->index == DOP_JVP ? t->nwrt : 0;
  if (t->nkids != d->nparams + extra)
    bad(t, "%s of '%s' takes %d arguments, found %d", fe_deriv_op_names[t->index], d->name,
        d->nparams + extra, t->nkids);
  for (int i = 0; i < d->nparams; i++)
    if (!eq(t->kids[i]->type, d->params[i]->type))
      bad(t, "argument %d of '%s' must be %s, found %s", i + 1, d->name, ty(d->params[i]->type),
          ty(t->kids[i]->type));
  bool real = eq(d->ret, R());
  if ((t->index == DOP_GRAD || t->index == DOP_VALUE_AND_GRAD) && !real)
    bad(t, "grad of '%s', which returns %s", d->name, ty(d->ret));
  if (t->nwrt < 1 || !t->wrt) bad(t, "grad with no parameter to differentiate");
  const Type **gt = NEW_ARRAY(const Type *, t->nwrt);
  for (int k = 0; k < t->nwrt; k++) {
    int i = t->wrt[k];
    if (i < 0 || i >= d->nparams) bad(t, "wrt index %d out of range", i);
    for (int j = 0; j < k; j++)
      if (t->wrt[j] == i) bad(t, "wrt names parameter %d twice", i + 1);
    /* gradients, cotangents and tangents have the tangent types */
    gt[k] = fe_ty_tangent(d->params[i]->type);
    if (!gt[k]) bad(t, "wrt names parameter %d, whose type %s has no reals", i + 1, ty(d->params[i]->type));
    if (t->index == DOP_JVP && !eq(t->kids[d->nparams + k]->type, gt[k]))
      bad(t, "tangent %d must be %s", k + 1, ty(gt[k]));
  }
  const Type *rt = fe_ty_tangent(d->ret);
  if ((t->index == DOP_VJP || t->index == DOP_JVP) && !rt) bad(t, "a result of type %s has no tangent", ty(d->ret));
  if (t->index == DOP_VJP && !eq(t->kids[d->nparams]->type, rt)) bad(t, "the cotangent must be %s", ty(rt));
  const Type *g = t->nwrt == 1 ? gt[0] : fe_ty_tuple(t->nwrt, gt);
  switch ((DerivOp)t->index) {
  case DOP_GRAD:
  case DOP_VJP: expect_type(t, g); break;
  case DOP_VALUE_AND_GRAD: expect_type(t, fe_ty_pair(d->ret, g)); break;
  case DOP_JVP: expect_type(t, fe_ty_pair(d->ret, rt)); break;
  }
}

/* A lambda (a value or a combinator's argument): binds its parameters over
   its body; its type is params -> body. */
static void check_lam(Rt *r, const Term *t) {
  expect_nkids(t, 1);
  if (t->nsyms < 0 || (t->nsyms > 0 && !t->syms)) bad(t, "bad parameter list");
  const Type **pt = NEW_ARRAY(const Type *, t->nsyms > 0 ? t->nsyms : 1);
  for (int i = 0; i < t->nsyms; i++) {
    bind(r, t, t->syms[i]);
    pt[i] = t->syms[i]->type;
  }
  if (!t->kids[0]->type) bad(t, "body has no type");
  expect_type(t, fe_ty_fun(t->nsyms, pt, t->kids[0]->type));
  check(r, t->kids[0]);
  for (int i = 0; i < t->nsyms; i++) unbind(r, t->syms[i]);
}

static void check_app(Rt *r, const Term *t) {
  if (t->nkids < 1 || !t->kids || !t->kids[0]) bad(t, "application without a function");
  const Type *f = t->kids[0]->type;
  if (!f || f->kind != TY_FUN) bad(t, "applies a non-function of type %s", ty(f));
  if (f->n != t->nkids - 1) bad(t, "function of %d parameters applied to %d arguments", f->n, t->nkids - 1);
  for (int i = 0; i < f->n; i++) {
    if (!t->kids[i + 1]) bad(t, "argument %d is missing", i + 1);
    if (!eq(t->kids[i + 1]->type, f->elems[i]))
      bad(t, "argument %d must be %s, found %s", i + 1, ty(f->elems[i]), ty(t->kids[i + 1]->type));
  }
  expect_type(t, f->elem);
  for (int i = 0; i < t->nkids; i++) check(r, t->kids[i]);
}

/* One let or let-tuple of a spine: its right-hand side is checked (outside
   the binders' scope), then its binders come into scope. */
static void check_let_head(Rt *r, const Term *t) {
  expect_nkids(t, 2);
  check(r, t->kids[0]);
  const Type *rt = t->kids[0]->type;
  if (t->kind == T_LET) {
    if (!t->sym) bad(t, "let without a binder");
    if (!eq(t->sym->type, rt))
      bad(t, "'%s' (#%d) has type %s, its right-hand side %s", t->sym->name, t->sym->id,
          ty(t->sym->type), ty(rt));
    bind(r, t, t->sym);
  } else {
    if (!rt || rt->kind != TY_TUPLE || rt->n != t->nsyms || !t->syms)
      bad(t, "pattern of %d names for a value of type %s", t->nsyms, ty(rt));
    for (int i = 0; i < t->nsyms; i++) {
      if (!t->syms[i]) bad(t, "binder %d missing", i + 1);
      if (!eq(t->syms[i]->type, rt->elems[i]))
        bad(t, "'%s' (#%d) has type %s, component %d is %s", t->syms[i]->name, t->syms[i]->id,
            ty(t->syms[i]->type), i + 1, ty(rt->elems[i]));
      bind(r, t, t->syms[i]);
    }
  }
  if (!eq(t->type, t->kids[1]->type))
    bad(t, "has type %s, its body %s", ty(t->type), ty(t->kids[1]->type));
}

static void check(Rt *r, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) {
    /* the spine in a loop; the binders leave scope at its end */
    size_t n = 0, cap = 16;
    const Term **spine = NEW_ARRAY(const Term *, cap);
    while (t->kind == T_LET || t->kind == T_LETTUP) {
      if (n == cap) {
        const Term **ns = NEW_ARRAY(const Term *, cap * 2);
        memcpy(ns, spine, sizeof(Term *) * n);
        spine = ns;
        cap *= 2;
      }
      spine[n++] = t;
      check_let_head(r, t);
      t = t->kids[1];
      fe_stack_check(t->span);
    }
    check(r, t);
    for (size_t i = n; i-- > 0;) {
      if (spine[i]->kind == T_LET) unbind(r, spine[i]->sym);
      else
        for (int j = 0; j < spine[i]->nsyms; j++) unbind(r, spine[i]->syms[j]);
    }
    return;
  }
  if (t->kind != T_STR && !t->type) bad(t, "has no type");
  switch (t->kind) {
  case T_NUM: expect_nkids(t, 0); expect_type(t, R()); return;
  case T_BOOL: expect_nkids(t, 0); expect_type(t, Bt()); return;
  case T_STR: bad(t, "a file name outside load or save");
  case T_VAR: {
    const Sym *x = t->sym;
    if (!x) bad(t, "variable without a symbol");
    int st = state_of(r, x);
    if (st != IN_SCOPE)
      bad(t, "'%s' (#%d) is %s", x->name, x->id, st == OUT_OF_SCOPE ? "used outside its scope" : "not bound in the Def");
    if (!eq(t->type, x->type)) bad(t, "'%s' (#%d) has type %s, the use %s", x->name, x->id, ty(x->type), ty(t->type));
    return;
  }
  case T_GLOBAL:
    if (!t->global) bad(t, "no global");
    expect_type(t, t->global->type);
    return;
  case T_IF:
    expect_nkids(t, 3);
    expect_kid(t, 0, Bt(), "the condition");
    if (!eq(t->kids[1]->type, t->kids[2]->type))
      bad(t, "branches differ: then is %s, else is %s", ty(t->kids[1]->type), ty(t->kids[2]->type));
    expect_type(t, t->kids[1]->type);
    break;
  case T_TUPLE: {
    if (t->nkids < 2) bad(t, "a tuple of %d components", t->nkids);
    expect_nkids(t, t->nkids);
    const Type **ts = NEW_ARRAY(const Type *, t->nkids);
    for (int i = 0; i < t->nkids; i++) {
      if (!t->kids[i]->type) bad(t, "component %d has no type", i + 1);
      ts[i] = t->kids[i]->type;
    }
    expect_type(t, fe_ty_tuple(t->nkids, ts));
    break;
  }
  case T_PROJ: {
    expect_nkids(t, 1);
    const Type *a = t->kids[0]->type;
    if (!a || a->kind != TY_TUPLE) bad(t, "projection of a non-tuple of type %s", ty(a));
    if (t->index < 0 || t->index >= a->n) bad(t, "projection .%d of a %d-tuple", t->index + 1, a->n);
    expect_type(t, a->elems[t->index]);
    break;
  }
  case T_ARRAY:
    expect_nkids(t, t->nkids);
    if (!is_array(t->type)) bad(t, "array literal of type %s", ty(t->type));
    for (int i = 0; i < t->nkids; i++)
      if (!eq(t->kids[i]->type, t->type->elem))
        bad(t, "element %d is %s, the array's elements are %s", i + 1, ty(t->kids[i]->type),
            ty(t->type->elem));
    break;
  case T_PRIM:
    check_prim(r, t);
    if (fe_prims[t->prim].cls == P_ARRAY) {
      for (int i = 0; i < t->nkids; i++)
        if (t->kids[i]->kind != T_STR) check(r, t->kids[i]);
      return;
    }
    break;
  case T_LAM: check_lam(r, t); return;
  case T_APP: check_app(r, t); return;
  case T_CALL:
    check_args(t, t->def, 0);
    expect_type(t, t->def->ret);
    break;
  case T_GRAD: check_grad(t); break;
  case T_LET:
  case T_LETTUP: UNREACHABLE();
  case T_NAME:
  case T_APPLY:
  case T_OPREF:
  case T_LOOP:
  case T_ASCRIBE:
  case T_GRADREF:
  case T__COUNT: bad(t, "a surface node in a checked term");
  }
  for (int i = 0; i < t->nkids; i++) check(r, t->kids[i]);
}

void fe_retype(const Def *d) {
  Rt r = {d, NULL, NULL, 0, 0, NULL};
  r.slot_owner_id = una_alloc(sizeof(int) * (size_t)(d->nslots > 0 ? d->nslots : 1));
  if (!d->body) fe_error(d->span, "internal: def '%s' has no body", d->name);
  for (int i = 0; i < d->nparams; i++) {
    const Sym *x = d->params[i];
    if (!x || !x->type) fe_error(d->span, "internal: parameter %d of '%s' has no type", i + 1, d->name);
    if (state_of(&r, x)) fe_error(d->span, "internal: parameter '%s' of '%s' is listed twice", x->name, d->name);
    if (x->slot < 0 || x->slot >= d->nslots || r.slot_owner_id[x->slot])
      fe_error(d->span, "internal: parameter '%s' of '%s' has slot %d (frame of %d, or shared)",
               x->name, d->name, x->slot, d->nslots);
    r.slot_owner_id[x->slot] = x->id ? x->id : -1;
    set_state(&r, x, IN_SCOPE);
  }
  check(&r, d->body);
  if (!eq(d->ret, d->body->type))
    fe_error(d->span, "internal: def '%s' returns %s, its body has type %s", d->name, ty(d->ret),
             ty(d->body->type));
}
