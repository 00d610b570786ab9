/* test_check.c: unit tests of the type checker (frontend/check.c): types of
   builtins and operators, name resolution, slots, desugarings, grad typing
   and every located error message. */
#include <check.h>
#include <math.h>

#include "../../frontend/check.h"
#include "../testlib.h"

Suite *suite_check(void);

/* ---- Helpers ---- */

typedef struct Outcome {
  const char *err; /* "LINE:COL: MSG" of the first error, or NULL */
  Def *last;       /* the Def of the last def, let or expression item */
  const Type *type;/* the last expression's type (fe_check_type_of) or :type's */
  Env *env;
} Outcome;

static const char *short_err(FeError e) {
  return una_sprintf("%d:%d: %s", e.span.line, e.span.col, e.msg);
}

/* Parses src and checks its items in order, binding defs and lets as the
   driver does. A ":type e" command sets the outcome's type. */
static Outcome run(const char *src) {
  Outcome o = {NULL, NULL, NULL, fe_env_new()};
  ParseResult pr = fe_parse_program("t", src, strlen(src));
  if (pr.nerrors > 0) {
    o.err = una_sprintf("syntax: %s", short_err(pr.errors[0]));
    return o;
  }
  FeTry t;
  if (fe_try(&t)) {
    for (int i = 0; i < pr.nitems; i++) {
      const Item *it = pr.items[i];
      switch (it->kind) {
      case ITEM_DEF:
        o.last = fe_check_def(o.env, it);
        fe_env_bind_def(o.env, o.last);
        break;
      case ITEM_LET: {
        Global **gs = NULL;
        o.last = fe_check_let(o.env, it, &gs);
        for (int j = 0; j < it->nnames; j++) fe_env_bind_global(o.env, gs[j]);
        break;
      }
      case ITEM_EXPR:
        o.last = fe_check_expr(o.env, it->body);
        o.type = fe_check_type_of(o.env, it->body);
        ck_assert(fe_type_eq(o.type, o.last->ret));
        break;
      case ITEM_CMD: {
        ck_assert_str_eq(it->name, "type");
        Term *e = fe_parse_expr("t", it->arg, strlen(it->arg), it->arg_span.line, it->arg_span.col);
        o.type = fe_check_type_of(o.env, e);
        break;
      }
      }
    }
    fe_untry(&t);
  } else {
    o.err = short_err(t.err);
  }
  return o;
}

static void type_is(const char *src, const char *want) {
  Outcome o = run(src);
  ck_assert_msg(o.err == NULL, "'%s': unexpected error %s", src, o.err);
  ck_assert_msg(o.type != NULL, "'%s': no type", src);
  const char *got = fe_type_str(o.type);
  ck_assert_msg(strcmp(got, want) == 0, "'%s': type %s, expected %s", src, got, want);
}

static void err_is(const char *src, const char *want) {
  Outcome o = run(src);
  ck_assert_msg(o.err != NULL, "'%s': no error, expected %s", src, want);
  ck_assert_msg(strcmp(o.err, want) == 0, "'%s':\n  got      %s\n  expected %s", src, o.err, want);
}

static Def *def_of(const char *src) {
  Outcome o = run(src);
  ck_assert_msg(o.err == NULL, "'%s': unexpected error %s", src, o.err);
  return o.last;
}

/* ---- Types of builtins and operators ---- */

START_TEST(test_scalar_builtins) {
  const char *names[] = {"neg", "sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sigmoid", "abs", "floor"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    type_is(una_sprintf("%s 1", names[i]), "R");
    type_is(una_sprintf(":type %s", names[i]), "R -> R");
    err_is(una_sprintf("%s true", names[i]),
           una_sprintf("1:%d: type mismatch in argument 1 of '%s': expected R, found B",
                       (int)strlen(names[i]) + 2, names[i]));
    err_is(una_sprintf("%s 1 2", names[i]),
           una_sprintf("1:1: '%s' expects 1 argument, found 2", names[i]));
  }
  const char *bin[] = {"pow", "max", "min"};
  for (size_t i = 0; i < 3; i++) {
    type_is(una_sprintf("%s 1 2", bin[i]), "R");
    type_is(una_sprintf(":type %s", bin[i]), "R -> R -> R");
    err_is(una_sprintf("%s 1 [2]", bin[i]),
           una_sprintf("1:7: type mismatch in argument 2 of '%s': expected R, found [R]", bin[i]));
    err_is(una_sprintf("%s 1", bin[i]), una_sprintf("1:1: '%s' expects 2 arguments, found 1", bin[i]));
  }
}
END_TEST

START_TEST(test_operators) {
  const char *arith[] = {"+", "-", "*", "/", "^"};
  for (int i = 0; i < 5; i++) {
    type_is(una_sprintf("1 %s 2", arith[i]), "R");
    err_is(una_sprintf("1 %s true", arith[i]),
           una_sprintf("1:5: '%s' expects R operands, found B", arith[i]));
    err_is(una_sprintf("[1] %s 2", arith[i]),
           una_sprintf("1:1: '%s' expects R operands, found [R]", arith[i]));
  }
  const char *cmp[] = {"<", "<=", ">", ">="};
  for (int i = 0; i < 4; i++) {
    type_is(una_sprintf("1 %s 2", cmp[i]), "B");
    err_is(una_sprintf("true %s 2", cmp[i]),
           una_sprintf("1:1: '%s' expects R operands, found B", cmp[i]));
  }
  const char *eq[] = {"==", "!="};
  for (int i = 0; i < 2; i++) {
    type_is(una_sprintf("1 %s 2", eq[i]), "B");
    type_is(una_sprintf("true %s false", eq[i]), "B");
    err_is(una_sprintf("1 %s true", eq[i]),
           una_sprintf("1:6: '%s' operands differ: left is R, right is B", eq[i]));
    err_is(una_sprintf("[1] %s [1]", eq[i]),
           una_sprintf("1:1: '%s' expects R or B operands, found [R]", eq[i]));
  }
  type_is("true && false", "B");
  type_is("true || false", "B");
  type_is("!true", "B");
  type_is("-1", "R");
  type_is("-2^2", "R");
  err_is("true && 1", "1:9: '&&' expects B operands, found R");
  err_is("1 || true", "1:1: '||' expects B operands, found R");
  err_is("!1", "1:2: '!' expects a B operand, found R");
  err_is("-true", "1:2: '-' expects an R operand, found B");
}
END_TEST

START_TEST(test_array_builtins) {
  type_is("map (x. x * 2) [1, 2]", "[R]");
  type_is("map (x. x > 1) [1]", "[B]");
  type_is("map (x. [x]) [1]", "[[R]]");
  type_is("map2 (x, y. (x, y)) [1] [true]", "[(R, B)]");
  type_is("reduce (+) 0 [1, 2]", "R");
  type_is("reduce (x, y. (x.1 + y.1, x.2)) (0, true) [(1, false)]", "(R, B)");
  type_is("foldl (acc, b. if b then acc + 1 else acc) 0 [true]", "R");
  type_is("scanl (acc, b. if b then acc + 1 else acc) 0 [true]", "[R]");
  type_is("scanr (b, acc. if b then acc else acc + 1) 0 [true]", "[R]");
  type_is("shift1L [[1]]", "[[R]]");
  type_is("shift1R [true]", "[B]");
  type_is("length [true]", "R");
  type_is("iota 3", "[R]");
  type_is("replicate 3 (1, true)", "[(R, B)]");
  type_is("rand 3 1", "[R]");
  type_is("load \"a.npy\"", "[R]");
  type_is("save \"a.npy\" [1]", "[R]");
  type_is("save \"a.npy\" [[1]]", "[[R]]");
  type_is("save \"a.npy\" [[[1]]]", "[[[R]]]");
  type_is("[]", "[R]");
  type_is("[[], [1]]", "[[R]]");
  type_is("map exp [1]", "[R]");
  type_is("map2 max [1] [2]", "[R]");
  type_is("map2 (-) [1] [2]", "[R]");
  type_is("reduce min 0 [1]", "R");
  type_is("map fst [(1, true)]", "[R]");
  type_is("map snd [(1, true)]", "[B]");
  type_is("def f (x: R) : B = x > 0\nmap f [1]", "[B]");
  type_is("def f (x: R) (b: B) : R = x\nfoldl f 0 [true]", "R");
  type_is("let k = 3 in map (x. x + k) [1]", "[R]");

  err_is("map (x. x) 1", "1:12: type mismatch in argument 2 of 'map': expected an array, found R");
  err_is("map2 (+) [1] 2", "1:14: type mismatch in argument 3 of 'map2': expected an array, found R");
  err_is("map (x, y. x) [1]", "1:5: map's function takes 1 parameter, found 2");
  err_is("reduce (x. x) 0 [1]", "1:8: reduce's function takes 2 parameters, found 1");
  err_is("map max [1]", "1:5: map's function takes 1 parameter, found 2");
  err_is("map (+) [1]", "1:5: map's function takes 1 parameter, found 2");
  err_is("reduce (x, y. true) 0 [1]", "1:15: reduce's function must return R, found B");
  err_is("foldl (x, y. y) 0 [true]", "1:14: foldl's function must return R, found B");
  err_is("scanr (x, y. x) 0 [true]", "1:14: scanr's function must return R, found B");
  err_is("scanl (x, y. [x]) 0 [1]", "1:14: scanl's function must return R, found [R]");
  err_is("reduce (+) 0 [true]", "1:14: type mismatch in argument 3 of 'reduce': expected [R], found [B]");
  err_is("reduce (+) true [true]", "1:8: '+' expects R operands, found B");
  err_is("map2 (+) [true] [1]", "1:6: '+' expects R operands, found B");
  err_is("map sin [true]", "1:5: 'sin' expects R operands, found B");
  err_is("map (x. x + 1) [true]", "1:9: '+' expects R operands, found B");
  err_is("def f (x: [R]) = 1\nmap f [1]", "2:5: type mismatch in argument 1 of 'f': expected [R], found R");
  err_is("def f (x: R) (y: R) = 1\nmap f [1]", "2:5: map's function takes 1 parameter, found 2");
  err_is("def f (x: R) : B = true\nreduce f true [true]", "2:8: reduce's function takes 2 parameters, found 1");
  err_is("def f (x: R) (y: R) : B = true\nreduce f 0 [1]", "2:8: reduce's function must return R, found B");
  err_is("map iota [1]", "1:5: map's function must be a lambda (x. e), an operator section or a scalar function; 'iota' is not");
  err_is("map 1 [1]", "1:5: argument 1 of 'map' must be a function: a lambda (x. e), an operator section such as (+), a function name or a derivative operator such as (grad f)");
  err_is("let g = 1 in map g [1]", "1:18: 'g' is not a function");
  err_is("map nope [1]", "1:5: unknown name 'nope'");
  err_is("map (x, x. x) [1]", "1:5: map's function takes 1 parameter, found 2");
  err_is("map2 (x, x. x) [1] [2]", "1:10: duplicate parameter 'x' in lambda");
  err_is("map fst [1]", "1:5: projection of a non-tuple of type R");
  err_is("length 1", "1:8: type mismatch in argument 1 of 'length': expected an array, found R");
  err_is("shift1L true", "1:9: type mismatch in argument 1 of 'shift1L': expected an array, found B");
  err_is("iota [1]", "1:6: type mismatch in argument 1 of 'iota': expected R, found [R]");
  err_is("replicate true 1", "1:11: type mismatch in argument 1 of 'replicate': expected R, found B");
  err_is("rand 1 true", "1:8: type mismatch in argument 2 of 'rand': expected R, found B");
  err_is("load 1", "1:6: load expects a file name in double quotes");
  err_is("save 1 [1]", "1:6: save expects a file name in double quotes");
  err_is("save \"a\" [true]",
         "1:10: type mismatch in argument 2 of 'save': expected an array of reals ([R], [[R]], ...), found [B]");
  err_is("save \"a\" 1", "1:10: type mismatch in argument 2 of 'save': expected an array of reals ([R], [[R]], ...), found R");
  err_is("save \"a\" [[(1, 2)]]",
         "1:10: type mismatch in argument 2 of 'save': expected an array of reals ([R], [[R]], ...), found [[(R, R)]]");
  err_is("map (x. x) [1] [2]", "1:1: 'map' expects 2 arguments, found 3");
  err_is("\"a\"", "1:1: a string can only be the file name argument of load or save");
  err_is("1 + (x. x)", "1:5: a lambda can only be the function argument of map, map2, reduce, foldl, scanl or scanr");
}
END_TEST

/* ---- Expressions and their errors ---- */

START_TEST(test_expressions) {
  type_is("(1, true)", "(R, B)");
  type_is("(1, (true, [2])).2.2", "[R]");
  type_is("fst (1, true)", "R");
  type_is("snd (1, true)", "B");
  type_is("if true then [1] else []", "[R]");
  type_is("let x = 1 in let (a, b) = (x, [x]) in b", "[R]");
  type_is("inf", "R");
  type_is("nan + 1", "R");
  type_is("[(1, true), (2, false)]", "[(R, B)]");

  err_is("if 1 then 1 else 2", "1:4: condition of if must be B, found R");
  err_is("if true then 1 else [1]", "1:1: if branches differ: then is R, else is [R]");
  err_is("(1, 2).3", "1:7: tuple has 2 components; .3 is out of range");
  err_is("let x = 1 in x.1", "1:15: projection of a non-tuple of type R");
  err_is("fst 1", "1:1: projection of a non-tuple of type R");
  err_is("fst (1, 2) 3", "1:1: 'fst' expects 1 argument, found 2");
  err_is("[1, 2, true]", "1:8: array literal elements differ: element 1 is R, element 3 is B");
  err_is("1 + foo", "1:5: unknown name 'foo'");
  err_is("foo 1", "1:1: unknown name 'foo'");
  err_is("let x = 1 in x 2", "1:14: 'x' is not a function");
  err_is("let x = 1\nx 2", "2:1: 'x' is not a function");
  err_is("inf 2", "1:1: 'inf' is not a function");
  err_is("sin + 1", "1:1: 'sin' is a function of 1 parameter; apply it to arguments");
  err_is("fst", "1:1: 'fst' is a function of 1 parameter; apply it to arguments");
  err_is("def dot (a: [R]) (b: [R]) = 1\ndot + 1",
         "2:1: 'dot' is a function of 2 parameters; apply it to arguments");
  err_is("let (a, b) = (1, 2, 3) in a", "1:5: pattern (a, b) needs a tuple of 2 components, found (R, R, R)");
  err_is("let (a, b) = 1 in a", "1:5: pattern (a, b) needs a tuple of 2 components, found R");
  err_is("let (a, a) = (1, 2) in a", "1:9: duplicate name 'a' in pattern");
  err_is("map2 (+) [1] [2] + 1", "1:1: '+' expects R operands, found [R]");
  err_is("1 + (+)", "1:5: an operator section can only be the function argument of map, map2, reduce, foldl, scanl or scanr");
}
END_TEST

START_TEST(test_calls_and_defs) {
  type_is("def f (x: R) (y: [R]) : [R] = y\nf 1 [2]", "[R]");
  type_is("def f (x: R) (y: [R]) = (x, y)\n:type f", "R -> [R] -> (R, [R])");
  type_is("def c = 3\nc + 1", "R");
  type_is("def c = 3\n:type c", "R");
  type_is("let (a, b) = (1, true)\nb", "B");
  type_is("let a = [1]\na", "[R]");
  err_is("def f (x: R) (y: [R]) = x\nf 1 2", "2:5: type mismatch in argument 2 of 'f': expected [R], found R");
  err_is("def f (x: R) (y: R) = x\nf 1 2 3", "2:1: 'f' expects 2 arguments, found 3");
  err_is("def f (x: R) = x\nf", "2:1: 'f' is a function of 1 parameter; apply it to arguments");
  err_is("def c = 1\nc 2", "2:1: 'c' expects 0 arguments, found 1");
  err_is("def f (x: R) : B = x", "1:20: type mismatch in the result of 'f': expected B, found R");
  err_is("def f (x: R) (x: B) = 1", "1:15: duplicate parameter 'x' of 'f'");
  err_is("def f (x: R) : R = f x",
         "1:20: 'f' cannot call itself: a function may call only functions defined before it");
  err_is("let (a, b) = 1", "1:5: pattern (a, b) needs a tuple of 2 components, found R");
  err_is("let (a, b) = (1, 2, 3)", "1:5: pattern (a, b) needs a tuple of 2 components, found (R, R, R)");
  err_is("def f (x: R) = y", "1:16: unknown name 'y'");
}
END_TEST

/* ---- Scoping ---- */

START_TEST(test_shadowing) {
  type_is("let sin = true in sin", "B");
  type_is("def f (sin: [R]) = sin\nf [1]", "[R]");
  type_is("let exp = [3]\nexp", "[R]");
  type_is("def sin (x: [R]) = x\nsin [1]", "[R]");
  type_is("def inf = true\ninf", "B");
  type_is("let fst = 1\nfst", "R");
  type_is("let x = 1\nlet x = true in x", "B");
  type_is("let x = 1 in let x = [x] in x", "[R]");
  type_is("let x = 1 in (let x = true in x, x)", "(B, R)");
  type_is("map (x. x) (let x = [true] in x)", "[B]");
  type_is("let x = true in (map (x. x + 1) [1], x)", "([R], B)");
  /* A global and a def share one namespace; the later binding wins. */
  type_is("def g (x: R) = x\nlet g = true\ng", "B");
  type_is("let g = true\ndef g (x: R) = x\ng 1", "R");
  err_is("let g = true\ndef g (x: R) = x\ng", "3:1: 'g' is a function of 1 parameter; apply it to arguments");
}
END_TEST

START_TEST(test_redefinition) {
  Outcome o = run("def f (x: R) = x\ndef g (y: R) = f y\ndef f (x: R) = true\nlet v = g 1\nf 1");
  ck_assert_msg(o.err == NULL, "%s", o.err);
  ck_assert_str_eq(fe_type_str(o.type), "B");
  Def *g = fe_env_find_def(o.env, "g");
  Def *f = fe_env_find_def(o.env, "f");
  ck_assert_ptr_nonnull(g);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(g->body->kind, T_CALL);
  ck_assert_ptr_ne(g->body->def, f); /* g keeps the f it was checked with */
  ck_assert_str_eq(fe_type_str(g->body->def->ret), "R");
  ck_assert_str_eq(fe_type_str(f->ret), "B");
  ck_assert_ptr_null(fe_env_find_def(o.env, "v"));
  ck_assert_ptr_null(fe_env_find_def(o.env, "nope"));
  /* A def can refer to the earlier definition of its own name. */
  type_is("def f (x: R) = x\ndef f (x: R) = [f x]\nf 1", "[R]");
}
END_TEST

static void count_name(const char *name, void *ud) {
  int *n = ud;
  if (strcmp(name, "a") == 0) n[0]++;
  if (strcmp(name, "f") == 0) n[1]++;
  n[2]++;
}

START_TEST(test_each_name) {
  Outcome o = run("def f (x: R) = x\nlet a = 1\nlet (b, c) = (1, 2)\ndef a = 2\ndef f = 3");
  ck_assert_msg(o.err == NULL, "%s", o.err);
  int n[3] = {0, 0, 0};
  fe_env_each_name(o.env, count_name, n);
  ck_assert_int_eq(n[0], 1);
  ck_assert_int_eq(n[1], 1);
  ck_assert_int_eq(n[2], 4);
  /* Many names: the table grows. */
  Env *env = fe_env_new();
  for (int i = 0; i < 1000; i++) {
    Global *g = NEW(Global);
    g->name = una_sprintf("g%d", i);
    g->type = fe_ty_real();
    fe_env_bind_global(env, g);
  }
  n[2] = 0;
  fe_env_each_name(env, count_name, n);
  ck_assert_int_eq(n[2], 1000);
}
END_TEST

/* ---- Checked tree structure ---- */

START_TEST(test_slots) {
  Def *d = def_of("def f (x: R) (y: R) = let z = x in let (a, b) = (z, y) in "
                  "reduce (p, q. p + q) a [b] + reduce (+) 0 [x]");
  ck_assert_int_eq(d->nparams, 2);
  ck_assert_int_eq(d->params[0]->slot, 0);
  ck_assert_int_eq(d->params[1]->slot, 1);
  ck_assert_int_eq(d->nslots, 9);
  Term *let = d->body;
  ck_assert_int_eq(let->kind, T_LET);
  ck_assert_int_eq(let->sym->slot, 2);
  ck_assert_str_eq(let->sym->name, "z");
  ck_assert_int_eq(let->kids[0]->kind, T_VAR);
  ck_assert_ptr_eq(let->kids[0]->sym, d->params[0]);
  Term *lt = let->kids[1];
  ck_assert_int_eq(lt->kind, T_LETTUP);
  ck_assert_int_eq(lt->nsyms, 2);
  ck_assert_int_eq(lt->syms[0]->slot, 3);
  ck_assert_int_eq(lt->syms[1]->slot, 4);
  Term *add = lt->kids[1];
  ck_assert_int_eq(add->kind, T_PRIM);
  ck_assert_int_eq(add->prim, PRIM_ADD);
  Term *red = add->kids[0];
  ck_assert_int_eq(red->prim, PRIM_REDUCE);
  Term *lam = red->kids[0];
  ck_assert_int_eq(lam->kind, T_LAM);
  ck_assert_int_eq(lam->syms[0]->slot, 5);
  ck_assert_int_eq(lam->syms[1]->slot, 6);
  ck_assert_ptr_eq(red->kids[1]->sym, lt->syms[0]);
  ck_assert_ptr_eq(red->kids[2]->kids[0]->sym, lt->syms[1]);
  Term *lam2 = add->kids[1]->kids[0];
  ck_assert_int_eq(lam2->kind, T_LAM);
  ck_assert_int_eq(lam2->syms[0]->slot, 7);
  ck_assert_int_eq(lam2->syms[1]->slot, 8);
  /* Symbols are fresh per binder, even for the same name. */
  Def *e = def_of("let x = 1 in let x = x in x");
  ck_assert_int_eq(e->nslots, 2);
  ck_assert_int_eq(e->nparams, 0);
  ck_assert_str_eq(e->name, "<expr>");
  Sym *x1 = e->body->sym, *x2 = e->body->kids[1]->sym;
  ck_assert_ptr_ne(x1, x2);
  ck_assert_int_ne(x1->id, x2->id);
  ck_assert_ptr_eq(e->body->kids[1]->kids[0]->sym, x1);
  ck_assert_ptr_eq(e->body->kids[1]->kids[1]->sym, x2);
  Def *l = def_of("let q = let y = 2 in y");
  ck_assert_str_eq(l->name, "<let>");
  ck_assert_int_eq(l->nslots, 1);
}
END_TEST

START_TEST(test_desugar) {
  Def *d = def_of("map2 (-) [1] [2]");
  Term *lam = d->body->kids[0];
  ck_assert_int_eq(lam->kind, T_LAM);
  ck_assert_int_eq(lam->nsyms, 2);
  ck_assert_int_eq(lam->type->kind, TY_FUN);
  Term *b = lam->kids[0];
  ck_assert_int_eq(b->kind, T_PRIM);
  ck_assert_int_eq(b->prim, PRIM_SUB);
  ck_assert_ptr_eq(b->kids[0]->sym, lam->syms[0]);
  ck_assert_ptr_eq(b->kids[1]->sym, lam->syms[1]);
  ck_assert_int_eq(d->nslots, 2);

  d = def_of("map sqrt [1]");
  b = d->body->kids[0]->kids[0];
  ck_assert_int_eq(b->kind, T_PRIM);
  ck_assert_int_eq(b->prim, PRIM_SQRT);

  d = def_of("def f (x: R) (y: R) = x * y\nreduce f 1 [2]");
  lam = d->body->kids[0];
  b = lam->kids[0];
  ck_assert_int_eq(b->kind, T_CALL);
  ck_assert_str_eq(b->def->name, "f");
  ck_assert_int_eq(b->nkids, 2);
  ck_assert_ptr_eq(b->kids[1]->sym, lam->syms[1]);

  d = def_of("map fst [(1, true)]");
  b = d->body->kids[0]->kids[0];
  ck_assert_int_eq(b->kind, T_PROJ);
  ck_assert_int_eq(b->index, 0);

  d = def_of("snd (1, true)");
  ck_assert_int_eq(d->body->kind, T_PROJ);
  ck_assert_int_eq(d->body->index, 1);

  d = def_of("(1, true).2");
  ck_assert_int_eq(d->body->kind, T_PROJ);
  ck_assert_int_eq(d->body->index, 1);

  d = def_of("inf");
  ck_assert_int_eq(d->body->kind, T_NUM);
  ck_assert(isinf(d->body->num) && d->body->num > 0);
  d = def_of("nan");
  ck_assert(isnan(d->body->num));

  d = def_of("def c = 3\nc");
  ck_assert_int_eq(d->body->kind, T_CALL);
  ck_assert_int_eq(d->body->nkids, 0);

  d = def_of("let g = 3\ng");
  ck_assert_int_eq(d->body->kind, T_GLOBAL);
  ck_assert_str_eq(d->body->global->name, "g");

  d = def_of("load \"x.npy\"");
  ck_assert_int_eq(d->body->kids[0]->kind, T_STR);
  ck_assert_str_eq(d->body->kids[0]->str, "x.npy");

  d = def_of("pow 2 3");
  ck_assert_int_eq(d->body->kind, T_PRIM);
  ck_assert_int_eq(d->body->prim, PRIM_POW);
  for (int i = 0; i < d->body->nkids; i++) ck_assert_ptr_nonnull(d->body->kids[i]->type);
}
END_TEST

START_TEST(test_let_globals) {
  Outcome o = {NULL, NULL, NULL, fe_env_new()};
  ParseResult pr = fe_parse_program("t", "let (a, b, c) = (1, [true], (2, 3))", 35);
  ck_assert_int_eq(pr.nerrors, 0);
  ck_assert_int_eq(pr.nitems, 1);
  Global **gs = NULL;
  FeTry t;
  if (fe_try(&t)) {
    o.last = fe_check_let(o.env, pr.items[0], &gs);
    fe_untry(&t);
  } else {
    ck_abort_msg("%s", short_err(t.err));
  }
  ck_assert_str_eq(fe_type_str(o.last->ret), "(R, [B], (R, R))");
  ck_assert_str_eq(gs[0]->name, "a");
  ck_assert_str_eq(gs[1]->name, "b");
  ck_assert_str_eq(gs[2]->name, "c");
  ck_assert_str_eq(fe_type_str(gs[1]->type), "[B]");
  ck_assert_str_eq(fe_type_str(gs[2]->type), "(R, R)");
  ck_assert_int_ne(gs[0]->id, gs[1]->id);
  ck_assert_int_eq(gs[2]->span.col, 12);
  /* Nothing is bound until the driver binds it. */
  ck_assert(!fe_env_find_def(o.env, "a"));
}
END_TEST

/* ---- grad ---- */

START_TEST(test_grad) {
  const char *f = "def f (x: R) (y: [R]) (b: B) (t: (R, [R])) : R = x\n";
  type_is(una_sprintf("%s:type grad f", f), "R -> [R] -> B -> (R, [R]) -> (R, [R], (R, [R]))");
  type_is(una_sprintf("%s:type (grad f wrt y)", f), "R -> [R] -> B -> (R, [R]) -> [R]");
  type_is(una_sprintf("%sgrad f 1 [2] true (1, [2])", f), "(R, [R], (R, [R]))");
  type_is(una_sprintf("%s(grad f wrt y) 1 [2] true (1, [2])", f), "[R]");
  type_is(una_sprintf("%s(grad f wrt t x) 1 [2] true (1, [2])", f), "((R, [R]), R)");
  type_is("def h (x: R) = x * x\ngrad h 3", "R");
  type_is("def h (x: R) = x * x\n:type grad h", "R -> R");
  type_is("def h (b: B) (x: [R]) = 1\n(grad h) true [3]", "[R]");

  Def *d = def_of(una_sprintf("%s(grad f wrt t x) 1 [2] true (1, [2])", f));
  Term *g = d->body;
  ck_assert_int_eq(g->kind, T_GRAD);
  ck_assert_str_eq(g->def->name, "f");
  ck_assert_int_eq(g->nwrt, 2);
  ck_assert_int_eq(g->wrt[0], 3);
  ck_assert_int_eq(g->wrt[1], 0);
  ck_assert_int_eq(g->nkids, 4);
  d = def_of(una_sprintf("%sgrad f 1 [2] true (1, [2])", f));
  g = d->body;
  ck_assert_int_eq(g->nwrt, 3);
  ck_assert_int_eq(g->wrt[0], 0);
  ck_assert_int_eq(g->wrt[1], 1);
  ck_assert_int_eq(g->wrt[2], 3);

  err_is(una_sprintf("%sgrad f", f), "2:1: grad f needs 4 arguments");
  err_is(una_sprintf("%sgrad f 1", f), "2:1: grad f needs 4 arguments, found 1");
  err_is(una_sprintf("%sgrad f 1 2 true (1, [2])", f),
         "2:10: type mismatch in argument 2 of 'grad f': expected [R], found R");
  err_is(una_sprintf("%s(grad f wrt q) 1 [2] true (1, [2])", f), "2:13: 'q' is not a parameter of 'f'");
  err_is(una_sprintf("%s(grad f wrt b) 1 [2] true (1, [2])", f),
         "2:13: cannot differentiate with respect to 'b': its type B has no reals");
  err_is(una_sprintf("%s(grad f wrt x y x) 1 [2] true (1, [2])", f),
         "2:17: 'x' is named twice after wrt");
  err_is("def g (x: R) = [x]\ngrad g 1", "2:1: grad needs a function returning R; 'g' returns [R] (vjp takes any result)");
  err_is("def g (x: [B]) (y: (B, [B])) = 1\ngrad g [true] (true, [false])",
         "2:1: grad needs a function with a parameter that has reals in its type; 'g' has none");
  err_is("def g (x: B) = 1\ngrad g true",
         "2:1: grad needs a function with a parameter that has reals in its type; 'g' has none");
  err_is("def g = 1\ngrad g", "2:1: grad needs a function with a parameter that has reals in its type; 'g' has none");
  err_is("grad sin 1", "1:6: grad needs a user-defined function or a lambda; 'sin' is a builtin (write (x. sin x))");
  err_is("grad nope 1", "1:6: unknown name 'nope'");
  err_is("let v = 1\ngrad v 1", "2:6: grad needs a function; 'v' is not a function");
  err_is("def g (x: R) = x\nmap (grad g 1) [1]",
         "2:6: argument 1 of 'map' must be a function: a lambda (x. e), an operator section such as (+), a function name or a derivative operator such as (grad f)");
}
END_TEST

/* ---- Deep terms (built by hand, checked on a large stack) ---- */

typedef struct DeepJob {
  size_t stack;
  Term *term;
  const char *err;
  Def *def;
} DeepJob;

static void deep_main(void *arg) {
  DeepJob *job = arg;
  FeTry t;
  if (fe_try(&t)) {
    job->def = fe_check_expr(fe_env_new(), job->term);
    fe_untry(&t);
  } else {
    job->err = short_err(t.err);
  }
}

static void run_deep(DeepJob *job) { tl_on_stack(job->stack, deep_main, job); }

static Term *name_term(int line, const char *s) {
  Term *t = fe_term_new(T_NAME, fe_span("t", line, 1), NULL);
  t->str = s;
  return t;
}

/* let x = 1 in let x = x + 1 in ... x, n lets deep */
static Term *deep_lets(int n) {
  Term *t = name_term(n + 1, "x");
  for (int i = n; i >= 1; i--) {
    Span s = fe_span("t", i, 1);
    Term *rhs = fe_term_num(s, 1);
    if (i > 1) {
      Term *k[2] = {name_term(i, "x"), fe_term_num(s, 1)};
      rhs = fe_term_prim(s, NULL, PRIM_ADD, 2, k);
    }
    Term *k[2] = {rhs, t};
    t = fe_term_kids(s, T_LET, NULL, 2, k);
    t->str = "x";
  }
  return t;
}

START_TEST(test_deep_lets) {
  DeepJob job = {(size_t)1 << 30, deep_lets(100000), NULL, NULL};
  run_deep(&job);
  ck_assert_msg(job.err == NULL, "%s", job.err);
  ck_assert_int_eq(job.def->nslots, 100000);
  ck_assert_str_eq(fe_type_str(job.def->ret), "R");
  /* On a small stack the same term is an error, not a crash. */
  DeepJob small = {(size_t)4 << 20, job.term, NULL, NULL};
  run_deep(&small);
  ck_assert_ptr_nonnull(small.err);
  ck_assert_msg(strstr(small.err, "expression nested too deeply") != NULL, "%s", small.err);
}
END_TEST

START_TEST(test_deep_sum) {
  int n = 100000;
  Term *t = fe_term_num(fe_span("t", 1, 1), 0);
  for (int i = 1; i < n; i++) {
    Span s = fe_span("t", 1, 2 * i);
    Term *k[2] = {t, fe_term_num(s, i)};
    t = fe_term_prim(s, NULL, PRIM_ADD, 2, k);
  }
  DeepJob job = {(size_t)1 << 30, t, NULL, NULL};
  run_deep(&job);
  ck_assert_msg(job.err == NULL, "%s", job.err);
  ck_assert_str_eq(fe_type_str(job.def->ret), "R");
  /* A type error at the very bottom is still located. */
  Term *b = fe_term_bool(fe_span("t", 7, 3), true);
  Term *u = b;
  for (int i = 1; i < n; i++) {
    Term *k[2] = {u, fe_term_num(fe_span("t", 1, 1), i)};
    u = fe_term_prim(fe_span("t", 1, 1), NULL, PRIM_ADD, 2, k);
  }
  DeepJob bad = {(size_t)1 << 30, u, NULL, NULL};
  run_deep(&bad);
  ck_assert_ptr_nonnull(bad.err);
  ck_assert_str_eq(bad.err, "7:3: '+' expects R operands, found B");
}
END_TEST

/* The checker never changes its input. */
START_TEST(test_input_unchanged) {
  Term *t = deep_lets(3);
  Term *copy = NEW(Term);
  *copy = *t;
  FeTry tr;
  if (fe_try(&tr)) {
    fe_check_expr(fe_env_new(), t);
    fe_untry(&tr);
  }
  ck_assert_int_eq(t->kind, T_LET);
  ck_assert_ptr_null(t->type);
  ck_assert_ptr_null(t->sym);
  ck_assert(memcmp(copy, t, sizeof *t) == 0);
}
END_TEST

Suite *suite_check(void) {
  Suite *s = suite_create("check");
  TCase *tc = tcase_create("check");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_scalar_builtins);
  tcase_add_test(tc, test_operators);
  tcase_add_test(tc, test_array_builtins);
  tcase_add_test(tc, test_expressions);
  tcase_add_test(tc, test_calls_and_defs);
  tcase_add_test(tc, test_shadowing);
  tcase_add_test(tc, test_redefinition);
  tcase_add_test(tc, test_each_name);
  tcase_add_test(tc, test_slots);
  tcase_add_test(tc, test_desugar);
  tcase_add_test(tc, test_let_globals);
  tcase_add_test(tc, test_grad);
  tcase_add_test(tc, test_deep_lets);
  tcase_add_test(tc, test_deep_sum);
  tcase_add_test(tc, test_input_unchanged);
  suite_add_tcase(s, tc);
  return s;
}
