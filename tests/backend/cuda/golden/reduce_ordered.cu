
/* the lambda at t.una:4:34 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r3 = (p1 != 0.0) ? 1.0 : 0.0;
  double r4 = (r3 != 0.0) ? p1 : p0;
  return r4;
}

/* the lambda at t.una:4:73 */
__device__ __forceinline__ double una_f1(double p0, double p1) {
  double r3 = p0 - 1.0;
  return r3;
}

/* reduce at t.una:4:27 */
#define SRC(j_) (una_f1(L0[(j_)], 0.0))
#define OP(a, b) una_f0((a), (b))
/* launch a: block b folds its share of the elements in order, each thread a
   run of them; the partial into out[b], whether it has one into out[gridDim.x + b] */
extern "C" __global__ void una_reduce_0_a(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  long long per = (n + gridDim.x - 1) / gridDim.x;
  long long lo = (long long)blockIdx.x * per, hi = lo + per < n ? lo + per : n;
  if (hi < lo) hi = lo;
  long long run = (hi - lo + UNA_BLOCK - 1) / UNA_BLOCK;
  long long j0 = lo + (long long)threadIdx.x * run, j1 = j0 + run < hi ? j0 + run : hi;
  double acc = 0.0;
  int has = 0;
  for (long long j = j0; j < j1; j++) {
    double x = SRC(j);
    acc = has ? OP(acc, x) : x;
    has = 1;
  }
  UNA_BLOCK_REDUCE(acc, has);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = acc;
    out[gridDim.x + blockIdx.x] = has;
  }
}
/* launch b, one block: the n partials in aux (aux[n + j]: whether partial j
   has a value) folded in order, then v OP them, into out[0] */
extern "C" __global__ void una_reduce_0_b(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  long long run = (n + UNA_BLOCK - 1) / UNA_BLOCK;
  long long j0 = (long long)threadIdx.x * run, j1 = j0 + run < n ? j0 + run : n;
  double acc = 0.0;
  int has = 0;
  for (long long j = j0; j < j1; j++) {
    if (aux[n + j] == 0.0) continue;
    acc = has ? OP(acc, aux[j]) : aux[j];
    has = 1;
  }
  UNA_BLOCK_REDUCE(acc, has);
  if (threadIdx.x == 0) out[0] = has ? OP(v, acc) : v;
}
#undef SRC
#undef OP
