/* testlib.h: helpers shared by the Check suites (tl_*): the session
   fixture; running, checking and evaluating Una text; capturing what a
   session prints; values (bitwise comparison, deep copies, their reals,
   inner products); central finite differences and relative comparisons;
   walks over terms (sizes, counts, binders); and running code on a thread
   with a large stack. Failures are reported through Check (ck_abort_msg),
   so these are for test code only. */
#ifndef UNA_TEST_TESTLIB_H
#define UNA_TEST_TESTLIB_H

#include <check.h>

#include "../backend/exec.h"
#include "../backend/value.h"
#include "../frontend/repl/session.h"
#include "../frontend/ir/term.h"

/* ---- sessions ---- */

/* The session of the fixture tl_setup / tl_teardown. */
extern Session *tl_session;

/* Fixture setup: tl_session is a fresh session writing to temporary files,
   with the prelude loaded. The sessions made here re-check the program
   after every optimizer pass (Session.check_passes). */
void tl_setup(void);

/* Fixture setup as tl_setup, without the prelude. */
void tl_setup_bare(void);

/* Fixture teardown: closes tl_session's temporary files. */
void tl_teardown(void);

/* What one run printed. */
typedef struct TlRun {
  bool ok;   /* fe_session_run_text's result */
  char *out; /* what went to s->out */
  char *err; /* what went to s->err */
} TlRun;

/* Runs text in s as the file "t.una", capturing what it prints to s->out
   and s->err; s's streams are restored afterwards. */
TlRun tl_capture(Session *s, const char *text, bool stop_on_error);

/* Runs text in s as tl_capture does, with s->out and s->err going to one
   stream (to see their order); returns what was printed. */
char *tl_capture_merged(Session *s, const char *text, bool stop_on_error);

/* Runs text (defs, lets, expressions) in s; it must succeed: a failure
   fails the test with the error text. */
void tl_run_in(Session *s, const char *text);

/* Runs text in tl_session as tl_run_in does. */
void tl_run(const char *text);

/* A fresh session with the prelude loaded and text run in it (which must
   succeed, as in tl_run_in). */
Session *tl_session_with(const char *text);

/* The def named name in s; fails the test when there is none. */
Def *tl_def(Session *s, const char *name);

/* The expression text (file "t.una", at 1:1) parsed and checked in s, as
   a Def without parameters. Raises FeError on a syntax or type error. */
Def *tl_check_in(Session *s, const char *text);

/* tl_check_in on tl_session. */
Def *tl_check(const char *text);

/* d with its derivative operators expanded (deriv_expand, the derived
   functions optimized by opt_derived). */
Def *tl_expand(Def *d);

/* The value of the expression text in s; a raised error fails the test
   ("TEXT: ERROR"). */
Value tl_ev_in(Session *s, const char *text);

/* tl_ev_in on tl_session. */
Value tl_ev(const char *text);

/* tl_ev in the context ex (backend/exec.h). */
Value tl_ev_with(const Exec *ex, const char *text);

/* The default context with the monoid loops and the block kernels on or
   off (both off: every lambda on the generic path). */
Exec tl_exec_paths(bool monoid, bool kernel);

/* f applied to args; a raised error fails the test ("NAME: ERROR"). */
Value tl_call(const Def *f, const Value *args);

/* Arguments for n parameters from the value v: v itself when n == 1,
   else the n items of the tuple v. */
Value *tl_args(Value v, int n);

/* ---- values ---- */

/* Bitwise equality of values (nan equals nan, closures by val_equal); with
   same_boxing, arrays must also agree in their representation (boxed or
   not). */
bool tl_same_bits(Value a, Value b, bool same_boxing);

/* tl_same_bits (boxing ignored) except that +0 matches -0: the optimizer
   may change the sign of a zero (x + 0 -> x when x is -0), as algebraic
   simplifiers in other compilers do; every other value is kept exactly. */
bool tl_same_optimized(Value a, Value b);

/* A deep copy of v: tuples and arrays are fresh, so their reals may be
   changed without touching v. */
Value tl_copy_value(Value v);

/* The number of reals in v: 1 for a real, the elements of an unboxed
   array, the sum over a tuple's items; 0 for anything else. */
int tl_nreals(Value v);

/* A pointer to the k-th real of *v, in the order tl_nreals counts them;
   fails the test when there is none. */
double *tl_real_at(Value *v, int k);

/* The inner product <z, y> of two values of the same ground type (R, [R],
   tuples of those). */
double tl_vdot(Value z, Value y);

/* The central finite difference (f(x + h) - f(x - h)) / 2h, h = 1e-5
   max(1, |x|), of f at args along real k of parameter p (args[p] is
   restored). The function differentiated is f itself, whose result must be
   a real, when z is NULL, else <*z, f>. */
double tl_fd(const Def *f, Value *args, int p, int k, const Value *z);

/* True when got is within relative rel of the reference want:
   |got - want| <= rel max(1, |want|). */
bool tl_near(double got, double want, double rel);

/* True when a and b are within relative rel of each other: a == b, or
   |a - b| <= rel max(1, |a|, |b|). */
bool tl_near_sym(double a, double b, double rel);

/* ---- terms ---- */

/* Calls visit on every node of t (kids, lambda bodies and combinator
   functions included), parents first; long chains through the last kid
   (let bodies) take no C stack. */
void tl_walk(const Term *t, void (*visit)(const Term *node, void *ud), void *ud);

/* The number of nodes of t. */
long tl_term_size(const Term *t);

/* The number of nodes of t of kind k (and, for T_PRIM, of builtin prim;
   prim -1: any). */
int tl_count_kind(const Term *t, TermKind k, int prim);

/* A growing list of symbols. */
typedef struct TlSyms {
  Sym **v;
  int n, cap;
} TlSyms;

/* Appends every binder of t (let, let-tuple and lambda parameters) to
   *out, in the order tl_walk visits them. */
void tl_binders(const Term *t, TlSyms *out);

/* Fails the test ("binder NAME bound twice") when a symbol is bound more
   than once in t. */
void tl_assert_bound_once(const Term *t);

/* ---- threads ---- */

/* Runs fn(arg) on a new thread with a stack of the given size (the stack
   guard set up for it, fe_stack_init, less a 64 KiB margin) and waits for
   it. fn must not call the Check assertions. */
void tl_on_stack(size_t stack, void (*fn)(void *arg), void *arg);

#endif
