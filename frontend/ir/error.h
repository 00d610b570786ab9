/* error.h: source spans, located errors raised with longjmp, the stack guard
   and the interrupt flag. Every user-facing error is an FeError value: a span
   and a message, printed as FILE:LINE:COL: error: MESSAGE. Nothing below the
   command line calls exit(). */
#ifndef UNA_ERROR_H
#define UNA_ERROR_H

#include "common.h"
#include <setjmp.h>
#include <signal.h>

typedef struct Span {
  const char *file; /* "<repl>", "<-e>", "<prelude>" or a path */
  int line, col;    /* 1-based; 0 when unknown */
} Span;

static inline Span fe_span(const char *file, int line, int col) {
  Span s = {file, line, col};
  return s;
}
extern const Span fe_nospan;

typedef struct FeError {
  Span span;
  const char *msg;
} FeError;

/* A handler frame. Usage:
     FeTry t;
     if (fe_try(&t)) { ...work...; fe_untry(&t); }
     else { ...t.err holds the error; the frame is already popped... }
   fe_try must be a macro so that setjmp runs in the caller's frame. */
typedef struct FeTry {
  jmp_buf jb;
  struct FeTry *prev;
  FeError err;
} FeTry;

void fe_try_push(FeTry *t);
#define fe_try(t) (fe_try_push(t), setjmp((t)->jb) == 0)
void fe_untry(FeTry *t);

/* Raise a located error; jumps to the innermost fe_try. */
_Noreturn void fe_error(Span s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How many errors whose format begins with "internal" (a broken
   invariant reported as an error: a pass's output that fails its
   re-check) fe_error has raised in this process: what the fuzzers look
   for, since the text of a message may quote the user's input. */
long fe_internal_errors(void);
_Noreturn void fe_raise(FeError e);

/* "\nFILE:LINE:COL: note: TEXT": a line to append to an error's message,
   located at s (a hint for a slip from another language; a traceback's
   calls use the same form). */
char *fe_note(Span s, const char *text);

/* "FILE:LINE:COL: error: MSG" (or "FILE: error: MSG" without a line). */
char *fe_error_text(FeError e);
void fe_error_print(FILE *out, FeError e);

/* Stack guard: deep recursion (200,000 nested parentheses, a long chain of
   operators) becomes an error instead of a crash. fe_stack_init records the
   current thread's stack bounds; fe_stack_check raises when less than a
   safety margin remains. Recursive functions of every pass call it. */
void fe_stack_init(void *base, size_t size);
void fe_stack_check(Span s);

/* Ctrl-C sets this flag; long-running loops poll it with fe_poll_interrupt,
   which raises "interrupted" at the given span. */
extern volatile sig_atomic_t fe_interrupted;
void fe_poll_interrupt(Span s);

/* A run-time error found where raising is not possible (a compiled kernel,
   maybe on a worker thread): recorded (the first one only, without
   allocating) and raised by the next fe_poll_interrupt, which calls
   raise(s, a, b) instead of raising "interrupted". Every parallel loop
   polls when it ends and cpu_call_in when a call returns, so a fault is
   raised before the value it spoiled is used. fe_fault_clear forgets a
   fault left over from an evaluation that failed otherwise. */
typedef void (*FeFaultFn)(Span s, double a, double b);
void fe_fault(Span s, FeFaultFn raise, double a, double b);
void fe_fault_clear(void);

/* Deterministic faults in parallel loops: the chunk runner ranks the
   calling thread's work (chunk c has rank c + 1; 0 outside chunks, the
   previous rank returned) and, of several faults, the lowest rank's is
   raised. Chunk loops poll fe_stopping instead of fe_interrupted: true on
   Ctrl-C, or on a fault of a rank up to the caller's, so the chunks before
   a fault run on and a fault of theirs replaces it. */
size_t fe_fault_rank(size_t rank);
bool fe_stopping_slow(void);
static inline bool fe_stopping(void) { return fe_interrupted && fe_stopping_slow(); }

/* True for the error una_out_of_memory (common.h) raised: the compiler's
   memory ran out, not a fault of the program or of a pass. */
bool una_is_out_of_memory(FeError e);

#endif
