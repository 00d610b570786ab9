/* corpus.h: the programs whose gradients the tests check (the paper's
   examples and the pitfalls): test_gradcheck.c holds them against
   finite differences and the direct path, test_cost.c against theorem 5.4. */
#ifndef UNA_TEST_CORPUS_H
#define UNA_TEST_CORPUS_H

#include <stdbool.h>

typedef struct GcCase {
  const char *name;
  const char *src; /* defs; the function under test is f */
  const char *wrt; /* NULL: every non-B parameter */
  bool unf_only;   /* a construct the direct path does not cover */
} GcCase;

extern const GcCase gc_corpus[];
extern const int gc_ncorpus;

#endif
