/* strbuf.h: a growing string in collected memory, for the printers and
   code generators (term_print.c, unf/print.c, the plan's printer, the CUDA
   emitter). Zero-initialise a StrBuf before use. */
#ifndef UNA_STRBUF_H
#define UNA_STRBUF_H

#include "common.h"

typedef struct StrBuf {
  char *s; /* NUL-terminated once anything is written; NULL before */
  size_t n, cap;
} StrBuf;

/* Appends the n bytes at s. */
void sb_putn(StrBuf *b, const char *s, size_t n);

/* Appends the string s. */
void sb_put(StrBuf *b, const char *s);

/* Appends printf's text for fmt. */
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The text so far ("" when nothing was written). */
char *sb_str(const StrBuf *b);

#endif
