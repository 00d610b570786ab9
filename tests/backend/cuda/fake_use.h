/* fake_use.h: pointing the driver at the fake libcuda (fake_libcuda.c),
   for the tests of backend/cuda that need a "GPU" without one. */
#ifndef UNA_TEST_FAKE_USE_H
#define UNA_TEST_FAKE_USE_H

/* The fake library's path: $UNA_FAKE_LIBCUDA, else fake/libcuda.so.1
   beside the test binary (build/.../check_una). */
const char *fake_path(void);

/* Points UNA_LIBCUDA at the fake (which must exist), with FAKE_CUDA_MODE
   mode ("" for none). */
void use_fake(const char *mode);

#endif
