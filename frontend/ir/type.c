/* type.c: type constructors, equality and printing. */
#include "type.h"

static const Type real_type = {TY_REAL, 0, NULL, NULL};
static const Type bool_type = {TY_BOOL, 0, NULL, NULL};

const Type *fe_ty_real(void) { return &real_type; }
const Type *fe_ty_bool(void) { return &bool_type; }

const Type *fe_ty_tuple(int n, const Type **elems) {
  ASSERT(n >= 2);
  Type *t = NEW(Type);
  t->kind = TY_TUPLE;
  t->n = n;
  t->elems = NEW_ARRAY(const Type *, n);
  memcpy(t->elems, elems, sizeof(const Type *) * (size_t)n);
  return t;
}

const Type *fe_ty_pair(const Type *a, const Type *b) {
  const Type *e[2] = {a, b};
  return fe_ty_tuple(2, e);
}

const Type *fe_ty_array(const Type *elem) {
  Type *t = NEW(Type);
  t->kind = TY_ARRAY;
  t->elem = elem;
  return t;
}

const Type *fe_ty_fun(int n, const Type **params, const Type *result) {
  Type *t = NEW(Type);
  t->kind = TY_FUN;
  t->n = n;
  t->elems = NEW_ARRAY(const Type *, n > 0 ? n : 1);
  if (n > 0) memcpy(t->elems, params, sizeof(const Type *) * (size_t)n);
  t->elem = result;
  return t;
}

bool fe_type_eq(const Type *a, const Type *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
  case TY_REAL:
  case TY_BOOL: return true;
  case TY_ARRAY: return fe_type_eq(a->elem, b->elem);
  case TY_TUPLE:
  case TY_FUN:
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++)
      if (!fe_type_eq(a->elems[i], b->elems[i])) return false;
    return a->kind == TY_TUPLE || fe_type_eq(a->elem, b->elem);
  }
  UNREACHABLE();
}

bool fe_type_is_real_array(const Type *t) {
  return t->kind == TY_ARRAY && t->elem->kind == TY_REAL;
}

bool fe_type_is_real_matrix(const Type *t) { return t->kind == TY_ARRAY && fe_type_is_real_array(t->elem); }

bool fe_type_has_reals(const Type *t) {
  switch (t->kind) {
  case TY_REAL: return true;
  case TY_ARRAY: return fe_type_has_reals(t->elem);
  case TY_TUPLE:
    for (int i = 0; i < t->n; i++)
      if (fe_type_has_reals(t->elems[i])) return true;
    return false;
  default: return false;
  }
}

const Type *fe_ty_tangent(const Type *t) {
  switch (t->kind) {
  case TY_REAL: return t;
  case TY_ARRAY: {
    const Type *e = fe_ty_tangent(t->elem);
    return !e ? NULL : e == t->elem ? t : fe_ty_array(e);
  }
  case TY_TUPLE: {
    const Type **ts = NEW_ARRAY(const Type *, t->n);
    int m = 0;
    bool same = true;
    for (int i = 0; i < t->n; i++) {
      const Type *e = fe_ty_tangent(t->elems[i]);
      same = same && e == t->elems[i];
      if (e) ts[m++] = e;
    }
    return same ? t : m == 0 ? NULL : m == 1 ? ts[0] : fe_ty_tuple(m, ts);
  }
  default: return NULL;
  }
}

int fe_type_real_rank(const Type *t) {
  int k = 0;
  for (; t && t->kind == TY_ARRAY; t = t->elem) k++;
  return t && t->kind == TY_REAL ? k : 0;
}

static void put(char **buf, size_t *len, size_t *cap, const char *s) {
  size_t n = strlen(s);
  if (*len + n + 1 > *cap) {
    size_t nc = (*cap + n + 1) * 2;
    char *nb = GC_MALLOC_ATOMIC(nc);
    if (!nb) una_out_of_memory("a type's name");
    memcpy(nb, *buf, *len);
    *buf = nb;
    *cap = nc;
  }
  memcpy(*buf + *len, s, n + 1);
  *len += n;
}

static void show(const Type *t, char **buf, size_t *len, size_t *cap) {
  switch (t->kind) {
  case TY_REAL: put(buf, len, cap, "R"); return;
  case TY_BOOL: put(buf, len, cap, "B"); return;
  case TY_ARRAY:
    put(buf, len, cap, "[");
    show(t->elem, buf, len, cap);
    put(buf, len, cap, "]");
    return;
  case TY_TUPLE:
    put(buf, len, cap, "(");
    for (int i = 0; i < t->n; i++) {
      if (i) put(buf, len, cap, ", ");
      show(t->elems[i], buf, len, cap);
    }
    put(buf, len, cap, ")");
    return;
  case TY_FUN:
    for (int i = 0; i < t->n; i++) {
      show(t->elems[i], buf, len, cap);
      put(buf, len, cap, " -> ");
    }
    show(t->elem, buf, len, cap);
    return;
  }
  UNREACHABLE();
}

char *fe_type_str(const Type *t) {
  size_t len = 0, cap = 32;
  char *buf = GC_MALLOC_ATOMIC(cap);
  if (!buf) una_out_of_memory("a type's name");
  buf[0] = '\0';
  show(t, &buf, &len, &cap);
  return buf;
}
