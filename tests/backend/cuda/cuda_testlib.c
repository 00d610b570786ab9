/* cuda_testlib.c: see cuda_testlib.h. */
#include "cuda_testlib.h"
#include <check.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../frontend/ir/common.h"

const char *fake_path(void) {
  const char *p = getenv("UNA_FAKE_LIBCUDA");
  if (p && *p) return p;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ck_assert_int_gt(n, 0);
  exe[n] = '\0';
  return una_sprintf("%s/fake/libcuda.so.1", dirname(exe));
}

void use_fake(const char *mode) {
  const char *p = fake_path();
  ck_assert_msg(access(p, R_OK) == 0, "the fake libcuda %s is missing (make builds it)", p);
  setenv("UNA_LIBCUDA", p, 1);
  /* the stand-in cuBLAS beside it: never the system's, which would look
     for a real driver */
  char *dir = una_strdup(p);
  setenv("UNA_LIBCUBLAS", una_sprintf("%s/libcublas.so", dirname(dir)), 1);
  if (*mode)
    setenv("FAKE_CUDA_MODE", mode, 1);
  else
    unsetenv("FAKE_CUDA_MODE");
}

void use_host_kernels(void) {
  use_fake("");
  char *dir = una_strdup(fake_path());
  char *nvrtc = una_sprintf("%s/libnvrtc.so", dirname(dir));
  ck_assert_msg(access(nvrtc, R_OK) == 0, "the stand-in NVRTC %s is missing (make builds it)", nvrtc);
  setenv("UNA_LIBNVRTC", nvrtc, 1);
  const char *root = getenv("UNA_ROOT");
  setenv("UNA_HOST_INCLUDE", una_sprintf("%s/tests/backend/cuda", root && *root ? root : "."), 1);
}

const char *find_ptxas(void) {
  const char *path = getenv("PATH");
  char *dirs = una_strdup(path ? path : "");
  for (char *d = strtok(dirs, ":"); d; d = strtok(NULL, ":")) {
    char *p = una_sprintf("%s/ptxas", d);
    if (access(p, X_OK) == 0) return p;
  }
  const char *home = getenv("CUDA_HOME");
  if (home && *home) {
    char *p = una_sprintf("%s/bin/ptxas", home);
    if (access(p, X_OK) == 0) return p;
  }
  if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return "/usr/local/cuda/bin/ptxas";
  return NULL;
}
