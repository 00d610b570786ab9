/* lexer.h: Una source text -> tokens, with spans, line-start flags and the
   item-boundary flag that the parser uses to split a program into items. */
#ifndef UNA_LEXER_H
#define UNA_LEXER_H

#include "ir/error.h"

/* TOK(ID, display text) */
#define FE_TOKENS(TOK)                                                        \
  TOK(EOF, "end of input")                                                    \
  TOK(ERROR, "invalid text") /* text: the lexer's message; err: the error */  \
  TOK(NUM, "number")         /* num: the value; text: as written */           \
  TOK(NAME, "name")          /* text: the identifier */                       \
  TOK(STR, "string")         /* text: the contents, escapes decoded */        \
  TOK(CMD, "command")        /* text: the word after ':'; arg, arg_span */    \
  TOK(DEF, "def") TOK(LET, "let") TOK(IN, "in") TOK(IF, "if")                 \
  TOK(THEN, "then") TOK(ELSE, "else") TOK(TRUE, "true") TOK(FALSE, "false")   \
  TOK(GRAD, "grad") TOK(WRT, "wrt") TOK(LOOP, "loop") TOK(FOR, "for")         \
  TOK(WHILE, "while") TOK(DO, "do")                                           \
  TOK(PLUS, "+") TOK(MINUS, "-") TOK(STAR, "*") TOK(SLASH, "/")               \
  TOK(CARET, "^") TOK(EQEQ, "==") TOK(NE, "!=") TOK(LT, "<") TOK(LE, "<=")    \
  TOK(GT, ">") TOK(GE, ">=") TOK(AND, "&&") TOK(OR, "||") TOK(BANG, "!")      \
  TOK(EQ, "=") TOK(DOT, ".") TOK(COMMA, ",") TOK(LPAREN, "(")                 \
  TOK(RPAREN, ")") TOK(LBRACK, "[") TOK(RBRACK, "]") TOK(COLON, ":")

typedef enum {
#define FE_TOK_ENUM(id, text) TK_##id,
  FE_TOKENS(FE_TOK_ENUM)
#undef FE_TOK_ENUM
  TK__COUNT
} FeTokKind;

/* The fixed text of a token kind: "(", "let", "number", "end of input". */
extern const char *const fe_tok_kind_text[TK__COUNT];

typedef struct FeToken {
  FeTokKind kind;
  bool bol;         /* first token on its line */
  bool starts_item; /* begins a new top-level item (see parser.h): column 1,
                       no bracket open, the previous token can end an
                       expression and this one can begin an item; always
                       true for the first token, a CMD, and 'def' in
                       column 1 (which also close any open brackets) */
  const char *text; /* NUL-terminated; see FE_TOKENS (keywords and operators:
                       their symbol) */
  double num;       /* NUM */
  Span span;        /* where the token starts */
  int end_line, end_col; /* just after the token's last character */
  const char *arg;  /* CMD: the rest of the line without its '--' comment,
                       blanks trimmed */
  Span arg_span;    /* CMD: where arg starts */
  const FeError *err; /* ERROR: the located error */
} FeToken;

typedef struct FeLexResult {
  FeToken *toks; /* ntoks tokens, the last one TK_EOF */
  int ntoks;
  FeError *errors; /* every lexical error, in source order (each is also
                      an ERROR token in toks) */
  int nerrors;
  int depth;       /* brackets still open at the end */
  bool open_string;/* the text ends inside a string (strings end on their
                      line, so this is an error, not unfinished input) */
} FeLexResult;

/* Splits text (len bytes; may contain NUL bytes) into tokens. The first
   character is at line:col of file. Never raises: a bad character or an
   unterminated string (strings end on their line) becomes an ERROR token
   carrying its FeError. */
FeLexResult fe_lex(const char *file, const char *text, size_t len, int line, int col);

/* True when a token of this kind can be the last token of an expression. */
bool fe_tok_can_end(FeTokKind k);

/* True when a token of this kind can be the first token of an item. */
bool fe_tok_can_begin(FeTokKind k);

/* A short quoted description of a token for error messages: "')'", "'foo'",
   "'1.5'", "the string \"a.npy\"", "the end of the input". Long texts are
   shortened. */
const char *fe_tok_describe(const FeToken *t);

#endif
