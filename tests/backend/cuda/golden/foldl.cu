
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
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double acc = v;
  for (long long j = 0; j < n; j++) acc = OP(acc, SRC(j));
  out[0] = acc;
}
#undef SRC
#undef OP
