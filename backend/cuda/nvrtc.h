/* nvrtc.h: NVRTC, the CUDA run-time compiler, opened with dlopen
   (libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so, then the CUDA toolkit's
   lib64 folders: $CUDA_HOME, /usr/local/cuda), so that the binary builds and
   runs without the toolkit. */
#ifndef UNA_CUDA_NVRTC_H
#define UNA_CUDA_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

/* True when NVRTC can be loaded; otherwise *why says why ("NVRTC not found
   (libnvrtc.so: cannot open ...)"). Cached after the first call. */
bool nvrtc_available(const char **why);

/* NVRTC's version as "13.0". */
const char *nvrtc_version(void);

/* The options Una compiles with, for the given architecture and output, as
   one string (part of the kernel cache's key): e.g.
   "--gpu-architecture=sm_90 --fmad=false --std=c++17" (compute_90 for PTX). */
const char *nvrtc_options(int arch, bool cubin);

/* Compiles the CUDA C++ translation unit src (name: for messages) for
   compute capability arch (90 for sm_90). cubin true: SASS for sm_<arch>
   (nvrtcGetCUBIN); false: PTX for compute_<arch> (nvrtcGetPTX, the text
   NUL-terminated, *size counting the NUL). Returns a GC_MALLOC_ATOMIC image,
   or NULL with *log set to NVRTC's message and compile log (or why NVRTC
   is unavailable). */
void *nvrtc_compile(const char *src, const char *name, int arch, bool cubin, size_t *size, char **log);

#endif
