/* npy_header.c: the header of a .npy file (see npy_header.h).

   Format (numpy.lib.format): the magic "\x93NUMPY", a major and minor version
   byte, the header length (uint16 little-endian for 1.0, uint32 for 2.0 and
   3.0), then the header: a Python dict literal such as
   {'descr': '<f8', 'fortran_order': False, 'shape': (3,), } padded with
   spaces and a newline; the raw data follows. */
#include "npy_header.h"
#include "../frontend/ir/strbuf.h"

const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

bool npy_host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char c;
  memcpy(&c, &one, 1);
  return c == 1;
}

void npy_swap8(void *p, size_t n) {
  unsigned char *b = p;
  for (size_t i = 0; i < n; i++, b += 8)
    for (int j = 0; j < 4; j++) {
      unsigned char t = b[j];
      b[j] = b[7 - j];
      b[7 - j] = t;
    }
}

/* ---- parsing ---- */

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

/* shape: '(' [int (',' int)* [',']] ')'; fills h->ndim and h->dims. */
static bool py_shape(Lex *l, NpyHeader *h) {
  if (!eat(l, '(')) return false;
  h->ndim = 0;
  for (;;) {
    skip_ws(l);
    if (eat(l, ')')) break;
    if (l->p >= l->end || *l->p < '0' || *l->p > '9') return false;
    uint64_t v = 0;
    while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
      unsigned d = (unsigned)(*l->p - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
      l->p++;
    }
    if (l->p < l->end && (*l->p == 'L' || *l->p == 'l')) l->p++; /* Python 2 longs */
    if (h->ndim == NPY_MAX_DIMS) return false;
    h->dims[h->ndim++] = v;
    if (eat(l, ')')) break;
    if (!eat(l, ',')) return false;
  }
  return true;
}

bool npy_parse_header(const char *text, size_t len, NpyHeader *h) {
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
        h->dtype = d;
        h->descr_is_f8 = strcmp(d, "<f8") == 0;
      } else {
        l.p = raw;
        h->descr = py_skip_value(&l);
        if (!h->descr) return false;
        h->dtype = NULL;
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
      h->fortran_order = strcmp(v, "True") == 0;
    } else {
      if (!py_skip_value(&l)) return false;
    }
    if (eat(&l, '}')) break;
    if (!eat(&l, ',')) return false;
  }
  return have_descr && have_shape;
}

/* ---- words for errors ---- */

char *npy_shape_text(int ndim, const uint64_t *dims) {
  StrBuf b = {0};
  sb_put(&b, "(");
  for (int i = 0; i < ndim; i++) sb_printf(&b, i ? ", %llu" : "%llu", (unsigned long long)dims[i]);
  sb_put(&b, ndim == 1 ? ",)" : ")");
  return sb_str(&b);
}

char *npy_dtype_words(const NpyHeader *h) {
  const char *d = h->dtype;
  if (!d) return NULL;
  bool big = false;
  if (*d == '>') big = true;
  if (*d && strchr("<>=|", *d)) d++;
  const char *kind;
  switch (*d) {
  case 'f': kind = "float"; break;
  case 'i': kind = "int"; break;
  case 'u': kind = "uint"; break;
  case 'c': kind = "complex"; break;
  case 'b': kind = "bool"; break;
  default: return NULL;
  }
  if (d[1] < '0' || d[1] > '9') return NULL;
  char *end;
  long bytes = strtol(d + 1, &end, 10);
  if (end == d + 1 || *end || bytes <= 0 || bytes > 64) return NULL;
  char *name = *d == 'b' ? una_strdup(kind) : una_sprintf("%s%ld", kind, bytes * 8);
  if (big && bytes > 1) name = una_sprintf("big-endian %s", name);
  return una_sprintf("%s %s (%s)", name[0] == 'i' ? "an" : "a", name, h->descr); /* an int32, a uint8 */
}

char *npy_rank_type_text(int rank) {
  StrBuf b = {0};
  for (int i = 0; i < rank; i++) sb_put(&b, "[");
  sb_put(&b, "R");
  for (int i = 0; i < rank; i++) sb_put(&b, "]");
  return sb_str(&b);
}

/* ---- writing ---- */

unsigned char *npy_header_bytes(int ndim, const uint64_t *dims, size_t *n) {
  char *dict = una_sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }",
                           npy_shape_text(ndim, dims));
  size_t dl = strlen(dict);
  /* Pad with spaces so that 10 + header length is a multiple of 64; the
     header ends with '\n'. */
  size_t padded = (10 + dl + 1 + 63) / 64 * 64;
  size_t hlen = padded - 10;
  ASSERT(hlen <= 0xffff);
  unsigned char *h = GC_MALLOC_ATOMIC(padded);
  if (!h) una_internal_error(__FILE__, __LINE__, "out of memory");
  memcpy(h, npy_magic, 6);
  h[6] = 1;
  h[7] = 0;
  h[8] = (unsigned char)(hlen & 0xff);
  h[9] = (unsigned char)(hlen >> 8);
  memcpy(h + 10, dict, dl);
  memset(h + 10 + dl, ' ', padded - 10 - dl);
  h[padded - 1] = '\n';
  *n = padded;
  return h;
}
