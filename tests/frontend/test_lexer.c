/* test_lexer.c: Check tests for the lexer (frontend/lexer.c). */
#include "../../frontend/lexer.h"
#include "../suites.h"
#include <math.h>

static FeLexResult lex(const char *s) { return fe_lex("<t>", s, strlen(s), 1, 1); }

/* The kinds of the tokens of s, as their fixed texts joined by spaces. */
static const char *kinds(const char *s) {
  FeLexResult r = lex(s);
  char *out = una_strdup("");
  for (int i = 0; i < r.ntoks; i++)
    out = una_sprintf("%s%s%s", out, i ? " " : "", fe_tok_kind_text[r.toks[i].kind]);
  return out;
}

START_TEST(test_every_token_kind) {
  ck_assert_str_eq(kinds("def let in if then else true false grad wrt"),
                   "def let in if then else true false grad wrt end of input");
  ck_assert_str_eq(kinds("+ - * / ^ == != < <= > >= && || ! = . , ( ) [ ] :"),
                   "+ - * / ^ == != < <= > >= && || ! = . , ( ) [ ] : end of input");
  ck_assert_str_eq(kinds("x 1 \"s\""), "name number string end of input");
  ck_assert_str_eq(kinds(":type x"), "command end of input");
  ck_assert_str_eq(kinds("@"), "invalid text end of input");
  ck_assert_str_eq(kinds(""), "end of input");
  /* longest match, no spaces */
  ck_assert_str_eq(kinds("a<=b>=c==d!=e&&f||!g"),
                   "name <= name >= name == name != name && name || ! name end of input");
  ck_assert_str_eq(kinds("a<b>c=d"), "name < name > name = name end of input");
  /* keywords are whole words */
  ck_assert_str_eq(kinds("define lets in_ x' _y"), "name name name name name end of input");
  FeLexResult r = lex("foo_1' _");
  ck_assert_str_eq(r.toks[0].text, "foo_1'");
  ck_assert_str_eq(r.toks[1].text, "_");
}
END_TEST

START_TEST(test_numbers) {
  FeLexResult r = lex("12 1.5 0.25 1e-3 2.5E+10 7e2 3E4");
  double want[] = {12, 1.5, 0.25, 1e-3, 2.5e10, 700, 3e4};
  for (int i = 0; i < 7; i++) {
    ck_assert_int_eq(r.toks[i].kind, TK_NUM);
    ck_assert(r.toks[i].num == want[i]);
  }
  ck_assert_str_eq(r.toks[3].text, "1e-3");
  ck_assert_str_eq(r.toks[4].text, "2.5E+10");
  /* after '.', integers only: t.1.2 is two projections */
  ck_assert_str_eq(kinds("t.1.2"), "name . number . number end of input");
  r = lex("t.1.2");
  ck_assert(r.toks[2].num == 1 && r.toks[4].num == 2);
  ck_assert_str_eq(kinds("t.10.2e"), "name . number . invalid text end of input");
  /* only right after the '.': (x. 0.5) is a lambda returning 0.5 */
  r = lex("(x. 0.5) t. 1.5 t.\n2.5");
  ck_assert(r.toks[3].num == 0.5);
  ck_assert(r.toks[7].num == 1.5);
  ck_assert(r.toks[10].num == 2.5);
  /* '1.' without digits is a number and a dot; '.5' is a dot and a number */
  ck_assert_str_eq(kinds("1.x"), "number . name end of input");
  ck_assert_str_eq(kinds(".5"), ". number end of input");
  /* malformed numbers */
  r = lex("2x + 1");
  ck_assert_int_eq(r.toks[0].kind, TK_ERROR);
  ck_assert_str_eq(r.toks[0].err->msg, "malformed number '2x'");
  ck_assert_int_eq(r.nerrors, 1);
  r = lex("1e");
  ck_assert_str_eq(r.errors[0].msg, "malformed number '1e'");
  r = lex("1e+");
  ck_assert_str_eq(kinds("1e+"), "invalid text + end of input");
  /* huge numbers are inf, not errors */
  r = lex("1e999");
  ck_assert(isinf(r.toks[0].num));
}
END_TEST

START_TEST(test_spans) {
  FeLexResult r = lex("let x =\n  foo -- comment\n\tbar\n\n  (1)");
  /* let x = / foo / bar / ( 1 ) */
  int want[][3] = {{1, 1, 1}, {1, 5, 0}, {1, 7, 0}, {2, 3, 1}, {3, 2, 1}, {5, 3, 1}, {5, 4, 0}, {5, 5, 0}};
  for (int i = 0; i < 8; i++) {
    ck_assert_int_eq(r.toks[i].span.line, want[i][0]);
    ck_assert_int_eq(r.toks[i].span.col, want[i][1]);
    ck_assert_int_eq(r.toks[i].bol, want[i][2]);
    ck_assert_str_eq(r.toks[i].span.file, "<t>");
  }
  ck_assert_int_eq(r.toks[3].end_line, 2);
  ck_assert_int_eq(r.toks[3].end_col, 6);
  ck_assert_int_eq(r.toks[8].kind, TK_EOF);
  ck_assert_int_eq(r.toks[8].span.line, 5);
  ck_assert_int_eq(r.toks[8].span.col, 6);
  /* a start position other than 1:1 */
  r = fe_lex("<repl>", "a\nb", 3, 4, 7);
  ck_assert_int_eq(r.toks[0].span.line, 4);
  ck_assert_int_eq(r.toks[0].span.col, 7);
  ck_assert_int_eq(r.toks[1].span.line, 5);
  ck_assert_int_eq(r.toks[1].span.col, 1);
  /* CRLF line ends */
  r = lex("a\r\nb");
  ck_assert_int_eq(r.toks[1].span.line, 2);
  ck_assert_int_eq(r.toks[1].span.col, 1);
  ck_assert(r.toks[1].starts_item);
}
END_TEST

static bool starts(const char *s, int i) { return lex(s).toks[i].starts_item; }

START_TEST(test_item_boundaries) {
  /* def f (x: R) : R =\n  x\nf 2 : 'f' on line 3 starts an item */
  const char *s = "def f (x: R) : R =\n  x\nf 2";
  FeLexResult r = lex(s);
  int n = 0;
  for (int i = 0; i < r.ntoks - 1; i++) n += r.toks[i].starts_item;
  ck_assert_int_eq(n, 2);
  ck_assert(r.toks[0].starts_item);
  ck_assert_str_eq(r.toks[r.ntoks - 3].text, "f");
  ck_assert(r.toks[r.ntoks - 3].starts_item);
  /* open bracket: no boundary */
  ck_assert(!starts("let a = [1,\n2]", 6));
  ck_assert(!starts("f (1\n2)", 3));
  /* previous token cannot end an expression */
  ck_assert(!starts("let a =\n1", 3));
  ck_assert(!starts("a +\nb", 2));
  ck_assert(!starts("if a then\nb", 3));
  /* this token cannot begin an item */
  ck_assert(!starts("a\n+ b", 1));
  ck_assert(!starts("let x = 1\nin x", 4));
  ck_assert(!starts("a\n)", 1));
  /* these can */
  ck_assert(starts("a\n-b", 1));
  ck_assert(starts("a\n!b", 1));
  ck_assert(starts("(a)\nb", 3));
  ck_assert(starts("[a]\n(b)", 3));
  ck_assert(starts("\"s\"\nlet", 1));
  ck_assert(starts("true\ngrad f", 1));
  /* not in column 1 */
  ck_assert(!starts("a\n b", 1));
  /* 'def' in column 1 and commands always start an item (and close
     brackets) */
  ck_assert(starts("f (1,\ndef g = 1", 4));
  ck_assert(!starts("f (1,\ndef g = (1\nx", 9));
  ck_assert(starts("f (1 +\n:type x", 4));
  ck_assert(starts("1 +\n:type x\ny", 3));
}
END_TEST

START_TEST(test_commands) {
  FeLexResult r = lex(":type  f x  \n1");
  ck_assert_int_eq(r.toks[0].kind, TK_CMD);
  ck_assert_str_eq(r.toks[0].text, "type");
  ck_assert_str_eq(r.toks[0].arg, "f x");
  ck_assert_int_eq(r.toks[0].arg_span.line, 1);
  ck_assert_int_eq(r.toks[0].arg_span.col, 8);
  ck_assert(r.toks[0].starts_item);
  ck_assert_int_eq(r.toks[1].kind, TK_NUM);
  ck_assert(r.toks[1].starts_item);
  r = lex(":quit");
  ck_assert_str_eq(r.toks[0].text, "quit");
  ck_assert_str_eq(r.toks[0].arg, "");
  r = lex(":load \"a b.una\"\t\r\n");
  ck_assert_str_eq(r.toks[0].arg, "\"a b.una\"");
  /* the argument is raw text: comments and bad characters included */
  r = lex(":show grad f @ $");
  ck_assert_str_eq(r.toks[0].arg, "grad f @ $");
  ck_assert_int_eq(r.nerrors, 0);
  /* but not its comment (outside strings) */
  r = lex(":device   -- where arrays live\n1");
  ck_assert_str_eq(r.toks[0].arg, "");
  ck_assert_int_eq(r.toks[0].arg_span.col, 11);
  r = lex(":load \"a--b\\\"c.una\" -- x");
  ck_assert_str_eq(r.toks[0].arg, "\"a--b\\\"c.una\"");
  r = lex(":type x--y");
  ck_assert_str_eq(r.toks[0].arg, "x");
  /* not a command: not column 1, or not followed by a letter */
  ck_assert_str_eq(kinds(" :type"), ": name end of input");
  ck_assert_str_eq(kinds(":1"), ": number end of input");
  ck_assert_str_eq(kinds(": R"), ": name end of input");
  ck_assert_str_eq(kinds("def f : R = 1"), "def name : name = number end of input");
}
END_TEST

START_TEST(test_strings) {
  FeLexResult r = lex("\"data/x.npy\" \"a\\\"b\\\\c\" \"\" \"x\\n\"");
  ck_assert_str_eq(r.toks[0].text, "data/x.npy");
  ck_assert_str_eq(r.toks[1].text, "a\"b\\c");
  ck_assert_str_eq(r.toks[2].text, "");
  ck_assert_str_eq(r.toks[3].text, "x\\n"); /* other backslashes are kept */
  ck_assert_int_eq(r.nerrors, 0);
  r = lex("load \"abc");
  ck_assert_int_eq(r.nerrors, 1);
  ck_assert_str_eq(r.errors[0].msg, "unterminated string");
  ck_assert_int_eq(r.errors[0].span.line, 1);
  ck_assert_int_eq(r.errors[0].span.col, 6);
  ck_assert(r.open_string);
  r = lex("\"a\\\"");
  ck_assert(r.open_string);
  /* a string ends on its line; lexing goes on at the next line */
  r = lex("f \"a\nb x");
  ck_assert_int_eq(r.nerrors, 1);
  ck_assert_int_eq(r.errors[0].span.col, 3);
  ck_assert(!r.open_string);
  ck_assert_int_eq(r.toks[2].kind, TK_NAME);
  ck_assert_int_eq(r.toks[2].span.line, 2);
  ck_assert_int_eq(r.toks[2].span.col, 1);
  ck_assert(!r.toks[2].starts_item || r.toks[2].span.col == 1);
  ck_assert_str_eq(fe_tok_describe(&lex("\"ab\"").toks[0]), "the string \"ab\"");
}
END_TEST

START_TEST(test_comments) {
  ck_assert_str_eq(kinds("x -- a comment ( [\ny"), "name name end of input");
  ck_assert_str_eq(kinds("-- only\n--\n"), "end of input");
  ck_assert_str_eq(kinds("a - -b"), "name - - name end of input");
  ck_assert_str_eq(kinds("a --b"), "name end of input");
  ck_assert_str_eq(kinds("x -- \x93 bad bytes in comments are fine"), "name end of input");
}
END_TEST

START_TEST(test_bad_characters) {
  FeLexResult r = lex("1 @ 2 $");
  ck_assert_int_eq(r.nerrors, 2);
  ck_assert_str_eq(r.errors[0].msg, "unexpected character '@'");
  ck_assert_int_eq(r.errors[0].span.col, 3);
  ck_assert_str_eq(r.errors[1].msg, "unexpected character '$'");
  ck_assert_str_eq(kinds("1 @ 2"), "number invalid text number end of input");
  r = lex("x \x93\x94 y");
  ck_assert_int_eq(r.nerrors, 1); /* a run of bad bytes is one error */
  ck_assert_str_eq(r.errors[0].msg, "unexpected character '\\x93'");
  ck_assert_int_eq(r.errors[0].span.col, 3);
  ck_assert_str_eq(fe_error_text(r.errors[0]), "<t>:1:3: error: unexpected character '\\x93'");
  r = lex("& | ' ` ; { } ? ~ #");
  ck_assert_int_eq(r.nerrors, 10);
  ck_assert_str_eq(r.errors[0].msg, "unexpected character '&'");
  ck_assert_str_eq(r.errors[2].msg, "unexpected character '''");
  /* the error token carries its error */
  ck_assert_ptr_nonnull(r.toks[0].err);
  ck_assert_str_eq(r.toks[0].err->msg, r.toks[0].text);
}
END_TEST

START_TEST(test_nul_bytes) {
  const char s[] = "1 +\0 2\0";
  FeLexResult r = fe_lex("<t>", s, sizeof s - 1, 1, 1);
  ck_assert_int_eq(r.nerrors, 2);
  ck_assert_str_eq(r.errors[0].msg, "unexpected character '\\x00'");
  ck_assert_int_eq(r.errors[0].span.col, 4);
  ck_assert_int_eq(r.errors[1].span.col, 7);
  ck_assert_int_eq(r.toks[3].kind, TK_NUM);
  /* len stops the lexer, not NUL */
  r = fe_lex("<t>", "ab cd", 2, 1, 1);
  ck_assert_int_eq(r.ntoks, 2);
  ck_assert_str_eq(r.toks[0].text, "ab");
  r = fe_lex("<t>", NULL, 0, 1, 1);
  ck_assert_int_eq(r.ntoks, 1);
}
END_TEST

START_TEST(test_huge_identifier) {
  size_t n = (size_t)1 << 20;
  char *s = malloc(n + 3);
  memset(s, 'a', n);
  memcpy(s + n, " 1", 3);
  FeLexResult r = fe_lex("<t>", s, n + 2, 1, 1);
  ck_assert_int_eq(r.ntoks, 3);
  ck_assert_int_eq(r.toks[0].kind, TK_NAME);
  ck_assert_uint_eq(strlen(r.toks[0].text), n);
  ck_assert_int_eq(r.toks[1].span.col, (int)n + 2);
  /* descriptions are shortened */
  ck_assert_uint_lt(strlen(fe_tok_describe(&r.toks[0])), 60);
  free(s);
}
END_TEST

START_TEST(test_binary_input) {
  size_t n = (size_t)1 << 20;
  char *s = malloc(n);
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = (char)(x >> 24);
  }
  FeLexResult r = fe_lex("<bin>", s, n, 1, 1);
  ck_assert_int_gt(r.nerrors, 0);
  ck_assert_int_eq(r.toks[r.ntoks - 1].kind, TK_EOF);
  for (int i = 0; i < r.nerrors; i++) ck_assert_int_gt(r.errors[i].span.line, 0);
  free(s);
}
END_TEST

START_TEST(test_describe) {
  FeLexResult r = lex("foo 1.5 ) in :x");
  ck_assert_str_eq(fe_tok_describe(&r.toks[0]), "'foo'");
  ck_assert_str_eq(fe_tok_describe(&r.toks[1]), "'1.5'");
  ck_assert_str_eq(fe_tok_describe(&r.toks[2]), "')'");
  ck_assert_str_eq(fe_tok_describe(&r.toks[3]), "'in'");
  ck_assert_str_eq(fe_tok_describe(&r.toks[4]), "':'");
  ck_assert_str_eq(fe_tok_describe(&r.toks[6]), "the end of the input");
  ck_assert_str_eq(fe_tok_describe(&lex(":help").toks[0]), "':help'");
}
END_TEST

START_TEST(test_depth) {
  ck_assert_int_eq(lex("((a) [b").depth, 2);
  ck_assert_int_eq(lex("a))").depth, 0);
  ck_assert_int_eq(lex("(\n:type x").depth, 0);
}
END_TEST

Suite *suite_lexer(void) {
  Suite *s = suite_create("lexer");
  TCase *tc = tcase_create("lexer");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_every_token_kind);
  tcase_add_test(tc, test_numbers);
  tcase_add_test(tc, test_spans);
  tcase_add_test(tc, test_item_boundaries);
  tcase_add_test(tc, test_commands);
  tcase_add_test(tc, test_strings);
  tcase_add_test(tc, test_comments);
  tcase_add_test(tc, test_bad_characters);
  tcase_add_test(tc, test_nul_bytes);
  tcase_add_test(tc, test_huge_identifier);
  tcase_add_test(tc, test_binary_input);
  tcase_add_test(tc, test_describe);
  tcase_add_test(tc, test_depth);
  suite_add_tcase(s, tc);
  return s;
}
