/* test_docs.c: the examples of README.md and of the Markdown files in docs/ are run (a doctest
   over the Markdown). In a code block (fenced, or indented by four
   spaces), a line `ITEM -- VALUE` says what ITEM prints: the block runs in
   a fresh session item by item, and each such item must print VALUE (its
   lines joined by "; " when it prints several), or, for `-- error: MSG`,
   fail with MSG. Prose may follow the value after ": ", ", ", " (" or
   "; " (`g 1 -- 20: g still calls the first f`). A comment that does not
   start like a value (a number, an array, a tuple, a boolean, inf, nan, a
   type, `error:`) is prose: its item runs, unchecked. Blocks without any
   such line (shell commands, grammars, lists of messages) are not run,
   nor are blocks right after a line holding `<!-- not run -->`. A block
   right after a line `<!-- output of: COMMAND -->` is what COMMAND prints
   (`:show unf ex`), line for line; after `<!-- transcript -->`, each
   line that starts with ':' is a command and the lines up to the next one
   are what it prints. Each file's blocks run in order in one
   session (a block may use what an earlier one defined). UNA_ROOT names
   the source tree (set by make check). */
#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../frontend/parser.h"
#include "../suites.h"
#include "../testlib.h"

/* One code block: its lines and where it starts in its file. */
typedef struct Block {
  const char *file;
  int line; /* of its first code line */
  int n;
  char **lines;
} Block;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = una_alloc((size_t)n + 1);
  size_t k = fread(s, 1, (size_t)n, f);
  s[k] = '\0';
  fclose(f);
  return s;
}

/* The lines of text (a copy, split at '\n'). */
static char **split_lines(char *text, int *n) {
  int cap = 1;
  for (char *p = text; *p; p++) cap += *p == '\n';
  char **v = NEW_ARRAY(char *, cap + 1);
  *n = 0;
  char *p = text;
  for (;;) {
    char *e = strchr(p, '\n');
    v[(*n)++] = p;
    if (!e) break;
    *e = '\0';
    p = e + 1;
  }
  return v;
}

/* The comment of a code line: the text after its " -- " outside strings,
   or NULL. */
static const char *comment_of(const char *line) {
  bool str = false;
  for (const char *p = line; *p; p++) {
    if (*p == '"') str = !str;
    if (!str && p[0] == '-' && p[1] == '-' && (p == line || p[-1] == ' ')) return p + 2 + (p[2] == ' ');
  }
  return NULL;
}

/* Whether a comment starts like a value or an error (else it is prose). */
static bool value_like(const char *c) {
  if (strncmp(c, "error:", 6) == 0) return true;
  if (strncmp(c, "inf", 3) == 0 || strncmp(c, "nan", 3) == 0 || strncmp(c, "true", 4) == 0 ||
      strncmp(c, "false", 5) == 0)
    return true;
  if (c[0] == 'R' && (c[1] == '\0' || c[1] == ' ' || c[1] == ',')) return true;
  return isdigit((unsigned char)c[0]) || c[0] == '[' || c[0] == '(' || (c[0] == '-' && c[1] != '-');
}

/* Whether the comment c starts with got, then ends or goes on with prose;
   "..." in c stands for digits that got goes on with (`0.58...`). */
static bool starts_with_value(const char *c, const char *got) {
  while (*got) {
    if (strncmp(c, "...", 3) == 0) {
      c += 3;
      while (isdigit((unsigned char)*got)) got++;
      continue;
    }
    if (*c != *got) return false;
    c++;
    got++;
  }
  return c[0] == '\0' || strncmp(c, ": ", 2) == 0 || strncmp(c, ", ", 2) == 0 || strncmp(c, " (", 2) == 0 ||
         strncmp(c, "; ", 2) == 0 || strcmp(c, ".") == 0;
}

/* Whether got (an item's lines joined by "; ") is what the comment c
   says: all of it, or its first line with prose after it in c (`45, then
   cost: ...`). */
static bool says(const char *c, const char *got) {
  if (starts_with_value(c, got)) return true;
  const char *semi = strstr(got, "; ");
  return semi && starts_with_value(c, una_strndup(got, (size_t)(semi - got)));
}

/* What one item printed, its lines joined by "; ", trailing blanks gone. */
static char *joined(const char *out) {
  char *s = una_strdup(out);
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ')) s[--n] = '\0';
  char *r = una_strdup("");
  for (char *p = s;;) {
    char *e = strchr(p, '\n');
    if (e) *e = '\0';
    r = una_sprintf("%s%s%s", r, r[0] ? "; " : "", p);
    if (!e) break;
    p = e + 1;
  }
  return r;
}

/* The message of an error line "FILE:L:C: error: MSG" (the first one). */
static const char *error_msg(const char *err) {
  const char *e = strstr(err, "error: ");
  if (!e) return NULL;
  char *m = una_strdup(e + 7);
  char *nl = strchr(m, '\n');
  if (nl) *nl = '\0';
  return m;
}

static int nchecked;
static char *report; /* the failures so far, one a line */

static void doc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void doc_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *m = una_vsprintf(fmt, ap);
  va_end(ap);
  report = una_sprintf("%s%s\n", report, m);
}

/* Runs the block in s (the session of its file: a block may use what an
   earlier one defined): item by item, each checked against its comment.
   A block without value comments runs only as context, when it parses. */
static void run_block(Session *s, const Block *b) {
  bool any = false;
  for (int i = 0; i < b->n && !any; i++) {
    const char *c = comment_of(b->lines[i]);
    any = c && value_like(c);
  }
  char *text = una_strdup("");
  for (int i = 0; i < b->n; i++) text = una_sprintf("%s%s\n", text, b->lines[i]);
  ParseResult pr = fe_parse_program("<doc>", text, strlen(text));
  if (!any) {
    if (pr.nerrors == 0) tl_capture(s, text, false);
    return;
  }
  if (pr.nerrors) {
    doc_fail("%s:%d: the block does not parse: %s", b->file, b->line + pr.errors[0].span.line - 1,
         fe_error_text(pr.errors[0]));
    return;
  }
  for (int k = 0; k < pr.nitems; k++) {
    int from = pr.items[k]->span.line - 1;
    int to = k + 1 < pr.nitems ? pr.items[k + 1]->span.line - 1 : b->n;
    char *item = una_strdup("");
    const char *want = NULL;
    for (int i = from; i < to; i++) {
      item = una_sprintf("%s%s\n", item, b->lines[i]);
      const char *c = comment_of(b->lines[i]);
      if (c && value_like(c)) want = c;
    }
    TlRun r = tl_capture(s, item, true);
    const char *where = una_sprintf("%s:%d", b->file, b->line + from);
    if (!want) continue; /* context, or prose */
    nchecked++;
    if (strncmp(want, "error:", 6) == 0) {
      const char *msg = error_msg(r.err);
      if (!msg || !says(want + 6 + (want[6] == ' '), msg)) doc_fail("%s: the doc says %s, Una prints %s%s", where, want, r.out, r.err);
      continue;
    }
    if (!r.ok) {
      doc_fail("%s: the doc says %s, Una fails: %s", where, want, r.err);
      continue;
    }
    const char *got = joined(r.out);
    if (!says(want, got)) doc_fail("%s: the doc says %s, Una prints %s", where, want, got);
  }
}

/* The block b is what cmd prints in s. */
static void check_output(Session *s, const Block *b, const char *cmd) {
  nchecked++;
  TlRun r = tl_capture(s, una_sprintf("%s\n", cmd), true);
  char *want = una_strdup("");
  for (int i = 0; i < b->n; i++) want = una_sprintf("%s%s\n", want, b->lines[i]);
  if (!r.ok) doc_fail("%s:%d: %s fails: %s", b->file, b->line, cmd, r.err);
  else if (strcmp(r.out, want) != 0)
    doc_fail("%s:%d: the block is not what %s prints, which is:\n%s", b->file, b->line, cmd, r.out);
}

/* The block b is a transcript: commands, each followed by its output. */
static void check_transcript(Session *s, const Block *b) {
  for (int i = 0; i < b->n;) {
    Block out = {b->file, b->line + i + 1, 0, b->lines + i + 1};
    int j = i + 1;
    while (j < b->n && b->lines[j][0] != ':') j++;
    out.n = j - i - 1;
    check_output(s, &out, b->lines[i]);
    i = j;
  }
}

/* The code blocks of the Markdown file path, each run. */
static void run_file(const char *path, const char *name) {
  char *text = slurp(path);
  ck_assert_msg(text != NULL, "cannot read %s", path);
  int n;
  char **lines = split_lines(text, &n);
  bool skip_next = false, transcript = false;
  const char *output_of = NULL;
  Session *s = tl_session_with("");
  for (int i = 0; i < n;) {
    if (strstr(lines[i], "<!-- not run -->")) skip_next = true;
    if (strstr(lines[i], "<!-- transcript -->")) transcript = true;
    const char *o = strstr(lines[i], "<!-- output of: ");
    if (o) {
      const char *e = strstr(o, " -->");
      output_of = una_strndup(o + 16, e ? (size_t)(e - o - 16) : strlen(o + 16));
    }
    Block b = {name, 0, 0, NEW_ARRAY(char *, n + 1)};
    if (strncmp(lines[i], "```", 3) == 0) {
      int j = i + 1;
      while (j < n && strncmp(lines[j], "```", 3) != 0) b.lines[b.n++] = lines[j++];
      b.line = i + 2;
      i = j + 1;
    } else if (strncmp(lines[i], "    ", 4) == 0 && (i == 0 || lines[i - 1][0] == '\0')) {
      int j = i;
      while (j < n && (strncmp(lines[j], "    ", 4) == 0 || (lines[j][0] == '\0' && j + 1 < n &&
                                                             strncmp(lines[j + 1], "    ", 4) == 0)))
      {
        b.lines[b.n++] = lines[j] + (lines[j][0] ? 4 : 0);
        j++;
      }
      b.line = i + 1;
      i = j;
    } else {
      i++;
      continue;
    }
    if (skip_next) {
      skip_next = false;
      continue;
    }
    if (output_of) {
      check_output(s, &b, output_of);
      output_of = NULL;
      continue;
    }
    if (transcript) {
      check_transcript(s, &b);
      transcript = false;
      continue;
    }
    run_block(s, &b);
  }
}

START_TEST(docs_examples) {
  const char *root = getenv("UNA_ROOT");
  if (!root) return;
  nchecked = 0;
  report = una_strdup("");
  run_file(una_sprintf("%s/README.md", root), "README.md");
  DIR *d = opendir(una_sprintf("%s/docs", root));
  ck_assert_msg(d != NULL, "no docs/ in %s", root);
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > 3 && strcmp(e->d_name + n - 3, ".md") == 0)
      run_file(una_sprintf("%s/docs/%s", root, e->d_name), una_sprintf("docs/%s", e->d_name));
  }
  closedir(d);
  ck_assert_msg(report[0] == '\0', "the docs' examples that do not hold:\n%s", report);
  if (getenv("DOCS_COUNT")) fprintf(stderr, "docs: %d examples checked\n", nchecked);
  ck_assert_msg(nchecked >= 40, "only %d examples checked: the block rules above missed some", nchecked);
}
END_TEST

/* Every script of examples/ runs to its end without an error (demo.una's
   output is checked line by line in tests/scripts/examples_demo.una). */
START_TEST(examples_run) {
  const char *root = getenv("UNA_ROOT");
  if (!root) return;
  DIR *d = opendir(una_sprintf("%s/examples", root));
  ck_assert(d != NULL);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d))) {
    size_t k = strlen(e->d_name);
    if (k < 5 || strcmp(e->d_name + k - 4, ".una") != 0) continue;
    char *path = una_sprintf("%s/examples/%s", root, e->d_name);
    Session *s = tl_session_with("");
    TlRun r = tl_capture(s, slurp(path), true);
    ck_assert_msg(r.ok, "examples/%s: %s", e->d_name, r.err);
    n++;
  }
  closedir(d);
  ck_assert_int_ge(n, 5);
}
END_TEST

Suite *suite_docs(void) {
  Suite *s = suite_create("docs");
  TCase *tc = tcase_create("examples");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, docs_examples);
  tcase_add_test(tc, examples_run);
  suite_add_tcase(s, tc);
  return s;
}
