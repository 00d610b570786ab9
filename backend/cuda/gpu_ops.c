/* gpu_ops.c: the array builtins while gpu_call runs (see gpu_eval.h).

   A builtin with a loaded kernel (gpu_int.h) runs on the device:
     1. its initial value (folds and scans) is evaluated, then its elements'
        leaves in the order the CPU evaluates them, each map2 of the fused
        elements checking its lengths as soon as its two arrays are known
        (the CPU's errors, in the CPU's order);
     2. its functions are bound to the frame (cpu_kernel_bind: free
        variables and hoisted parts, evaluated here, maybe on the GPU);
        when that fails the builtin is left to the CPU, which raises the
        error where the element that needs it is evaluated;
     3. its launches, with the parameters of launch.h, on device arrays.
   Shifts are views of device arrays; length reads no elements; load
   copies the file's array to the device (a nested array, [[R]] or
   deeper, stays on the host); a concat of [R]s copies its arrays into
   one on the device; a slice is a view, as a shift; a[i] of a device
   array copies back its one element; a reduce_by_index (+) of [R]s adds
   its values on the device (atomics). Everything else runs on the CPU
   (array_ops.c), which fetches the device arrays it reads. */
#include "gpu_array.h"
#include "gpu_eval.h"
#include "gpu_int.h"
#include "../array_ops.h"
#include "../rand.h"

/* The launch parameters of launch.h, gathered. */
typedef struct Launch {
  CudaPtr out, aux;
  long long n;
  double v;
  int nleaves;
  CudaPtr *leaves;
  int ninputs;
  double *inputs;
  int narrays; /* the gathers' arrays (launch.h): device data and lengths */
  CudaPtr *arrays;
  long long *lengths;
  bool gathers;
  CudaPtr fault; /* 4 words, zeroed before the first launch (launch.h) */
  /* What owns the device memory above (the leaves' and gathers' arrays,
     the fault words' DevBuf): held here, in a Launch on the C stack,
     so that no collection finalises them between taking their device
     pointers and the launches that read them. */
  const Array **leaf_arrays;
  const Array **gather_arrays;
  DevBuf *fault_buf;
} Launch;

static void launch(const Launch *l, CudaFunction *f, unsigned grid, unsigned block, Span s) {
  void **args = NEW_ARRAY(void *, 5 + l->nleaves + l->ninputs + 2 * l->narrays);
  int k = 0;
  args[k++] = (void *)&l->out;
  args[k++] = (void *)&l->aux;
  args[k++] = (void *)&l->n;
  args[k++] = (void *)&l->v;
  for (int i = 0; i < l->nleaves; i++) args[k++] = &l->leaves[i];
  for (int i = 0; i < l->ninputs; i++) args[k++] = &l->inputs[i];
  for (int i = 0; i < l->narrays; i++) {
    args[k++] = &l->arrays[i];
    args[k++] = &l->lengths[i];
  }
  if (l->gathers) args[k++] = (void *)&l->fault;
  cuda_launch(f, grid, block, 0, args, s);
}

/* Blocks of an element-wise launch (map, fills), at most: the kernels loop
   over the elements grid-stride beyond that. */
enum { MAP_GRID = 1 << 20 };

/* Blocks for n elements, one per thread, at most `most`. */
static unsigned blocks_for(long long n, unsigned most) {
  long long b = (n + GPU_BLOCK - 1) / GPU_BLOCK;
  if (b < 1) b = 1;
  return b > (long long)most ? most : (unsigned)b;
}

/* Evaluates the leaves of src (post-order, as the CPU evaluates a nest of
   maps) into l and checks each map2's lengths; returns src's length. */
static size_t eval_src(const Exec *ex, const PlanSrc *src, Value *frame, Launch *l) {
  if (src->leaf) {
    Value v = ex->eval(ex, src->term, frame);
    ASSERT(v.kind == V_ARRAY && !v.u.a->boxed);
    l->leaf_arrays[src->index] = v.u.a;
    l->leaves[src->index] = gpu_array_ptr(v.u.a, src->term->span);
    return v.u.a->len;
  }
  size_t na = eval_src(ex, src->a, frame, l);
  if (!src->b) return na;
  size_t nb = eval_src(ex, src->b, frame, l);
  if (src->c) cpu_check_map3_lengths(src->term, na, nb, eval_src(ex, src->c, frame, l));
  else cpu_check_map2_lengths(src->term, na, nb);
  return na;
}

/* Binds the kernel's functions into l->inputs; false when a hoisted part
   raised (the caller then leaves the builtin to the CPU). */
static bool bind_inputs(const Exec *ex, const PlanKernel *k, Value *frame, Launch *l, Span s) {
  int total = 0, totala = 0;
  for (int i = 0; i < k->nfns; i++) {
    total += k->fns[i]->ninputs;
    totala += k->fns[i]->narrays;
  }
  l->inputs = una_alloc(sizeof(double) * (size_t)(total + 1));
  l->arrays = una_alloc(sizeof(CudaPtr) * (size_t)(totala + 1));
  l->lengths = una_alloc(sizeof(long long) * (size_t)(totala + 1));
  l->ninputs = l->narrays = 0;
  const Array **arrs = una_alloc(sizeof(Array *) * (size_t)(totala + 1));
  l->gather_arrays = arrs;
  for (int i = 0; i < k->nfns; i++) {
    const PlanFn *f = k->fns[i];
    if (f->ninputs == 0 && f->narrays == 0) continue;
    CpuKernelRun run;
    if (!cpu_kernel_bind(ex, f->k, frame, &run)) return false;
    for (int j = 0; j < f->ninputs; j++) l->inputs[l->ninputs++] = run.sregs[f->inputs[j]];
    for (int j = 0; j < f->narrays; j++) arrs[l->narrays++] = run.arr[f->arrays[j]];
  }
  /* the arrays on the device, once every function is bound */
  for (int i = 0; i < l->narrays; i++) {
    l->arrays[i] = gpu_array_ptr((Array *)arrs[i], s);
    l->lengths[i] = (long long)arrs[i]->len;
  }
  l->gathers = gpu_kernel_gathers(k);
  if (l->gathers) {
    unsigned long long zero[4] = {0, 0, 0, 0};
    l->fault_buf = cuda_devbuf_new(sizeof zero, s);
    l->fault = l->fault_buf->ptr;
    cuda_upload(l->fault, zero, sizeof zero, s);
  }
  return true;
}

/* Raises the first fault of k's gathers (launch.h), if any. */
static void check_fault(const PlanKernel *k, const Launch *l, Span s) {
  if (!l->gathers) return;
  unsigned long long f[4];
  cuda_download(f, l->fault, sizeof f, s);
  if (f[0] == 0) return;
  double i;
  memcpy(&i, &f[1], sizeof i);
  long long id = (long long)(f[3] / GPU_SITES), v = (long long)(f[3] % GPU_SITES);
  for (int j = 0; j < k->nfns; j++)
    if (k->fns[j]->id == id) cpu_bad_index(cpu_kernel_index_term(k->fns[j]->k, (int)v)->span, i, (double)f[2]);
  una_internal_error(__FILE__, __LINE__, "a gather's fault names no function of its kernel");
}

/* A device buffer of n doubles. Its DevBuf's finaliser frees the memory,
   so the caller keeps the DevBuf until the launches that use the buffer
   are done (GC_reachable_here): holding only the device pointer let a
   collection during the next allocation free the partials of a reduce
   before its second launch read them (a crash of check-gpu-host, now and
   then). */
static DevBuf *scratch(size_t n, Span s) { return cuda_devbuf_new(n * sizeof(double), s); }

static double download1(CudaPtr p, Span s) {
  double x;
  cuda_download(&x, p, sizeof x, s);
  return x;
}

static Value launch_elements(const GpuLoaded *g, Launch *lp, size_t n, Span s);

/* map, map2, reduce, foldl, scanl, scanr with a kernel. */
static Value run_elements(const Exec *ex, const GpuLoaded *g, const Term *t, Value *frame) {
  const PlanKernel *k = g->k;
  Span s = t->span;
  Launch l;
  memset(&l, 0, sizeof l);
  if (k->kind != PK_MAP && k->kind != PK_CHECK) l.v = ex->eval(ex, t->kids[1], frame).u.r;
  l.nleaves = k->nleaves;
  l.leaves = una_alloc(sizeof(CudaPtr) * (size_t)(k->nleaves + 1));
  l.leaf_arrays = una_alloc(sizeof(Array *) * (size_t)(k->nleaves + 1));
  size_t n = eval_src(ex, k->src, frame, &l);
  l.n = (long long)n;
  if (!bind_inputs(ex, k, frame, &l, s)) return cpu_array_prim(ex, t, frame);
  fe_poll_interrupt(s); /* kernels cannot be interrupted: check before launching */
  Value r = launch_elements(g, &l, n, s);
  check_fault(k, &l, s);
  GC_reachable_here(l.leaf_arrays);
  GC_reachable_here(l.gather_arrays);
  GC_reachable_here(l.fault_buf);
  return r;
}

/* The launches of run_elements, the parameters bound in *lp. */
static Value launch_elements(const GpuLoaded *g, Launch *lp, size_t n, Span s) {
  const PlanKernel *k = g->k;
  Launch l = *lp;
  switch (k->kind) {
  case PK_CHECK: return val_array(val_hollow_array(n)); /* never read (plan.h) */
  case PK_MAP: {
    Array *out = gpu_new_array(n, s);
    if (n == 0) return val_array(out);
    l.out = gpu_array_ptr(out, s);
    launch(&l, g->f[0], blocks_for(l.n, MAP_GRID), GPU_BLOCK, s);
    return val_array(out);
  }
  case PK_REDUCE: {
    if (n == 0) return val_real(l.v);
    unsigned grid = blocks_for(l.n, GPU_REDUCE_GRID);
    /* ordered (plan.h): each partial is followed, grid places on, by whether it has a value */
    DevBuf *part = scratch(k->ordered ? 2 * (size_t)grid : grid, s), *res = scratch(1, s);
    l.out = part->ptr;
    launch(&l, g->f[0], grid, GPU_BLOCK, s);
    l.out = res->ptr;
    l.aux = part->ptr;
    l.n = grid;
    launch(&l, g->f[1], 1, GPU_BLOCK, s);
    double r = download1(res->ptr, s);
    GC_reachable_here(part);
    GC_reachable_here(res);
    return val_real(r);
  }
  case PK_FOLDL: {
    if (n == 0) return val_real(l.v);
    DevBuf *res = scratch(1, s);
    l.out = res->ptr;
    launch(&l, g->f[0], 1, GPU_BLOCK, s);
    double r = download1(res->ptr, s);
    GC_reachable_here(res);
    return val_real(r);
  }
  case PK_SCAN_SEQ: {
    Array *out = gpu_new_array(n + 1, s);
    l.out = gpu_array_ptr(out, s);
    launch(&l, g->f[0], 1, GPU_BLOCK, s);
    return val_array(out);
  }
  case PK_SCAN: {
    Array *out = gpu_new_array(n + 1, s);
    CudaPtr o = gpu_array_ptr(out, s);
    if (n == 0) {
      cuda_upload(o, &l.v, sizeof l.v, s);
      return val_array(out);
    }
    long long tiles = (l.n + GPU_SCAN_TILE - 1) / GPU_SCAN_TILE;
    DevBuf *totals = scratch((size_t)tiles, s), *prefix = scratch((size_t)tiles + 1, s);
    l.out = totals->ptr;
    launch(&l, g->f[0], (unsigned)tiles, GPU_BLOCK, s);
    Launch b = l;
    b.out = prefix->ptr;
    b.aux = totals->ptr;
    b.n = tiles;
    launch(&b, g->f[1], 1, GPU_BLOCK, s);
    l.out = o;
    l.aux = prefix->ptr;
    launch(&l, g->f[2], (unsigned)tiles, GPU_BLOCK, s);
    /* a finaliser's free is ordered after these launches on the stream
       (cuMemFreeAsync) or waits for them (cuMemFree) */
    GC_reachable_here(totals);
    GC_reachable_here(prefix);
    return val_array(out);
  }
  default: UNREACHABLE();
  }
}

/* reduce_by_index D (+) v I V with a kernel (PK_SCATTER): D, v, I and
   V's leaves evaluated in the CPU's order (backend/scatter.c), the count
   checked, then one launch that adds the values into a copy of D (into D
   itself when the plan found it fresh, plan/note.h in_place). The
   values' faults come first, then the first bad index, as the CPU
   raises them; the sums' order is the atomics' (results within rounding
   of the CPU's). */
static Value run_scatter(const Exec *ex, const GpuLoaded *g, const Term *t, Value *frame) {
  const PlanKernel *k = g->k;
  Span s = t->span;
  Array *d = cpu_eval_array(ex, t->kids[1], frame);
  (void)ex->eval(ex, t->kids[2], frame); /* the unit: the sums need none */
  Array *is = cpu_eval_array(ex, t->kids[3], frame);
  Launch l;
  memset(&l, 0, sizeof l);
  l.nleaves = k->nleaves;
  l.leaves = una_alloc(sizeof(CudaPtr) * (size_t)(k->nleaves + 1));
  l.leaf_arrays = una_alloc(sizeof(Array *) * (size_t)(k->nleaves + 1));
  size_t nv = eval_src(ex, k->src, frame, &l);
  if (is->len != nv) fe_error(s, "reduce_by_index: %zu indices but %zu values", is->len, nv);
  l.leaf_arrays[k->nleaves - 1] = is;
  l.leaves[k->nleaves - 1] = gpu_array_ptr(is, s);
  if (!bind_inputs(ex, k, frame, &l, s)) return cpu_array_prim(ex, t, frame);
  Array *out = d;
  if (!(t->note && t->note->in_place)) {
    out = gpu_new_array(d->len, s);
    if (d->len) cuda_copy(gpu_array_ptr(out, s), gpu_array_ptr(d, s), d->len * sizeof(double), s);
  } else if (d->len) {
    gpu_array_ptr(d, s);
    gpu_drop_host(d); /* written on the device only */
  }
  if (nv == 0) return val_array(out);
  fe_poll_interrupt(s);
  unsigned long long none = ~0ull;
  DevBuf *bad = cuda_devbuf_new(sizeof none, s);
  cuda_upload(bad->ptr, &none, sizeof none, s);
  l.out = d->len ? gpu_array_ptr(out, s) : 0;
  l.aux = bad->ptr;
  l.n = (long long)nv;
  l.v = (double)d->len;
  launch(&l, g->f[0], blocks_for(l.n, MAP_GRID), GPU_BLOCK, s);
  check_fault(k, &l, s);
  unsigned long long first;
  cuda_download(&first, bad->ptr, sizeof first, s);
  if (first != ~0ull) {
    double i;
    cuda_download(&i, l.leaves[k->nleaves - 1] + (CudaPtr)(first * sizeof(double)), sizeof i, s);
    cpu_index_arg(s, i, d->len);
    una_internal_error(__FILE__, __LINE__, "a scatter's bad index is in bounds");
  }
  GC_reachable_here(l.leaf_arrays);
  GC_reachable_here(l.gather_arrays);
  GC_reachable_here(l.fault_buf);
  GC_reachable_here(bad);
  return val_array(out);
}

/* iota, replicate and rand with a kernel: the CPU's argument checks, then
   the fill on the device. */
static Value run_fill(const Exec *ex, const GpuLoaded *g, const Term *t, Value *frame) {
  Span s = t->span;
  Launch l;
  memset(&l, 0, sizeof l);
  double nr = ex->eval(ex, t->kids[0], frame).u.r;
  if (t->prim == PRIM_REPLICATE) l.v = ex->eval(ex, t->kids[1], frame).u.r;
  if (t->prim == PRIM_RAND) {
    uint64_t key = cpu_rand_key(ex->eval(ex, t->kids[1], frame).u.r);
    memcpy(&l.v, &key, sizeof key);
  }
  size_t n = cpu_size_arg(t, nr, sizeof(double));
  Array *out = gpu_new_array(n, s);
  if (n == 0) return val_array(out);
  l.out = gpu_array_ptr(out, s);
  l.n = (long long)n;
  launch(&l, g->f[0], blocks_for(l.n, MAP_GRID), GPU_BLOCK, s);
  return val_array(out);
}

/* A concat of [R]s (a tree of them): its arrays copied into one new
   device array, on the device (arrays only on the host go to the device
   first, once, as any kernel's inputs do). */
static Value run_concat(const Exec *ex, const Term *t, Value *frame) {
  int n;
  Array **leaves = cpu_concat_leaves(ex, t, frame, false, &n);
  size_t len = 0;
  for (int i = 0; i < n; i++) len += leaves[i]->len;
  Array *out = gpu_new_array(len, t->span);
  if (len == 0) return val_array(out);
  CudaPtr o = gpu_array_ptr(out, t->span);
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    size_t k = leaves[i]->len;
    if (k) cuda_copy(o + (CudaPtr)(at * sizeof(double)), gpu_array_ptr(leaves[i], t->span), k * sizeof(double), t->span);
    at += k;
  }
  return val_array(out);
}

/* a[i] of an [R] that is on the device only: its one element copied back
   (the CPU's a[i] would bring the whole array to the host), after the
   CPU's checks, in its order (a, then i). */
static Value run_index(const Exec *ex, const Term *t, Value *frame) {
  Value v = ex->eval(ex, t->kids[0], frame);
  Array *a = v.u.a;
  double i = ex->eval(ex, t->kids[1], frame).u.r;
  size_t k = cpu_index_arg(t->span, i, a->len);
  if (a->boxed || a->r || !a->dev) {
    val_host(a);
    return val_array_get(a, k);
  }
  double x;
  cuda_download(&x, gpu_array_ptr(a, t->span) + (CudaPtr)(k * sizeof(double)), sizeof x, t->span);
  return val_real(x);
}

Value gpu_array_prim(const Exec *ex, const Term *t, Value *frame) {
  const GpuLoaded *g = t->note && t->note->kernel ? ex->gpu[t->note->kernel->id] : NULL;
  switch (t->prim) {
  case PRIM_SHIFT1L:
  case PRIM_SHIFT1R: {
    Value v = ex->eval(ex, t->kids[0], frame);
    Array *a = v.u.a;
    if (a->len == 0) return v;
    return val_array(val_view(a, t->prim == PRIM_SHIFT1L ? 1 : 0, a->len - 1));
  }
  case PRIM_LENGTH: return val_real((double)ex->eval(ex, t->kids[0], frame).u.a->len);
  case PRIM_CONCAT:
    if (t->type->elem->kind == TY_REAL) return run_concat(ex, t, frame);
    break;
  case PRIM_SLICE: return cpu_slice(ex, t, frame, false); /* a view, of a device array too */
  case PRIM_INDEX: return run_index(ex, t, frame);
  case PRIM_LOAD: {
    Value v = cpu_array_prim(ex, t, frame);
    if (v.u.a->boxed) return v; /* a nested array ([[R]], ...) stays on the host */
    gpu_array_ptr(v.u.a, t->span);
    gpu_drop_host(v.u.a);
    return v;
  }
  case PRIM_IOTA:
  case PRIM_REPLICATE:
  case PRIM_RAND:
    if (g) return run_fill(ex, g, t, frame);
    break;
  case PRIM_REDUCE_BY_INDEX:
    if (g) return run_scatter(ex, g, t, frame);
    break;
  case PRIM_MAP:
  case PRIM_MAP2:
  case PRIM_MAP3:
  case PRIM_REDUCE:
  case PRIM_FOLDL:
  case PRIM_SCANL:
  case PRIM_SCANR:
    if (g) return run_elements(ex, g, t, frame);
    break;
  default: break;
  }
  return cpu_array_prim(ex, t, frame);
}
