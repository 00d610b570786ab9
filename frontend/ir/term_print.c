/* term_print.c: Terms, Defs and items -> Una source text (see term_print.h).
   Target terms of the AD pipeline add two forms that are not Una source:
   a lambda as a value, `fun (y1, y2) -> e`, and an application `k (a, b)`. */
#include "term_print.h"
#include "ptrmap.h"
#include "strbuf.h"
#include "subst.h"
#include <math.h>
#include <stdarg.h>

/* Printing levels, loosest first: the context level a subterm must reach
   to be printed without parentheses. An operator's level is its precedence
   in prims.def (FePrec, which the parser reads too). */
enum {
  L_LET = 0, /* let, if: extend to the right */
  L_OR = PREC_OR, L_AND = PREC_AND, L_CMP = PREC_CMP, L_ADD = PREC_ADD, L_MUL = PREC_MUL,
  L_UNARY = PREC_UNARY, /* -e !e, negative literals */
  L_POW = PREC_POW,     /* e ^ e */
  L_APP,     /* f e1 e2 */
  L_POST,    /* e.1 */
  L_ATOM,
};

typedef struct Buf {
  StrBuf sb;
  int flags;
  const Term *comb_arg; /* the combinator argument about to be printed */
  PtrMap used;          /* FE_PRINT_CHECKS: the variables the body reads */
} Buf;

static void put(Buf *b, const char *s, size_t n) { sb_putn(&b->sb, s, n); }

static void puts_(Buf *b, const char *s) { put(b, s, strlen(s)); }

static void putf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < (int)sizeof tmp) {
    put(b, tmp, (size_t)n);
    return;
  }
  char *big = GC_MALLOC_ATOMIC((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  put(b, big, (size_t)n);
}

static void put_sym(Buf *b, const Sym *x) {
  if (b->flags & FE_PRINT_UNIQUE) putf(b, "%s_%d", x->name, x->id);
  else puts_(b, x->name);
}

/* The i-th bound name of a LET, LETTUP or LAM: its Sym when checked. */
static void put_binder(Buf *b, const Term *t, int i) {
  if (t->kind == T_LET && t->sym) put_sym(b, t->sym);
  else if (t->kind != T_LET && t->nsyms > 0) put_sym(b, t->syms[i]);
  else if (t->kind == T_LET && t->str) puts_(b, t->str);
  else puts_(b, t->names[i]);
}

static int nbinders(const Term *t) {
  if (t->kind == T_LET) return 1;
  return t->nsyms > 0 ? t->nsyms : t->nnames;
}

static void emit(Buf *b, const Term *t, int ctx, bool tail);

/* "let x" or "let (x, y)": the binders of the let or let-tuple t. */
static void put_let_head(Buf *b, const Term *t) {
  puts_(b, "let ");
  if (t->kind == T_LETTUP && t->nsyms == 0 && t->pats && t->pats[0]) { /* a surface pattern */
    emit(b, t->pats[0], L_LET, true);
    return;
  }
  int n = nbinders(t);
  if (t->kind == T_LETTUP) puts_(b, "(");
  for (int i = 0; i < n; i++) {
    if (i) puts_(b, ", ");
    put_binder(b, t, i);
  }
  if (t->kind == T_LETTUP) puts_(b, ")");
}

static bool is_neg_literal(const Term *t) {
  return t->kind == T_NUM && !isnan(t->num) && signbit(t->num);
}

static bool is_binary(const Term *t) {
  return t->kind == T_PRIM && t->nkids == 2 && (fe_prims[t->prim].writ & W_INFIX);
}

static bool is_prefix(const Term *t) {
  return t->kind == T_PRIM && t->nkids == 1 && (fe_prims[t->prim].writ & W_PREFIX);
}

static int binary_level(Prim p) { return (int)fe_prims[p].prec; }

/* The level of t's own text: how loosely it binds. */
static int level_of(const Term *t) {
  switch (t->kind) {
  case T_NUM:
    return is_neg_literal(t) ? L_UNARY : L_ATOM;
  case T_LET: case T_LETTUP: case T_IF: case T_LOOP:
    return L_LET;
  case T_PROJ:
    return L_POST;
  case T_PRIM:
    if (t->prim == PRIM_INDEX || t->prim == PRIM_SLICE) return L_POST;
    if (t->prim == PRIM_LOOP_FOR || t->prim == PRIM_LOOP_WHILE) return L_LET;
    if (is_binary(t)) return binary_level(t->prim);
    if (is_prefix(t)) return L_UNARY;
    return t->nkids > 0 ? L_APP : L_ATOM;
  case T_APPLY: case T_GRAD: case T_CALL:
    return t->nkids > 0 || t->kind == T_GRAD ? L_APP : L_ATOM;
  case T_APP:
    return L_APP;
  case T_LAM: /* a typed lambda as a value: fun (x) -> e extends right */
    return t->type ? L_LET : L_ATOM;
  case T_GRADREF:
    return t->nkids > 0 || t->nnames == 0 ? L_APP : L_ATOM;
  default:
    return L_ATOM;
  }
}

/* True when t's text (unparenthesized) begins with '-'. */
static bool leading_minus(const Term *t) {
  return is_neg_literal(t) || (is_prefix(t) && fe_prims[t->prim].sym[0] == '-');
}


/* The operator of a checked combinator lambda (x, y. x OP y) whose body is
   the builtin +, -, *, /, max or min applied to its two R parameters in
   order (printed as the section (OP)), or -1. */
static int section_of(const Term *t) {
  if (t->nsyms != 2 || !t->syms[0]->type || t->syms[0]->type->kind != TY_REAL || !t->syms[1]->type ||
      t->syms[1]->type->kind != TY_REAL)
    return -1;
  const Term *e = t->kids[0];
  if (e->kind != T_PRIM || e->nkids != 2) return -1;
  if (!(fe_prims[e->prim].writ & W_SECTION)) return -1;
  for (int i = 0; i < 2; i++)
    if (e->kids[i]->kind != T_VAR || e->kids[i]->sym != t->syms[i]) return -1;
  return (int)e->prim;
}

static void emit_args(Buf *b, const Term *t) {
  for (int i = 0; i < t->nkids; i++) {
    puts_(b, " ");
    emit(b, t->kids[i], L_POST, false);
  }
}

/* A builtin's arguments; the function argument of a combinator (a LAM) is
   printed as (x. e), every other LAM as a value. reduce_by_index's
   function is its second argument as written (kids f D v I V). */
static void emit_prim_args(Buf *b, const Term *t) {
  for (int j = 0; j < t->nkids; j++) {
    int i = t->prim == PRIM_REDUCE_BY_INDEX && j < 2 ? 1 - j : j;
    puts_(b, " ");
    if (i == 0 && fe_prims[t->prim].cls == P_ARRAY && t->kids[0]->kind == T_LAM)
      b->comb_arg = t->kids[0];
    emit(b, t->kids[i], L_POST, false);
  }
}

/* a[i], a[i:j], a[i:] */
static void emit_index(Buf *b, const Term *t) {
  emit(b, t->kids[0], L_POST, false);
  puts_(b, "[");
  emit(b, t->kids[1], L_LET, true);
  if (t->prim == PRIM_SLICE) {
    puts_(b, ":");
    const Term *j = t->kids[2];
    if (!(j->kind == T_NUM && j->num == INFINITY)) emit(b, j, L_LET, true);
  }
  puts_(b, "]");
}

/* loop x = e0 for i < n do e;  loop x = e0 while c do e (the condition's
   own parameter printed as the body's) */
static void emit_loop(Buf *b, const Term *t, bool tail) {
  const Term *body = t->kids[0];
  puts_(b, "loop ");
  put_sym(b, body->syms[0]);
  puts_(b, " = ");
  emit(b, t->kids[1], L_LET, true);
  if (t->prim == PRIM_LOOP_FOR) {
    puts_(b, " for ");
    put_sym(b, body->syms[1]);
    puts_(b, " < ");
    emit(b, t->kids[2], L_CMP + 1, true);
  } else {
    const Term *cond = t->kids[2];
    Sym *x = cond->syms[0];
    Term *v = fe_term_var(cond->span, body->syms[0]);
    puts_(b, " while ");
    emit(b, fe_subst(cond->kids[0], 1, &x, &v), L_LET, true);
  }
  puts_(b, " do ");
  emit(b, body->kids[0], L_LET, tail);
}

/* True when the GRAD's wrt list is the default: every non-B parameter, in
   order. */
static bool default_wrt(const Term *t) {
  const Def *d = t->def;
  int k = 0;
  for (int i = 0; i < d->nparams; i++) {
    const Type *ty = d->params[i]->type;
    if (ty && ty->kind == TY_BOOL) continue;
    if (k >= t->nwrt || t->wrt[k] != i) return false;
    k++;
  }
  return k == t->nwrt;
}

/* A left-associative chain a op b op c ... at level lv, printed with a
   loop over its left spine. */
static void emit_chain(Buf *b, const Term *t, int lv, bool tail) {
  int n = 0, cap = 16;
  const Term **spine = NEW_ARRAY(const Term *, cap);
  const Term *u = t;
  while (is_binary(u) && binary_level(u->prim) == lv) {
    if (n == cap) {
      const Term **ns = NEW_ARRAY(const Term *, cap * 2);
      memcpy(ns, spine, sizeof(const Term *) * (size_t)n);
      spine = ns;
      cap *= 2;
    }
    spine[n++] = u;
    u = u->kids[0];
  }
  emit(b, u, lv, false);
  for (int i = n - 1; i >= 0; i--) {
    fe_poll_interrupt(t->span);
    putf(b, " %s ", fe_prims[spine[i]->prim].sym);
    emit(b, spine[i]->kids[1], lv + 1, i == 0 ? tail : false);
  }
}

/* Prints t so that it parses back in a context that needs level ctx; tail
   is true when nothing that could continue t follows it (a closing
   bracket, ',', 'in', 'then', 'else' or the end), so that let and if may
   stay unparenthesized. */
static void emit(Buf *b, const Term *t, int ctx, bool tail) {
  fe_stack_check(t->span);
  bool comb_arg = b->comb_arg == t;
  b->comb_arg = NULL;
  int lv = comb_arg ? L_ATOM : level_of(t);
  bool paren = lv == L_LET ? !tail : lv < ctx;
  if (paren) {
    puts_(b, "(");
    tail = true;
  }
  switch (t->kind) {
  case T_NUM: {
    char buf[40];
    una_format_real(buf, sizeof buf, t->num);
    puts_(b, buf);
    break;
  }
  case T_BOOL:
    puts_(b, t->b ? "true" : "false");
    break;
  case T_STR:
    puts_(b, "\"");
    for (const char *s = t->str; *s; s++) {
      if (*s == '"' || *s == '\\') puts_(b, "\\");
      put(b, s, 1);
    }
    puts_(b, "\"");
    break;
  case T_NAME:
    puts_(b, t->str);
    break;
  case T_VAR:
    put_sym(b, t->sym);
    break;
  case T_GLOBAL:
    puts_(b, t->global->name);
    break;
  case T_LET: case T_LETTUP: {
    put_let_head(b, t);
    puts_(b, " = ");
    emit(b, t->kids[0], L_LET, true);
    puts_(b, " in ");
    emit(b, t->kids[1], L_LET, tail);
    break;
  }
  case T_IF:
    puts_(b, "if ");
    emit(b, t->kids[0], L_LET, true);
    puts_(b, " then ");
    emit(b, t->kids[1], L_LET, true);
    puts_(b, " else ");
    emit(b, t->kids[2], L_LET, tail);
    break;
  case T_TUPLE: case T_ARRAY:
    puts_(b, t->kind == T_TUPLE ? "(" : "[");
    for (int i = 0; i < t->nkids; i++) {
      if (i) puts_(b, ", ");
      emit(b, t->kids[i], L_LET, true);
    }
    puts_(b, t->kind == T_TUPLE ? ")" : "]");
    break;
  case T_PROJ: {
    const Term *e = t->kids[0];
    if (e->kind == T_NUM) { /* 1.1 would read as a number */
      puts_(b, "(");
      emit(b, e, L_LET, true);
      puts_(b, ")");
    } else {
      emit(b, e, L_POST, false);
    }
    putf(b, ".%d", t->index + 1);
    break;
  }
  case T_LAM: {
    int n = nbinders(t);
    bool value = lv == L_LET; /* fun (x, y) -> e; else (x, y. e) */
    int sp = value ? -1 : section_of(t);
    if (sp >= 0) { /* (x, y. x + y) as the section (+), which checks back to it */
      putf(b, "(%s)", fe_prims[sp].sym ? fe_prims[sp].sym : fe_prims[sp].name);
      break;
    }
    puts_(b, value ? "fun (" : "(");
    for (int i = 0; i < n; i++) {
      if (i) puts_(b, ", ");
      if (t->nsyms == 0 && t->pats && t->pats[i]) emit(b, t->pats[i], L_LET, true);
      else put_binder(b, t, i);
    }
    puts_(b, value ? ") -> " : ". ");
    emit(b, t->kids[0], L_LET, value ? tail : true);
    if (!value) puts_(b, ")");
    break;
  }
  case T_LOOP: /* surface */
    puts_(b, "loop ");
    emit(b, t->pats[0], L_LET, true);
    puts_(b, " = ");
    emit(b, t->kids[0], L_LET, true);
    if (t->index == LOOP_FOR) {
      putf(b, " for %s < ", t->names[0]);
      emit(b, t->kids[1], L_CMP + 1, true);
    } else {
      puts_(b, " while ");
      emit(b, t->kids[1], L_LET, true);
    }
    puts_(b, " do ");
    emit(b, t->kids[2], L_LET, tail);
    break;
  case T_ASCRIBE:
    puts_(b, "(");
    emit(b, t->kids[0], L_LET, true);
    putf(b, " : %s)", fe_type_str(t->type));
    break;
  case T_APP:
    emit(b, t->kids[0], L_POST, false);
    puts_(b, " (");
    for (int i = 1; i < t->nkids; i++) {
      if (i > 1) puts_(b, ", ");
      emit(b, t->kids[i], L_LET, true);
    }
    puts_(b, ")");
    break;
  case T_OPREF:
    putf(b, "(%s)", fe_prims[t->prim].sym ? fe_prims[t->prim].sym : fe_prims[t->prim].name);
    break;
  case T_PRIM:
    if (is_binary(t)) {
      int l = binary_level(t->prim);
      if (l == L_POW) {
        emit(b, t->kids[0], L_APP, false);
        putf(b, " %s ", fe_prims[t->prim].sym);
        emit(b, t->kids[1], L_UNARY, tail);
      } else if (l == L_CMP) {
        emit(b, t->kids[0], L_CMP + 1, false);
        putf(b, " %s ", fe_prims[t->prim].sym);
        emit(b, t->kids[1], L_CMP + 1, tail);
      } else {
        emit_chain(b, t, l, tail);
      }
    } else if (t->prim == PRIM_INDEX || t->prim == PRIM_SLICE) {
      emit_index(b, t);
    } else if (t->prim == PRIM_LOOP_FOR || t->prim == PRIM_LOOP_WHILE) {
      emit_loop(b, t, tail);
    } else if (is_prefix(t)) {
      puts_(b, fe_prims[t->prim].sym);
      const Term *e = t->kids[0];
      if (leading_minus(e) && level_of(e) >= L_UNARY) puts_(b, " ");
      emit(b, e, L_UNARY, tail);
    } else {
      puts_(b, fe_prims[t->prim].name);
      emit_prim_args(b, t);
    }
    break;
  case T_APPLY:
    puts_(b, t->str);
    emit_args(b, t);
    break;
  case T_CALL:
    puts_(b, t->def->name);
    emit_args(b, t);
    break;
  case T_GRAD:
    if (default_wrt(t)) {
      putf(b, "grad %s", t->def->name);
    } else {
      putf(b, "(grad %s wrt", t->def->name);
      for (int i = 0; i < t->nwrt; i++) {
        puts_(b, " ");
        const Sym *x = t->def->params[t->wrt[i]];
        puts_(b, x->name); /* wrt names are the def's parameter names */
      }
      puts_(b, ")");
    }
    emit_args(b, t);
    break;
  case T_GRADREF:
    if (t->nnames == 0) {
      putf(b, "grad %s", t->str);
    } else {
      putf(b, "(grad %s wrt", t->str);
      for (int i = 0; i < t->nnames; i++) putf(b, " %s", t->names[i]);
      puts_(b, ")");
    }
    emit_args(b, t);
    break;
  default:
    UNREACHABLE();
  }
  if (paren) puts_(b, ")");
}

char *fe_term_str_opts(const Term *t, int flags) {
  Buf b = {.flags = flags};
  puts_(&b, "");
  emit(&b, t, L_LET, true);
  return sb_str(&b.sb);
}

char *fe_term_str(const Term *t) { return fe_term_str_opts(t, 0); }

void fe_term_print(FILE *out, const Term *t) { fputs(fe_term_str(t), out); }

/* True when t prints as an indented block: a let chain, or an if with a
   block in a branch. */
static bool blocky(const Term *t) {
  for (;;) {
    if (t->kind == T_LET || t->kind == T_LETTUP) return true;
    if (t->kind != T_IF) return false;
    if (blocky(t->kids[1])) return true;
    t = t->kids[2];
  }
}

static void newline(Buf *b, int indent) {
  puts_(b, "\n");
  for (int i = 0; i < indent; i++) puts_(b, " ");
}

/* ---- lets kept for their length checks (FE_PRINT_CHECKS) ---- */

/* Adds the variables t reads to used. */
static void note_uses(PtrMap *used, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_VAR) ptrmap_put(used, t->sym, (void *)t->sym);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) note_uses(used, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

/* True when evaluating t (a lambda's body) cannot raise: variables,
   numbers and pure scalar builtins only. */
static bool plain_scalar(const Term *t) {
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_VAR: case T_NUM: case T_BOOL: return true;
  case T_IF:
    for (int i = 0; i < 3; i++)
      if (!plain_scalar(t->kids[i])) return false;
    return true;
  case T_PRIM:
    if (fe_prims[t->prim].effect != E_PURE || t->type->kind != TY_REAL) return false;
    for (int i = 0; i < t->nkids; i++)
      if (!plain_scalar(t->kids[i])) return false;
    return true;
  default: return false;
  }
}

/* The arrays of the let t when it stands only for its length check: its
   variable is not read, and its right-hand side is a map2 or map3 whose
   function cannot raise, or a zip; NULL otherwise. *n: their count. */
static Term *const *checked_arrays(const Buf *b, const Term *t, int *n) {
  if (!(b->flags & FE_PRINT_CHECKS) || t->kind != T_LET || ptrmap_get(&b->used, t->sym)) return NULL;
  const Term *r = t->kids[0];
  if (r->kind != T_PRIM) return NULL;
  if (r->prim == PRIM_ZIP) {
    *n = r->nkids;
    return r->kids;
  }
  if ((r->prim != PRIM_MAP2 && r->prim != PRIM_MAP3) || r->kids[0]->kind != T_LAM ||
      !plain_scalar(r->kids[0]->kids[0]))
    return NULL;
  *n = r->nkids - 1;
  return r->kids + 1;
}

/* t as lines indented by indent: one let per line (a let whose right-hand
   side is a block gets it indented below, then `in` on its own line), and
   an if with a block in a branch as `if c then`, the branch, `else`, the
   branch. The result re-parses to t: a block only stands where a let body
   or an else branch would extend as far right as possible anyway. */
static void emit_block(Buf *b, const Term *t, int indent) {
  while (t->kind == T_LET || t->kind == T_LETTUP) {
    newline(b, indent);
    int n = 0;
    Term *const *arrays = checked_arrays(b, t, &n);
    if (arrays) {
      puts_(b, "-- checks: ");
      for (int i = 0; i < n; i++) {
        puts_(b, i ? " == length " : "length ");
        emit(b, arrays[i], L_POST, false);
      }
      t = t->kids[1];
      continue;
    }
    put_let_head(b, t);
    if (blocky(t->kids[0])) {
      puts_(b, " =");
      emit_block(b, t->kids[0], indent + 2);
      newline(b, indent);
      puts_(b, "in");
    } else {
      puts_(b, " = ");
      emit(b, t->kids[0], L_LET, true);
      puts_(b, " in");
    }
    t = t->kids[1];
  }
  newline(b, indent);
  if (t->kind == T_IF && blocky(t)) {
    puts_(b, "if ");
    emit(b, t->kids[0], L_LET, true);
    puts_(b, " then");
    emit_block(b, t->kids[1], indent + 2);
    newline(b, indent);
    puts_(b, "else");
    emit_block(b, t->kids[2], indent + 2);
    return;
  }
  emit(b, t, L_LET, true);
}

/* The body of a def: with FE_PRINT_MULTILINE, as an indented block. */
static void emit_body(Buf *b, const Term *body) {
  if (!(b->flags & FE_PRINT_MULTILINE)) {
    puts_(b, " ");
    emit(b, body, L_LET, true);
    return;
  }
  emit_block(b, body, 2);
}

char *fe_def_str_opts(const Def *d, int flags) {
  Buf b = {.flags = flags};
  if (flags & FE_PRINT_CHECKS) {
    ptrmap_init(&b.used, 64);
    note_uses(&b.used, d->body);
  }
  putf(&b, "def %s", d->name);
  for (int i = 0; i < d->nparams; i++) {
    puts_(&b, " (");
    put_sym(&b, d->params[i]);
    putf(&b, ": %s)", fe_type_str(d->params[i]->type));
  }
  if (d->ret) putf(&b, " : %s", fe_type_str(d->ret));
  puts_(&b, " =");
  emit_body(&b, d->body);
  return sb_str(&b.sb);
}

char *fe_def_str(const Def *d) { return fe_def_str_opts(d, 0); }

char *fe_item_str(const Item *it) {
  Buf b = {.flags = 0};
  puts_(&b, "");
  switch (it->kind) {
  case ITEM_DEF:
    putf(&b, "def %s", it->name);
    for (int i = 0; i < it->nparams; i++)
      putf(&b, " (%s: %s)", it->params[i].name, fe_type_str(it->params[i].type));
    if (it->ret) putf(&b, " : %s", fe_type_str(it->ret));
    puts_(&b, " = ");
    emit(&b, it->body, L_LET, true);
    break;
  case ITEM_LET:
    puts_(&b, "let ");
    if (it->tuple_pattern) puts_(&b, "(");
    for (int i = 0; i < it->nnames; i++) {
      if (i) puts_(&b, ", ");
      puts_(&b, it->names[i]);
    }
    if (it->tuple_pattern) puts_(&b, ")");
    puts_(&b, " = ");
    emit(&b, it->body, L_LET, true);
    break;
  case ITEM_EXPR:
    emit(&b, it->body, L_LET, true);
    break;
  case ITEM_CMD:
    putf(&b, ":%s", it->name);
    if (it->arg && *it->arg) putf(&b, " %s", it->arg);
    break;
  }
  return sb_str(&b.sb);
}

/* ---- readable definitions (fe_def_str_readable) ---- */

/* A set of names (open addressing on the text), and for each base name
   given a suffix, the next suffix to try (so that naming k binders x is
   O(k), not O(k^2)). */
typedef struct {
  const char **v;
  int n, cap;
  const char **base;
  int *next;
  int nb, capb;
} Names;

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool names_has(const Names *m, const char *s) {
  if (!m->cap) return false;
  for (size_t h = hash_str(s) & (size_t)(m->cap - 1); m->v[h]; h = (h + 1) & (size_t)(m->cap - 1))
    if (strcmp(m->v[h], s) == 0) return true;
  return false;
}

static void names_add(Names *m, const char *s) {
  if (2 * (m->n + 1) > m->cap) {
    Names o = *m;
    m->cap = o.cap ? o.cap * 2 : 64;
    m->n = 0;
    m->v = NEW_ARRAY(const char *, m->cap);
    for (int i = 0; i < o.cap; i++)
      if (o.v[i]) names_add(m, o.v[i]);
  }
  size_t h = hash_str(s) & (size_t)(m->cap - 1);
  while (m->v[h]) h = (h + 1) & (size_t)(m->cap - 1);
  m->v[h] = s;
  m->n++;
}

/* The slot of base in m's suffix table (grown first when needed). */
static size_t next_slot(Names *m, const char *base) {
  if (2 * (m->nb + 1) > m->capb) {
    Names o = *m;
    m->capb = o.capb ? o.capb * 2 : 64;
    m->nb = 0;
    m->base = NEW_ARRAY(const char *, m->capb);
    m->next = NEW_ARRAY(int, m->capb);
    for (int i = 0; i < o.capb; i++)
      if (o.base[i]) {
        size_t h = next_slot(m, o.base[i]);
        m->base[h] = o.base[i];
        m->next[h] = o.next[i];
        m->nb++;
      }
  }
  size_t h = hash_str(base) & (size_t)(m->capb - 1);
  while (m->base[h] && strcmp(m->base[h], base) != 0) h = (h + 1) & (size_t)(m->capb - 1);
  return h;
}

/* Gives x a name not used so far in the printed Def: its own, else
   NAME_2, NAME_3, ... (the first free one after those given before). */
static void give_name(Names *m, Sym *x) {
  const char *name = x->name;
  if (names_has(m, name)) {
    size_t h = next_slot(m, x->name);
    if (!m->base[h]) {
      m->base[h] = x->name;
      m->next[h] = 2;
      m->nb++;
    }
    int k = m->next[h];
    do name = una_sprintf("%s_%d", x->name, k++);
    while (names_has(m, name));
    m->next[h] = k;
  }
  x->name = name;
  names_add(m, name);
}

static void rename_binders(Names *m, Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_LET) give_name(m, t->sym);
    if (t->kind == T_LETTUP || t->kind == T_LAM)
      for (int i = 0; i < t->nsyms; i++) give_name(m, t->syms[i]);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) rename_binders(m, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

/* Adds the names of the globals and functions t refers to, so that no
   binder is renamed to one of them (it would shadow it in the text). */
static void add_free_names(Names *m, const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_GLOBAL && !names_has(m, t->global->name)) names_add(m, t->global->name);
    if ((t->kind == T_CALL || t->kind == T_GRAD) && !names_has(m, t->def->name))
      names_add(m, t->def->name);
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) add_free_names(m, t->kids[i]);
    t = t->kids[t->nkids - 1];
  }
}

/* The derived Defs that t calls, callees first, each once (seen). */
static void derived_callees(const Term *t, PtrMap *seen, const Def ***v, int *n, int *cap) {
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_CALL && t->def->derived && !ptrmap_get(seen, t->def)) {
      ptrmap_put(seen, t->def, (void *)t->def);
      derived_callees(t->def->body, seen, v, n, cap);
      if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        const Def **w = NEW_ARRAY(const Def *, *cap);
        if (*n) memcpy(w, *v, sizeof(Def *) * (size_t)*n);
        *v = w;
      }
      (*v)[(*n)++] = t->def;
    }
    if (t->nkids == 0) return;
    for (int i = 0; i + 1 < t->nkids; i++) derived_callees(t->kids[i], seen, v, n, cap);
    t = t->kids[t->nkids - 1];
  }
}

char *fe_program_str_readable(const char *name, const Def *d) {
  PtrMap seen;
  ptrmap_init(&seen, 16);
  const Def **v = NULL;
  int n = 0, cap = 0;
  derived_callees(d->body, &seen, &v, &n, &cap);
  StrBuf b = {0};
  for (int i = 0; i < n; i++) {
    sb_put(&b, fe_def_str_readable(v[i]->name, v[i], v[i]->body));
    sb_put(&b, "\n");
  }
  sb_put(&b, fe_def_str_readable(name, d, d->body));
  return sb_str(&b);
}

Term *fe_readable_copy(const Def *like, const Term *body) {
  Term *copy = fe_copy(body);
  Names m = {0};
  for (int i = 0; i < like->nparams; i++)
    if (!names_has(&m, like->params[i]->name)) names_add(&m, like->params[i]->name);
  add_free_names(&m, copy);
  rename_binders(&m, copy);
  return copy;
}

char *fe_def_str_readable(const char *name, const Def *like, const Term *body) {
  Term *copy = fe_readable_copy(like, body);
  Def d = *like;
  d.name = name;
  d.body = copy;
  d.ret = copy->type;
  return fe_def_str_opts(&d, FE_PRINT_MULTILINE | FE_PRINT_CHECKS);
}

