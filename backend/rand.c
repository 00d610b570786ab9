/* rand.c: `rand n seed`, a counter-based generator, so that every element is
   computed independently (on a GPU too) and the numbers are the same on
   every platform and backend:

     mix(x)  = splitmix64's finaliser (uint64 arithmetic, wrapping):
               z = x; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
               z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31)
     key     = mix(bits(seed)), bits = the IEEE-754 bit pattern of the double
               seed, with -0 taken as +0
     elem i  = (mix(key + (i + 1) * 0x9E3779B97F4A7C15) >> 11) * 2^-53
               for i = 0, 1, ...: a multiple of 2^-53 in [0, 1)            */
#include "rand.h"
#include <string.h>

uint64_t cpu_rand_mix(uint64_t x) {
  uint64_t z = x;
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

uint64_t cpu_rand_key(double seed) {
  if (seed == 0) seed = 0.0; /* -0 -> +0 */
  uint64_t bits;
  memcpy(&bits, &seed, sizeof bits);
  return cpu_rand_mix(bits);
}

double cpu_rand_at(uint64_t key, uint64_t i) {
  uint64_t z = cpu_rand_mix(key + (i + 1) * UINT64_C(0x9E3779B97F4A7C15));
  return (double)(z >> 11) * 0x1p-53;
}

void cpu_rand_fill(double *out, size_t n, double seed) {
  uint64_t key = cpu_rand_key(seed);
  for (size_t i = 0; i < n; i++) out[i] = cpu_rand_at(key, (uint64_t)i);
}
