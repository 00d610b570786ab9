/* test_robustness.c: hostile inputs generated at test time (200,000 nested
   brackets, a 1 MB identifier, binary garbage, NUL bytes, very long lines)
   are run through $UNA_BIN; each must end in located errors and exit status
   1, the first of them the one expected (or, where the input is valid, its
   value, or an error that names the limit it reached), never in a signal. */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../suites.h"

/* A growable byte buffer (plain malloc: the test process does not use GC). */
typedef struct Buf {
  char *p;
  size_t len, cap;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void buf_puts(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* Appends s n times. */
static void buf_repeat(Buf *b, const char *s, size_t n) {
  size_t k = strlen(s);
  for (size_t i = 0; i < n; i++) buf_add(b, s, k);
}

/* The outcome of one run of una. */
typedef struct Run {
  char path[64]; /* the script's file name, as una prints it */
  Buf out, err;
  int status;    /* exit status, or 128 + signal */
} Run;

static void read_all(int fd, Buf *b) {
  char tmp[65536];
  ssize_t n;
  buf_add(b, "", 0);
  lseek(fd, 0, SEEK_SET);
  while ((n = read(fd, tmp, sizeof tmp)) > 0) buf_add(b, tmp, (size_t)n);
}

/* Removes AddressSanitizer's three-line notice about a longjmp over a large
   stack ("ASan is ignoring requested __asan_handle_no_return"), which `make
   asan` prints when an error unwinds deep recursion; it is not una's
   output. Anything else ASan prints is kept. */
static void drop_asan_notice(Buf *b) {
  static const char *const notice[] = {"ASan is ignoring requested __asan_handle_no_return",
                                       "False positive error reports may follow",
                                       "For details see https://github.com/google/sanitizers/issues/189"};
  char *w = b->p, *s = b->p;
  if (!s) return;
  while (*s) {
    char *eol = strchr(s, '\n');
    size_t len = eol ? (size_t)(eol - s) + 1 : strlen(s);
    bool drop = false;
    for (size_t i = 0; i < sizeof notice / sizeof notice[0]; i++) {
      char *at = strstr(s, notice[i]);
      if (at && (!eol || at < eol)) drop = true;
    }
    if (!drop) {
      memmove(w, s, len);
      w += len;
    }
    s += len;
  }
  *w = '\0';
  b->len = (size_t)(w - b->p);
}

/* The una binary: $UNA_BIN (relative to $UNA_ROOT unless absolute), else
   bin/una. */
static const char *una_bin(void) {
  static char path[4096];
  const char *bin = getenv("UNA_BIN");
  const char *root = getenv("UNA_ROOT");
  if (!bin) bin = "bin/una";
  if (bin[0] == '/') return bin;
  snprintf(path, sizeof path, "%s/%s", root ? root : ".", bin);
  return path;
}

/* Writes text (len bytes, NULs allowed) to a fresh script file and runs una
   on it, with extra arguments before the file name (NULL-terminated list,
   may be NULL). Standard input is /dev/null. */
static Run *run_text_args(const char *text, size_t len, const char *const *extra) {
  Run *r = calloc(1, sizeof *r);
  ck_assert_ptr_nonnull(r);
  snprintf(r->path, sizeof r->path, "/tmp/una-robust-XXXXXX");
  int fd = mkstemp(r->path);
  ck_assert_int_ge(fd, 0);
  for (size_t off = 0; off < len;) {
    ssize_t n = write(fd, text + off, len - off);
    ck_assert_int_gt(n, 0);
    off += (size_t)n;
  }
  close(fd);
  char out_path[] = "/tmp/una-robust-out-XXXXXX", err_path[] = "/tmp/una-robust-err-XXXXXX";
  int fo = mkstemp(out_path), fe = mkstemp(err_path);
  ck_assert(fo >= 0 && fe >= 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    const char *argv[16];
    int argc = 0;
    argv[argc++] = una_bin();
    for (int i = 0; extra && extra[i] && argc < 14; i++) argv[argc++] = extra[i];
    argv[argc++] = r->path;
    argv[argc] = NULL;
    int fi = open("/dev/null", O_RDONLY);
    dup2(fi, 0);
    dup2(fo, 1);
    dup2(fe, 2);
    setenv("HOME", "/tmp", 1);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status;
  waitpid(pid, &status, 0);
  r->status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  read_all(fo, &r->out);
  read_all(fe, &r->err);
  drop_asan_notice(&r->err);
  close(fo);
  close(fe);
  unlink(out_path);
  unlink(err_path);
  unlink(r->path);
  return r;
}

static Run *run_text(const char *text, size_t len) { return run_text_args(text, len, NULL); }

static Run *run_buf(Buf *b) { return run_text(b->p ? b->p : "", b->len); }

static void run_free(Run *r) {
  free(r->out.p);
  free(r->err.p);
  free(r);
}

/* True when every line of r's stderr reads "PATH:LINE:COL: error: MSG" with
   a non-empty message; stderr must not be empty. */
static bool all_located(const Run *r) {
  const char *s = r->err.p;
  size_t plen = strlen(r->path);
  if (!s || !*s) return false;
  while (*s) {
    const char *eol = strchr(s, '\n');
    if (!eol) return false;
    if (strncmp(s, r->path, plen) != 0 || s[plen] != ':') return false;
    const char *p = s + plen + 1;
    int line = 0, col = 0, used = 0;
    if (sscanf(p, "%d:%d: error: %n", &line, &col, &used) < 2 || used == 0) return false;
    if (line < 1 || col < 1 || p + used >= eol) return false;
    s = eol + 1;
  }
  return true;
}

/* Fails unless r ended with exit status 1 and only located errors. */
static void assert_located_failure(const Run *r, const char *what) {
  ck_assert_msg(r->status < 128, "%s: una died with signal %d", what, r->status - 128);
  ck_assert_msg(r->status == 1, "%s: exit status %d, expected 1\nstderr: %.500s", what,
                r->status, r->err.p);
  ck_assert_msg(all_located(r), "%s: stderr is not located errors:\n%.500s", what, r->err.p);
}

/* The first line of r's stderr without "PATH:" (r's file), or the whole
   line when it names another file. */
static char *first_error(const Run *r) {
  const char *s = r->err.p;
  size_t plen = strlen(r->path);
  if (strncmp(s, r->path, plen) == 0 && s[plen] == ':') s += plen + 1;
  size_t n = strcspn(s, "\n");
  char *line = malloc(n + 1);
  ck_assert_ptr_nonnull(line);
  memcpy(line, s, n);
  line[n] = '\0';
  return line;
}

/* Fails unless r failed with located errors, the first of them
   "PATH:want" ("LINE:COL: error: MSG"). */
static void assert_error(const Run *r, const char *want, const char *what) {
  assert_located_failure(r, what);
  char *first = first_error(r);
  ck_assert_msg(strcmp(first, want) == 0, "%s: the first error is\n  %.300s\nexpected\n  %s", what, first,
                want);
  free(first);
}

/* As assert_error, for errors whose message is too long to spell out:
   the first error starts with want. */
static void assert_error_prefix(const Run *r, const char *want, const char *what) {
  assert_located_failure(r, what);
  char *first = first_error(r);
  ck_assert_msg(strncmp(first, want, strlen(want)) == 0, "%s: the first error is\n  %.300s\nexpected\n  %s...",
                what, first, want);
  free(first);
}

/* The messages of a limit that a valid input may reach: the stack guard
   (fe_stack_check) and an allocation that cannot be made. */
static bool is_limit_message(const char *line) {
  const char *msg = strstr(line, ": error: ");
  if (!msg) return false;
  msg += 9;
  return strcmp(msg, "expression nested too deeply") == 0 || strncmp(msg, "cannot allocate ", 16) == 0 ||
         strncmp(msg, "out of memory", 13) == 0;
}

/* Fails unless r printed exactly want with exit status 0, or failed with
   located errors that say which limit it reached (for inputs that are
   valid but may exceed one): the stack guard's "expression nested too
   deeply" or an allocation's "cannot allocate ...". */
static void assert_value_or_limit(const Run *r, const char *want, const char *what) {
  ck_assert_msg(r->status < 128, "%s: una died with signal %d", what, r->status - 128);
  if (r->status == 0) {
    ck_assert_msg(strcmp(r->out.p, want) == 0, "%s: printed %.200s, expected %s", what,
                  r->out.p, want);
    ck_assert_msg(r->err.p[0] == '\0', "%s: unexpected stderr %.500s", what, r->err.p);
  } else {
    assert_located_failure(r, what);
    char *first = first_error(r);
    ck_assert_msg(is_limit_message(first), "%s: failed with %.300s, not at a limit", what, first);
    free(first);
  }
}

/* Fails unless r printed exactly want, with nothing on stderr and status 0. */
static void assert_value(const Run *r, const char *want, const char *what) {
  ck_assert_msg(r->status < 128, "%s: una died with signal %d", what, r->status - 128);
  ck_assert_msg(r->status == 0, "%s: exit status %d\nstderr: %.500s", what, r->status,
                r->err.p);
  ck_assert_msg(strcmp(r->out.p, want) == 0, "%s: printed %.200s, expected %s", what,
                r->out.p, want);
  ck_assert_msg(r->err.p[0] == '\0', "%s: unexpected stderr %.500s", what, r->err.p);
}

#define DEEP 200000

START_TEST(test_deep_parens) {
  /* Valid: with the interpreter's large stack this may well succeed; if it
     does not, the stack guard must report it. */
  Buf b = {0};
  buf_repeat(&b, "(", DEEP);
  buf_puts(&b, "1");
  buf_repeat(&b, ")", DEEP);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "1\n", "200,000 nested parentheses");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_parens_type_error) {
  /* A type error at the bottom of 200,000 parentheses: reported at its
     place, after unwinding the whole depth. */
  Buf b = {0};
  char want[128];
  buf_repeat(&b, "(", DEEP);
  buf_puts(&b, "1 + true");
  buf_repeat(&b, ")", DEEP);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  snprintf(want, sizeof want, "1:%d: error: '+' expects R operands, found B", DEEP + 5);
  assert_error(r, want, "a type error under 200,000 parentheses");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_parens_runtime_error) {
  Buf b = {0};
  buf_repeat(&b, "(", DEEP);
  buf_puts(&b, "length (iota (-1))");
  buf_repeat(&b, ")", DEEP);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  char want[128];
  snprintf(want, sizeof want, "1:%d: error: iota: size must be a non-negative integer, found -1", DEEP + 9);
  assert_error(r, want, "a run-time error under 200,000 parentheses");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_unclosed_parens) {
  Buf b = {0};
  buf_repeat(&b, "(", DEEP);
  Run *r = run_buf(&b);
  char want[128];
  snprintf(want, sizeof want, "1:%d: error: expected an expression, found the end of the input", DEEP + 1);
  assert_error(r, want, "200,000 unclosed parentheses");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_brackets) {
  Buf b = {0};
  buf_repeat(&b, "[", DEEP);
  buf_repeat(&b, "]", DEEP);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, b.p, "200,000 nested brackets");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_brackets_mismatched) {
  Buf b = {0};
  buf_repeat(&b, "[", DEEP);
  buf_repeat(&b, "]", DEEP - 1);
  buf_puts(&b, ")\n");
  Run *r = run_buf(&b);
  char want[128];
  snprintf(want, sizeof want, "1:%d: error: expected ']' to close '[' at 1:1, found ')'", 2 * DEEP);
  assert_error(r, want, "200,000 brackets closed by ')'");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_type) {
  Buf b = {0};
  buf_puts(&b, "def f (x: ");
  buf_repeat(&b, "[", DEEP);
  buf_puts(&b, "R");
  buf_repeat(&b, "]", DEEP);
  buf_puts(&b, ") : R = 1\n");
  buf_puts(&b, "1\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "1\n", "a type nested 200,000 deep");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_type_command) {
  Buf b = {0};
  buf_puts(&b, ":type ");
  buf_repeat(&b, "(", DEEP);
  buf_puts(&b, "1");
  buf_repeat(&b, ")", DEEP);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "R\n", ":type of 200,000 nested parentheses");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_prefix_minus) {
  Buf b = {0};
  buf_repeat(&b, "- ", DEEP);
  buf_puts(&b, "1\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "1\n", "200,000 prefix minus signs");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_not) {
  Buf b = {0};
  buf_repeat(&b, "!", DEEP);
  buf_puts(&b, "true\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "true\n", "200,000 prefix negations");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_power) {
  Buf b = {0};
  buf_repeat(&b, "1 ^ ", DEEP);
  buf_puts(&b, "1\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "1\n", "a right-associative chain of 200,000 powers");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_long_sum_chain) {
  Buf b = {0};
  buf_puts(&b, "1");
  buf_repeat(&b, " + 1", DEEP - 1);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "200000\n", "a chain of 200,000 additions");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_let) {
  Buf b = {0};
  buf_repeat(&b, "let x = 1 in ", 100000);
  buf_puts(&b, "x\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "1\n", "100,000 nested lets");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_if) {
  Buf b = {0};
  buf_repeat(&b, "if true then ", 100000);
  buf_puts(&b, "1");
  buf_repeat(&b, " else 0", 100000);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "1\n", "100,000 nested ifs");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_deep_map) {
  /* map (x. map (x. ... [x] ...) [1]) [1]: the value is nested as deeply as
     the program, so printing it is deep too. */
  Buf b = {0}, want = {0};
  int n = 20000;
  buf_repeat(&b, "map (x. ", (size_t)n);
  buf_puts(&b, "x");
  buf_repeat(&b, ") [1]", (size_t)n);
  buf_puts(&b, "\n");
  buf_repeat(&want, "[", (size_t)n);
  buf_puts(&want, "1");
  buf_repeat(&want, "]", (size_t)n);
  buf_puts(&want, "\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, want.p, "20,000 nested maps");
  run_free(r);
  free(b.p);
  free(want.p);
}
END_TEST

START_TEST(test_huge_identifier) {
  Buf b = {0};
  buf_repeat(&b, "a", (size_t)1 << 20);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_error_prefix(r, "1:1: error: unknown name 'aaaaaaaa", "a 1 MB identifier");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_huge_identifier_bound) {
  /* A 1 MB name is still a name: it can be bound and used. */
  Buf b = {0}, name = {0};
  buf_repeat(&name, "b", (size_t)1 << 20);
  buf_puts(&b, "let ");
  buf_puts(&b, name.p);
  buf_puts(&b, " = 41\n");
  buf_puts(&b, name.p);
  buf_puts(&b, " + 1\n");
  Run *r = run_buf(&b);
  assert_value(r, "42\n", "a 1 MB name, bound and used");
  run_free(r);
  free(b.p);
  free(name.p);
}
END_TEST

START_TEST(test_huge_number) {
  Buf b = {0};
  buf_repeat(&b, "9", (size_t)1 << 20);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_value_or_limit(r, "inf\n", "a number of 1 MB of digits");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_huge_string) {
  Buf b = {0};
  buf_puts(&b, "load \"");
  buf_repeat(&b, "x", (size_t)1 << 20);
  buf_puts(&b, "\n");
  Run *r = run_buf(&b);
  assert_error(r, "1:6: error: unterminated string", "an unterminated 1 MB string");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_huge_comment) {
  Buf b = {0};
  buf_puts(&b, "-- ");
  buf_repeat(&b, "comment ", (size_t)1 << 17);
  buf_puts(&b, "\n1 + 1\n");
  Run *r = run_buf(&b);
  assert_value(r, "2\n", "a 1 MB comment");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_binary_garbage) {
  Buf b = {0};
  unsigned long long x = 0x243F6A8885A308D3ull; /* fixed seed: same bytes every run */
  for (int i = 0; i < 65536; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    char c = (char)(x >> 56);
    buf_add(&b, &c, 1);
  }
  Run *r = run_buf(&b);
  assert_error(r, "1:1: error: unexpected character '\\x85'", "64 KB of binary garbage");
  /* The parser reports at most 20 errors. */
  int lines = 0;
  for (const char *p = r->err.p; *p; p++) lines += *p == '\n';
  ck_assert_msg(lines <= 20, "%d error lines", lines);
  ck_assert_msg(r->out.p[0] == '\0', "garbage printed %.200s", r->out.p);
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_nul_byte) {
  static const char text[] = "1 + \0 2\n";
  Run *r = run_text(text, sizeof text - 1);
  assert_error(r, "1:5: error: unexpected character '\\x00'", "a NUL byte between tokens");
  run_free(r);
}
END_TEST

START_TEST(test_nul_bytes_after_valid_items) {
  /* The NUL is on line 2; the parse error means line 1 does not run. */
  static const char text[] = "1 + 1\n\0\0\0\n";
  Run *r = run_text(text, sizeof text - 1);
  assert_error(r, "2:1: error: unexpected character '\\x00'", "NUL bytes on a line of their own");
  ck_assert_msg(r->out.p[0] == '\0', "printed %.200s", r->out.p);
  run_free(r);
}
END_TEST

START_TEST(test_nul_in_string) {
  static const char text[] = "load \"a\0b.npy\"\n";
  Run *r = run_text(text, sizeof text - 1);
  /* the name ends at the NUL */
  assert_error(r, "1:1: error: load: a: cannot open: No such file or directory", "a NUL byte in a file name");
  run_free(r);
}
END_TEST

START_TEST(test_nul_in_comment) {
  static const char text[] = "-- a comment \0 with a NUL\n1 + 1\n";
  Run *r = run_text(text, sizeof text - 1);
  assert_value_or_limit(r, "2\n", "a NUL byte in a comment");
  run_free(r);
}
END_TEST

START_TEST(test_many_errors) {
  Buf b = {0};
  buf_repeat(&b, "1 $ 1\n", 1000);
  Run *r = run_buf(&b);
  assert_error(r, "1:3: error: unexpected character '$'", "1,000 bad lines");
  int lines = 0;
  for (const char *p = r->err.p; *p; p++) lines += *p == '\n';
  ck_assert_msg(lines >= 2 && lines <= 20, "%d error lines", lines);
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_empty_file) {
  Run *r = run_text("", 0);
  assert_value(r, "", "an empty file");
  run_free(r);
}
END_TEST

START_TEST(test_only_comments) {
  static const char text[] = "-- nothing\n\n   \n-- here\n";
  Run *r = run_text(text, sizeof text - 1);
  assert_value(r, "", "a file of comments and blank lines");
  run_free(r);
}
END_TEST

START_TEST(test_no_final_newline) {
  static const char text[] = "1 + 1\n2 + 2";
  Run *r = run_text(text, sizeof text - 1);
  assert_value(r, "2\n4\n", "no newline at the end");
  run_free(r);
}
END_TEST

START_TEST(test_crlf) {
  static const char text[] = "1 + 1\r\ndef f (x: R) : R =\r\n  x * 2\r\nf 3\r\n";
  Run *r = run_text(text, sizeof text - 1);
  assert_value(r, "2\n6\n", "CRLF line endings");
  run_free(r);
}
END_TEST

START_TEST(test_long_array_literal) {
  Buf b = {0};
  buf_puts(&b, "length [0");
  buf_repeat(&b, ", 1", 99999);
  buf_puts(&b, "]\n");
  Run *r = run_buf(&b);
  assert_value(r, "100000\n", "an array literal of 100,000 elements");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_long_tuple) {
  Buf b = {0};
  buf_puts(&b, "(0");
  buf_repeat(&b, ", 1", 9999);
  buf_puts(&b, ").10000\n");
  Run *r = run_buf(&b);
  assert_value(r, "1\n", "a tuple of 10,000 components");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_many_items) {
  Buf b = {0};
  for (int i = 0; i < 20000; i++) {
    char line[64];
    snprintf(line, sizeof line, "let x%d = %d\n", i, i);
    buf_puts(&b, line);
  }
  buf_puts(&b, "x19999 + x0\n");
  Run *r = run_buf(&b);
  assert_value(r, "19999\n", "20,000 top-level lets");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_many_redefinitions) {
  Buf b = {0};
  buf_puts(&b, "def f (x: R) : R = x\n");
  buf_repeat(&b, "def f (x: R) : R = f x + 1\n", 5000);
  buf_puts(&b, "f 0\n");
  Run *r = run_buf(&b);
  assert_value(r, "5000\n", "5,000 defs, each calling the one before");
  run_free(r);
  free(b.p);
}
END_TEST

START_TEST(test_huge_allocation) {
  static const char text[] = "length (iota 1e18)\n";
  Run *r = run_text(text, sizeof text - 1);
  assert_error(r, "1:9: error: cannot allocate 1e+18 elements (8e+18 bytes)", "iota 1e18");
  run_free(r);
}
END_TEST

START_TEST(test_huge_nested_allocation) {
  /* Each row is small, but there are many: memory runs out gracefully or
     the answer comes back; either way no signal. */
  static const char text[] = "length (replicate 1e12 [1, 2])\n";
  Run *r = run_text(text, sizeof text - 1);
  assert_value_or_limit(r, "1000000000000\n", "replicate 1e12 rows");
  run_free(r);
}
END_TEST

START_TEST(test_e_text) {
  static const char *const args[] = {"-e", "1 + true", NULL};
  static const char text[] = "2\n";
  Run *r = run_text_args(text, sizeof text - 1, args);
  ck_assert_int_eq(r->status, 1);
  ck_assert_str_eq(r->err.p, "<-e>:1:5: error: '+' expects R operands, found B\n");
  ck_assert_str_eq(r->out.p, "");
  run_free(r);
}
END_TEST

START_TEST(test_e_deep) {
  /* One argument may hold at most 128 KB (MAX_ARG_STRLEN). */
  Buf t = {0};
  buf_repeat(&t, "(", 100000);
  const char *args[] = {"-e", t.p, NULL};
  Run *r = run_text_args("", 0, args);
  ck_assert_msg(r->status == 1, "exit status %d", r->status);
  ck_assert_str_eq(r->err.p, "<-e>:1:100001: error: expected an expression, found the end of the input\n");
  run_free(r);
  free(t.p);
}
END_TEST

Suite *suite_robustness(void) {
  Suite *s = suite_create("robustness");
  TCase *tc = tcase_create("robustness");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_deep_parens);
  tcase_add_test(tc, test_deep_parens_type_error);
  tcase_add_test(tc, test_deep_parens_runtime_error);
  tcase_add_test(tc, test_deep_unclosed_parens);
  tcase_add_test(tc, test_deep_brackets);
  tcase_add_test(tc, test_deep_brackets_mismatched);
  tcase_add_test(tc, test_deep_type);
  tcase_add_test(tc, test_deep_type_command);
  tcase_add_test(tc, test_deep_prefix_minus);
  tcase_add_test(tc, test_deep_not);
  tcase_add_test(tc, test_deep_power);
  tcase_add_test(tc, test_long_sum_chain);
  tcase_add_test(tc, test_deep_let);
  tcase_add_test(tc, test_deep_if);
  tcase_add_test(tc, test_deep_map);
  tcase_add_test(tc, test_huge_identifier);
  tcase_add_test(tc, test_huge_identifier_bound);
  tcase_add_test(tc, test_huge_number);
  tcase_add_test(tc, test_huge_string);
  tcase_add_test(tc, test_huge_comment);
  tcase_add_test(tc, test_binary_garbage);
  tcase_add_test(tc, test_nul_byte);
  tcase_add_test(tc, test_nul_bytes_after_valid_items);
  tcase_add_test(tc, test_nul_in_string);
  tcase_add_test(tc, test_nul_in_comment);
  tcase_add_test(tc, test_many_errors);
  tcase_add_test(tc, test_empty_file);
  tcase_add_test(tc, test_only_comments);
  tcase_add_test(tc, test_no_final_newline);
  tcase_add_test(tc, test_crlf);
  tcase_add_test(tc, test_long_array_literal);
  tcase_add_test(tc, test_long_tuple);
  tcase_add_test(tc, test_many_items);
  tcase_add_test(tc, test_many_redefinitions);
  tcase_add_test(tc, test_huge_allocation);
  tcase_add_test(tc, test_huge_nested_allocation);
  tcase_add_test(tc, test_e_text);
  tcase_add_test(tc, test_e_deep);
  suite_add_tcase(s, tc);
  return s;
}
