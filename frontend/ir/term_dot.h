/* term_dot.h: a definition as a Graphviz graph (`:show STAGE f --dot`,
   `:grad f --dot`): its parameters and the lets of its body as nodes, data
   flow as edges, so that a gradient program can be looked at rather than
   read. */
#ifndef UNA_TERM_DOT_H
#define UNA_TERM_DOT_H

#include "term.h"

/* The DOT text of "def NAME" with like's parameters and body: one node
   per parameter (an ellipse), one per let of the body's top-level chain
   (a box "x = rhs", the right-hand side printed as fe_term_str prints it,
   cut at 80 characters) and one for the result; an edge from the node
   of each variable to every node whose term reads it. The names are
   fe_def_str_readable's, so the graph matches the printed program. */
char *fe_def_dot(const char *name, const Def *like, const Term *body);

/* The DOT text of a program printed as UNF (`:show unf f --dot`): one
   node per line of text (a primitive), in sequence. */
char *fe_lines_dot(const char *name, const char *text);

#endif
