/* error.c: the handler stack for located errors, the stack guard, and the
   interrupt flag. */
#include "error.h"
#include <stdarg.h>
#include <stdatomic.h>

const Span fe_nospan = {NULL, 0, 0};
volatile sig_atomic_t fe_interrupted = 0;

static _Thread_local FeTry *top;
static _Thread_local uintptr_t stack_low; /* lowest usable address; 0 = unknown */

void fe_try_push(FeTry *t) {
  t->prev = top;
  t->err.span = fe_nospan;
  t->err.msg = NULL;
  top = t;
}

void fe_untry(FeTry *t) {
  ASSERT(top == t);
  top = t->prev;
}

void fe_raise(FeError e) {
  FeTry *t = top;
  if (!t) {
    fe_error_print(stderr, e);
    una_internal_error(__FILE__, __LINE__, "error raised outside any handler");
  }
  top = t->prev;
  t->err = e;
  longjmp(t->jb, 1);
}

static _Thread_local char oom_msg[96];

bool una_is_out_of_memory(FeError e) { return e.msg == oom_msg; }

void una_out_of_memory(const char *what) {
  char *msg = oom_msg;
  snprintf(msg, sizeof oom_msg, "out of memory for %s", what);
  if (!top) una_internal_error(__FILE__, __LINE__, msg);
  FeError e = {fe_nospan, msg};
  fe_raise(e);
}

static atomic_long internal_errors;

long fe_internal_errors(void) { return atomic_load(&internal_errors); }

void fe_error(Span s, const char *fmt, ...) {
  if (strncmp(fmt, "internal", 8) == 0) atomic_fetch_add(&internal_errors, 1);
  va_list ap;
  va_start(ap, fmt);
  FeError e = {s, una_vsprintf(fmt, ap)};
  va_end(ap);
  fe_raise(e);
}

char *fe_note(Span s, const char *text) {
  const char *file = s.file ? s.file : "una";
  if (s.line > 0) return una_sprintf("\n%s:%d:%d: note: %s", file, s.line, s.col, text);
  return una_sprintf("\n%s: note: %s", file, text);
}

char *fe_error_text(FeError e) {
  const char *file = e.span.file ? e.span.file : "una";
  if (e.span.line > 0)
    return una_sprintf("%s:%d:%d: error: %s", file, e.span.line, e.span.col, e.msg);
  return una_sprintf("%s: error: %s", file, e.msg);
}

void fe_error_print(FILE *out, FeError e) {
  fprintf(out, "%s\n", fe_error_text(e));
  fflush(out);
}

/* Keep this much stack free for error reporting and library calls. */
#define STACK_MARGIN ((size_t)256 * 1024)

void fe_stack_init(void *base, size_t size) {
  uintptr_t b = (uintptr_t)base;
  stack_low = size > 2 * STACK_MARGIN ? b - size + STACK_MARGIN : 0;
}

void fe_stack_check(Span s) {
  char probe;
  if (stack_low && (uintptr_t)&probe < stack_low)
    fe_error(s, "expression nested too deeply");
}

/* The pending fault: 0 none, 2 recorded, with the rank of the chunk that
   recorded it (fe_fault_rank). The lowest rank wins, so a parallel loop
   with several faults reports the one a sequential run would meet first,
   whichever thread gets there first; the lock guards the record. */
static atomic_int fault_state;
static atomic_flag fault_lock = ATOMIC_FLAG_INIT;
static _Thread_local size_t rank_here; /* 0: outside any chunk */
static struct {
  Span span;
  FeFaultFn raise;
  double a, b;
  atomic_size_t rank;
} fault;

static void lock_fault(void) {
  while (atomic_flag_test_and_set(&fault_lock)) {
  }
}

static void unlock_fault(void) { atomic_flag_clear(&fault_lock); }

size_t fe_fault_rank(size_t rank) {
  size_t old = rank_here;
  rank_here = rank;
  return old;
}

void fe_fault(Span s, FeFaultFn raise, double a, double b) {
  size_t r = rank_here;
  if (atomic_load(&fault_state) == 2 && atomic_load(&fault.rank) <= r) return; /* an earlier one wins */
  lock_fault();
  if (atomic_load(&fault_state) != 2 || r < atomic_load(&fault.rank)) {
    fault.span = s;
    fault.raise = raise;
    fault.a = a;
    fault.b = b;
    atomic_store(&fault.rank, r);
    atomic_store(&fault_state, 2);
  }
  unlock_fault();
  fe_interrupted = 1;
}

bool fe_stopping_slow(void) {
  if (atomic_load(&fault_state) != 2) return true; /* Ctrl-C */
  return atomic_load(&fault.rank) <= rank_here;    /* chunks before the fault's go on */
}

void fe_fault_clear(void) { atomic_store(&fault_state, 0); }

void fe_poll_interrupt(Span s) {
  if (fe_interrupted) {
    fe_interrupted = 0;
    if (atomic_load(&fault_state) == 2) {
      lock_fault();
      Span fs = fault.span;
      FeFaultFn raise = fault.raise;
      double a = fault.a, b = fault.b;
      atomic_store(&fault_state, 0);
      unlock_fault();
      raise(fs, a, b);
    }
    fe_error(s, "interrupted");
  }
}
