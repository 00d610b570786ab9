/* run_scripts.c: the script-test runner, as a Check suite. Every
   tests/scripts/NAME.una is run by bin/una and its output compared with the
   expectations written inline in its comments:

     1 + 2                    -- expect: 3
     map2 (+) [1] [1, 2]      -- expect error: 2:1: map2: lengths 1 and 2 differ
     -- expect note: 4:1: called from here
     -- expect stderr: una: no CUDA GPU found; using the CPU
     -- expect exit: 2
     -- args: --no-prelude
     -- stdin                 (feed the file on standard input, named <stdin>)

   stdout must be exactly the `expect:` lines, in order; stderr exactly the
   `expect error:` lines (written FILE:LINE:COL: error: MSG, FILE being the
   script's name or <stdin>), `expect note:` lines (FILE:LINE:COL: note:
   MSG, a traceback's calls; a note in the prelude keeps its <prelude>)
   and `expect stderr:` lines, in order; the exit
   status is 1 when an error is expected, else 0, unless `expect exit:` says.
   UNA_BIN names the binary and UNA_ROOT the source tree (set by make check);
   UNA_SCRIPT=name runs one script only. Every run has --check-passes (the
   type checker after every optimizer pass) before the script's own
   arguments. */
#include <check.h>
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suites.h"

#define MAX_SCRIPTS 2048

static char *scripts[MAX_SCRIPTS];
static int nscripts;
static char script_dir[4096];

typedef struct {
  char *buf;
  size_t len, cap;
} Str;

static void str_add(Str *s, const char *p, size_t n) {
  if (s->len + n + 1 > s->cap) {
    s->cap = (s->len + n + 1) * 2;
    s->buf = realloc(s->buf, s->cap);
    ck_assert_ptr_nonnull(s->buf);
  }
  memcpy(s->buf + s->len, p, n);
  s->len += n;
  s->buf[s->len] = '\0';
}

/* Appends printf's text, however long (an expected line may be long). */
static void str_addf(Str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  ck_assert(n >= 0);
  char *tmp = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(tmp);
  va_start(ap, fmt);
  vsnprintf(tmp, (size_t)n + 1, fmt, ap);
  va_end(ap);
  str_add(s, tmp, (size_t)n);
  free(tmp);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  Str s = {0};
  char tmp[65536];
  size_t n;
  str_add(&s, "", 0);
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) str_add(&s, tmp, n);
  fclose(f);
  if (len) *len = s.len;
  return s.buf;
}

/* Finds `-- KEY:` (or a bare `-- KEY` at the end of the line) in line and
   returns what follows it, or NULL. */
static const char *directive(const char *line, const char *key) {
  size_t k = strlen(key);
  for (const char *p = strstr(line, "-- "); p; p = strstr(p + 1, "-- ")) {
    const char *q = p + 3;
    if (strncmp(q, key, k) != 0) continue;
    q += k;
    if (*q == '\0') return q;
    if (*q != ':') continue;
    q++;
    if (*q == ' ') q++;
    return q;
  }
  return NULL;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void find_scripts(void) {
  const char *root = getenv("UNA_ROOT");
  snprintf(script_dir, sizeof script_dir, "%s/tests/scripts", root ? root : ".");
  const char *only = getenv("UNA_SCRIPT");
  DIR *d = opendir(script_dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) && nscripts < MAX_SCRIPTS) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".una") != 0) continue;
    if (only && strncmp(e->d_name, only, strlen(only)) != 0) continue;
    scripts[nscripts++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(scripts, (size_t)nscripts, sizeof scripts[0], cmp_name);
}

/* Runs the binary on one script; fills out, err and the exit status. */
static int run_una(const char *name, char **argv_extra, int nextra, bool use_stdin,
                   char **out, char **err) {
  char out_path[] = "/tmp/una-out-XXXXXX", err_path[] = "/tmp/una-err-XXXXXX";
  int fo = mkstemp(out_path), fe = mkstemp(err_path);
  ck_assert(fo >= 0 && fe >= 0);
  const char *bin = getenv("UNA_BIN");
  char binpath[4096];
  const char *root = getenv("UNA_ROOT");
  if (!bin) bin = "bin/una";
  if (bin[0] != '/') {
    snprintf(binpath, sizeof binpath, "%s/%s", root ? root : ".", bin);
    bin = binpath;
  }
  pid_t pid = fork();
  ck_assert(pid >= 0);
  if (pid == 0) {
    if (chdir(script_dir) != 0) _exit(126);
    dup2(fo, 1);
    dup2(fe, 2);
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    argv[argc++] = "--check-passes";
    for (int i = 0; i < nextra && argc < 60; i++) argv[argc++] = argv_extra[i];
    if (use_stdin) {
      int fi = open(name, O_RDONLY);
      if (fi < 0) _exit(126);
      dup2(fi, 0);
    } else {
      int fi = open("/dev/null", O_RDONLY);
      dup2(fi, 0);
      argv[argc++] = (char *)name;
    }
    argv[argc] = NULL;
    setenv("HOME", "/tmp", 1);
    execv(bin, argv);
    _exit(127);
  }
  int status;
  waitpid(pid, &status, 0);
  *out = read_file(out_path, NULL);
  *err = read_file(err_path, NULL);
  close(fo);
  close(fe);
  unlink(out_path);
  unlink(err_path);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/* At most n characters of s (Check's messages have a size limit). */
static const char *clip(const char *s, size_t n) {
  if (strlen(s) <= n) return s;
  char *c = malloc(n + 32);
  ck_assert_ptr_nonnull(c);
  memcpy(c, s, n);
  strcpy(c + n, "\n[... cut ...]\n");
  return c;
}

START_TEST(test_script) {
  const char *name = scripts[_i];
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", script_dir, name);
  size_t len;
  char *text = read_file(path, &len);
  ck_assert_msg(text != NULL, "cannot read %s", path);

  Str want_out = {0}, want_err = {0};
  str_add(&want_out, "", 0);
  str_add(&want_err, "", 0);
  char *extra[32];
  int nextra = 0;
  bool use_stdin = false, any_error = false;
  int want_exit = -1;
  const char *shown = name;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n') text[i] = '\0';
  for (char *line = text; line < text + len; line += strlen(line) + 1)
    if (directive(line, "stdin")) use_stdin = true;
  if (use_stdin) shown = "<stdin>";
  for (char *line = text; line < text + len; line += strlen(line) + 1) {
    const char *v;
    if ((v = directive(line, "expect error"))) {
      /* "LINE:COL: MSG" -> "FILE:LINE:COL: error: MSG" */
      const char *msg = strstr(v, ": ");
      ck_assert_msg(msg != NULL, "%s: malformed expect error: %s", name, v);
      str_addf(&want_err, "%s:%.*s: error: %s\n", shown, (int)(msg - v), v, msg + 2);
      any_error = true;
    } else if ((v = directive(line, "expect note"))) {
      /* "LINE:COL: MSG" -> "FILE:LINE:COL: note: MSG" (a traceback's line;
         "<prelude>:LINE:COL: MSG" keeps its file) */
      const char *msg = strstr(v, ": ");
      ck_assert_msg(msg != NULL, "%s: malformed expect note: %s", name, v);
      if (v[0] == '<') str_addf(&want_err, "%.*s: note: %s\n", (int)(msg - v), v, msg + 2);
      else str_addf(&want_err, "%s:%.*s: note: %s\n", shown, (int)(msg - v), v, msg + 2);
    } else if ((v = directive(line, "expect stderr"))) {
      str_addf(&want_err, "%s\n", v);
    } else if ((v = directive(line, "expect exit"))) {
      want_exit = atoi(v);
    } else if ((v = directive(line, "expect"))) {
      str_addf(&want_out, "%s\n", v);
    } else if ((v = directive(line, "args"))) {
      char *copy = strdup(v);
      for (char *tok = strtok(copy, " "); tok && nextra < 32; tok = strtok(NULL, " "))
        extra[nextra++] = tok;
    }
  }
  if (want_exit < 0) want_exit = any_error ? 1 : 0;

  char *out, *err;
  int status = run_una(name, extra, nextra, use_stdin, &out, &err);
  ck_assert_msg(status < 128, "%s: una died with signal %d\nstderr:\n%s", name,
                status - 128, err);
  ck_assert_msg(strcmp(out, want_out.buf) == 0,
                "%s: stdout differs\n--- expected\n%s--- found\n%s--- stderr\n%s", name,
                clip(want_out.buf, 1500), clip(out, 1500), clip(err, 400));
  ck_assert_msg(strcmp(err, want_err.buf) == 0,
                "%s: stderr differs\n--- expected\n%s--- found\n%s", name, clip(want_err.buf, 1800),
                clip(err, 1800));
  ck_assert_msg(status == want_exit, "%s: exit status %d, expected %d", name, status,
                want_exit);
}
END_TEST

Suite *suite_scripts(void) {
  find_scripts();
  Suite *s = suite_create("scripts");
  TCase *tc = tcase_create("scripts");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_script, 0, nscripts);
  suite_add_tcase(s, tc);
  return s;
}
