/* npy.c: NumPy .npy files of float64, one dimension.

   Format (numpy.lib.format): the magic "\x93NUMPY", a major and minor version
   byte, the header length (uint16 little-endian for 1.0, uint32 for 2.0 and
   3.0), then the header: a Python dict literal such as
   {'descr': '<f8', 'fortran_order': False, 'shape': (3,), } padded with
   spaces and a newline; the raw data follows. */
#include "npy.h"
#include <errno.h>
#include <sys/stat.h>

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static bool host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char c;
  memcpy(&c, &one, 1);
  return c == 1;
}

static void swap8(void *p, size_t n) {
  unsigned char *b = p;
  for (size_t i = 0; i < n; i++, b += 8)
    for (int j = 0; j < 4; j++) {
      unsigned char t = b[j];
      b[j] = b[7 - j];
      b[7 - j] = t;
    }
}

/* Closes f (when open) and raises "load: PATH: MSG". */
static _Noreturn void load_fail(FILE *f, const char *path, Span s, const char *msg) {
  if (f) fclose(f);
  fe_error(s, "load: %s: %s", path, msg);
}

/* The header dict, parsed. */
typedef struct Header {
  const char *descr; /* the descr value as written: "'<f8'" with its quotes */
  bool descr_is_f8;
  int ndim;
  uint64_t dim0;
  const char *shape; /* the shape as Python prints it: "(2, 3)" */
} Header;

typedef struct Lex {
  const char *p, *end;
} Lex;

static void skip_ws(Lex *l) {
  while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
    l->p++;
}

static bool eat(Lex *l, char c) {
  skip_ws(l);
  if (l->p < l->end && *l->p == c) {
    l->p++;
    return true;
  }
  return false;
}

/* A Python string literal 'abc' or "abc" (no escapes needed here); returns
   its contents, or NULL. */
static const char *py_string(Lex *l) {
  skip_ws(l);
  if (l->p >= l->end || (*l->p != '\'' && *l->p != '"')) return NULL;
  char q = *l->p++;
  const char *start = l->p;
  while (l->p < l->end && *l->p != q) l->p++;
  if (l->p >= l->end) return NULL;
  const char *s = una_strndup(start, (size_t)(l->p - start));
  l->p++;
  return s;
}

/* Any Python value, skipped with bracket matching; returns its text. */
static const char *py_skip_value(Lex *l) {
  skip_ws(l);
  const char *start = l->p;
  int depth = 0;
  while (l->p < l->end) {
    char c = *l->p;
    if (c == '\'' || c == '"') {
      l->p++;
      while (l->p < l->end && *l->p != c) l->p++;
      if (l->p >= l->end) return NULL;
    } else if (c == '(' || c == '[' || c == '{') {
      depth++;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) break;
      depth--;
    } else if (c == ',' && depth == 0) {
      break;
    }
    l->p++;
  }
  if (depth != 0 || l->p == start) return NULL;
  const char *e = l->p;
  while (e > start && (e[-1] == ' ' || e[-1] == '\n')) e--;
  return una_strndup(start, (size_t)(e - start));
}

/* shape: '(' [int (',' int)* [',']] ')'; fills h->ndim, dim0, shape. */
static bool py_shape(Lex *l, Header *h) {
  if (!eat(l, '(')) return false;
  char text[256];
  size_t tl = 0;
  text[tl++] = '(';
  h->ndim = 0;
  for (;;) {
    skip_ws(l);
    if (eat(l, ')')) break;
    if (l->p >= l->end || *l->p < '0' || *l->p > '9') return false;
    uint64_t v = 0;
    const char *ds = l->p;
    while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
      unsigned d = (unsigned)(*l->p - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
      l->p++;
    }
    size_t dl = (size_t)(l->p - ds);
    if (l->p < l->end && (*l->p == 'L' || *l->p == 'l')) l->p++; /* Python 2 longs */
    if (h->ndim == 0) h->dim0 = v;
    if (h->ndim > 0 && tl + 2 < sizeof text) {
      text[tl++] = ',';
      text[tl++] = ' ';
    }
    if (tl + dl + 8 < sizeof text) {
      memcpy(text + tl, ds, dl);
      tl += dl;
    }
    h->ndim++;
    if (eat(l, ')')) break;
    if (!eat(l, ',')) return false;
  }
  if (h->ndim == 1) text[tl++] = ',';
  text[tl++] = ')';
  h->shape = una_strndup(text, tl);
  return true;
}

/* The header dict: '{' (key ':' value ',')* '}'. */
static bool parse_header(const char *text, size_t len, Header *h) {
  Lex l = {text, text + len};
  bool have_descr = false, have_shape = false;
  if (!eat(&l, '{')) return false;
  for (;;) {
    if (eat(&l, '}')) break;
    const char *key = py_string(&l);
    if (!key || !eat(&l, ':')) return false;
    if (strcmp(key, "descr") == 0) {
      skip_ws(&l);
      const char *raw = l.p;
      const char *d = py_string(&l);
      if (d) {
        h->descr = una_sprintf("'%s'", d);
        h->descr_is_f8 = strcmp(d, "<f8") == 0;
      } else {
        l.p = raw;
        h->descr = py_skip_value(&l);
        if (!h->descr) return false;
        h->descr_is_f8 = false;
      }
      have_descr = true;
    } else if (strcmp(key, "shape") == 0) {
      if (!py_shape(&l, h)) return false;
      have_shape = true;
    } else if (strcmp(key, "fortran_order") == 0) {
      skip_ws(&l);
      const char *v = py_skip_value(&l);
      if (!v || (strcmp(v, "True") != 0 && strcmp(v, "False") != 0)) return false;
    } else {
      if (!py_skip_value(&l)) return false;
    }
    if (eat(&l, '}')) break;
    if (!eat(&l, ',')) return false;
  }
  return have_descr && have_shape;
}

Array *npy_load(const char *path, Span s) {
  FILE *f = fopen(path, "rb");
  if (!f) load_fail(NULL, path, s, una_sprintf("cannot open: %s", strerror(errno)));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) load_fail(f, path, s, una_sprintf("cannot open: %s", strerror(errno)));
  if (S_ISDIR(st.st_mode)) load_fail(f, path, s, una_sprintf("cannot open: %s", strerror(EISDIR)));

  unsigned char pre[12];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, magic, 6) != 0)
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

  Header h = {0};
  if (!parse_header(text, (size_t)hlen, &h)) load_fail(f, path, s, "not a .npy file (bad header)");
  if (!h.descr_is_f8)
    load_fail(f, path, s, una_sprintf("expected float64 ('<f8'), found %s", h.descr));
  if (h.ndim != 1)
    load_fail(f, path, s, una_sprintf("expected a one-dimensional array, found shape %s", h.shape));

  uint64_t n = h.dim0;
  bool overflow = n > SIZE_MAX / 8;
  size_t need = overflow ? 0 : (size_t)n * 8;
  uint64_t data_start = preamble + hlen;
  if (S_ISREG(st.st_mode)) {
    uint64_t avail = (uint64_t)st.st_size > data_start ? (uint64_t)st.st_size - data_start : 0;
    if (overflow || avail < need) {
      char eb[40];
      if (overflow) una_format_real(eb, sizeof eb, (double)n * 8.0);
      else snprintf(eb, sizeof eb, "%zu", need);
      load_fail(f, path, s, una_sprintf("truncated data (expected %s bytes, found %llu)", eb,
                                        (unsigned long long)avail));
    }
  }
  if (overflow) {
    fclose(f);
    val_alloc_error((double)n, 8.0, s);
  }
  Array *a;
  FeTry t;
  if (fe_try(&t)) {
    a = val_new_real_array((size_t)n, s);
    fe_untry(&t);
  } else {
    fclose(f);
    fe_raise(t.err);
  }
  size_t got = fread(a->r, 1, need, f);
  if (got != need)
    load_fail(f, path, s, una_sprintf("truncated data (expected %zu bytes, found %zu)", need, got));
  fclose(f);
  if (!host_is_little_endian()) swap8(a->r, (size_t)n);
  return a;
}

/* Closes f (when open) and raises "save: PATH: cannot write: REASON". */
static _Noreturn void save_fail(FILE *f, const char *path, Span s, int err) {
  if (f) fclose(f);
  fe_error(s, "save: %s: cannot write: %s", path, strerror(err));
}

void npy_save(const char *path, const Array *a, Span s) {
  ASSERT(!a->boxed);
  char dict[128];
  int dl = snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }",
                    a->len);
  ASSERT(dl > 0 && (size_t)dl < sizeof dict);
  /* Pad with spaces so that 10 + header length is a multiple of 64; the
     header ends with '\n'. */
  size_t total = 10 + (size_t)dl + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t hlen = padded - 10;
  char header[256];
  ASSERT(padded <= sizeof header);
  memcpy(header, magic, 6);
  header[6] = 1;
  header[7] = 0;
  header[8] = (char)(hlen & 0xff);
  header[9] = (char)(hlen >> 8);
  memcpy(header + 10, dict, (size_t)dl);
  memset(header + 10 + dl, ' ', padded - 10 - (size_t)dl);
  header[padded - 1] = '\n';

  val_host(a);
  errno = 0;
  FILE *f = fopen(path, "wb");
  if (!f) save_fail(NULL, path, s, errno);
  if (fwrite(header, 1, padded, f) != padded) save_fail(f, path, s, errno ? errno : EIO);
  if (host_is_little_endian()) {
    if (a->len && fwrite(a->r, 8, a->len, f) != a->len) save_fail(f, path, s, errno ? errno : EIO);
  } else {
    double buf[512];
    for (size_t i = 0; i < a->len; i += 512) {
      size_t m = a->len - i < 512 ? a->len - i : 512;
      memcpy(buf, a->r + i, m * 8);
      swap8(buf, m);
      if (fwrite(buf, 8, m, f) != m) save_fail(f, path, s, errno ? errno : EIO);
    }
  }
  if (fflush(f) != 0) save_fail(f, path, s, errno ? errno : EIO);
  if (fclose(f) != 0) save_fail(NULL, path, s, errno ? errno : EIO);
}
