/* test_parser.c: Check tests for the parser (frontend/parser.c): items,
   precedence, associativity, spans, errors and recovery, limits. */
#include "../../frontend/parser.h"
#include "../suites.h"
#include "../testlib.h"

/* A term as an S-expression: (add 1 (mul 2 3)), (f x), (.1 t), ... */
static char *sx(const Term *t) {
  char buf[40];
  switch (t->kind) {
  case T_NUM:
    una_format_real(buf, sizeof buf, t->num);
    return una_strdup(buf);
  case T_BOOL: return una_strdup(t->b ? "true" : "false");
  case T_NAME: return una_strdup(t->str);
  case T_STR: return una_sprintf("\"%s\"", t->str);
  case T_OPREF: return una_sprintf("(op %s)", fe_prims[t->prim].name);
  default: break;
  }
  char *s;
  switch (t->kind) {
  case T_PRIM: s = una_sprintf("(%s", fe_prims[t->prim].name); break;
  case T_APPLY: s = una_sprintf("(%s", t->str); break;
  case T_GRADREF:
    s = una_sprintf("(grad %s", t->str);
    if (t->nnames) {
      s = una_sprintf("%s [", s);
      for (int i = 0; i < t->nnames; i++) s = una_sprintf("%s%s%s", s, i ? " " : "", t->names[i]);
      s = una_sprintf("%s]", s);
    }
    break;
  case T_PROJ: s = una_sprintf("(.%d", t->index + 1); break;
  case T_ARRAY: s = una_strdup("[array"); break;
  case T_LET: s = una_sprintf("(let %s", t->str); break;
  case T_LETTUP: case T_LAM:
    s = una_sprintf("(%s (", t->kind == T_LAM ? "lam" : "let");
    for (int i = 0; i < t->nnames; i++) s = una_sprintf("%s%s%s", s, i ? " " : "", t->names[i]);
    s = una_sprintf("%s)", s);
    break;
  default: s = una_sprintf("(%s", fe_term_kind_names[t->kind]); break;
  }
  for (int i = 0; i < t->nkids; i++) s = una_sprintf("%s %s", s, sx(t->kids[i]));
  return una_sprintf("%s%s", s, t->kind == T_ARRAY ? "]" : ")");
}

static char *item_sx(const Item *it) {
  switch (it->kind) {
  case ITEM_DEF: {
    char *s = una_sprintf("def %s", it->name);
    for (int i = 0; i < it->nparams; i++)
      s = una_sprintf("%s (%s %s)", s, it->params[i].name, fe_type_str(it->params[i].type));
    if (it->ret) s = una_sprintf("%s : %s", s, fe_type_str(it->ret));
    return una_sprintf("%s = %s", s, sx(it->body));
  }
  case ITEM_LET: {
    char *s = una_strdup("let");
    for (int i = 0; i < it->nnames; i++) s = una_sprintf("%s %s", s, it->names[i]);
    return una_sprintf("%s%s = %s", s, it->tuple_pattern ? " (tuple)" : "", sx(it->body));
  }
  case ITEM_CMD: return una_sprintf(":%s [%s]", it->name, it->arg);
  case ITEM_EXPR: return sx(it->body);
  }
  return NULL;
}

/* The items of src joined by "; ", or its errors as "L:C: msg" joined
   by " | ". */
static char *P(const char *src) {
  ParseResult r = fe_parse_program("<t>", src, strlen(src));
  char *s = una_strdup("");
  if (r.nerrors) {
    for (int i = 0; i < r.nerrors; i++)
      s = una_sprintf("%s%s%d:%d: %s", s, i ? " | " : "", r.errors[i].span.line,
                      r.errors[i].span.col, r.errors[i].msg);
    return s;
  }
  for (int i = 0; i < r.nitems; i++) s = una_sprintf("%s%s%s", s, i ? "; " : "", item_sx(r.items[i]));
  return s;
}

#define PARSES(src, want) ck_assert_str_eq(P(src), want)

START_TEST(test_atoms) {
  PARSES("12", "12");
  PARSES("1.5e3", "1500");
  PARSES("true", "true");
  PARSES("false", "false");
  PARSES("x", "x");
  PARSES("\"a.npy\"", "\"a.npy\"");
  PARSES("(x)", "x");
  PARSES("((x))", "x");
  PARSES("(1, x, true)", "(tuple 1 x true)");
  PARSES("[1, 2, 3]", "[array 1 2 3]");
  PARSES("[]", "[array]");
  PARSES("[[1], []]", "[array [array 1] [array]]");
  PARSES("((1, 2), [3])", "(tuple (tuple 1 2) [array 3])");
  PARSES("inf", "inf");
}
END_TEST

START_TEST(test_projection) {
  PARSES("t.1", "(.1 t)");
  PARSES("t.1.2", "(.2 (.1 t))");
  PARSES("(1, 2).2", "(.2 (tuple 1 2))");
  PARSES("f x.1 y", "(f (.1 x) y)");
  PARSES("f t.2.1", "(f (.1 (.2 t)))");
  PARSES("t.1 + u.2", "(add (.1 t) (.2 u))");
  PARSES("-t.1", "(neg (.1 t))");
  PARSES("t.1 ^ 2", "(pow (.1 t) 2)");
  PARSES("t . 1", "(.1 t)");
  PARSES("t. 1.5", "1:4: expected a component number after '.', found '1.5'");
  PARSES("t.1e3", "1:3: malformed number '1e3'");
  PARSES("1. + 2", "1:4: expected a component number after '.', found '+'");
  ParseResult r = fe_parse_program("<t>", "t.3", 3);
  ck_assert_int_eq(r.items[0]->body->kind, T_PROJ);
  ck_assert_int_eq(r.items[0]->body->index, 2);
  PARSES("t.0", "1:3: tuple components are numbered from 1");
  PARSES("t.x", "1:3: expected a component number after '.', found 'x'");
  PARSES("t.99999999", "1:3: tuple component number 99999999 is too large");
}
END_TEST

START_TEST(test_lambda_vs_projection) {
  PARSES("(x.1)", "(.1 x)");
  PARSES("(x. 1)", "(lam (x) 1)");
  PARSES("(x. 0.5)", "(lam (x) 0.5)");
  PARSES("map (x. 2.5 * x) a", "(map (lam (x) (mul 2.5 x)) a)");
  PARSES("(x, y. 1.5e3)", "(lam (x y) 1500)");
  PARSES("(x .1)", "(.1 x)");
  PARSES("(x.y)", "(lam (x) y)");
  PARSES("(x. x.1)", "(lam (x) (.1 x))");
  PARSES("(x, y. x * y)", "(lam (x y) (mul x y))");
  PARSES("(x, y.1)", "(tuple x (.1 y))");
  PARSES("(x.1, y)", "(tuple (.1 x) y)");
  PARSES("(acc, x. acc + x.1)", "(lam (acc x) (add acc (.1 x)))");
  PARSES("(x. (y. x + y))", "(lam (x) (lam (y) (add x y)))");
  PARSES("(x. let y = x in y)", "(lam (x) (let y x y))");
  PARSES("map (x. x * 2) a", "(map (lam (x) (mul x 2)) a)");
  PARSES("map2 (x, y. x + y) a b", "(map2 (lam (x y) (add x y)) a b)");
  PARSES("(x, y, z. x)", "(lam (x y z) x)"); /* the checker rejects 3 */
  PARSES("(x. )", "1:5: expected an expression, found ')'");
  PARSES("(x. 1", "1:6: expected ')' to close '(' at 1:1, found the end of the input");
}
END_TEST

START_TEST(test_sections) {
  PARSES("(+)", "(op add)");
  PARSES("(-)", "(op sub)");
  PARSES("(*)", "(op mul)");
  PARSES("(/)", "(op div)");
  PARSES("(max)", "(op max)");
  PARSES("(min)", "(op min)");
  PARSES("reduce (+) 0 a", "(reduce (op add) 0 a)");
  PARSES("scanl (max) 0 a", "(scanl (op max) 0 a)");
  PARSES("(- x)", "(neg x)");
  PARSES("(sin)", "sin");
  PARSES("(^)", "1:2: expected an expression, found '^'");
  PARSES("(==)", "1:2: expected an expression, found '=='");
}
END_TEST

START_TEST(test_application) {
  PARSES("f x", "(f x)");
  PARSES("f x y z", "(f x y z)");
  PARSES("f (g x) [1] (1, 2) true \"s\" 2", "(f (g x) [array 1] (tuple 1 2) true \"s\" 2)");
  PARSES("f (-1) 2", "(f -1 2)");
  PARSES("f -1", "(sub f 1)");
  PARSES("sin x + cos y", "(add (sin x) (cos y))");
  PARSES("f x ^ 2", "(pow (f x) 2)");
  PARSES("-f x", "(neg (f x))");
  PARSES("load \"x.npy\"", "(load \"x.npy\")");
  PARSES("f x\ng y", "(f x); (g y)");
  PARSES("f x\n  y", "(f x y)");
  PARSES("1 2", "1:3: expected an operator or the end of the line, found '2'");
  PARSES("t.1 x", "1:5: expected an operator or the end of the line, found 'x'");
  ParseResult r = fe_parse_program("<t>", "  foo 1 x", 9);
  ck_assert_int_eq(r.items[0]->body->kind, T_APPLY);
  ck_assert_int_eq(r.items[0]->body->span.col, 3);
  ck_assert_int_eq(r.items[0]->body->kids[1]->kind, T_NAME);
}
END_TEST

START_TEST(test_grad_forms) {
  PARSES("grad f", "(grad f)");
  PARSES("grad f 1 2", "(grad f 1 2)");
  PARSES("grad f x.1 [1]", "(grad f (.1 x) [array 1])");
  PARSES("(grad f wrt p q) 1 2", "(grad f [p q] 1 2)");
  PARSES("(grad f wrt p)", "(grad f [p])");
  PARSES("(grad f) 1 2", "(grad f 1 2)");
  PARSES("(grad f 1 2)", "(grad f 1 2)");
  PARSES("(grad f 1).1", "(.1 (grad f 1))");
  PARSES("2 * grad f x", "(mul 2 (grad f x))");
  PARSES("grad f wrt x", "1:8: 'wrt' needs parentheses: (grad f wrt x y) args");
  PARSES("(grad f wrt) 1", "1:12: expected a parameter name after 'wrt', found ')'");
  PARSES("(grad f wrt x 1", "1:15: expected ')' to close '(' at 1:1, found '1'");
  PARSES("grad 1", "1:6: expected a function name after 'grad' (or a lambda (x. e), or (grad f)), found '1'");
  ParseResult r = fe_parse_program("<t>", "(grad f wrt a b) 1", 18);
  Term *g = r.items[0]->body;
  ck_assert_int_eq(g->kind, T_GRADREF);
  ck_assert_int_eq(g->nnames, 2);
  ck_assert_int_eq(g->name_spans[1].col, 15);
  ck_assert_int_eq(g->span.col, 2); /* 'grad' */
  r = fe_parse_program("<t>", "1 + grad f 1", 12);
  ck_assert_int_eq(r.items[0]->body->kids[1]->span.col, 5);
  ck_assert_int_eq(g->nkids, 1);
}
END_TEST

START_TEST(test_let_if) {
  PARSES("let x = 1 in x", "(let x 1 x)");
  PARSES("let (a, b) = p in a + b", "(let (a b) p (add a b))");
  PARSES("let x = 1 in let y = 2 in x + y", "(let x 1 (let y 2 (add x y)))");
  PARSES("let x = let y = 1 in y in x", "(let x (let y 1 y) x)");
  PARSES("if a then b else c", "(if a b c)");
  PARSES("if a then b else c + 1", "(if a b (add c 1))");
  PARSES("if a then if b then 1 else 2 else 3", "(if a (if b 1 2) 3)");
  PARSES("1 + let x = 2 in x * 3", "(add 1 (let x 2 (mul x 3)))");
  PARSES("2 * if c then 1 else 2 + 3", "(mul 2 (if c 1 (add 2 3)))");
  PARSES("-let x = 1 in x", "(neg (let x 1 x))");
  PARSES("2 ^ if c then 1 else 2", "(pow 2 (if c 1 2))");
  PARSES("a || if c then d else e", "(or a (if c d e))");
  PARSES("(let x = 1 in x) + 1", "(add (let x 1 x) 1)");
  PARSES("let x = 5\nin x", "(let x 5 x)");
  PARSES("if a\nthen b\nelse c", "(if a b c)");
  PARSES("let x = 1 in", "1:13: expected an expression, found the end of the input");
  PARSES("1 + let x = 2", "1:14: expected 'in' after 'let x = ...', found the end of the input");
  PARSES("if a then b", "1:12: expected 'else' of 'if' at 1:1, found the end of the input");
  PARSES("if a else b", "1:6: expected 'then' after the condition of 'if' at 1:1, found 'else'");
  PARSES("let 1 = 2 in 3", "1:5: expected a name or a tuple pattern after 'let', found '1'");
  PARSES("let (a) = 2 in 3", "(let a 2 3)");
  PARSES("let x 1 in 3", "1:7: expected '=' after 'let x', found '1'");
}
END_TEST

/* Binary operators by level, loosest first. */
static const struct {
  const char *sym, *name;
} levels[][6] = {
    {{"||", "or"}},
    {{"&&", "and"}},
    {{"==", "eq"}, {"!=", "ne"}, {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"}},
    {{"+", "add"}, {"-", "sub"}},
    {{"*", "mul"}, {"/", "div"}},
    {{"^", "pow"}},
};

START_TEST(test_precedence_pairs) {
  int nl = (int)(sizeof levels / sizeof levels[0]);
  for (int i = 0; i < nl; i++)
    for (int j = 0; j < nl; j++)
      for (int a = 0; a < 6 && levels[i][a].sym; a++)
        for (int b = 0; b < 6 && levels[j][b].sym; b++) {
          const char *o1 = levels[i][a].sym, *n1 = levels[i][a].name;
          const char *o2 = levels[j][b].sym, *n2 = levels[j][b].name;
          char *src = una_sprintf("x %s y %s z", o1, o2);
          char *want;
          if (i < j) want = una_sprintf("(%s x (%s y z))", n1, n2);
          else if (i > j) want = una_sprintf("(%s (%s x y) z)", n2, n1);
          else if (i == 2) want = "1:7: comparison operators do not chain; add parentheses";
          else if (i == 5) want = una_sprintf("(%s x (%s y z))", n1, n2); /* ^ right */
          else want = una_sprintf("(%s (%s x y) z)", n2, n1);             /* left */
          if (i == 2 && j == 2 && strlen(o1) == 2) want = "1:8: comparison operators do not chain; add parentheses";
          ck_assert_msg(strcmp(P(src), want) == 0, "%s: got %s, want %s", src, P(src), want);
        }
}
END_TEST

START_TEST(test_prefix_and_application_levels) {
  /* prefix operators against every binary level */
  PARSES("-x * y", "(mul (neg x) y)");
  PARSES("x * -y", "(mul x (neg y))");
  PARSES("-x + y", "(add (neg x) y)");
  PARSES("x - -y", "(sub x (neg y))");
  PARSES("-x ^ 2", "(neg (pow x 2))");
  PARSES("-x^2", "(neg (pow x 2))");
  PARSES("2^-1", "(pow 2 -1)");
  PARSES("2^-x^2", "(pow 2 (neg (pow x 2)))");
  PARSES("2 ^ 3 ^ 4", "(pow 2 (pow 3 4))");
  PARSES("!a && b", "(and (not a) b)");
  PARSES("!a == b", "(eq (not a) b)");
  PARSES("!!a", "(not (not a))");
  PARSES("- -x", "(neg (neg x))");
  PARSES("-x < y", "(lt (neg x) y)");
  PARSES("!a || b", "(or (not a) b)");
  /* application and projection above everything */
  PARSES("f x * g y", "(mul (f x) (g y))");
  PARSES("f x.1 ^ 2", "(pow (f (.1 x)) 2)");
  PARSES("f x < g y && h z", "(and (lt (f x) (g y)) (h z))");
  /* negative literals */
  PARSES("-1", "-1");
  PARSES("-(1)", "-1");
  PARSES("- -1", "1");
  PARSES("-0", "-0");
  PARSES("-2^2", "(neg (pow 2 2))");
  PARSES("(-2)^2", "(pow -2 2)");
  PARSES("1 - 1", "(sub 1 1)");
  PARSES("1 -1", "(sub 1 1)");
  /* parentheses override */
  PARSES("(1 + 2) * 3", "(mul (add 1 2) 3)");
  PARSES("a < (b < c)", "(lt a (lt b c))");
  PARSES("(a < b) == c", "(eq (lt a b) c)");
  PARSES("1 - 2 - 3", "(sub (sub 1 2) 3)");
  PARSES("1 / 2 * 3", "(mul (div 1 2) 3)");
  PARSES("a || b || c", "(or (or a b) c)");
  PARSES("a && b && c", "(and (and a b) c)");
  PARSES("a + b < c * d", "(lt (add a b) (mul c d))");
  PARSES("a < b + c < d", "1:11: comparison operators do not chain; add parentheses");
}
END_TEST

START_TEST(test_items) {
  PARSES("def f (x: R) (v: [R]) : R = x", "def f (x R) (v [R]) : R = x");
  PARSES("def f (p: (R, [B])) = p.1", "def f (p (R, [B])) = (.1 p)");
  PARSES("def f : R = 1", "def f : R = 1");
  PARSES("def f = 1", "def f = 1");
  PARSES("def f (x: ((R))) : [[R]] = x", "def f (x R) : [[R]] = x");
  PARSES("let x = 1", "let x = 1");
  PARSES("let (a, b) = (1, 2)", "let a b (tuple) = (tuple 1 2)");
  PARSES("let x = 1 in x", "(let x 1 x)");
  PARSES("let (a, b, c) = t in c", "(let (a b c) t c)");
  PARSES(":type f x", ":type [f x]");
  PARSES(":quit", ":quit []");
  PARSES("def f (x: R) : R =\n  x\nf 2", "def f (x R) : R = x; (f 2)");
  PARSES("def f (x: R) : R =\nx\nf 2", "def f (x R) : R = x; (f 2)");
  PARSES("let a = [1,\n2]", "let a = [array 1 2]");
  PARSES("let a = [1,\n2]\na", "let a = [array 1 2]; a");
  PARSES("x\n-y", "x; (neg y)");
  PARSES("x\n+ y", "(add x y)");
  PARSES("x\n  -y", "(sub x y)");
  PARSES("1\n:type x\n2", "1; :type [x]; 2");
  PARSES("-- comment\n\n  \n", "");
  PARSES("", "");
  ParseResult r = fe_parse_program("<t>", "\n  def f (x: R) = x\nlet y = 2", 29);
  ck_assert_int_eq(r.nitems, 2);
  ck_assert_int_eq(r.items[0]->kind, ITEM_DEF);
  ck_assert_int_eq(r.items[0]->span.line, 2);
  ck_assert_int_eq(r.items[0]->span.col, 3);
  ck_assert_int_eq(r.items[0]->name_span.col, 7);
  ck_assert_int_eq(r.items[0]->params[0].span.col, 10);
  ck_assert_ptr_null(r.items[0]->ret);
  ck_assert_int_eq(r.items[1]->kind, ITEM_LET);
  ck_assert_str_eq(r.items[1]->name, "y");
  ck_assert_int_eq(r.items[1]->name_spans[0].line, 3);
  ck_assert_int_eq(r.items[1]->name_spans[0].col, 5);
  ck_assert(!r.items[1]->tuple_pattern);
  r = fe_parse_program("<t>", ":load  a.una ", 13);
  ck_assert_int_eq(r.items[0]->kind, ITEM_CMD);
  ck_assert_str_eq(r.items[0]->arg, "a.una");
  ck_assert_int_eq(r.items[0]->arg_span.col, 8);
}
END_TEST

START_TEST(test_item_errors) {
  PARSES("def f (x: R) x", "1:14: expected '=' after the parameters of 'f', found 'x'");
  PARSES("def f (x: R) : R x", "1:18: expected '=' after the parameters of 'f', found 'x'");
  PARSES("def (x: R) = x", "1:5: expected a function name after 'def', found '('");
  PARSES("def f (x R) = x", "1:10: expected ':' and the type of parameter 'x', found 'R'");
  PARSES("def f (1: R) = x", "1:8: expected a parameter name, found '1'");
  PARSES("def f (x: Q) = x", "1:11: expected a type (R, B, (T, T) or [T]), found 'Q'");
  PARSES("def f (x: [R) = x", "1:13: expected ']' to close '[' at 1:11, found ')'");
  PARSES("def f (x: R = x", "1:13: expected ')' to close '(' at 1:7, found '='");
  PARSES("def f (x: R) : R =", "1:19: expected an expression, found the end of the input");
  PARSES("def f (x: R) : R =\n", "1:19: expected an expression, found the end of the input");
  PARSES("let x = (1 +\n  2", "2:4: expected ')' to close '(' at 1:9, found the end of the input");
  PARSES("let x = (1 + 2 in 3)", "1:16: expected ')' to close '(' at 1:9, found 'in'");
  PARSES("[1, 2", "1:6: expected ']' to close '[' at 1:1, found the end of the input");
  PARSES("[1, 2,]", "1:7: expected an expression, found ']'");
  PARSES("()", "1:2: expected an expression, found ')'");
  PARSES("f )", "1:3: expected an operator or the end of the line, found ')'");
  PARSES("1 +", "1:4: expected an expression, found the end of the input");
  PARSES("if a then 1\nfoo", "1:12: expected 'else' of 'if' at 1:1, found the end of the line");
  PARSES("x = 1", "1:3: expected an operator or the end of the line, found '='");
  PARSES("in", "1:1: expected an expression, found 'in'");
  PARSES("load \"x", "1:6: unterminated string");
  PARSES("1 + @", "1:5: unexpected character '@'");
  PARSES("1 + 2 @", "1:7: unexpected character '@'");
}
END_TEST

START_TEST(test_recovery) {
  const char *src =
      "let a = 1 +\n"       /* error: '=' can't end... continues */
      "def f (x: R) x\n"    /* 2:14 */
      "let b = 2\n"
      "1 2\n"               /* 4:3 */
      "c @ d\n"             /* 5:3 */
      "[1,\n"
      "2 3]\n"              /* 7:3 */
      "let c = 3\n"
      "def g (x: R) : R =\n"
      "  x\n"
      "g 2\n";
  ParseResult r = fe_parse_program("<s>", src, strlen(src));
  ck_assert_int_eq(r.nerrors, 5);
  ck_assert_str_eq(fe_error_text(r.errors[0]),
                   "<s>:1:12: error: expected an expression, found the end of the line");
  ck_assert_str_eq(fe_error_text(r.errors[1]),
                   "<s>:2:14: error: expected '=' after the parameters of 'f', found 'x'");
  ck_assert_str_eq(fe_error_text(r.errors[2]),
                   "<s>:4:3: error: expected an operator or the end of the line, found '2'");
  ck_assert_str_eq(fe_error_text(r.errors[3]), "<s>:5:3: error: unexpected character '@'");
  ck_assert_str_eq(fe_error_text(r.errors[4]),
                   "<s>:7:3: error: expected ']' to close '[' at 6:1, found '3'");
  ck_assert_int_eq(r.nitems, 4);
  ck_assert_str_eq(item_sx(r.items[0]), "let b = 2");
  ck_assert_str_eq(item_sx(r.items[1]), "let c = 3");
  ck_assert_str_eq(item_sx(r.items[2]), "def g (x R) : R = x");
  ck_assert_str_eq(item_sx(r.items[3]), "(g 2)");
  /* at most 20 errors */
  char *many = una_strdup("");
  for (int i = 0; i < 30; i++) many = una_sprintf("%s1 2\n", many);
  r = fe_parse_program("<s>", many, strlen(many));
  ck_assert_int_eq(r.nerrors, 20);
  ck_assert_int_eq(r.errors[19].span.line, 20);
  /* an unclosed bracket swallows the rest, but 'def' in column 1 recovers */
  src = "f (1,\nx\ndef g = 1\ng";
  r = fe_parse_program("<s>", src, strlen(src));
  ck_assert_int_eq(r.nerrors, 1);
  ck_assert_str_eq(r.errors[0].msg, "expected ')' to close '(' at 1:3, found the end of the line");
  ck_assert_int_eq(r.nitems, 2);
}
END_TEST

START_TEST(test_spans) {
  ParseResult r = fe_parse_program("<t>", "a + b * c", 9);
  Term *e = r.items[0]->body;
  ck_assert_int_eq(e->span.col, 3);
  ck_assert_int_eq(e->kids[1]->span.col, 7);
  ck_assert_int_eq(e->kids[0]->span.col, 1);
  ck_assert_ptr_null(e->type);
  r = fe_parse_program("<t>", "x\n  f (g y) z", 13);
  ck_assert_str_eq(item_sx(r.items[0]), "(x f (g y) z)");
  r = fe_parse_program("<t>", "[f (g y) z, -q, !b, (1, 2), (x. x), t.1, let a = 1 in a, if c then 1 else 2]", 76);
  e = r.items[0]->body;
  ck_assert_int_eq(e->kind, T_ARRAY);
  int cols[] = {2, 13, 17, 21, 29, 38, 42, 58};
  for (int i = 0; i < 8; i++) ck_assert_int_eq(e->kids[i]->span.col, cols[i]);
  ck_assert_int_eq(e->kids[0]->kids[0]->span.col, 5); /* g y: its head */
  ck_assert_int_eq(e->kids[4]->name_spans[0].col, 30);
  ck_assert_int_eq(e->kids[1]->kind, T_PRIM);
  ck_assert_int_eq(e->kids[1]->prim, PRIM_NEG);
  ck_assert_int_eq(e->kids[2]->prim, PRIM_NOT);
  r = fe_parse_program("<t>", "-1", 2);
  ck_assert_int_eq(r.items[0]->body->kind, T_NUM);
  ck_assert_int_eq(r.items[0]->body->span.col, 1);
  r = fe_parse_program("f.una", "1 +\n  (2 * )", 12);
  ck_assert_str_eq(fe_error_text(r.errors[0]), "f.una:2:8: error: expected an expression, found ')'");
}
END_TEST

START_TEST(test_parse_expr) {
  Term *e = fe_parse_expr("<repl>", "f x + 1", 7, 1, 7);
  ck_assert_str_eq(sx(e), "(add (f x) 1)");
  ck_assert_int_eq(e->span.col, 11);
  e = fe_parse_expr("<repl>", "grad f", 6, 1, 7);
  ck_assert_str_eq(sx(e), "(grad f)");
  e = fe_parse_expr("<repl>", "f\nx", 3, 1, 7); /* no item boundaries */
  ck_assert_str_eq(sx(e), "(f x)");
  FeTry t;
  if (fe_try(&t)) {
    fe_parse_expr("<repl>", "1 +", 3, 2, 7);
    fe_untry(&t);
    ck_abort_msg("no error");
  }
  ck_assert_str_eq(fe_error_text(t.err),
                   "<repl>:2:10: error: expected an expression, found the end of the input");
  if (fe_try(&t)) {
    fe_parse_expr("<repl>", "1 2", 3, 1, 7);
    fe_untry(&t);
    ck_abort_msg("no error");
  }
  ck_assert_str_eq(fe_error_text(t.err),
                   "<repl>:1:9: error: expected an operator or the end of the line, found '2'");
  if (fe_try(&t)) {
    fe_parse_expr("<repl>", "", 0, 1, 7);
    fe_untry(&t);
    ck_abort_msg("no error");
  }
  ck_assert_str_eq(t.err.msg, "expected an expression, found the end of the input");
  if (fe_try(&t)) {
    fe_parse_expr("<repl>", "x \x01", 3, 1, 1);
    fe_untry(&t);
    ck_abort_msg("no error");
  }
  ck_assert_str_eq(t.err.msg, "unexpected character '\\x01'");
}
END_TEST

START_TEST(test_input_incomplete) {
#define INC(s) fe_input_incomplete(s, strlen(s))
  ck_assert(!INC(""));
  ck_assert(!INC("1 + 2"));
  ck_assert(!INC("-- only a comment"));
  ck_assert(INC("1 +"));
  ck_assert(INC("(1, 2"));
  ck_assert(INC("[1,\n2"));
  ck_assert(INC("let x ="));
  ck_assert(INC("let x = 1 in"));
  ck_assert(INC("if a then"));
  ck_assert(INC("if a then b else"));
  ck_assert(INC("def f (x: R) : R ="));
  ck_assert(INC("f x,"));
  ck_assert(INC("grad"));
  ck_assert(INC("(grad f wrt"));
  ck_assert(INC("x."));
  ck_assert(!INC("load \"abc")); /* strings end on their line: an error */
  ck_assert(INC("!"));
  ck_assert(!INC("f x -- trailing comment"));
  ck_assert(!INC(":type"));
  /* an item that ends too soon: its only error is at the end */
  ck_assert(INC("def f (x: R)"));
  ck_assert(INC("def f (x: R) : R =\n  let y = x * 2"));
  ck_assert(INC("if a < b"));
  ck_assert(INC("if a < b then 1"));
  ck_assert(INC("let x = 1 in let y = 2"));
  ck_assert(!INC("let x = 1"));           /* a global let */
  ck_assert(!INC("let x = 1 in x"));
  ck_assert(!INC("if a then b else c"));
  ck_assert(!INC("f x = 1"));             /* an error before the end: report it */
  ck_assert(INC("def f (x: R) : R = x\nif a")); /* the last item stops short */
  ck_assert(!INC("f x = 1\nif a"));             /* an earlier error: report it now */
  ck_assert(!INC("1 +)"));
  ck_assert(!INC("1 + @"));
  ck_assert(!INC("f x)"));
#undef INC
}
END_TEST

START_TEST(test_nul_bytes) {
  const char s[] = "1 +\0 2\nlet x = 3\n\0";
  ParseResult r = fe_parse_program("<t>", s, sizeof s - 1);
  ck_assert_int_eq(r.nerrors, 2);
  ck_assert_str_eq(fe_error_text(r.errors[0]), "<t>:1:4: error: unexpected character '\\x00'");
  ck_assert_str_eq(fe_error_text(r.errors[1]), "<t>:3:1: error: unexpected character '\\x00'");
  ck_assert_int_eq(r.nitems, 1);
  ck_assert_str_eq(item_sx(r.items[0]), "let x = 3");
}
END_TEST

START_TEST(test_huge_identifier) {
  size_t n = (size_t)1 << 20;
  char *s = malloc(n + 16);
  memcpy(s, "let ", 4);
  memset(s + 4, 'x', n);
  memcpy(s + 4 + n, " = 1 + ", 8);
  ParseResult r = fe_parse_program("<t>", s, n + 11);
  ck_assert_int_eq(r.nerrors, 1);
  ck_assert_uint_lt(strlen(r.errors[0].msg), 200);
  r = fe_parse_program("<t>", s, n + 8);
  ck_assert_int_eq(r.nerrors, 0);
  ck_assert_uint_eq(strlen(r.items[0]->name), n);
  free(s);
}
END_TEST

START_TEST(test_binary_input) {
  size_t n = (size_t)1 << 20;
  char *s = malloc(n);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = (char)(x >> 29);
  }
  ParseResult r = fe_parse_program("<bin>", s, n);
  ck_assert_int_gt(r.nerrors, 0);
  ck_assert_int_le(r.nerrors, 20);
  free(s);
}
END_TEST

/* Runs f in a thread with an 8 MB stack registered with fe_stack_init. */
typedef struct DeepJob {
  const char *src;
  size_t len;
  ParseResult r;
} DeepJob;

static void deep_thread(void *arg) {
  DeepJob *j = arg;
  j->r = fe_parse_program("<deep>", j->src, j->len);
}

static ParseResult parse_in_thread(const char *src, size_t len) {
  DeepJob j = {src, len, {0}};
  tl_on_stack((size_t)8 << 20, deep_thread, &j);
  return j.r;
}

START_TEST(test_deep_parens) {
  size_t n = 200000;
  char *s = GC_MALLOC_ATOMIC(2 * n + 2);
  memset(s, '(', n);
  s[n] = '1';
  memset(s + n + 1, ')', n);
  ParseResult r = parse_in_thread(s, 2 * n + 1);
  ck_assert_int_eq(r.nerrors, 1);
  ck_assert_str_eq(r.errors[0].msg, "expression nested too deeply");
  ck_assert_int_eq(r.errors[0].span.line, 1);
}
END_TEST

START_TEST(test_deep_unary) {
  size_t n = 200000;
  char *s = GC_MALLOC_ATOMIC(2 * n + 2);
  for (size_t i = 0; i < n; i++) {
    s[2 * i] = '-';
    s[2 * i + 1] = ' ';
  }
  s[2 * n] = 'x';
  ParseResult r = parse_in_thread(s, 2 * n + 1);
  ck_assert_int_eq(r.nerrors, 1);
  ck_assert_str_eq(r.errors[0].msg, "expression nested too deeply");
  /* other deep shapes */
  const char *shapes[] = {"[", "f (", "let x = 1 in ", "if a then b else ", "2 ^ ", "(x. ", "!"};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    size_t m = strlen(shapes[k]);
    char *t = GC_MALLOC_ATOMIC(m * n + 2);
    for (size_t i = 0; i < n; i++) memcpy(t + i * m, shapes[k], m);
    t[m * n] = '1';
    r = parse_in_thread(t, m * n + 1);
    ck_assert_int_eq(r.nerrors, 1);
    ck_assert_str_eq(r.errors[0].msg, "expression nested too deeply");
  }
}
END_TEST

START_TEST(test_long_chains) {
  size_t n = 100000;
  const char *ops[] = {"+", "*", "&&", "||", "-", "/"};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    size_t m = strlen(ops[k]) + 1;
    char *s = GC_MALLOC_ATOMIC(n * m + 2);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
      if (i) {
        memcpy(s + j, ops[k], m - 1);
        j += m - 1;
      }
      s[j++] = '1';
    }
    ParseResult r = parse_in_thread(s, j);
    ck_assert_int_eq(r.nerrors, 0);
    ck_assert_int_eq(r.nitems, 1);
    size_t depth = 0;
    for (Term *e = r.items[0]->body; e->kind == T_PRIM; e = e->kids[0]) depth++;
    ck_assert_uint_eq(depth, n - 1);
  }
  /* long flat lists */
  char *s = GC_MALLOC_ATOMIC(3 * n + 4);
  s[0] = '[';
  for (size_t i = 0; i < n; i++) memcpy(s + 1 + 2 * i, "1,", 2);
  s[2 * n] = ']';
  ParseResult r = parse_in_thread(s, 2 * n + 1);
  ck_assert_int_eq(r.nerrors, 0);
  ck_assert_int_eq(r.items[0]->body->nkids, (int)n);
  /* many items */
  char *t = GC_MALLOC_ATOMIC(4 * n + 1);
  for (size_t i = 0; i < n; i++) memcpy(t + 4 * i, "f 1\n", 4);
  r = parse_in_thread(t, 4 * n);
  ck_assert_int_eq(r.nitems, (int)n);
}
END_TEST

Suite *suite_parser(void) {
  Suite *s = suite_create("parser");
  TCase *tc = tcase_create("parser");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_atoms);
  tcase_add_test(tc, test_projection);
  tcase_add_test(tc, test_lambda_vs_projection);
  tcase_add_test(tc, test_sections);
  tcase_add_test(tc, test_application);
  tcase_add_test(tc, test_grad_forms);
  tcase_add_test(tc, test_let_if);
  tcase_add_test(tc, test_precedence_pairs);
  tcase_add_test(tc, test_prefix_and_application_levels);
  tcase_add_test(tc, test_items);
  tcase_add_test(tc, test_item_errors);
  tcase_add_test(tc, test_recovery);
  tcase_add_test(tc, test_spans);
  tcase_add_test(tc, test_parse_expr);
  tcase_add_test(tc, test_input_incomplete);
  tcase_add_test(tc, test_nul_bytes);
  tcase_add_test(tc, test_huge_identifier);
  tcase_add_test(tc, test_binary_input);
  tcase_add_test(tc, test_deep_parens);
  tcase_add_test(tc, test_deep_unary);
  tcase_add_test(tc, test_long_chains);
  suite_add_tcase(s, tc);
  return s;
}
