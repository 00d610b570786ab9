/* reduce.h: the fuzzer's test-case reducer. A failing input is cut down,
   by deleting lines, simplifying parenthesised groups and deleting
   tokens, to a smaller text that still fails the same way (the caller's
   predicate says what that is): delta debugging (Zeller's ddmin) over
   lines and tokens, and a pass that knows Una's parentheses. */
#ifndef UNA_FUZZ_REDUCE_H
#define UNA_FUZZ_REDUCE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether text[0..n) still fails as the original did. */
typedef bool (*FzFails)(const char *text, size_t n, void *ud);

typedef struct FzReduceStats {
  long tries;     /* predicate calls */
  size_t from, to; /* bytes before and after */
} FzReduceStats;

/* The smallest text found from text[0..n) (itself when nothing smaller
   fails) within max_tries predicate calls and max_s seconds; its length
   in *n_out. Each candidate is strictly shorter than the text it
   replaces, so the reduction ends. */
char *fz_reduce(const char *text, size_t n, FzFails fails, void *ud, long max_tries, double max_s,
                size_t *n_out, FzReduceStats *st);

/* Writes data[0..n) to path (a reproducer, or the input being run);
   false when it cannot. */
bool fz_keep(const char *path, const char *data, size_t n);

/* The bytes of path (at most 1 MiB, NUL-terminated) and their count in
   *n; NULL when it cannot be read. */
char *fz_read(const char *path, size_t *n);

#endif
