/* fake_libcuda.c: a stand-in for libcuda.so.1 that runs on the host, for
   the tests of backend/cuda/driver.c (test_cuda_driver.c). Built on its own
   as $(B)/fake/libcuda.so.1 (never part of libuna.a or check_una) and
   opened through $UNA_LIBCUDA. Device memory is host memory under a byte
   budget, each allocation ending at an inaccessible page (so that a kernel
   reading past an array's end crashes the test) and filled with NaNs (so
   that elements a kernel forgot to write show); copies are memcpy.

   Modules: an image that is a shared object for this host (what the
   stand-in NVRTC, fake_nvrtc.c, makes of CUDA C++) is loaded and its
   kernels run on the host (fake_blocks.c); a launch that cannot finish
   fails as a kernel would (CUDA_ERROR_LAUNCH_FAILED at the next
   synchronisation, sticky) and says why on stderr. Any other image (a real
   cubin or PTX) gives dummy handles whose launches do nothing.

   Environment:
     FAKE_CUDA_MODE    nodevice: cuInit returns CUDA_ERROR_NO_DEVICE (100);
                       zero: the device count is 0; nopool: the device says
                       it has no memory pools (cuMemAlloc, not cuMemAllocAsync)
     FAKE_CUDA_MEM     the memory budget in bytes (default 64 MiB)
     FAKE_CUDA_TOTAL   the total memory reported (default: the budget)
     FAKE_CUDA_LAUNCH  an error code that launches leave behind: the next
                       cuStreamSynchronize returns it (and, for the sticky
                       codes 700, 714-716, 718, 719, 214, every later call)
     FAKE_CUDA_REFUSE  an error code cuLaunchKernel itself returns
     FAKE_CUDA_TRACE   set: each launch of a host kernel is printed on stderr

   The kernel named "set42" writes 42.0 to the double its first argument
   (a CUdeviceptr) points to, so that tests can see the arguments arrive. */
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_blocks.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *Handle;

enum {
  OK = 0,
  ERR_INVALID_VALUE = 1,
  ERR_OUT_OF_MEMORY = 2,
  ERR_NOT_INITIALIZED = 3,
  ERR_NO_DEVICE = 100,
  ERR_INVALID_DEVICE = 101,
  ERR_INVALID_IMAGE = 200,
  ERR_INVALID_PTX = 218,
  ERR_NOT_FOUND = 500,
  ERR_LAUNCH_FAILED = 719,
};

/* Every entry point is exported; prototypes keep -Wmissing-prototypes quiet. */
#define API __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialised;
static size_t budget, used;
static CUresult pending; /* returned by the next synchronisation */
static CUresult sticky;  /* returned by every call once set */

/* The live allocations, to know their sizes when they are freed: the
   mapping (base, maplen) holds the payload p at its end, before a page
   that cannot be accessed. */
typedef struct Block {
  void *p, *base;
  size_t bytes, maplen;
  struct Block *next;
} Block;
static Block *blocks;

static const char *mode(void) {
  const char *m = getenv("FAKE_CUDA_MODE");
  return m ? m : "";
}

static size_t env_size(const char *name, size_t dflt) {
  const char *v = getenv(name);
  return v && *v ? (size_t)strtoull(v, NULL, 10) : dflt;
}

static int is_sticky(CUresult rc) {
  return rc == 700 || rc == 714 || rc == 715 || rc == 716 || rc == 718 || rc == 719 || rc == 214;
}

/* The status every call starts with. */
#define ENTER()                        \
  do {                                 \
    if (!initialised) return ERR_NOT_INITIALIZED; \
    if (sticky) return sticky;         \
  } while (0)

API CUresult cuInit(unsigned flags);
CUresult cuInit(unsigned flags) {
  (void)flags;
  if (strcmp(mode(), "nodevice") == 0) return ERR_NO_DEVICE;
  budget = env_size("FAKE_CUDA_MEM", (size_t)64 << 20);
  initialised = 1;
  return OK;
}

API CUresult cuDriverGetVersion(int *v);
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return OK;
}

API CUresult cuDeviceGetCount(int *n);
CUresult cuDeviceGetCount(int *n) {
  ENTER();
  *n = strcmp(mode(), "zero") == 0 ? 0 : 1;
  return OK;
}

API CUresult cuDeviceGet(int *dev, int ordinal);
CUresult cuDeviceGet(int *dev, int ordinal) {
  ENTER();
  if (ordinal != 0 || strcmp(mode(), "zero") == 0) return ERR_INVALID_DEVICE;
  *dev = 0;
  return OK;
}

API CUresult cuDeviceGetAttribute(int *value, int attr, int dev);
CUresult cuDeviceGetAttribute(int *value, int attr, int dev) {
  ENTER();
  (void)dev;
  switch (attr) {
  case 75: *value = 9; return OK;   /* compute capability major */
  case 76: *value = 0; return OK;   /* minor */
  case 115: *value = strcmp(mode(), "nopool") != 0; return OK; /* memory pools */
  default: *value = 0; return OK;
  }
}

API CUresult cuDeviceGetName(char *name, int len, int dev);
CUresult cuDeviceGetName(char *name, int len, int dev) {
  ENTER();
  (void)dev;
  snprintf(name, (size_t)len, "%s", "Fake CUDA Device");
  return OK;
}

API CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) {
  ENTER();
  (void)dev;
  *bytes = env_size("FAKE_CUDA_TOTAL", budget);
  return OK;
}

static int ctx_dummy, stream_dummy, module_dummy, function_dummy, set42_dummy;

API CUresult cuDevicePrimaryCtxRetain(Handle *ctx, int dev);
CUresult cuDevicePrimaryCtxRetain(Handle *ctx, int dev) {
  ENTER();
  (void)dev;
  *ctx = &ctx_dummy;
  return OK;
}

API CUresult cuCtxSetCurrent(Handle ctx);
CUresult cuCtxSetCurrent(Handle ctx) {
  ENTER();
  return ctx == &ctx_dummy ? OK : ERR_INVALID_VALUE;
}

API CUresult cuStreamCreate(Handle *s, unsigned flags);
CUresult cuStreamCreate(Handle *s, unsigned flags) {
  ENTER();
  (void)flags;
  *s = &stream_dummy;
  return OK;
}

API CUresult cuStreamSynchronize(Handle s);
CUresult cuStreamSynchronize(Handle s) {
  ENTER();
  (void)s;
  CUresult rc = pending;
  pending = OK;
  if (is_sticky(rc)) sticky = rc;
  return rc;
}

/* ---- memory ---- */

static CUresult mem_alloc(CUdeviceptr *p, size_t bytes) {
  ENTER();
  if (bytes == 0) return ERR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  CUresult rc = OK;
  if (used + bytes > budget) {
    rc = ERR_OUT_OF_MEMORY;
  } else {
    size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded = (bytes + 7) & ~(size_t)7;
    size_t maplen = (rounded + page - 1) / page * page + page;
    char *base = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    Block *b = base == MAP_FAILED ? NULL : malloc(sizeof *b);
    if (!b) {
      pthread_mutex_unlock(&lock);
      return ERR_OUT_OF_MEMORY;
    }
    mprotect(base + maplen - page, page, PROT_NONE);
    b->base = base;
    b->maplen = maplen;
    b->p = base + maplen - page - rounded;
    memset(b->p, 0xff, rounded); /* NaNs */
    b->bytes = bytes;
    b->next = blocks;
    blocks = b;
    used += bytes;
    *p = (CUdeviceptr)(uintptr_t)b->p;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

static CUresult mem_free(CUdeviceptr p) {
  ENTER();
  pthread_mutex_lock(&lock);
  CUresult rc = ERR_INVALID_VALUE;
  for (Block **b = &blocks; *b; b = &(*b)->next) {
    if ((uintptr_t)(*b)->p != p) continue;
    Block *dead = *b;
    *b = dead->next;
    used -= dead->bytes;
    munmap(dead->base, dead->maplen);
    free(dead);
    rc = OK;
    break;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) { return mem_alloc(p, bytes); }

API CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemFree_v2(CUdeviceptr p) { return mem_free(p); }

API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, Handle s);
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, Handle s) {
  (void)s;
  if (strcmp(mode(), "nopool") == 0) return ERR_INVALID_VALUE; /* must not be called */
  return mem_alloc(p, bytes);
}

API CUresult cuMemFreeAsync(CUdeviceptr p, Handle s);
CUresult cuMemFreeAsync(CUdeviceptr p, Handle s) {
  (void)s;
  if (strcmp(mode(), "nopool") == 0) return ERR_INVALID_VALUE;
  return mem_free(p);
}

API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total);
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  ENTER();
  pthread_mutex_lock(&lock);
  *free_bytes = budget - used;
  *total = env_size("FAKE_CUDA_TOTAL", budget);
  pthread_mutex_unlock(&lock);
  return OK;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, Handle s);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, Handle s) {
  ENTER();
  (void)s;
  memcpy((void *)(uintptr_t)dst, src, n);
  return OK;
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, Handle s);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, Handle s) {
  ENTER();
  (void)s;
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return OK;
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, Handle s);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, Handle s) {
  ENTER();
  (void)s;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  return OK;
}

/* ---- modules and launches ---- */

/* A module compiled for the host, and its kernels: kept for the process,
   as a driver keeps modules until they are unloaded (and listed, so that
   a leak checker sees them reachable). */
typedef struct HostModule {
  void *lib;
  UnaHostRt *rt;
  struct HostModule *next;
} HostModule;
typedef struct HostFunction {
  HostModule *m;
  void (*entry)(void **);
  char name[128];
  struct HostFunction *next;
} HostFunction;
static HostModule *modules;
static HostFunction *functions;

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#define HOST_MACHINE EM_NONE
#endif

/* The size of a shared object for this host (its section headers come
   last), or 0 when image is not one. */
static size_t host_image_size(const void *image) {
  Elf64_Ehdr h;
  memcpy(&h, image, sizeof h);
  if (memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_machine != HOST_MACHINE ||
      h.e_type != ET_DYN)
    return 0;
  return (size_t)h.e_shoff + (size_t)h.e_shnum * h.e_shentsize;
}

/* Loads a host shared object from memory, through a memfd that stays open
   (dlopen knows a library by its path: a reused descriptor's path would
   name the library loaded before). */
static CUresult load_host(Handle *mod, const void *image, size_t size) {
  int fd = memfd_create("una-kernels", MFD_CLOEXEC);
  if (fd < 0) return ERR_INVALID_IMAGE;
  const char *p = image;
  for (size_t done = 0; done < size;) {
    ssize_t k = write(fd, p + done, size - done);
    if (k <= 0) {
      close(fd);
      return ERR_INVALID_IMAGE;
    }
    done += (size_t)k;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  UnaHostRt *rt = lib ? dlsym(lib, "una_host_rt") : NULL;
  if (!rt) {
    fprintf(stderr, "fake CUDA: cannot load a host module: %s\n", lib ? "it has no una_host_rt" : dlerror());
    close(fd);
    return ERR_INVALID_IMAGE;
  }
  HostModule *m = malloc(sizeof *m);
  m->lib = lib;
  m->rt = rt;
  m->next = modules;
  modules = m;
  *mod = m;
  return OK;
}

static HostModule *host_module(Handle mod) {
  return mod && mod != &module_dummy ? (HostModule *)mod : NULL;
}

static HostFunction *host_function(Handle f) {
  return f && f != &function_dummy && f != &set42_dummy ? (HostFunction *)f : NULL;
}

/* An image starting with "BAD" is refused with a JIT log. */
API CUresult cuModuleLoadDataEx(Handle *mod, const void *image, unsigned n, int *opts, void **values);
CUresult cuModuleLoadDataEx(Handle *mod, const void *image, unsigned n, int *opts, void **values) {
  ENTER();
  if (!image) return ERR_INVALID_VALUE;
  if (strncmp(image, "BAD", 3) == 0) {
    char *log = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; i++) {
      if (opts[i] == 5) log = values[i];                         /* CU_JIT_ERROR_LOG_BUFFER */
      if (opts[i] == 6) size = (size_t)(uintptr_t)values[i];     /* ..._SIZE_BYTES */
    }
    if (log && size) snprintf(log, size, "ptxas fatal: fake JIT refuses this image\n");
    return ERR_INVALID_PTX;
  }
  size_t host = host_image_size(image);
  if (host) return load_host(mod, image, host);
  *mod = &module_dummy;
  return OK;
}

API CUresult cuModuleGetFunction(Handle *f, Handle mod, const char *name);
CUresult cuModuleGetFunction(Handle *f, Handle mod, const char *name) {
  ENTER();
  HostModule *m = host_module(mod);
  if (m) {
    char sym[200];
    snprintf(sym, sizeof sym, "una_host_entry_%s", name);
    void (*entry)(void **) = (void (*)(void **))(uintptr_t)dlsym(m->lib, sym);
    if (!entry || strlen(name) >= sizeof ((HostFunction *)0)->name) return ERR_NOT_FOUND;
    HostFunction *h = malloc(sizeof *h);
    h->m = m;
    h->entry = entry;
    snprintf(h->name, sizeof h->name, "%s", name);
    h->next = functions;
    functions = h;
    *f = h;
    return OK;
  }
  if (mod != &module_dummy) return ERR_INVALID_VALUE;
  if (strcmp(name, "missing") == 0) return ERR_NOT_FOUND;
  *f = strcmp(name, "set42") == 0 ? (Handle)&set42_dummy : (Handle)&function_dummy;
  return OK;
}

API CUresult cuLaunchKernel(Handle f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shmem, Handle s, void **params, void **extra);
CUresult cuLaunchKernel(Handle f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, Handle s, void **params, void **extra) {
  ENTER();
  (void)shmem, (void)s, (void)extra;
  if (gx == 0 || bx == 0 || bx > 1024) return ERR_INVALID_VALUE;
  CUresult refuse = (CUresult)env_size("FAKE_CUDA_REFUSE", 0);
  if (refuse) return refuse;
  HostFunction *h = host_function(f);
  if (h) {
    if (gy != 1 || gz != 1 || by != 1 || bz != 1) return ERR_INVALID_VALUE; /* 1-D launches only */
    const char *why = NULL;
    if (getenv("FAKE_CUDA_TRACE")) fprintf(stderr, "fake CUDA: launch %s: %u blocks of %u threads\n", h->name, gx, bx);
    if (!fake_blocks_run(h->m->rt, h->entry, gx, bx, params, &why)) {
      fprintf(stderr, "fake CUDA: kernel %s (%u blocks of %u threads) failed: %s\n", h->name, gx, bx, why);
      pending = ERR_LAUNCH_FAILED;
    }
  } else if (f == &set42_dummy) {
    CUdeviceptr out = *(CUdeviceptr *)params[0];
    double v = 42.0;
    memcpy((void *)(uintptr_t)out, &v, sizeof v);
  }
  CUresult later = (CUresult)env_size("FAKE_CUDA_LAUNCH", 0);
  if (later) pending = later;
  return OK;
}

/* ---- events ---- */

static int event_dummy[2];

API CUresult cuEventCreate(Handle *ev, unsigned flags);
CUresult cuEventCreate(Handle *ev, unsigned flags) {
  ENTER();
  (void)flags;
  *ev = &event_dummy[0];
  return OK;
}

API CUresult cuEventRecord(Handle ev, Handle s);
CUresult cuEventRecord(Handle ev, Handle s) {
  ENTER();
  (void)ev, (void)s;
  return OK;
}

API CUresult cuEventSynchronize(Handle ev);
CUresult cuEventSynchronize(Handle ev) {
  ENTER();
  (void)ev;
  return OK;
}

API CUresult cuEventElapsedTime_v2(float *ms, Handle a, Handle b);
CUresult cuEventElapsedTime_v2(float *ms, Handle a, Handle b) {
  ENTER();
  (void)a, (void)b;
  *ms = 1.5f;
  return OK;
}

API CUresult cuEventDestroy_v2(Handle ev);
CUresult cuEventDestroy_v2(Handle ev) {
  (void)ev;
  return OK;
}

/* ---- error strings ---- */

static const struct {
  CUresult rc;
  const char *name, *text;
} errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

API CUresult cuGetErrorName(CUresult rc, const char **name);
CUresult cuGetErrorName(CUresult rc, const char **name) {
  for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
    if (errors[i].rc == rc) {
      *name = errors[i].name;
      return OK;
    }
  *name = NULL;
  return ERR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult rc, const char **text);
CUresult cuGetErrorString(CUresult rc, const char **text) {
  for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
    if (errors[i].rc == rc) {
      *text = errors[i].text;
      return OK;
    }
  *text = NULL;
  return ERR_INVALID_VALUE;
}
