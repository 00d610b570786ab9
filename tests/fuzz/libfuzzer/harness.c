/* harness.c: the libFuzzer entry points over session_input.h (`make
   fuzz-libfuzzer`, tests/fuzz/README.md). Each input runs in a fresh session
   (as a script or as typed at the REPL, session_input.h); an internal error or a session that no longer answers
   aborts, so that libFuzzer keeps the input as a crash, as it does for
   the crashes and sanitizer reports themselves. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../session_input.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* the inputs run on this thread's stack, below this frame: 8 MiB less
     room for the sanitizers' larger frames */
  char here;
  fuzz_session_init(&here, (size_t)6 << 20, false);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* how the input runs (as a script or as typed, a dump stage, -O0)
     follows from its bytes, so that libFuzzer's replays repeat it */
  uint64_t mode = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < size; i++) mode = (mode ^ data[i]) * 1099511628211ull;
  char *report = fuzz_session_input((const char *)data, size, 2.0, mode);
  if (report) {
    fprintf(stderr, "una fuzz: %s\n", report);
    abort();
  }
  return 0;
}
