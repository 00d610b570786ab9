/* driver.c: the CUDA driver API behind driver.h: libcuda opened with
   dlopen, device 0's primary context and one stream, device memory (the
   stream-ordered pool where the driver has it) owned by GC-finalised
   DevBufs, copies, modules, launches and timers; every status checked and
   turned into a located FeError. */
#include "driver.h"
#include "cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

/* The entry points, looked up once by cuda_open. */
static struct {
  PFN_cuInit cuInit;
  PFN_cuDriverGetVersion cuDriverGetVersion;
  PFN_cuDeviceGetCount cuDeviceGetCount;
  PFN_cuDeviceGet cuDeviceGet;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute;
  PFN_cuDeviceGetName cuDeviceGetName;
  PFN_cuDeviceTotalMem_v2 cuDeviceTotalMem;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
  PFN_cuCtxSetCurrent cuCtxSetCurrent;
  PFN_cuStreamCreate cuStreamCreate;
  PFN_cuStreamSynchronize cuStreamSynchronize;
  PFN_cuMemAlloc_v2 cuMemAlloc;
  PFN_cuMemFree_v2 cuMemFree;
  PFN_cuMemAllocAsync cuMemAllocAsync; /* optional */
  PFN_cuDeviceGetDefaultMemPool cuDeviceGetDefaultMemPool; /* optional */
  PFN_cuMemPoolSetAttribute cuMemPoolSetAttribute;         /* optional */
  PFN_cuMemFreeAsync cuMemFreeAsync;   /* optional */
  PFN_cuMemGetInfo_v2 cuMemGetInfo;
  PFN_cuMemcpyHtoDAsync_v2 cuMemcpyHtoDAsync;
  PFN_cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync;
  PFN_cuMemcpyDtoDAsync_v2 cuMemcpyDtoDAsync;
  PFN_cuModuleLoadDataEx cuModuleLoadDataEx;
  PFN_cuModuleGetFunction cuModuleGetFunction;
  PFN_cuLaunchKernel cuLaunchKernel;
  PFN_cuEventCreate cuEventCreate;
  PFN_cuEventRecord cuEventRecord;
  PFN_cuEventSynchronize cuEventSynchronize;
  PFN_cuEventElapsedTime cuEventElapsedTime;
  PFN_cuEventDestroy_v2 cuEventDestroy; /* optional */
  PFN_cuGetErrorName cuGetErrorName;
  PFN_cuGetErrorString cuGetErrorString;
} api;

static pthread_once_t open_once_flag = PTHREAD_ONCE_INIT;
static void *lib;
static bool opened;               /* cuda_open succeeded */
static atomic_bool usable;        /* opened, and no sticky error since */
static const char *open_why;      /* why cuda_open failed */
static const char *sticky_error;  /* the error that made the GPU unusable */
static CUdevice device;
static CUcontext context;
static CUstream stream;
static bool use_pool;             /* cuMemAllocAsync / cuMemFreeAsync */
static int arch, driver_version;
static char device_name[256];
static size_t total_memory;
static atomic_size_t since_collect; /* bytes allocated since the last collection */
static _Thread_local bool ctx_current;

/* ---- opening ---- */

/* dlsym through uintptr_t, as ISO C has no cast from void * to a function pointer. */
#define LOAD(field, type, name) (api.field = (type)(uintptr_t)dlsym(lib, name))

/* Looks up every entry point; returns the name of a missing required one, or NULL. */
static const char *load_symbols(void) {
#define REQ(field, type, name) \
  if (!LOAD(field, type, name)) return name
  REQ(cuInit, PFN_cuInit, "cuInit");
  REQ(cuDriverGetVersion, PFN_cuDriverGetVersion, "cuDriverGetVersion");
  REQ(cuDeviceGetCount, PFN_cuDeviceGetCount, "cuDeviceGetCount");
  REQ(cuDeviceGet, PFN_cuDeviceGet, "cuDeviceGet");
  REQ(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute, "cuDeviceGetAttribute");
  REQ(cuDeviceGetName, PFN_cuDeviceGetName, "cuDeviceGetName");
  REQ(cuDeviceTotalMem, PFN_cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2");
  REQ(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  REQ(cuCtxSetCurrent, PFN_cuCtxSetCurrent, "cuCtxSetCurrent");
  REQ(cuStreamCreate, PFN_cuStreamCreate, "cuStreamCreate");
  REQ(cuStreamSynchronize, PFN_cuStreamSynchronize, "cuStreamSynchronize");
  REQ(cuMemAlloc, PFN_cuMemAlloc_v2, "cuMemAlloc_v2");
  REQ(cuMemFree, PFN_cuMemFree_v2, "cuMemFree_v2");
  REQ(cuMemGetInfo, PFN_cuMemGetInfo_v2, "cuMemGetInfo_v2");
  REQ(cuMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2");
  REQ(cuMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2");
  REQ(cuMemcpyDtoDAsync, PFN_cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2");
  REQ(cuModuleLoadDataEx, PFN_cuModuleLoadDataEx, "cuModuleLoadDataEx");
  REQ(cuModuleGetFunction, PFN_cuModuleGetFunction, "cuModuleGetFunction");
  REQ(cuLaunchKernel, PFN_cuLaunchKernel, "cuLaunchKernel");
  REQ(cuEventCreate, PFN_cuEventCreate, "cuEventCreate");
  REQ(cuEventRecord, PFN_cuEventRecord, "cuEventRecord");
  REQ(cuEventSynchronize, PFN_cuEventSynchronize, "cuEventSynchronize");
  REQ(cuGetErrorName, PFN_cuGetErrorName, "cuGetErrorName");
  REQ(cuGetErrorString, PFN_cuGetErrorString, "cuGetErrorString");
  /* CUDA 13 renamed cuEventElapsedTime to cuEventElapsedTime_v2. */
  if (!LOAD(cuEventElapsedTime, PFN_cuEventElapsedTime, "cuEventElapsedTime_v2"))
    REQ(cuEventElapsedTime, PFN_cuEventElapsedTime, "cuEventElapsedTime");
#undef REQ
  LOAD(cuMemAllocAsync, PFN_cuMemAllocAsync, "cuMemAllocAsync");
  LOAD(cuDeviceGetDefaultMemPool, PFN_cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool");
  LOAD(cuMemPoolSetAttribute, PFN_cuMemPoolSetAttribute, "cuMemPoolSetAttribute");
  LOAD(cuMemFreeAsync, PFN_cuMemFreeAsync, "cuMemFreeAsync");
  LOAD(cuEventDestroy, PFN_cuEventDestroy_v2, "cuEventDestroy_v2");
  return NULL;
}

/* The reason for a failed set-up step of device 0. */
static const char *setup_failed(const char *what, CUresult rc) {
  return una_sprintf("the CUDA driver failed to set up device 0 (%s: %s)", what, cuda_error_string(rc));
}

/* Does cuda_open's work; sets opened or open_why. */
static void open_driver(void) {
  const char *path = getenv("UNA_LIBCUDA");
  if (!path || !*path) path = "libcuda.so.1";
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    open_why = una_sprintf("no CUDA driver found (%s)", e ? e : una_sprintf("%s cannot be opened", path));
    return;
  }
  const char *missing = load_symbols();
  if (missing) {
    open_why = una_sprintf("no usable CUDA driver found (%s lacks %s)", path, missing);
    return;
  }
  CUresult rc = api.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    open_why = rc == CUDA_ERROR_NO_DEVICE ? "no CUDA device found (the driver reports none)"
                                          : una_sprintf("the CUDA driver failed to initialise (error %d)", rc);
    return;
  }
  int count = 0;
  rc = api.cuDeviceGetCount(&count);
  if (rc != CUDA_SUCCESS) {
    open_why = una_sprintf("the CUDA driver cannot count devices (error %d)", rc);
    return;
  }
  if (count <= 0) {
    open_why = "no CUDA device found (the driver reports none)";
    return;
  }
  int major = 0, minor = 0, pools = 0;
  if ((rc = api.cuDeviceGet(&device, 0)) != CUDA_SUCCESS) {
    open_why = setup_failed("cuDeviceGet", rc);
    return;
  }
  if ((rc = api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)) ||
      (rc = api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))) {
    open_why = setup_failed("cuDeviceGetAttribute", rc);
    return;
  }
  if ((rc = api.cuDeviceGetName(device_name, (int)sizeof device_name, device)) != CUDA_SUCCESS) {
    open_why = setup_failed("cuDeviceGetName", rc);
    return;
  }
  device_name[sizeof device_name - 1] = '\0';
  if ((rc = api.cuDeviceTotalMem(&total_memory, device)) != CUDA_SUCCESS) {
    open_why = setup_failed("cuDeviceTotalMem", rc);
    return;
  }
  if ((rc = api.cuDriverGetVersion(&driver_version)) != CUDA_SUCCESS) {
    open_why = setup_failed("cuDriverGetVersion", rc);
    return;
  }
  if ((rc = api.cuDevicePrimaryCtxRetain(&context, device)) != CUDA_SUCCESS) {
    open_why = setup_failed("cuDevicePrimaryCtxRetain", rc);
    return;
  }
  if ((rc = api.cuCtxSetCurrent(context)) != CUDA_SUCCESS) {
    open_why = setup_failed("cuCtxSetCurrent", rc);
    return;
  }
  ctx_current = true;
  if ((rc = api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
    open_why = setup_failed("cuStreamCreate", rc);
    return;
  }
  /* The stream-ordered pool, where the driver and the device have it. */
  use_pool = api.cuMemAllocAsync && api.cuMemFreeAsync &&
             api.cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, device) ==
                 CUDA_SUCCESS &&
             pools != 0;
  /* The pool keeps what is freed (its default release threshold, 0, would
     hand memory back to the system at every synchronisation, and each
     call's arrays would be mapped afresh); the collector's trigger and
     cuda_alloc's retry bound what it holds. Best effort: without it the
     pool only works slower. */
  CUmemoryPool pool = NULL;
  if (use_pool && api.cuDeviceGetDefaultMemPool && api.cuMemPoolSetAttribute &&
      api.cuDeviceGetDefaultMemPool(&pool, device) == CUDA_SUCCESS) {
    uint64_t keep = UINT64_MAX;
    (void)api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  }
  arch = 10 * major + minor;
  opened = true;
  atomic_store(&usable, true);
}

bool cuda_open(const char **why) {
  pthread_once(&open_once_flag, open_driver);
  if (!opened && why) *why = open_why;
  return opened;
}

bool cuda_ready(void) { return opened && atomic_load(&usable); }

int cuda_arch(void) { return arch; }
int cuda_driver_version(void) { return driver_version; }
const char *cuda_device_name(void) { return device_name; }
size_t cuda_total_memory(void) { return total_memory; }

const char *cuda_error_string(int rc) {
  const char *name = NULL, *text = NULL;
  if (api.cuGetErrorName && api.cuGetErrorName(rc, &name) == CUDA_SUCCESS && name) {
    if (api.cuGetErrorString && api.cuGetErrorString(rc, &text) == CUDA_SUCCESS && text)
      return una_sprintf("%s: %s", name, text);
    return name;
  }
  return una_sprintf("CUDA error %d", rc);
}

/* ---- errors ---- */

/* Errors after which the context cannot be used again. */
static bool is_sticky(CUresult rc) {
  switch (rc) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
    return true;
  default:
    return false;
  }
}

/* Raises at s: "WHAT failed: NAME: DESCRIPTION", marking the GPU unusable
   after a sticky error. */
static _Noreturn void fail(Span s, const char *what, CUresult rc) {
  const char *err = cuda_error_string(rc);
  if (is_sticky(rc)) {
    if (atomic_exchange(&usable, false)) sticky_error = err;
    fe_error(s, "%s failed: %s; the GPU cannot be used in this session any more", what, err);
  }
  fe_error(s, "%s failed: %s", what, err);
}

#define CHECK(call, s, what)                      \
  do {                                            \
    CUresult rc_ = (call);                        \
    if (rc_ != CUDA_SUCCESS) fail((s), (what), rc_); \
  } while (0)

/* Raises at s unless the GPU can be used; makes the context current on
   this thread. */
static void require_ready(Span s) {
  if (!opened) fe_error(s, "no GPU: %s", open_why ? open_why : "the CUDA driver has not been opened");
  if (!atomic_load(&usable))
    fe_error(s, "the GPU cannot be used in this session any more (after %s)",
             sticky_error ? sticky_error : "an earlier error");
  if (!ctx_current) {
    CHECK(api.cuCtxSetCurrent(context), s, "making the GPU's context current");
    ctx_current = true;
  }
}

/* ---- memory ---- */

/* Runs a collection and the finalisers it queued (which free the device
   memory of unreachable DevBufs), then waits for the frees. */
void cuda_collect(void) {
  GC_gcollect();
  GC_invoke_finalizers();
  if (use_pool) (void)api.cuStreamSynchronize(stream);
  atomic_store(&since_collect, 0);
}

static CUresult raw_alloc(CUdeviceptr *p, size_t bytes) {
  return use_pool ? api.cuMemAllocAsync(p, bytes, stream) : api.cuMemAlloc(p, bytes);
}

CudaPtr cuda_alloc(size_t bytes, Span s) {
  ASSERT(bytes > 0);
  require_ready(s);
  if (atomic_fetch_add(&since_collect, bytes) + bytes > total_memory / 4) cuda_collect();
  CUdeviceptr p = 0;
  CUresult rc = raw_alloc(&p, bytes);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
    cuda_collect();
    rc = raw_alloc(&p, bytes);
  }
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_bytes = 0, total = 0;
    if (api.cuMemGetInfo(&free_bytes, &total) != CUDA_SUCCESS) free_bytes = 0;
    fe_error(s, "device out of memory: cannot allocate %zu bytes on the GPU (%zu bytes free)", bytes,
             free_bytes);
  }
  CHECK(rc, s, "GPU memory allocation");
  return (CudaPtr)p;
}

void cuda_free(CudaPtr p) {
  if (!p || !cuda_ready()) return;
  /* Finalisers run on whichever thread allocates: make the context current. */
  if (api.cuCtxSetCurrent(context) != CUDA_SUCCESS) return;
  ctx_current = true;
  if (use_pool)
    (void)api.cuMemFreeAsync((CUdeviceptr)p, stream);
  else
    (void)api.cuMemFree((CUdeviceptr)p);
}

/* The finaliser of a DevBuf. */
static void devbuf_finalize(void *obj, void *data) {
  (void)data;
  DevBuf *b = obj;
  cuda_free(b->ptr);
  b->ptr = 0;
}

/* bytes may be 0 (an empty array): then ptr is 0 and nothing is allocated. */
DevBuf *cuda_devbuf_new(size_t bytes, Span s) {
  DevBuf *b = GC_MALLOC_ATOMIC(sizeof(DevBuf));
  if (!b) una_internal_error(__FILE__, __LINE__, "out of memory");
  b->ptr = 0;
  b->bytes = bytes;
  if (bytes == 0) return b;
  b->ptr = cuda_alloc(bytes, s);
  GC_register_finalizer_no_order(b, devbuf_finalize, NULL, NULL, NULL);
  return b;
}

/* ---- copies ---- */

void cuda_upload(CudaPtr dst, const void *src, size_t bytes, Span s) {
  if (bytes == 0) return;
  require_ready(s);
  CHECK(api.cuMemcpyHtoDAsync((CUdeviceptr)dst, src, bytes, stream), s, "GPU copy to the device");
}

void cuda_download(void *dst, CudaPtr src, size_t bytes, Span s) {
  if (bytes == 0) return;
  require_ready(s);
  CHECK(api.cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, stream), s, "GPU copy to the host");
  CHECK(api.cuStreamSynchronize(stream), s, "GPU copy to the host");
}

void cuda_copy(CudaPtr dst, CudaPtr src, size_t bytes, Span s) {
  if (bytes == 0) return;
  require_ready(s);
  CHECK(api.cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, stream), s, "GPU copy on the device");
}

/* ---- modules, functions, launches ---- */

struct CudaModule {
  CUmodule mod;
};

struct CudaFunction {
  CUfunction fn;
  const char *name;
};

/* Copies log without its trailing white space; "" when empty. */
static const char *trimmed(const char *log) {
  size_t n = strlen(log);
  while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' ' || log[n - 1] == '\r')) n--;
  return una_strndup(log, n);
}

CudaModule *cuda_module_load(const void *image, size_t size, Span s) {
  (void)size; /* cuModuleLoadDataEx finds the end of a cubin or PTX text itself */
  require_ready(s);
  static char error_log[16384];
  error_log[0] = '\0';
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[2] = {error_log, (void *)(uintptr_t)sizeof error_log};
  CUmodule mod = NULL;
  CUresult rc = api.cuModuleLoadDataEx(&mod, image, 2, opts, values);
  if (rc != CUDA_SUCCESS) {
    error_log[sizeof error_log - 1] = '\0';
    const char *log = trimmed(error_log);
    if (*log && !is_sticky(rc))
      fe_error(s, "loading the compiled kernels on the GPU failed: %s; the JIT says: %s", cuda_error_string(rc),
               log);
    fail(s, "loading the compiled kernels on the GPU", rc);
  }
  CudaModule *m = NEW(CudaModule);
  m->mod = mod;
  return m;
}

CudaFunction *cuda_function(CudaModule *m, const char *name, Span s) {
  require_ready(s);
  CUfunction fn = NULL;
  CUresult rc = api.cuModuleGetFunction(&fn, m->mod, name);
  if (rc != CUDA_SUCCESS) fail(s, una_sprintf("looking up the GPU kernel '%s'", name), rc);
  CudaFunction *f = NEW(CudaFunction);
  f->fn = fn;
  f->name = una_strdup(name);
  return f;
}

void cuda_launch(CudaFunction *f, unsigned grid, unsigned block, unsigned shmem, void **args, Span s) {
  require_ready(s);
  CHECK(api.cuLaunchKernel(f->fn, grid, 1, 1, block, 1, 1, shmem, stream, args, NULL), s,
        una_sprintf("launching the GPU kernel '%s'", f->name));
}

void *cuda_stream(Span s) {
  require_ready(s);
  return stream;
}

void cuda_sync(Span s) {
  require_ready(s);
  CHECK(api.cuStreamSynchronize(stream), s, "the GPU computation");
}

/* ---- timers ---- */

struct CudaTimer {
  CUevent start, end;
};

CudaTimer *cuda_timer_start(void) {
  require_ready(fe_nospan);
  CudaTimer *t = NEW(CudaTimer);
  CHECK(api.cuEventCreate(&t->start, CU_EVENT_DEFAULT), fe_nospan, "creating a GPU event");
  CHECK(api.cuEventCreate(&t->end, CU_EVENT_DEFAULT), fe_nospan, "creating a GPU event");
  CHECK(api.cuEventRecord(t->start, stream), fe_nospan, "recording a GPU event");
  return t;
}

double cuda_timer_stop_ms(CudaTimer *t) {
  require_ready(fe_nospan);
  float ms = 0;
  CHECK(api.cuEventRecord(t->end, stream), fe_nospan, "recording a GPU event");
  CHECK(api.cuEventSynchronize(t->end), fe_nospan, "waiting for a GPU event");
  CHECK(api.cuEventElapsedTime(&ms, t->start, t->end), fe_nospan, "timing GPU events");
  if (api.cuEventDestroy) {
    (void)api.cuEventDestroy(t->start);
    (void)api.cuEventDestroy(t->end);
  }
  return ms;
}
