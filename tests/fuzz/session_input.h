/* session_input.h: one input of the byte-level fuzzers (the standalone
   driver's --bytes mode and the libFuzzer harness): arbitrary bytes run as
   a script in a fresh session, the way `una FILE` and the REPL run text. */
#ifndef UNA_FUZZ_SESSION_INPUT_H
#define UNA_FUZZ_SESSION_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Once per process, before the first input: the collector, the stack
   bound (base is an address in the caller's frame, stack the usable
   size below it), with private_dir a private working directory (so that
   a mutated relative `save` writes nowhere else; libFuzzer, which keeps
   its corpus at relative paths, runs without), `save` kept below the
   current directory (UNA_SAVE_LOCAL: no absolute path, no ..) and, outside sanitizer
   builds, a bound on the address space (so that a mutated size fails as
   an allocation error, not by exhausting the machine). */
void fuzz_session_init(char *base, size_t stack, bool private_dir);

/* Runs data[0..n) in a fresh session with the prelude, values thrown
   away, interrupted after budget_s seconds as Ctrl-C would; then checks
   that the session survived: `1 + 1` must still print 2. mode (the
   input's seed) picks how it runs: as a script (errors do not stop it:
   every item runs) in 3 of 4 inputs, else line by line through the
   REPL's line discipline (repl_lines.h) as typed at the prompt; and in 1
   of 8 with a --dump-after stage (a pass, plan or all), in 1 of 8
   unoptimized (-O0). Returns NULL, or a report: an internal error
   (fe_internal_errors), or a session that no longer answers. A crash is
   the caller's to see. */
char *fuzz_session_input(const char *data, size_t n, double budget_s, uint64_t mode);

/* What the inputs run so far did: how many printed no error at all, and
   how many were interrupted by their budget. */
typedef struct FuzzSessionStats {
  long inputs, clean, interrupted;
  long repl, dumped, unoptimized; /* how they ran (fuzz_session_input) */
} FuzzSessionStats;
extern FuzzSessionStats fuzz_session_stats;

#endif
