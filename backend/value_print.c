/* value_print.c: values as text (LANGUAGE.md section 7): shortest round-trip
   reals, true/false, [1, 2, 3], (1, [2, 3]), <function>; arrays of more
   than VAL_PRINT_LIMIT scalars summarised unless all are asked for
   (value.h). */
#include "value.h"

/* Output goes either to a FILE or to a growing GC string. */
typedef struct Sink {
  FILE *out;
  char *buf;
  size_t len, cap;
} Sink;

/* How the arrays met from here on print: every element; only their edges
   (a summarised array, and everything inside it); or as their own size
   decides (outside any array: the value itself, a tuple's items). */
typedef enum { SHOW_ALL, SHOW_CUT, SHOW_JUDGE } ShowMode;

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

/* The scalars in v, counting every level (an empty array as one), or any
   number above limit once the count passes it. */
static size_t count_scalars(Value v, size_t limit) {
  switch (v.kind) {
  case V_TUPLE: {
    size_t n = 0;
    for (int i = 0; i < v.u.t->n && n <= limit; i++) n += count_scalars(v.u.t->items[i], limit - n);
    return n;
  }
  case V_ARRAY: {
    const Array *a = v.u.a;
    if (a->len == 0) return 1;
    if (!a->boxed) return a->len;
    fe_stack_check(fe_nospan);
    size_t n = 0;
    for (size_t i = 0; i < a->len && n <= limit; i++) n += count_scalars(a->v[i], limit - n);
    return n;
  }
  default: return 1;
  }
}

static void show(Sink *k, Value v, ShowMode m);

/* Element i of a. */
static void show_elem(Sink *k, const Array *a, size_t i, ShowMode m) {
  if (a->boxed) show(k, a->v[i], m);
  else put_real(k, a->r[i]);
}

static void show_array(Sink *k, const Array *a, ShowMode m) {
  if (m == SHOW_JUDGE) m = count_scalars(val_array((Array *)a), VAL_PRINT_LIMIT) > VAL_PRINT_LIMIT ? SHOW_CUT : SHOW_ALL;
  val_host(a);
  put(k, "[");
  bool cut = m == SHOW_CUT && a->len > 2 * VAL_PRINT_EDGE;
  for (size_t i = 0; i < a->len; i++) {
    if (cut && i == VAL_PRINT_EDGE) {
      put(k, ", ...");
      i = a->len - VAL_PRINT_EDGE;
    }
    if (i) put(k, ", ");
    show_elem(k, a, i, m);
  }
  put(k, "]");
}

static void show(Sink *k, Value v, ShowMode m) {
  fe_stack_check(fe_nospan);
  switch (v.kind) {
  case V_REAL: put_real(k, v.u.r); return;
  case V_BOOL: put(k, v.u.b ? "true" : "false"); return;
  case V_TUPLE:
    put(k, "(");
    for (int i = 0; i < v.u.t->n; i++) {
      if (i) put(k, ", ");
      show(k, v.u.t->items[i], m);
    }
    put(k, ")");
    return;
  case V_ARRAY: show_array(k, v.u.a, m); return;
  case V_CLOSURE: put(k, "<function>"); return;
  }
  UNREACHABLE();
}

static char *to_string(Value v, ShowMode m) {
  Sink k = {NULL, NULL, 0, 0};
  k.cap = 64;
  k.buf = GC_MALLOC_ATOMIC(k.cap);
  if (!k.buf) una_internal_error(__FILE__, __LINE__, "out of memory while printing a value");
  k.buf[0] = '\0';
  show(&k, v, m);
  return k.buf;
}

void val_print(FILE *out, Value v) {
  Sink k = {out, NULL, 0, 0};
  show(&k, v, SHOW_ALL);
}

char *val_to_string(Value v) { return to_string(v, SHOW_ALL); }

void val_print_opts(FILE *out, Value v, ValPrintOpts o) {
  Sink k = {out, NULL, 0, 0};
  show(&k, v, o.all ? SHOW_ALL : SHOW_JUDGE);
}

char *val_to_string_opts(Value v, ValPrintOpts o) { return to_string(v, o.all ? SHOW_ALL : SHOW_JUDGE); }
