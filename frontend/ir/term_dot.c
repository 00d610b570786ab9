/* term_dot.c: definitions as Graphviz graphs (term_dot.h). */
#include "term_dot.h"

#include <string.h>

#include "common.h"
#include "ptrmap.h"
#include "strbuf.h"
#include "term_print.h"

#define LABEL_MAX 80

/* s as a DOT string's contents: quotes and backslashes escaped, newlines
   as spaces, cut at LABEL_MAX characters (with "..."). */
static void put_label(StrBuf *b, const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n && i < LABEL_MAX; i++) {
    char c = s[i];
    if (c == '"' || c == '\\') sb_printf(b, "\\%c", c);
    else if (c == '\n' || c == '\t') sb_put(b, " ");
    else sb_printf(b, "%c", c);
  }
  if (n > LABEL_MAX) sb_put(b, "...");
}

/* The graph being built: each top-level variable's node. */
typedef struct Dot {
  StrBuf b;
  PtrMap node; /* Sym -> node number + 1 */
} Dot;

/* Edges from the nodes of the variables t reads to node `to` (each once). */
static void edges(Dot *d, const Term *t, int to, PtrMap *seen) {
  fe_stack_check(t->span);
  if (t->kind == T_VAR) {
    intptr_t from = (intptr_t)ptrmap_get(&d->node, t->sym);
    if (from && !ptrmap_get(seen, t->sym)) {
      ptrmap_put(seen, t->sym, (void *)1);
      sb_printf(&d->b, "  n%d -> n%d;\n", (int)from - 1, to);
    }
  }
  for (int i = 0; i < t->nkids; i++) edges(d, t->kids[i], to, seen);
}

static void node(Dot *d, int id, const char *shape, const char *label, const Term *reads) {
  sb_printf(&d->b, "  n%d [shape=%s, label=\"", id, shape);
  put_label(&d->b, label);
  sb_put(&d->b, "\"];\n");
  if (reads) {
    PtrMap seen = {0};
    edges(d, reads, id, &seen);
  }
}

char *fe_def_dot(const char *name, const Def *like, const Term *body) {
  Term *t = fe_readable_copy(like, body);
  Dot d = {0};
  sb_put(&d.b, "digraph \"");
  put_label(&d.b, name);
  sb_put(&d.b, "\" {\n  node [fontname=\"monospace\"];\n");
  int id = 0;
  for (int i = 0; i < like->nparams; i++) {
    node(&d, id, "ellipse", like->params[i]->name, NULL);
    ptrmap_put(&d.node, like->params[i], (void *)(intptr_t)(id + 1));
    id++;
  }
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    char *lhs;
    if (t->kind == T_LET) {
      lhs = una_strdup(t->sym->name);
    } else {
      lhs = una_strdup("(");
      for (int i = 0; i < t->nsyms; i++) lhs = una_sprintf("%s%s%s", lhs, i ? ", " : "", t->syms[i]->name);
      lhs = una_sprintf("%s)", lhs);
    }
    node(&d, id, "box", una_sprintf("%s = %s", lhs, fe_term_str(t->kids[0])), t->kids[0]);
    if (t->kind == T_LET) ptrmap_put(&d.node, t->sym, (void *)(intptr_t)(id + 1));
    else
      for (int i = 0; i < t->nsyms; i++) ptrmap_put(&d.node, t->syms[i], (void *)(intptr_t)(id + 1));
    id++;
    t = t->kids[1];
  }
  node(&d, id, "doubleoctagon", fe_term_str(t), t);
  sb_put(&d.b, "}\n");
  return sb_str(&d.b);
}

char *fe_lines_dot(const char *name, const char *text) {
  StrBuf b = {0};
  sb_put(&b, "digraph \"");
  put_label(&b, name);
  sb_put(&b, "\" {\n  node [shape=box, fontname=\"monospace\"];\n");
  int id = 0;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n > 0) {
      sb_printf(&b, "  n%d [label=\"", id);
      put_label(&b, una_strndup(p, n));
      sb_put(&b, "\"];\n");
      if (id > 0) sb_printf(&b, "  n%d -> n%d;\n", id - 1, id);
      id++;
    }
    p += n + (e != NULL);
  }
  sb_put(&b, "}\n");
  return sb_str(&b);
}
