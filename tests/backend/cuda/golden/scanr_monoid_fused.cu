
/* the lambda at t.una:6:35 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r2 = p0 + p1;
  return r2;
}

/* the lambda at t.una:6:46 */
__device__ __forceinline__ double una_f1(double p0, double p1) {
  double r2 = p0 * p0;
  return r2;
}

/* scanr at t.una:6:29 */
#define SRC(j_) (una_f1(L0[(j_)], 0.0))
#define OP(a, b) una_f0((b), (a))
#define ID (-0.0)
#define IDX(j) (n - 1 - (j))
/* launch a: each block's tile of UNA_TILE elements folded into out[block] */
extern "C" __global__ void una_scanr_0_a(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  long long base = (long long)blockIdx.x * UNA_TILE;
  double acc = ID;
  for (int i = 0; i < UNA_ITEMS; i++) {
    long long j = base + (long long)i * UNA_BLOCK + threadIdx.x;
    if (j < n) acc = OP(acc, SRC(IDX(j)));
  }
  int has = 1;
  UNA_BLOCK_REDUCE(acc, has);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
/* launch b, one block: out[t] = v OP the totals aux[0..t) of the n tiles, t <= n */
extern "C" __global__ void una_scanr_0_b(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  double carry = v;
  if (threadIdx.x == 0) out[0] = v;
  for (long long base = 0; base < n; base += UNA_BLOCK) {
    long long j = base + threadIdx.x;
    double x = j < n ? aux[j] : ID, total;
    UNA_BLOCK_SCAN(x, total);
    if (j < n) out[j + 1] = OP(carry, x);
    carry = OP(carry, total);
  }
}
/* launch c: each tile scanned from its prefix aux[block] into out (n + 1 elements) */
extern "C" __global__ void una_scanr_0_c(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  long long base = (long long)blockIdx.x * UNA_TILE;
  double carry = aux[blockIdx.x];
  if (blockIdx.x == 0 && threadIdx.x == 0) out[n] = v;
  for (int i = 0; i < UNA_ITEMS && base + (long long)i * UNA_BLOCK < n; i++) {
    long long j = base + (long long)i * UNA_BLOCK + threadIdx.x;
    double x = j < n ? SRC(IDX(j)) : ID, total;
    UNA_BLOCK_SCAN(x, total);
    if (j < n) out[n - 1 - j] = OP(carry, x);
    carry = OP(carry, total);
  }
}
#undef IDX
#undef SRC
#undef OP
#undef ID
