/* cuda_api.h: the few CUDA driver and NVRTC types, constants and function
   pointer types that Una uses, written by hand from the toolkit's cuda.h and
   nvrtc.h so that the project builds without the toolkit. The functions
   themselves are looked up with dlsym (driver.c, nvrtc.c); each typedef is
   named after the symbol it is looked up as (the versioned _v2 names where
   the driver has them). */
#ifndef UNA_CUDA_API_H
#define UNA_CUDA_API_H

#include <stddef.h>

/* ---- the driver API (libcuda.so.1) ---- */

typedef int CUresult;                  /* 0 is CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef int CUjit_option;
typedef int CUdevice_attribute;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
};

enum {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
};

enum { CU_STREAM_NON_BLOCKING = 0x1 };
enum { CU_EVENT_DEFAULT = 0x0 };

/* cuModuleLoadDataEx options (CUjit_option). */
enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

typedef CUresult (*PFN_cuInit)(unsigned int flags);
typedef CUresult (*PFN_cuDriverGetVersion)(int *version);
typedef CUresult (*PFN_cuDeviceGetCount)(int *count);
typedef CUresult (*PFN_cuDeviceGet)(CUdevice *dev, int ordinal);
typedef CUresult (*PFN_cuDeviceGetAttribute)(int *value, CUdevice_attribute attr, CUdevice dev);
typedef CUresult (*PFN_cuDeviceGetName)(char *name, int len, CUdevice dev);
typedef CUresult (*PFN_cuDeviceTotalMem_v2)(size_t *bytes, CUdevice dev);
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
typedef CUresult (*PFN_cuCtxSetCurrent)(CUcontext ctx);
typedef CUresult (*PFN_cuStreamCreate)(CUstream *stream, unsigned int flags);
typedef CUresult (*PFN_cuStreamSynchronize)(CUstream stream);
typedef CUresult (*PFN_cuMemAlloc_v2)(CUdeviceptr *dptr, size_t bytes);
typedef CUresult (*PFN_cuMemFree_v2)(CUdeviceptr dptr);
typedef CUresult (*PFN_cuMemAllocAsync)(CUdeviceptr *dptr, size_t bytes, CUstream stream);
typedef void *CUmemoryPool;
enum { CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4 }; /* value type: unsigned 64-bit */
typedef CUresult (*PFN_cuDeviceGetDefaultMemPool)(CUmemoryPool *pool, CUdevice dev);
typedef CUresult (*PFN_cuMemPoolSetAttribute)(CUmemoryPool pool, int attr, void *value);
typedef CUresult (*PFN_cuMemFreeAsync)(CUdeviceptr dptr, CUstream stream);
typedef CUresult (*PFN_cuMemGetInfo_v2)(size_t *free_bytes, size_t *total_bytes);
typedef CUresult (*PFN_cuMemcpyHtoDAsync_v2)(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
typedef CUresult (*PFN_cuMemcpyDtoHAsync_v2)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
typedef CUresult (*PFN_cuMemcpyDtoDAsync_v2)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
typedef CUresult (*PFN_cuModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned int nopts,
                                           CUjit_option *opts, void **values);
typedef CUresult (*PFN_cuModuleGetFunction)(CUfunction *f, CUmodule mod, const char *name);
typedef CUresult (*PFN_cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                       unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                                       void **params, void **extra);
typedef CUresult (*PFN_cuEventCreate)(CUevent *ev, unsigned int flags);
typedef CUresult (*PFN_cuEventRecord)(CUevent ev, CUstream stream);
typedef CUresult (*PFN_cuEventSynchronize)(CUevent ev);
typedef CUresult (*PFN_cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
typedef CUresult (*PFN_cuEventDestroy_v2)(CUevent ev);
typedef CUresult (*PFN_cuGetErrorName)(CUresult rc, const char **name);
typedef CUresult (*PFN_cuGetErrorString)(CUresult rc, const char **text);

/* ---- NVRTC (libnvrtc.so) ---- */

typedef int nvrtcResult; /* 0 is NVRTC_SUCCESS */
typedef struct _nvrtcProgram *nvrtcProgram;

enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_COMPILATION = 6 };

typedef const char *(*PFN_nvrtcGetErrorString)(nvrtcResult rc);
typedef nvrtcResult (*PFN_nvrtcVersion)(int *major, int *minor);
typedef nvrtcResult (*PFN_nvrtcCreateProgram)(nvrtcProgram *prog, const char *src, const char *name,
                                              int nheaders, const char *const *headers,
                                              const char *const *include_names);
typedef nvrtcResult (*PFN_nvrtcDestroyProgram)(nvrtcProgram *prog);
typedef nvrtcResult (*PFN_nvrtcCompileProgram)(nvrtcProgram prog, int nopts, const char *const *opts);
typedef nvrtcResult (*PFN_nvrtcGetProgramLogSize)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*PFN_nvrtcGetProgramLog)(nvrtcProgram prog, char *log);
typedef nvrtcResult (*PFN_nvrtcGetPTXSize)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*PFN_nvrtcGetPTX)(nvrtcProgram prog, char *ptx);
typedef nvrtcResult (*PFN_nvrtcGetCUBINSize)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*PFN_nvrtcGetCUBIN)(nvrtcProgram prog, char *cubin);

#endif
