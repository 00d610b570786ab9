/* npy.h: reading and writing NumPy .npy files: float64 ('<f8'), one
   dimension. Errors are raised as located FeErrors naming the file. */
#ifndef UNA_NPY_H
#define UNA_NPY_H

#include "value.h"

/* Reads a .npy file (format 1.0, 2.0 or 3.0; dtype '<f8'; shape (n,)) into
   a fresh real array. Raises "load: PATH: ..." at s: cannot open, not a .npy
   file, expected float64 ('<f8'), expected a one-dimensional array,
   truncated data, cannot allocate. */
Array *npy_load(const char *path, Span s);

/* Writes the real array a to PATH as a format 1.0 .npy file whose data
   starts at a multiple of 64 bytes. Raises "save: PATH: cannot write: ..."
   at s. */
void npy_save(const char *path, const Array *a, Span s);

#endif
