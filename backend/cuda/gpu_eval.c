/* gpu_eval.c: preparing a function for the GPU (plan, compile through the
   kernel cache, load) and calling it (see gpu_eval.h). */
#include "gpu_eval.h"
#include "cublas.h"
#include "gpu_blas.h"
#include "gpu_array.h"
#include "gpu_int.h"
#include "emit.h"
#include "kcache.h"
#include "nvrtc.h"
#include "../eval.h"


bool gpu_available(const char **why) {
  if (!cuda_open(why)) return false;
  if (!nvrtc_available(why)) return false;
  if (!cuda_ready()) {
    if (why) *why = "the GPU cannot be used in this session any more (an earlier kernel failed)";
    return false;
  }
  return true;
}

const char *gpu_describe(void) {
  int drv = cuda_driver_version();
  return una_sprintf("%s (sm_%d, CUDA driver %d.%d)", cuda_device_name(), cuda_arch(), drv / 1000,
                     (drv % 1000) / 10);
}

/* The first lines of a compile log, for an error message. */
static const char *log_head(const char *log) {
  if (!log) return "";
  size_t n = 0;
  int lines = 0;
  while (log[n] && lines < 12) {
    if (log[n] == '\n') lines++;
    n++;
  }
  return una_sprintf("\n%.*s", (int)n, log);
}

/* A plan ready to run on the GPU (Plan.gpu): its CUDA source, and once
   loaded its kernels' functions (the module stays loaded for the
   session). */
typedef struct Prepared {
  const char *source;
  GpuLoaded **loaded; /* by kernel id; NULL until loaded */
} Prepared;

static Prepared *prepared(Plan *p) {
  if (!p->gpu) {
    Prepared *pr = NEW(Prepared);
    pr->source = gpu_emit_plan(p);
    p->gpu = pr;
  }
  return p->gpu;
}

const char *gpu_plan_source(Plan *p) { return prepared(p)->source; }

bool gpu_kernel_gathers(const PlanKernel *k) {
  for (int i = 0; i < k->nfns; i++)
    if (k->fns[i]->narrays > 0) return true;
  return false;
}

int gpu_kernel_launches(const PlanKernel *k) {
  switch (k->kind) {
  case PK_REDUCE: return 2;
  case PK_SCAN: return 3;
  case PK_CHECK: return 0;
  default: return 1;
  }
}

/* Compiles and loads the translation unit of p; records its kernels in
   its Prepared. Errors are located at s. */
static GpuLoaded **load_plan(Plan *p, Span s) {
  Prepared *pr = prepared(p);
  if (pr->loaded) return pr->loaded;
  bool launches = false;
  for (int i = 0; i < p->nkernels; i++) launches |= p->kernels[i]->kind != PK_CHECK;
  size_t size = 0;
  KcacheSource from;
  char *log = NULL;
  CudaModule *m = NULL;
  if (launches) {
    const void *image = kcache_cubin(pr->source, cuda_arch(), cuda_driver_version(), &size, &from, &log);
    if (!image) fe_error(s, "the GPU kernels of this program do not compile (NVRTC)%s", log_head(log));
    m = cuda_module_load(image, size, s);
  }
  GpuLoaded **loaded = NEW_ARRAY(GpuLoaded *, p->nkernels + 1);
  for (int i = 0; i < p->nkernels; i++) {
    const PlanKernel *k = p->kernels[i];
    GpuLoaded *l = NEW(GpuLoaded);
    l->k = k;
    int parts = gpu_kernel_launches(k);
    for (int j = 0; j < parts; j++) {
      const char *name = parts == 1 ? k->name : una_sprintf("%s_%c", k->name, 'a' + j);
      l->f[j] = cuda_function(m, name, s);
    }
    loaded[k->id] = l;
  }
  pr->loaded = loaded;
  return loaded;
}

Value gpu_call(const Def *d, const Value *args) {
  Exec ex = cpu_exec_default;
  ex.gpu = load_plan(plan_of_def(d), d->span);
  ex.array_prim = gpu_array_prim;
  if (cuda_blas_open()) ex.blas = gpu_blas_run;
  Value v = cpu_call_in(&ex, d, args);
  cuda_sync(d->span); /* a kernel's failure belongs to this call */
  return v;
}

Value gpu_to_device(Value v, Span s) {
  switch (v.kind) {
  case V_ARRAY: {
    Array *a = v.u.a;
    if (!a->boxed) {
      gpu_array_ptr(a, s);
      return v;
    }
    for (size_t i = 0; i < a->len; i++) a->v[i] = gpu_to_device(a->v[i], s);
    return v;
  }
  case V_TUPLE:
    for (int i = 0; i < v.u.t->n; i++) v.u.t->items[i] = gpu_to_device(v.u.t->items[i], s);
    return v;
  default: return v;
  }
}
