
/* the lambda at t.una:8:36 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r3 = p1 * 0.25;
  double r4 = p0 - r3;
  return r4;
}

/* scanr at t.una:8:30 */
#define SRC(j_) (L0[(j_)])
#define OP(a, b) una_f0((b), (a))
extern "C" __global__ void una_scanr_seq_0(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double acc = v;
  out[n] = acc;
  for (long long j = n - 1; j >= 0; j--) {
    acc = OP(acc, SRC(j));
    out[j] = acc;
  }
}
#undef SRC
#undef OP
