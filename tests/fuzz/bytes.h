/* bytes.h: the byte-level modes of the fuzzer (tests/fuzz/README.md,
   "Byte-level fuzzing of sessions"): mutants of a seed corpus run as
   sessions (session_input.h), one input replayed, and a failing input
   reduced (reduce.h) with each candidate replayed in a child process, so
   that a crash is seen as one. */
#ifndef UNA_FUZZ_BYTES_H
#define UNA_FUZZ_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct FzBytes {
  const char *corpus;   /* the seed files' folder */
  const char *replay;   /* --replay FILE: one input */
  const char *minimize; /* --minimize FILE: reduce a failing input */
  bool here;            /* run in the current folder, not a private one */
  double budget;        /* seconds per input */
  double seconds;       /* the run's time, when count < 0 */
  long count;           /* inputs, or -1 */
  uint64_t seed;
  char *base;           /* the stack's base and usable size */
  size_t stack;
} FzBytes;

/* Runs the mode a asks for; the process's exit status: 0 when every
   input passed, 1 on a failure (reported on stdout), 2 on bad usage. */
int fz_bytes(const FzBytes *a);

#endif
