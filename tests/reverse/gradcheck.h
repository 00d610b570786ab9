/* gradcheck.h: the gradient-check harness of the reverse-mode tests: a
   function's gradient on the UNF path against the direct path (relative
   1e-12) and against central finite differences (relative 1e-6), at random
   points with arrays of several lengths. */
#ifndef UNA_TEST_GRADCHECK_H
#define UNA_TEST_GRADCHECK_H

#include "../../backend/value.h"
#include "../../frontend/check.h"
#include "../../reverse/reverse.h"
#include "gen.h"

/* A program checked into a fresh environment. */
typedef struct GcProgram {
  const char *text;
  Env *env;
  Def *f;
} GcProgram;

/* Parses text (file name `file`), checks and binds every def in it (after
   the prelude's when prelude is set) in a fresh Env, and finds the def
   fname. Returns NULL and sets *err (the located error) on failure. */
GcProgram *gc_load(const char *file, const char *text, bool prelude, const char *fname, char **err);

typedef struct GcOptions {
  const int *lengths; /* array lengths, one per group of points (default 0, 1, 3, 7) */
  int nlengths;
  int points;         /* points per length (default 2) */
  double lo, hi;      /* reals are drawn uniformly from [lo, hi) (default -1.5, 1.5) */
  const int *wrt;     /* parameter indexes; NULL: every parameter with reals */
  int nwrt;
  bool lenient;       /* random programs: a point where f is not finite (or
                         beyond 1e30), or a component whose finite
                         differences are not finite or disagree between the
                         steps h, h/8 and h/64 (a jump or a kink nearby),
                         is skipped (and counted) instead of failing */
  bool no_direct;     /* skip the direct path */
  bool no_fd;         /* skip finite differences */
  /* how gradients are derived: rev_grad when NULL (the harness's own tests
     put a hand-written gradient here) */
  Def *(*derive)(const Def *f, const int *wrt, int nwrt, RevPath path, void *ud);
  void *derive_ud;
} GcOptions;

/* The defaults: lengths 0, 1, 3, 7, two points each, reals in [-1.5, 1.5). */
GcOptions gc_default_options(void);

/* Counts accumulated by gc_check (add-only, so one GcStats may collect many
   programs). */
typedef struct GcStats {
  long programs, points, points_skipped, components, fd_checked, fd_skipped;
  long nonzero; /* checked components whose gradient is not 0 */
  long fd_skipped_large; /* lenient points not differenced: |f(x)| > 1e12 */
  double derive_s, eval_s; /* seconds spent in rev_grad and in evaluation */
} GcStats;

/* Checks f's gradient in program text (see gc_load) at points drawn from
   seed: both paths derive a Def (each checked by fe_retype), both
   evaluate, their results agree at relative 1e-12 (with an absolute floor
   of 1e-12 times the largest component), have the shape of the
   parameters, and match central finite differences at relative 1e-6 with
   an absolute floor of 1e-9 max(1, |f(x)|). The finite differences are
   Richardson extrapolations of the steps h and h/2 (error O(h^4)), h =
   1e-3 max(1, |x|), retried with h/8 when they do not match. Returns NULL
   on success, else a report naming the program, seed, point, parameter and
   component. */
char *gc_check(const char *file, const char *text, const char *fname, uint64_t seed,
               const GcOptions *o, GcStats *st);

/* ---- building blocks, for tests that check exact values ---- */

/* The value of expression text in p's environment (raises FeError). */
Value gc_value(const GcProgram *p, const char *text);

/* Parameter indexes of p->f named in names ("x v"; NULL or "": every
   parameter with reals in its type) into wrt (room for p->f->nparams); returns the count, or -1
   for an unknown name. */
int gc_wrt(const GcProgram *p, const char *names, int *wrt);

/* The gradient of p->f (wrt names as gc_wrt) on path at the arguments
   written as Una expressions, printed as Una prints values; or "error: MSG"
   when deriving or evaluating raises. */
char *gc_grad_str(const GcProgram *p, const char *wrt_names, RevPath path, int nargs,
                  const char *const *args);

/* A random value of type t (ground types and B); arrays have length len. */
Value gc_random_value(GenRng *r, const Type *t, size_t len, double lo, double hi);

/* The central-difference derivative of f at args with respect to the real
   *x (which lies inside args), by Richardson extrapolation of the steps h
   and h/2; *x is restored. Raises FeError when f does. */
double gc_fd(const Def *f, const Value *args, double *x, double h);

#endif
