/* fake_nvrtc.c: a stand-in for libnvrtc.so that compiles CUDA C++ for the
   host, so that the tests run Una's kernels without a GPU (opened through
   $UNA_LIBNVRTC; built as $(B)/fake/libnvrtc.so). nvrtcCompileProgram writes
   the source to a temporary folder and compiles it with the host's C++
   compiler ($UNA_HOST_CXX, default c++) into a shared object, with
   cuda_host.h forced in front and one launch entry appended per __global__
   function; the "cubin" it returns is that shared object, which the
   stand-in driver (fake_libcuda.c) loads and runs. The compiler's messages
   are the program log. UNA_HOST_INCLUDE (set by the Makefile) is the folder
   of cuda_host.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef struct Program {
  char *src;
  char *log;
  char *image;
  size_t size;
} Program;

enum { OK = 0, ERR_OUT_OF_MEMORY = 1, ERR_INVALID_INPUT = 3, ERR_INVALID_PROGRAM = 4, ERR_COMPILATION = 6 };

API const char *nvrtcGetErrorString(int rc);
const char *nvrtcGetErrorString(int rc) {
  switch (rc) {
  case OK: return "NVRTC_SUCCESS";
  case ERR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
  case ERR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
  case ERR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
  case ERR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
  default: return "NVRTC_ERROR_INTERNAL_ERROR";
  }
}

API int nvrtcVersion(int *major, int *minor);
int nvrtcVersion(int *major, int *minor) {
  *major = 99; /* never a real NVRTC's: the kernel cache keeps the two apart */
  *minor = 0;
  return OK;
}

API int nvrtcCreateProgram(Program **prog, const char *src, const char *name, int nheaders,
                           const char *const *headers, const char *const *include_names);
int nvrtcCreateProgram(Program **prog, const char *src, const char *name, int nheaders, const char *const *headers,
                       const char *const *include_names) {
  (void)name, (void)nheaders, (void)headers, (void)include_names;
  if (!prog || !src) return ERR_INVALID_INPUT;
  Program *p = calloc(1, sizeof *p);
  if (!p || !(p->src = strdup(src))) return ERR_OUT_OF_MEMORY;
  *prog = p;
  return OK;
}

API int nvrtcDestroyProgram(Program **prog);
int nvrtcDestroyProgram(Program **prog) {
  if (!prog || !*prog) return ERR_INVALID_PROGRAM;
  free((*prog)->src);
  free((*prog)->log);
  free((*prog)->image);
  free(*prog);
  *prog = NULL;
  return OK;
}

static char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap + 1);
  size_t k;
  while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) b = realloc(b, (cap *= 2) + 1);
  }
  fclose(f);
  if (b) b[n] = '\0';
  *size = n;
  return b;
}

/* Appends to f the launch entry of every `__global__ void NAME(` in src. */
static void write_entries(FILE *f, const char *src) {
  static const char key[] = "__global__ void ";
  for (const char *s = strstr(src, key); s; s = strstr(s + 1, key)) {
    const char *n = s + sizeof key - 1, *e = n;
    while (isalnum((unsigned char)*e) || *e == '_') e++;
    if (e == n || *e != '(') continue;
    fprintf(f, "extern \"C\" void una_host_entry_%.*s(void **p) { una_host_call(%.*s, p); }\n", (int)(e - n), n,
            (int)(e - n), n);
  }
}

API int nvrtcCompileProgram(Program *p, int nopts, const char *const *opts);
int nvrtcCompileProgram(Program *p, int nopts, const char *const *opts) {
  (void)nopts, (void)opts;
  if (!p) return ERR_INVALID_PROGRAM;
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/una-nvrtc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return ERR_OUT_OF_MEMORY;
  char src[4200], so[4200], log[4200], cmd[16384];
  snprintf(src, sizeof src, "%s/k.cu.cc", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  FILE *f = fopen(src, "w");
  if (!f) return ERR_OUT_OF_MEMORY;
  fprintf(f, "%s\n", p->src);
  write_entries(f, p->src);
  fclose(f);
  const char *cxx = getenv("UNA_HOST_CXX"), *inc = getenv("UNA_HOST_INCLUDE");
  snprintf(cmd, sizeof cmd, "%s -std=c++17 -O1 -fPIC -shared -w -I'%s' -include cuda_host.h -o '%s' '%s' 2>'%s'",
           cxx && *cxx ? cxx : "c++", inc && *inc ? inc : ".", so, src, log);
  int rc = system(cmd);
  size_t n = 0;
  free(p->log);
  p->log = read_all(log, &n);
  if (rc == 0) {
    free(p->image);
    p->image = read_all(so, &p->size);
  }
  unlink(src), unlink(so), unlink(log), rmdir(dir);
  if (rc != 0) return ERR_COMPILATION;
  return p->image ? OK : ERR_OUT_OF_MEMORY;
}

API int nvrtcGetProgramLogSize(Program *p, size_t *n);
int nvrtcGetProgramLogSize(Program *p, size_t *n) {
  *n = p->log ? strlen(p->log) + 1 : 1;
  return OK;
}

API int nvrtcGetProgramLog(Program *p, char *out);
int nvrtcGetProgramLog(Program *p, char *out) {
  strcpy(out, p->log ? p->log : "");
  return OK;
}

/* The image, for either question: it is a host shared object either way. */
API int nvrtcGetCUBINSize(Program *p, size_t *n);
int nvrtcGetCUBINSize(Program *p, size_t *n) {
  if (!p->image) return ERR_INVALID_PROGRAM;
  *n = p->size;
  return OK;
}

API int nvrtcGetCUBIN(Program *p, char *out);
int nvrtcGetCUBIN(Program *p, char *out) {
  if (!p->image) return ERR_INVALID_PROGRAM;
  memcpy(out, p->image, p->size);
  return OK;
}

API int nvrtcGetPTXSize(Program *p, size_t *n);
int nvrtcGetPTXSize(Program *p, size_t *n) { return nvrtcGetCUBINSize(p, n); }

API int nvrtcGetPTX(Program *p, char *out);
int nvrtcGetPTX(Program *p, char *out) { return nvrtcGetCUBIN(p, out); }
