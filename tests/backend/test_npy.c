/* test_npy.c: .npy load/save: round trips, the header layout numpy expects,
   files in other accepted forms, and every error, on hand-built files in a
   temporary directory. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../backend/npy.h"
#include "../suites.h"

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

/* The error text of loading path ("" when it loads). */
static const char *load_error(const char *path) {
  FeTry t;
  if (fe_try(&t)) {
    npy_load(path, fe_span("s.una", 1, 1));
    fe_untry(&t);
    return "";
  }
  return t.err.msg;
}

static const char *save_error(const char *path, const Array *a) {
  FeTry t;
  if (fe_try(&t)) {
    npy_save(path, a, fe_span("s.una", 1, 1));
    fe_untry(&t);
    return "";
  }
  return t.err.msg;
}

static Array *load_ok(const char *path) {
  FeTry t;
  Array *a = NULL;
  if (fe_try(&t)) {
    a = npy_load(path, fe_nospan);
    fe_untry(&t);
  } else {
    ck_abort_msg("load failed: %s", t.err.msg);
  }
  return a;
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
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: expected float64 ('<f8'), found '<i4'", p));
  p = write_npy("be.npy", 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: expected float64 ('<f8'), found '>f8'", p));
  p = write_npy("rec.npy", 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }", xs, 24);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: expected float64 ('<f8'), found [('a', '<f8')]", p));

  p = write_npy("2d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", xs, 48);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: expected a one-dimensional array, found shape (2, 3)", p));
  p = write_npy("0d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", xs, 8);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: expected a one-dimensional array, found shape ()", p));

  p = write_npy("trunc.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }", xs, 12);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: truncated data (expected 800 bytes, found 12)", p));
  p = write_npy("huge.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000,), }", xs, 8);
  ck_assert_str_eq(load_error(p), una_sprintf("load: %s: truncated data (expected 8000000000000000 bytes, found 8)", p));

  const char *bad[] = {
      "",                                                        /* no dict */
      "{'descr': '<f8', 'fortran_order': False}",                /* no shape */
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3,}",  /* unclosed */
      "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3,), }",
      "{'descr': '<f8', 'shape': (x,), }",
      "{'descr: '<f8', 'shape': (3,), }",
      "{'descr': '<f8', 'shape': (99999999999999999999999,), }",
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
    npy_save(dir, a, fe_span("s.una", 4, 7));
    fe_untry(&t);
    ck_abort();
  }
  ck_assert_int_eq(t.err.span.line, 4);
  ck_assert_int_eq(t.err.span.col, 7);
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
  suite_add_tcase(s, tc);
  return s;
}
