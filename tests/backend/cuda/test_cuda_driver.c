/* test_cuda_driver.c: backend/cuda/driver.c against a fake libcuda
   (fake_libcuda.c, built as $(B)/fake/libcuda.so.1 and found through
   $UNA_FAKE_LIBCUDA, else beside the test binary): the reasons cuda_open
   and fe_device_probe give (no library, no device, zero devices), the
   device's facts, copies there and back (with and without the memory pool),
   "device out of memory" located at the caller's span, device memory of
   unreachable DevBufs freed by the collection trigger and by the retry
   after an out-of-memory, module and function errors, launches (their
   arguments, refusals, failures reported by cuda_sync), sticky errors that
   make the GPU unusable, timers and error strings. Each Check test runs in
   its own process, so each opens the driver afresh. */
#include <check.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../../backend/cuda/driver.h"
#include "../../../frontend/repl/device.h"
#include "../../../frontend/ir/error.h"
#include "../../suites.h"
#include "cuda_testlib.h"

/* Opens the fake driver, which must work. */
static void open_fake(const char *mode) {
  use_fake(mode);
  const char *why = NULL;
  ck_assert_msg(cuda_open(&why), "cuda_open failed: %s", why ? why : "(no reason)");
  ck_assert(cuda_ready());
}

static const Span here = {"t.una", 3, 7};

/* Runs stmt, which must raise an error at `here` whose message contains want. */
#define EXPECT_ERROR(stmt, want)                                                            \
  do {                                                                                      \
    FeTry t_;                                                                               \
    if (fe_try(&t_)) {                                                                      \
      stmt;                                                                                 \
      fe_untry(&t_);                                                                        \
      ck_abort_msg("no error from " #stmt);                                                 \
    }                                                                                       \
    ck_assert_msg(strstr(t_.err.msg, (want)) != NULL, "error '%s' lacks '%s'", t_.err.msg, \
                  (want));                                                                  \
    ck_assert_str_eq(t_.err.span.file, "t.una");                                            \
    ck_assert_int_eq(t_.err.span.line, 3);                                                  \
    ck_assert_int_eq(t_.err.span.col, 7);                                                   \
    last_error = t_.err.msg;                                                                \
  } while (0)

static const char *last_error;

/* ---- opening ---- */

START_TEST(missing_library) {
  setenv("UNA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  const char *why = NULL;
  ck_assert(!cuda_open(&why));
  ck_assert(!cuda_ready());
  ck_assert_ptr_nonnull(why);
  ck_assert_msg(strncmp(why, "no CUDA driver found (", 22) == 0, "%s", why);
  ck_assert_ptr_nonnull(strstr(why, "libcuda"));
  const char *probe_why = NULL;
  ck_assert(!fe_device_probe(&probe_why));
  ck_assert_str_eq(probe_why, why);
  /* later calls give the same answer */
  why = NULL;
  ck_assert(!cuda_open(&why));
  ck_assert_str_eq(why, probe_why);
}
END_TEST

START_TEST(no_device) {
  use_fake("nodevice");
  const char *why = NULL;
  ck_assert(!cuda_open(&why));
  ck_assert_str_eq(why, "no CUDA device found (the driver reports none)");
  ck_assert(!fe_device_probe(NULL));
  ck_assert(!cuda_ready());
  EXPECT_ERROR(cuda_alloc(8, here), "no GPU: no CUDA device found");
}
END_TEST

START_TEST(zero_devices) {
  use_fake("zero");
  const char *why = NULL;
  ck_assert(!fe_device_probe(&why));
  ck_assert_str_eq(why, "no CUDA device found (the driver reports none)");
  ck_assert(!cuda_open(NULL));
}
END_TEST

START_TEST(opens_the_fake) {
  open_fake("");
  ck_assert(fe_device_probe(NULL));
  ck_assert_int_eq(cuda_arch(), 90);
  ck_assert_int_eq(cuda_driver_version(), 13000);
  ck_assert_str_eq(cuda_device_name(), "Fake CUDA Device");
  ck_assert_uint_eq(cuda_total_memory(), (size_t)64 << 20);
}
END_TEST

/* ---- memory ---- */

/* Uploads n doubles, copies them on the device, downloads the copy. */
static void round_trip(int n) {
  double *a = malloc(sizeof(double) * (size_t)n), *b = calloc((size_t)n, sizeof(double));
  for (int i = 0; i < n; i++) a[i] = i * 0.5 - 3;
  DevBuf *x = cuda_devbuf_new(sizeof(double) * (size_t)n, here);
  DevBuf *y = cuda_devbuf_new(sizeof(double) * (size_t)n, here);
  ck_assert_uint_eq(x->bytes, sizeof(double) * (size_t)n);
  ck_assert(x->ptr != 0 && y->ptr != 0 && x->ptr != y->ptr);
  cuda_upload(x->ptr, a, x->bytes, here);
  cuda_copy(y->ptr, x->ptr, x->bytes, here);
  cuda_sync(here);
  cuda_download(b, y->ptr, y->bytes, here);
  ck_assert(memcmp(a, b, sizeof(double) * (size_t)n) == 0);
  free(a);
  free(b);
}

START_TEST(upload_download_round_trip) {
  open_fake("");
  round_trip(1000);
  DevBuf *empty = cuda_devbuf_new(0, here);
  ck_assert(empty->ptr == 0 && empty->bytes == 0);
}
END_TEST

START_TEST(round_trip_without_pool) {
  open_fake("nopool"); /* the fake refuses cuMemAllocAsync in this mode */
  round_trip(1000);
  CudaPtr p = cuda_alloc(64, here);
  cuda_free(p);
}
END_TEST

START_TEST(out_of_memory_is_located) {
  setenv("FAKE_CUDA_MEM", "1048576", 1);
  open_fake("");
  EXPECT_ERROR(cuda_alloc(2097152, here), "device out of memory");
  ck_assert_str_eq(last_error, "device out of memory: cannot allocate 2097152 bytes on the GPU (1048576 bytes free)");
  DevBuf *kept = cuda_devbuf_new(1 << 19, here);
  EXPECT_ERROR(cuda_devbuf_new(1 << 20, here), "device out of memory");
  ck_assert_str_eq(last_error, "device out of memory: cannot allocate 1048576 bytes on the GPU (524288 bytes free)");
  ck_assert(kept->ptr != 0);
  ck_assert(cuda_ready()); /* not sticky */
}
END_TEST

/* Allocates a DevBuf and drops it (a function of its own, so that no
   pointer to it stays in the caller's frame). */
static __attribute__((noinline)) void drop_one(size_t bytes) {
  DevBuf *b = cuda_devbuf_new(bytes, here);
  ck_assert(b->ptr != 0);
}

/* Allocates and drops n DevBufs of `bytes` bytes; an error fails the test. */
static void drop_many(int n, size_t bytes) {
  FeTry t;
  if (fe_try(&t)) {
    for (int i = 0; i < n; i++) drop_one(bytes);
    fe_untry(&t);
  } else {
    ck_abort_msg("dropped DevBufs were not freed: %s", t.err.msg);
  }
}

START_TEST(dropped_buffers_are_freed_by_the_trigger) {
  setenv("FAKE_CUDA_MEM", "16777216", 1); /* 16 MiB, the total too: collect every 4 MiB */
  open_fake("");
  drop_many(200, (size_t)2 << 20); /* 400 MiB in all */
}
END_TEST

START_TEST(dropped_buffers_are_freed_by_the_retry) {
  setenv("FAKE_CUDA_MEM", "16777216", 1);
  setenv("FAKE_CUDA_TOTAL", "1099511627776", 1); /* 1 TiB: the trigger never fires */
  open_fake("");
  drop_many(200, (size_t)3 << 20);
}
END_TEST

START_TEST(dropped_buffers_without_pool) {
  setenv("FAKE_CUDA_MEM", "16777216", 1);
  setenv("FAKE_CUDA_TOTAL", "1099511627776", 1);
  open_fake("nopool");
  drop_many(100, (size_t)3 << 20);
}
END_TEST

/* ---- modules and launches ---- */

START_TEST(module_and_function_errors) {
  open_fake("");
  EXPECT_ERROR(cuda_module_load("BAD image", 10, here), "CUDA_ERROR_INVALID_PTX");
  ck_assert_ptr_nonnull(strstr(last_error, "fake JIT refuses this image"));
  CudaModule *m = cuda_module_load("// PTX", 7, here);
  ck_assert_ptr_nonnull(m);
  EXPECT_ERROR(cuda_function(m, "missing", here), "'missing'");
  ck_assert_ptr_nonnull(strstr(last_error, "CUDA_ERROR_NOT_FOUND"));
  ck_assert_ptr_nonnull(cuda_function(m, "una_map", here));
  ck_assert(cuda_ready());
}
END_TEST

START_TEST(launch_passes_arguments) {
  open_fake("");
  CudaModule *m = cuda_module_load("// PTX", 7, here);
  CudaFunction *f = cuda_function(m, "set42", here);
  DevBuf *out = cuda_devbuf_new(sizeof(double), here);
  long long n = 1;
  void *args[] = {&out->ptr, &n};
  cuda_launch(f, 1, 128, 0, args, here);
  cuda_sync(here);
  double v = 0;
  cuda_download(&v, out->ptr, sizeof v, here);
  ck_assert(v == 42.0);
}
END_TEST

START_TEST(refused_launch_is_located) {
  setenv("FAKE_CUDA_REFUSE", "701", 1);
  open_fake("");
  CudaFunction *f = cuda_function(cuda_module_load("// PTX", 7, here), "una_map", here);
  EXPECT_ERROR(cuda_launch(f, 1, 256, 0, NULL, here), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  ck_assert_ptr_nonnull(strstr(last_error, "'una_map'"));
  ck_assert(cuda_ready());
}
END_TEST

START_TEST(kernel_failure_from_sync_is_located) {
  setenv("FAKE_CUDA_LAUNCH", "701", 1);
  open_fake("");
  CudaFunction *f = cuda_function(cuda_module_load("// PTX", 7, here), "una_map", here);
  cuda_launch(f, 4, 256, 0, NULL, here);
  EXPECT_ERROR(cuda_sync(here), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  ck_assert(cuda_ready());
  ck_assert(strstr(last_error, "cannot be used") == NULL);
}
END_TEST

START_TEST(sticky_error_makes_the_gpu_unusable) {
  setenv("FAKE_CUDA_LAUNCH", "700", 1);
  open_fake("");
  DevBuf *b = cuda_devbuf_new(64, here);
  CudaFunction *f = cuda_function(cuda_module_load("// PTX", 7, here), "una_map", here);
  cuda_launch(f, 4, 256, 0, NULL, here);
  EXPECT_ERROR(cuda_sync(here), "CUDA_ERROR_ILLEGAL_ADDRESS");
  ck_assert_ptr_nonnull(strstr(last_error, "; the GPU cannot be used in this session any more"));
  ck_assert(!cuda_ready());
  EXPECT_ERROR(cuda_alloc(8, here), "the GPU cannot be used in this session any more");
  ck_assert_ptr_nonnull(strstr(last_error, "CUDA_ERROR_ILLEGAL_ADDRESS"));
  double v;
  EXPECT_ERROR(cuda_download(&v, b->ptr, sizeof v, here), "cannot be used");
  cuda_free(b->ptr); /* never raises */
}
END_TEST

START_TEST(sticky_error_from_a_download) {
  setenv("FAKE_CUDA_LAUNCH", "719", 1);
  open_fake("");
  DevBuf *b = cuda_devbuf_new(64, here);
  cuda_launch(cuda_function(cuda_module_load("// PTX", 7, here), "k", here), 1, 32, 0, NULL, here);
  double v;
  EXPECT_ERROR(cuda_download(&v, b->ptr, sizeof v, here), "CUDA_ERROR_LAUNCH_FAILED");
  ck_assert_ptr_nonnull(strstr(last_error, "the GPU cannot be used in this session any more"));
  ck_assert(!cuda_ready());
}
END_TEST

/* ---- timers and strings ---- */

START_TEST(timer_and_error_strings) {
  open_fake("");
  CudaTimer *t = cuda_timer_start();
  ck_assert(cuda_timer_stop_ms(t) == 1.5);
  ck_assert_str_eq(cuda_error_string(2), "CUDA_ERROR_OUT_OF_MEMORY: out of memory");
  ck_assert_str_eq(cuda_error_string(12345), "CUDA error 12345");
}
END_TEST

Suite *suite_cuda_driver(void) {
  Suite *s = suite_create("cuda_driver");
  TCase *tc = tcase_create("cuda_driver");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, missing_library);
  tcase_add_test(tc, no_device);
  tcase_add_test(tc, zero_devices);
  tcase_add_test(tc, opens_the_fake);
  tcase_add_test(tc, upload_download_round_trip);
  tcase_add_test(tc, round_trip_without_pool);
  tcase_add_test(tc, out_of_memory_is_located);
#ifndef UNA_GC_AS_MALLOC /* these test the collector's finalizers, which make asan-heap has not */
  tcase_add_test(tc, dropped_buffers_are_freed_by_the_trigger);
  tcase_add_test(tc, dropped_buffers_are_freed_by_the_retry);
  tcase_add_test(tc, dropped_buffers_without_pool);
#endif
  tcase_add_test(tc, module_and_function_errors);
  tcase_add_test(tc, launch_passes_arguments);
  tcase_add_test(tc, refused_launch_is_located);
  tcase_add_test(tc, kernel_failure_from_sync_is_located);
  tcase_add_test(tc, sticky_error_makes_the_gpu_unusable);
  tcase_add_test(tc, sticky_error_from_a_download);
  tcase_add_test(tc, timer_and_error_strings);
  suite_add_tcase(s, tc);
  return s;
}
