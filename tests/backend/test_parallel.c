/* test_parallel.c: the number of threads (backend/parallel.c) follows the
   cores the process may run on, its affinity mask, not the machine's. */
#include <check.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../backend/parallel.h"
#include "../suites.h"

/* In a child process pinned to one core (as `taskset -c N` or GradBench's
   runner does), with UNA_THREADS unset: one thread. */
START_TEST(threads_follow_the_affinity_mask) {
  cpu_set_t all;
  ck_assert_int_eq(sched_getaffinity(0, sizeof all, &all), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
    if (CPU_ISSET(c, &all)) first = c;
  ck_assert_int_ge(first, 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    unsetenv("UNA_THREADS");
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(100);
    _exit(cpu_threads());
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 1);
}
END_TEST

Suite *suite_parallel(void) {
  Suite *s = suite_create("parallel");
  TCase *tc = tcase_create("parallel");
  tcase_add_test(tc, threads_follow_the_affinity_mask);
  suite_add_tcase(s, tc);
  return s;
}
