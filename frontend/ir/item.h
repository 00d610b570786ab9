/* item.h: a parsed top-level item (def, let, expression or command) with
   surface Terms inside: what the parser produces and the printer prints
   back. */
#ifndef UNA_ITEM_H
#define UNA_ITEM_H

#include "term.h"

typedef enum { ITEM_DEF, ITEM_LET, ITEM_EXPR, ITEM_CMD } ItemKind;

typedef struct Param {
  const char *name;
  const Type *type;
  Span span;
} Param;

typedef struct Item {
  ItemKind kind;
  Span span; /* the first token of the item */
  /* DEF: name, params/nparams, ret (NULL when omitted), body.
     LET: names/nnames (one name, or a tuple pattern when tuple_pattern),
          body = the right-hand side.
     EXPR: body.
     CMD: name = command word without ':' ("type"), arg = the rest of the
          line with surrounding blanks removed, arg_span = where arg starts. */
  const char *name;
  Span name_span;
  Param *params;
  int nparams;
  const Type *ret;
  const char **names;
  Span *name_spans;
  int nnames;
  bool tuple_pattern;
  Term *pat; /* LET: the pattern (a NAME, or a TUPLE of patterns, maybe
                nested; names are its names left to right) */
  Term *body;
  const char *arg;
  Span arg_span;
} Item;

#endif
