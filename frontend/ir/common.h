/* common.h: headers, allocation and assertion macros shared by every module. */
#ifndef UNA_COMMON_H
#define UNA_COMMON_H

#define GC_THREADS 1
#include <gc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

/* GC-managed allocation: NEW for IR nodes (scanned), NEW_ATOMIC for data
   that holds no pointers (never scanned). Both return zeroed memory. */
#define NEW(T) ((T *)una_alloc(sizeof(T)))
#define NEW_ARRAY(T, n) ((T *)una_alloc(sizeof(T) * (size_t)(n)))

void *una_alloc(size_t size);        /* GC_MALLOC; when it fails, una_out_of_memory */

/* After GC_INIT: the collector's heap starts at UNA_GC_INITIAL_HEAP bytes
   (unless GC_INITIAL_HEAP_SIZE says otherwise). A collection marks every
   object a session holds (its terms, plans, derived functions), and the
   collector starts one after allocating about a third of its heap: with
   the default small heap, a loop making arrays of 10^4 reals collected
   every few steps (GradBench's ode: 47% of its time in the collector,
   5.7 ms; 2.4 ms with this heap). Pages are touched only when used. */
#define UNA_GC_INITIAL_HEAP ((size_t)64 << 20)
void una_gc_reserve(void);
/* Touches most of the free heap's pages once (one object written and
   given back), so that the arrays made later do not each fault their
   fresh pages in, which a first collection would otherwise be needed to
   end: for a process that serves many timed calls (`--gradbench`); it
   costs a pass over the heap at start. */
void una_gc_prefault(void);
char *una_strdup(const char *s);
char *una_strndup(const char *s, size_t n);
char *una_sprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *una_vsprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Memory for compiler data exhausted: raises the error "out of memory
   for WHAT" (error.h; its span unknown, the session gives it the item
   being run's) when a handler is active, else ends as an internal error.
   what is a literal: nothing is allocated on the way. */
_Noreturn void una_out_of_memory(const char *what);
/* A test hook, as SQLite's and Lua's allocation-failure tests have: the
   n-th allocation from now of una_alloc and the string helpers in this
   thread fails (n >= 1), as if the heap were exhausted; n <= 0 turns it
   off. */
void una_alloc_fail_after(long n);

/* Internal invariants. A failed ASSERT is a bug in Una, never a user error. */
_Noreturn void una_internal_error(const char *file, int line, const char *what);
#define ASSERT(c) ((c) ? (void)0 : una_internal_error(__FILE__, __LINE__, #c))
#define UNREACHABLE() una_internal_error(__FILE__, __LINE__, "unreachable")

/* The shortest of %.15g, %.16g, %.17g that reads back to the same double;
   "inf", "-inf", "nan". buf must hold at least 32 bytes. */
void una_format_real(char *buf, size_t size, double x);

#define UNA_VERSION "0.1.0"

#endif
