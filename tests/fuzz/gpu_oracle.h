/* gpu_oracle.h: the fuzzer's GPU oracle (fuzz --gpu): a function run with
   its array builtins on the GPU path (backend/cuda/gpu_eval.h) must agree
   with the CPU engine. Without a GPU the path runs on the host stand-ins
   of NVRTC and the driver (tests/backend/cuda/fake_*.c, `make
   fuzz-gpu-host`): the kernels Una emits, compiled for the host. */
#ifndef UNA_FUZZ_GPU_ORACLE_H
#define UNA_FUZZ_GPU_ORACLE_H

#include "../../backend/value.h"
#include "../../frontend/ir/term.h"

/* d (optimized, first-order) on args on the CPU and on the GPU path, its
   arguments copied to the device first: the same error text, or values
   that agree as fz_close_values says. NULL, or a report. Values that
   disagree at a point where d is ill-conditioned (the CPU's own value
   moves as far when the arguments move by relative 1e-12: the GPU's
   reduction order is amplified as much) are counted in *ill instead. */
char *fz_gpu_check(const Def *d, const Value *args, long *ill);

#endif
