/* harness.c: the libFuzzer entry points over session_input.h (`make
   fuzz-libfuzzer`, tests/fuzz/README.md). Each input is run as a script in
   a fresh session; an internal error or a session that no longer answers
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
  char *report = fuzz_session_input((const char *)data, size, 2.0);
  if (report) {
    fprintf(stderr, "una fuzz: %s\n", report);
    abort();
  }
  return 0;
}
