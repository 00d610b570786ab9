/* mutate.h: byte-level mutation of a seed corpus, for the standalone
   driver's --bytes mode (libFuzzer and AFL++ bring their own). */
#ifndef UNA_FUZZ_MUTATE_H
#define UNA_FUZZ_MUTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The seeds: every regular file of a directory, in name order. */
typedef struct Corpus {
  int n;
  char **names;
  char **data;
  size_t *len;
} Corpus;

/* Reads the files of dir (false when it cannot be read or holds none). */
bool corpus_load(Corpus *c, const char *dir);

/* A mutant of one seed picked by the random state *rng: 1 to 4 of the
   mutations libFuzzer makes (a byte erased, inserted, changed or repeated,
   a bit flipped, a run copied or moved, a splice with another seed) or an
   Una token of the dictionary (keywords, builtins, commands, literals at
   the edges: nan, 1e308, -0, 9007199254740993) inserted or put in place
   of a word. *len is set; the text is not NUL-terminated. *from is the
   seed's index. */
char *mutate(const Corpus *c, uint64_t *rng, size_t *len, int *from);

#endif
