
/* the lambda at t.una:14:41 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r2 = p0 * p0;
  double r3 = p1 * p1;
  double r4 = r2 + r3;
  double r5 = p1 / r4;
  return r5;
}

/* the lambda at t.una:14:41 */
__device__ __forceinline__ double una_f1(double p0, double p1) {
  double r2 = p0 * p0;
  double r3 = p1 * p1;
  double r4 = r2 + r3;
  double r5 = p0 / r4;
  double r6 = -r5;
  return r6;
}

/* map2 at t.una:14:41 */
#define SRC(j_) (una_f0(L0[(j_)], L1[(j_)]))
extern "C" __global__ void una_map2_0(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0,
    const double *__restrict__ L1) {
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK)
    out[j] = SRC(j);
}
#undef SRC

/* map2 at t.una:14:41 */
#define SRC(j_) (una_f1(L0[(j_)], L1[(j_)]))
extern "C" __global__ void una_map2_1(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0,
    const double *__restrict__ L1) {
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK)
    out[j] = SRC(j);
}
#undef SRC
