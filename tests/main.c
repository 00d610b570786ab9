/* main.c: the Check test runner: every suite listed in suites.def, one
   runner, CK_NORMAL output; exit status non-zero on any failure. */
#include "../frontend/ir/error.h"
#include "suites.h"
#include <sys/resource.h>

/* Under AddressSanitizer (make asan): no leak report at exit. Memory is
   collected by Boehm GC, and the tests' own small malloc'd buffers live
   until the forked test process ends, which LeakSanitizer would count as
   leaks and turn into failed tests. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

int main(void) {
  GC_INIT();
  /* Give the stack guard the main thread's stack, so that tests of deep
     nesting get "nested too deeply" rather than a crash. */
  char base;
  struct rlimit rl;
  size_t stack = (size_t)8 << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 0)
    stack = (size_t)rl.rlim_cur;
  fe_stack_init(&base, stack - ((size_t)256 << 10));

  SRunner *sr = srunner_create(NULL);
#define SUITE(name) srunner_add_suite(sr, suite_##name());
#include "suites.def"
#undef SUITE
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
