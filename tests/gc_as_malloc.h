/* gc_as_malloc.h: the test-only allocation path of `make asan-heap`
   (included before every source with -include): the collector's
   allocation macros become calloc and realloc, never freed, so that
   AddressSanitizer sees every IR node, array and string as its own
   malloc block and reports an overrun inside one, which the collector's
   own heap hides (objects there are packed in blocks ASan knows nothing
   of). Memory is never given back: only for the test suites, each test
   in its own process. */
#ifndef UNA_GC_AS_MALLOC_H
#define UNA_GC_AS_MALLOC_H
#define UNA_GC_AS_MALLOC 1 /* tests of the collector itself are left out */
#include <gc.h>
#include <stdlib.h>
#undef GC_MALLOC
#undef GC_MALLOC_ATOMIC
#undef GC_REALLOC
#define GC_MALLOC(n) calloc(1, (n) ? (n) : 1)
#define GC_MALLOC_ATOMIC(n) calloc(1, (n) ? (n) : 1)
#define GC_REALLOC(p, n) realloc((p), (n))
#endif
