/* rand.h: the counter-based generator behind `rand n seed` (see rand.c). */
#ifndef UNA_RAND_H
#define UNA_RAND_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's finaliser. */
uint64_t cpu_rand_mix(uint64_t x);

/* The key of a seed: mix of the seed's IEEE-754 bits, -0 taken as +0. */
uint64_t cpu_rand_key(double seed);

/* Element i (0-based) of the stream of key: a double in [0, 1). */
double cpu_rand_at(uint64_t key, uint64_t i);

/* Fills out[0..n) with elements 0..n-1 of rand n seed. */
void cpu_rand_fill(double *out, size_t n, double seed);

#endif
