/* index_map.h: the map over indices that reads arrays at its own index,
   turned into a map over those arrays (optimizer/index_map.c). */
#ifndef UNA_INDEX_MAP_H
#define UNA_INDEX_MAP_H

#include "rw.h"

/* The map t rewritten, or NULL when the rule does not apply. */
Term *opt_index_map(OptRw *c, Term *t);

#endif
