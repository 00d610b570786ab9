/* test_host_kernels.c: the stand-ins that run CUDA kernels on the host
   (fake_nvrtc.c, fake_libcuda.c, fake_blocks.c), through Una's own driver
   and NVRTC layers. check_gpu's run in `make check` (check-gpu-host) rests
   on them, so they must behave as a GPU would where Una's kernels depend
   on it, and fail where a GPU might silently go wrong: barriers and warp
   shuffles synchronise; a read of shared memory without its barrier sees
   the wrong value; a shuffle that some lanes never reach fails the launch;
   elements never written read as NaN; a read past an allocation crashes.
   Also: the prelude's digamma and trigamma (emit.c), compiled for the
   host, give the CPU's bits (backend/special.c): the two are one
   algorithm written twice. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "../../../backend/cuda/driver.h"
#include "../../../backend/cuda/emit.h"
#include "../../../backend/special.h"
#include "../../../frontend/ir/strbuf.h"
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

/* una_digamma and una_trigamma of the emitted prelude at arguments over
   every branch of special.c (and its edges) equal cpu_digamma's and
   cpu_trigamma's bit for bit on the host (a GPU's tan, sin and log may
   differ by an ulp or so). */
START_TEST(prelude_digamma_trigamma) {
  enum { N = 2000 };
  static const double edges[] = {0.0,  -0.0,   -1.0, -3.0, 1.0,  2.0,   10.0,   1e-300, 1e300,
                                 0.5,  -0.5,   -0.504083008264455, 1.4616321449683622, 9.999999999999998,
                                 -2.75, -1e-9, 1e17};
  static double xs[N];
  int ne = (int)(sizeof edges / sizeof edges[0]);
  for (int i = 0; i < N; i++) {
    unsigned long long u = (unsigned long long)i * 6364136223846793005ULL + 1442695040888963407ULL;
    double f = (double)(u >> 11) / 9007199254740992.0;
    xs[i] = i < ne ? edges[i] : i % 4 == 0 ? f * 12 : i % 4 == 1 ? -f * 12 : i % 4 == 2 ? ldexp(1, (int)(f * 80) - 40) : f * 2;
  }
  xs[ne] = INFINITY;
  xs[ne + 1] = -INFINITY;
  xs[ne + 2] = NAN;
  StrBuf b = {0};
  sb_printf(&b, "%s__device__ const unsigned long long una_xs[%d] = {", gpu_emit_prelude, N);
  for (int i = 0; i < N; i++) {
    unsigned long long bits;
    memcpy(&bits, &xs[i], sizeof bits);
    sb_printf(&b, "%s0x%llxULL", i ? ", " : "", bits);
  }
  sb_printf(&b, "};\n"
                "extern \"C\" __global__ void k(double *out, long long n) {\n"
                "  long long j = blockIdx.x * 256 + threadIdx.x;\n"
                "  if (j >= n / 2) return;\n"
                "  double x = __longlong_as_double((long long)una_xs[j]);\n"
                "  out[2 * j] = una_digamma(x);\n"
                "  out[2 * j + 1] = una_trigamma(x);\n"
                "}\n");
  const char *err = NULL;
  double *o = run(sb_str(&b), (N + 255) / 256, 2 * N, &err);
  ck_assert_msg(o != NULL, "%s", err);
  for (int i = 0; i < N; i++) {
    double d = cpu_digamma(xs[i]), t = cpu_trigamma(xs[i]);
    ck_assert_msg(memcmp(&d, &o[2 * i], sizeof d) == 0, "digamma %.17g: GPU %.17g, CPU %.17g", xs[i], o[2 * i], d);
    ck_assert_msg(memcmp(&t, &o[2 * i + 1], sizeof t) == 0, "trigamma %.17g: GPU %.17g, CPU %.17g", xs[i], o[2 * i + 1],
                  t);
  }
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
  tcase_add_test(tc, prelude_digamma_trigamma);
  suite_add_tcase(s, tc);
  return s;
}
