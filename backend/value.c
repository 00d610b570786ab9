/* value.c: value constructors (closures too), checked array allocation,
   views, deep equality. */
#include "value.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

Value val_tuple(int n, const Value *items) {
  ASSERT(n >= 0);
  Tuple *t = una_alloc(sizeof(Tuple) + sizeof(Value) * (size_t)n);
  t->n = n;
  if (n > 0) memcpy(t->items, items, sizeof(Value) * (size_t)n);
  Value v;
  v.kind = V_TUPLE;
  v.u.t = t;
  return v;
}

Value val_array(Array *a) {
  Value v;
  v.kind = V_ARRAY;
  v.u.a = a;
  return v;
}

Value val_closure(const struct Term *lam, Value *frame) {
  Closure *c = NEW(Closure);
  c->lam = lam;
  c->frame = frame;
  Value v;
  v.kind = V_CLOSURE;
  v.u.c = c;
  return v;
}

void val_alloc_error(double n, double elem_size, Span s) {
  char nb[40], bb[40];
  una_format_real(nb, sizeof nb, n);
  una_format_real(bb, sizeof bb, n * elem_size);
  fe_error(s, "cannot allocate %s elements (%s bytes)", nb, bb);
}

/* The machine's physical memory in bytes (0 when unknown); a request larger
   than this fails at once instead of asking the collector to try. */
static double physical_memory(void) {
  static double cached = -1;
  if (cached < 0) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    cached = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
  }
  return cached;
}

/* Asks the kernel for transparent huge pages under a large array (where
   they are given on request, as with Debian's default "madvise" setting):
   the first writes of a fresh 1 GB array then take 512 page faults instead
   of 262144, and the engine's loops fewer TLB misses. Advice only. */
static void huge_pages(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (bytes < 4 * huge) return;
  uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

/* Checks len * elem_size and allocates it (never NULL: at least one element,
   so that memcpy and pointer arithmetic on empty arrays stay defined). */
static void *checked_alloc(size_t len, size_t elem_size, bool atomic, Span s) {
  double mem = physical_memory();
  if (len > SIZE_MAX / elem_size || (mem > 0 && (double)len * (double)elem_size > mem))
    val_alloc_error((double)len, (double)elem_size, s);
  size_t bytes = (len ? len : 1) * elem_size;
  void *p = atomic ? GC_MALLOC_ATOMIC(bytes) : GC_MALLOC(bytes);
  if (!p) val_alloc_error((double)len, (double)elem_size, s);
  huge_pages(p, bytes);
  return p;
}

Array *val_new_real_array(size_t len, Span s) {
  double *r = checked_alloc(len, sizeof(double), true, s);
  Array *a = NEW(Array);
  a->len = len;
  a->boxed = false;
  a->r = r;
  a->whole = true;
  return a;
}

Array *val_new_boxed_array(size_t len, Span s) {
  Value *v = checked_alloc(len, sizeof(Value), false, s);
  Array *a = NEW(Array);
  a->len = len;
  a->boxed = true;
  a->v = v;
  return a;
}

Array *val_hollow_array(size_t len) {
  Array *a = NEW(Array);
  a->len = len;
  return a;
}

Array *val_new_array_of(const Type *elem, size_t len, Span s) {
  return elem->kind == TY_REAL ? val_new_real_array(len, s) : val_new_boxed_array(len, s);
}

Array *val_view(const Array *a, size_t offset, size_t len) {
  ASSERT(offset <= a->len && len <= a->len - offset);
  Array *b = NEW(Array);
  b->len = len;
  b->boxed = a->boxed;
  if (a->boxed) b->v = a->v ? a->v + offset : NULL;
  else b->r = a->r ? a->r + offset : NULL;
  b->dev = a->dev;
  b->dev_off = a->dev_off + offset;
  return b;
}

static _Atomic size_t given_back;

#ifdef UNA_GC_AS_MALLOC
/* make asan-heap (tests/gc_as_malloc.h): a buffer is a malloc block, freed
   here, so that AddressSanitizer reports any read of an array given back
   too early. */
int __sanitizer_get_ownership(const volatile void *p);           /* the ASan runtime's */
bool val_whole_buffer(const Array *a) { return a->whole && a->r && __sanitizer_get_ownership(a->r); }
static void free_buffer(double *r) { free(r); }
#else
bool val_whole_buffer(const Array *a) { return a->whole && a->r && GC_base(a->r) == a->r; }
static void free_buffer(double *r) { GC_free(r); }
#endif

void val_give_back(Array *a) {
  if (a->boxed || !a->r || a->dev || !val_whole_buffer(a)) return;
  free_buffer(a->r);
  given_back++;
}

size_t val_given_back(void) { return given_back; }

bool val_equal(Value a, Value b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
  case V_REAL: return a.u.r == b.u.r;
  case V_BOOL: return a.u.b == b.u.b;
  case V_TUPLE:
    if (a.u.t->n != b.u.t->n) return false;
    for (int i = 0; i < a.u.t->n; i++)
      if (!val_equal(a.u.t->items[i], b.u.t->items[i])) return false;
    return true;
  case V_ARRAY: {
    const Array *x = a.u.a, *y = b.u.a;
    if (x->len != y->len) return false;
    if (!x->boxed && !y->boxed) {
      val_host(x);
      val_host(y);
      for (size_t i = 0; i < x->len; i++)
        if (x->r[i] != y->r[i]) return false;
      return true;
    }
    for (size_t i = 0; i < x->len; i++)
      if (!val_equal(val_array_get(x, i), val_array_get(y, i))) return false;
    return true;
  }
  case V_CLOSURE: return a.u.c->lam == b.u.c->lam && a.u.c->frame == b.u.c->frame;
  }
  UNREACHABLE();
}

/* The rows of a as one buffer (val_rows_flat below), found or copied (then
   *copied). */
static const double *flat_rows(const Array *a, size_t k, bool *copied) {
  bool consecutive = true;
  *copied = false;
  const double *r0 = NULL;
  for (size_t i = 0; i < a->len; i++) {
    const Array *r = a->v[i].u.a;
    if (r->boxed || r->len != k) return NULL;
    val_host(r);
    if (i == 0) r0 = r->r;
    else if ((uintptr_t)r->r != (uintptr_t)r0 + i * k * sizeof(double)) consecutive = false;
  }
  if (consecutive) return r0;
  if (a->len > SIZE_MAX / sizeof(double) / k) return NULL;
  double *flat = GC_MALLOC_ATOMIC(a->len * k * sizeof(double));
  if (!flat) return NULL;
  *copied = true;
  for (size_t i = 0; i < a->len; i++) memcpy(flat + i * k, a->v[i].u.a->r, k * sizeof(double));
  return flat;
}

/* The rows of the [[R]] a as one row-major buffer of a->len rows of k
   elements: row 0's buffer when the rows are consecutive there, else a
   copy; NULL when a row's length is not k or the copy cannot be made.
   Rows found consecutive are remembered (a->rows_flat): kmeans' Newton
   step reads its 10^4 points 200 times a call. A copy is not: its
   elements would go stale if the rows' were written (a test's finite
   differences perturb its inputs in place). */
const double *val_rows_flat(Array *a, size_t k) {
  const double *memo = __atomic_load_n(&a->rows_flat, __ATOMIC_ACQUIRE);
  if (memo) return a->v[0].u.a->len == k ? memo : NULL;
  bool copied;
  const double *flat = flat_rows(a, k, &copied);
  if (flat && !copied) __atomic_store_n(&a->rows_flat, flat, __ATOMIC_RELEASE);
  return flat;
}
