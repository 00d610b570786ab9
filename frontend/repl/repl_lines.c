/* repl_lines.c: the REPL's line discipline (repl_lines.h). */
#include "repl_lines.h"

#include "../ir/common.h"
#include "../parser.h"

/* True when text holds only blanks. */
static bool blank(const char *text) {
  for (; *text; text++)
    if (*text != ' ' && *text != '\t' && *text != '\r' && *text != '\n') return false;
  return true;
}

/* True when line is the word w with blanks around it only. */
static bool line_is(const char *line, const char *w) {
  while (*line == ' ' || *line == '\t') line++;
  size_t n = strlen(w);
  if (strncmp(line, w, n) != 0) return false;
  return blank(line + n);
}

/* The input so far, handed over: r starts afresh. */
static char *take(ReplLines *r) {
  char *in = r->input;
  r->input = NULL;
  return in;
}

static void append(ReplLines *r, const char *line) {
  r->input = una_sprintf("%s%s\n", r->input ? r->input : "", line);
}

char *repl_lines_take(ReplLines *r, const char *line, const char **error) {
  *error = NULL;
  if (!line) { /* the end: an unfinished input runs, its error says what is missing */
    r->in_block = false;
    return take(r);
  }
  if (r->in_block) {
    if (!line_is(line, ":}")) {
      append(r, line);
      return NULL;
    }
    r->in_block = false;
    return take(r);
  }
  if (!r->input && line_is(line, ":{")) {
    r->in_block = true;
    return NULL;
  }
  if (!r->input && line_is(line, ":}")) {
    *error = "':}' ends no block (':{' starts one)";
    return NULL;
  }
  if (blank(line)) return take(r);
  append(r, line);
  return fe_input_incomplete(r->input, strlen(r->input)) ? NULL : take(r);
}

bool repl_lines_pending(const ReplLines *r) { return r->input || r->in_block; }

void repl_lines_reset(ReplLines *r) {
  r->input = NULL;
  r->in_block = false;
}
