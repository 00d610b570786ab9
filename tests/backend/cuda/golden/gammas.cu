
/* the lambda at <prelude>:5:31 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r2 = p0 + p1;
  return r2;
}

/* the lambda at t.una:15:36 */
__device__ __forceinline__ double una_f1(double p0, double p1) {
  double r2 = lgamma(p0);
  double r3 = una_digamma(p0);
  double r4 = r2 + r3;
  return r4;
}

/* reduce at <prelude>:5:24 */
#define SRC(j_) (una_f1(L0[(j_)], 0.0))
#define OP(a, b) una_f0((a), (b))
/* launch a: grid-stride partial folds, one per block, into out */
extern "C" __global__ void una_reduce_0_a(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  double acc = 0.0;
  int has = 0;
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK) {
    double x = SRC(j);
    acc = has ? OP(acc, x) : x;
    has = 1;
  }
  UNA_BLOCK_REDUCE(acc, has);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
/* launch b, one block: the n partials in aux folded, then v OP them, into out[0] */
extern "C" __global__ void una_reduce_0_b(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  double acc = 0.0;
  int has = 0;
  for (long long j = threadIdx.x; j < n; j += UNA_BLOCK) {
    acc = has ? OP(acc, aux[j]) : aux[j];
    has = 1;
  }
  UNA_BLOCK_REDUCE(acc, has);
  if (threadIdx.x == 0) out[0] = has ? OP(v, acc) : v;
}
#undef SRC
#undef OP
