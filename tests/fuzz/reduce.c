/* reduce.c: the test-case reducer (reduce.h). */
#include "reduce.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../frontend/ir/common.h"

typedef struct Text {
  char *p;
  size_t n;
} Text;

typedef struct Reducer {
  FzFails fails;
  void *ud;
  long tries, max_tries;
  double deadline;
} Reducer;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool out_of_budget(const Reducer *R) { return R->tries >= R->max_tries || now_s() > R->deadline; }

/* cur[0..a) + mid[0..m) + cur[b..n) */
static Text splice(Text cur, size_t a, size_t b, const char *mid, size_t m) {
  Text t;
  t.n = a + m + (cur.n - b);
  t.p = GC_MALLOC_ATOMIC(t.n + 1);
  memcpy(t.p, cur.p, a);
  memcpy(t.p + a, mid, m);
  memcpy(t.p + a + m, cur.p + b, cur.n - b);
  t.p[t.n] = 0;
  return t;
}

/* Takes cand in place of *cur when it is shorter and still fails. */
static bool try_text(Reducer *R, Text *cur, Text cand) {
  if (cand.n >= cur->n || out_of_budget(R)) return false;
  R->tries++;
  if (!R->fails(cand.p, cand.n, R->ud)) return false;
  *cur = cand;
  return true;
}

/* The end offsets of t's units: its lines (each with its newline), or
   its tokens (each with the white space after it). Returns the count. */
static size_t units(Text t, bool lines, size_t **ends) {
  size_t n = 0, cap = 64;
  size_t *e = GC_MALLOC_ATOMIC(cap * sizeof *e);
  size_t i = 0;
  while (i < t.n) {
    if (lines) {
      while (i < t.n && t.p[i] != '\n') i++;
      if (i < t.n) i++;
    } else {
      while (i < t.n && strchr(" \t\n", t.p[i]) == NULL) i++;
      while (i < t.n && strchr(" \t\n", t.p[i]) != NULL) i++;
    }
    if (n == cap) {
      size_t *g = GC_MALLOC_ATOMIC(2 * cap * sizeof *g);
      memcpy(g, e, cap * sizeof *g);
      e = g;
      cap *= 2;
    }
    e[n++] = i;
  }
  *ends = e;
  return n;
}

/* ddmin's complement step: removes chunks of units, halving the chunk
   size down to one unit. */
static bool remove_units(Reducer *R, Text *cur, bool lines) {
  bool progress = false;
  size_t *e;
  size_t n = units(*cur, lines, &e);
  for (size_t chunk = n / 2 ? n / 2 : 1; chunk >= 1 && !out_of_budget(R); chunk /= 2) {
    for (size_t i = 0; i < n && !out_of_budget(R);) {
      size_t a = i ? e[i - 1] : 0, j = i + chunk < n ? i + chunk : n, b = e[j - 1];
      if (try_text(R, cur, splice(*cur, a, b, "", 0))) {
        progress = true;
        n = units(*cur, lines, &e);
      } else {
        i += chunk > 2 ? chunk : 1; /* pairs and single units at every offset */
      }
    }
    if (chunk == 1) break;
  }
  return progress;
}

/* The offset of the ')' that closes the '(' at i, or 0 when none. */
static size_t closing(Text t, size_t i) {
  int depth = 0;
  for (size_t k = i; k < t.n; k++) {
    if (t.p[k] == '(') depth++;
    else if (t.p[k] == ')' && --depth == 0) return k;
  }
  return 0;
}

/* Each parenthesised group, outermost first, replaced by one of the
   groups directly inside it, by 0 or by 1. */
static bool simplify_groups(Reducer *R, Text *cur) {
  bool progress = false;
  for (size_t i = 0; i < cur->n && !out_of_budget(R); i++) {
    if (cur->p[i] != '(') continue;
    size_t j = closing(*cur, i);
    if (!j) continue;
    bool done = false;
    for (size_t k = i + 1; k < j && !done; k++) {
      if (cur->p[k] != '(') continue;
      size_t l = closing(*cur, k);
      if (!l || l > j) break;
      done = try_text(R, cur, splice(*cur, i, j + 1, cur->p + k, l + 1 - k));
      k = done ? k : l;
    }
    if (!done) done = try_text(R, cur, splice(*cur, i, j + 1, "0", 1));
    if (!done) done = try_text(R, cur, splice(*cur, i, j + 1, "1", 1));
    if (done) {
      progress = true;
      i--; /* the group now at i is tried again */
    }
  }
  return progress;
}

char *fz_reduce(const char *text, size_t n, FzFails fails, void *ud, long max_tries, double max_s,
                size_t *n_out, FzReduceStats *st) {
  Reducer R = {fails, ud, 0, max_tries, now_s() + max_s};
  Text cur = splice((Text){(char *)text, n}, n, n, "", 0);
  bool progress = true;
  while (progress && !out_of_budget(&R)) {
    progress = remove_units(&R, &cur, true);
    progress |= simplify_groups(&R, &cur);
    progress |= remove_units(&R, &cur, false);
  }
  if (st) {
    st->tries = R.tries;
    st->from = n;
    st->to = cur.n;
  }
  *n_out = cur.n;
  return cur.p;
}

bool fz_keep(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

char *fz_read(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = (size_t)1 << 20;
  char *buf = GC_MALLOC_ATOMIC(cap + 1);
  *n = fread(buf, 1, cap, f);
  buf[*n] = 0;
  fclose(f);
  return buf;
}
