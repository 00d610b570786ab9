/* gpu_eval.h: evaluation with the array builtins on the GPU.

   gpu_call plans the kernels of a function and of everything it calls
   (plan.h), compiles them as one translation unit (through the kernel
   cache, kcache.h), loads them, and evaluates the function with the tree
   evaluator of eval.h, whose array builtins then come here: the ones with
   a kernel run on the device, on device arrays (host arrays are copied
   there once); the others run on the CPU, which copies device arrays to
   the host once when it reads them (value.h's val_host). Results stay on
   the device until printed, saved or read on the host. */
#ifndef UNA_CUDA_GPU_EVAL_H
#define UNA_CUDA_GPU_EVAL_H

#include "../exec.h"
#include "../value.h"
#include "../../frontend/ir/term.h"

/* True when the GPU can be used: a driver, a device and NVRTC. Otherwise
   *why says what is missing (see cuda_open, nvrtc_available). */
bool gpu_available(const char **why);

/* One line naming the device: "NVIDIA H200 (sm_90, CUDA driver 13.0)". */
const char *gpu_describe(void);

/* Calls d (d->nparams arguments) with the array builtins on the GPU.
   Raises located FeErrors: a kernel that does not compile, a failed
   launch, device out of memory, and every error the CPU would raise. */
Value gpu_call(const Def *d, const Value *args);

/* Evaluates the array builtin t in frame, on the GPU when it has a kernel
   (the evaluator sends array builtins here when ex->gpu is set: in the
   context gpu_call makes, exec.h). */
Value gpu_array_prim(const Exec *ex, const Term *t, Value *frame);

/* v with every array of reals in it copied to the device (for tests and
   benchmarks that start from device-resident inputs). */
Value gpu_to_device(Value v, Span s);

#endif
