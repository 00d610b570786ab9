/* test_repl_pty.c: the REPL driven through a pseudo-terminal, as a user
   types into it (bin/una on a terminal runs fe_repl): lines that continue
   an unfinished item, the :{ ... :} block, Ctrl-C while typing, an error
   that leaves the session alive, and Ctrl-D. UNA_BIN names the binary (set
   by make check); without it the tests are skipped. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../suites.h"
#include "../../testlib.h"

typedef struct Pty {
  int fd;
  pid_t pid;
  char out[1 << 16]; /* everything the REPL printed so far */
  size_t len;
} Pty;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads what the REPL prints until the output holds want (after from), or
   10 s pass; true when it does. */
static bool wait_for(Pty *p, size_t from, const char *want) {
  double t0 = now_s();
  while (now_s() - t0 < 10) {
    p->out[p->len] = '\0';
    if (strstr(p->out + from, want)) return true;
    struct pollfd pf = {p->fd, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0) continue;
    ssize_t k = read(p->fd, p->out + p->len, sizeof p->out - 1 - p->len);
    if (k <= 0) break;
    p->len += (size_t)k;
  }
  p->out[p->len] = '\0';
  return strstr(p->out + from, want) != NULL;
}

/* Types text (lines end with \r, as a terminal's Enter). */
static void type(Pty *p, const char *text) {
  size_t n = strlen(text);
  ck_assert_int_eq(write(p->fd, text, n), (ssize_t)n);
}

/* Starts bin/una on a new terminal; false when UNA_BIN is not set or the
   machine has no pseudo-terminals (a container without /dev/pts: said on
   stderr, the test skipped). */
static bool start(Pty *p) {
  const char *bin = getenv("UNA_BIN");
  if (!bin) return false;
  memset(p, 0, sizeof *p);
  p->pid = forkpty(&p->fd, NULL, NULL, NULL);
  if (p->pid < 0) {
    fprintf(stderr, "repl_pty: skipped, no pseudo-terminal (forkpty: %s)\n", strerror(errno));
    return false;
  }
  if (p->pid == 0) {
    setenv("TERM", "dumb", 1);
    setenv("UNA_HISTORY", "", 1); /* no history file */
    execl(bin, bin, (char *)NULL);
    _exit(127);
  }
  ck_assert_msg(wait_for(p, 0, "una> "), "no prompt: %s", p->out);
  return true;
}

/* Ctrl-D at an empty prompt: the REPL leaves with status 0. */
static void finish(Pty *p) {
  size_t from = p->len;
  type(p, "\x04");
  wait_for(p, from, "\n");
  int status = 0;
  double t0 = now_s();
  while (waitpid(p->pid, &status, WNOHANG) == 0 && now_s() - t0 < 10) usleep(10000);
  close(p->fd);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the REPL did not leave cleanly: %s", p->out);
}

/* Types line (with Enter) and waits for want in what follows. */
static void expect(Pty *p, const char *line, const char *want) {
  size_t from = p->len;
  type(p, line);
  ck_assert_msg(wait_for(p, from, want), "after %s: expected '%s' in:\n%s", line, want, p->out + from);
}

START_TEST(continued_items) {
  Pty p;
  if (!start(&p)) return;
  /* a def whose body comes on the next lines: continuation prompts */
  expect(&p, "def h (x: R) : R =\r", "...> ");
  expect(&p, "  let y = x * 2 in\r", "...> ");
  expect(&p, "  y + 1\r", "una> ");
  expect(&p, "h 4\r", "9");
  /* an if whose else comes later */
  expect(&p, "if h 1 > 2\r", "...> ");
  expect(&p, "then 10\r", "...> ");
  expect(&p, "else 20\r", "10");
  /* a trailing operator */
  expect(&p, "1 +\r", "...> ");
  expect(&p, "2\r", "3");
  finish(&p);
}
END_TEST

START_TEST(block_mode) {
  Pty p;
  if (!start(&p)) return;
  /* :{ ... :} runs the lines between as one input, blank lines included */
  expect(&p, ":{\r", "...> ");
  expect(&p, "def g (x: R) : R =\r", "...> ");
  expect(&p, "\r", "...> ");
  expect(&p, "  x * 10\r", "...> ");
  expect(&p, "g 3\r", "...> ");
  expect(&p, ":}\r", "30");
  expect(&p, "g 4\r", "40");
  /* :} with no block is an error; the session goes on */
  expect(&p, ":}\r", "error: ':}' ends no block");
  expect(&p, "1 + 1\r", "2");
  finish(&p);
}
END_TEST

START_TEST(errors_and_ctrl_c) {
  Pty p;
  if (!start(&p)) return;
  expect(&p, "[1, 2][5]\r", "error: index 5 out of bounds");
  expect(&p, "1 + 2\r", "3");
  /* Ctrl-C while typing abandons the input, then a fresh prompt */
  expect(&p, "def k (x: R) : R =\r", "...> ");
  expect(&p, "\x03", "una> ");
  expect(&p, "k 1\r", "error: unknown name 'k'");
  /* Ctrl-C during a loop that does not end interrupts it */
  size_t from = p.len;
  type(&p, "loop x = 0 while true do x + 1\r");
  usleep(300000);
  type(&p, "\x03");
  ck_assert_msg(wait_for(&p, from, "interrupted"), "no interruption: %s", p.out + from);
  expect(&p, "2 * 21\r", "42");
  finish(&p);
}
END_TEST

/* Every bad input of language version 2 is a located error in a terminal
   session, which goes on with what it had: a value defined before them
   all is still there after them. */
START_TEST(bad_input_survives) {
  static const char *const cases[][2] = {
      {"[1, 2][5]\r", "1:7: error: index 5 out of bounds for an array of length 2"},
      {"[1, 2][-1]\r", "1:7: error: index -1 out of bounds"},
      {"[1, 2][0.5]\r", "1:7: error: index 0.5 is not an integer"},
      {"[1, 2, 3][2:1]\r", "1:10: error: slice 2:1 is empty backwards"},
      {"(1 + 2)[0]\r", "1:8: error: cannot index a value of type R"},
      {"transpose [[1, 2], [3]]\r", "1:1: error: transpose: the rows differ in length"},
      {"zip [1, 2] [3]\r", "1:1: error: zip: lengths 2 and 1 differ"},
      {"map3 (x, y, z. x) [1] [2] [3, 4]\r", "1:1: error: map3: lengths 1, 1 and 2 differ"},
      {"loop x = 0 for i < 3 do [x]\r", "1:25: error: the loop body has type [R]"},
      {"loop x = 0 while x do x + 1\r", "1:18: error: the condition of a while loop must be B"},
      {"loop x = 0 for i < -1 do x\r", "1:12: error: loop count -1 is negative"},
      {"loop x = 0 for i < 1.5 do x\r", "1:12: error: loop count 1.5 is not an integer"},
      {"(load \"/tmp/una-pty-rank.npy\" : [[R]])\r", "error: load: /tmp/una-pty-rank.npy: the file holds a float64 "
                                                     "array of shape (2,); expected [[R]]"},
      {"([1, 2] : [[R]])\r", "1:1: error: type ascription mismatch"},
  };
  Pty p;
  if (!start(&p)) return;
  expect(&p, "let keep = [5, 6, 7]\r", "una> ");
  expect(&p, "save \"/tmp/una-pty-rank.npy\" [1, 2]\r", "[1, 2]");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect(&p, cases[i][0], cases[i][1]);
  expect(&p, "keep[2] + 35\r", "42");
  finish(&p);
  unlink("/tmp/una-pty-rank.npy");
}
END_TEST

Suite *suite_repl_pty(void) {
  Suite *s = suite_create("repl_pty");
  TCase *tc = tcase_create("pty");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, continued_items);
  tcase_add_test(tc, block_mode);
  tcase_add_test(tc, errors_and_ctrl_c);
  tcase_add_test(tc, bad_input_survives);
  suite_add_tcase(s, tc);
  return s;
}
