
/* the lambda at t.una:15:32 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r2 = una_trigamma(p0);
  double r3 = una_digamma(p0);
  double r4 = r2 + r3;
  return r4;
}

/* map at t.una:15:32 */
#define SRC(j_) (una_f0(L0[(j_)], 0.0))
extern "C" __global__ void una_map_0(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK)
    out[j] = SRC(j);
}
#undef SRC
