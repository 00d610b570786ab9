/* bench_util.h: what the benchmarks' drivers share (grad_scale, cpu, gpu):
   the clock, the memory gauge, the median, and reading the flat JSON
   lines that the peers' scripts (peers.py, peers_gpu.py) print. */
#ifndef UNA_BENCH_UTIL_H
#define UNA_BENCH_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..k) (k > 0); sorts v. */
static inline double median(double *v, int k) {
  qsort(v, (size_t)k, sizeof *v, cmp_double);
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* The string value of "key" in a flat JSON object line, copied into buf
   (escapes dropped); false when absent or not a string. */
static inline bool json_str(const char *line, const char *key, char *buf, size_t size) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(line, pat);
  if (!p) return false;
  p += strlen(pat);
  while (*p == ' ') p++;
  if (*p != '"') return false;
  p++;
  size_t k = 0;
  for (; *p && *p != '"'; p++) {
    if (*p == '\\' && p[1]) p++;
    if (k + 1 < size) buf[k++] = *p;
  }
  buf[k] = '\0';
  return true;
}

/* The number value of "key" in a flat JSON object line; NAN when absent. */
static inline double json_num(const char *line, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(line, pat);
  if (!p) return NAN;
  char *end;
  double x = strtod(p + strlen(pat), &end);
  return end == p + strlen(pat) ? NAN : x;
}

#endif
