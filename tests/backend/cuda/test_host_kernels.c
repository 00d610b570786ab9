/* test_host_kernels.c: the stand-ins that run CUDA kernels on the host
   (fake_nvrtc.c, fake_libcuda.c, fake_blocks.c), through Una's own driver
   and NVRTC layers. check_gpu's run in `make check` (check-gpu-host) rests
   on them, so they must behave as a GPU would where Una's kernels depend
   on it, and fail where a GPU might silently go wrong: barriers and warp
   shuffles synchronise; a read of shared memory without its barrier sees
   the wrong value; a shuffle that some lanes never reach fails the launch;
   elements never written read as NaN; a read past an allocation crashes. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "../../../backend/cuda/driver.h"
#include "../../../backend/cuda/nvrtc.h"
#include "../../suites.h"
#include "cuda_testlib.h"

static const Span here = {"t.una", 3, 7};

/* Compiles src and launches its kernel `k` (double *out, long long n) on
   grid x 256 threads with out of n doubles; returns out's elements, or
   NULL when the launch failed (*err: the message). */
static double *run(const char *src, unsigned grid, long long n, const char **err) {
  use_host_kernels();
  const char *why = NULL;
  ck_assert_msg(cuda_open(&why), "%s", why);
  size_t size = 0;
  char *log = NULL;
  void *image = nvrtc_compile(src, "t.cu", 90, true, &size, &log);
  ck_assert_msg(image != NULL, "%s", log);
  CudaFunction *f = cuda_function(cuda_module_load(image, size, here), "k", here);
  CudaPtr out = cuda_alloc((size_t)n * sizeof(double), here);
  void *args[] = {&out, &n};
  double *h = calloc((size_t)n, sizeof(double));
  FeTry t;
  if (fe_try(&t)) {
    cuda_launch(f, grid, 256, 0, args, here);
    cuda_sync(here);
    cuda_download(h, out, (size_t)n * sizeof(double), here);
    fe_untry(&t);
    return h;
  }
  *err = t.err.msg;
  return NULL;
}

/* Each block reverses its threads' values through shared memory, with or
   without the barrier between the writes and the reads; the number of
   wrong elements of out. */
static int reversal(bool barrier) {
  const char *err = NULL;
  double *o = run(una_sprintf("extern \"C\" __global__ void k(double *out, long long n) {\n"
                              "  __shared__ double s[256];\n"
                              "  s[threadIdx.x] = threadIdx.x + 1000.0 * blockIdx.x;\n"
                              "%s"
                              "  out[blockIdx.x * 256 + threadIdx.x] = s[255 - threadIdx.x];\n"
                              "}\n",
                              barrier ? "  __syncthreads();\n" : ""),
                  3, 768, &err);
  ck_assert_msg(o != NULL, "%s", err);
  int wrong = 0;
  for (int b = 0; b < 3; b++)
    for (int t = 0; t < 256; t++) wrong += o[b * 256 + t] != 255 - t + 1000.0 * b;
  return wrong;
}

START_TEST(barrier) { ck_assert_int_eq(reversal(true), 0); }
END_TEST

START_TEST(missing_barrier) { ck_assert_int_gt(reversal(false), 0); }
END_TEST

START_TEST(shuffles) {
  const char *err = NULL;
  double *o = run("extern \"C\" __global__ void k(double *out, long long n) {\n"
                  "  int lane = threadIdx.x & 31;\n"
                  "  double x = lane;\n"
                  "  for (int d = 1; d < 32; d <<= 1) {\n"
                  "    double y = __shfl_up_sync(0xffffffffu, x, d);\n"
                  "    if (lane >= d) x += y;\n"
                  "  }\n"
                  "  double z = __shfl_down_sync(0xffffffffu, x, 1);\n"
                  "  out[2 * threadIdx.x] = x;\n"
                  "  out[2 * threadIdx.x + 1] = z;\n"
                  "}\n",
                  1, 512, &err);
  ck_assert_msg(o != NULL, "%s", err);
  for (int t = 0; t < 256; t++) {
    int l = t & 31, m = l < 31 ? l + 1 : l;
    ck_assert_double_eq(o[2 * t], l * (l + 1) / 2);
    ck_assert_double_eq(o[2 * t + 1], m * (m + 1) / 2);
  }
}
END_TEST

START_TEST(shuffle_without_lanes) {
  const char *err = NULL;
  double *o = run("extern \"C\" __global__ void k(double *out, long long n) {\n"
                  "  if ((threadIdx.x & 31) < 16) out[threadIdx.x] = __shfl_up_sync(0xffffffffu, 1.0, 1);\n"
                  "}\n",
                  1, 256, &err);
  ck_assert_ptr_null(o);
  ck_assert_msg(strstr(err, "CUDA_ERROR_LAUNCH_FAILED") != NULL, "%s", err);
  ck_assert(!cuda_ready()); /* a failed launch is sticky, as on a GPU */
}
END_TEST

START_TEST(unwritten_is_nan) {
  const char *err = NULL;
  double *o = run("extern \"C\" __global__ void k(double *out, long long n) {\n"
                  "  long long j = blockIdx.x * 256 + threadIdx.x;\n"
                  "  if (j < n && j % 2 == 0) out[j] = j;\n"
                  "}\n",
                  1, 100, &err);
  ck_assert_msg(o != NULL, "%s", err);
  for (int j = 0; j < 100; j++) ck_assert(j % 2 ? isnan(o[j]) : o[j] == j);
}
END_TEST

/* Every thread writes out[j] for j < 256 while n is 255. */
START_TEST(past_the_end) {
  const char *err = NULL;
  run("extern \"C\" __global__ void k(double *out, long long n) { out[threadIdx.x] = 1.0; }\n", 1, 255, &err);
}
END_TEST

START_TEST(compile_error) {
  use_host_kernels();
  size_t size = 0;
  char *log = NULL;
  void *image = nvrtc_compile("extern \"C\" __global__ void k(double *out) { out[0] = undefined_name; }\n", "t.cu",
                              90, true, &size, &log);
  ck_assert_ptr_null(image);
  ck_assert_msg(strstr(log, "undefined_name") != NULL, "%s", log);
}
END_TEST

Suite *suite_host_kernels(void) {
  Suite *s = suite_create("host_kernels");
  TCase *tc = tcase_create("host_kernels");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, barrier);
  tcase_add_test(tc, missing_barrier);
  tcase_add_test(tc, shuffles);
  tcase_add_test(tc, shuffle_without_lanes);
  tcase_add_test(tc, unwritten_is_nan);
#if defined(__SANITIZE_ADDRESS__)
  tcase_add_exit_test(tc, past_the_end, 1); /* AddressSanitizer reports the fault and exits 1 */
#else
  tcase_add_test_raise_signal(tc, past_the_end, SIGSEGV);
#endif
  tcase_add_test(tc, compile_error);
  suite_add_tcase(s, tc);
  return s;
}
