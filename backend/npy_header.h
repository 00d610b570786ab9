/* npy_header.h: the header of a NumPy .npy file, shared by the reader
   (npy.c) and the writer (npy_save.c): its parser, its writer, and the
   words that errors use for a file's dtype and shape. */
#ifndef UNA_NPY_HEADER_H
#define UNA_NPY_HEADER_H

#include "value.h"

/* The most dimensions a header may give (NumPy 2's limit). */
#define NPY_MAX_DIMS 64

/* The header dict, parsed. */
typedef struct NpyHeader {
  const char *descr; /* the descr value as written: "'<f8'" with its quotes */
  const char *dtype; /* the descr string without quotes ("<f8"), or NULL when
                        descr is not a string (a record type) */
  bool descr_is_f8;
  bool fortran_order;
  int ndim;
  uint64_t dims[NPY_MAX_DIMS];
} NpyHeader;

/* Parses the header dict text[0..len) into *h: '{' (key ':' value ',')* '}'
   with keys 'descr', 'fortran_order' and 'shape' (others are skipped).
   Returns false when it is not such a dict, or the shape has more than
   NPY_MAX_DIMS dimensions or a dimension beyond 64 bits. */
bool npy_parse_header(const char *text, size_t len, NpyHeader *h);

/* The shape as Python prints it: "()", "(3,)", "(2, 3)". */
char *npy_shape_text(int ndim, const uint64_t *dims);

/* The file's dtype in words, with an article: "a float32 ('<f4')", "an
   int64 ('<i8')", "a big-endian float64 ('>f8')"; NULL for a dtype without
   a name here (a record type, strings, objects). */
char *npy_dtype_words(const NpyHeader *h);

/* The type [[...[R]...]] of the given rank (>= 1) as text: "[R]", "[[R]]". */
char *npy_rank_type_text(int rank);

/* A complete format 1.0 preamble and header for a C-order float64 array of
   the given shape, padded with spaces so that the data starts at a
   multiple of 64 bytes; *n is its length. */
unsigned char *npy_header_bytes(int ndim, const uint64_t *dims, size_t *n);

/* The magic string that starts every .npy file. */
extern const char npy_magic[6];

/* True on a little-endian host (.npy data is '<f8'). */
bool npy_host_is_little_endian(void);

/* Reverses the bytes of each of the n 8-byte words at p. */
void npy_swap8(void *p, size_t n);

#endif
