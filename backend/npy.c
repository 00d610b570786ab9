/* npy.c: reading NumPy .npy files of float64 of any rank (the header:
   npy_header.c; writing: npy_save.c).

   A file of rank k >= 2 becomes Una's nested array: boxed arrays of
   arrays, whose innermost rows are views (val_view) into one row-major
   buffer of all the reals, so that the data stays contiguous. A file in
   Fortran order (fortran_order: True) is transposed into that row-major
   layout as it is read. */
#include "npy.h"
#include "npy_header.h"
#include <errno.h>
#include <sys/stat.h>

/* Closes f (when open) and raises "load: PATH: MSG". */
static _Noreturn void load_fail(FILE *f, const char *path, Span s, const char *msg) {
  if (f) fclose(f);
  fe_error(s, "load: %s: %s", path, msg);
}

/* The dtype is float64 and the rank is the one asked for; else raises
   the error that says what the file holds. */
static void check_kind(FILE *f, const char *path, Span s, const NpyHeader *h, int rank) {
  const char *shape = npy_shape_text(h->ndim, h->dims);
  if (!h->descr_is_f8) {
    const char *words = npy_dtype_words(h);
    load_fail(f, path, s,
              words ? una_sprintf("the file holds %s array of shape %s; only float64 ('<f8') is read",
                                  words, shape)
                    : una_sprintf("the file holds an array of dtype %s and shape %s; only float64 "
                                  "('<f8') is read",
                                  h->descr, shape));
  }
  if (h->ndim != rank)
    load_fail(f, path, s, una_sprintf("the file holds a float64 array of shape %s; expected %s", shape,
                                      npy_rank_type_text(rank)));
}

/* The number of reals in the file (the product of its dimensions); false
   when it does not fit in a size_t of bytes. *approx is the product as a
   real, for messages. */
static bool count_reals(const NpyHeader *h, size_t *n, double *approx) {
  uint64_t p = 1;
  bool overflow = false;
  double r = 1;
  for (int i = 0; i < h->ndim; i++) {
    r *= (double)h->dims[i];
    if (h->dims[i] == 0) {
      p = 0;
      overflow = false;
      r = 0;
      break;
    }
    if (!overflow && p > UINT64_MAX / h->dims[i]) overflow = true;
    else if (!overflow) p *= h->dims[i];
  }
  *approx = r;
  if (overflow || p > SIZE_MAX / 8) return false;
  *n = (size_t)p;
  return true;
}

/* The rows x cols matrix stored column by column at in, row by row into
   out, in 32 x 32 tiles (so that both sides stay in cache). */
static void transpose2(double *out, const double *in, size_t rows, size_t cols) {
  enum { T = 32 };
  for (size_t ib = 0; ib < rows; ib += T)
    for (size_t jb = 0; jb < cols; jb += T) {
      size_t ie = ib + T < rows ? ib + T : rows, je = jb + T < cols ? jb + T : cols;
      for (size_t i = ib; i < ie; i++)
        for (size_t j = jb; j < je; j++) out[i * cols + j] = in[i + j * rows];
    }
}

/* out[] gets the n reals of in[], stored in Fortran order (first index
   fastest), in C order (last index fastest). */
static void from_fortran(double *out, const double *in, int k, const uint64_t *d, size_t n) {
  if (k == 2) {
    transpose2(out, in, (size_t)d[0], (size_t)d[1]);
    return;
  }
  size_t stride[NPY_MAX_DIMS], idx[NPY_MAX_DIMS];
  stride[0] = 1;
  for (int j = 1; j < k; j++) stride[j] = stride[j - 1] * (size_t)d[j - 1];
  memset(idx, 0, sizeof idx);
  size_t off = 0;
  for (size_t c = 0; c < n; c++) {
    out[c] = in[off];
    for (int j = k - 1; j >= 0; j--) {
      if (++idx[j] < d[j]) {
        off += stride[j];
        break;
      }
      off -= (size_t)(d[j] - 1) * stride[j];
      idx[j] = 0;
    }
  }
}

/* The nested array of dimensions d[level..rank) over the row-major reals of
   flat, from the real at *off on (advanced past them). Empty sub-arrays
   are shared, one per level (empty[level]), so that a shape such as
   (1000000, 0) costs no more than its outer array. */
static Array *nest(const Array *flat, int level, int rank, const uint64_t *d, size_t *off,
                   Array **empty, Span s) {
  if (d[level] == 0) {
    if (!empty[level]) empty[level] = level == rank - 1 ? val_view(flat, 0, 0) : val_new_boxed_array(0, s);
    return empty[level];
  }
  if (level == rank - 1) {
    Array *row = val_view(flat, *off, (size_t)d[level]);
    *off += (size_t)d[level];
    return row;
  }
  if (d[level] > SIZE_MAX) val_alloc_error((double)d[level], sizeof(Value), s);
  Array *a = val_new_boxed_array((size_t)d[level], s);
  for (size_t i = 0; i < a->len; i++) a->v[i] = val_array(nest(flat, level + 1, rank, d, off, empty, s));
  return a;
}

/* A fresh real array of n elements; on failure f is closed first. */
static Array *new_reals(FILE *f, size_t n, Span s) {
  Array *a;
  FeTry t;
  if (fe_try(&t)) {
    a = val_new_real_array(n, s);
    fe_untry(&t);
  } else {
    fclose(f);
    fe_raise(t.err);
  }
  return a;
}

Array *npy_load(const char *path, int rank, Span s) {
  ASSERT(rank >= 1);
  FILE *f = fopen(path, "rb");
  if (!f) load_fail(NULL, path, s, una_sprintf("cannot open: %s", strerror(errno)));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) load_fail(f, path, s, una_sprintf("cannot open: %s", strerror(errno)));
  if (S_ISDIR(st.st_mode)) load_fail(f, path, s, una_sprintf("cannot open: %s", strerror(EISDIR)));

  unsigned char pre[12];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, npy_magic, 6) != 0)
    load_fail(f, path, s, "not a .npy file");
  int major = pre[6], minor = pre[7];
  uint64_t hlen;
  size_t preamble;
  if (major == 1) {
    hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
    preamble = 10;
  } else if (major == 2 || major == 3) {
    if (fread(pre + 10, 1, 2, f) != 2) load_fail(f, path, s, "not a .npy file");
    hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    preamble = 12;
  } else {
    load_fail(f, path, s, una_sprintf("unsupported .npy format version %d.%d", major, minor));
  }
  if (hlen > ((uint64_t)1 << 24)) load_fail(f, path, s, "not a .npy file (header too long)");
  char *text = GC_MALLOC_ATOMIC((size_t)hlen + 1);
  if (!text) una_internal_error(__FILE__, __LINE__, "out of memory");
  if (fread(text, 1, (size_t)hlen, f) != (size_t)hlen) load_fail(f, path, s, "not a .npy file (truncated header)");
  text[hlen] = '\0';

  NpyHeader h;
  memset(&h, 0, sizeof h);
  if (!npy_parse_header(text, (size_t)hlen, &h)) load_fail(f, path, s, "not a .npy file (bad header)");
  check_kind(f, path, s, &h, rank);

  size_t n = 0;
  double approx;
  bool fits = count_reals(&h, &n, &approx);
  size_t need = fits ? n * 8 : 0;
  uint64_t data_start = preamble + hlen;
  if (S_ISREG(st.st_mode)) {
    uint64_t avail = (uint64_t)st.st_size > data_start ? (uint64_t)st.st_size - data_start : 0;
    if (!fits || avail < need) {
      char eb[40];
      if (!fits) una_format_real(eb, sizeof eb, approx * 8.0);
      else snprintf(eb, sizeof eb, "%zu", need);
      load_fail(f, path, s, una_sprintf("truncated data (expected %s bytes, found %llu)", eb,
                                        (unsigned long long)avail));
    }
  }
  if (!fits) {
    fclose(f);
    val_alloc_error(approx, 8.0, s);
  }
  bool transpose = h.fortran_order && rank >= 2;
  Array *a = new_reals(f, n, s);
  Array *raw = transpose ? new_reals(f, n, s) : a;
  size_t got = fread(raw->r, 1, need, f);
  if (got != need)
    load_fail(f, path, s, una_sprintf("truncated data (expected %zu bytes, found %zu)", need, got));
  fclose(f);
  if (!npy_host_is_little_endian()) npy_swap8(raw->r, n);
  if (transpose) from_fortran(a->r, raw->r, rank, h.dims, n);
  if (rank == 1) return a;
  size_t off = 0;
  Array *empty[NPY_MAX_DIMS] = {NULL};
  Array *top = nest(a, 0, rank, h.dims, &off, empty, s);
  ASSERT(off == n);
  return top;
}
