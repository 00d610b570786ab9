/* test_jt.c: the transpose-Jacobian builders of reverse/jt.h (map, map2,
   reduce, foldl, if) against central finite differences of the primal
   construct, with a test-only ∇ (symbolic forward mode built on
   rev_partial) standing in for the real one; exact results for prod with
   zeros, empty arrays, length 1, the untaken branch of if never evaluated,
   and large arrays (linear cost). */
#include <check.h>
#include <math.h>

#include "../../backend/eval.h"
#include "../../frontend/ir/build.h"
#include "../../frontend/repl/session.h"
#include "../../frontend/ir/subst.h"
#include "../../reverse/jt.h"
#include "../../reverse/partials.h"
#include "../suites.h"
#include "../testlib.h"

/* ---- a test-only ∇: symbolic forward mode ----

   tan_of(t, m) is the directional derivative of t (a term of the same
   type) when each variable m->x moves with tangent m->dx (a variable or a
   constant); unlisted variables are constants. NULL stands for a zero
   tangent. Handles scalar operators (through rev_partial), let,
   let-tuple, if, tuples, projections, map, map2, reduce (+), and the
   non-differentiable length and comparisons: what the builders' tests
   and the inner products <z, e> of rev_jt_if need. */

typedef struct TanMap {
  Sym *x;
  Term *dx;
  const struct TanMap *next;
} TanMap;

static const Type *R(void) { return fe_ty_real(); }
static const Type *AR(void) { return fe_ty_array(fe_ty_real()); }
static Term *var(Span s, Sym *x) { return fe_mk_var(s, x); }

static TanMap *push(Sym *x, Term *dx, const TanMap *next) {
  TanMap *m = NEW(TanMap);
  m->x = x;
  m->dx = dx;
  m->next = next;
  return m;
}

static Term *zero_of(const Term *t) {
  if (t->type->kind == TY_REAL) return fe_mk_num(t->span, 0);
  return fe_mk_zero_like(t->span, fe_copy(t));
}

static Term *or_zero(Term *d, const Term *t) { return d ? d : zero_of(t); }

static Term *zip(Span s, Term *a, Term *b) {
  Sym *ps[2] = {fe_mk_sym("za", R(), s), fe_mk_sym("zb", R(), s)};
  Term *items[2] = {var(s, ps[0]), var(s, ps[1])};
  return fe_mk_map2(s, fe_mk_lam(s, 2, ps, fe_mk_tuple(s, 2, items)), a, b);
}

static bool is_add_lambda(const Term *lam) {
  const Term *b = lam->kids[0];
  return b->kind == T_PRIM && b->prim == PRIM_ADD && b->kids[0]->kind == T_VAR &&
         b->kids[1]->kind == T_VAR && b->kids[0]->sym == lam->syms[0] &&
         b->kids[1]->sym == lam->syms[1];
}

static Term *tan_of(const Term *t, const TanMap *m);

static Term *tan_prim(const Term *t, const TanMap *m) {
  Span s = t->span;
  switch (fe_prims[t->prim].cls) {
  case P_SCALAR1: {
    Term *da = tan_of(t->kids[0], m);
    if (!da) return NULL;
    Sym *u = fe_mk_sym("u", R(), s);
    Term *args[1] = {var(s, u)};
    return fe_mk_let(s, u, fe_copy(t->kids[0]), fe_mk_mul(s, rev_partial(s, t->prim, 0, args), da));
  }
  case P_SCALAR2: {
    Term *da = tan_of(t->kids[0], m), *db = tan_of(t->kids[1], m);
    if (!da && !db) return NULL;
    Sym *u = fe_mk_sym("u", R(), s), *w = fe_mk_sym("w", R(), s);
    Term *args[2] = {var(s, u), var(s, w)};
    Term *sum = NULL;
    if (da) sum = fe_mk_mul(s, rev_partial(s, t->prim, 0, args), da);
    if (db) {
      Term *c = fe_mk_mul(s, rev_partial(s, t->prim, 1, args), db);
      sum = sum ? fe_mk_add(s, sum, c) : c;
    }
    return fe_mk_let(s, u, fe_copy(t->kids[0]), fe_mk_let(s, w, fe_copy(t->kids[1]), sum));
  }
  case P_CMP:
  case P_LOGIC:
  case P_NOT: return NULL;
  case P_ARRAY: break;
  }
  switch (t->prim) {
  case PRIM_LENGTH: return NULL;
  case PRIM_MAP: {
    const Term *lam = t->kids[0], *xs = t->kids[1];
    Sym *x = lam->syms[0];
    Term *dxs = tan_of(xs, m);
    if (!dxs) {
      Term *df = tan_of(lam->kids[0], m);
      return df ? fe_mk_map(s, fe_mk_lam(s, 1, &x, df), fe_copy(xs)) : NULL;
    }
    Sym *dx = fe_mk_sym("dx", R(), s);
    Term *df = tan_of(lam->kids[0], push(x, var(s, dx), m));
    if (!df) return NULL;
    Sym *ps[2] = {x, dx};
    return fe_mk_map2(s, fe_mk_lam(s, 2, ps, df), fe_copy(xs), dxs);
  }
  case PRIM_MAP2: {
    const Term *lam = t->kids[0];
    Term *d[2], *arr[2];
    Sym *dv[2] = {NULL, NULL}, *param[2];
    const TanMap *m1 = m;
    for (int i = 0; i < 2; i++) {
      d[i] = tan_of(t->kids[1 + i], m);
      if (d[i]) {
        dv[i] = fe_mk_sym("dx", R(), s);
        m1 = push(lam->syms[i], var(s, dv[i]), m1);
      }
    }
    Term *df = tan_of(lam->kids[0], m1);
    if (!df) return NULL;
    for (int i = 1; i >= 0; i--) {
      if (d[i]) {
        /* the parameter is a pair (primal, tangent) of zip (X, dX) */
        param[i] = fe_mk_sym("pr", fe_ty_pair(R(), R()), s);
        arr[i] = zip(s, fe_copy(t->kids[1 + i]), d[i]);
        df = fe_mk_let(s, lam->syms[i], fe_mk_proj(s, var(s, param[i]), 0),
                       fe_mk_let(s, dv[i], fe_mk_proj(s, var(s, param[i]), 1), df));
      } else {
        param[i] = lam->syms[i];
        arr[i] = fe_copy(t->kids[1 + i]);
      }
    }
    return fe_mk_map2(s, fe_mk_lam(s, 2, param, df), arr[0], arr[1]);
  }
  case PRIM_REDUCE: {
    ck_assert_msg(is_add_lambda(t->kids[0]), "test nabla: reduce needs (+)");
    Term *dv = tan_of(t->kids[1], m), *dxs = tan_of(t->kids[2], m);
    Term *r = dxs ? fe_mk_reduce(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), dxs) : NULL;
    if (dv) r = r ? fe_mk_add(s, dv, r) : dv;
    return r;
  }
  default: break;
  }
  ck_abort_msg("test nabla: unsupported builtin %s", fe_prims[t->prim].name);
  return NULL;
}

static Term *tan_of(const Term *t, const TanMap *m) {
  Span s = t->span;
  switch (t->kind) {
  case T_NUM:
  case T_BOOL: return NULL;
  case T_VAR:
    for (; m; m = m->next)
      if (m->x == t->sym) return m->dx;
    return NULL;
  case T_LET: {
    Sym *x = t->sym;
    Term *dr = tan_of(t->kids[0], m);
    Sym *dx = dr ? fe_mk_sym("dx", x->type, s) : NULL;
    Term *db = tan_of(t->kids[1], dr ? push(x, var(s, dx), m) : m);
    if (!db) return NULL;
    if (dr) db = fe_mk_let(s, dx, dr, db);
    return fe_mk_let(s, x, fe_copy(t->kids[0]), db);
  }
  case T_LETTUP: {
    Term *dr = tan_of(t->kids[0], m);
    Sym *dt = dr ? fe_mk_sym("dt", t->kids[0]->type, s) : NULL;
    const TanMap *m1 = m;
    if (dr)
      for (int i = 0; i < t->nsyms; i++) m1 = push(t->syms[i], fe_mk_proj(s, var(s, dt), i), m1);
    Term *db = tan_of(t->kids[1], m1);
    if (!db) return NULL;
    if (dr) db = fe_mk_let(s, dt, dr, db);
    return fe_mk_lettup(s, t->nsyms, t->syms, fe_copy(t->kids[0]), db);
  }
  case T_IF: {
    Term *da = tan_of(t->kids[1], m), *db = tan_of(t->kids[2], m);
    if (!da && !db) return NULL;
    return fe_mk_if(s, fe_copy(t->kids[0]), or_zero(da, t->kids[1]), or_zero(db, t->kids[2]));
  }
  case T_TUPLE: {
    Term **d = NEW_ARRAY(Term *, t->nkids);
    bool any = false;
    for (int i = 0; i < t->nkids; i++) any |= (d[i] = tan_of(t->kids[i], m)) != NULL;
    if (!any) return NULL;
    for (int i = 0; i < t->nkids; i++) d[i] = or_zero(d[i], t->kids[i]);
    return fe_mk_tuple(s, t->nkids, d);
  }
  case T_PROJ: {
    Term *d = tan_of(t->kids[0], m);
    return d ? fe_mk_proj(s, d, t->index) : NULL;
  }
  case T_PRIM: return tan_prim(t, m);
  default: break;
  }
  ck_abort_msg("test nabla: unsupported term %s", fe_term_kind_names[t->kind]);
  return NULL;
}

/* iota (length e), for the one-hot directions of an array. */
static Term *iota_of(Span s, Term *e) {
  Term *len = fe_mk_length(s, e);
  return fe_term_prim(s, AR(), PRIM_IOTA, 1, &len);
}

/* The tangent of x (a term of x's type) that is d at the sub-part reached
   by the tuple indexes path[0..np) and zero elsewhere. */
static Term *seed(Span s, Term *x, const int *path, int np, Term *d) {
  if (np == 0) return d;
  int n = x->type->n;
  Term **items = NEW_ARRAY(Term *, n);
  for (int k = 0; k < n; k++) {
    Term *xk = fe_mk_proj(s, x, k);
    items[k] = k == path[0] ? seed(s, xk, path + 1, np - 1, d) : zero_of(xk);
  }
  return fe_mk_tuple(s, n, items);
}

/* The gradient of body with respect to the sub-part of x at path (type t):
   one forward sweep per real, an array part as map (j. <tangent along the
   j-th one-hot>) over its indexes, a tuple part component-wise. */
static Term *grad_part(const Term *body, Sym *x, int *path, int np, const Type *t) {
  Span s = body->span;
  Term *part = var(s, x);
  for (int i = 0; i < np; i++) part = fe_mk_proj(s, part, path[i]);
  Sym *dx = fe_mk_sym("dX", x->type, s);
  switch (t->kind) {
  case TY_REAL: {
    Term *d = tan_of(body, push(x, var(s, dx), NULL));
    return d ? fe_mk_let(s, dx, seed(s, var(s, x), path, np, fe_mk_num(s, 1)), d) : fe_mk_num(s, 0);
  }
  case TY_ARRAY: {
    ck_assert_msg(fe_type_is_real_array(t), "test nabla: unsupported array type");
    Term *d = tan_of(body, push(x, var(s, dx), NULL));
    if (!d) return fe_mk_zero_like(s, part);
    Sym *i = fe_mk_sym("i", R(), s), *jj = fe_mk_sym("j", R(), s);
    Term *hot = fe_mk_if(s, fe_mk_op2(s, PRIM_EQ, var(s, i), var(s, jj)), fe_mk_num(s, 1), fe_mk_num(s, 0));
    Term *onehot = fe_mk_map(s, fe_mk_lam(s, 1, &i, hot), iota_of(s, fe_copy(part)));
    Term *g = fe_mk_let(s, dx, seed(s, var(s, x), path, np, onehot), d);
    return fe_mk_map(s, fe_mk_lam(s, 1, &jj, g), iota_of(s, part));
  }
  case TY_TUPLE: {
    Term **items = NEW_ARRAY(Term *, t->n);
    int *p2 = NEW_ARRAY(int, np + 1);
    if (np) memcpy(p2, path, sizeof(int) * (size_t)np);
    for (int k = 0; k < t->n; k++) {
      p2[np] = k;
      items[k] = grad_part(body, x, p2, np + 1, t->elems[k]);
    }
    return fe_mk_tuple(s, t->n, items);
  }
  default: break;
  }
  ck_abort_msg("test nabla: %s is not of a ground type", x->name);
  return NULL;
}

/* ∇ of body with respect to ctx[0..n) (ground types). */
static Term *test_nabla(Sym **ctx, int n, const Term *body, void *ud) {
  int *calls = ud;
  if (calls) (*calls)++;
  Term **g = NEW_ARRAY(Term *, n);
  for (int k = 0; k < n; k++) g[k] = grad_part(body, ctx[k], NULL, 0, ctx[k]->type);
  return n == 1 ? g[0] : fe_mk_tuple(body->span, n, g);
}

/* The index of the parameter named name in d, or -1. */
static int param_index(const Def *d, const char *name, size_t len) {
  for (int i = 0; i < d->nparams; i++)
    if (strlen(d->params[i]->name) == len && strncmp(d->params[i]->name, name, len) == 0) return i;
  return -1;
}

/* A built J^T: the primal f (whose body is the construct), the J^T as a
   Def over f's parameters and z, and for each component of its result
   the parameter it is the cotangent of (-1: a constant input). */
typedef struct Built {
  Def *f, *jt;
  int ncomp;
  int *owner;
  int nabla_calls;
} Built;

static int owner_of(const Def *f, const Term *in) {
  if (in->kind != T_VAR) return -1;
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i] == in->sym) return i;
  ck_abort_msg("input is not a parameter");
  return -1;
}

/* Defines def (whose body is map, map2, reduce, foldl or if), and builds
   its J^T with the free variables named in fvs (space-separated). */
static Built build(const char *def, const char *fvs) {
  tl_run(def);
  Built b = {0};
  b.f = tl_def(tl_session, "f");
  const Term *body = b.f->body;
  Span s = body->span;

  Sym **fv = NEW_ARRAY(Sym *, 8);
  int nfv = 0, owner[16];
  for (const char *p = fvs; *p;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (len == 0) break;
    int i = param_index(b.f, p, len);
    ck_assert_msg(i >= 0, "no parameter %.*s", (int)len, p);
    owner[nfv] = i;
    fv[nfv++] = b.f->params[i];
    p += len;
  }

  Sym *z = fe_mk_sym("z", body->type, s);
  RevJt j = {s, fv, nfv, test_nabla, &b.nabla_calls};
  Term *jt = NULL;
  int nin = 0;
  const Term *ins[2];
  if (body->kind == T_IF) {
    jt = rev_jt_if(&j, body->kids[0], body->kids[1], body->kids[2], var(s, z));
  } else {
    ck_assert(body->kind == T_PRIM);
    Term *const *k = body->kids;
    switch (body->prim) {
    case PRIM_MAP:
      jt = rev_jt_map(&j, k[0], k[1], var(s, z));
      nin = 1;
      ins[0] = k[1];
      break;
    case PRIM_MAP2:
      jt = rev_jt_map2(&j, k[0], k[1], k[2], var(s, z));
      nin = 2;
      ins[0] = k[1], ins[1] = k[2];
      break;
    case PRIM_REDUCE:
    case PRIM_FOLDL:
      jt = (body->prim == PRIM_REDUCE ? rev_jt_reduce : rev_jt_foldl)(&j, k[0], k[1], k[2], var(s, z));
      nin = 2;
      ins[0] = k[1], ins[1] = k[2];
      break;
    default: ck_abort_msg("not a J^T construct");
    }
  }
  for (int i = 0; i < nin; i++) owner[nfv + i] = owner_of(b.f, ins[i]);
  b.ncomp = nfv + nin;
  b.owner = NEW_ARRAY(int, b.ncomp);
  memcpy(b.owner, owner, sizeof(int) * (size_t)b.ncomp);

  /* One ∇ per construct (two for if), free variables only f's
     parameters and z, every binder bound once. */
  ck_assert_int_eq(b.nabla_calls, body->kind == T_IF ? 2 : 1);
  Sym **free = NULL;
  int nfree = fe_free_vars(jt, &free);
  for (int i = 0; i < nfree; i++)
    ck_assert_msg(free[i] == z || owner_of(b.f, var(s, free[i])) >= 0, "free %s", free[i]->name);
  tl_assert_bound_once(jt);
  if (b.ncomp > 1) ck_assert_int_eq(jt->type->n, b.ncomp);

  Sym **params = NEW_ARRAY(Sym *, b.f->nparams + 1);
  memcpy(params, b.f->params, sizeof(Sym *) * (size_t)b.f->nparams);
  params[b.f->nparams] = z;
  b.jt = fe_mk_def("jt", s, b.f->nparams + 1, params, jt);
  fe_assign_slots(b.f);
  return b;
}

/* The J^T's result at args (one Una expression per parameter) and z; the
   argument values (z last) in *argv when argv is not NULL. */
static Value eval_jt(const Built *b, const char *const *args, const char *zt, Value **argv) {
  int np = b->f->nparams;
  Value *av = NEW_ARRAY(Value, np + 1);
  for (int i = 0; i < np; i++) av[i] = tl_ev(args[i]);
  av[np] = tl_ev(zt);
  if (argv) *argv = av;
  return tl_call(b->jt, av);
}

/* The J^T of def's construct (free variables fvs) at args and z. */
static Value jt_at(const char *def, const char *fvs, const char *const *args, const char *zt) {
  Built b = build(def, fvs);
  return eval_jt(&b, args, zt, NULL);
}

static Value component(const Built *b, Value res, int k) {
  return b->ncomp == 1 ? res : res.u.t->items[k];
}

static void expect_close(double got, double want, const char *what, size_t i) {
  ck_assert_msg(tl_near(got, want, 1e-6),
                "%s[%zu]: got %.17g, finite differences %.17g", what, i, got, want);
}

/* The J^T of def's construct against z at args equals central finite
   differences of <z, f(args)> for every parameter that receives a
   cotangent (components that are cotangents of the same parameter are
   summed). */
static void check_fd(const char *def, const char *fvs, const char *const *args, const char *zt) {
  Built b = build(def, fvs);
  Value *av;
  Value res = eval_jt(&b, args, zt, &av);
  int np = b.f->nparams;
  Value z = av[np];
  for (int p = 0; p < np; p++) {
    bool owned = false;
    for (int k = 0; k < b.ncomp; k++) owned |= b.owner[k] == p;
    if (!owned) continue; /* a constant of the construct */
    const char *name = b.f->params[p]->name;
    int n = tl_nreals(av[p]);
    double *got = NEW_ARRAY(double, n + 1);
    for (int k = 0; k < b.ncomp; k++) {
      if (b.owner[k] != p) continue;
      Value c = component(&b, res, k);
      const Type *ct = b.ncomp > 1 ? b.jt->ret->elems[k] : b.jt->ret;
      ck_assert_msg(fe_type_eq(ct, b.f->params[p]->type) && tl_nreals(c) == n,
                    "cotangent of %s: wrong type or shape", name);
      for (int i = 0; i < n; i++) got[i] += *tl_real_at(&c, i);
    }
    for (int i = 0; i < n; i++) expect_close(got[i], tl_fd(b.f, av, p, i, &z), name, (size_t)i);
  }
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__})

/* ---- map ---- */

START_TEST(map_free_variable) {
  check_fd("def f (s: R) (A: [R]) = map (x. sin x * s + x * x) A", "s",
           ARGS("0.7", "[0.5, -1.25, 2, 3.5]"), "[0.3, -1, 2, 0.25]");
}
END_TEST

START_TEST(map_array_free_variable) {
  check_fd("def f (W: [R]) (s: R) (A: [R]) = map (x. x * reduce (+) 0 W + s / x) A", "W s",
           ARGS("[1, 2, -0.5]", "1.5", "[0.5, -1.25, 2]"), "[1, -2, 0.5]");
}
END_TEST

START_TEST(map_let_if_max_min) {
  const char *def = "def f (s: R) (A: [R]) = map (x. let t = x * s in "
                    "if t > 0 then t * t + max t 1 else exp t - min x s) A";
  check_fd(def, "s", ARGS("0.7", "[0.5, -1.25, 2, 3.5]"), "[0.3, -1, 2, 0.25]");
}
END_TEST

START_TEST(map_no_free_variable) {
  check_fd("def f (A: [R]) = map (x. x * x * x) A", "", ARGS("[0.5, -1.25, 2]"), "[1, 2, 3]");
}
END_TEST

START_TEST(map_unused_free_variable) {
  check_fd("def f (s: R) (t: R) (A: [R]) = map (x. x * s) A", "s t",
           ARGS("2", "3", "[1, 2, 3]"), "[1, 1, 1]");
}
END_TEST

START_TEST(map_empty_and_single) {
  const char *def = "def f (s: R) (A: [R]) = map (x. sin x * s) A";
  check_fd(def, "s", ARGS("0.7", "[]"), "[]");
  check_fd(def, "s", ARGS("0.7", "[1.5]"), "[-2]");
  Value r = jt_at(def, "s", ARGS("0.7", "[]"), "[]");
  ck_assert(r.u.t->items[0].u.r == 0);
  ck_assert_uint_eq(r.u.t->items[1].u.a->len, 0);
}
END_TEST

/* ---- map2 ---- */

START_TEST(map2_free_variable) {
  check_fd("def f (s: R) (A: [R]) (B: [R]) = map2 (x, y. x * y + s * sin y) A B", "s",
           ARGS("0.7", "[0.5, -1.25, 2]", "[3, 0.25, -1]"), "[0.3, -1, 2]");
}
END_TEST

START_TEST(map2_constant_body) {
  /* map2 (a, b. s) summed: d/ds = n, exactly */
  const char *def = "def f (s: R) (A: [R]) (B: [R]) = map2 (a, b. s) A B";
  check_fd(def, "s", ARGS("0.7", "[1, 2, 3, 4, 5]", "[5, 4, 3, 2, 1]"), "[1, 1, 1, 1, 1]");
  Value r = jt_at(def, "s", ARGS("0.7", "[1, 2, 3, 4, 5]", "[5, 4, 3, 2, 1]"), "[1, 1, 1, 1, 1]");
  ck_assert(r.u.t->items[0].u.r == 5);
}
END_TEST

START_TEST(map2_same_array_twice) {
  /* map2 (*) A A: the two cotangents of A add up to 2 A z */
  check_fd("def f (A: [R]) = map2 (*) A A", "", ARGS("[0.5, -1.25, 2]"), "[1, 2, 3]");
}
END_TEST

START_TEST(map2_pow_div) {
  check_fd("def f (A: [R]) (B: [R]) = map2 (x, y. x ^ y + x / y) A B", "",
           ARGS("[0.5, 1.25, 2]", "[3, 0.25, -1.5]"), "[0.3, -1, 2]");
}
END_TEST

START_TEST(map2_array_free_variable) {
  check_fd("def f (W: [R]) (A: [R]) (B: [R]) = map2 (x, y. x * reduce (+) 0 (map (w. w * y) W)) A B",
           "W", ARGS("[1, 2, -0.5, 4]", "[0.5, -1.25, 2]", "[3, 0.25, -1]"), "[0.3, -1, 2]");
}
END_TEST

START_TEST(map2_empty_and_single) {
  const char *def = "def f (s: R) (A: [R]) (B: [R]) = map2 (x, y. x * y * s) A B";
  check_fd(def, "s", ARGS("0.7", "[]", "[]"), "[]");
  check_fd(def, "s", ARGS("0.7", "[2]", "[3]"), "[0.5]");
}
END_TEST

/* ---- reduce ---- */

START_TEST(reduce_monoids) {
  const char *a = "[0.5, -1.25, 2, 3.5, -0.75]";
  check_fd("def f (v: R) (A: [R]) = reduce (+) v A", "", ARGS("0", a), "1.5");
  check_fd("def f (v: R) (A: [R]) = reduce (+) v A", "", ARGS("2.5", a), "-0.5");
  check_fd("def f (v: R) (A: [R]) = reduce (*) v A", "", ARGS("1", a), "1.5");
  check_fd("def f (v: R) (A: [R]) = reduce (*) v A", "", ARGS("-3", a), "0.5");
  check_fd("def f (v: R) (A: [R]) = reduce max v A", "", ARGS("-100", a), "2");
  check_fd("def f (v: R) (A: [R]) = reduce max v A", "", ARGS("100", a), "2");
  check_fd("def f (v: R) (A: [R]) = reduce (min) v A", "", ARGS("100", a), "2");
  check_fd("def f (v: R) (A: [R]) = reduce (min) v A", "", ARGS("-100", a), "2");
  check_fd("def f (A: [R]) = reduce (+) 0 A", "", ARGS(a), "1");
}
END_TEST

START_TEST(reduce_user_associative) {
  /* x + y + x y = (1 + x)(1 + y) - 1: associative with unit 0 */
  check_fd("def f (v: R) (A: [R]) = reduce (x, y. x + y + x * y) v A", "",
           ARGS("0", "[0.5, -0.25, 2, 0.75]"), "1.5");
  check_fd("def f (v: R) (A: [R]) = reduce (x, y. max x y) v A", "",
           ARGS("-10", "[0.5, -0.25, 2, 0.75]"), "1.5");
}
END_TEST

START_TEST(reduce_free_variables) {
  /* x y s and x + y + s are associative (units 1/s and -s) */
  const char *a = "[0.5, -1.25, 2, 3.5, -0.75]";
  check_fd("def f (s: R) (v: R) (A: [R]) = reduce (x, y. x * y * s) v A", "s", ARGS("0.7", "1", a), "1.5");
  check_fd("def f (s: R) (v: R) (A: [R]) = reduce (x, y. x * y * s) v A", "s",
           ARGS("0.7", "1 / 0.7", a), "1.5");
  check_fd("def f (s: R) (v: R) (A: [R]) = reduce (x, y. x + y + s) v A", "s", ARGS("0.7", "-0.7", a), "1.5");
  check_fd("def f (s: R) (A: [R]) = reduce (x, y. x + y + 0 * s) 0 A", "s", ARGS("0.7", a), "1.5");
  check_fd("def f (s: R) (t: R) (v: R) (A: [R]) = reduce (x, y. x * y * s * t) v A", "t s",
           ARGS("0.7", "1.25", "1", a), "-1");
}
END_TEST

START_TEST(reduce_free_variable_printed_rule_differs) {
  /* reduce (x, y. x * y * s) 1 [2, 3, 5] at s = 0.7: d/ds = n * 30 *
     s^(n-1) = 44.1; figure 13 as printed (sum of scanr (*) 1 of the
     per-step ∂e/∂s = x * y = [2, 4.2, 14.7]) gives 200.92. */
  Value r = jt_at("def f (s: R) (v: R) (A: [R]) = reduce (x, y. x * y * s) v A", "s",
                  ARGS("0.7", "1", "[2, 3, 5]"), "1");
  expect_close(r.u.t->items[0].u.r, 44.1, "cot s", 0);
  ck_assert(fabs(r.u.t->items[0].u.r - 200.92) > 1);
}
END_TEST

START_TEST(reduce_unit_depends_on_free_variable) {
  /* g s A = reduce (x, y. x * y * s) (1 / s) A = prod A * s^(n-1):
     the total derivative is cot s + cot v * d(1/s)/ds. */
  Value r = jt_at("def f (s: R) (v: R) (A: [R]) = reduce (x, y. x * y * s) v A", "s",
                  ARGS("0.7", "1 / 0.7", "[2, 3, 5, 0.5]"), "1");
  double s = 0.7, total = r.u.t->items[0].u.r + r.u.t->items[1].u.r * (-1 / (s * s));
  tl_run("def g (s: R) (A: [R]) = reduce (x, y. x * y * s) (1 / s) A");
  double h = 1e-5;
  char t1[64], t2[64];
  snprintf(t1, sizeof t1, "g %.17g [2, 3, 5, 0.5]", s + h);
  snprintf(t2, sizeof t2, "g %.17g [2, 3, 5, 0.5]", s - h);
  expect_close(total, (tl_ev(t1).u.r - tl_ev(t2).u.r) / (2 * h), "total", 0);
  expect_close(total, 15 * 3 * s * s, "total", 0);
}
END_TEST

START_TEST(reduce_empty_and_single) {
  const char *def = "def f (s: R) (v: R) (A: [R]) = reduce (x, y. x * y * s) v A";
  check_fd(def, "s", ARGS("0.7", "2", "[]"), "1.5");
  check_fd(def, "s", ARGS("0.7", "2", "[3]"), "1.5");
  Value r = jt_at(def, "s", ARGS("0.7", "2", "[]"), "1.5");
  ck_assert(r.u.t->items[0].u.r == 0);   /* cot s */
  ck_assert(r.u.t->items[1].u.r == 1.5); /* cot v = z */
  ck_assert_uint_eq(r.u.t->items[2].u.a->len, 0);
}
END_TEST

/* ∇ prod A at A (z = 1, v = 1), as text. */
static const char *prod_grad(const char *a) {
  return val_to_string(jt_at("def f (v: R) (A: [R]) = reduce (*) v A", "", ARGS("1", a), "1"));
}

START_TEST(reduce_prod_zeros_exact) {
  ck_assert_str_eq(prod_grad("[2, 3, 4]"), "(24, [12, 8, 6])");
  ck_assert_str_eq(prod_grad("[2, 0, 3]"), "(0, [0, 6, 0])");
  ck_assert_str_eq(prod_grad("[0, 2, 3]"), "(0, [6, 0, 0])");
  ck_assert_str_eq(prod_grad("[2, 3, 0]"), "(0, [0, 0, 6])");
  ck_assert_str_eq(prod_grad("[2, 0, 3, 0]"), "(0, [0, 0, 0, 0])");
  ck_assert_str_eq(prod_grad("[0, 0, 0]"), "(0, [0, 0, 0])");
  ck_assert_str_eq(prod_grad("[0]"), "(0, [1])");
  ck_assert_str_eq(prod_grad("[5]"), "(5, [1])");
  ck_assert_str_eq(prod_grad("[]"), "(1, [])");
}
END_TEST

START_TEST(reduce_long) {
  /* more elements than the interpreter's reduce lanes (CPU_BLOCK) */
  check_fd("def f (v: R) (A: [R]) = reduce (+) v A", "", ARGS("0.5", "rand 600 7"), "1.5");
  check_fd("def f (s: R) (v: R) (A: [R]) = reduce (x, y. x + y + s) v A", "s",
           ARGS("0.7", "-0.7", "rand 600 3"), "1.5");
  check_fd("def f (v: R) (A: [R]) = reduce max v A", "", ARGS("-1", "rand 600 5"), "1.5");
}
END_TEST

/* ---- foldl ---- */

START_TEST(foldl_horner) {
  /* foldl (acc, c. acc * x + c) v cs, differentiated in x, v and cs */
  const char *def = "def f (x: R) (v: R) (cs: [R]) = foldl (acc, c. acc * x + c) v cs";
  check_fd(def, "x", ARGS("0.9", "0.5", "[1, -2, 3, 0.5]"), "1.5");
  check_fd(def, "x", ARGS("-1.3", "0", "[1, -2, 3, 0.5, 4]"), "1");
  /* v = 0, cs = [1, 2, 3]: p(x) = x^2 + 2 x + 3, p'(2) = 6 */
  Value r = jt_at(def, "x", ARGS("2", "0", "[1, 2, 3]"), "1");
  ck_assert_str_eq(val_to_string(r), "(6, 8, [4, 2, 1])");
}
END_TEST

START_TEST(foldl_nonassociative) {
  const char *a = "[0.5, -1.25, 2, 3.5, -0.75]";
  check_fd("def f (s: R) (v: R) (A: [R]) = foldl (acc, y. sin acc * y + s * acc) v A", "s",
           ARGS("0.7", "0.3", a), "1.5");
  check_fd("def f (s: R) (v: R) (A: [R]) = foldl (acc, y. if y > acc then y * s else acc - y / s) v A",
           "s", ARGS("0.7", "0.3", a), "-2");
  check_fd("def f (s: R) (v: R) (A: [R]) = foldl (x, y. x + y * s) v A", "s", ARGS("0.7", "0.3", a), "1");
  check_fd("def f (v: R) (A: [R]) = foldl (x, y. x / y - y) v A", "", ARGS("2", a), "1");
}
END_TEST

START_TEST(foldl_array_free_variable) {
  check_fd("def f (W: [R]) (v: R) (A: [R]) = foldl (acc, y. acc * 0.5 + y * reduce (+) 0 (map (w. w * acc) W)) v A",
           "W", ARGS("[1, 2, -0.5]", "0.3", "[0.5, -1.25, 2, 1.5]"), "1.5");
}
END_TEST

START_TEST(foldl_empty_and_single) {
  const char *def = "def f (s: R) (v: R) (A: [R]) = foldl (acc, y. acc * y + s) v A";
  check_fd(def, "s", ARGS("0.7", "2", "[]"), "1.5");
  check_fd(def, "s", ARGS("0.7", "2", "[3]"), "1.5");
  Value r = jt_at(def, "s", ARGS("0.7", "2", "[]"), "1.5");
  ck_assert_str_eq(val_to_string(r), "(0, 1.5, [])");
}
END_TEST

START_TEST(foldl_long) {
  check_fd("def f (s: R) (v: R) (A: [R]) = foldl (acc, y. acc * 0.99 + y * s) v A", "s",
           ARGS("0.7", "0.3", "rand 600 11"), "1.5");
}
END_TEST

/* ---- if ---- */

START_TEST(if_real_branches) {
  const char *def = "def f (b: B) (s: R) (t: R) = if b then s * t + sin s else t / s";
  check_fd(def, "s t", ARGS("true", "0.7", "1.5"), "2");
  check_fd(def, "s t", ARGS("false", "0.7", "1.5"), "2");
  check_fd(def, "t", ARGS("true", "0.7", "1.5"), "-1");
  check_fd("def f (b: B) (s: R) = if b then 3 else s", "s", ARGS("true", "0.7"), "2");
  check_fd("def f (b: B) (s: R) = if b then 3 else s", "s", ARGS("false", "0.7"), "2");
}
END_TEST

START_TEST(if_array_branches) {
  const char *def = "def f (b: B) (s: R) (W: [R]) = if b then map (w. w * s) W else map2 (*) W W";
  check_fd(def, "s W", ARGS("true", "0.7", "[1, -2, 0.5]"), "[0.5, 1, -2]");
  check_fd(def, "s W", ARGS("false", "0.7", "[1, -2, 0.5]"), "[0.5, 1, -2]");
}
END_TEST

START_TEST(if_tuple_branches) {
  const char *def = "def f (b: B) (s: R) (W: [R]) = if b then (s * s, map (w. w + s) W) else (s, W)";
  check_fd(def, "s W", ARGS("true", "0.7", "[1, -2, 0.5]"), "(0.5, [1, -1, 2])");
  check_fd(def, "s W", ARGS("false", "0.7", "[1, -2, 0.5]"), "(0.5, [1, -1, 2])");
}
END_TEST

START_TEST(if_untaken_branch_not_evaluated) {
  /* sqrt' at -2 is nan: b * J1 + (1 - b) * J2 would be nan */
  Value r = jt_at("def f (b: B) (s: R) = if b then 2 * s else sqrt s", "s", ARGS("true", "-2"), "1.5");
  ck_assert(r.kind == V_REAL && r.u.r == 3);
  /* the other branch would raise "map2: lengths 2 and 3 differ" */
  r = jt_at("def f (b: B) (s: R) (W: [R]) (V: [R]) = "
            "if b then s * s else reduce (+) 0 (map2 (x, y. x * y * s) W V)",
            "s", ARGS("true", "3", "[1, 2]", "[1, 2, 3]"), "1");
  ck_assert(r.kind == V_REAL && r.u.r == 6);
}
END_TEST

/* ---- free variables of tuple type ---- */

START_TEST(tuple_free_variables) {
  const char *a = "[0.5, -1.25, 2, 1.5]";
  check_fd("def f (p: (R, [R])) (A: [R]) = map (x. x * p.1 + reduce (+) 0 (map (w. w * x) p.2)) A", "p",
           ARGS("(0.5, [1, 2, -3])", a), "[1, -2, 0.5, 3]");
  check_fd("def f (p: (R, R)) (A: [R]) (B: [R]) = map2 (x, y. x * p.1 - y * p.2 * p.2) A B", "p",
           ARGS("(0.5, -2)", a, "[1, 2, 3, 4]"), "[1, -2, 0.5, 3]");
  check_fd("def f (p: (R, (R, R))) (v: R) (A: [R]) = reduce (x, y. x * y * p.1 * p.2.2) v A", "p",
           ARGS("(0.5, (7, -2))", "1", a), "1.5");
  check_fd("def f (p: (R, [R])) (v: R) (A: [R]) = foldl (acc, y. acc * p.1 + y * reduce (+) 0 p.2) v A", "p",
           ARGS("(0.5, [1, 2, -3])", "0.25", a), "1.5");
  check_fd("def f (b: B) (p: (R, [R])) = if b then map (w. w * p.1) p.2 else p.2", "p",
           ARGS("true", "(0.5, [1, 2, -3])"), "[1, -2, 0.5]");
  check_fd("def f (p: (R, [R])) (v: R) (A: [R]) = foldl (acc, y. acc * p.1 + y) v A", "p",
           ARGS("(0.5, [1, 2, -3])", "0.25", "[]"), "1.5");
}
END_TEST

/* ---- cost ---- */

START_TEST(large_arrays_linear) {
  /* 10^5 elements: quadratic work would not finish */
  Value r = jt_at("def f (x: R) (v: R) (cs: [R]) = foldl (acc, c. acc * x + c) v cs", "x",
                  ARGS("0.5", "0", "replicate 100000 1"), "1");
  /* p(x) = sum_k x^k, p'(1/2) = sum_k k / 2^(k-1) = 4 */
  expect_close(r.u.t->items[0].u.r, 4, "cot x", 0);
  ck_assert_uint_eq(r.u.t->items[2].u.a->len, 100000);
  r = jt_at("def f (s: R) (A: [R]) (B: [R]) = map2 (x, y. x * y * s) A B", "s",
            ARGS("2", "replicate 100000 1", "replicate 100000 3"), "replicate 100000 1");
  ck_assert(r.u.t->items[0].u.r == 300000);
  r = jt_at("def f (v: R) (A: [R]) = reduce (*) v A", "", ARGS("1", "replicate 100000 1"), "1");
  ck_assert(r.u.t->items[0].u.r == 1);
}
END_TEST

Suite *suite_jt(void) {
  Suite *s = suite_create("jt");
  TCase *tc = tcase_create("jt");
  tcase_add_checked_fixture(tc, tl_setup_bare, tl_teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, map_free_variable);
  tcase_add_test(tc, map_array_free_variable);
  tcase_add_test(tc, map_let_if_max_min);
  tcase_add_test(tc, map_no_free_variable);
  tcase_add_test(tc, map_unused_free_variable);
  tcase_add_test(tc, map_empty_and_single);
  tcase_add_test(tc, map2_free_variable);
  tcase_add_test(tc, map2_constant_body);
  tcase_add_test(tc, map2_same_array_twice);
  tcase_add_test(tc, map2_pow_div);
  tcase_add_test(tc, map2_array_free_variable);
  tcase_add_test(tc, map2_empty_and_single);
  tcase_add_test(tc, reduce_monoids);
  tcase_add_test(tc, reduce_user_associative);
  tcase_add_test(tc, reduce_free_variables);
  tcase_add_test(tc, reduce_free_variable_printed_rule_differs);
  tcase_add_test(tc, reduce_unit_depends_on_free_variable);
  tcase_add_test(tc, reduce_empty_and_single);
  tcase_add_test(tc, reduce_prod_zeros_exact);
  tcase_add_test(tc, reduce_long);
  tcase_add_test(tc, foldl_horner);
  tcase_add_test(tc, foldl_nonassociative);
  tcase_add_test(tc, foldl_array_free_variable);
  tcase_add_test(tc, foldl_empty_and_single);
  tcase_add_test(tc, foldl_long);
  tcase_add_test(tc, if_real_branches);
  tcase_add_test(tc, if_array_branches);
  tcase_add_test(tc, if_tuple_branches);
  tcase_add_test(tc, if_untaken_branch_not_evaluated);
  tcase_add_test(tc, tuple_free_variables);
  tcase_add_test(tc, large_arrays_linear);
  suite_add_tcase(s, tc);
  return s;
}
