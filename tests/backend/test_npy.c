/* test_npy.c: .npy load/save: round trips of every rank (C and Fortran
   order, empty dimensions), the header layout numpy expects, files in other
   accepted forms, and every error, on hand-built files in a temporary
   directory; the LOAD builtin reading its rank from its type. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../backend/eval.h"
#include "../../backend/npy.h"
#include "../../frontend/ir/retype.h"
#include "../suites.h"
#include "../testlib.h"

static char dir[64];

static void make_dir(void) {
  strcpy(dir, "/tmp/una_test_npy_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void) {
  char *cmd = una_sprintf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static const char *path_of(const char *name) { return una_sprintf("%s/%s", dir, name); }

static void write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, n, f), n);
  fclose(f);
}

/* A .npy file of the given version with header dict `dict` (padded as numpy
   does) followed by ndata bytes of data. */
static const char *write_npy(const char *name, int major, const char *dict, const void *data, size_t ndata) {
  size_t pre = major == 1 ? 10 : 12;
  size_t dl = strlen(dict);
  size_t total = (pre + dl + 1 + 63) / 64 * 64;
  size_t hlen = total - pre;
  unsigned char *buf = GC_MALLOC_ATOMIC(total + ndata);
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  if (major != 1) {
    buf[10] = (unsigned char)(hlen >> 16);
    buf[11] = (unsigned char)(hlen >> 24);
  }
  memcpy(buf + pre, dict, dl);
  memset(buf + pre + dl, ' ', hlen - dl);
  buf[total - 1] = '\n';
  if (ndata) memcpy(buf + total, data, ndata);
  const char *p = path_of(name);
  write_bytes(p, buf, total + ndata);
  return p;
}

/* The error text of loading path as an array of the given rank ("" when
   it loads). */
static const char *load_error_rank(const char *path, int rank) {
  FeTry t;
  if (fe_try(&t)) {
    npy_load(path, rank, fe_span("s.una", 1, 1));
    fe_untry(&t);
    return "";
  }
  return t.err.msg;
}

static const char *load_error(const char *path) { return load_error_rank(path, 1); }

static const char *save_error_rank(const char *path, const Array *a, int rank) {
  FeTry t;
  if (fe_try(&t)) {
    npy_save(path, a, rank, fe_span("s.una", 1, 1));
    fe_untry(&t);
    return "";
  }
  return t.err.msg;
}

static const char *save_error(const char *path, const Array *a) { return save_error_rank(path, a, 1); }

static Array *load_ok_rank(const char *path, int rank) {
  FeTry t;
  Array *a = NULL;
  if (fe_try(&t)) {
    a = npy_load(path, rank, fe_nospan);
    fe_untry(&t);
  } else {
    ck_abort_msg("load failed: %s", t.err.msg);
  }
  return a;
}

static Array *load_ok(const char *path) { return load_ok_rank(path, 1); }

/* The file's bytes from offset on (at most n), and their number. */
static size_t file_bytes(const char *path, unsigned char *buf, size_t n) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  size_t got = fread(buf, 1, n, f);
  fclose(f);
  return got;
}

/* The header dict of the .npy file at path, without its padding. */
static const char *header_dict(const char *path) {
  unsigned char buf[512];
  size_t n = file_bytes(path, buf, sizeof buf);
  ck_assert_uint_ge(n, 10);
  size_t hlen = buf[8] | (size_t)buf[9] << 8;
  ck_assert_uint_le(10 + hlen, n);
  ck_assert_uint_eq((10 + hlen) % 64, 0);
  size_t e = 10 + hlen;
  while (e > 10 && (buf[e - 1] == ' ' || buf[e - 1] == '\n')) e--;
  return una_strndup((const char *)buf + 10, e - 10);
}

static Array *reals(size_t n) {
  Array *a = val_new_real_array(n, fe_nospan);
  for (size_t i = 0; i < n; i++) a->r[i] = (double)i * 0.5 - 3;
  return a;
}

START_TEST(round_trip) {
  make_dir();
  size_t sizes[] = {0, 1, 2, 7, 1000, 100000};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    Array *a = reals(sizes[k]);
    const char *p = path_of("rt.npy");
    ck_assert_str_eq(save_error(p, a), "");
    Array *b = load_ok(p);
    ck_assert(!b->boxed);
    ck_assert(val_equal(val_array(a), val_array(b)));
  }
  /* every double survives, bit for bit */
  double sp[] = {INFINITY, -INFINITY, NAN, 1e-300, 0.1, -0.0, 5e-324, 1.7976931348623157e308};
  Array *a = val_new_real_array(8, fe_nospan);
  memcpy(a->r, sp, sizeof sp);
  ck_assert_str_eq(save_error(path_of("sp.npy"), a), "");
  Array *b = load_ok(path_of("sp.npy"));
  ck_assert(memcmp(a->r, b->r, sizeof sp) == 0);
  /* a view saves only its elements */
  ck_assert_str_eq(save_error(path_of("view.npy"), val_view(reals(5), 1, 3)), "");
  ck_assert(val_equal(val_array(load_ok(path_of("view.npy"))), val_array(val_view(reals(5), 1, 3))));
  remove_dir();
}
END_TEST

START_TEST(header_layout) {
  make_dir();
  const char *p = path_of("h.npy");
  ck_assert_str_eq(save_error(p, reals(3)), "");
  FILE *f = fopen(p, "rb");
  unsigned char buf[256];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ck_assert(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
  size_t hlen = buf[8] | (size_t)buf[9] << 8;
  ck_assert_uint_eq((10 + hlen) % 64, 0);
  ck_assert_uint_eq(10 + hlen, 128); /* as numpy writes it for this shape */
  ck_assert_uint_eq(n, 10 + hlen + 24);
  ck_assert_uint_eq(buf[10 + hlen - 1], '\n');
  const char *want = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  ck_assert(memcmp(buf + 10, want, strlen(want)) == 0);
  for (size_t i = 10 + strlen(want); i < 10 + hlen - 1; i++) ck_assert_uint_eq(buf[i], ' ');
  double d;
  memcpy(&d, buf + 10 + hlen + 8, 8);
  ck_assert(d == -2.5);
  remove_dir();
}
END_TEST

START_TEST(accepted_forms) {
  make_dir();
  double xs[] = {1, 2, 3};
  /* version 2.0 and 3.0 headers */
  const char *p2 = write_npy("v2.npy", 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert(load_ok(p2)->len == 3 && load_ok(p2)->r[2] == 3);
  const char *p3 = write_npy("v3.npy", 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert(load_ok(p3)->r[1] == 2);
  /* keys in another order, double quotes, no trailing comma, fortran order */
  const char *q = write_npy("q.npy", 1, "{\"shape\": (3,), \"fortran_order\": True, \"descr\": \"<f8\"}", xs, 24);
  ck_assert(load_ok(q)->r[0] == 1);
  /* Python 2 long suffix, empty array, extra trailing bytes ignored */
  const char *l = write_npy("l.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", xs, 24);
  ck_assert(load_ok(l)->len == 2);
  const char *e = write_npy("e.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", NULL, 0);
  ck_assert(load_ok(e)->len == 0);
  remove_dir();
}
END_TEST

START_TEST(load_errors) {
  make_dir();
  double xs[100] = {0};
  const char *p;

  p = path_of("missing.npy");
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: cannot open: No such file or directory", p));
  ck_assert_str_eq(load_error(dir), una_sprintf("load: %s: cannot open: Is a directory", dir));

  p = path_of("text.npy");
  write_bytes(p, "hello, world\n", 13);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: not a .npy file", p));
  p = path_of("short.npy");
  write_bytes(p, "\x93NUM", 4);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: not a .npy file", p));
  p = path_of("empty.npy");
  write_bytes(p, "", 0);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: not a .npy file", p));

  p = write_npy("v9.npy", 9, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: unsupported .npy format version 9.0", p));

  p = write_npy("i4.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", xs, 12);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds an int32 ('<i4') array of shape (3,); "
                                              "only float64 ('<f8') is read", p));
  p = write_npy("be.npy", 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds a big-endian float64 ('>f8') array of "
                                              "shape (3,); only float64 ('<f8') is read", p));
  p = write_npy("f4.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", xs, 20);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds a float32 ('<f4') array of shape (5,); "
                                              "only float64 ('<f8') is read", p));
  /* the dtype is checked before the rank */
  ck_assert_str_eq(load_error_rank(p, 2), load_error(p));
  p = write_npy("b1.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", xs, 4);
  ck_assert_str_eq(load_error_rank(p, 2), una_sprintf("load: %s: the file holds a bool ('|b1') array of shape "
                                                      "(2, 2); only float64 ('<f8') is read", p));
  p = write_npy("u1.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }", xs, 4);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds a uint8 ('|u1') array of shape (4,); "
                                              "only float64 ('<f8') is read", p));
  p = write_npy("c16.npy", 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", xs, 16);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds a complex128 ('<c16') array of shape "
                                              "(1,); only float64 ('<f8') is read", p));
  p = write_npy("u5.npy", 1, "{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }", xs, 20);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds an array of dtype '<U5' and shape (1,); "
                                              "only float64 ('<f8') is read", p));
  p = write_npy("rec.npy", 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds an array of dtype [('a', '<f8')] and "
                                              "shape (3,); only float64 ('<f8') is read", p));

  p = write_npy("2d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", xs, 48);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds a float64 array of shape (2, 3); "
                                              "expected [R]", p));
  ck_assert_str_eq(load_error_rank(p, 3), una_sprintf("load: %s: the file holds a float64 array of shape (2, 3); "
                                                      "expected [[[R]]]", p));
  p = write_npy("0d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", xs, 8);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: the file holds a float64 array of shape (); "
                                              "expected [R]", p));
  p = write_npy("1d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert_str_eq(load_error_rank(p, 2), una_sprintf("load: %s: the file holds a float64 array of shape (3,); "
                                                      "expected [[R]]", p));

  p = write_npy("trunc.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }", xs, 12);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: truncated data (expected 800 bytes, found 12)", p));
  p = write_npy("huge.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000,), }", xs, 8);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: truncated data (expected 8000000000000000 bytes, found 8)", p));
  p = write_npy("trunc2.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", xs, 24);
  ck_assert_str_eq(load_error_rank(p, 2), una_sprintf("load: %s: truncated data (expected 48 bytes, found 24)", p));
  p = write_npy("huge2.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (10000000000, 10000000000), }",
                xs, 8);
  ck_assert_str_eq(load_error_rank(p, 2),
                   una_sprintf("load: %s: truncated data (expected 8e+20 bytes, found 8)", p));

  const char *bad[] = {
      "",                                                        /* no dict */
      "{'descr': '<f8', 'fortran_order': False}",                /* no shape */
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,}",  /* unclosed */
      "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,), }",
      "{'descr': '<f8', 'shape': (x,), }",
      "{'descr: '<f8', 'shape': (3,), }",
      "{'descr': '<f8', 'shape': (99999999999999999999999,), }",
      /* 65 dimensions: more than NumPy allows */
      "{'descr': '<f8', 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
      "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
      "1, 1, 1), }",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    p = write_npy("bad.npy", 1, bad[i], xs, 24);
    ck_assert_str_eq(load_error(p), una_sprintf("load: %s: not a .npy file (bad header)", p));
  }
  /* header length beyond the end of the file */
  unsigned char cut[20] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 200, 0, '{'};
  p = path_of("cut.npy");
  write_bytes(p, cut, sizeof cut);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: not a .npy file (truncated header)", p));
  remove_dir();
}
END_TEST

/* A rows x cols array of arrays (separate rows): m[i][j] = 10 i + j + 0.5. */
static Array *mat(size_t rows, size_t cols) {
  Array *m = val_new_boxed_array(rows, fe_nospan);
  for (size_t i = 0; i < rows; i++) {
    Array *r = val_new_real_array(cols, fe_nospan);
    for (size_t j = 0; j < cols; j++) r->r[j] = 10.0 * (double)i + (double)j + 0.5;
    m->v[i] = val_array(r);
  }
  return m;
}

/* d0 x d1 x d2: a[i][j][k] = 100 i + 10 j + k. */
static Array *cube(size_t d0, size_t d1, size_t d2) {
  Array *a = val_new_boxed_array(d0, fe_nospan);
  for (size_t i = 0; i < d0; i++) {
    Array *m = val_new_boxed_array(d1, fe_nospan);
    for (size_t j = 0; j < d1; j++) {
      Array *r = val_new_real_array(d2, fe_nospan);
      for (size_t k = 0; k < d2; k++) r->r[k] = 100.0 * (double)i + 10.0 * (double)j + (double)k;
      m->v[j] = val_array(r);
    }
    a->v[i] = val_array(m);
  }
  return a;
}

/* The rows of a loaded rank-2 array lie one after another in one buffer. */
static void assert_contiguous(const Array *m) {
  ck_assert(m->boxed);
  for (size_t i = 1; i < m->len; i++) {
    const Array *r0 = m->v[0].u.a, *ri = m->v[i].u.a;
    ck_assert(!ri->boxed);
    ck_assert_ptr_eq(ri->r, r0->r + i * r0->len);
  }
}

START_TEST(nd_round_trip) {
  make_dir();
  const char *p = path_of("m.npy");
  /* 2-D */
  Array *m = mat(3, 4);
  ck_assert_str_eq(save_error_rank(p, m, 2), "");
  ck_assert_str_eq(header_dict(p), "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }");
  unsigned char buf[256];
  size_t n = file_bytes(p, buf, sizeof buf);
  ck_assert_uint_eq(n, 128 + 12 * 8);
  double d;
  memcpy(&d, buf + 128 + 5 * 8, 8); /* m[1][1], C order */
  ck_assert(d == 11.5);
  Array *b = load_ok_rank(p, 2);
  ck_assert(val_equal(val_array(m), val_array(b)));
  assert_contiguous(b);
  ck_assert_str_eq(val_to_string(val_array(b)),
                   "[[0.5, 1.5, 2.5, 3.5], [10.5, 11.5, 12.5, 13.5], [20.5, 21.5, 22.5, 23.5]]");
  /* 3-D, every row of the innermost level in one buffer */
  Array *c = cube(2, 3, 4);
  ck_assert_str_eq(save_error_rank(p, c, 3), "");
  ck_assert_str_eq(header_dict(p), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }");
  Array *c2 = load_ok_rank(p, 3);
  ck_assert(val_equal(val_array(c), val_array(c2)));
  const double *first = c2->v[0].u.a->v[0].u.a->r;
  for (size_t i = 0; i < 2; i++)
    for (size_t j = 0; j < 3; j++) ck_assert_ptr_eq(c2->v[i].u.a->v[j].u.a->r, first + (i * 3 + j) * 4);
  /* larger, and rows that are views of one buffer */
  Array *big = mat(500, 300);
  ck_assert_str_eq(save_error_rank(p, big, 2), "");
  ck_assert(val_equal(val_array(big), val_array(load_ok_rank(p, 2))));
  Array *flat = val_new_real_array(6, fe_nospan);
  for (size_t i = 0; i < 6; i++) flat->r[i] = (double)i;
  Array *views = val_new_boxed_array(2, fe_nospan);
  views->v[0] = val_array(val_view(flat, 1, 2));
  views->v[1] = val_array(val_view(flat, 4, 2));
  ck_assert_str_eq(save_error_rank(p, views, 2), "");
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[[1, 2], [4, 5]]");
  remove_dir();
}
END_TEST

START_TEST(fortran_order) {
  make_dir();
  /* [[1, 2, 3], [4, 5, 6]] stored column by column */
  double f2[] = {1, 4, 2, 5, 3, 6};
  const char *p = write_npy("f2.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f2, sizeof f2);
  Array *m = load_ok_rank(p, 2);
  ck_assert_str_eq(val_to_string(val_array(m)), "[[1, 2, 3], [4, 5, 6]]");
  assert_contiguous(m);
  /* 3-D: a[i][j][k] = 100 i + 10 j + k at i + 2 j + 6 k */
  double f3[24];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) f3[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  p = write_npy("f3.npy", 2, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }", f3, sizeof f3);
  ck_assert(val_equal(val_array(load_ok_rank(p, 3)), val_array(cube(2, 3, 4))));
  /* larger than the transpose's 32 x 32 tiles, in both directions */
  size_t r = 70, c = 45;
  double *big = GC_MALLOC_ATOMIC(r * c * sizeof(double));
  for (size_t i = 0; i < r; i++)
    for (size_t j = 0; j < c; j++) big[i + j * r] = 10.0 * (double)i + (double)j + 0.5;
  p = write_npy("fbig.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (70, 45), }", big,
                r * c * sizeof(double));
  ck_assert(val_equal(val_array(load_ok_rank(p, 2)), val_array(mat(r, c))));
  /* one row or one column: the same data either way */
  p = write_npy("row.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (1, 3), }", f2, 24);
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[[1, 4, 2]]");
  p = write_npy("col.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 1), }", f2, 24);
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[[1], [4], [2]]");
  p = write_npy("f0.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (0, 3), }", NULL, 0);
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[]");
  /* C order of the same bytes */
  p = write_npy("c2.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f2, sizeof f2);
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[[1, 4, 2], [5, 3, 6]]");
  remove_dir();
}
END_TEST

START_TEST(empty_dimensions) {
  make_dir();
  const char *p = write_npy("e03.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", NULL, 0);
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[]");
  p = write_npy("e30.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 0), }", NULL, 0);
  Array *a = load_ok_rank(p, 2);
  ck_assert_str_eq(val_to_string(val_array(a)), "[[], [], []]");
  ck_assert(!a->v[2].u.a->boxed);
  p = write_npy("e203.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 0, 3), }", NULL, 0);
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 3))), "[[], []]");
  p = write_npy("e230.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 0), }", NULL, 0);
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 3))), "[[[], [], []], [[], [], []]]");
  /* many empty rows cost one row */
  p = write_npy("emany.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 0), }", NULL, 0);
  a = load_ok_rank(p, 2);
  ck_assert_uint_eq(a->len, 1000000);
  ck_assert_ptr_eq(a->v[0].u.a, a->v[999999].u.a);
  /* too many empty rows to hold */
  p = write_npy("etoo.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000, 0), }", NULL, 0);
  ck_assert_str_eq(load_error_rank(p, 2), "cannot allocate 1e+15 elements (1.6e+16 bytes)");

  /* saving: dimensions below an empty one are 0 */
  p = path_of("s.npy");
  ck_assert_str_eq(save_error_rank(p, val_new_boxed_array(0, fe_nospan), 2), "");
  ck_assert_str_eq(header_dict(p), "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 0), }");
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[]");
  ck_assert_str_eq(save_error_rank(p, val_new_boxed_array(0, fe_nospan), 3), "");
  ck_assert_str_eq(header_dict(p), "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 0, 0), }");
  ck_assert_str_eq(save_error_rank(p, mat(2, 0), 2), "");
  ck_assert_str_eq(header_dict(p), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 0), }");
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[[], []]");
  ck_assert_str_eq(save_error_rank(p, cube(2, 0, 5), 3), "");
  ck_assert_str_eq(header_dict(p), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 0, 0), }");
  unsigned char buf[256];
  ck_assert_uint_eq(file_bytes(p, buf, sizeof buf), 128);
  remove_dir();
}
END_TEST

START_TEST(ragged_save) {
  make_dir();
  const char *p = path_of("r.npy");
  Array *m = mat(4, 4);
  m->v[2] = val_array(val_view(m->v[2].u.a, 0, 3));
  ck_assert_str_eq(save_error_rank(p, m, 2),
                   una_sprintf("save: %s: the array is ragged: row 2 has length 3, row 0 has length 4", p));
  ck_assert_int_ne(access(p, F_OK), 0); /* nothing written */
  Array *e = mat(2, 0);
  e->v[1] = mat(1, 1)->v[0];
  ck_assert_str_eq(save_error_rank(p, e, 2),
                   una_sprintf("save: %s: the array is ragged: row 1 has length 1, row 0 has length 0", p));
  Array *c = cube(2, 3, 4);
  c->v[1].u.a->v[2] = val_array(val_view(c->v[1].u.a->v[2].u.a, 1, 2));
  ck_assert_str_eq(save_error_rank(p, c, 3),
                   una_sprintf("save: %s: the array is ragged: row [1][2] has length 2, row [0][0] has length 4", p));
  c = cube(2, 3, 4);
  c->v[1] = val_array(mat(2, 4));
  ck_assert_str_eq(save_error_rank(p, c, 3),
                   una_sprintf("save: %s: the array is ragged: row [1] has length 2, row [0] has length 3", p));
  ck_assert_int_ne(access(p, F_OK), 0);
  /* an existing file is left alone */
  ck_assert_str_eq(save_error_rank(p, mat(1, 2), 2), "");
  ck_assert_str_ne(save_error_rank(p, m, 2), "");
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(p, 2))), "[[0.5, 1.5]]");
  remove_dir();
}
END_TEST

/* The LOAD builtin takes its rank from its type, as (load "f" : [[R]])
   will give it, on the CPU evaluator and through the checker's re-check. */
static Def *load_as(Session *s, const char *path, const Type *type) {
  Def *d = tl_check_in(s, una_sprintf("load \"%s\"", path));
  ck_assert(d->body->kind == T_PRIM && d->body->prim == PRIM_LOAD);
  d->body->type = type;
  d->ret = type;
  return d;
}

START_TEST(load_builtin_rank) {
  make_dir();
  Session *s = tl_session_with("");
  const Type *R = fe_ty_real(), *RR = fe_ty_array(fe_ty_array(R));
  double f2[] = {1, 4, 2, 5, 3, 6};
  const char *p = write_npy("f2.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f2, sizeof f2);
  Def *d = load_as(s, p, RR);
  fe_retype(d);
  ck_assert_str_eq(val_to_string(tl_call(d, NULL)), "[[1, 2, 3], [4, 5, 6]]");
  d = load_as(s, p, fe_ty_array(RR));
  FeTry t;
  if (fe_try(&t)) {
    cpu_call(d, NULL);
    fe_untry(&t);
    ck_abort_msg("a rank-3 load of a 2-D file succeeded");
  }
  ck_assert_str_eq(fe_error_text(t.err),
                   una_sprintf("t.una:1:1: error: load: %s: the file holds a float64 array of shape (2, 3); "
                               "expected [[[R]]]", p));
  /* the re-check takes load of [[R]] and deeper, nothing else */
  d = load_as(s, p, fe_ty_array(fe_ty_bool()));
  if (fe_try(&t)) {
    fe_retype(d);
    fe_untry(&t);
    ck_abort_msg("load of type [B] passed the re-check");
  }
  ck_assert_ptr_nonnull(strstr(t.err.msg, "load of type [B]"));
  /* save of a [[R]] from a script, read back here */
  const char *q = path_of("t.npy");
  TlRun r = tl_capture(s, una_sprintf("save \"%s\" [[1, 2], [3, 4]]\n", q), true);
  ck_assert_msg(r.ok, "%s", r.err);
  ck_assert_str_eq(r.out, "[[1, 2], [3, 4]]\n");
  ck_assert_str_eq(header_dict(q), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }");
  ck_assert_str_eq(val_to_string(val_array(load_ok_rank(q, 2))), "[[1, 2], [3, 4]]");
  r = tl_capture(s, una_sprintf(":cost save \"%s\" [[1, 2], [3, 4, 5]]\n", q), true);
  ck_assert(!r.ok);
  ck_assert_str_eq(r.err, una_sprintf("t.una:1:7: error: save: %s: the array is ragged: row 1 has length 3, "
                                      "row 0 has length 2\n", q));
  remove_dir();
}
END_TEST

START_TEST(save_errors) {
  make_dir();
  Array *a = reals(3);
  const char *p = path_of("no/such/dir/x.npy");
  ck_assert_str_eq(save_error(p, a), una_sprintf("save: %s: cannot write: No such file or directory", p));
  ck_assert_str_eq(save_error(dir, a), una_sprintf("save: %s: cannot write: Is a directory", dir));
  if (access("/dev/full", W_OK) == 0)
    ck_assert_str_eq(save_error("/dev/full", a), "save: /dev/full: cannot write: No space left on device");
  /* permission denied: a read-only directory (root ignores modes; then try
     a sysfs file that even root cannot write, when there is one) */
  if (geteuid() != 0) {
    const char *ro = path_of("ro");
    ck_assert_int_eq(mkdir(ro, 0555), 0);
    p = una_sprintf("%s/x.npy", ro);
    ck_assert_str_eq(save_error(p, a), una_sprintf("save: %s: cannot write: Permission denied", p));
  } else {
    FILE *f = fopen("/sys/kernel/notes", "wb");
    if (f) fclose(f);
    else if (errno == EACCES)
      ck_assert_str_eq(save_error("/sys/kernel/notes", a), "save: /sys/kernel/notes: cannot write: Permission denied");
  }
  /* the error is located at the span given */
  FeTry t;
  if (fe_try(&t)) {
    npy_save(dir, a, 1, fe_span("s.una", 4, 7));
    fe_untry(&t);
    ck_abort();
  }
  ck_assert_int_eq(t.err.span.line, 4);
  ck_assert_int_eq(t.err.span.col, 7);
  /* UNA_SAVE_LOCAL (the fuzzers'): nothing above the current directory */
  setenv("UNA_SAVE_LOCAL", "1", 1);
  ck_assert_str_eq(save_error(p, a), una_sprintf("save: %s: outside the current folder (UNA_SAVE_LOCAL is set)", p));
  ck_assert_str_eq(save_error("a/../../x.npy", a),
                   "save: a/../../x.npy: outside the current folder (UNA_SAVE_LOCAL is set)");
  ck_assert_str_eq(save_error("no_such_dir/..x.npy", a), "save: no_such_dir/..x.npy: cannot write: No such file or directory");
  unsetenv("UNA_SAVE_LOCAL");
  remove_dir();
}
END_TEST

Suite *suite_npy(void) {
  Suite *s = suite_create("npy");
  TCase *tc = tcase_create("npy");
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, header_layout);
  tcase_add_test(tc, accepted_forms);
  tcase_add_test(tc, load_errors);
  tcase_add_test(tc, save_errors);
  tcase_add_test(tc, nd_round_trip);
  tcase_add_test(tc, fortran_order);
  tcase_add_test(tc, empty_dimensions);
  tcase_add_test(tc, ragged_save);
  tcase_add_test(tc, load_builtin_rank);
  suite_add_tcase(s, tc);
  return s;
}
