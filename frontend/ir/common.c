/* common.c: allocation helpers and the internal-error exit. */
#include "common.h"
#include <stdarg.h>

static _Thread_local long fail_countdown; /* una_alloc_fail_after: 0 = off */

void una_alloc_fail_after(long n) { fail_countdown = n > 0 ? n : 0; }

/* Whether the allocation now is the one the test hook fails. */
static bool injected_failure(void) {
  if (fail_countdown == 0) return false;
  if (--fail_countdown > 0) return false;
  return true;
}

static void *gc_alloc(size_t size, bool atomic) {
  void *p = injected_failure() ? NULL : atomic ? GC_MALLOC_ATOMIC(size) : GC_MALLOC(size);
  if (!p) una_out_of_memory("compiler data");
  return p;
}

void *una_alloc(size_t size) { return gc_alloc(size ? size : 1, false); }

void una_gc_reserve(void) {
  if (!getenv("GC_INITIAL_HEAP_SIZE") && GC_get_heap_size() < UNA_GC_INITIAL_HEAP)
    GC_expand_hp(UNA_GC_INITIAL_HEAP - GC_get_heap_size());
}

void una_gc_prefault(void) {
  size_t n = GC_get_free_bytes() / 4 * 3;
  char *p = GC_MALLOC_ATOMIC(n);
  if (!p) return;
  memset(p, 0, n);
  GC_FREE(p);
}

char *una_strndup(const char *s, size_t n) {
  char *p = gc_alloc(n + 1, true);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *una_strdup(const char *s) { return una_strndup(s, strlen(s)); }

char *una_vsprintf(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  char *p = gc_alloc((size_t)n + 1, true);
  vsnprintf(p, (size_t)n + 1, fmt, again);
  va_end(again);
  return p;
}

char *una_sprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = una_vsprintf(fmt, ap);
  va_end(ap);
  return p;
}

void una_internal_error(const char *file, int line, const char *what) {
  fprintf(stderr, "una: internal error at %s:%d: %s\n", file, line, what);
  abort();
}

void una_format_real(char *buf, size_t size, double x) {
  if (x != x) {
    snprintf(buf, size, "nan");
    return;
  }
  if (x == 1.0 / 0.0 || x == -1.0 / 0.0) {
    snprintf(buf, size, x > 0 ? "inf" : "-inf");
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) return;
  }
}
