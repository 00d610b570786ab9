/* term_print.h: Terms, Defs and items printed back as Una source text that
   re-parses to the same tree, with the fewest parentheses the precedence
   table needs. One exception: the negation of a number literal prints as
   "- -1" or "-2", which the parser reads as the literal itself (1, -2),
   the same value. Target terms of the AD pipeline (not Una source, not
   re-parsable) print a lambda value as `fun (y1, y2) -> e` (extending as
   far right as let does) and an application as `k (a, b)`; a combinator's
   function argument stays `(x, y. e)`. */
#ifndef UNA_TERM_PRINT_H
#define UNA_TERM_PRINT_H

#include "item.h"

enum {
  FE_PRINT_UNIQUE = 1,    /* checked variables as NAME_ID (x_12), so that
                             distinct symbols with one name stay distinct */
  FE_PRINT_MULTILINE = 2, /* fe_def_str: the body's leading lets one per
                             line ("  let x = e in"), indented */
  FE_PRINT_CHECKS = 4,    /* with FE_PRINT_MULTILINE: a let kept only for
                             its length check (its variable unused, a map2,
                             map3 or zip whose function cannot raise) is a
                             comment, `-- checks: length a == length b` */
};

/* The source text of t (surface or checked). Raises "expression nested too
   deeply" (fe_stack_check) for trees deeper than the stack allows; long
   left-associative chains (a + b + c ...) are printed with a loop. */
char *fe_term_str(const Term *t);

/* fe_term_str with FE_PRINT_* flags. */
char *fe_term_str_opts(const Term *t, int flags);

/* Writes fe_term_str(t) to out (no newline). */
void fe_term_print(FILE *out, const Term *t);

/* "def f (x: R) (v: [R]) : R = body" for a checked Def (the return type
   only when d->ret is set). */
char *fe_def_str(const Def *d);

/* fe_def_str with FE_PRINT_* flags. */
char *fe_def_str_opts(const Def *d, int flags);

/* "def NAME (params) : T = body" with like's parameters, one let per line,
   every binder renamed to a distinct readable name (its own, else NAME_2,
   NAME_3, ...) that clashes with no parameter, global or function the body
   refers to; body is copied, not changed. The text re-parses when the body
   is a source term. */
char *fe_def_str_readable(const char *name, const Def *like, const Term *body);

/* The copy of body that fe_def_str_readable prints: its binders renamed
   to distinct readable names (for other printers: term_dot.h). */
Term *fe_readable_copy(const Def *like, const Term *body);

/* fe_def_str_readable of d (named name) preceded by the derived Defs it
   calls (Def.derived: vjp_g for a call of g that grad kept, ...), each
   once, callees before their callers: a program that loads back. */
char *fe_program_str_readable(const char *name, const Def *d);

/* A parsed item as source text: "def f (x: R) : R = e", "let x = e",
   "let (a, b) = e", an expression, or ":cmd arg". */
char *fe_item_str(const Item *it);

#endif
