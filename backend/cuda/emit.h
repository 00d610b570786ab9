/* emit.h: CUDA C++ text for an execution plan (backend/plan/plan.h, launch.h): one translation unit holding
   a __device__ function per lambda (its scalar kernel's instructions, one
   line each) and the __global__ kernels, extern "C" so that they are found
   by name. Compiled by NVRTC with --fmad=false, so + - * / give the same
   bits as on the CPU; exp, log, pow and the like come from CUDA's math
   library and may differ by a few ulps. */
#ifndef UNA_CUDA_EMIT_H
#define UNA_CUDA_EMIT_H

#include "launch.h"

/* The text every translation unit starts with: the helpers and the
   block-level macros the kernels use. */
extern const char gpu_emit_prelude[];

/* The translation unit of p (launch.h's gpu_plan_source keeps it). */
const char *gpu_emit_plan(const Plan *p);

#endif
