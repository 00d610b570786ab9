/* bench_util.h: the clock and the memory gauge shared by the benchmarks
   (grad_scale, cpu). */
#ifndef UNA_BENCH_UTIL_H
#define UNA_BENCH_UTIL_H

#include <sys/resource.h>
#include <time.h>

/* A monotonic clock in milliseconds. */
static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* The process's peak resident memory in MB. */
static inline double peak_rss_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
}

#endif
