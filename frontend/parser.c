/* parser.c: recursive-descent parser, tokens -> top-level items and surface
   Terms (see parser.h and LANGUAGE.md sections 3 and 4). */
#include "parser.h"
#include "lexer.h"
#include <math.h>

#define MAX_ERRORS 20

typedef struct Parser {
  const char *file;
  FeToken *toks;
  int ntoks;
  int pos;
  int end;           /* the first token after the current item */
  FeToken sentinel;  /* what cur() returns at end: an EOF at the item's end */
  const char *end_desc; /* "the end of the input" or "the end of the line" */
} Parser;

/* Binary operator precedences (higher binds tighter); prefix operators,
   '^', application and projection are above these. */

/* Restricts the parser to tokens [pos, end) and sets up the sentinel. */
static void set_range(Parser *p, int pos, int end) {
  p->pos = pos;
  p->end = end;
  memset(&p->sentinel, 0, sizeof p->sentinel);
  p->sentinel.kind = TK_EOF;
  p->sentinel.text = fe_tok_kind_text[TK_EOF];
  if (end > 0) {
    const FeToken *last = &p->toks[end - 1];
    p->sentinel.span = fe_span(p->file, last->end_line, last->end_col);
  } else {
    p->sentinel.span = p->toks[end].span;
  }
  p->sentinel.end_line = p->sentinel.span.line;
  p->sentinel.end_col = p->sentinel.span.col;
  p->end_desc = p->toks[end].kind == TK_EOF ? "the end of the input" : "the end of the line";
}

/* The token k places ahead; the sentinel past the end. Never raises. */
static const FeToken *ahead(const Parser *p, int k) {
  int i = p->pos + k;
  return i < p->end ? &p->toks[i] : &p->sentinel;
}

/* The current token; raises the lexer's error when it is an ERROR token. */
static const FeToken *cur(const Parser *p) {
  const FeToken *t = ahead(p, 0);
  if (t->kind == TK_ERROR) fe_raise(*t->err);
  return t;
}

static const char *describe(const Parser *p, const FeToken *t) {
  return t == &p->sentinel ? p->end_desc : fe_tok_describe(t);
}

static const FeToken *next(Parser *p) {
  const FeToken *t = cur(p);
  if (p->pos < p->end) p->pos++;
  return t;
}

/* A hint for a slip from another language that ends at the token t, the
   token before it being prev: `x ** y` (Python's power), `x -> e` (a
   lambda's arrow). "" when none. */
static const char *slip_hint(const FeToken *prev, const FeToken *t) {
  bool touching = prev && prev->end_line == t->span.line && prev->end_col == t->span.col;
  if (!touching) return "";
  if (prev->kind == TK_STAR && t->kind == TK_STAR) return fe_note(prev->span, "a power is written x ^ y, not x ** y");
  if (prev->kind == TK_MINUS && t->kind == TK_GT)
    return fe_note(prev->span, "a lambda is written (x. e) or (x, y. e), not x -> e");
  return "";
}

_Noreturn static void expected(const Parser *p, const char *what) {
  const FeToken *t = cur(p);
  const FeToken *prev = p->pos > 0 ? &p->toks[p->pos - 1] : NULL;
  fe_error(t->span, "expected %s, found %s%s", what, describe(p, t), t == &p->sentinel ? "" : slip_hint(prev, t));
}

/* Consumes a token of kind k or raises "expected WHAT, found ...". */
static const FeToken *expect(Parser *p, FeTokKind k, const char *what) {
  if (cur(p)->kind != k) expected(p, what);
  return next(p);
}

/* Consumes the bracket that closes `open`. */
static void expect_close(Parser *p, FeTokKind k, const FeToken *open) {
  if (cur(p)->kind != k)
    expected(p, una_sprintf("'%s' to close '%s' at %d:%d", fe_tok_kind_text[k],
                            fe_tok_kind_text[open->kind], open->span.line, open->span.col));
  next(p);
}

/* A growable array of terms (GC memory). */
typedef struct TermVec {
  Term **v;
  int n, cap;
} TermVec;

static void tv_push(TermVec *tv, Term *t) {
  if (tv->n == tv->cap) {
    int cap = tv->cap ? tv->cap * 2 : 8;
    Term **nv = NEW_ARRAY(Term *, cap);
    if (tv->n) memcpy(nv, tv->v, sizeof(Term *) * (size_t)tv->n);
    tv->v = nv;
    tv->cap = cap;
  }
  tv->v[tv->n++] = t;
}

/* A growable list of names with their spans. */
typedef struct NameVec {
  const char **v;
  Span *spans;
  int n, cap;
} NameVec;

static void nv_push(NameVec *nv, const FeToken *t) {
  if (nv->n == nv->cap) {
    int cap = nv->cap ? nv->cap * 2 : 4;
    const char **v = NEW_ARRAY(const char *, cap);
    Span *s = NEW_ARRAY(Span, cap);
    if (nv->n) {
      memcpy(v, nv->v, sizeof(const char *) * (size_t)nv->n);
      memcpy(s, nv->spans, sizeof(Span) * (size_t)nv->n);
    }
    nv->v = v;
    nv->spans = s;
    nv->cap = cap;
  }
  nv->v[nv->n] = t->text;
  nv->spans[nv->n] = t->span;
  nv->n++;
}

static Term *prim2(Span s, Prim op, Term *a, Term *b) {
  Term *args[2] = {a, b};
  return fe_term_prim(s, NULL, op, 2, args);
}

/* True when t is an operator token (its text is its kind's fixed text). */
static bool is_op_token(const FeToken *t) {
  return t->kind != TK_STR && strcmp(t->text, fe_tok_kind_text[t->kind]) == 0;
}

/* The infix builtin written as token t, with its precedence (prims.def). */
static bool binop(const FeToken *t, int *prec, Prim *prim) {
  int q = is_op_token(t) ? fe_prim_by_sym(t->text, W_INFIX) : -1;
  if (q < 0) return false;
  *prim = (Prim)q;
  *prec = (int)fe_prims[q].prec;
  return true;
}

static bool starts_atom(FeTokKind k) {
  return k == TK_NUM || k == TK_NAME || k == TK_STR || k == TK_TRUE || k == TK_FALSE ||
         k == TK_LPAREN || k == TK_LBRACK;
}

static Term *parse_expr(Parser *p);
static Term *parse_unary(Parser *p);

/* type -> 'R' | 'B' | '(' type (',' type)* ')' | '[' type ']' */
static const Type *parse_type(Parser *p) {
  const FeToken *t = cur(p);
  fe_stack_check(t->span);
  if (t->kind == TK_NAME && strcmp(t->text, "R") == 0) {
    next(p);
    return fe_ty_real();
  }
  if (t->kind == TK_NAME && strcmp(t->text, "B") == 0) {
    next(p);
    return fe_ty_bool();
  }
  if (t->kind == TK_LBRACK) {
    next(p);
    const Type *e = parse_type(p);
    expect_close(p, TK_RBRACK, t);
    return fe_ty_array(e);
  }
  if (t->kind == TK_LPAREN) {
    next(p);
    int n = 0, cap = 4;
    const Type **elems = NEW_ARRAY(const Type *, cap);
    for (;;) {
      if (n == cap) {
        const Type **ne = NEW_ARRAY(const Type *, cap * 2);
        memcpy(ne, elems, sizeof(const Type *) * (size_t)n);
        elems = ne;
        cap *= 2;
      }
      elems[n++] = parse_type(p);
      if (cur(p)->kind != TK_COMMA) break;
      next(p);
    }
    expect_close(p, TK_RPAREN, t);
    return n == 1 ? elems[0] : fe_ty_tuple(n, elems);
  }
  expected(p, "a type (R, B, (T, T) or [T])");
}

/* The index just after the pattern that starts k tokens ahead
   (p ::= NAME | '(' p (',' p)* ')'), or 0 when none starts there. A scan,
   not recursion, and it gives up past PATTERN_DEPTH nested parentheses,
   so that deeply nested expressions do not cost a scan per level. */
enum { PATTERN_DEPTH = 32 };
static int pattern_end(const Parser *p, int k) {
  int depth = 0;
  bool want_item = true; /* a NAME or '(' must come next */
  for (;; k++) {
    FeTokKind t = ahead(p, k)->kind;
    if (want_item) {
      if (t == TK_NAME) {
        want_item = false;
        if (depth == 0) return k + 1;
      } else if (t == TK_LPAREN) {
        if (++depth > PATTERN_DEPTH) return 0;
      } else {
        return 0;
      }
    } else if (t == TK_COMMA) {
      want_item = true;
    } else if (t == TK_RPAREN) {
      if (--depth == 0) return k + 1;
    } else {
      return 0;
    }
  }
}

/* The number of parameters when the tokens at pos start a lambda:
   '(' p (',' p)* '.' where the '.' is not immediately followed by a digit
   (that would be a projection: (x.1), ((x, y).1)); else 0. */
static int lambda_params(const Parser *p) {
  int k = 1, n = 0;
  for (;;) {
    k = pattern_end(p, k);
    if (!k) return 0;
    n++;
    const FeToken *t = ahead(p, k);
    if (t->kind == TK_DOT) {
      const FeToken *d = ahead(p, k + 1);
      if (d->kind == TK_NUM && d->span.line == t->span.line && d->span.col == t->span.col + 1)
        return 0;
      return n;
    }
    if (t->kind != TK_COMMA) return 0;
    k++;
  }
}

/* pattern -> NAME | '(' pattern (',' pattern)* ')'    ((p) is p) */
static Term *parse_pattern(Parser *p, const char *what) {
  const FeToken *t = cur(p);
  fe_stack_check(t->span);
  if (t->kind == TK_NAME) {
    next(p);
    Term *e = fe_term_new(T_NAME, t->span, NULL);
    e->str = t->text;
    return e;
  }
  if (t->kind != TK_LPAREN) expected(p, what);
  next(p);
  TermVec elems = {0};
  for (;;) {
    tv_push(&elems, parse_pattern(p, "a name or a tuple pattern"));
    if (cur(p)->kind != TK_COMMA) break;
    next(p);
  }
  expect_close(p, TK_RPAREN, t);
  if (elems.n == 1) return elems.v[0];
  return fe_term_kids(t->span, T_TUPLE, NULL, elems.n, elems.v);
}

/* The builtin of a section '(' OP ')' (an operator or a name that
   prims.def marks W_SECTION), or -1. */
static int section_prim(const Parser *p) {
  if (ahead(p, 2)->kind != TK_RPAREN) return -1;
  const FeToken *t = ahead(p, 1);
  if (t->kind == TK_NAME) return fe_prim_section(t->text, true);
  return is_op_token(t) ? fe_prim_section(t->text, false) : -1;
}

/* atom -> NUM | NAME | STR | 'true' | 'false'
         | '(' OP ')'          section: + - * / max min (W_SECTION in prims.def)
         | '(' NAME (',' NAME)* '.' expr ')'                      lambda
         | '(' 'grad' NAME 'wrt' NAME+ ')'                        gradient
         | '(' expr (',' expr)* ')'                               parens, tuple
         | '[' (expr (',' expr)*)? ']'                            array */
static Term *parse_deriv_head(Parser *p);

/* Whether k is a derivative operator: a grad, vjp or jvp token, or the
   name value_and_grad (which the checker takes as the operator where the
   script binds no such name; with wrt after it, it can only be that). */
static bool is_deriv_op(const FeToken *k) {
  return k->kind == TK_GRAD || (k->kind == TK_NAME && strcmp(k->text, "value_and_grad") == 0);
}
static void parse_args(Parser *p, Term *head);

static Term *parse_atom(Parser *p) {
  const FeToken *t = cur(p);
  fe_stack_check(t->span);
  switch (t->kind) {
  case TK_NUM: {
    next(p);
    Term *e = fe_term_num(t->span, t->num);
    e->type = NULL;
    return e;
  }
  case TK_NAME: {
    next(p);
    Term *e = fe_term_new(T_NAME, t->span, NULL);
    e->str = t->text;
    return e;
  }
  case TK_STR: {
    next(p);
    Term *e = fe_term_new(T_STR, t->span, NULL);
    e->str = t->text;
    return e;
  }
  case TK_TRUE: case TK_FALSE: {
    next(p);
    Term *e = fe_term_bool(t->span, t->kind == TK_TRUE);
    e->type = NULL;
    return e;
  }
  case TK_LBRACK: {
    next(p);
    TermVec elems = {0};
    if (cur(p)->kind != TK_RBRACK) {
      for (;;) {
        tv_push(&elems, parse_expr(p));
        if (cur(p)->kind != TK_COMMA) break;
        next(p);
      }
    }
    expect_close(p, TK_RBRACK, t);
    return fe_term_kids(t->span, T_ARRAY, NULL, elems.n, elems.v);
  }
  case TK_LPAREN: {
    int sp = section_prim(p);
    if (sp >= 0) {
      p->pos += 3;
      Term *e = fe_term_new(T_OPREF, t->span, NULL);
      e->prim = (Prim)sp;
      return e;
    }
    int nl = lambda_params(p);
    if (nl > 0) {
      next(p);
      const char **names = NEW_ARRAY(const char *, nl);
      Span *spans = NEW_ARRAY(Span, nl);
      Term **pats = NEW_ARRAY(Term *, nl);
      bool any = false;
      for (int i = 0; i < nl; i++) {
        Term *q = parse_pattern(p, "a lambda parameter");
        spans[i] = q->span;
        if (q->kind == T_NAME) names[i] = q->str;
        else pats[i] = q, any = true;
        next(p); /* ',' or '.' */
      }
      Term *body = parse_expr(p);
      expect_close(p, TK_RPAREN, t);
      Term *e = fe_term_kids(t->span, T_LAM, NULL, 1, &body);
      e->names = names;
      e->name_spans = spans;
      e->nnames = nl;
      if (any) e->pats = pats;
      return e;
    }
    if (is_deriv_op(ahead(p, 1))) { /* (OP F wrt x ...); else a parenthesized expression */
      int saved = p->pos;
      next(p);
      Term *e = parse_deriv_head(p);
      if (cur(p)->kind == TK_WRT) {
        next(p);
        NameVec names = {0};
        if (cur(p)->kind != TK_NAME) expected(p, "a parameter name after 'wrt'");
        while (cur(p)->kind == TK_NAME) nv_push(&names, next(p));
        e->names = names.v;
        e->name_spans = names.spans;
        e->nnames = names.n;
        fe_term_set_kids(e, 0, NULL);
        expect_close(p, TK_RPAREN, t);
        return e;
      }
      p->pos = saved;
    }
    next(p);
    Term *first = parse_expr(p);
    if (cur(p)->kind == TK_COLON) { /* (e : T) */
      next(p);
      Term *e = fe_term_kids(t->span, T_ASCRIBE, NULL, 1, &first);
      e->type = parse_type(p);
      expect_close(p, TK_RPAREN, t);
      return e;
    }
    if (cur(p)->kind != TK_COMMA) {
      expect_close(p, TK_RPAREN, t);
      return first;
    }
    TermVec elems = {0};
    tv_push(&elems, first);
    while (cur(p)->kind == TK_COMMA) {
      next(p);
      tv_push(&elems, parse_expr(p));
      if (cur(p)->kind == TK_COLON)
        fe_error(cur(p)->span, "a type ascription needs its own parentheses: "
                               "write (a, (b : T)) or ((a, b) : T)");
    }
    expect_close(p, TK_RPAREN, t);
    return fe_term_kids(t->span, T_TUPLE, NULL, elems.n, elems.v);
  }
  default:
    expected(p, "an expression");
  }
}

/* True when token t starts right where the token before it ends: the
   '[' of an index (Futhark's rule: a[i] indexes, a [i] applies). */
static bool glued(const Parser *p, const FeToken *t) {
  if (p->pos == 0 || t != &p->toks[p->pos]) return false;
  const FeToken *b = &p->toks[p->pos - 1];
  return b->end_line == t->span.line && b->end_col == t->span.col;
}

/* The tokens ahead: a '[' glued to the token at pos + k - 1. */
static bool glued_bracket(const Parser *p, int k) {
  const FeToken *b = ahead(p, k - 1), *t = ahead(p, k);
  return t->kind == TK_LBRACK && b->end_line == t->span.line && b->end_col == t->span.col;
}

/* A NUM term at s that the parser made (a slice's omitted bound). */
static Term *bound_num(Span s, double v) {
  Term *e = fe_term_num(s, v);
  e->type = NULL;
  return e;
}

/* index -> '[' expr (',' expr)* ']' | '[' expr? ':' expr? ']'   after e,
   at the '[' (a slice's omitted end is inf: to the end) */
static Term *parse_index(Parser *p, Term *e) {
  const FeToken *open = next(p);
  Span s = open->span;
  Term *lo = NULL;
  if (cur(p)->kind != TK_COLON) lo = parse_expr(p);
  if (cur(p)->kind == TK_COLON) {
    next(p);
    Term *hi = cur(p)->kind == TK_RBRACK ? bound_num(s, INFINITY) : parse_expr(p);
    if (cur(p)->kind == TK_COMMA)
      fe_error(cur(p)->span, "a slice cannot be combined with other indices; "
                             "write a[i:j] and index its rows: map (r. r[k]) a[i:j]");
    expect_close(p, TK_RBRACK, open);
    Term *k[3] = {e, lo ? lo : bound_num(s, 0), hi};
    return fe_term_prim(s, NULL, PRIM_SLICE, 3, k);
  }
  for (;;) {
    Term *k[2] = {e, lo};
    e = fe_term_prim(s, NULL, PRIM_INDEX, 2, k);
    if (cur(p)->kind != TK_COMMA) break;
    next(p);
    lo = parse_expr(p);
    if (cur(p)->kind == TK_COLON)
      fe_error(cur(p)->span, "a slice cannot be combined with other indices; "
                             "write a[i:j] and index its rows: map (r. r[k]) a[i:j]");
  }
  expect_close(p, TK_RBRACK, open);
  return e;
}

/* postfix -> atom ('.' NUM | index)*   (a projection's span is its '.',
   an index's its '['; an index's '[' is glued to what it follows) */
static Term *parse_postfix(Parser *p) {
  Term *e = parse_atom(p);
  for (;;) {
    if (cur(p)->kind == TK_LBRACK && glued(p, cur(p))) {
      e = parse_index(p, e);
      continue;
    }
    if (cur(p)->kind != TK_DOT) break;
    Span s = next(p)->span;
    const FeToken *n = cur(p);
    if (n->kind != TK_NUM || strspn(n->text, "0123456789") != strlen(n->text))
      expected(p, "a component number after '.'");
    if (n->num < 1) fe_error(n->span, "tuple components are numbered from 1");
    if (n->num > 1000000) fe_error(n->span, "tuple component number %s is too large", n->text);
    next(p);
    Term *pr = fe_term_kids(s, T_PROJ, NULL, 1, &e);
    pr->index = (int)n->num - 1;
    e = pr;
  }
  return e;
}

/* deriv -> OP F, OP one of grad vjp jvp value_and_grad, F a function
   name, a lambda in parentheses or a derivative in parentheses: a
   GRADREF without arguments (the caller adds wrt and arguments). */
static Term *parse_deriv_head(Parser *p) {
  const FeToken *op = next(p);
  Term *e = fe_term_new(T_GRADREF, op->span, NULL);
  e->index = DOP_GRAD;
  for (int i = 0; i < 4; i++)
    if (op->text && strcmp(op->text, fe_deriv_op_names[i]) == 0) e->index = i;
  const FeToken *f = cur(p);
  if (f->kind == TK_NAME) {
    next(p);
    e->str = f->text;
    e->str_span = f->span;
  } else if (f->kind == TK_LPAREN) {
    Term *fn = parse_atom(p);
    if (fn->kind != T_LAM && !(fn->kind == T_GRADREF && fn->nkids == 0))
      fe_error(fn->span, "%s needs a function: a name, a lambda (x. e) or a derivative such as (grad f)",
               fe_deriv_op_names[e->index]);
    e->fn = fn;
  } else {
    expected(p, una_sprintf("a function name after '%s' (or a lambda (x. e), or (grad f))",
                            fe_deriv_op_names[e->index]));
  }
  fe_term_set_kids(e, 0, NULL);
  return e;
}

/* args -> postfix*   (each starting with an atom's first token) */
static void parse_args(Parser *p, Term *head) {
  TermVec args = {0};
  while (starts_atom(cur(p)->kind)) tv_push(&args, parse_postfix(p));
  fe_term_set_kids(head, args.n, args.v);
}

/* app -> NAME args                              (a NAME alone is T_NAME)
        | 'grad' NAME args
        | '(' 'grad' NAME ('wrt' NAME+)? ')' args
        | postfix */
static Term *parse_app(Parser *p) {
  const FeToken *t = cur(p);
  if (t->kind == TK_NAME && ahead(p, 1)->kind != TK_DOT && !glued_bracket(p, 1)) {
    next(p);
    if (!starts_atom(cur(p)->kind)) {
      Term *e = fe_term_new(T_NAME, t->span, NULL);
      e->str = t->text;
      return e;
    }
    Term *e = fe_term_new(T_APPLY, t->span, NULL);
    e->str = t->text;
    parse_args(p, e);
    return e;
  }
  if (t->kind == TK_GRAD) {
    Term *e = parse_deriv_head(p);
    if (cur(p)->kind == TK_WRT)
      fe_error(cur(p)->span, "'wrt' needs parentheses: (%s %s wrt x y) args", fe_deriv_op_names[e->index],
               e->str ? e->str : "f");
    parse_args(p, e);
    return e;
  }
  if (t->kind == TK_LPAREN && is_deriv_op(ahead(p, 1))) {
    Term *g = parse_postfix(p);
    if (g->kind == T_GRADREF && g->nkids == 0) parse_args(p, g);
    return g;
  }
  return parse_postfix(p);
}

/* power -> app (POWOP unary)?     (right-associative through unary; POWOP
   the infix builtin of precedence PREC_POW: '^') */
static Term *parse_power(Parser *p) {
  Term *base = parse_app(p);
  int prec;
  Prim prim;
  if (!binop(cur(p), &prec, &prim) || prec != PREC_POW) return base;
  const FeToken *op = next(p);
  Term *expo = parse_unary(p);
  return prim2(op->span, prim, base, expo);
}

/* Appends the names of pattern q to names, left to right. */
static void pattern_leaves(const Term *q, NameVec *names) {
  if (q->kind == T_NAME) {
    FeToken t = {.text = q->str, .span = q->span};
    nv_push(names, &t);
    return;
  }
  for (int i = 0; i < q->nkids; i++) pattern_leaves(q->kids[i], names);
}

/* let -> 'let' pattern '=' expr
   (the head of both the let expression and the top-level let; *pat is the
   pattern, names its names left to right) */
static Term *parse_let_head(Parser *p, NameVec *names, Term **pat) {
  next(p); /* 'let' */
  *pat = parse_pattern(p, "a name or a tuple pattern after 'let'");
  pattern_leaves(*pat, names);
  if (cur(p)->kind != TK_EQ)
    expected(p, una_sprintf("'=' after 'let %s%s'", (*pat)->kind == T_TUPLE ? "(" : "",
                            (*pat)->kind == T_TUPLE ? una_sprintf("%s, ...)", names->v[0]) : names->v[0]));
  next(p);
  return parse_expr(p);
}

/* Builds the let expression from its parts: LET for a name, else LETTUP
   (names: the pattern's top-level components, NULL where one is itself a
   tuple pattern). */
static Term *make_let(Span s, Term *pat, Term *rhs, Term *body) {
  Term *kids[2] = {rhs, body};
  bool tuple = pat->kind == T_TUPLE;
  Term *e = fe_term_kids(s, tuple ? T_LETTUP : T_LET, NULL, 2, kids);
  if (!tuple) {
    e->str = pat->str;
    e->names = NEW_ARRAY(const char *, 1);
    e->names[0] = pat->str;
    e->name_spans = NEW_ARRAY(Span, 1);
    e->name_spans[0] = pat->span;
    e->nnames = 1;
    return e;
  }
  e->nnames = pat->nkids;
  e->names = NEW_ARRAY(const char *, pat->nkids);
  e->name_spans = NEW_ARRAY(Span, pat->nkids);
  for (int i = 0; i < pat->nkids; i++) {
    e->names[i] = pat->kids[i]->kind == T_NAME ? pat->kids[i]->str : NULL;
    e->name_spans[i] = pat->kids[i]->span;
  }
  e->pats = NEW_ARRAY(Term *, 1);
  e->pats[0] = pat;
  return e;
}

/* letexpr -> let 'in' expr */
static Term *parse_let(Parser *p) {
  const FeToken *t = cur(p);
  NameVec names = {0};
  Term *pat;
  Term *rhs = parse_let_head(p, &names, &pat);
  if (cur(p)->kind != TK_IN)
    expected(p, una_sprintf(pat->kind == T_TUPLE ? "'in' after 'let (%s, ...) = ...'" : "'in' after 'let %s = ...'",
                            names.v[0]));
  next(p);
  Term *body = parse_expr(p);
  return make_let(t->span, pat, rhs, body);
}

/* loop -> 'loop' pattern '=' expr 'for' NAME '<' expr 'do' expr
         | 'loop' pattern '=' expr 'while' expr 'do' expr
   (surface LOOP: pats[0] the pattern; names[0] the index, for only) */
static Term *parse_loop(Parser *p) {
  const FeToken *t = next(p);
  Term *pat = parse_pattern(p, "a name or a tuple pattern after 'loop'");
  if (cur(p)->kind != TK_EQ) expected(p, "'=' and the initial value of the loop");
  next(p);
  Term *k[3];
  k[0] = parse_expr(p);
  Term *e = fe_term_new(T_LOOP, t->span, NULL);
  if (cur(p)->kind == TK_FOR) {
    const FeToken *f = next(p);
    const FeToken *i = expect(p, TK_NAME, "the loop index name after 'for'");
    if (cur(p)->kind != TK_LT) expected(p, una_sprintf("'<' after 'for %s'", i->text));
    next(p);
    k[1] = parse_expr(p);
    e->index = LOOP_FOR;
    e->str_span = f->span;
    e->names = NEW_ARRAY(const char *, 1);
    e->names[0] = i->text;
    e->name_spans = NEW_ARRAY(Span, 1);
    e->name_spans[0] = i->span;
    e->nnames = 1;
  } else if (cur(p)->kind == TK_WHILE) {
    const FeToken *w = next(p);
    k[1] = parse_expr(p);
    e->index = LOOP_WHILE;
    e->str_span = w->span;
  } else {
    expected(p, "'for' or 'while' after the loop's initial value");
  }
  if (cur(p)->kind != TK_DO)
    expected(p, una_sprintf("'do' of 'loop' at %d:%d", t->span.line, t->span.col));
  next(p);
  k[2] = parse_expr(p);
  fe_term_set_kids(e, 3, k);
  e->pats = NEW_ARRAY(Term *, 1);
  e->pats[0] = pat;
  return e;
}

/* if -> 'if' expr 'then' expr 'else' expr */
static Term *parse_if(Parser *p) {
  const FeToken *t = next(p);
  Term *kids[3];
  kids[0] = parse_expr(p);
  if (cur(p)->kind != TK_THEN)
    expected(p, una_sprintf("'then' after the condition of 'if' at %d:%d", t->span.line,
                            t->span.col));
  next(p);
  kids[1] = parse_expr(p);
  if (cur(p)->kind != TK_ELSE)
    expected(p, una_sprintf("'else' of 'if' at %d:%d", t->span.line, t->span.col));
  next(p);
  kids[2] = parse_expr(p);
  return fe_term_kids(t->span, T_IF, NULL, 3, kids);
}

/* unary -> '-' unary | '!' unary | letexpr | if | loop | power
   (a '-' applied to a number literal gives a negative literal) */
static Term *parse_unary(Parser *p) {
  const FeToken *t = cur(p);
  fe_stack_check(t->span);
  int q = is_op_token(t) ? fe_prim_by_sym(t->text, W_PREFIX) : -1;
  if (q >= 0) { /* a prefix builtin: - ! */
    next(p);
    Term *e = parse_unary(p);
    if (q == PRIM_NEG && e->kind == T_NUM) {
      Term *n = fe_term_num(t->span, -e->num);
      n->type = NULL;
      return n;
    }
    return fe_term_prim(t->span, NULL, (Prim)q, 1, &e);
  }
  switch (t->kind) {
  case TK_LET:
    return parse_let(p);
  case TK_IF:
    return parse_if(p);
  case TK_LOOP:
    return parse_loop(p);
  default:
    return parse_power(p);
  }
}

/* binary(min) -> unary (BINOP binary(prec(BINOP) + 1))*   for prec >= min
   with  || < && < (== != < <= > >=) < (+ -) < (* /);  comparisons do not
   chain, the others associate to the left (a loop, not recursion). */
static Term *parse_binary(Parser *p, int min) {
  fe_stack_check(cur(p)->span);
  Term *lhs = parse_unary(p);
  for (;;) {
    const FeToken *op = cur(p);
    int prec;
    Prim prim;
    if (!binop(op, &prec, &prim) || prec < min || prec > PREC_MUL) return lhs;
    next(p);
    Term *rhs = parse_binary(p, prec + 1);
    if (prec == PREC_CMP) {
      int p2;
      Prim q;
      if (binop(cur(p), &p2, &q) && p2 == PREC_CMP)
        fe_error(cur(p)->span, "comparison operators do not chain; add parentheses");
    }
    lhs = prim2(op->span, prim, lhs, rhs);
  }
}

/* expr -> binary(||)     (let and if are reached through unary) */
static Term *parse_expr(Parser *p) { return parse_binary(p, PREC_OR); }

/* param -> '(' NAME ':' type ')' */
static void parse_param(Parser *p, Param *out) {
  const FeToken *open = next(p);
  const FeToken *x = expect(p, TK_NAME, "a parameter name");
  if (cur(p)->kind != TK_COLON)
    expected(p, una_sprintf("':' and the type of parameter '%s'", x->text));
  next(p);
  out->name = x->text;
  out->span = x->span;
  out->type = parse_type(p);
  expect_close(p, TK_RPAREN, open);
}

/* item -> 'def' NAME param* (':' type)? '=' expr
         | let                       a global (ITEM_LET)
         | let 'in' expr             an expression
         | CMD
         | expr */
static Item *parse_item(Parser *p) {
  const FeToken *t = cur(p);
  Item *it = NEW(Item);
  it->span = t->span;
  switch (t->kind) {
  case TK_CMD:
    next(p);
    it->kind = ITEM_CMD;
    it->name = t->text;
    it->name_span = t->span;
    it->arg = t->arg;
    it->arg_span = t->arg_span;
    return it;
  case TK_DEF: {
    next(p);
    const FeToken *f = expect(p, TK_NAME, "a function name after 'def'");
    it->kind = ITEM_DEF;
    it->name = f->text;
    it->name_span = f->span;
    int cap = 4;
    it->params = NEW_ARRAY(Param, cap);
    while (cur(p)->kind == TK_LPAREN) {
      if (it->nparams == cap) {
        Param *np = NEW_ARRAY(Param, cap * 2);
        memcpy(np, it->params, sizeof(Param) * (size_t)it->nparams);
        it->params = np;
        cap *= 2;
      }
      parse_param(p, &it->params[it->nparams++]);
    }
    if (cur(p)->kind == TK_COLON) {
      next(p);
      it->ret = parse_type(p);
    }
    if (cur(p)->kind != TK_EQ)
      expected(p, una_sprintf("'=' after the parameters of '%s'", f->text));
    next(p);
    it->body = parse_expr(p);
    return it;
  }
  case TK_LET: {
    NameVec names = {0};
    Term *pat;
    Term *rhs = parse_let_head(p, &names, &pat);
    bool tuple = pat->kind == T_TUPLE;
    if (cur(p)->kind == TK_IN) {
      next(p);
      Term *body = parse_expr(p);
      it->kind = ITEM_EXPR;
      it->body = make_let(t->span, pat, rhs, body);
      return it;
    }
    it->pat = pat;
    it->kind = ITEM_LET;
    it->names = names.v;
    it->name_spans = names.spans;
    it->nnames = names.n;
    it->name = names.v[0];
    it->name_span = names.spans[0];
    it->tuple_pattern = tuple;
    it->body = rhs;
    return it;
  }
  default:
    it->kind = ITEM_EXPR;
    it->body = parse_expr(p);
    return it;
  }
}

/* Raises unless every token of the range has been consumed. */
static void expect_end(Parser *p) {
  if (p->pos < p->end) expected(p, "an operator or the end of the line");
}

/* Parses the item in [pos, end); false with *err on a syntax error. */
static bool parse_one(Parser *p, Item **out, FeError *err) {
  FeTry t;
  if (fe_try(&t)) {
    Item *it = parse_item(p);
    expect_end(p);
    fe_untry(&t);
    *out = it;
    return true;
  }
  *err = t.err;
  return false;
}

ParseResult fe_parse_program(const char *file, const char *text, size_t len) {
  ParseResult r;
  memset(&r, 0, sizeof r);
  FeLexResult lx = fe_lex(file, text, len, 1, 1);
  Parser p;
  memset(&p, 0, sizeof p);
  p.file = file;
  p.toks = lx.toks;
  p.ntoks = lx.ntoks;
  int icap = 0;
  r.errors = NEW_ARRAY(FeError, MAX_ERRORS);
  int i = 0;
  while (lx.toks[i].kind != TK_EOF && r.nerrors < MAX_ERRORS) {
    int end = i + 1;
    while (!lx.toks[end].starts_item) end++;
    set_range(&p, i, end);
    Item *it;
    FeError err;
    if (parse_one(&p, &it, &err)) {
      if (r.nitems == icap) {
        icap = icap ? icap * 2 : 16;
        Item **ni = NEW_ARRAY(Item *, icap);
        if (r.nitems) memcpy(ni, r.items, sizeof(Item *) * (size_t)r.nitems);
        r.items = ni;
      }
      r.items[r.nitems++] = it;
    } else {
      r.errors[r.nerrors++] = err;
    }
    i = end;
  }
  return r;
}

/* The expression in [pos, end) or a raised error. */
static Term *parse_whole_expr(Parser *p) {
  Term *e = parse_expr(p);
  expect_end(p);
  return e;
}

Term *fe_parse_expr(const char *file, const char *text, size_t len, int line, int col) {
  FeLexResult lx = fe_lex(file, text, len, line, col);
  Parser p;
  memset(&p, 0, sizeof p);
  p.file = file;
  p.toks = lx.toks;
  p.ntoks = lx.ntoks;
  set_range(&p, 0, lx.ntoks - 1);
  return parse_whole_expr(&p);
}

bool fe_input_incomplete(const char *text, size_t len) {
  FeLexResult lx = fe_lex("<input>", text, len, 1, 1);
  if (lx.nerrors > 0) return false; /* report it now */
  if (lx.depth > 0) return true;
  if (lx.ntoks < 2) return false;
  if (!fe_tok_can_end(lx.toks[lx.ntoks - 2].kind)) return true;
  /* the last item stops short: its first error is at the end of the input
     (a let whose `in` is still to come, an if without its else) */
  ParseResult r = fe_parse_program("<input>", text, len);
  if (r.nerrors == 0) return false;
  const FeToken *last = &lx.toks[lx.ntoks - 2];
  Span e = r.errors[0].span;
  return r.nerrors == 1 && e.line == last->end_line && e.col == last->end_col;
}
