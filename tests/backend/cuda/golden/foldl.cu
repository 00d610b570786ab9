
/* the lambda at t.una:9:41 */
__device__ __forceinline__ double una_f0(double p0, double p1, double i2) {
  double r3 = p0 * i2;
  double r4 = r3 + p1;
  return r4;
}

/* foldl at t.una:9:35 */
#define SRC(j_) (L0[(j_)])
#define OP(a, b) una_f0((a), (b), f0_i2)
extern "C" __global__ void una_foldl_0(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0, double f0_i2) {
  __shared__ double una_t[UNA_TILE];
  double acc = v;
  for (long long base = 0; base < n; base += UNA_TILE) {
    int m = n - base < UNA_TILE ? (int)(n - base) : UNA_TILE;
    for (int i = threadIdx.x; i < m; i += UNA_BLOCK) una_t[i] = SRC(base + i);
    __syncthreads();
    if (threadIdx.x == 0)
      for (int i = 0; i < m; i++) {
        acc = OP(acc, una_t[i]);
      }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = acc;
}
#undef SRC
#undef OP
