/* cuda_testlib.h: what the tests of backend/cuda share: pointing the
   driver at the fake libcuda (fake_libcuda.c), for tests that need a "GPU"
   without one, and finding the toolkit's ptxas. */
#ifndef UNA_TEST_CUDA_TESTLIB_H
#define UNA_TEST_CUDA_TESTLIB_H

/* The fake library's path: $UNA_FAKE_LIBCUDA, else fake/libcuda.so.1
   beside the test binary (build/.../check_una). */
const char *fake_path(void);

/* Points UNA_LIBCUDA at the fake (which must exist), with FAKE_CUDA_MODE
   mode ("" for none). */
void use_fake(const char *mode);

/* Points UNA_LIBCUDA and UNA_LIBNVRTC at the stand-ins that compile
   kernels for the host and run them (fake_libcuda.c with fake_blocks.c,
   and fake_nvrtc.c beside it), with UNA_HOST_INCLUDE at this folder
   ($UNA_ROOT/tests/backend/cuda). */
void use_host_kernels(void);

/* ptxas from PATH, else $CUDA_HOME/bin, else /usr/local/cuda/bin; NULL
   when there is none. */
const char *find_ptxas(void);

#endif
