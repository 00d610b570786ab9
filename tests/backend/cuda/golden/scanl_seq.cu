
/* the lambda at t.una:7:35 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r3 = p0 * 0.5;
  double r4 = r3 + p1;
  return r4;
}

/* scanl at t.una:7:29 */
#define SRC(j_) (L0[(j_)])
#define OP(a, b) una_f0((a), (b))
extern "C" __global__ void una_scanl_seq_0(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  __shared__ double una_t[UNA_TILE];
  double acc = v;
  if (threadIdx.x == 0) out[0] = acc;
  for (long long base = 0; base < n; base += UNA_TILE) {
    int m = n - base < UNA_TILE ? (int)(n - base) : UNA_TILE;
    for (int i = threadIdx.x; i < m; i += UNA_BLOCK) una_t[i] = SRC(base + i);
    __syncthreads();
    if (threadIdx.x == 0)
      for (int i = 0; i < m; i++) {
        acc = OP(acc, una_t[i]);
        una_t[i] = acc;
      }
    __syncthreads();
    for (int i = threadIdx.x; i < m; i += UNA_BLOCK) out[base + i + 1] = una_t[i];
    __syncthreads();
  }
}
#undef SRC
#undef OP
