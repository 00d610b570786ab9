/* test_gpu_session.c: the session on the GPU path, as far as it can be
   driven without a GPU: the messages of :device gpu and of auto with no
   driver and with no device; and, against the fake libcuda
   (fake_libcuda.c, whose kernels do nothing), the flow of gpu_call:
   kernels planned, compiled by the real NVRTC (into a temporary kernel
   cache), loaded and launched; errors raised before a launch located as
   on the CPU; device out of memory located at the builtin; a kernel
   failure that makes the GPU unusable moves the session to the CPU, which
   then computes the right values. (The values computed by the fake's
   kernels are meaningless: only errors and devices are checked.) */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../testlib.h"
#include "../../suites.h"
#include "cuda_testlib.h"
#include "../../../backend/cuda/gpu_eval.h"

/* A session with the prelude and a fresh, private kernel cache. */
static Session *gpu_session(void) {
  char *dir = una_strdup("/tmp/una_kcache_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("UNA_CACHE_DIR", dir, 1);
  return tl_session_with("");
}

#define HAS(hay, needle) ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' lacks '%s'", (hay), (needle))

START_TEST(no_driver) {
  setenv("UNA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  Session *s = gpu_session();
  TlRun r = tl_capture(s, ":device gpu\n:device\n1 + 1\n", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "cpu\n2\n");
  HAS(r.err, "no CUDA driver found (");
  HAS(r.err, "; staying on the CPU\n");
}
END_TEST

START_TEST(no_device) {
  use_fake("nodevice");
  Session *s = gpu_session();
  TlRun r = tl_capture(s, ":device gpu\n:device\n", true);
  ck_assert(r.ok);
  ck_assert_str_eq(r.out, "cpu\n");
  ck_assert_str_eq(r.err, "no CUDA device found (the driver reports none); staying on the CPU\n");
}
END_TEST

START_TEST(auto_says_once) {
  use_fake("zero");
  Session *s = gpu_session();
  FILE *err = tmpfile();
  s->err = err;
  ck_assert(fe_session_set_device(s, "auto", "una: "));
  ck_assert_int_eq(s->device, FE_DEVICE_CPU);
  rewind(err);
  char buf[512] = "";
  size_t n = fread(buf, 1, sizeof buf - 1, err);
  buf[n] = '\0';
  ck_assert_str_eq(buf, "una: no usable CUDA GPU (no CUDA device found (the driver reports none)); using the CPU\n");
  fclose(err);
}
END_TEST

START_TEST(on_the_fake_device) {
  use_fake("");
  Session *s = gpu_session();
  TlRun r = tl_capture(s, ":device gpu\n:device\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "gpu\n") == 0, "%s%s", r.out, r.err);
  /* the lengths are checked on the host, before any launch, as on the CPU */
  r = tl_capture(s, "map2 (+) (iota 3) (iota 4)\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:1:1: error: map2: lengths 3 and 4 differ\n");
  /* shifts and length need no kernel; a scalar result comes back */
  r = tl_capture(s, "length (shift1L (iota 5))\n:device\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "4\ngpu\n") == 0, "%s%s", r.out, r.err);
  /* a dead let kept for its length check raises it, as on the CPU */
  r = tl_capture(s, "grad dot [1, 2] [1, 2, 3]\n", false);
  ck_assert(!r.ok);
  HAS(r.err, "error: map2: lengths 2 and 3 differ");
  /* indexing outside kernels, loops, the reshaping builtins and a
     reduce_by_index of an operator that is not a builtin monoid have no
     kernels yet: on
     the GPU path they run on the CPU (a map that gathers and a
     reduce_by_index (+) (or * max min) have kernels: tests/gpu/check_gpu.c runs them on
     the host stand-in) */
  r = tl_capture(s, "[1, 2, 3][1]\n[1, 2, 3][1:]\nloop x = 0 for i < 4 do x + i\n"
                    "transpose [[1, 2], [3, 4]]\nreduce_by_index [0, 0] (a, b. a + 2 * b) 0 [0, 1, 1] [1, 2, 3]\n"
                    "unzip (zip [1] [2])\n:device\n",
                 true);
  ck_assert_msg(r.ok && strcmp(r.out, "2\n[2, 3]\n6\n[[1, 3], [2, 4]]\n[2, 10]\n([1], [2])\ngpu\n") == 0,
                "%s%s", r.out, r.err);
  /* a concat of [R]s (a tree of them, shifts among them) is copied on
     the device */
  r = tl_capture(s, "concat [1, 2] (concat [3] (shift1L [0, 4, 5]))\nconcat ([] : [R]) [7]\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "[1, 2, 3, 4, 5]\n[7]\n") == 0, "%s%s", r.out, r.err);
  r = tl_capture(s, "[10, 20, 30][3]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:1:13: error: index 3 out of bounds for an array of length 3\n");
  /* a gradient program runs through gpu_call (the fake computes nothing) */
  r = tl_capture(s, "length (grad prod (iota 7))\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "7\n") == 0, "%s%s", r.out, r.err);
}
END_TEST

/* A load of [[R]] (as (load "f" : [[R]]) types it) gives the host's
   nested array on the GPU path; a load of [R] goes to the device. */
START_TEST(nested_load_stays_on_the_host) {
  use_fake("");
  Session *s = gpu_session();
  char *dir = una_strdup("/tmp/una_gpu_npy_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const char *m = una_sprintf("%s/m.npy", dir), *v = una_sprintf("%s/v.npy", dir);
  TlRun r = tl_capture(s, una_sprintf(":device gpu\n:device\nsave \"%s\" [[1, 2], [3, 4]]\n"
                                      "length (save \"%s\" [5, 6, 7])\nlength (load \"%s\")\n", m, v, v),
                       true);
  ck_assert_msg(r.ok && strcmp(r.out, "gpu\n[[1, 2], [3, 4]]\n3\n3\n") == 0, "%s%s", r.out, r.err);
  Def *d = tl_check_in(s, una_sprintf("load \"%s\"", m));
  ck_assert(d->body->kind == T_PRIM && d->body->prim == PRIM_LOAD);
  d->body->type = d->ret = fe_ty_array(fe_ty_array(fe_ty_real()));
  FeTry t;
  if (fe_try(&t)) {
    Value x = gpu_call(d, NULL);
    fe_untry(&t);
    ck_assert(x.kind == V_ARRAY && x.u.a->boxed && !x.u.a->dev);
    ck_assert_str_eq(val_to_string(x), "[[1, 2], [3, 4]]");
  } else {
    ck_abort_msg("%s", fe_error_text(t.err));
  }
  ck_assert_int_eq(system(una_sprintf("rm -rf '%s'", dir)), 0);
}
END_TEST

/* On the GPU path a concat of [R]s is a device array, made by copies on
   the device, a slice of one a view of it, and a[i] of one copies back one
   element (the CPU's builtins would give host arrays, or fetch a). */
START_TEST(reshaping_on_the_device) {
  use_fake("");
  Session *s = gpu_session();
  TlRun r = tl_capture(s, ":device gpu\n:device\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "gpu\n") == 0, "%s%s", r.out, r.err);
  Def *d = tl_check_in(s, "concat [1, 2] (concat [3] (shift1L [0, 4, 5]))");
  FeTry t;
  if (fe_try(&t)) {
    Value x = gpu_call(d, NULL);
    fe_untry(&t);
    ck_assert(x.kind == V_ARRAY && !x.u.a->boxed && x.u.a->dev && !x.u.a->r);
    ck_assert_str_eq(val_to_string(x), "[1, 2, 3, 4, 5]");
  } else {
    ck_abort_msg("%s", fe_error_text(t.err));
  }
  /* a slice of it is a view of the device array; its checks are the CPU's */
  d = tl_check_in(s, "(concat [1, 2] [3, 4, 5])[1:4]");
  if (fe_try(&t)) {
    Value x = gpu_call(d, NULL);
    fe_untry(&t);
    ck_assert(x.kind == V_ARRAY && x.u.a->dev && !x.u.a->r);
    ck_assert_str_eq(val_to_string(x), "[2, 3, 4]");
  } else {
    ck_abort_msg("%s", fe_error_text(t.err));
  }
  /* a[i] of a device array copies back its one element, not the array */
  Value arr = val_real(0);
  d = tl_check_in(s, "concat [1, 2] [3, 4, 5]");
  if (fe_try(&t)) {
    arr = gpu_call(d, NULL);
    fe_untry(&t);
  } else {
    ck_abort_msg("%s", fe_error_text(t.err));
  }
  tl_capture(s, "def third (a: [R]) : R = a[3]\n", true);
  if (fe_try(&t)) {
    Value x = gpu_call(tl_def(s, "third"), &arr);
    fe_untry(&t);
    ck_assert(x.kind == V_REAL && x.u.r == 4);
    ck_assert(arr.u.a->dev && !arr.u.a->r);
  } else {
    ck_abort_msg("%s", fe_error_text(t.err));
  }
  /* a concat reads a device array where it is */
  tl_capture(s, "def more (a: [R]) : [R] = concat a [9]\n", true);
  if (fe_try(&t)) {
    Value x = gpu_call(tl_def(s, "more"), &arr);
    fe_untry(&t);
    ck_assert(arr.u.a->dev && !arr.u.a->r);
    ck_assert_str_eq(val_to_string(x), "[1, 2, 3, 4, 5, 9]");
  } else {
    ck_abort_msg("%s", fe_error_text(t.err));
  }
  r = tl_capture(s, "(concat [1, 2] [3])[3]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:1:20: error: index 3 out of bounds for an array of length 3\n");
  r = tl_capture(s, "(concat [1, 2] [3])[2:5]\n", false);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, "t.una:1:20: error: slice 2:5 out of bounds for an array of length 3\n");
}
END_TEST

START_TEST(out_of_memory) {
  use_fake("");
  setenv("FAKE_CUDA_MEM", "1048576", 1);
  Session *s = gpu_session();
  TlRun r = tl_capture(s, ":device gpu\nlet big = iota 1000000\n", false);
  ck_assert(!r.ok);
  HAS(r.err, "t.una:2:11: error: device out of memory: cannot allocate 8000000 bytes on the GPU");
  r = tl_capture(s, ":device\nlength (iota 1000)\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "gpu\n1000\n") == 0, "%s%s", r.out, r.err);
}
END_TEST

START_TEST(kernel_failure) {
  use_fake("");
  setenv("FAKE_CUDA_LAUNCH", "700", 1); /* CUDA_ERROR_ILLEGAL_ADDRESS: sticky */
  Session *s = gpu_session();
  TlRun r = tl_capture(s, ":device gpu\nsum (iota 5)\n", false);
  ck_assert(!r.ok);
  HAS(r.err, "error: ");
  HAS(r.err, "the GPU cannot be used in this session any more");
  /* the session goes on, on the CPU, with the right values */
  r = tl_capture(s, ":device\nsum (iota 5)\n", true);
  ck_assert_msg(r.ok && strcmp(r.out, "cpu\n10\n") == 0, "%s%s", r.out, r.err);
  r = tl_capture(s, ":device gpu\n:device\n", true);
  ck_assert_str_eq(r.out, "cpu\n");
  HAS(r.err, "staying on the CPU");
}
END_TEST

Suite *suite_gpu_session(void) {
  Suite *s = suite_create("gpu_session");
  TCase *tc = tcase_create("session");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, no_driver);
  tcase_add_test(tc, no_device);
  tcase_add_test(tc, auto_says_once);
  tcase_add_test(tc, on_the_fake_device);
  tcase_add_test(tc, nested_load_stays_on_the_host);
  tcase_add_test(tc, reshaping_on_the_device);
  tcase_add_test(tc, out_of_memory);
  tcase_add_test(tc, kernel_failure);
  suite_add_tcase(s, tc);
  return s;
}
