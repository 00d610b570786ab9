
/* the lambda at <prelude>:23:35 */
__device__ __forceinline__ double una_f0(double p0, double p1) {
  double r2 = una_max(p0, p1);
  return r2;
}

/* the lambda at t.una:12:63 */
__device__ __forceinline__ double una_f1(double p0, double p1, double i2) {
  double r3 = p0 - i2;
  double r4 = exp(r3);
  return r4;
}

/* the lambda at <prelude>:5:31 */
__device__ __forceinline__ double una_f2(double p0, double p1) {
  double r2 = p0 + p1;
  return r2;
}

/* the lambda at t.una:12:59 */
__device__ __forceinline__ double una_f3(double p0, double p1) {
  double r2 = p0 + p1;
  return r2;
}

/* the lambda at t.una:12:59 */
__device__ __forceinline__ double una_f4(double p0, double p1, double i2) {
  double r3 = i2 * p0;
  double r4 = -r3;
  return r4;
}

/* the lambda at <prelude>:23:28 */
__device__ __forceinline__ double una_f5(double p0, double p1) {
  double r2 = una_max(p0, p1);
  return r2;
}

/* the lambda at t.una:12:40 */
__device__ __forceinline__ double una_f6(double p0, double p1, double i2) {
  double r3 = i2 * p0;
  double r4 = r3 + p1;
  return r4;
}

/* the lambda at <prelude>:23:28 */
__device__ __forceinline__ double una_f7(double p0, double p1, double i2) {
  double r3 = p0 * i2;
  double r4 = r3 * p1;
  return r4;
}

/* the lambda at <prelude>:23:28 */
__device__ __forceinline__ double una_f8(double p0, double p1) {
  double r2 = (p0 >= p1) ? 1.0 : 0.0;
  double r5 = (r2 != 0.0) ? 0.0 : 1.0;
  return r5;
}

/* the lambda at <prelude>:23:28 */
__device__ __forceinline__ double una_f9(double p0, double p1) {
  double r2 = p0 * p1;
  return r2;
}

/* the lambda at <prelude>:23:28 */
__device__ __forceinline__ double una_f10(double p0, double p1) {
  double r2 = (p0 >= p1) ? 1.0 : 0.0;
  double r5 = (r2 != 0.0) ? 1.0 : 0.0;
  return r5;
}

/* reduce at <prelude>:23:28 */
#define SRC(j_) (L0[(j_)])
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

/* map at t.una:12:59 */
#define SRC(j_) (una_f1(L0[(j_)], 0.0, f1_i2))
extern "C" __global__ void una_map_1(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0, double f1_i2) {
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK)
    out[j] = SRC(j);
}
#undef SRC

/* reduce at <prelude>:5:24 */
#define SRC(j_) (L0[(j_)])
#define OP(a, b) una_f2((a), (b))
/* launch a: grid-stride partial folds, one per block, into out */
extern "C" __global__ void una_reduce_2_a(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
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
extern "C" __global__ void una_reduce_2_b(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
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

/* reduce at t.una:12:59 */
#define SRC(j_) (una_f4(L0[(j_)], 0.0, f4_i2))
#define OP(a, b) una_f3((a), (b))
/* launch a: grid-stride partial folds, one per block, into out */
extern "C" __global__ void una_reduce_3_a(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0, double f4_i2) {
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
extern "C" __global__ void una_reduce_3_b(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0, double f4_i2) {
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

/* scanl at <prelude>:23:28 */
#define SRC(j_) (L0[(j_)])
#define OP(a, b) una_f5((a), (b))
#define ID __longlong_as_double(0xfff0000000000000LL)
#define IDX(j) ((j))
/* launch a: each block's tile of UNA_TILE elements folded into out[block] */
extern "C" __global__ void una_scanl_4_a(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
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
extern "C" __global__ void una_scanl_4_b(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
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
extern "C" __global__ void una_scanl_4_c(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0) {
  long long base = (long long)blockIdx.x * UNA_TILE;
  double carry = aux[blockIdx.x];
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = v;
  for (int i = 0; i < UNA_ITEMS && base + (long long)i * UNA_BLOCK < n; i++) {
    long long j = base + (long long)i * UNA_BLOCK + threadIdx.x;
    double x = j < n ? SRC(IDX(j)) : ID, total;
    UNA_BLOCK_SCAN(x, total);
    if (j < n) out[j + 1] = OP(carry, x);
    carry = OP(carry, total);
  }
}
#undef IDX
#undef SRC
#undef OP
#undef ID

/* map2 at t.una:12:40 */
#define SRC(j_) (una_f6(L0[(j_)], una_f7(L1[(j_)], una_f8(L2[(j_)], L3[(j_)]), f7_i2), f6_i2))
extern "C" __global__ void una_map2_5(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0,
    const double *__restrict__ L1,
    const double *__restrict__ L2,
    const double *__restrict__ L3, double f6_i2, double f7_i2) {
  for (long long j = (long long)blockIdx.x * UNA_BLOCK + threadIdx.x; j < n;
       j += (long long)gridDim.x * UNA_BLOCK)
    out[j] = SRC(j);
}
#undef SRC

/* scanr at <prelude>:23:28 */
#define SRC(j_) (una_f10(L0[(j_)], L1[(j_)]))
#define OP(a, b) una_f9((b), (a))
#define ID 1.0
#define IDX(j) (n - 1 - (j))
/* launch a: each block's tile of UNA_TILE elements folded into out[block] */
extern "C" __global__ void una_scanr_6_a(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0,
    const double *__restrict__ L1) {
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
extern "C" __global__ void una_scanr_6_b(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0,
    const double *__restrict__ L1) {
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
extern "C" __global__ void una_scanr_6_c(double *__restrict__ out, const double *__restrict__ aux, long long n, double v,
    const double *__restrict__ L0,
    const double *__restrict__ L1) {
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
