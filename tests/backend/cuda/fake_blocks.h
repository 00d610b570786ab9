/* fake_blocks.h: a kernel compiled for the host (cuda_host.h) run over its
   grid, for the stand-in driver (fake_libcuda.c); see fake_blocks.c. */
#ifndef UNA_FAKE_BLOCKS_H
#define UNA_FAKE_BLOCKS_H

#include <stdbool.h>

#include "cuda_host.h"

/* Runs fn(args) on grid x block threads (1-D) with the module's runtime
   rt. False, with *why saying what went wrong, when a block cannot finish
   (a barrier or shuffle that not every thread reaches). */
bool fake_blocks_run(UnaHostRt *rt, void (*fn)(void **), unsigned grid, unsigned block, void **args,
                     const char **why);

#endif
