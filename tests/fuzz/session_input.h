/* session_input.h: one input of the byte-level fuzzers (the standalone
   driver's --bytes mode and the libFuzzer harness): arbitrary bytes run as
   a script in a fresh session, the way `una FILE` and the REPL run text. */
#ifndef UNA_FUZZ_SESSION_INPUT_H
#define UNA_FUZZ_SESSION_INPUT_H

#include <stdbool.h>
#include <stddef.h>

/* Once per process, before the first input: the collector, the stack
   bound (base is an address in the caller's frame, stack the usable
   size below it), with private_dir a private working directory (so that
   a mutated relative `save` writes nowhere else; libFuzzer, which keeps
   its corpus at relative paths, runs without) and, outside sanitizer
   builds, a bound on the address space (so that a mutated size fails as
   an allocation error, not by exhausting the machine). */
void fuzz_session_init(char *base, size_t stack, bool private_dir);

/* Runs data[0..n) as a script (errors do not stop it: every item runs) in
   a fresh session with the prelude, values thrown away, interrupted after
   budget_s seconds as Ctrl-C would; then checks that the session
   survived: `1 + 1` must still print 2. Returns NULL, or a report: an
   internal error (fe_internal_errors), or a session that no longer
   answers. A crash is the caller's to see. */
char *fuzz_session_input(const char *data, size_t n, double budget_s);

/* What the inputs run so far did: how many printed no error at all, and
   how many were interrupted by their budget. */
typedef struct FuzzSessionStats {
  long inputs, clean, interrupted;
} FuzzSessionStats;
extern FuzzSessionStats fuzz_session_stats;

#endif
