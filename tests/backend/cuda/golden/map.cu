
/* the lambda at t.una:1:39 */
__device__ __forceinline__ double una_f0(double p0, double p1, double i2) {
  double r3 = p0 * i2;
  double r5 = r3 + 1.0;
  return r5;
}

/* map at t.una:1:35 */
#define SRC(j_) (una_f0(L0[(j_)], 0.0, f0_i2))
extern "C" __global__ void una_map_0(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0, double f0_i2) {
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK)
    out[j] = SRC(j);
}
#undef SRC
