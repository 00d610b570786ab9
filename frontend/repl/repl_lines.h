/* repl_lines.h: the REPL's line discipline, apart from readline and the
   terminal: how the lines typed at the prompt become the inputs that run.
   An input is complete when it parses (fe_input_incomplete: an open
   bracket, a trailing operator, a def without its body... wait for more
   lines); a blank line runs an unfinished input, whose error then says
   what is missing; the lines between `:{` and `:}` are one input, blank
   lines and complete items included (as in ghci). The fuzzer drives
   inputs through it as the REPL does (tests/fuzz/session_input.c). */
#ifndef UNA_REPL_LINES_H
#define UNA_REPL_LINES_H

#include <stdbool.h>

typedef struct ReplLines {
  char *input;   /* the lines of the current input so far (GC), or NULL */
  bool in_block; /* between :{ and :} */
} ReplLines;

/* Takes one line (without its newline; NULL at the end of input).
   Returns the input to run now (GC, each line ending in a newline) or
   NULL while more lines are needed. *error is set (else NULL) to the
   message of a line that is an error by itself (a ':}' that ends no
   block). */
char *repl_lines_take(ReplLines *r, const char *line, const char **error);

/* Whether an input is under way (the continuation prompt is shown). */
bool repl_lines_pending(const ReplLines *r);

/* Forgets the input typed so far (Ctrl-C at a prompt). */
void repl_lines_reset(ReplLines *r);

#endif
