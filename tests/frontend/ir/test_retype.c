/* test_retype.c: the re-checker fe_retype accepts every checked Def of the
   prelude and of the script corpus (every .una file in tests/scripts),
   before and after inlining, and target terms with closures; it rejects
   hand-broken terms (wrong node types, unbound and twice-bound variables,
   bad applications, lambdas and combinator functions, shared slots) with
   "internal: ..." at the offending node. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>

#include "../../../frontend/ir/build.h"
#include "../../../frontend/inline.h"
#include "../../../frontend/ir/retype.h"
#include "../../../frontend/repl/session.h"
#include "../../suites.h"

extern const char una_prelude_text[];

static Span S0;
static const Type *R(void) { return fe_ty_real(); }
static Term *num(double v) { return fe_mk_num(S0, v); }
static Term *var(Sym *x) { return fe_mk_var(S0, x); }
static Sym *sym(const char *n, const Type *t) { return fe_mk_sym(n, t, S0); }

/* The message fe_retype raises for d ("" when it accepts d). */
static const char *retype_err(const Def *d) {
  FeTry t;
  if (fe_try(&t)) {
    fe_retype(d);
    fe_untry(&t);
    return "";
  }
  return t.err.msg;
}

#define ACCEPTS(d) ck_assert_str_eq(retype_err(d), "")
#define REJECTS(d, prefix)                                                              \
  do {                                                                                  \
    const char *m_ = retype_err(d);                                                     \
    ck_assert_msg(strncmp(m_, prefix, strlen(prefix)) == 0, "got \"%s\", want \"%s...\"", m_, \
                  prefix);                                                              \
  } while (0)

/* Checks each item of a program in env (binding defs and globals, without
   evaluating anything); every checked Def, and its inlined version, must
   pass fe_retype. Items that fail to check are skipped. Returns the number
   of Defs re-checked. */
static int retype_program(Env *env, const char *file, const char *text) {
  ParseResult pr = fe_parse_program(file, text, strlen(text));
  if (pr.nerrors) return 0;
  int n = 0;
  for (int i = 0; i < pr.nitems; i++) {
    Item *it = pr.items[i];
    if (it->kind == ITEM_CMD) continue;
    Def *d = NULL;
    Global **gs = NULL;
    FeTry t;
    if (fe_try(&t)) {
      if (it->kind == ITEM_DEF) d = fe_check_def(env, it);
      else if (it->kind == ITEM_LET) d = fe_check_let(env, it, &gs);
      else d = fe_check_expr(env, it->body);
      fe_untry(&t);
    } else {
      ck_assert_msg(strncmp(t.err.msg, "internal", 8) != 0, "%s", fe_error_text(t.err));
      continue;
    }
    const char *e1 = retype_err(d);
    ck_assert_msg(!*e1, "%s item %d: %s", file, i + 1, e1);
    Def *in = NULL;
    if (fe_try(&t)) {
      in = fe_inline(d);
      fe_untry(&t);
    } else {
      ck_abort_msg("%s item %d: inlining raised %s", file, i + 1, fe_error_text(t.err));
    }
    const char *e2 = retype_err(in);
    ck_assert_msg(!*e2, "%s item %d (inlined): %s", file, i + 1, e2);
    /* the original is untouched by inlining */
    e1 = retype_err(d);
    ck_assert_msg(!*e1, "%s item %d after inlining: %s", file, i + 1, e1);
    n++;
    if (it->kind == ITEM_DEF) fe_env_bind_def(env, d);
    if (it->kind == ITEM_LET)
      for (int j = 0; j < it->nnames; j++) fe_env_bind_global(env, gs[j]);
  }
  return n;
}

START_TEST(prelude_defs) {
  Env *env = fe_env_new();
  int n = retype_program(env, "<prelude>", una_prelude_text);
  ck_assert_int_ge(n, 14);
  ck_assert_ptr_nonnull(fe_env_find_def(env, "softmax"));
}
END_TEST

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = una_alloc(cap);
  size_t k;
  while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (n + 1 == cap) {
      char *nb = una_alloc(cap * 2);
      memcpy(nb, buf, n);
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  buf[n] = '\0';
  return buf;
}

START_TEST(script_corpus) {
  const char *root = getenv("UNA_ROOT");
  char *dir = una_sprintf("%s/tests/scripts", root ? root : ".");
  DIR *dd = opendir(dir);
  ck_assert_msg(dd != NULL, "cannot open %s", dir);
  int files = 0, defs = 0;
  struct dirent *de;
  while ((de = readdir(dd))) {
    size_t len = strlen(de->d_name);
    if (len < 5 || strcmp(de->d_name + len - 4, ".una") != 0) continue;
    char *text = read_all(una_sprintf("%s/%s", dir, de->d_name));
    if (!text) continue;
    Env *env = fe_env_new();
    retype_program(env, "<prelude>", una_prelude_text);
    defs += retype_program(env, de->d_name, text);
    files++;
  }
  closedir(dd);
  ck_assert_int_ge(files, 100);
  ck_assert_int_ge(defs, 300);
}
END_TEST

START_TEST(target_terms) {
  /* let k = fun (y) -> y * x in (k (2), map (z. (fun (w) -> w + z) (z)) [1, 2]) */
  Sym *x = sym("x", R());
  Sym *y = sym("y", R());
  Term *lam = fe_mk_lam(S0, 1, &y, fe_mk_mul(S0, var(y), var(x)));
  Sym *k = sym("k", lam->type);
  Term *two = num(2);
  Sym *z = sym("z", R()), *w = sym("w", R());
  Term *inner = fe_mk_lam(S0, 1, &w, fe_mk_add(S0, var(w), var(z)));
  Term *zz = var(z);
  Term *el[2] = {num(1), num(2)};
  Term *arr = fe_term_kids(S0, T_ARRAY, fe_ty_array(R()), 2, el);
  Term *m = fe_mk_map(S0, fe_mk_lam(S0, 1, &z, fe_mk_app(S0, inner, 1, &zz)), arr);
  Term *items[2] = {fe_mk_app(S0, var(k), 1, &two), m};
  Def *d = fe_mk_def("t", S0, 1, &x, fe_mk_let(S0, k, lam, fe_mk_tuple(S0, 2, items)));
  ACCEPTS(d);
}
END_TEST

/* A 16,000-let chain is re-checked without deep recursion. */
START_TEST(long_chain) {
  int n = 16000;
  Sym *x0 = sym("x", R());
  Sym **xs = NEW_ARRAY(Sym *, n + 1);
  xs[0] = x0;
  for (int i = 1; i <= n; i++) xs[i] = sym("x", R());
  Term *body = var(xs[n]);
  for (int i = n; i >= 1; i--) body = fe_mk_let(S0, xs[i], fe_mk_op1(S0, PRIM_SIN, var(xs[i - 1])), body);
  ACCEPTS(fe_mk_def("t", S0, 1, &x0, body));
}
END_TEST

/* A node built without the asserting constructors. */
static Term *raw(TermKind k, const Type *type, int n, Term **kids) {
  return fe_term_kids(S0, k, type, n, kids);
}

START_TEST(rejects_broken) {
  Sym *x = sym("x", R());

  /* a node whose type disagrees with its children: (1 + 2) typed B */
  Term *ab[2] = {num(1), num(2)};
  Term *badadd = fe_term_prim(S0, fe_ty_bool(), PRIM_ADD, 2, ab);
  REJECTS(fe_mk_def("t", S0, 0, NULL, badadd), "internal: 'prim' node at 1:1: has type B");

  /* an unbound variable */
  Sym *u = sym("u", R());
  REJECTS(fe_mk_def("t", S0, 1, &x, fe_mk_add(S0, var(x), var(u))),
          "internal: 'var' node at 1:1: 'u'");

  /* a variable used outside its let: (let y = 1 in y, y) */
  Sym *y = sym("y", R());
  Term *tp[2] = {fe_mk_let(S0, y, num(1), var(y)), var(y)};
  REJECTS(fe_mk_def("t", S0, 0, NULL, fe_mk_tuple(S0, 2, tp)), "internal: 'var' node");

  /* a binder bound twice: let y = 1 in let y = 2 in y */
  Sym *y2 = sym("y", R());
  Term *twice = fe_mk_let(S0, y2, num(1), fe_mk_let(S0, y2, num(2), var(y2)));
  Def *dt = fe_mk_def("t", S0, 0, NULL, twice);
  REJECTS(dt, "internal: 'let' node");
  ck_assert_ptr_nonnull(strstr(retype_err(dt), "bound twice"));

  /* a let whose binder's type is not its right-hand side's */
  Sym *b = sym("b", fe_ty_bool());
  Term *lk[2] = {num(1), num(0)};
  Term *badlet = raw(T_LET, R(), 2, lk);
  badlet->sym = b;
  REJECTS(fe_mk_def("t", S0, 0, NULL, badlet), "internal: 'let' node");

  /* an application to an argument of the wrong type */
  Sym *p = sym("p", R());
  Term *lam = fe_mk_lam(S0, 1, &p, var(p));
  Term *ak[2] = {lam, fe_mk_bool(S0, true)};
  REJECTS(fe_mk_def("t", S0, 0, NULL, raw(T_APP, R(), 2, ak)),
          "internal: 'app' node at 1:1: argument 1 must be R, found B");
  /* an application of a non-function */
  Term *nk[2] = {num(3), num(4)};
  REJECTS(fe_mk_def("t", S0, 0, NULL, raw(T_APP, R(), 2, nk)), "internal: 'app' node");

  /* a lambda whose type does not match its parameters and body */
  Sym *q = sym("q", R());
  Term *body = var(q);
  Term *badlam = raw(T_LAM, fe_ty_fun(1, (const Type *[]){R()}, fe_ty_bool()), 1, &body);
  badlam->syms = &q;
  badlam->nsyms = 1;
  REJECTS(fe_mk_def("t", S0, 0, NULL, badlam), "internal: 'lam' node");

  /* map's function with a parameter of the wrong type */
  Sym *v = sym("v", fe_ty_bool());
  Term *vb = fe_mk_op1(S0, PRIM_NOT, var(v));
  Term *mk[2] = {fe_mk_lam(S0, 1, &v, vb),
                 raw(T_ARRAY, fe_ty_array(R()), 2, (Term *[]){num(1), num(2)})};
  REJECTS(fe_mk_def("t", S0, 0, NULL, fe_term_prim(S0, fe_ty_array(fe_ty_bool()), PRIM_MAP, 2, mk)),
          "internal: 'prim' node at 1:1: parameter 1 of map's function must be R");

  /* an if whose branches differ */
  Term *ik[3] = {fe_mk_bool(S0, true), num(1), fe_mk_bool(S0, false)};
  REJECTS(fe_mk_def("t", S0, 0, NULL, raw(T_IF, R(), 3, ik)), "internal: 'if' node");

  /* a projection out of range */
  Term *pair[2] = {num(1), num(2)};
  Term *pr = raw(T_PROJ, R(), 1, (Term *[]){fe_mk_tuple(S0, 2, pair)});
  pr->index = 2;
  REJECTS(fe_mk_def("t", S0, 0, NULL, pr), "internal: 'proj' node");

  /* two binders sharing a slot */
  Sym *s1 = sym("s", R()), *s2 = sym("s", R());
  Def *ds = fe_mk_def("t", S0, 0, NULL,
                      fe_mk_let(S0, s1, num(1), fe_mk_let(S0, s2, num(2), var(s2))));
  s2->slot = s1->slot;
  REJECTS(ds, "internal: 'let' node");
  ck_assert_ptr_nonnull(strstr(retype_err(ds), "shares slot"));

  /* a def whose result type is not its body's */
  Def *dr = fe_mk_def("t", S0, 0, NULL, num(1));
  dr->ret = fe_ty_bool();
  REJECTS(dr, "internal: def 't' returns B");
}
END_TEST

Suite *suite_retype(void) {
  S0 = fe_span("t", 1, 1);
  Suite *s = suite_create("retype");
  TCase *tc = tcase_create("retype");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, prelude_defs);
  tcase_add_test(tc, script_corpus);
  tcase_add_test(tc, target_terms);
  tcase_add_test(tc, long_chain);
  tcase_add_test(tc, rejects_broken);
  suite_add_tcase(s, tc);
  return s;
}
