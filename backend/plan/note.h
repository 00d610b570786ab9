/* note.h: the execution plan's decisions about one node of the host
   program (Term.note, see plan.h), all that the engines read while they
   run: this header needs nothing else, so the engine's files that read
   notes (eval.c, array_ops.c, kernel.c, siblings.c, the GPU's launches)
   do not depend on the planner, which depends on them. */
#ifndef UNA_PLAN_NOTE_H
#define UNA_PLAN_NOTE_H

#include <stdbool.h>

struct CpuKernel;      /* backend/kernel.h */
struct PlanKernel;     /* plan.h */
struct CpuSiblingPlan; /* backend/siblings.h */

/* The decisions about one node of the host program. */
typedef struct PlanNote {
  const struct CpuKernel *k;          /* T_LAM: its scalar program, or NULL */
  const struct CpuKernel *step;       /* T_LAM of a loop (LOOP_FOR, LOOP_WHILE):
                                         its program over the state's reals
                                         (kernel.h: cpu_kernel_compile_step),
                                         or NULL */
  const struct PlanKernel *kernel;    /* array T_PRIM: its kernel, or NULL */
  bool fused;                         /* map/map2 T_PRIM: computed inside
                                         the kernel that reads it */
  bool scan_map;                      /* map2 T_PRIM: one argument a scan
                                         (or a shifted one) computed into
                                         the result */
  const struct CpuSiblingPlan *group; /* T_LET: the sibling group it starts */
  bool in_place;                      /* reduce_by_index T_PRIM: its
                                         destination is a fresh array
                                         that nothing else reads, so it
                                         is updated in place */
} PlanNote;

#endif
