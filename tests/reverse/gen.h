/* gen.h: a random generator of well-typed Una programs over the source
   language that grad supports, for the gradient tests (test_random.c).

   A program is a few helper defs h1, h2, ... and a def f whose result is R
   and whose parameters are R, [R], tuples of those, or B. Every array
   parameter of a def has the same length at run time (the harness gives all
   of them one length), and the generator only combines arrays (map2) whose
   lengths are equal by construction. Values are kept in the domains of the
   partial functions (log and sqrt of positive terms, division by 1 + e^2),
   reduce gets associative operators with their units, and max/min
   reductions are combined with a finite term so that empty arrays give
   finite results. Everything is deterministic from the seed: the generator
   has its own PRNG. */
#ifndef UNA_TEST_GEN_H
#define UNA_TEST_GEN_H

#include <stdbool.h>
#include <stdint.h>

/* A small, fast, seedable PRNG (splitmix64), shared with the harness. */
typedef struct GenRng {
  uint64_t s;
} GenRng;

GenRng gen_rng(uint64_t seed);
uint64_t gen_next(GenRng *r);
/* Uniform in [0, 1). */
double gen_unit(GenRng *r);
/* Uniform integer in [0, n), n > 0. */
int gen_below(GenRng *r, int n);

typedef struct GenOptions {
  int size;        /* node budget per def (default 40) */
  int depth;       /* maximum expression depth (default 5) */
  int max_helpers; /* helper defs before f (default 2) */
  int max_params;  /* parameters per def (default 3) */
  bool prelude;    /* may call prelude functions (sum, prod, dot, ...) */
  bool nested;     /* array operations inside lambda bodies */
  bool v2;         /* also the language-2 constructs that only the UNF path
                      differentiates: indexing and gathers, slices, for and
                      while loops (scalar and tuple state), scanl/scanr,
                      shift1L/shift1R, map3, zip/unzip, concat, transpose,
                      reduce_by_index, tuple accumulators (off by default:
                      the programs of existing seeds do not change) */
  bool deriv;      /* also derivative operators inside the program: grad,
                      jvp, vjp and value_and_grad of lambdas over R and
                      over [R], with free variables and nested to any depth
                      (off by default, for the same reason) */
} GenOptions;

/* The defaults above (prelude and nested on, v2 off). */
GenOptions gen_default_options(void);

/* The defaults with v2 on (test_random_v2.c). Every index and slice is in
   bounds for every length of the array parameters, 0 included: indices
   come from iota (length a) (and length a - 1 - i, floor (i / 2), i + 1
   into an array one longer), loop counters bounded by a length, or are
   guarded by `if length a > k`. */
GenOptions gen_v2_options(void);

/* A generated program: helper defs then `def f ...`, one def per line
   (each def's body on the following indented line), ending in a newline. */
typedef struct GenProgram {
  char *text;
  const char *fname; /* always "f" */
  uint64_t seed;
} GenProgram;

/* The program for seed (the same text for the same seed and options). */
GenProgram gen_program(uint64_t seed, const GenOptions *o);

#endif
