
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
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double acc = v;
  out[0] = acc;
  for (long long j = 0; j < n; j++) {
    acc = OP(acc, SRC(j));
    out[j + 1] = acc;
  }
}
#undef SRC
#undef OP
