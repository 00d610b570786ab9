/* test_nvrtc.c: NVRTC through backend/cuda/nvrtc.c: a small extern "C"
   kernel compiles to PTX for compute_90 (".target sm_90", ".entry NAME")
   that ptxas accepts for sm_90, and to a cubin for sm_90 (an ELF file); a
   syntax error gives NULL and a log naming the line; Una's options string;
   the version. These tests fail, not skip, when NVRTC cannot be loaded:
   the machines that run them have the CUDA toolkit. */
#include <check.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../backend/cuda/nvrtc.h"
#include "../../../frontend/ir/common.h"
#include "../../suites.h"
#include "cuda_testlib.h"

static const char *const axpy_src =
    "extern \"C\" __global__ void una_axpy(double *y, const double *x, double a, long long n) {\n"
    "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

/* Fails the test when NVRTC cannot be loaded. */
static void require_nvrtc(void) {
  const char *why = NULL;
  if (!nvrtc_available(&why)) ck_abort_msg("NVRTC must be installed for these tests: %s", why);
}

START_TEST(ptx_for_compute_90) {
  require_nvrtc();
  size_t size = 0;
  char *log = NULL;
  char *ptx = nvrtc_compile(axpy_src, "axpy.cu", 90, false, &size, &log);
  ck_assert_msg(ptx != NULL, "compile failed: %s", log ? log : "(no log)");
  ck_assert_uint_eq(size, strlen(ptx) + 1); /* the size counts the NUL */
  ck_assert_ptr_nonnull(strstr(ptx, ".target sm_90"));
  ck_assert_ptr_nonnull(strstr(ptx, ".entry una_axpy"));
  ck_assert_ptr_nonnull(strstr(ptx, ".version"));
}
END_TEST

START_TEST(ptxas_accepts_the_ptx) {
  require_nvrtc();
  const char *ptxas = find_ptxas();
  ck_assert_msg(ptxas != NULL, "ptxas not found on PATH nor in /usr/local/cuda/bin");
  size_t size = 0;
  char *log = NULL;
  char *ptx = nvrtc_compile(axpy_src, "axpy.cu", 90, false, &size, &log);
  ck_assert_msg(ptx != NULL, "compile failed: %s", log ? log : "(no log)");
  char dir[] = "/tmp/una_nvrtc_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *in = una_sprintf("%s/axpy.ptx", dir), *out = una_sprintf("%s/axpy.cubin", dir);
  FILE *f = fopen(in, "w");
  ck_assert_ptr_nonnull(f);
  fputs(ptx, f);
  fclose(f);
  int rc = system(una_sprintf("'%s' -arch=sm_90 -o '%s' '%s'", ptxas, out, in));
  struct stat st;
  bool made = stat(out, &st) == 0 && st.st_size > 0;
  unlink(in);
  unlink(out);
  rmdir(dir);
  ck_assert_msg(rc == 0, "ptxas -arch=sm_90 refused the PTX (status %d)", rc);
  ck_assert(made);
}
END_TEST

START_TEST(cubin_for_sm_90) {
  require_nvrtc();
  size_t size = 0;
  char *log = NULL;
  unsigned char *cubin = nvrtc_compile(axpy_src, "axpy.cu", 90, true, &size, &log);
  ck_assert_msg(cubin != NULL, "compile failed: %s", log ? log : "(no log)");
  ck_assert_uint_gt(size, 64);
  ck_assert(cubin[0] == 0x7f && cubin[1] == 'E' && cubin[2] == 'L' && cubin[3] == 'F');
}
END_TEST

START_TEST(syntax_error_names_the_line) {
  require_nvrtc();
  const char *bad = "extern \"C\" __global__ void k(double *x) {\n"
                    "  x[0] = 1.0;\n"
                    "  x[1] = ;\n"
                    "}\n";
  size_t size = 123;
  char *log = NULL;
  void *image = nvrtc_compile(bad, "bad.cu", 90, false, &size, &log);
  ck_assert_ptr_null(image);
  ck_assert_ptr_nonnull(log);
  ck_assert_msg(strstr(log, "bad.cu(3)") != NULL, "the log does not name line 3: %s", log);
  ck_assert_ptr_nonnull(strstr(log, "error"));
  image = nvrtc_compile(bad, "bad.cu", 90, true, &size, &log);
  ck_assert_ptr_null(image);
  ck_assert_ptr_nonnull(strstr(log, "bad.cu(3)"));
}
END_TEST

START_TEST(options_string) {
  ck_assert_str_eq(nvrtc_options(90, true), "--gpu-architecture=sm_90 --fmad=false --std=c++17");
  ck_assert_str_eq(nvrtc_options(90, false), "--gpu-architecture=compute_90 --fmad=false --std=c++17");
  ck_assert_str_eq(nvrtc_options(86, true), "--gpu-architecture=sm_86 --fmad=false --std=c++17");
}
END_TEST

START_TEST(version_string) {
  require_nvrtc();
  const char *v = nvrtc_version();
  int major = 0, minor = -1;
  ck_assert_int_eq(sscanf(v, "%d.%d", &major, &minor), 2);
  ck_assert_int_ge(major, 11);
  ck_assert_int_ge(minor, 0);
}
END_TEST

Suite *suite_nvrtc(void) {
  Suite *s = suite_create("nvrtc");
  TCase *tc = tcase_create("nvrtc");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, ptx_for_compute_90);
  tcase_add_test(tc, ptxas_accepts_the_ptx);
  tcase_add_test(tc, cubin_for_sm_90);
  tcase_add_test(tc, syntax_error_names_the_line);
  tcase_add_test(tc, options_string);
  tcase_add_test(tc, version_string);
  suite_add_tcase(s, tc);
  return s;
}
