/* npy.h: reading and writing NumPy .npy files of float64 ('<f8') of any
   rank: a rank-k file is the nested array [[...[R]...]] (k brackets).
   Errors are raised as located FeErrors naming the file. */
#ifndef UNA_NPY_H
#define UNA_NPY_H

#include "value.h"

/* Reads a .npy file (format 1.0, 2.0 or 3.0; dtype '<f8'; rank dimensions,
   C or Fortran order) into a fresh array: for rank 1 an unboxed real array,
   for rank k >= 2 boxed arrays of arrays whose innermost rows are views
   into one row-major buffer of all the reals. Raises "load: PATH: ..." at
   s: cannot open, not a .npy file, "the file holds a float32 ('<f4') array
   of shape (5,); only float64 ('<f8') is read", "the file holds a float64
   array of shape (3, 4); expected [R]", truncated data, cannot allocate. */
Array *npy_load(const char *path, int rank, Span s);

/* Writes a, an array of reals nested rank deep (rank 1: unboxed), to PATH
   as a C-order format 1.0 .npy file whose data starts at a multiple of 64
   bytes. The shape is a's length, then its first row's, and so on; every
   row at a level must have that level's length, else "save: PATH: the
   array is ragged: row 2 has length 3, row 0 has length 4" ("row [1][2]"
   below rank 2) is raised at s before the file is touched. Dimensions
   below an empty one are written as 0 (an empty [[R]] has shape (0, 0)).
   Raises "save: PATH: cannot write: REASON" at s. */
void npy_save(const char *path, const Array *a, int rank, Span s);

#endif
