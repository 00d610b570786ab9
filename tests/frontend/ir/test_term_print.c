/* test_term_print.c: Check tests for the term printer
   (frontend/term_print.c): fewest parentheses, print-then-reparse round
   trips (listed and random trees), checked terms, defs, long chains. */
#include "../../../frontend/ir/term_print.h"
#include "../../../frontend/ir/build.h"
#include "../../suites.h"
#include "../../testlib.h"
#include <math.h>

/* Structural equality of surface terms, spans ignored (a loop down the
   first kid, so that long left-associative chains do not recurse). */
static bool term_eq(const Term *a, const Term *b) {
  for (;;) {
    if (a->kind != b->kind || a->nkids != b->nkids || a->nnames != b->nnames) return false;
    switch (a->kind) {
    case T_NUM:
      if (isnan(a->num) || isnan(b->num)) return isnan(a->num) && isnan(b->num);
      if (a->num != b->num || signbit(a->num) != signbit(b->num)) return false;
      break;
    case T_BOOL: if (a->b != b->b) return false; break;
    case T_NAME: case T_STR: case T_APPLY: case T_GRADREF:
      if (strcmp(a->str, b->str) != 0) return false;
      break;
    case T_PRIM: case T_OPREF: if (a->prim != b->prim) return false; break;
    case T_PROJ: if (a->index != b->index) return false; break;
    default: break;
    }
    for (int i = 0; i < a->nnames; i++)
      if (strcmp(a->names[i], b->names[i]) != 0) return false;
    for (int i = 1; i < a->nkids; i++)
      if (!term_eq(a->kids[i], b->kids[i])) return false;
    if (a->nkids == 0) return true;
    a = a->kids[0];
    b = b->kids[0];
  }
}

static Term *parse1(const char *src) {
  ParseResult r = fe_parse_program("<t>", src, strlen(src));
  ck_assert_msg(r.nerrors == 0, "%s: %s", src, r.nerrors ? fe_error_text(r.errors[0]) : "");
  ck_assert_int_eq(r.nitems, 1);
  ck_assert_int_eq(r.items[0]->kind, ITEM_EXPR);
  return r.items[0]->body;
}

/* Parses src, prints it (must give want), re-parses the text (must give the
   same tree). */
static void check_print(const char *src, const char *want) {
  Term *t = parse1(src);
  char *s = fe_term_str(t);
  ck_assert_msg(strcmp(s, want) == 0, "%s printed as %s, want %s", src, s, want);
  Term *u = parse1(s);
  ck_assert_msg(term_eq(t, u), "%s: %s re-parses to a different tree", src, s);
  ck_assert_str_eq(fe_term_str(u), s);
}

START_TEST(test_fewest_parens) {
  check_print("(1 + 2) * 3", "(1 + 2) * 3");
  check_print("1 + (2 * 3)", "1 + 2 * 3");
  check_print("(1 - 2) - 3", "1 - 2 - 3");
  check_print("1 - (2 - 3)", "1 - (2 - 3)");
  check_print("1/(2*3)", "1 / (2 * 3)");
  check_print("(a || b) && c", "(a || b) && c");
  check_print("a || (b && c)", "a || b && c");
  check_print("(a == b) == c", "(a == b) == c");
  check_print("a < (b + c)", "a < b + c");
  check_print("(a < b) && (c >= d)", "a < b && c >= d");
  check_print("-(x^2)", "-x ^ 2");
  check_print("(-x)^2", "(-x) ^ 2");
  check_print("2^(3^4)", "2 ^ 3 ^ 4");
  check_print("(2^3)^4", "(2 ^ 3) ^ 4");
  check_print("2^(-1)", "2 ^ -1");
  check_print("2^(-x)", "2 ^ -x");
  check_print("(-2)^2", "(-2) ^ 2");
  check_print("-(2^2)", "-2 ^ 2");
  check_print("-(x * y)", "-(x * y)");
  check_print("(-x) * y", "-x * y");
  check_print("x * (-y)", "x * -y");
  check_print("a - (-1)", "a - -1");
  check_print("-(-x)", "- -x");
  check_print("!(!a)", "!!a");
  check_print("!(a == b)", "!(a == b)");
  check_print("(!a) == b", "!a == b");
  check_print("f (-1) 2", "f (-1) 2");
  check_print("f (g x) (x.1) ((1, 2)) [1]", "f (g x) x.1 (1, 2) [1]");
  check_print("(f x) ^ 2", "f x ^ 2");
  check_print("(f x).1", "(f x).1");
  check_print("(t.1).2", "t.1.2");
  check_print("(-1).1", "(-1).1");
  check_print("(1).1", "(1).1");
  check_print("((1, 2)).2", "(1, 2).2");
  check_print("1 + (let x = 2 in x)", "1 + let x = 2 in x");
  check_print("(1 + let x = 2 in x) * 3", "(1 + let x = 2 in x) * 3");
  check_print("(let x = 1 in x) + 1", "(let x = 1 in x) + 1");
  check_print("(if a then b else c) + 1", "(if a then b else c) + 1");
  check_print("f (if a then b else c)", "f (if a then b else c)");
  check_print("let x = (let y = 1 in y) in x", "let x = let y = 1 in y in x");
  check_print("if (if a then b else c) then (let x = 1 in x) else 3",
              "if if a then b else c then let x = 1 in x else 3");
  check_print("[let x = 1 in x, if a then 1 else 2]", "[let x = 1 in x, if a then 1 else 2]");
  check_print("-(let x = 1 in x)", "-let x = 1 in x");
  check_print("(-(let x = 1 in x)) + 1", "-(let x = 1 in x) + 1");
  check_print("map (x. x + 1) a", "map (x. x + 1) a");
  check_print("map2 (x, y. x * y) a b", "map2 (x, y. x * y) a b");
  check_print("map (x. 1) a", "map (x. 1) a");
  check_print("reduce (+) 0 a", "reduce (+) 0 a");
  check_print("scanl (max) 0 (map (-) a)", "scanl (max) 0 (map (-) a)");
  check_print("grad f 1 (2, 3)", "grad f 1 (2, 3)");
  check_print("(grad f wrt x y) 1 2", "(grad f wrt x y) 1 2");
  check_print("(grad f wrt x)", "(grad f wrt x)");
  check_print("grad f", "grad f");
  check_print("(grad f) 1", "grad f 1");
  check_print("(grad f 1).1", "(grad f 1).1");
  check_print("load \"a\\\"b\\\\c.npy\"", "load \"a\\\"b\\\\c.npy\"");
  check_print("(x, y.1)", "(x, y.1)");
  check_print("(x.1, y)", "(x.1, y)");
  check_print("(x. x.1)", "(x. x.1)");
  check_print("-0", "-0");
  check_print("1e300 + 2.5e-10 + 0.1", "1e+300 + 2.5e-10 + 0.1");
  check_print("true && false", "true && false");
  check_print("[]", "[]");
}
END_TEST

START_TEST(test_round_trips) {
  const char *srcs[] = {
      "let (a, b) = (1, [2, 3]) in a + length b",
      "if x < 0 then -x else x",
      "foldl (acc, x. acc + x * x) 0 (iota 10)",
      "scanr (x, acc. max x acc) (-inf) a",
      "let t = (1, (2, 3)) in t.2.1 + snd (fst t, 4)",
      "sigmoid (-x) * (1 - sigmoid x) ^ 2 / sqrt (abs y + 1e-3)",
      "save \"out.npy\" (map (x. x / 2) (load \"in.npy\"))",
      "a == b || !(c != d) && e <= f",
      "replicate 3 (1, true)",
      "let x = 1 in let y = x in let (p, q) = (x, y) in p * q",
      "(grad f wrt a b) (1, 2) [3] true",
      "f x.1.2 (g y).1 z",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    Term *t = parse1(srcs[i]);
    char *s = fe_term_str(t);
    Term *u = parse1(s);
    ck_assert_msg(term_eq(t, u), "%s -> %s", srcs[i], s);
    ck_assert_str_eq(fe_term_str(u), s);
  }
}
END_TEST

/* Random surface trees: print, re-parse, compare. */
static uint64_t rng = 12345;
static unsigned rnd(unsigned n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng % n);
}

static const char *rnd_name(void) {
  static const char *names[] = {"x", "y", "f", "t", "acc", "x'", "_a1"};
  return names[rnd(7)];
}

static Term *gen(int depth) {
  Span s = fe_span("<gen>", 1, 1);
  unsigned k = depth <= 0 ? rnd(3) : rnd(17);
  Term *e;
  switch (k) {
  case 0: {
    static const double nums[] = {0, 1, 2.5, 1e-7, 1e300, -1, -0.0, -2.5e10, 3};
    e = fe_term_num(s, nums[rnd(9)]);
    e->type = NULL;
    return e;
  }
  case 1:
    e = fe_term_new(T_NAME, s, NULL);
    e->str = rnd_name();
    return e;
  case 2:
    e = fe_term_bool(s, rnd(2));
    e->type = NULL;
    return e;
  case 3: case 4: case 5: { /* binary operators */
    static const Prim ops[] = {PRIM_ADD, PRIM_SUB, PRIM_MUL, PRIM_DIV, PRIM_POW, PRIM_EQ, PRIM_NE,
                               PRIM_LT, PRIM_LE, PRIM_GT, PRIM_GE, PRIM_AND, PRIM_OR};
    Term *a[2] = {gen(depth - 1), gen(depth - 1)};
    return fe_term_prim(s, NULL, ops[rnd(13)], 2, a);
  }
  case 6: { /* prefix; '-' of a literal would be folded by the parser */
    Term *a = gen(depth - 1);
    Prim p = rnd(2) ? PRIM_NEG : PRIM_NOT;
    if (p == PRIM_NEG && a->kind == T_NUM) p = PRIM_NOT;
    return fe_term_prim(s, NULL, p, 1, &a);
  }
  case 7: { /* application */
    Term *a[3] = {gen(depth - 1), gen(depth - 1), gen(depth - 1)};
    e = fe_term_kids(s, T_APPLY, NULL, 1 + (int)rnd(3), a);
    e->str = rnd_name();
    return e;
  }
  case 8: {
    Term *a = gen(depth - 1);
    e = fe_term_kids(s, T_PROJ, NULL, 1, &a);
    e->index = (int)rnd(3);
    return e;
  }
  case 9: case 10: {
    Term *a[3] = {gen(depth - 1), gen(depth - 1), gen(depth - 1)};
    return fe_term_kids(s, k == 9 ? T_TUPLE : T_ARRAY, NULL, k == 9 ? 2 + (int)rnd(2) : (int)rnd(4), a);
  }
  case 11: case 12: {
    Term *a[2] = {gen(depth - 1), gen(depth - 1)};
    bool tup = k == 12;
    e = fe_term_kids(s, tup ? T_LETTUP : T_LET, NULL, 2, a);
    e->nnames = tup ? 2 : 1;
    e->names = NEW_ARRAY(const char *, 2);
    e->names[0] = rnd_name();
    e->names[1] = rnd_name();
    if (!tup) e->str = e->names[0];
    return e;
  }
  case 13: {
    Term *a[3] = {gen(depth - 1), gen(depth - 1), gen(depth - 1)};
    return fe_term_kids(s, T_IF, NULL, 3, a);
  }
  case 14: {
    Term *a = gen(depth - 1);
    e = fe_term_kids(s, T_LAM, NULL, 1, &a);
    e->nnames = 1 + (int)rnd(2);
    e->names = NEW_ARRAY(const char *, 2);
    e->names[0] = rnd_name();
    e->names[1] = rnd_name();
    return e;
  }
  case 15:
    e = fe_term_new(T_OPREF, s, NULL);
    e->prim = (Prim[]){PRIM_ADD, PRIM_SUB, PRIM_MUL, PRIM_DIV, PRIM_MAX, PRIM_MIN}[rnd(6)];
    return e;
  default: {
    Term *a[2] = {gen(depth - 1), gen(depth - 1)};
    e = fe_term_kids(s, T_GRADREF, NULL, (int)rnd(3), a);
    e->str = rnd_name();
    e->nnames = (int)rnd(3);
    e->names = NEW_ARRAY(const char *, 2);
    e->names[0] = rnd_name();
    e->names[1] = rnd_name();
    return e;
  }
  }
}

START_TEST(test_random_round_trips) {
  for (int i = 0; i < 3000; i++) {
    Term *t = gen(1 + i % 6);
    char *s = fe_term_str(t);
    ParseResult r = fe_parse_program("<t>", s, strlen(s));
    ck_assert_msg(r.nerrors == 0, "%s: %s", s, r.nerrors ? fe_error_text(r.errors[0]) : "");
    ck_assert_msg(r.nitems == 1 && r.items[0]->kind == ITEM_EXPR, "%s: not one expression", s);
    ck_assert_msg(term_eq(t, r.items[0]->body), "%s re-parses to %s", s,
                  fe_term_str(r.items[0]->body));
  }
}
END_TEST

/* Checked terms, built by hand as the checker would. */
START_TEST(test_checked_terms) {
  Span s = fe_span("<c>", 1, 1);
  const Type *R = fe_ty_real();
  Sym *x = fe_sym_new("x", R, s);
  Sym *x2 = fe_sym_new("x", R, s);
  Term *one = fe_term_num(s, 1);
  Term *neg1 = fe_term_num(s, -1);
  /* let x = 1 in let x = x + -1 in x */
  Term *add = fe_term_prim(s, R, PRIM_ADD, 2, (Term *[]){fe_term_var(s, x), neg1});
  Term *inner = fe_term_kids(s, T_LET, R, 2, (Term *[]){add, fe_term_var(s, x2)});
  inner->sym = x2;
  Term *outer = fe_term_kids(s, T_LET, R, 2, (Term *[]){one, inner});
  outer->sym = x;
  ck_assert_str_eq(fe_term_str(outer), "let x = 1 in let x = x + -1 in x");
  ck_assert_str_eq(fe_term_str_opts(outer, FE_PRINT_UNIQUE),
                   una_sprintf("let x_%d = 1 in let x_%d = x_%d + -1 in x_%d", x->id, x2->id,
                               x->id, x2->id));
  /* a def, a call with a negative literal, a global, prims as functions */
  Def *d = NEW(Def);
  d->name = "f";
  d->nparams = 3;
  d->params = NEW_ARRAY(Sym *, 3);
  d->params[0] = x;
  d->params[1] = fe_sym_new("v", fe_ty_array(R), s);
  d->params[2] = fe_sym_new("b", fe_ty_bool(), s);
  d->ret = R;
  d->body = outer;
  ck_assert_str_eq(fe_def_str(d), "def f (x: R) (v: [R]) (b: B) : R = let x = 1 in let x = x + -1 in x");
  ck_assert_str_eq(fe_def_str_opts(d, FE_PRINT_MULTILINE),
                   "def f (x: R) (v: [R]) (b: B) : R =\n"
                   "  let x = 1 in\n"
                   "  let x = x + -1 in\n"
                   "  x");
  ck_assert_str_eq(fe_def_str_opts(d, FE_PRINT_MULTILINE | FE_PRINT_UNIQUE),
                   una_sprintf("def f (x_%d: R) (v_%d: [R]) (b_%d: B) : R =\n"
                               "  let x_%d = 1 in\n"
                               "  let x_%d = x_%d + -1 in\n"
                               "  x_%d",
                               x->id, d->params[1]->id, d->params[2]->id, x->id, x2->id, x->id,
                               x2->id));
  /* the multi-line form re-parses */
  ParseResult r = fe_parse_program("<t>", fe_def_str_opts(d, FE_PRINT_MULTILINE),
                                   strlen(fe_def_str_opts(d, FE_PRINT_MULTILINE)));
  ck_assert_int_eq(r.nerrors, 0);
  ck_assert_int_eq(r.nitems, 1);
  Global *g = NEW(Global);
  g->name = "w";
  Term *gt = fe_term_new(T_GLOBAL, s, R);
  gt->global = g;
  Term *call = fe_term_kids(s, T_CALL, R, 3, (Term *[]){neg1, gt, fe_term_bool(s, true)});
  call->def = d;
  ck_assert_str_eq(fe_term_str(call), "f (-1) w true");
  Term *pw = fe_term_prim(s, R, PRIM_POW, 2, (Term *[]){neg1, neg1});
  ck_assert_str_eq(fe_term_str(pw), "(-1) ^ -1");
  Term *ng = fe_term_prim(s, R, PRIM_NEG, 1, &neg1);
  ck_assert_str_eq(fe_term_str(ng), "- -1");
  Term *mx = fe_term_prim(s, R, PRIM_MAX, 2, (Term *[]){call, ng});
  ck_assert_str_eq(fe_term_str(mx), "max (f (-1) w true) (- -1)");
  Term *sn = fe_term_prim(s, R, PRIM_SIN, 1, &mx);
  ck_assert_str_eq(fe_term_str(sn), "sin (max (f (-1) w true) (- -1))");
  Term *inf = fe_term_num(s, -INFINITY);
  ck_assert_str_eq(fe_term_str(fe_term_prim(s, R, PRIM_EXP, 1, &inf)), "exp (-inf)");
  /* zero-parameter call, lambdas with symbols */
  Def *z = NEW(Def);
  z->name = "zero";
  z->body = one;
  Term *zc = fe_term_kids(s, T_CALL, R, 0, NULL);
  zc->def = z;
  ck_assert_str_eq(fe_term_str(fe_term_prim(s, R, PRIM_ADD, 2, (Term *[]){zc, zc})), "zero + zero");
  ck_assert_str_eq(fe_def_str(z), "def zero = 1");
  Sym *a = fe_sym_new("a", R, s), *b = fe_sym_new("b", R, s);
  Term *lam = fe_term_kids(s, T_LAM, NULL, 1,
                           (Term *[]){fe_term_prim(s, R, PRIM_MUL, 2,
                                                   (Term *[]){fe_term_var(s, a), fe_term_var(s, b)})});
  lam->syms = (Sym *[]){a, b};
  lam->nsyms = 2;
  Term *red = fe_term_prim(s, R, PRIM_REDUCE, 3, (Term *[]){lam, one, fe_term_var(s, d->params[1])});
  ck_assert_str_eq(fe_term_str(red), "reduce (*) 1 v");
  /* gradients: the default wrt list is left out */
  Term *gr = fe_term_kids(s, T_GRAD, NULL, 3, (Term *[]){one, gt, fe_term_bool(s, false)});
  gr->def = d;
  gr->wrt = (int[]){0, 1};
  gr->nwrt = 2;
  ck_assert_str_eq(fe_term_str(gr), "grad f 1 w false");
  gr->wrt = (int[]){1, 0};
  ck_assert_str_eq(fe_term_str(gr), "(grad f wrt v x) 1 w false");
  gr->wrt = (int[]){1};
  gr->nwrt = 1;
  ck_assert_str_eq(fe_term_str(gr), "(grad f wrt v) 1 w false");
  /* tuple pattern with symbols */
  Term *lt = fe_term_kids(s, T_LETTUP, R, 2, (Term *[]){gt, fe_term_var(s, b)});
  lt->syms = (Sym *[]){a, b};
  lt->nsyms = 2;
  ck_assert_str_eq(fe_term_str(lt), "let (a, b) = w in b");
  /* fe_term_print */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fe_term_print(f, mx);
  fclose(f);
  ck_assert_str_eq(buf, "max (f (-1) w true) (- -1)");
  free(buf);
}
END_TEST

/* Regression: a builtin whose first argument is not a lambda (shift1R,
   length) printed a nested application as if it were a combinator's
   function argument, without parentheses: `shift1R scanl (...) 0 v`. */
START_TEST(test_nested_builtin_args) {
  Span s = fe_span("<c>", 1, 1);
  Sym *v = fe_sym_new("v", fe_ty_array(fe_ty_real()), s);
  Term *scan = fe_mk_scanl(s, fe_mk_oplam(s, PRIM_ADD), fe_mk_num(s, 0), fe_mk_var(s, v));
  ck_assert_str_eq(fe_term_str(fe_mk_shift(s, PRIM_SHIFT1R, scan)),
                   "shift1R (scanl (+) 0 v)");
  ck_assert_str_eq(fe_term_str(fe_mk_length(s, fe_mk_shift(s, PRIM_SHIFT1L, fe_mk_var(s, v)))),
                   "length (shift1L v)");
}
END_TEST

START_TEST(test_items) {
  const char *src =
      "def f (x: R) (v: [(R, B)]) : [R] = v\n"
      "def g = 1\n"
      "let y = 2 + 3\n"
      "let (a, b) = (1, 2)\n"
      "let z = 1 in z\n"
      ":type  f 1 \n"
      ":quit\n";
  ParseResult r = fe_parse_program("<t>", src, strlen(src));
  ck_assert_int_eq(r.nerrors, 0);
  ck_assert_int_eq(r.nitems, 7);
  const char *want[] = {"def f (x: R) (v: [(R, B)]) : [R] = v", "def g = 1", "let y = 2 + 3",
                        "let (a, b) = (1, 2)", "let z = 1 in z", ":type f 1", ":quit"};
  for (int i = 0; i < 7; i++) ck_assert_str_eq(fe_item_str(r.items[i]), want[i]);
}
END_TEST

typedef struct Job {
  const char *src;
  size_t len;
  Term *term; /* printed as is when set */
  const char *printed;
  const char *err;
  bool same;
} Job;

static void print_thread(void *arg) {
  Job *j = arg;
  if (j->term) {
    FeTry t;
    if (fe_try(&t)) {
      j->printed = fe_term_str(j->term);
      fe_untry(&t);
    } else {
      j->err = t.err.msg;
    }
    return;
  }
  ParseResult r = fe_parse_program("<t>", j->src, j->len);
  if (r.nerrors) {
    j->err = r.errors[0].msg;
    return;
  }
  FeTry t;
  if (fe_try(&t)) {
    j->printed = fe_term_str(r.items[0]->body);
    fe_untry(&t);
  } else {
    j->err = t.err.msg;
    return;
  }
  ParseResult r2 = fe_parse_program("<t>", j->printed, strlen(j->printed));
  j->same = r2.nerrors == 0 && term_eq(r.items[0]->body, r2.items[0]->body);
}

static Job run_job(const char *src, size_t len, Term *term) {
  Job j = {src, len, term, NULL, NULL, false};
  tl_on_stack((size_t)8 << 20, print_thread, &j);
  return j;
}

START_TEST(test_long_chain) {
  size_t n = 100000;
  char *s = GC_MALLOC_ATOMIC(4 * n + 1);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (i) {
      memcpy(s + k, i % 2 ? " + " : " - ", 3);
      k += 3;
    }
    s[k++] = 'x';
  }
  Job j = run_job(s, k, NULL);
  ck_assert_ptr_null(j.err);
  ck_assert_uint_eq(strlen(j.printed), k);
  ck_assert(memcmp(j.printed, s, k) == 0);
  ck_assert(j.same);
  /* a moderately deep right-nested tree prints and re-parses */
  size_t m = 3000;
  char *t = GC_MALLOC_ATOMIC(6 * m + 2);
  for (size_t i = 0; i < m; i++) memcpy(t + 5 * i, "x - (", 5);
  t[5 * m] = 'x';
  memset(t + 5 * m + 1, ')', m);
  j = run_job(t, 6 * m + 1, NULL);
  ck_assert_ptr_null(j.err);
  ck_assert(j.same);
  /* a tree too deep for the stack: the printer reports it */
  Span sp = fe_span("<t>", 1, 1);
  Term *e = fe_term_new(T_NAME, sp, NULL);
  e->str = "x";
  for (int i = 0; i < 1000000; i++) e = fe_term_prim(sp, NULL, PRIM_NEG, 1, &e);
  j = run_job(NULL, 0, e);
  ck_assert_str_eq(j.err, "expression nested too deeply");
}
END_TEST

Suite *suite_term_print(void) {
  Suite *s = suite_create("term_print");
  TCase *tc = tcase_create("term_print");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_fewest_parens);
  tcase_add_test(tc, test_round_trips);
  tcase_add_test(tc, test_random_round_trips);
  tcase_add_test(tc, test_checked_terms);
  tcase_add_test(tc, test_nested_builtin_args);
  tcase_add_test(tc, test_items);
  tcase_add_test(tc, test_long_chain);
  suite_add_tcase(s, tc);
  return s;
}
