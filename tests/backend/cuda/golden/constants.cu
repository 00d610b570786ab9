
/* the lambda at t.una:13:33 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r3 = (p0 > 0.10000000000000001) ? 1.0 : 0.0;
  double r6 = 1.0000000000000001e+300 * p0;
  double r7 = (r3 != 0.0) ? -0.0 : r6;
  return r7;
}

/* map at t.una:13:29 */
#define SRC(j_) (una_f0(L0[(j_)], 0.0))
extern "C" __global__ void una_map_0(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK)
    out[j] = SRC(j);
}
#undef SRC
