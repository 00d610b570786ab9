/* print.c: Source and Target UNF in the paper's notation, in ASCII:
   var[R,R;1]  cos[R,R]; pair[R,R;RxR]  proj[R;R,R;R]  J^T cos[R,R]
   <e1, e2>  e1 o e2  (see unf.h). */
#include "unf.h"
#include "../frontend/ir/strbuf.h"
#include "../frontend/ir/term_print.h"

static void type_str(StrBuf *b, const Type *t) {
  switch (t->kind) {
  case TY_REAL: sb_put(b, "R"); return;
  case TY_BOOL: sb_put(b, "B"); return;
  case TY_ARRAY:
    sb_put(b, "[");
    type_str(b, t->elem);
    sb_put(b, "]");
    return;
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++) {
      if (i) sb_put(b, "x");
      bool paren = t->elems[i]->kind == TY_TUPLE || t->elems[i]->kind == TY_FUN;
      if (paren) sb_put(b, "(");
      type_str(b, t->elems[i]);
      if (paren) sb_put(b, ")");
    }
    return;
  case TY_FUN: sb_put(b, fe_type_str(t)); return;
  }
  UNREACHABLE();
}

static void ctx_range(StrBuf *b, const UnfCtx *c, int from, int to);

static char *entry_str(const UnfCtx *e) {
  StrBuf b = {0};
  switch (e->kind) {
  case UE_TYPE: type_str(&b, e->type); break;
  case UE_CONT:
    sb_put(&b, "(");
    ctx_range(&b, e->from, 0, unf_ctx_len(e->from));
    sb_put(&b, ")->rho");
    break;
  case UE_LIN:
    sb_put(&b, "(");
    ctx_range(&b, e->from, 0, unf_ctx_len(e->from));
    sb_put(&b, ")-o(");
    ctx_range(&b, e->to, 0, unf_ctx_len(e->to));
    sb_put(&b, ")");
    break;
  }
  return sb_str(&b);
}

/* Entries from..to-1 of c rendered into items[0..to-from). */
static void render(char **items, const UnfCtx *c, int from, int to) {
  const UnfCtx *e = unf_ctx_prefix(c, to);
  for (int i = to - from - 1; i >= 0; i--, e = e->prev) items[i] = entry_str(e);
}

static void put_items(StrBuf *b, char **items, int n);

/* Entries from..to-1 of c, comma-separated, runs of 3 or more equal
   entries as E^k; "[]" when the range is empty. A range longer than
   ELIDE entries prints its first and last ELIDE/2 with "...(N more)..."
   between, so that printing a long program stays linear. */
#define ELIDE 64
static void ctx_range(StrBuf *b, const UnfCtx *c, int from, int to) {
  if (from >= to) {
    sb_put(b, "[]");
    return;
  }
  int n = to - from;
  if (n > ELIDE) {
    int h = ELIDE / 2;
    char **items = NEW_ARRAY(char *, h);
    render(items, c, from, from + h);
    put_items(b, items, h);
    sb_put(b, una_sprintf(",...(%d more)...,", n - 2 * h));
    render(items, c, to - h, to);
    put_items(b, items, h);
    return;
  }
  char **items = NEW_ARRAY(char *, n);
  render(items, c, from, to);
  put_items(b, items, n);
}

static void put_items(StrBuf *b, char **items, int n) {
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && strcmp(items[j], items[i]) == 0) j++;
    if (i) sb_put(b, ",");
    if (j - i >= 3) {
      bool paren = strchr(items[i], ',') != NULL;
      if (paren) sb_put(b, "(");
      sb_put(b, items[i]);
      if (paren) sb_put(b, ")");
      sb_put(b, una_sprintf("^%d", j - i));
    } else {
      for (int k = i; k < j; k++) {
        if (k > i) sb_put(b, ",");
        sb_put(b, items[k]);
      }
    }
    i = j;
  }
}

char *unf_ctx_str(const UnfCtx *c) {
  StrBuf b = {0};
  ctx_range(&b, c, 0, unf_ctx_len(c));
  return sb_str(&b);
}

static void ctx_put(StrBuf *b, const UnfCtx *c) { ctx_range(b, c, 0, unf_ctx_len(c)); }

static void emit(StrBuf *b, const Unf *e, int flags, bool top);

/* A combinator's lambda in source notation: (x, y. e). */
static void lam_str(StrBuf *b, const Term *lam) {
  sb_put(b, "(");
  for (int i = 0; i < lam->nsyms; i++) {
    if (i) sb_put(b, ", ");
    sb_put(b, lam->syms[i]->name);
  }
  sb_put(b, ". ");
  sb_put(b, fe_term_str(lam->kids[0]));
  sb_put(b, ")");
}

/* Opens a primitive's brackets: NAME[CTX, then ';' when more of its
   parameters follow. */
static void open_prim(StrBuf *b, const char *name, const UnfCtx *c, bool more) {
  sb_put(b, name);
  sb_put(b, "[");
  ctx_put(b, c);
  if (more) sb_put(b, ";");
}

static void prim_str(StrBuf *b, const Unf *e) {
  switch (e->kind) {
  case U_VAR:
    open_prim(b, "var", e->in, true);
    sb_put(b, una_sprintf("%d]", e->index + 1));
    return;
  case U_CONST:
    open_prim(b, fe_term_str(e->term), e->in, false);
    sb_put(b, "]");
    return;
  case U_CST:
    open_prim(b, "cst", e->in, true);
    sb_put(b, fe_term_str(e->term));
    sb_put(b, "]");
    return;
  case U_OP:
  case U_NDOP:
  case U_REPLICATE:
    open_prim(b, e->kind == U_REPLICATE ? "replicate" : fe_prims[e->prim].name, e->base, false);
    sb_put(b, "]");
    return;
  case U_PAIR:
    open_prim(b, "pair", e->base, true);
    type_str(b, e->out->type);
    sb_put(b, "]");
    return;
  case U_PROJ: {
    int l1 = unf_ctx_len(e->base);
    open_prim(b, "proj", e->base, true);
    ctx_range(b, e->in, l1, l1 + e->index);
    sb_put(b, ";");
    ctx_range(b, e->in, l1 + e->index, l1 + e->index + e->n);
    sb_put(b, "]");
    return;
  }
  case U_PI:
    open_prim(b, una_sprintf("pi%d", e->index + 1), e->base, true);
    type_str(b, e->in->type);
    sb_put(b, "]");
    return;
  case U_MAP:
  case U_MAP2:
  case U_REDUCE:
  case U_FOLDL:
    open_prim(b, unf_kind_names[e->kind], e->base, true);
    lam_str(b, e->term);
    sb_put(b, "]");
    return;
  case U_PRIM: {
    bool lams = false;
    for (int i = 0; i < e->term->nkids; i++) lams |= e->term->kids[i]->kind == T_LAM;
    open_prim(b, e->term->kind == T_CALL ? e->term->def->name : fe_prims[e->prim].name, e->base, lams);
    bool first = true;
    for (int i = 0; i < e->term->nkids; i++) {
      if (e->term->kids[i]->kind != T_LAM) continue;
      if (!first) sb_put(b, ";");
      first = false;
      lam_str(b, e->term->kids[i]);
    }
    sb_put(b, "]");
    return;
  }
  case U_IF:
    open_prim(b, "if", e->base, true);
    sb_put(b, "then ");
    sb_put(b, fe_term_str(e->term->kids[1]));
    sb_put(b, " else ");
    sb_put(b, fe_term_str(e->term->kids[2]));
    sb_put(b, "]");
    return;
  case U_ARRAY:
    open_prim(b, "array", e->base, true);
    sb_put(b, una_sprintf("%d]", e->n));
    return;
  case U_SAVE:
    open_prim(b, "save", e->base, true);
    sb_put(b, fe_term_str(e->term->kids[0]));
    sb_put(b, "]");
    return;
  default: break;
  }
  UNREACHABLE();
}

/* A sequence inside `o` or J^T is parenthesized; at the top (or in a
   pairing's component) it is not. */
static void emit(StrBuf *b, const Unf *e, int flags, bool top) {
  fe_stack_check(e->span);
  switch (e->kind) {
  case U_SEQ:
    if (!top) sb_put(b, "(");
    for (int i = 0; i < e->nkids; i++) {
      if (i) sb_put(b, (flags & UNF_PRINT_LINES) ? ";\n" : "; ");
      emit(b, e->kids[i], flags & ~UNF_PRINT_LINES, false);
    }
    if (!top) sb_put(b, ")");
    return;
  case U_JT:
    sb_put(b, "J^T ");
    prim_str(b, e->kids[0]);
    return;
  case U_TPAIR:
    sb_put(b, "<");
    emit(b, e->kids[0], 0, true);
    sb_put(b, ", ");
    emit(b, e->kids[1], 0, true);
    sb_put(b, ">");
    return;
  case U_COMP:
    emit(b, e->kids[0], 0, false);
    sb_put(b, " o ");
    emit(b, e->kids[1], 0, false);
    return;
  default: prim_str(b, e); return;
  }
}

char *unf_str_opts(const Unf *e, int flags) {
  StrBuf b = {0};
  emit(&b, e, flags, true);
  return sb_str(&b);
}

char *unf_str(const Unf *e) { return unf_str_opts(e, 0); }
