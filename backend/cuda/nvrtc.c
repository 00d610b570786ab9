/* nvrtc.c: NVRTC behind nvrtc.h: the library opened with dlopen (the
   sonames first, then the toolkit's lib64 folders), CUDA C++ compiled to
   PTX or a cubin with Una's fixed options, the compile log returned on
   failure. */
#include "nvrtc.h"
#include "../../frontend/ir/common.h"
#include "cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>

static struct {
  PFN_nvrtcGetErrorString GetErrorString;
  PFN_nvrtcVersion Version;
  PFN_nvrtcCreateProgram CreateProgram;
  PFN_nvrtcDestroyProgram DestroyProgram;
  PFN_nvrtcCompileProgram CompileProgram;
  PFN_nvrtcGetProgramLogSize GetProgramLogSize;
  PFN_nvrtcGetProgramLog GetProgramLog;
  PFN_nvrtcGetPTXSize GetPTXSize;
  PFN_nvrtcGetPTX GetPTX;
  PFN_nvrtcGetCUBINSize GetCUBINSize;
  PFN_nvrtcGetCUBIN GetCUBIN;
} nv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static const char *load_why;
static const char *version = "unknown";

/* dlopen of path; on failure keeps the first error seen in *first. */
static void *try_open(const char *path, const char **first) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h && !*first) {
    const char *e = dlerror();
    *first = una_strdup(e ? e : una_sprintf("%s cannot be opened", path));
  }
  return h;
}

/* The library: $UNA_LIBNVRTC alone when it is set (tests use a stand-in,
   tests/backend/cuda/fake_nvrtc.c), else the sonames, then the toolkit's
   lib64 folders. On failure *first gets the first error seen. */
static void *open_library(const char **first) {
  const char *forced = getenv("UNA_LIBNVRTC");
  if (forced && *forced) return try_open(forced, first);
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  void *h = NULL;
  for (size_t i = 0; !h && i < sizeof names / sizeof *names; i++) h = try_open(names[i], first);
  const char *homes[] = {getenv("CUDA_HOME"), "/usr/local/cuda"};
  for (size_t i = 0; !h && i < sizeof homes / sizeof *homes; i++) {
    if (!homes[i] || !*homes[i]) continue;
    for (size_t j = 0; !h && j < sizeof names / sizeof *names; j++)
      h = try_open(una_sprintf("%s/lib64/%s", homes[i], names[j]), first);
  }
  return h;
}

/* Opens the library and looks up the entry points; sets loaded or load_why. */
static void load(void) {
  const char *first = NULL;
  void *h = open_library(&first);
  if (!h) {
    load_why = una_sprintf("NVRTC not found (%s)", first ? first : "libnvrtc.so cannot be opened");
    return;
  }
#define SYM(field, name)                                                    \
  if (!(nv.field = (PFN_nvrtc##field)(uintptr_t)dlsym(h, name))) {          \
    load_why = "NVRTC not usable (the library lacks " name ")";             \
    return;                                                                 \
  }
  SYM(GetErrorString, "nvrtcGetErrorString");
  SYM(Version, "nvrtcVersion");
  SYM(CreateProgram, "nvrtcCreateProgram");
  SYM(DestroyProgram, "nvrtcDestroyProgram");
  SYM(CompileProgram, "nvrtcCompileProgram");
  SYM(GetProgramLogSize, "nvrtcGetProgramLogSize");
  SYM(GetProgramLog, "nvrtcGetProgramLog");
  SYM(GetPTXSize, "nvrtcGetPTXSize");
  SYM(GetPTX, "nvrtcGetPTX");
  SYM(GetCUBINSize, "nvrtcGetCUBINSize");
  SYM(GetCUBIN, "nvrtcGetCUBIN");
#undef SYM
  int major = 0, minor = 0;
  if (nv.Version(&major, &minor) == NVRTC_SUCCESS) version = una_sprintf("%d.%d", major, minor);
  loaded = true;
}

bool nvrtc_available(const char **why) {
  pthread_once(&once, load);
  if (!loaded && why) *why = load_why;
  return loaded;
}

const char *nvrtc_version(void) {
  pthread_once(&once, load);
  return version;
}

const char *nvrtc_options(int arch, bool cubin) {
  return una_sprintf("--gpu-architecture=%s_%d --fmad=false --std=c++17", cubin ? "sm" : "compute", arch);
}

/* NVRTC's compile log of prog ("" when there is none). */
static char *program_log(nvrtcProgram prog) {
  size_t n = 0;
  if (nv.GetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0) return "";
  char *log = GC_MALLOC_ATOMIC(n + 1);
  if (!log || nv.GetProgramLog(prog, log) != NVRTC_SUCCESS) return "";
  log[n] = '\0';
  return log;
}

void *nvrtc_compile(const char *src, const char *name, int arch, bool cubin, size_t *size, char **log) {
  const char *why = NULL;
  *size = 0;
  if (log) *log = NULL;
  if (!nvrtc_available(&why)) {
    if (log) *log = una_strdup(why);
    return NULL;
  }
  const char *opts[3] = {
      una_sprintf("--gpu-architecture=%s_%d", cubin ? "sm" : "compute", arch),
      "--fmad=false",
      "--std=c++17",
  };
  nvrtcProgram prog = NULL;
  nvrtcResult rc = nv.CreateProgram(&prog, src, name, 0, NULL, NULL);
  if (rc != NVRTC_SUCCESS) {
    if (log) *log = una_sprintf("NVRTC cannot create the program %s: %s", name, nv.GetErrorString(rc));
    return NULL;
  }
  rc = nv.CompileProgram(prog, 3, opts);
  if (rc != NVRTC_SUCCESS) {
    if (log)
      *log = una_sprintf("NVRTC failed to compile %s: %s\n%s", name, nv.GetErrorString(rc), program_log(prog));
    nv.DestroyProgram(&prog);
    return NULL;
  }
  size_t n = 0;
  char *image = NULL;
  rc = cubin ? nv.GetCUBINSize(prog, &n) : nv.GetPTXSize(prog, &n);
  if (rc == NVRTC_SUCCESS && n > 0) {
    image = GC_MALLOC_ATOMIC(n + 1);
    if (!image) una_internal_error(__FILE__, __LINE__, "out of memory");
    rc = cubin ? nv.GetCUBIN(prog, image) : nv.GetPTX(prog, image);
    image[n] = '\0'; /* PTX: n already counts its NUL */
  }
  if (rc != NVRTC_SUCCESS || !image) {
    if (log)
      *log = una_sprintf("NVRTC compiled %s but returned no %s: %s", name, cubin ? "cubin" : "PTX",
                         rc != NVRTC_SUCCESS ? nv.GetErrorString(rc) : "empty output");
    nv.DestroyProgram(&prog);
    return NULL;
  }
  nv.DestroyProgram(&prog);
  *size = n;
  return image;
}
