/* lexer.c: Una source text -> tokens (see lexer.h). */
#include "lexer.h"

const char *const fe_tok_kind_text[TK__COUNT] = {
#define FE_TOK_TEXT(id, text) text,
    FE_TOKENS(FE_TOK_TEXT)
#undef FE_TOK_TEXT
};

static const struct {
  const char *word;
  FeTokKind kind;
} keywords[] = {
    {"def", TK_DEF},   {"let", TK_LET},   {"in", TK_IN},         {"if", TK_IF},
    {"then", TK_THEN}, {"else", TK_ELSE}, {"true", TK_TRUE},     {"false", TK_FALSE},
    {"grad", TK_GRAD}, {"wrt", TK_WRT},   {"loop", TK_LOOP},     {"for", TK_FOR},
    {"while", TK_WHILE}, {"do", TK_DO},
    /* the derivative operators: one token, told apart by its text
       (value_and_grad is a name: the checker takes it as the operator
       where the script binds no such name, parser.c and check.c) */
    {"vjp", TK_GRAD}, {"jvp", TK_GRAD},
};

bool fe_tok_can_end(FeTokKind k) {
  switch (k) {
  case TK_NUM: case TK_NAME: case TK_STR: case TK_TRUE: case TK_FALSE:
  case TK_RPAREN: case TK_RBRACK: case TK_CMD: case TK_ERROR:
    return true;
  default:
    return false;
  }
}

bool fe_tok_can_begin(FeTokKind k) {
  switch (k) {
  case TK_NUM: case TK_NAME: case TK_STR: case TK_TRUE: case TK_FALSE:
  case TK_LPAREN: case TK_LBRACK: case TK_MINUS: case TK_BANG: case TK_LET:
  case TK_IF: case TK_DEF: case TK_GRAD: case TK_LOOP: case TK_CMD: case TK_ERROR:
    return true;
  default:
    return false;
  }
}

/* Appends text[0..n) to buf with non-printable bytes as \xNN, at most max
   characters of text (then "..."). */
static char *sanitize(const char *text, size_t n, size_t max) {
  size_t shown = n < max ? n : max;
  char *out = GC_MALLOC_ATOMIC(shown * 4 + 8);
  if (!out) una_out_of_memory("compiler data");
  size_t j = 0;
  for (size_t i = 0; i < shown; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c >= 0x20 && c < 0x7f) out[j++] = (char)c;
    else j += (size_t)sprintf(out + j, "\\x%02x", c);
  }
  if (shown < n) { memcpy(out + j, "...", 3); j += 3; }
  out[j] = '\0';
  return out;
}

const char *fe_tok_describe(const FeToken *t) {
  switch (t->kind) {
  case TK_EOF:
    return "the end of the input";
  case TK_STR:
    return una_sprintf("the string \"%s\"", sanitize(t->text, strlen(t->text), 40));
  case TK_CMD:
    return una_sprintf("':%s'", sanitize(t->text, strlen(t->text), 40));
  case TK_ERROR:
    return "invalid text";
  case TK_NUM: case TK_NAME:
    return una_sprintf("'%s'", sanitize(t->text, strlen(t->text), 40));
  default:
    return una_sprintf("'%s'", fe_tok_kind_text[t->kind]);
  }
}

typedef struct Lexer {
  const char *file;
  const char *s;
  size_t len, i;
  int line, col;
  FeToken *toks;
  int ntoks, cap;
  FeError *errors;
  int nerrors, errcap;
  int depth;
  bool open_string;
} Lexer;

static bool is_ident_start(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(int c) { return is_ident_start(c) || is_digit(c) || c == '\''; }

static int peekc(const Lexer *lx, size_t k) {
  return lx->i + k < lx->len ? (unsigned char)lx->s[lx->i + k] : -1;
}

/* Advances over n bytes, none of them a newline. */
static void skip(Lexer *lx, size_t n) {
  lx->i += n;
  lx->col += (int)n;
}

static FeTokKind prev_kind(const Lexer *lx) {
  return lx->ntoks > 0 ? lx->toks[lx->ntoks - 1].kind : TK_EOF;
}

/* Appends a token that starts at span s and ends at the current position,
   computing its bol and starts_item flags and the bracket depth. */
static FeToken *push(Lexer *lx, FeTokKind kind, Span s, const char *text, bool bol) {
  if (lx->ntoks == lx->cap) {
    int cap = lx->cap ? lx->cap * 2 : 256;
    FeToken *nt = GC_MALLOC(sizeof(FeToken) * (size_t)cap);
    if (!nt) una_out_of_memory("tokens");
    if (lx->ntoks) memcpy(nt, lx->toks, sizeof(FeToken) * (size_t)lx->ntoks);
    lx->toks = nt;
    lx->cap = cap;
  }
  FeToken *t = &lx->toks[lx->ntoks];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->span = s;
  t->text = text ? text : fe_tok_kind_text[kind];
  t->bol = bol;
  t->end_line = lx->line;
  t->end_col = lx->col;
  if (kind == TK_CMD || (kind == TK_DEF && s.col == 1)) {
    lx->depth = 0;
    t->starts_item = true;
  } else if (kind == TK_EOF) {
    t->starts_item = true;
  } else {
    t->starts_item = lx->ntoks == 0 ||
                     (s.col == 1 && lx->depth == 0 && fe_tok_can_end(prev_kind(lx)) &&
                      fe_tok_can_begin(kind));
  }
  if (kind == TK_LPAREN || kind == TK_LBRACK) lx->depth++;
  if ((kind == TK_RPAREN || kind == TK_RBRACK) && lx->depth > 0) lx->depth--;
  lx->ntoks++;
  return t;
}

static void push_error(Lexer *lx, Span s, bool bol, const char *msg) {
  if (lx->nerrors == lx->errcap) {
    int cap = lx->errcap ? lx->errcap * 2 : 8;
    FeError *ne = GC_MALLOC(sizeof(FeError) * (size_t)cap);
    if (!ne) una_out_of_memory("errors");
    if (lx->nerrors) memcpy(ne, lx->errors, sizeof(FeError) * (size_t)lx->nerrors);
    lx->errors = ne;
    lx->errcap = cap;
  }
  FeError *e = NEW(FeError);
  e->span = s;
  e->msg = msg;
  lx->errors[lx->nerrors++] = *e;
  FeToken *t = push(lx, TK_ERROR, s, msg, bol);
  t->err = e;
}

/* Whether the command line has the flag --dot at i (`:show grad f --dot`):
   "--dot" then a blank or the end of the line, which is not a comment. */
static bool dot_flag_at(const Lexer *lx, size_t i) {
  if (i + 5 > lx->len || memcmp(lx->s + i, "--dot", 5) != 0) return false;
  if (i > 0 && lx->s[i - 1] != ' ' && lx->s[i - 1] != '\t') return false;
  char c = i + 5 < lx->len ? lx->s[i + 5] : '\n';
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A command line: ':' WORD rest-of-line, without a '--' comment (outside
   string quotes; the flag --dot is not one); the ':' is at the current
   position. */
static void lex_command(Lexer *lx, Span s, bool bol) {
  skip(lx, 1);
  size_t w0 = lx->i;
  while (peekc(lx, 0) >= 0 && is_ident_char(peekc(lx, 0))) skip(lx, 1);
  const char *word = una_strndup(lx->s + w0, lx->i - w0);
  while (peekc(lx, 0) == ' ' || peekc(lx, 0) == '\t') skip(lx, 1);
  Span as = fe_span(lx->file, lx->line, lx->col);
  size_t a0 = lx->i, a1 = a0;
  bool in_string = false, comment = false;
  while (peekc(lx, 0) >= 0 && peekc(lx, 0) != '\n') {
    int c = peekc(lx, 0);
    if (!in_string && c == '-' && peekc(lx, 1) == '-' && !dot_flag_at(lx, lx->i)) comment = true;
    if (c == '"') in_string = !in_string;
    if (in_string && c == '\\' && peekc(lx, 1) >= 0 && peekc(lx, 1) != '\n') skip(lx, 1);
    skip(lx, 1);
    if (!comment && c != ' ' && c != '\t' && c != '\r') a1 = lx->i;
  }
  FeToken *t = push(lx, TK_CMD, s, word, bol);
  t->arg = una_strndup(lx->s + a0, a1 - a0);
  t->arg_span = as;
}

/* NUM: digits ('.' digits)? ([eE] [+-]? digits)?, digits only right after
   a '.' token with no blank between (so that t.1.2 is two projections, and
   (x. 0.5) a lambda returning 0.5). */
static void lex_number(Lexer *lx, Span s, bool bol) {
  size_t start = lx->i;
  const FeToken *prev = lx->ntoks > 0 ? &lx->toks[lx->ntoks - 1] : NULL;
  bool int_only = prev && prev->kind == TK_DOT && prev->end_line == s.line && prev->end_col == s.col;
  while (is_digit(peekc(lx, 0))) skip(lx, 1);
  if (!int_only) {
    if (peekc(lx, 0) == '.' && is_digit(peekc(lx, 1))) {
      skip(lx, 1);
      while (is_digit(peekc(lx, 0))) skip(lx, 1);
    }
    int c = peekc(lx, 0);
    if (c == 'e' || c == 'E') {
      size_t k = 1;
      if (peekc(lx, 1) == '+' || peekc(lx, 1) == '-') k = 2;
      if (is_digit(peekc(lx, k))) {
        skip(lx, k);
        while (is_digit(peekc(lx, 0))) skip(lx, 1);
      }
    }
  }
  if (peekc(lx, 0) >= 0 && is_ident_char(peekc(lx, 0))) {
    while (peekc(lx, 0) >= 0 && is_ident_char(peekc(lx, 0))) skip(lx, 1);
    push_error(lx, s, bol,
               una_sprintf("malformed number '%s'", sanitize(lx->s + start, lx->i - start, 40)));
    return;
  }
  const char *text = una_strndup(lx->s + start, lx->i - start);
  FeToken *t = push(lx, TK_NUM, s, text, bol);
  t->num = strtod(text, NULL);
}

/* STR: '"' (char | '\"' | '\\')* '"' on one line. An unterminated string is an
   error at its opening quote; lexing goes on at the next line. */
static void lex_string(Lexer *lx, Span s, bool bol) {
  skip(lx, 1);
  size_t cap = 16, n = 0;
  char *buf = GC_MALLOC_ATOMIC(cap);
  for (;;) {
    int c = peekc(lx, 0);
    if (c < 0 || c == '\n') {
      lx->open_string = c < 0;
      push_error(lx, s, bol, "unterminated string");
      return;
    }
    if (c == '"') {
      skip(lx, 1);
      break;
    }
    if (c == '\\' && (peekc(lx, 1) == '"' || peekc(lx, 1) == '\\')) {
      c = peekc(lx, 1);
      skip(lx, 2);
    } else {
      skip(lx, 1);
    }
    if (n + 1 >= cap) {
      char *nb = GC_MALLOC_ATOMIC(cap * 2);
      memcpy(nb, buf, n);
      buf = nb;
      cap *= 2;
    }
    if (!buf) una_out_of_memory("a string");
    buf[n++] = (char)c;
  }
  buf[n] = '\0';
  push(lx, TK_STR, s, buf, bol);
}

/* Operators, longest match first. */
static FeTokKind lex_operator(Lexer *lx, size_t *n) {
  int c = peekc(lx, 0), d = peekc(lx, 1);
  *n = 2;
  if (c == '=' && d == '=') return TK_EQEQ;
  if (c == '!' && d == '=') return TK_NE;
  if (c == '<' && d == '=') return TK_LE;
  if (c == '>' && d == '=') return TK_GE;
  if (c == '&' && d == '&') return TK_AND;
  if (c == '|' && d == '|') return TK_OR;
  *n = 1;
  switch (c) {
  case '+': return TK_PLUS;
  case '-': return TK_MINUS;
  case '*': return TK_STAR;
  case '/': return TK_SLASH;
  case '^': return TK_CARET;
  case '<': return TK_LT;
  case '>': return TK_GT;
  case '!': return TK_BANG;
  case '=': return TK_EQ;
  case '.': return TK_DOT;
  case ',': return TK_COMMA;
  case '(': return TK_LPAREN;
  case ')': return TK_RPAREN;
  case '[': return TK_LBRACK;
  case ']': return TK_RBRACK;
  case ':': return TK_COLON;
  default: *n = 0; return TK_EOF;
  }
}

FeLexResult fe_lex(const char *file, const char *text, size_t len, int line, int col) {
  Lexer lx;
  memset(&lx, 0, sizeof lx);
  lx.file = file;
  lx.s = text;
  lx.len = text ? len : 0;
  lx.line = line > 0 ? line : 1;
  lx.col = col > 0 ? col : 1;
  /* a UTF-8 byte-order mark at the very start of a text (editors on
     Windows write one) is not part of the program */
  if (lx.line == 1 && lx.col == 1 && lx.len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) lx.i = 3;
  bool bol = true;
  while (lx.i < lx.len) {
    int c = peekc(&lx, 0);
    if (c == '\n') {
      lx.i++;
      lx.line++;
      lx.col = 1;
      bol = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      skip(&lx, 1);
      continue;
    }
    if (c == '-' && peekc(&lx, 1) == '-') {
      while (peekc(&lx, 0) >= 0 && peekc(&lx, 0) != '\n') skip(&lx, 1);
      continue;
    }
    Span s = fe_span(file, lx.line, lx.col);
    bool b = bol;
    bol = false;
    if (c == ':' && lx.col == 1 && peekc(&lx, 1) >= 0 && is_ident_start(peekc(&lx, 1)) &&
        peekc(&lx, 1) != '_') {
      lex_command(&lx, s, b);
    } else if (is_digit(c)) {
      lex_number(&lx, s, b);
    } else if (is_ident_start(c)) {
      size_t start = lx.i;
      while (peekc(&lx, 0) >= 0 && is_ident_char(peekc(&lx, 0))) skip(&lx, 1);
      size_t n = lx.i - start;
      FeTokKind kind = TK_NAME;
      for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
        if (strlen(keywords[k].word) == n && memcmp(keywords[k].word, text + start, n) == 0)
          kind = keywords[k].kind;
      push(&lx, kind, s, kind == TK_NAME || kind == TK_GRAD ? una_strndup(text + start, n) : NULL, b);
    } else if (c == '"') {
      lex_string(&lx, s, b);
    } else {
      size_t n;
      FeTokKind k = lex_operator(&lx, &n);
      if (n > 0) {
        skip(&lx, n);
        push(&lx, k, s, NULL, b);
      } else {
        /* A run of bad bytes is one error, at its first byte. */
        const char *msg = c == '\\' ? una_sprintf("unexpected character '\\'%s",
                                                 fe_note(s, "a lambda is written (x. e) or (x, y. e)"))
                          : c >= 0x20 && c < 0x7f
                              ? una_sprintf("unexpected character '%c'", c)
                              : una_sprintf("unexpected character '\\x%02x'", c);
        skip(&lx, 1);
        for (;;) {
          int d = peekc(&lx, 0);
          size_t m;
          if (d < 0 || d == '\n' || d == ' ' || d == '\t' || d == '\r' || d == '"' ||
              is_ident_char(d) || d == '\'')
            break;
          lex_operator(&lx, &m);
          if (m > 0) break;
          skip(&lx, 1);
        }
        push_error(&lx, s, b, msg);
      }
    }
  }
  push(&lx, TK_EOF, fe_span(file, lx.line, lx.col), NULL, bol);
  FeLexResult r = {lx.toks, lx.ntoks, lx.errors, lx.nerrors, lx.depth, lx.open_string};
  return r;
}
