/* testlib.c: helpers shared by the Check suites (see testlib.h). */
#include "testlib.h"

#include <math.h>
#include <pthread.h>

#include "../backend/eval.h"
#include "../frontend/parser.h"
#include "../optimizer/program.h"
#include "../derive/derive.h"

/* ---- sessions ---- */

Session *tl_session;

void tl_setup_bare(void) {
  tl_session = fe_session_new();
  tl_session->check_passes = true; /* the type checker after every optimizer pass */
  tl_session->out = tmpfile();
  tl_session->err = tmpfile();
}

void tl_setup(void) {
  tl_setup_bare();
  ck_assert(fe_session_load_prelude(tl_session));
}

void tl_teardown(void) {
  fclose(tl_session->out);
  fclose(tl_session->err);
}

/* Closes a memstream and copies its buffer into collected memory. */
static char *take(FILE *f, char **buf) {
  fclose(f);
  char *s = una_strdup(*buf ? *buf : "");
  free(*buf);
  return s;
}

TlRun tl_capture(Session *s, const char *text, bool stop_on_error) {
  FILE *out = s->out, *err = s->err;
  char *ob = NULL, *eb = NULL;
  size_t ol = 0, el = 0;
  s->out = open_memstream(&ob, &ol);
  s->err = open_memstream(&eb, &el);
  ck_assert_ptr_nonnull(s->out);
  ck_assert_ptr_nonnull(s->err);
  TlRun r;
  r.ok = fe_session_run_text(s, "t.una", text, strlen(text), stop_on_error);
  r.out = take(s->out, &ob);
  r.err = take(s->err, &eb);
  s->out = out;
  s->err = err;
  return r;
}

char *tl_capture_merged(Session *s, const char *text, bool stop_on_error) {
  FILE *out = s->out, *err = s->err;
  char *b = NULL;
  size_t l = 0;
  FILE *f = open_memstream(&b, &l);
  ck_assert_ptr_nonnull(f);
  s->out = s->err = f;
  fe_session_run_text(s, "t.una", text, strlen(text), stop_on_error);
  s->out = out;
  s->err = err;
  return take(f, &b);
}

void tl_run_in(Session *s, const char *text) {
  TlRun r = tl_capture(s, text, true);
  if (!r.ok) ck_abort_msg("%s in: %.200s", r.err, text);
}

void tl_run(const char *text) { tl_run_in(tl_session, text); }

Session *tl_session_with(const char *text) {
  Session *s = fe_session_new();
  s->check_passes = true;
  ck_assert(fe_session_load_prelude(s));
  tl_run_in(s, text);
  return s;
}

Def *tl_def(Session *s, const char *name) {
  Def *d = fe_env_find_def(s->env, name);
  ck_assert_msg(d != NULL, "no def %s", name);
  return d;
}

Def *tl_check_in(Session *s, const char *text) {
  Term *e = fe_parse_expr("t.una", text, strlen(text), 1, 1);
  return fe_check_expr(s->env, e);
}

Def *tl_check(const char *text) { return tl_check_in(tl_session, text); }

Value tl_ev_in(Session *s, const char *text) {
  FeTry t;
  Value v = val_real(0);
  if (fe_try(&t)) {
    v = cpu_call(tl_expand(tl_check_in(s, text)), NULL);
    fe_untry(&t);
  } else {
    ck_abort_msg("%s: %s", text, fe_error_text(t.err));
  }
  return v;
}

Value tl_ev(const char *text) { return tl_ev_in(tl_session, text); }

Value tl_ev_with(const Exec *ex, const char *text) {
  FeTry t;
  Value v = val_real(0);
  if (fe_try(&t)) {
    v = cpu_call_in(ex, tl_check_in(tl_session, text), NULL);
    fe_untry(&t);
  } else {
    ck_abort_msg("%s: %s", text, fe_error_text(t.err));
  }
  return v;
}

Exec tl_exec_paths(bool monoid, bool kernel) {
  Exec ex = cpu_exec_default;
  ex.monoid = monoid;
  ex.kernel = kernel;
  return ex;
}

Value tl_call(const Def *f, const Value *args) {
  FeTry t;
  Value v = val_real(0);
  if (fe_try(&t)) {
    v = cpu_call(f, args);
    fe_untry(&t);
  } else {
    ck_abort_msg("%s: %s", f->name, fe_error_text(t.err));
  }
  return v;
}

Value *tl_args(Value v, int n) {
  Value *a = NEW_ARRAY(Value, n + 1);
  if (n == 1) {
    a[0] = v;
  } else {
    ck_assert(v.kind == V_TUPLE && v.u.t->n == n);
    for (int i = 0; i < n; i++) a[i] = v.u.t->items[i];
  }
  return a;
}

/* ---- values ---- */

/* tl_same_bits and tl_same_optimized: any_zero lets +0 match -0. */
static bool same_values(Value a, Value b, bool same_boxing, bool any_zero) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case V_REAL:
    if (any_zero && a.u.r == 0 && b.u.r == 0) return true;
    return memcmp(&a.u.r, &b.u.r, sizeof(double)) == 0 || (a.u.r != a.u.r && b.u.r != b.u.r);
  case V_BOOL: return a.u.b == b.u.b;
  case V_TUPLE:
    if (a.u.t->n != b.u.t->n) return false;
    for (int i = 0; i < a.u.t->n; i++)
      if (!same_values(a.u.t->items[i], b.u.t->items[i], same_boxing, any_zero)) return false;
    return true;
  case V_ARRAY:
    if (a.u.a->len != b.u.a->len || (same_boxing && a.u.a->boxed != b.u.a->boxed)) return false;
    for (size_t i = 0; i < a.u.a->len; i++)
      if (!same_values(val_array_get(a.u.a, i), val_array_get(b.u.a, i), same_boxing, any_zero))
        return false;
    return true;
  case V_CLOSURE: return val_equal(a, b);
  }
  return false;
}

bool tl_same_bits(Value a, Value b, bool same_boxing) { return same_values(a, b, same_boxing, false); }

bool tl_same_optimized(Value a, Value b) { return same_values(a, b, false, true); }

Value tl_copy_value(Value v) {
  switch (v.kind) {
  case V_TUPLE: {
    Value *items = NEW_ARRAY(Value, v.u.t->n + 1);
    for (int i = 0; i < v.u.t->n; i++) items[i] = tl_copy_value(v.u.t->items[i]);
    return val_tuple(v.u.t->n, items);
  }
  case V_ARRAY: {
    const Array *a = v.u.a;
    Array *b = a->boxed ? val_new_boxed_array(a->len, fe_nospan) : val_new_real_array(a->len, fe_nospan);
    for (size_t i = 0; i < a->len; i++) val_array_set(b, i, tl_copy_value(val_array_get(a, i)));
    return val_array(b);
  }
  default: return v;
  }
}

int tl_nreals(Value v) {
  switch (v.kind) {
  case V_REAL: return 1;
  case V_TUPLE: {
    int n = 0;
    for (int i = 0; i < v.u.t->n; i++) n += tl_nreals(v.u.t->items[i]);
    return n;
  }
  case V_ARRAY: return v.u.a->boxed ? 0 : (int)v.u.a->len;
  default: return 0;
  }
}

double *tl_real_at(Value *v, int k) {
  switch (v->kind) {
  case V_REAL:
    if (k == 0) return &v->u.r;
    break;
  case V_TUPLE:
    for (int i = 0; i < v->u.t->n; i++) {
      int m = tl_nreals(v->u.t->items[i]);
      if (k < m) return tl_real_at(&v->u.t->items[i], k);
      k -= m;
    }
    break;
  case V_ARRAY:
    if (!v->u.a->boxed && k >= 0 && (size_t)k < v->u.a->len) return &v->u.a->r[k];
    break;
  default: break;
  }
  ck_abort_msg("no real %d", k);
  return NULL;
}

double tl_vdot(Value z, Value y) {
  switch (z.kind) {
  case V_REAL: return z.u.r * y.u.r;
  case V_ARRAY: {
    ck_assert_uint_eq(z.u.a->len, y.u.a->len);
    double sum = 0;
    for (size_t i = 0; i < z.u.a->len; i++) sum += tl_vdot(val_array_get(z.u.a, i), val_array_get(y.u.a, i));
    return sum;
  }
  case V_TUPLE: {
    double sum = 0;
    for (int i = 0; i < z.u.t->n; i++) sum += tl_vdot(z.u.t->items[i], y.u.t->items[i]);
    return sum;
  }
  default: break;
  }
  ck_abort_msg("vdot: not a ground value");
  return 0;
}

/* f at args as a real: its result, or <*z, result>. */
static double fd_value(const Def *f, const Value *args, const Value *z) {
  Value r = tl_call(f, args);
  if (z) return tl_vdot(*z, r);
  ck_assert_int_eq(r.kind, V_REAL);
  return r.u.r;
}

double tl_fd(const Def *f, Value *args, int p, int k, const Value *z) {
  Value saved = args[p];
  args[p] = tl_copy_value(saved);
  double *x = tl_real_at(&args[p], k), x0 = *x, h = 1e-5 * fmax(1, fabs(x0));
  *x = x0 + h;
  double fp = fd_value(f, args, z);
  *x = x0 - h;
  double fm = fd_value(f, args, z);
  args[p] = saved;
  return (fp - fm) / (2 * h);
}

bool tl_near(double got, double want, double rel) { return fabs(got - want) <= rel * fmax(1, fabs(want)); }

bool tl_near_sym(double a, double b, double rel) {
  if (a == b) return true;
  return fabs(a - b) <= rel * fmax(1, fmax(fabs(a), fabs(b)));
}

/* ---- terms ---- */

void tl_walk(const Term *t, void (*visit)(const Term *node, void *ud), void *ud) {
  while (t) {
    visit(t, ud);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) tl_walk(t->kids[i], visit, ud);
    t = t->kids[t->nkids - 1];
  }
}

static void count_node(const Term *t, void *ud) {
  (void)t;
  (*(long *)ud)++;
}

long tl_term_size(const Term *t) {
  long n = 0;
  tl_walk(t, count_node, &n);
  return n;
}

typedef struct KindCount {
  TermKind kind;
  int prim;
  int n;
} KindCount;

static void count_kind(const Term *t, void *ud) {
  KindCount *c = ud;
  if (t->kind == c->kind && (c->prim < 0 || (int)t->prim == c->prim)) c->n++;
}

int tl_count_kind(const Term *t, TermKind k, int prim) {
  KindCount c = {k, prim, 0};
  tl_walk(t, count_kind, &c);
  return c.n;
}

static void add_binders(const Term *t, void *ud) {
  TlSyms *out = ud;
  int k = t->kind == T_LET ? 1 : (t->kind == T_LETTUP || t->kind == T_LAM) ? t->nsyms : 0;
  for (int i = 0; i < k; i++) {
    if (out->n == out->cap) {
      out->cap = out->cap ? 2 * out->cap : 64;
      Sym **nv = NEW_ARRAY(Sym *, out->cap);
      if (out->n) memcpy(nv, out->v, sizeof(Sym *) * (size_t)out->n);
      out->v = nv;
    }
    out->v[out->n++] = t->kind == T_LET ? t->sym : t->syms[i];
  }
}

void tl_binders(const Term *t, TlSyms *out) { tl_walk(t, add_binders, out); }

void tl_assert_bound_once(const Term *t) {
  TlSyms bs = {0};
  tl_binders(t, &bs);
  for (int i = 0; i < bs.n; i++)
    for (int j = 0; j < i; j++) ck_assert_msg(bs.v[j] != bs.v[i], "binder %s bound twice", bs.v[i]->name);
}

/* ---- threads ---- */

typedef struct StackJob {
  size_t stack;
  void (*fn)(void *arg);
  void *arg;
} StackJob;

static void *stack_job_main(void *p) {
  StackJob *j = p;
  char base;
  fe_stack_init(&base, j->stack - ((size_t)64 << 10));
  j->fn(j->arg);
  return NULL;
}

void tl_on_stack(size_t stack, void (*fn)(void *arg), void *arg) {
  StackJob j = {stack, fn, arg};
  pthread_attr_t attr;
  ck_assert_int_eq(pthread_attr_init(&attr), 0);
  ck_assert_int_eq(pthread_attr_setstacksize(&attr, stack), 0);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, &attr, stack_job_main, &j), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  pthread_attr_destroy(&attr);
}

Def *tl_expand(Def *d) {
  DerivOpt o = {opt_derived, NULL};
  return deriv_expand(d, &o);
}
