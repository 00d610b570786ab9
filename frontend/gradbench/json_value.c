/* json_value.c: JSON <-> Una values by type (json_value.h). */
#include "json_value.h"
#include <math.h>

/* What a JSON value is, for messages: "a string", "an array of 3", ... */
static const char *json_kind(const json_t *j) {
  switch (json_typeof(j)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return una_sprintf("an array of %zu", json_array_size(j));
  case JSON_STRING: return "a string";
  case JSON_INTEGER:
  case JSON_REAL: return "a number";
  case JSON_TRUE: return "true";
  case JSON_FALSE: return "false";
  case JSON_NULL: return "null";
  }
  return "a JSON value";
}

static bool mismatch(const char *path, const Type *t, const json_t *j, const char **why) {
  *why = una_sprintf("%s: expected %s, found %s", path, fe_type_str(t), json_kind(j));
  return false;
}

/* A JSON array of numbers as an unboxed [R]; false at the first element
   that is not a number. */
static bool real_array(const json_t *j, const char *path, Value *out, const char **why) {
  size_t n = json_array_size(j);
  Array *a = val_new_real_array(n, fe_nospan);
  for (size_t i = 0; i < n; i++) {
    const json_t *e = json_array_get(j, i);
    if (!json_is_number(e))
      return mismatch(una_sprintf("%s[%zu]", path, i), fe_ty_real(), e, why);
    a->r[i] = json_number_value(e);
  }
  *out = val_array(a);
  return true;
}

/* A JSON array of n arrays of m numbers as a [[R]] whose rows are views
   into one buffer (as an n-D load gives), so that matrix products read it
   in place; false (nothing set) when the rows are not all arrays of one
   length, for the general path and its messages. *ok false: an element is
   not a number (*why set). */
static bool real_matrix(const json_t *j, const char *path, Value *out, const char **why, bool *ok) {
  size_t n = json_array_size(j), m = 0;
  *ok = true;
  for (size_t i = 0; i < n; i++) {
    const json_t *row = json_array_get(j, i);
    if (!json_is_array(row) || (i > 0 && json_array_size(row) != m)) return false;
    m = json_array_size(row);
  }
  if (n == 0 || m == 0) return false;
  Array *flat = val_new_real_array(n * m, fe_nospan);
  Array *a = val_new_boxed_array(n, fe_nospan);
  for (size_t i = 0; i < n; i++) {
    const json_t *row = json_array_get(j, i);
    for (size_t k = 0; k < m; k++) {
      const json_t *e = json_array_get(row, k);
      if (!json_is_number(e)) {
        *ok = mismatch(una_sprintf("%s[%zu][%zu]", path, i, k), fe_ty_real(), e, why);
        return true;
      }
      flat->r[i * m + k] = json_number_value(e);
    }
    a->v[i] = val_array(val_view(flat, i * m, m));
  }
  *out = val_array(a);
  return true;
}

bool json_to_value(const json_t *j, const Type *t, const char *path, Value *out,
                   const char **why) {
  switch (t->kind) {
  case TY_REAL:
    if (!json_is_number(j)) return mismatch(path, t, j, why);
    *out = val_real(json_number_value(j));
    return true;
  case TY_BOOL:
    if (!json_is_boolean(j)) return mismatch(path, t, j, why);
    *out = val_bool(json_is_true(j));
    return true;
  case TY_TUPLE: {
    if (!json_is_array(j) || json_array_size(j) != (size_t)t->n) return mismatch(path, t, j, why);
    Value *items = NEW_ARRAY(Value, t->n);
    for (int i = 0; i < t->n; i++)
      if (!json_to_value(json_array_get(j, (size_t)i), t->elems[i],
                         una_sprintf("%s[%d]", path, i), &items[i], why))
        return false;
    *out = val_tuple(t->n, items);
    return true;
  }
  case TY_ARRAY: {
    if (!json_is_array(j)) return mismatch(path, t, j, why);
    if (t->elem->kind == TY_REAL) return real_array(j, path, out, why);
    bool ok;
    if (t->elem->kind == TY_ARRAY && t->elem->elem->kind == TY_REAL && real_matrix(j, path, out, why, &ok)) return ok;
    size_t n = json_array_size(j);
    Array *a = val_new_array_of(t->elem, n, fe_nospan);
    for (size_t i = 0; i < n; i++) {
      Value e;
      if (!json_to_value(json_array_get(j, i), t->elem, una_sprintf("%s[%zu]", path, i), &e,
                         why))
        return false;
      val_array_set(a, i, e);
    }
    *out = val_array(a);
    return true;
  }
  case TY_FUN:
    break;
  }
  *why = una_sprintf("%s: a parameter of type %s cannot come from JSON", path, fe_type_str(t));
  return false;
}

static json_t *json_of_real(double r) {
  return isfinite(r) ? json_real(r) : json_null();
}

json_t *json_of_value(Value v) {
  switch (v.kind) {
  case V_REAL: return json_of_real(v.u.r);
  case V_BOOL: return json_boolean(v.u.b);
  case V_TUPLE: {
    json_t *a = json_array();
    for (int i = 0; i < v.u.t->n; i++)
      json_array_append_new(a, json_of_value(v.u.t->items[i]));
    return a;
  }
  case V_ARRAY: {
    Array *arr = v.u.a;
    val_host(arr);
    json_t *a = json_array();
    for (size_t i = 0; i < arr->len; i++)
      json_array_append_new(a, arr->boxed ? json_of_value(arr->v[i]) : json_of_real(arr->r[i]));
    return a;
  }
  case V_CLOSURE: break;
  }
  return json_null();
}
