/* test_session.c: the session: items run in order, values printed, errors
   printed as FILE:LINE:COL: error: MSG, scripts stop at the first error,
   top-level rebinding, and the commands (:type :help :load :time :device
   :quit, unknown ones). */
#include "../../../frontend/repl/session.h"
#include "../../suites.h"
#include "../../testlib.h"
#include <unistd.h>

/* Copies a memstream's buffer into collected memory and frees it. */
static char *take(FILE *f, char **buf) {
  fclose(f);
  char *s = una_strdup(*buf ? *buf : "");
  free(*buf);
  return s;
}

static Session *bare(void) {
  Session *s = fe_session_new();
  s->check_passes = true; /* the type checker after every optimizer pass */
  return s;
}

static Session *with_prelude(void) { return tl_session_with(""); }

/* Runs text in a fresh session (no prelude); expects success and out. */
#define EXPECT_OUT(text, expected)                                                                 \
  do {                                                                                             \
    TlRun r_ = tl_capture(bare(), text, true);                                                     \
    ck_assert_msg(r_.ok, "run failed: %s", r_.err);                                                \
    ck_assert_str_eq(r_.out, expected);                                                            \
    ck_assert_str_eq(r_.err, "");                                                                  \
  } while (0)

/* Runs text in a fresh session (no prelude); expects failure, out and err. */
#define EXPECT_ERR(text, expected_out, expected_err)                                               \
  do {                                                                                             \
    TlRun r_ = tl_capture(bare(), text, true);                                                     \
    ck_assert(!r_.ok);                                                                             \
    ck_assert_str_eq(r_.out, expected_out);                                                        \
    ck_assert_str_eq(r_.err, expected_err);                                                        \
  } while (0)

/* A temporary file holding text; returns its path. */
static char *temp_file(const char *text) {
  char *path = una_strdup("/tmp/una_test_XXXXXX.una");
  int fd = mkstemps(path, 4);
  ck_assert_int_ge(fd, 0);
  size_t n = strlen(text);
  ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
  close(fd);
  return path;
}

START_TEST(expressions_print_values) {
  EXPECT_OUT("1 + 2\n", "3\n");
  EXPECT_OUT("1 + 2\n[1, 2.5]\n(1, true)\n[]\n", "3\n[1, 2.5]\n(1, true)\n[]\n");
  EXPECT_OUT("1 / 0\n-1 / 0\n0.1\n", "inf\n-inf\n0.1\n");
  EXPECT_OUT("-- only a comment\n", "");
  EXPECT_OUT("", "");
}
END_TEST

START_TEST(defs_and_lets_print_nothing) {
  EXPECT_OUT("def f (x: R) : R = x * 2\nlet y = f 21\n", "");
  EXPECT_OUT("def f (x: R) : R = x * 2\nlet y = f 21\ny\nf y\n", "42\n84\n");
  EXPECT_OUT("def c = 7\nc\n", "7\n");
}
END_TEST

START_TEST(tuple_let_binds_each_component) {
  EXPECT_OUT("let (a, b) = (1, [2, 3])\nb\na\n", "[2, 3]\n1\n");
  EXPECT_OUT("let (a, b, c) = (1, true, (2, 3))\n(c, b, a)\n", "((2, 3), true, 1)\n");
}
END_TEST

START_TEST(rebinding_affects_only_what_follows) {
  /* f keeps the x it was checked against; later code sees the new x. */
  EXPECT_OUT("let x = 1\ndef f (y: R) = x + y\nlet x = 10\nf 1\nx\n", "2\n10\n");
  EXPECT_OUT("def f (x: R) = 1\ndef g (x: R) = f x\ndef f (x: R) = 2\n(f 0, g 0)\n", "(2, 1)\n");
  /* A name may change from a value to a function and back. */
  EXPECT_OUT("let f = 3\ndef f (x: R) = x + 1\nf 1\nlet f = [5]\nf\n", "2\n[5]\n");
  /* Types may change too. */
  EXPECT_OUT("let x = 1\nlet x = [x, x]\nx\n", "[1, 1]\n");
}
END_TEST

START_TEST(failed_let_binds_nothing) {
  Session *s = bare();
  TlRun r = tl_capture(s, "let x = 1\nlet x = map2 (+) [1] [1, 2]\n", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:2:9: error: map2: lengths 1 and 2 differ\n");
  r = tl_capture(s, "x\n", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "1\n");
}
END_TEST

START_TEST(error_format_and_stop_on_first_error) {
  EXPECT_ERR("1\nfoo\n2\n", "1\n", "t.una:2:1: error: unknown name 'foo'\n");
  EXPECT_ERR("1\nlength (map2 (+) [1] [1, 2])\n2\n", "1\n",
             "t.una:2:9: error: map2: lengths 1 and 2 differ\n");
}
END_TEST

START_TEST(continue_after_error_when_asked) {
  TlRun r = tl_capture(bare(), "1\nfoo\n2\nbar\n3\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.out, "1\n2\n3\n");
  ck_assert_str_eq(r.err,
                   "t.una:2:1: error: unknown name 'foo'\nt.una:4:1: error: unknown name 'bar'\n");
}
END_TEST

START_TEST(syntax_errors_run_nothing) {
  TlRun r = tl_capture(bare(), "1\n(2 +\n3\n", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.out, "");
  ck_assert_str_eq(r.err, "t.una:3:2: error: expected ')' to close '(' at 2:1, found the end of the input\n");
}
END_TEST

START_TEST(output_then_error_in_order) {
  ck_assert_str_eq(tl_capture_merged(bare(), "1\n2\nfoo\n3\n", true),
                   "1\n2\nt.una:3:1: error: unknown name 'foo'\n");
}
END_TEST

START_TEST(type_errors_are_located) {
  TlRun r = tl_capture(bare(), "def f (x: R) : R = x\nf true\n", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:2:3: error: type mismatch in argument 1 of 'f': expected R, found B\n");
}
END_TEST

START_TEST(grad_evaluates) {
  TlRun r = tl_capture(bare(), "def f (x: R) : R = x * x\ngrad f 3\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, "6\n");
}
END_TEST

START_TEST(deep_nesting_is_an_error_not_a_crash) {
  size_t n = 100000;
  char *text = una_alloc(2 * n + 3);
  memset(text, '(', n);
  text[n] = '1';
  memset(text + n + 1, ')', n);
  text[2 * n + 1] = '\n';
  TlRun r = tl_capture(bare(), text, true);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "nested too deeply") != NULL, "%s", r.err);
}
END_TEST

START_TEST(command_type) {
  EXPECT_OUT(":type [1, 2]\n", "[R]\n");
  EXPECT_OUT(":type (1, true)\n", "(R, B)\n");
  EXPECT_OUT("def f (x: R) (a: [R]) : R = x\n:type f\n:type f 1 [2]\n", "R -> [R] -> R\nR\n");
  TlRun r = tl_capture(with_prelude(), ":type sum\n:type softmax [1]\n", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "[R] -> R\n[R]\n");
  EXPECT_ERR(":type\n", "", "t.una:1:1: error: ':type' needs an expression\n");
  r = tl_capture(bare(), ":type 1 + foo\n", true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:1:11: error: unknown name 'foo'\n");
}
END_TEST

START_TEST(command_help) {
  TlRun r = tl_capture(bare(), ":help\n", true);
  ck_assert(r.ok);
  for (const char *c = ":help\0:quit\0:load\0:type\0:time\0:device\0"; *c; c += strlen(c) + 1)
    ck_assert_msg(strstr(r.out, c) != NULL, "%s missing from :help", c);
  EXPECT_ERR(":help me\n", "", "t.una:1:7: error: ':help' takes no argument, found 'me'\n");
}
END_TEST

START_TEST(command_quit_stops_successfully) {
  Session *s = bare();
  TlRun r = tl_capture(s, "1\n:quit\n2\n", true);
  ck_assert(r.ok);
  ck_assert(s->quit);
  ck_assert_str_eq(r.out, "1\n");
  r = tl_capture(s, "3\n", true); /* nothing runs after :quit */
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "");
}
END_TEST

START_TEST(command_load) {
  char *path = temp_file("def h (x: R) : R = x + 1\nh 1\n");
  Session *s = bare();
  TlRun r = tl_capture(s, una_sprintf(":load %s\nh 2\n", path), true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, "2\n3\n");
  /* A quoted name works too. */
  r = tl_capture(s, una_sprintf(":load \"%s\"\n", path), true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "2\n");
  unlink(path);
}
END_TEST

START_TEST(command_load_errors_are_located_in_the_file) {
  char *path = temp_file("1\nbar\n2\n");
  TlRun r = tl_capture(bare(), una_sprintf(":load %s\n3\n", path), true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.out, "1\n");
  ck_assert_str_eq(r.err, una_sprintf("%s:2:1: error: unknown name 'bar'\n", path));
  unlink(path);
  EXPECT_ERR("1\n:load /nonexistent/x.una\n2\n", "1\n",
             "t.una:2:7: error: cannot open '/nonexistent/x.una': No such file or directory\n");
  EXPECT_ERR(":load\n", "", "t.una:1:1: error: ':load' needs a file name\n");
}
END_TEST

START_TEST(command_load_cycle_is_an_error) {
  char *path = temp_file("");
  FILE *f = fopen(path, "w");
  fprintf(f, ":load %s\n", path);
  fclose(f);
  TlRun r = tl_capture(bare(), una_sprintf(":load %s\n", path), true);
  ck_assert(!r.ok);
  ck_assert_msg(strstr(r.err, "nested more than") != NULL, "%s", r.err);
  unlink(path);
}
END_TEST

START_TEST(command_arguments_may_end_in_comments) {
  EXPECT_OUT(":device -- where?\n:device cpu -- back\n:help -- me\n:type 1 -- a number\n",
             una_sprintf("cpu\n%sR\n", tl_capture(bare(), ":help\n", true).out));
  char *path = temp_file("1 + 1\n");
  EXPECT_OUT(una_sprintf(":load %s -- two\n:load \"%s\" -- again\n", path, path), "2\n2\n");
  unlink(path);
  EXPECT_ERR(":quit now -- or later\n", "",
             "t.una:1:7: error: ':quit' takes no argument, found 'now'\n");
}
END_TEST

START_TEST(command_time) {
  TlRun r = tl_capture(bare(), ":time 1 + 1\n", true);
  ck_assert(r.ok);
  ck_assert_msg(strncmp(r.out, "2\ntime: ", 8) == 0, "%s", r.out);
  size_t n = strlen(r.out);
  ck_assert_msg(n > 12 && strcmp(r.out + n - 4, " ms\n") == 0, "%s", r.out);
  EXPECT_ERR(":time foo\n", "", "t.una:1:7: error: unknown name 'foo'\n");
}
END_TEST

START_TEST(large_arrays_are_summarised) {
  /* values, :time and :cost alike; each array of a tuple by itself */
  TlRun r = tl_capture(bare(), "iota 20000\n(iota 10001, iota 3)\n:cost iota 10001\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, "[0, 1, 2, ..., 19997, 19998, 19999]\n"
                          "([0, 1, 2, ..., 9998, 9999, 10000], [0, 1, 2])\n"
                          "[0, 1, 2, ..., 9998, 9999, 10000]\n"
                          "cost: MOVES 10002, ADDS 0, MULTS 0, NLOPS 0 (total 10002)\n");
  /* --print-all (Session.print_all): everything */
  Session *s = bare();
  s->print_all = true;
  r = tl_capture(s, "iota 20000\n", true);
  ck_assert_msg(r.ok, "%s", r.err);
  Value v = tl_ev_in(s, "iota 20000");
  ck_assert_str_eq(r.out, una_sprintf("%s\n", val_to_string(v)));
  ck_assert_uint_eq(strlen(r.out), 128891);
}
END_TEST

START_TEST(command_device) {
  EXPECT_OUT(":device\n", "cpu\n");
  EXPECT_OUT(":device cpu\n:device\n", "cpu\n");
  EXPECT_ERR(":device tpu\n", "",
             "t.una:1:9: error: unknown device 'tpu' (expected cpu, gpu or auto)\n");
  /* Asking for the GPU is not an error: this build stays on the CPU. */
  TlRun r = tl_capture(bare(), ":device gpu\n:device\n", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "cpu\n");
  ck_assert_msg(strstr(r.err, "staying on the CPU") != NULL, "%s", r.err);
}
END_TEST

START_TEST(unknown_commands) {
  EXPECT_ERR("1\n:foo\n2\n", "1\n", "t.una:2:1: error: unknown command ':foo' (see :help)\n");
  EXPECT_ERR(":frobnicate f\n", "", "t.una:1:1: error: unknown command ':frobnicate' (see :help)\n");
}
END_TEST

START_TEST(prelude_names_can_be_replaced) {
  TlRun r = tl_capture(with_prelude(), "sum [1, 2]\ndef sum (a: [R]) : R = 42\nsum [1, 2]\n", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "3\n42\n");
}
END_TEST

/* Compiler memory running out (the test hook fails the n-th allocation
   from now) is a located error, the item's, and the session goes on: at
   every point of :grad's derivation and optimization, and of evaluation. */
START_TEST(out_of_memory_is_an_error) {
  Session *s = tl_session_with("def f (x: R) (a: [R]) : R = sum (map (u. sin (u * x)) a) * x\n");
  int failed = 0;
  for (long n = 1; n < 40000; n = n * 3 / 2 + 1) {
    una_alloc_fail_after(n);
    TlRun r = tl_capture(s, ":grad f\ngrad f 0.5 [1, 2]\n", true);
    una_alloc_fail_after(0);
    if (!r.ok) {
      failed++;
      ck_assert_msg(strstr(r.err, "t.una:") == r.err && strstr(r.err, ": error: out of memory for compiler data\n"),
                    "after %ld allocations: %s", n, r.err);
    }
    TlRun again = tl_capture(s, "f 2 [1, 2]\n", true);
    ck_assert_msg(again.ok, "the session after %ld allocations: %s", n, again.err);
  }
  ck_assert_int_gt(failed, 10);
}
END_TEST

START_TEST(run_file_reports_unreadable_files) {
  Session *s = bare();
  char *eb = NULL;
  size_t el = 0;
  s->err = open_memstream(&eb, &el);
  ck_assert(!fe_session_run_file(s, "/nonexistent/y.una"));
  ck_assert_str_eq(take(s->err, &eb),
                   "/nonexistent/y.una: error: cannot open: No such file or directory\n");
}
END_TEST

START_TEST(interactive_echoes_definitions) {
  Session *s = bare();
  s->interactive = true;
  TlRun r = tl_capture(s, "def f (x: R) (a: [R]) = a\nlet (p, q) = (1, true)\np\n", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "f : R -> [R] -> [R]\np : R\nq : B\n1\n");
}
END_TEST

Suite *suite_session(void) {
  Suite *s = suite_create("session");
  TCase *tc = tcase_create("session");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, expressions_print_values);
  tcase_add_test(tc, defs_and_lets_print_nothing);
  tcase_add_test(tc, tuple_let_binds_each_component);
  tcase_add_test(tc, rebinding_affects_only_what_follows);
  tcase_add_test(tc, failed_let_binds_nothing);
  tcase_add_test(tc, error_format_and_stop_on_first_error);
  tcase_add_test(tc, continue_after_error_when_asked);
  tcase_add_test(tc, syntax_errors_run_nothing);
  tcase_add_test(tc, output_then_error_in_order);
  tcase_add_test(tc, type_errors_are_located);
  tcase_add_test(tc, grad_evaluates);
  tcase_add_test(tc, deep_nesting_is_an_error_not_a_crash);
  tcase_add_test(tc, command_type);
  tcase_add_test(tc, command_help);
  tcase_add_test(tc, command_quit_stops_successfully);
  tcase_add_test(tc, command_load);
  tcase_add_test(tc, command_load_errors_are_located_in_the_file);
  tcase_add_test(tc, command_load_cycle_is_an_error);
  tcase_add_test(tc, command_arguments_may_end_in_comments);
  tcase_add_test(tc, command_time);
  tcase_add_test(tc, command_device);
  tcase_add_test(tc, large_arrays_are_summarised);
  tcase_add_test(tc, unknown_commands);
  tcase_add_test(tc, prelude_names_can_be_replaced);
  tcase_add_test(tc, run_file_reports_unreadable_files);
  tcase_add_test(tc, out_of_memory_is_an_error);
  tcase_add_test(tc, interactive_echoes_definitions);
  suite_add_tcase(s, tc);
  return s;
}
