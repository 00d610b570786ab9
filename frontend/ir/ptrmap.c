/* ptrmap.c: the pointer map of ptrmap.h. */
#include "ptrmap.h"

static size_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 29;
  x *= 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 17);
}

void ptrmap_init(PtrMap *m, size_t hint) {
  size_t cap = 16;
  while (cap < hint * 2 + 2) cap <<= 1;
  m->cap = cap;
  m->n = 0;
  m->keys = NEW_ARRAY(const void *, cap);
  m->vals = NEW_ARRAY(void *, cap);
}

static size_t map_find(const PtrMap *m, const void *k) {
  size_t i = ptr_hash(k) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  return i;
}

void *ptrmap_get(const PtrMap *m, const void *k) {
  if (m->cap == 0) return NULL;
  size_t i = map_find(m, k);
  return m->keys[i] ? m->vals[i] : NULL;
}

void ptrmap_put(PtrMap *m, const void *k, void *v) {
  ASSERT(k);
  if (m->cap == 0) ptrmap_init(m, 8);
  if ((m->n + 1) * 2 > m->cap) {
    PtrMap g;
    ptrmap_init(&g, m->cap);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) ptrmap_put(&g, m->keys[i], m->vals[i]);
    *m = g;
  }
  size_t i = map_find(m, k);
  if (!m->keys[i]) {
    m->keys[i] = k;
    m->n++;
  }
  m->vals[i] = v;
}
