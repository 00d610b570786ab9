/* test_term_dot.c: programs as Graphviz graphs (frontend/ir/term_dot.h)
   through `:grad f --dot` and `:show STAGE f --dot`: the nodes and edges
   of example 1.1's gradient, every stage a graph that Graphviz's `dot`
   reads (when it is installed: `make deps` tries to, as root), and --dot as a
   flag, not a comment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../suites.h"
#include "../../testlib.h"

static const char *const ex = "def ex (x1: R) (x2: R) (x3: R) = let w1 = x1 * x2 in let w2 = w1 * x1 in w2\n";

/* What cmd prints in a session with ex; it must succeed. */
static char *run_cmd(const char *cmd) {
  Session *s = tl_session_with(ex);
  TlRun r = tl_capture(s, cmd, true);
  ck_assert_msg(r.ok, "%s: %s", cmd, r.err);
  return r.out;
}

/* Whether Graphviz reads text without an error (true when dot is absent). */
static bool dot_reads(const char *text) {
  if (system("command -v dot > /dev/null 2>&1") != 0) return true;
  char path[] = "/tmp/una-dot-XXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  int rc = system(una_sprintf("dot -Tsvg -o /dev/null %s 2>/dev/null", path));
  remove(path);
  return rc == 0;
}

START_TEST(gradient_graph) {
  char *g = run_cmd(":grad ex --dot\n");
  ck_assert_msg(strncmp(g, "digraph \"grad_ex\" {", 19) == 0, "%s", g);
  /* the parameters, the let w1 and the result, with the data flow */
  ck_assert_msg(strstr(g, "n0 [shape=ellipse, label=\"x1\"];") != NULL, "%s", g);
  ck_assert_msg(strstr(g, "n3 [shape=box, label=\"w1 = x1 * x2\"];\n  n0 -> n3;\n  n1 -> n3;") != NULL, "%s", g);
  ck_assert_msg(strstr(g, "[shape=doubleoctagon, label=\"(w1 + x2 * x1, x1 * x1, 0)\"]") != NULL, "%s", g);
  ck_assert_msg(strstr(g, "n3 -> n4;") != NULL, "%s", g);
  ck_assert_msg(dot_reads(g), "dot rejects:\n%s", g);
}
END_TEST

START_TEST(every_stage) {
  const char *stages[] = {"source", "unf", "dunf", "target", "grad", "direct"};
  for (int i = 0; i < 6; i++) {
    char *g = run_cmd(una_sprintf(":show %s ex --dot\n", stages[i]));
    ck_assert_msg(strncmp(g, "digraph ", 8) == 0 && strstr(g, "->") != NULL, "%s: %s", stages[i], g);
    ck_assert_msg(dot_reads(g), "%s: dot rejects:\n%s", stages[i], g);
  }
  /* a flag, not a comment; a comment after it is still one */
  ck_assert(strncmp(run_cmd(":grad ex --dot -- the graph\n"), "digraph", 7) == 0);
  ck_assert(strncmp(run_cmd(":grad ex -- not --dot\n"), "def grad_ex", 11) == 0);
}
END_TEST

Suite *suite_term_dot(void) {
  Suite *s = suite_create("term_dot");
  TCase *tc = tcase_create("dot");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, gradient_graph);
  tcase_add_test(tc, every_stage);
  suite_add_tcase(s, tc);
  return s;
}
