/* ptrmap.h: a map from pointers to pointers (open addressing, keys compared
   by address, GC memory), for passes that annotate terms and symbols. A
   zeroed PtrMap is empty and ready to use; NULL values read as absent. */
#ifndef UNA_PTRMAP_H
#define UNA_PTRMAP_H

#include "common.h"

typedef struct PtrMap {
  const void **keys;
  void **vals;
  size_t cap, n;
} PtrMap;

/* Empties m, sized for about hint entries. */
void ptrmap_init(PtrMap *m, size_t hint);
void *ptrmap_get(const PtrMap *m, const void *k);
void ptrmap_put(PtrMap *m, const void *k, void *v);

#endif
