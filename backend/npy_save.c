/* npy_save.c: writing NumPy .npy files: an array of reals of any rank
   whose rows at each level have equal lengths, as a C-order float64 array
   (format 1.0, the data aligned to 64 bytes). */
#include "npy.h"
#include "npy_header.h"
#include "../frontend/ir/strbuf.h"
#include <errno.h>
#include <stdlib.h>

/* Closes f (when open) and raises "save: PATH: cannot write: REASON". */
static _Noreturn void save_fail(FILE *f, const char *path, Span s, int err) {
  if (f) fclose(f);
  fe_error(s, "save: %s: cannot write: %s", path, strerror(err));
}

/* The shape of a as the first row at each level gives it: dims[0] is a's
   length, dims[j] the length of a[0]...[0] (j zeros); the dimensions below
   an empty one are 0. */
static void first_shape(const Array *a, int rank, uint64_t *dims) {
  for (int j = 0; j < rank; j++) {
    dims[j] = a ? a->len : 0;
    if (j + 1 < rank) a = a && a->len ? a->v[0].u.a : NULL;
  }
}

/* "row 2" (rank 2) or "row [1][2]" for the sub-array at idx[0..level). */
static char *row_name(int rank, int level, const size_t *idx) {
  if (rank == 2) return una_sprintf("row %zu", idx[0]);
  StrBuf b = {0};
  sb_put(&b, "row ");
  for (int j = 0; j < level; j++) sb_printf(&b, "[%zu]", idx[j]);
  return sb_str(&b);
}

/* Raises the ragged error unless every sub-array of a at each level
   (a itself at level) has the length dims gives; idx is a's position. */
static void check_shape(const char *path, const Array *a, int rank, int level, const uint64_t *dims,
                        size_t *idx, Span s) {
  if (a->len != dims[level]) {
    size_t first[NPY_MAX_DIMS] = {0};
    fe_error(s, "save: %s: the array is ragged: %s has length %zu, %s has length %llu", path,
             row_name(rank, level, idx), a->len, row_name(rank, level, first),
             (unsigned long long)dims[level]);
  }
  if (level + 1 == rank) return;
  for (size_t i = 0; i < a->len; i++) {
    idx[level] = i;
    check_shape(path, a->v[i].u.a, rank, level + 1, dims, idx, s);
  }
}

/* Writes the n reals at r, little-endian; false on a write error. */
static bool write_reals(FILE *f, const double *r, size_t n) {
  if (npy_host_is_little_endian()) return n == 0 || fwrite(r, 8, n, f) == n;
  double buf[512];
  for (size_t i = 0; i < n; i += 512) {
    size_t m = n - i < 512 ? n - i : 512;
    memcpy(buf, r + i, m * 8);
    npy_swap8(buf, m);
    if (fwrite(buf, 8, m, f) != m) return false;
  }
  return true;
}

/* Writes the rows of a (at level; innermost at rank - 1) in order. */
static bool write_rows(FILE *f, const Array *a, int level, int rank) {
  if (level + 1 == rank) {
    ASSERT(!a->boxed);
    val_host(a);
    return write_reals(f, a->r, a->len);
  }
  ASSERT(a->boxed);
  for (size_t i = 0; i < a->len; i++)
    if (!write_rows(f, a->v[i].u.a, level + 1, rank)) return false;
  return true;
}

/* Whether path stays inside the current folder: relative, no ".."
   component. */
static bool local_path(const char *path) {
  if (path[0] == '/') return false;
  for (const char *p = path; *p;) {
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.') return false;
    p += n;
    if (*p == '/') p++;
  }
  return true;
}

void npy_save(const char *path, const Array *a, int rank, Span s) {
  ASSERT(rank >= 1 && rank <= NPY_MAX_DIMS);
  /* the fuzzers run mutated programs: their saves stay in a private folder */
  const char *only_local = getenv("UNA_SAVE_LOCAL");
  if (only_local && *only_local && !local_path(path))
    fe_error(s, "save: %s: outside the current folder (UNA_SAVE_LOCAL is set)", path);
  uint64_t dims[NPY_MAX_DIMS];
  size_t idx[NPY_MAX_DIMS] = {0};
  first_shape(a, rank, dims);
  check_shape(path, a, rank, 0, dims, idx, s);
  size_t hn;
  unsigned char *header = npy_header_bytes(rank, dims, &hn);

  errno = 0;
  FILE *f = fopen(path, "wb");
  if (!f) save_fail(NULL, path, s, errno);
  if (fwrite(header, 1, hn, f) != hn) save_fail(f, path, s, errno ? errno : EIO);
  if (!write_rows(f, a, 0, rank)) save_fail(f, path, s, errno ? errno : EIO);
  if (fflush(f) != 0) save_fail(f, path, s, errno ? errno : EIO);
  if (fclose(f) != 0) save_fail(NULL, path, s, errno ? errno : EIO);
}
