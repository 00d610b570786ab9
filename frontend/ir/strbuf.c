/* strbuf.c: growing strings (see strbuf.h). */
#include "strbuf.h"

static void reserve(StrBuf *b, size_t more) {
  if (b->n + more + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap * 2 : 256;
  while (cap < b->n + more + 1) cap *= 2;
  char *ns = GC_MALLOC_ATOMIC(cap);
  if (!ns) una_out_of_memory("a string");
  if (b->n) memcpy(ns, b->s, b->n);
  b->s = ns;
  b->cap = cap;
}

void sb_putn(StrBuf *b, const char *s, size_t n) {
  reserve(b, n);
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

void sb_put(StrBuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

void sb_printf(StrBuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  ASSERT(k >= 0);
  reserve(b, (size_t)k);
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}

char *sb_str(const StrBuf *b) { return b->s ? b->s : una_strdup(""); }
