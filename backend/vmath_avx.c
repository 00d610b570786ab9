/* vmath_avx.c: the 4-lane block loops of vmath.c's SLEEF functions (sin,
   cos, tan, tanh), built with -mavx (the Makefile) and called only where
   the processor has AVX; n is a multiple of 4. SLEEF's cinz functions use
   no FMA, so these give the bits of their one- and two-lane forms. */
#include "vmath.h"

#if defined(__AVX__)
#include <immintrin.h>

#define AVX_BLOCK1(NAME, F)                                                                      \
  void NAME(double *restrict d, const double *restrict a, int n) {                               \
    for (int i = 0; i < n; i += 4) _mm256_storeu_pd(d + i, F(_mm256_loadu_pd(a + i)));           \
  }
AVX_BLOCK1(cpu_sin_block_avx, Sleef_cinz_sind4_u10avx)
AVX_BLOCK1(cpu_cos_block_avx, Sleef_cinz_cosd4_u10avx)
AVX_BLOCK1(cpu_tan_block_avx, Sleef_cinz_tand4_u10avx)
AVX_BLOCK1(cpu_tanh_block_avx, Sleef_cinz_tanhd4_u10avx)

#endif
