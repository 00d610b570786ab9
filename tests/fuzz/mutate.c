/* mutate.c: byte-level mutation of a seed corpus (mutate.h). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../frontend/ir/common.h"
#include "mutate.h"

/* The mutants are bounded (a seed grows by at most this much). */
#define MAX_GROWTH 256

static const char *const dict[] = {
    "def ", "let ", " in ", "if ", " then ", " else ", "loop ", " for ", " while ", " do ", "(", ")", "[", "]",
    ", ", ". ", ":", " : R", " : [R]", " : [[R]]", "wrt ", "grad ", "vjp ", "jvp ", "value_and_grad ",
    "stop_gradient ", "map ", "map2 ", "map3 ", "reduce ", "foldl ", "scanl ", "scanr ", "iota ", "replicate ",
    "shift1L ", "shift1R ", "zip ", "unzip ", "transpose ", "concat ", "reduce_by_index ", "length ", "sum ",
    "rand ", "(+)", "(*)", "(max)", "(min)", " + ", " - ", " * ", " / ", " ^ ", " < ", " == ", " && ", "!",
    "-", "0", "1", "-0", "2.5", "1e308", "-1e308", "5e-324", "nan", "inf", "-inf", "9007199254740993", "true",
    "false", "x", "i", "a[i]", "a[0:2]", "[]", "[[]]", "(x. x)", "(x, y. x * y)", ":grad ", ":vjp ", ":jvp ",
    ":type ", ":cost ", ":plan ", ":show ", ":time ", ":help", "\n", "\n  ", "-- ", "\"", "load \"",
    "save \"", "\xef\xbb\xbf", "\t", "\\",
};
#define NDICT ((int)(sizeof dict / sizeof dict[0]))

static uint64_t next(uint64_t *s) { /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static size_t below(uint64_t *s, size_t n) { return n ? (size_t)(next(s) % n) : 0; }

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool corpus_load(Corpus *c, const char *dir) {
  memset(c, 0, sizeof *c);
  DIR *d = opendir(dir);
  if (!d) return false;
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char *path = una_sprintf("%s/%s", dir, e->d_name);
    struct stat st;
    if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (c->n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nv = NEW_ARRAY(char *, cap);
      if (c->n) memcpy(nv, c->names, sizeof *nv * (size_t)c->n);
      c->names = nv;
    }
    c->names[c->n++] = path;
  }
  closedir(d);
  if (c->n == 0) return false;
  qsort(c->names, (size_t)c->n, sizeof *c->names, by_name);
  c->data = NEW_ARRAY(char *, c->n);
  c->len = NEW_ARRAY(size_t, c->n);
  for (int i = 0; i < c->n; i++) {
    FILE *f = fopen(c->names[i], "rb");
    if (!f) return false;
    size_t cap2 = 4096, n = 0, k;
    char *buf = una_alloc(cap2);
    while ((k = fread(buf + n, 1, cap2 - n, f)) > 0) {
      n += k;
      if (n == cap2) {
        char *nb = una_alloc(2 * cap2);
        memcpy(nb, buf, n);
        buf = nb;
        cap2 *= 2;
      }
    }
    fclose(f);
    c->data[i] = buf;
    c->len[i] = n;
  }
  return true;
}

/* The mutant being built: buf[0..len), room for cap bytes. */
typedef struct Buf {
  char *buf;
  size_t len, cap;
} Buf;

static void insert(Buf *b, size_t at, const char *s, size_t n) {
  if (b->len + n > b->cap) n = b->cap - b->len;
  memmove(b->buf + at + n, b->buf + at, b->len - at);
  memcpy(b->buf + at, s, n);
  b->len += n;
}

static void erase(Buf *b, size_t at, size_t n) {
  if (at + n > b->len) n = b->len - at;
  memmove(b->buf + at, b->buf + at + n, b->len - at - n);
  b->len -= n;
}

/* The end of the word (letters, digits, _) at i, or i. */
static size_t word_end(const Buf *b, size_t i) {
  while (i < b->len && (b->buf[i] == '_' || (b->buf[i] >= 'a' && b->buf[i] <= 'z') ||
                        (b->buf[i] >= 'A' && b->buf[i] <= 'Z') || (b->buf[i] >= '0' && b->buf[i] <= '9')))
    i++;
  return i;
}

static void mutate_once(Buf *b, const Corpus *c, uint64_t *rng) {
  size_t at = below(rng, b->len + 1);
  switch (below(rng, 10)) {
  case 0: /* erase a run */
    if (b->len) erase(b, at < b->len ? at : b->len - 1, 1 + below(rng, 8));
    break;
  case 1: { /* insert a random byte */
    char ch = (char)below(rng, 256);
    insert(b, at, &ch, 1);
    break;
  }
  case 2: /* change a byte */
    if (b->len) b->buf[at < b->len ? at : 0] = (char)below(rng, 256);
    break;
  case 3: /* flip a bit */
    if (b->len) b->buf[at < b->len ? at : 0] ^= (char)(1 << below(rng, 8));
    break;
  case 4: { /* repeat a byte */
    if (!b->len) break;
    size_t i = at < b->len ? at : 0, k = 1 + below(rng, 16);
    for (size_t q = 0; q < k; q++) insert(b, i, &b->buf[i], 1);
    break;
  }
  case 5: { /* copy a run elsewhere */
    if (!b->len) break;
    size_t from = below(rng, b->len), n = 1 + below(rng, 32);
    if (from + n > b->len) n = b->len - from;
    char tmp[32];
    memcpy(tmp, b->buf + from, n);
    insert(b, at, tmp, n);
    break;
  }
  case 6: { /* splice: a run of another seed */
    int s = (int)below(rng, (size_t)c->n);
    if (!c->len[s]) break;
    size_t from = below(rng, c->len[s]), n = 1 + below(rng, 64);
    if (from + n > c->len[s]) n = c->len[s] - from;
    insert(b, at, c->data[s] + from, n);
    break;
  }
  case 7:
  case 8: { /* a dictionary token inserted */
    const char *w = dict[below(rng, NDICT)];
    insert(b, at, w, strlen(w));
    break;
  }
  default: { /* a word replaced by a token */
    size_t i = at;
    while (i < b->len && word_end(b, i) == i) i++;
    size_t e = word_end(b, i);
    erase(b, i, e - i);
    const char *w = dict[below(rng, NDICT)];
    insert(b, i, w, strlen(w));
  }
  }
}

char *mutate(const Corpus *c, uint64_t *rng, size_t *len, int *from) {
  int s = (int)below(rng, (size_t)c->n);
  Buf b = {NULL, c->len[s], c->len[s] + MAX_GROWTH};
  b.buf = una_alloc(b.cap + 1);
  memcpy(b.buf, c->data[s], b.len);
  int k = 1 + (int)below(rng, 4);
  for (int i = 0; i < k; i++) mutate_once(&b, c, rng);
  *len = b.len;
  *from = s;
  return b.buf;
}
