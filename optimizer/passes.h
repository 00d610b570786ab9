/* passes.h: one declaration per optimizer pass, each defined in its own
   file under optimizer/ and listed in optimizer/pipeline.c. */
#ifndef UNA_PASSES_H
#define UNA_PASSES_H

#include "../frontend/term.h"

/* (passes are declared above this line) */

#endif
