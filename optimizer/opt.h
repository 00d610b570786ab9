/* opt.h: the optimizer: partial evaluation (paper section 5.1) and the
   rules of figure 12, as pure passes over Terms run to a fixpoint.

   A pass is a pure function Term -> Term: it never mutates its input and
   returns its input itself when it changes nothing (so the pipeline can
   detect the fixpoint by pointer). Passes never change a well-typed
   program's value or its errors: a let whose right-hand side may raise a
   run-time error (map2 of arrays of unknown lengths, iota/replicate/rand
   sizes, load, save) or has an effect (save) is never dropped, and IEEE
   arithmetic is respected (0 * e is not 0 when e may be inf or nan). */
#ifndef UNA_OPT_H
#define UNA_OPT_H

#include "../frontend/ir/term.h"

typedef Term *(*OptPassFn)(const Term *t);

/* What a term holds that a pass may act on (opt_features); a pass whose
   needs the term lacks has nothing to do and is not run. */
enum {
  OPT_HAS_ARRAYS = 1, /* an array builtin, an array literal, or a builtin with a function argument */
  OPT_HAS_PROJ = 2,   /* a projection or a tuple pattern */
  OPT_HAS_CALLS = 4,  /* a call of a function (it may raise); opt_features may leave it out when arrays are there */
};

typedef struct OptPass {
  const char *name; /* for --dump-after=NAME */
  OptPassFn run;
  unsigned needs; /* OPT_HAS_* bits, any of which the term must have; 0: always runs */
} OptPass;

/* The OPT_HAS_* bits of t. */
unsigned opt_features(const Term *t);

typedef struct OptOptions {
  bool enabled;           /* false with -O0 */
  const char *dump_after; /* a pass name, "all", or NULL */
  FILE *dump;             /* where dumps go (stderr by default) */
  int max_rounds;         /* bound on the fixpoint iteration (0: default) */
  /* Re-checks the program (fe_retype) after every pass, as test builds do
     (the tests, una --check-passes): a pass that breaks the program's
     types or scopes raises "internal: after optimizer pass 'NAME': ..." at
     once, naming itself. */
  bool check_passes;
  /* The passes of the fixpoint, in order, instead of opt_passes (NULL:
     opt_passes); the tests inject passes through it. */
  const OptPass *passes;
  int npasses;
} OptOptions;

/* The passes, in pipeline order (optimizer/pipeline.c). */
extern const OptPass opt_passes[];
extern const int opt_npasses;
/* The passes run once after the fixpoint (sink). */
extern const OptPass opt_final_passes[];
extern const int opt_nfinal_passes;

/* The pass named name, or NULL. */
const OptPass *opt_find_pass(const char *name);

/* A copy of d with its body optimized: the pipeline run to a fixpoint (at
   most max_rounds rounds), then the final passes, and slots reassigned
   (d itself when the optimizer is disabled or changes nothing). Raises
   FeError only under check_passes, for a pass that breaks d. */
Def *opt_optimize_def(const Def *d, const OptOptions *o);

#endif
