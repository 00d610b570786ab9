/* value_print.c: values as text (LANGUAGE.md section 7): shortest round-trip
   reals, true/false, [1, 2, 3], (1, [2, 3]), <function>. */
#include "value.h"

/* Output goes either to a FILE or to a growing GC string. */
typedef struct Sink {
  FILE *out;
  char *buf;
  size_t len, cap;
} Sink;

static void put(Sink *k, const char *s) {
  size_t n = strlen(s);
  if (k->out) {
    fwrite(s, 1, n, k->out);
    return;
  }
  if (k->len + n + 1 > k->cap) {
    size_t nc = (k->len + n + 1) * 2;
    char *nb = GC_MALLOC_ATOMIC(nc);
    if (!nb) una_internal_error(__FILE__, __LINE__, "out of memory while printing a value");
    memcpy(nb, k->buf, k->len);
    k->buf = nb;
    k->cap = nc;
  }
  memcpy(k->buf + k->len, s, n + 1);
  k->len += n;
}

static void put_real(Sink *k, double x) {
  char b[40];
  una_format_real(b, sizeof b, x);
  put(k, b);
}

static void show(Sink *k, Value v) {
  fe_stack_check(fe_nospan);
  switch (v.kind) {
  case V_REAL: put_real(k, v.u.r); return;
  case V_BOOL: put(k, v.u.b ? "true" : "false"); return;
  case V_TUPLE:
    put(k, "(");
    for (int i = 0; i < v.u.t->n; i++) {
      if (i) put(k, ", ");
      show(k, v.u.t->items[i]);
    }
    put(k, ")");
    return;
  case V_ARRAY: {
    const Array *a = v.u.a;
    val_host(a);
    put(k, "[");
    for (size_t i = 0; i < a->len; i++) {
      if (i) put(k, ", ");
      if (a->boxed) show(k, a->v[i]);
      else put_real(k, a->r[i]);
    }
    put(k, "]");
    return;
  }
  case V_CLOSURE: put(k, "<function>"); return;
  }
  UNREACHABLE();
}

void val_print(FILE *out, Value v) {
  Sink k = {out, NULL, 0, 0};
  show(&k, v);
}

char *val_to_string(Value v) {
  Sink k = {NULL, NULL, 0, 0};
  k.cap = 64;
  k.buf = GC_MALLOC_ATOMIC(k.cap);
  if (!k.buf) una_internal_error(__FILE__, __LINE__, "out of memory while printing a value");
  k.buf[0] = '\0';
  show(&k, v);
  return k.buf;
}
