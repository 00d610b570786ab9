/* parser.h: text -> top-level items (surface Terms). One recursive-descent
   parser for scripts, REPL input, -e text and REPL command arguments.

   Item boundaries: a token in column 1 starts a new top-level item, unless
   brackets are open or the previous token cannot end an item (it is '=',
   'in', 'then', 'else', ',', '.', a binary or prefix operator, 'wrt',
   'grad', ...). A line whose first character is ':' followed by a letter is
   a command; the rest of that line is its argument text. */
#ifndef UNA_PARSER_H
#define UNA_PARSER_H

#include "ir/item.h"

typedef struct ParseResult {
  Item **items;
  int nitems;
  FeError *errors; /* syntax errors, in source order; the parser recovers at
                      the next item boundary and reports up to 20 */
  int nerrors;
} ParseResult;

/* Parses a whole program text (may contain NUL bytes: len is the length).
   Never raises; errors are returned. */
ParseResult fe_parse_program(const char *file, const char *text, size_t len);

/* Parses text as exactly one expression whose first character is at
   line:col of file (used for command arguments such as ":type e").
   Raises FeError on a syntax error. */
Term *fe_parse_expr(const char *file, const char *text, size_t len, int line, int col);

/* For the REPL: true when text is unfinished and more lines should be read
   (an open bracket; the last token is one that cannot end an item: '=',
   'in', 'then', 'else', an operator, ','; or the text's only syntax error
   is that it ends too soon: a let still without its 'in', an if without
   its 'then' or 'else', a def without its '='). */
bool fe_input_incomplete(const char *text, size_t len);

#endif
