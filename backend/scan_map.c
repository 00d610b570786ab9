/* scan_map.c: scans by chunks, and a map2 of scans fused (see scan_map.h
   for the bracketing).

   A job has two sides: S1, the scan whose elements are stored into the
   result array (out) by pass 1, and S2, the map2's other argument: a scan,
   a plain array, or nothing (cpu_scan). With both arguments scans, S1 is
   a scanr where there is one. The passes:

   0. when S2 is a chunked scan whose totals S1's pass cannot give (another
      array or operator): S2's segment totals, chunk by chunk;
   1. S1, chunk by chunk in its direction, segment by segment: the scan
      steps over the segment, the chunk's local results (or, in the chunk
      that starts from v, its final ones) stored at their places in out,
      while the next segment's total is fed a block per block scanned.
      Where S2 scans the same array with the same monoid, S2's totals are
      these; then, on the calling thread, each side's chunk totals and
      carries;
   2. S2, chunk by chunk in its direction (a scan), or the output cut into
      chunks (a plain array or nothing): each block's S1 elements are
      combined in place with their chunk's carry, S2's computed (its scan
      steps combined with its carry as they are stored), and g applied,
      the result written over S1's elements. When both scans and g are one
      monoid that commutes (+ or *), that is one loop (fast_block).

   So ∇prod is pass 1 backward (the suffix products into out, and the
   segment totals from the same loads) and pass 2 forward (the prefix
   products, multiplied in): two passes over the input and out, on all
   cores. Chunk functions run on threads that the collector does not know
   (parallel.h): they neither allocate nor raise; only a job of one chunk,
   which runs on the calling thread, polls for Ctrl-C. */
#include "scan_map.h"

#include <string.h>

#include "cost_meter.h"
#include "parallel.h"
#include "plan/note.h"

#define B CPU_BLOCK
#define SEG CPU_SCAN_SEG

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

typedef struct Side {
  const CpuScanArg *a; /* NULL: none */
  int K;               /* chunks: 1 (sequential) or CPU_CHUNKS */
  size_t lo[CPU_CHUNKS + 1];
  size_t off;          /* element e is read at q = e - off (1 under shift1L) */
  double carry[CPU_CHUNKS];
  size_t seg0[CPU_CHUNKS + 1]; /* chunk c's segment totals: segtot[seg0[c] .. seg0[c+1]) */
  double *segtot;
  bool own_totals;     /* S2 computes its own totals (pass 0) */
  CpuKernelRun op[CPU_MAX_THREADS];
  CpuKernelRun gm[CPU_MAX_THREADS];
} Side;

typedef struct Job {
  Side s[2];       /* S1, S2 */
  bool s1_first;   /* S1 is the map2's first argument */
  bool has_g;
  CpuKernelRun g[CPU_MAX_THREADS];
  const MonoidFns *gm; /* g as a builtin monoid's loops, or NULL */
  bool one_monoid;     /* both scans and g are the same monoid, which commutes (fast_block) */
  double *o;
  size_t m;
  int nchunks;     /* of the pass that runs */
  int nthreads;    /* of every pass */
  bool inplace_gmap; /* cpu_scan of a map, chunked: the mapped elements go to out first */
  Span span;
} Job;

static bool is_scan(const Side *s) { return s->a && s->a->scan; }

static bool is_seq(const Side *s, int c) { return s->K == 1 || (s->a->right ? c == s->K - 1 : c == 0); }

static double op2(Side *s, int t, double l, double r) {
  return s->a->m ? s->a->m->op(l, r) : cpu_kernel_call1(&s->op[t], l, r);
}

/* A result l of a chunk's local scan combined with the carry c. */
static double comb1(Side *s, int t, double c, double l) { return s->a->right ? op2(s, t, l, c) : op2(s, t, c, l); }

/* The same for x[0..k), in place. */
static void comb_block(Side *s, int t, double c, double *x, size_t k) {
  const MonoidFns *m = s->a->m;
  if (m) {
    (s->a->right ? m->combr : m->combl)(c, x, k);
    return;
  }
  for (size_t j = 0; j < k; j++) x[j] = comb1(s, t, c, x[j]);
}

/* k scan steps from acc over e[0..k), in the side's direction, into
   out[0..k) (combined with c when comb); the last acc. */
static double steps(Side *s, int t, double acc, const double *e, size_t k, double *out, bool comb, double c) {
  const MonoidFns *m = s->a->m;
  bool right = s->a->right;
  if (m) {
    if (!comb) return (right ? m->rscan : m->lscan)(acc, e, k, out);
    return (right ? m->rscanc : m->lscanc)(acc, e, k, out, c);
  }
  CpuKernelRun *op = &s->op[t];
  if (!right) {
    for (size_t j = 0; j < k; j++) {
      acc = cpu_kernel_call1(op, acc, e[j]);
      out[j] = comb ? cpu_kernel_call1(op, c, acc) : acc;
    }
  } else {
    for (size_t j = k; j-- > 0;) {
      acc = cpu_kernel_call1(op, e[j], acc);
      out[j] = comb ? cpu_kernel_call1(op, acc, c) : acc;
    }
  }
  return acc;
}

/* The scan's input elements [i, i+k) (k <= B): the array's, or the map's
   computed into buf, or (inplace_gmap) into out at their elements' places
   when produce, read from there otherwise. */
static const double *elems(Job *j, Side *s, int t, size_t i, size_t k, double *buf, bool produce) {
  const CpuScanArg *a = s->a;
  if (!a->gmap) return a->x + i;
  double *dst = buf;
  if (j->inplace_gmap) {
    dst = j->o + i + !a->right;
    if (!produce) return dst;
  }
  cpu_kernel_block(&s->gm[t], a->x + i, a->y ? a->y + i : NULL, k, dst);
  return dst;
}

/* Blocks ahead that a pass prefetches: a pass that walks the blocks from
   right to left (while each block's loops run left to right) defeats the
   hardware's prefetcher, and would wait for memory at every block. */
enum { PF_AHEAD = 2 };

/* __builtin_prefetch wants its read/write flag a constant. */
static void prefetch_read(const double *p, size_t k) {
  for (size_t q = 0; q < k; q += 8) __builtin_prefetch(p + q, 0, 3);
}

static void prefetch_write(const double *p, size_t k) {
  for (size_t q = 0; q < k; q += 8) __builtin_prefetch(p + q, 1, 3);
}

/* A segment's total in the making: its CPU_BLOCK lanes, fed a block at a
   time from the left, so that pass 1 can feed the next segment's blocks
   while it scans this one's: the loads of the one then overlap the other's
   chain of dependent operations, and the scan finds its elements in the
   cache. */
typedef struct SegSum {
  double lanes[B];
  size_t lo, hi, next;
} SegSum;

static void seg_begin(SegSum *g, size_t lo, size_t hi) {
  g->lo = g->next = lo;
  g->hi = hi;
}

static void seg_feed(Job *j, Side *s, int t, SegSum *g) {
  if (g->next >= g->hi) return;
  size_t i = g->next, k = min_size(B, g->hi - i), i2 = i + PF_AHEAD * B;
  if (i2 < g->hi && !s->a->gmap) prefetch_read(s->a->x + i2, min_size(B, g->hi - i2));
  double buf[B], tmp[B];
  const double *e = elems(j, s, t, i, k, buf, true);
  if (i == g->lo) {
    memcpy(g->lanes, e, sizeof(double) * k);
  } else if (s->a->m) {
    s->a->m->lanes(g->lanes, e, k);
  } else {
    cpu_kernel_block(&s->op[t], g->lanes, e, k, tmp);
    memcpy(g->lanes, tmp, sizeof(double) * k);
  }
  g->next = i + k;
}

/* The rest fed, the lanes folded left to right. */
static double seg_end(Job *j, Side *s, int t, SegSum *g) {
  while (g->next < g->hi) seg_feed(j, s, t, g);
  size_t k0 = min_size(B, g->hi - g->lo);
  double r = g->lanes[0];
  for (size_t l = 1; l < k0; l++) r = op2(s, t, r, g->lanes[l]);
  return r;
}

/* The total of the segment [lo, hi). */
static double seg_total(Job *j, Side *s, int t, size_t lo, size_t hi) {
  SegSum g;
  seg_begin(&g, lo, hi);
  return seg_end(j, s, t, &g);
}

static void chunk_totals(Job *j, Side *s, int t, int c) {
  size_t lo = s->lo[c], hi = s->lo[c + 1];
  for (size_t g = 0; lo + g * SEG < hi; g++) {
    size_t ss = lo + g * SEG;
    s->segtot[s->seg0[c] + g] = seg_total(j, s, t, ss, min_size(ss + SEG, hi));
  }
}

/* Where the k elements from e0 of side s land in out: the first q0 and
   the count; the values from vals + *skip. */
static size_t place(const Job *j, const Side *s, size_t e0, size_t k, size_t *q0, size_t *skip) {
  *q0 = 0;
  *skip = e0 < s->off ? s->off - e0 : 0;
  if (*skip >= k) return 0;
  *q0 = e0 + *skip - s->off;
  if (*q0 >= j->m) return 0;
  return min_size(k - *skip, j->m - *q0);
}

static void store(Job *j, const Side *s, size_t e0, const double *vals, size_t k) {
  size_t q0, skip, cnt = place(j, s, e0, k, &q0, &skip);
  if (cnt) memcpy(j->o + q0, vals + skip, sizeof(double) * cnt);
}

/* Prefetches what block i of side s (k elements) reads (its input, when
   input) and writes: the places of its elements in out. */
static void prefetch_block(Job *j, const Side *s, size_t i, size_t k, bool input) {
  if (input && !s->a->gmap) prefetch_read(s->a->x + i, k);
  size_t q0, skip, cnt = place(j, s, s->a->right ? i : i + 1, k, &q0, &skip);
  if (cnt) prefetch_write(j->o + q0, cnt);
}

static void maybe_poll(Job *j, size_t *blocks) {
  if (j->nchunks == 1 && ((*blocks)++ & 63) == 0) fe_poll_interrupt(j->span);
}

static void pass1_chunk(void *ctx, int t, int c) {
  Job *j = ctx;
  Side *s = &j->s[0];
  const CpuScanArg *a = s->a;
  size_t lo = s->lo[c], hi = s->lo[c + 1], blocks = 0;
  bool right = a->right, started = is_seq(s, c);
  double acc = a->v, buf[B], ebuf[B];
  if (started) store(j, s, right ? a->n : 0, &acc, 1);
  size_t nseg = (hi - lo + SEG - 1) / SEG;
  bool chunked = s->K > 1;
  SegSum sum;
#define SEG_LO(g) (lo + (right ? nseg - 1 - (g) : (g)) * SEG)
  if (chunked && nseg) s->segtot[s->seg0[c] + (right ? nseg - 1 : 0)] = seg_total(j, s, t, SEG_LO(0), min_size(SEG_LO(0) + SEG, hi));
  for (size_t g = 0; g < nseg; g++) {
    size_t ss = SEG_LO(g), se = min_size(ss + SEG, hi);
    /* the next segment's total, fed a block per block scanned here */
    bool feed = chunked && g + 1 < nseg;
    if (feed) seg_begin(&sum, SEG_LO(g + 1), min_size(SEG_LO(g + 1) + SEG, hi));
    size_t nb = (se - ss + B - 1) / B;
    for (size_t bi = 0; bi < nb; bi++) {
      maybe_poll(j, &blocks);
      size_t i = ss + (right ? nb - 1 - bi : bi) * B, k = min_size(B, se - i);
      /* the next segment's block folded into its lanes in the loop of the
         scan steps (a monoid's, over whole blocks), or on its own */
      bool fold = feed && started && a->m && !a->gmap && sum.next > sum.lo && sum.next + k <= sum.hi;
      if (fold) {
        size_t i3 = sum.next + PF_AHEAD * B;
        if (i3 < sum.hi) prefetch_read(a->x + i3, min_size(B, sum.hi - i3));
      } else if (feed) {
        seg_feed(j, s, t, &sum);
      }
      if (bi + PF_AHEAD < nb) {
        size_t i2 = ss + (right ? nb - 1 - bi - PF_AHEAD : bi + PF_AHEAD) * B;
        prefetch_block(j, s, i2, min_size(B, se - i2), !chunked);
      }
      const double *e = elems(j, s, t, i, k, ebuf, false);
      /* the results straight into out where the whole block lands there */
      size_t q0, skip, cnt = place(j, s, right ? i : i + 1, k, &q0, &skip);
      double *dst = cnt == k ? j->o + q0 : buf;
      if (fold) {
        acc = (right ? a->m->rscanf : a->m->lscanf)(acc, e, k, dst, sum.lanes, a->x + sum.next);
        sum.next += k;
      } else if (started) {
        acc = steps(s, t, acc, e, k, dst, false, 0);
      } else if (!right) { /* the chunk's local scan starts from its first element */
        dst[0] = acc = e[0];
        acc = steps(s, t, acc, e + 1, k - 1, dst + 1, false, 0);
      } else { /* ... or its last */
        dst[k - 1] = acc = e[k - 1];
        acc = steps(s, t, acc, e, k - 1, dst, false, 0);
      }
      started = true;
      if (dst == buf && cnt) memcpy(j->o + q0, buf + skip, sizeof(double) * cnt);
    }
    if (feed) s->segtot[s->seg0[c] + (right ? nseg - 2 - g : g + 1)] = seg_end(j, s, t, &sum);
  }
#undef SEG_LO
}

static void pass0_chunk(void *ctx, int t, int c) {
  Job *j = ctx;
  chunk_totals(j, &j->s[1], t, c);
}

/* The chunk of side s that holds element e, and the end (exclusive) of
   that chunk's elements. */
static int elem_chunk(const Side *s, size_t e, size_t *end) {
  size_t n = s->a->n;
  int K = s->K, c = 0;
  if (!s->a->right) {
    size_t i = e == 0 ? 0 : e - 1;
    while (c + 1 < K && s->lo[c + 1] <= i) c++;
    *end = s->lo[c + 1] + 1;
  } else {
    size_t i = e == n ? n - 1 : e;
    while (c + 1 < K && s->lo[c + 1] <= i) c++;
    *end = c == K - 1 ? n + 1 : s->lo[c + 1];
  }
  return c;
}

/* S1's elements at out[q0..q1): combined in place with their chunks' carries. */
static void fill_s1(Job *j, int t, size_t q0, size_t q1) {
  Side *s = &j->s[0];
  if (s->K == 1) return;
  for (size_t q = q0; q < q1;) {
    size_t end, c = (size_t)elem_chunk(s, q + s->off, &end), qe = min_size(q1, end - s->off);
    if (!is_seq(s, (int)c)) comb_block(s, t, s->carry[c], j->o + q, qe - q);
    q = qe;
  }
}

/* out[q0..q0+k) = g(S1 there, other[0..k)) in the map2's order (k <= B). */
static void apply_g(Job *j, int t, size_t q0, const double *other, size_t k) {
  double *o = j->o + q0;
  if (!j->has_g) return;
  if (j->gm) (j->s1_first ? j->gm->lanes : j->gm->zipr)(o, other, k);
  else if (j->s1_first) cpu_kernel_block(&j->g[t], o, other, k, o);
  else cpu_kernel_block(&j->g[t], other, o, k, o);
}

/* S2's k final elements from e0 (vals), with S1's there. */
static void emit(Job *j, int t, size_t e0, const double *vals, size_t k) {
  size_t q0, skip, cnt = place(j, &j->s[1], e0, k, &q0, &skip);
  if (!cnt) return;
  fill_s1(j, t, q0, q0 + cnt);
  apply_g(j, t, q0, vals + skip, cnt);
}

/* S1's carry at out[q], or the unit where its chunk has none. */
static double s1_carry(Job *j, size_t q, size_t *end) {
  Side *s = &j->s[0];
  size_t e;
  int c = elem_chunk(s, q + s->off, &e);
  *end = e - s->off;
  return s->K == 1 || is_seq(s, c) ? s->a->m->unit : s->carry[c];
}

/* Pass 2's block of k elements at out[q0..) when S1, S2 and g are one
   monoid that commutes (∇prod): S2's steps from acc over e, combined with
   its carry c2, S1's elements with theirs, and g, in one loop per run of
   S1's chunk (a missing carry is the monoid's unit, which changes no bit;
   nor does the order of the operands). */
static double fast_block(Job *j, double acc, const double *e, size_t k, size_t q0, double c2) {
  const MonoidFns *m = j->s[1].a->m;
  bool right = j->s[1].a->right;
  size_t lo[4], hi[4];
  double c1[4];
  int nr = 0;
  for (size_t q = q0; q < q0 + k; nr++) {
    size_t end;
    c1[nr] = s1_carry(j, q, &end);
    lo[nr] = q;
    hi[nr] = q = min_size(q0 + k, end);
  }
  for (int r = 0; r < nr; r++) {
    int ri = right ? nr - 1 - r : r;
    size_t a = lo[ri] - q0, len = hi[ri] - lo[ri];
    acc = (right ? m->rzscan : m->lzscan)(acc, e + a, len, j->o + lo[ri], c1[ri], c2);
  }
  return acc;
}

static void pass2_chunk(void *ctx, int t, int c) {
  Job *j = ctx;
  Side *s = &j->s[1];
  const CpuScanArg *a = s->a;
  size_t lo = s->lo[c], hi = s->lo[c + 1], blocks = 0;
  bool right = a->right, seq = is_seq(s, c), started = seq;
  double acc = a->v, cy = seq ? 0 : s->carry[c], buf[B], ebuf[B];
  if (seq) emit(j, t, right ? a->n : 0, &acc, 1);
  size_t nb = (hi - lo + B - 1) / B;
  for (size_t bi = 0; bi < nb; bi++) {
    maybe_poll(j, &blocks);
    size_t i = lo + (right ? nb - 1 - bi : bi) * B, k = min_size(B, hi - i);
    if (bi + PF_AHEAD < nb) {
      size_t i2 = lo + (right ? nb - 1 - bi - PF_AHEAD : bi + PF_AHEAD) * B;
      prefetch_block(j, s, i2, min_size(B, hi - i2), true);
    }
    const double *e = elems(j, s, t, i, k, ebuf, false);
    size_t q0, skip;
    if (j->one_monoid && place(j, s, right ? i : i + 1, k, &q0, &skip) == k) {
      double c2 = seq ? a->m->unit : cy;
      size_t f = 0, len = k; /* the elements fast_block steps over */
      if (!started) {        /* a local scan starts from its chunk's first (last) element */
        size_t at = right ? k - 1 : 0, end;
        double *o = j->o + q0 + at;
        acc = e[at];
        *o = a->m->op(a->m->op(*o, s1_carry(j, q0 + at, &end)), a->m->op(c2, acc));
        f = !right;
        len = k - 1;
        started = true;
      }
      acc = fast_block(j, acc, e + f, len, q0 + f, c2);
      continue;
    }
    if (started) {
      acc = steps(s, t, acc, e, k, buf, !seq, cy);
    } else if (!right) {
      acc = e[0];
      buf[0] = comb1(s, t, cy, acc);
      acc = steps(s, t, acc, e + 1, k - 1, buf + 1, true, cy);
    } else {
      acc = e[k - 1];
      buf[k - 1] = comb1(s, t, cy, acc);
      acc = steps(s, t, acc, e, k - 1, buf, true, cy);
    }
    started = true;
    emit(j, t, right ? i : i + 1, buf, k);
  }
}

/* Pass 2 over the output's chunks: S2 a plain array, or nothing. */
static void pass2_out_chunk(void *ctx, int t, int c) {
  Job *j = ctx;
  size_t lo, hi, blocks = 0;
  cpu_chunk_bounds(j->m, B, j->nchunks, c, &lo, &hi);
  for (size_t q = lo; q < hi; q += B) {
    maybe_poll(j, &blocks);
    size_t k = min_size(B, hi - q);
    fill_s1(j, t, q, q + k);
    if (j->s[1].a) apply_g(j, t, q, j->s[1].a->x + q, k);
  }
}

/* The chunk totals from the segments' and the carries (on this thread). */
static void carries(Side *s) {
  if (!is_scan(s) || s->K == 1) return;
  int K = s->K;
  double T[CPU_CHUNKS], v = s->a->v;
  for (int c = 0; c < K; c++) {
    T[c] = s->segtot[s->seg0[c]];
    for (size_t g = s->seg0[c] + 1; g < s->seg0[c + 1]; g++) T[c] = op2(s, 0, T[c], s->segtot[g]);
  }
  if (!s->a->right) {
    s->carry[1] = op2(s, 0, v, T[0]);
    for (int c = 1; c + 1 < K; c++) s->carry[c + 1] = op2(s, 0, s->carry[c], T[c]);
  } else {
    s->carry[K - 2] = op2(s, 0, T[K - 1], v);
    for (int c = K - 2; c > 0; c--) s->carry[c - 1] = op2(s, 0, T[c], s->carry[c]);
  }
}

static void side_init(int nthreads, Side *s, const CpuScanArg *a) {
  s->a = a;
  s->K = 1;
  s->segtot = NULL;
  s->own_totals = false;
  if (!a || !a->scan) return;
  size_t n = a->n;
  s->K = (a->m || a->monoid) && n >= CPU_PAR_MIN ? CPU_CHUNKS : 1;
  for (int c = 0; c < s->K; c++) {
    size_t lo, hi;
    cpu_chunk_bounds(n, B, s->K, c, &lo, &hi);
    s->lo[c] = lo;
  }
  s->lo[s->K] = n;
  s->off = a->shift == CPU_SHIFT1L;
  /* a run for every thread any pass may use */
  if (!a->m) cpu_kernel_runs(nthreads, s->op, a->op, CPU_CHUNKS);
  if (a->gmap) cpu_kernel_runs(nthreads, s->gm, a->gmap, CPU_CHUNKS);
  if (s->K > 1) {
    s->seg0[0] = 0;
    for (int c = 0; c < s->K; c++) s->seg0[c + 1] = s->seg0[c] + (s->lo[c + 1] - s->lo[c] + SEG - 1) / SEG;
    s->segtot = NEW_ARRAY(double, s->seg0[s->K]);
    s->own_totals = true;
  }
}

static void run_job(Job *j) {
  Side *s1 = &j->s[0], *s2 = &j->s[1];
  if (is_scan(s2) && s2->K > 1) {
    const CpuScanArg *a1 = s1->a, *a2 = s2->a;
    if (s1->K > 1 && a1->m && a1->m == a2->m && a1->x == a2->x && a1->n == a2->n && !a1->gmap && !a2->gmap) {
      s2->segtot = s1->segtot; /* the same chunks, elements and operator */
      s2->own_totals = false;
    } else {
      j->nchunks = s2->K;
      cpu_parallel_chunks(j->nthreads, s2->K, pass0_chunk, j, j->span);
    }
  }
  j->nchunks = s1->K;
  cpu_parallel_chunks(j->nthreads, s1->K, pass1_chunk, j, j->span);
  carries(s1);
  carries(s2);
  if (is_scan(s2)) {
    j->nchunks = s2->K;
    cpu_parallel_chunks(j->nthreads, s2->K, pass2_chunk, j, j->span);
  } else if (j->has_g || s1->K > 1) {
    j->nchunks = cpu_chunks_for(j->m);
    cpu_parallel_chunks(j->nthreads, j->nchunks, pass2_out_chunk, j, j->span);
  }
}

size_t cpu_scan_arg_len(const CpuScanArg *a, size_t m) {
  if (!a->scan) return m;
  return a->shift == CPU_NO_SHIFT ? a->n + 1 : a->n;
}

void cpu_scan_map2(int nthreads, const CpuScanArg *a, const CpuScanArg *b, const CpuKernelRun *g,
                   const MonoidFns *gm, double *out, size_t m, Span s) {
  ASSERT(a->scan || b->scan);
  ASSERT(cpu_scan_arg_len(a, m) == m && cpu_scan_arg_len(b, m) == m && !a->gmap && !b->gmap);
  /* on the stack: a job on the heap that a stale pointer kept alive would
     keep the arrays it points to */
  Job job;
  memset(&job, 0, sizeof job);
  Job *j = &job;
  j->nthreads = nthreads;
  /* S1: a scanr where there is one (its pass runs right to left and only
     writes out; the pass that reads and writes out then runs left to
     right, the direction the hardware prefetches best) */
  bool first = a->scan && (!b->scan || a->right || !b->right);
  side_init(nthreads, &j->s[0], first ? a : b);
  side_init(nthreads, &j->s[1], first ? b : a);
  j->s1_first = first;
  j->has_g = true;
  j->gm = gm;
  const MonoidFns *m1 = j->s[0].a->m;
  j->one_monoid = b->scan && a->scan && m1 && m1->commutes && a->m == b->m && gm == m1;
  if (!gm) cpu_kernel_runs(nthreads, j->g, g, CPU_CHUNKS);
  j->o = out;
  j->m = m;
  j->inplace_gmap = false;
  j->span = s;
  run_job(j);
}

void cpu_scan(int nthreads, const CpuScanArg *sa, double *out, Span sp) {
  ASSERT(sa->scan && sa->shift == CPU_NO_SHIFT);
  /* on the stack: a job on the heap that a stale pointer kept alive would
     keep the arrays it points to */
  Job job;
  memset(&job, 0, sizeof job);
  Job *j = &job;
  j->nthreads = nthreads;
  side_init(nthreads, &j->s[0], sa);
  side_init(nthreads, &j->s[1], NULL);
  j->s1_first = true;
  j->has_g = false;
  j->o = out;
  j->m = sa->n + 1;
  j->inplace_gmap = sa->gmap && j->s[0].K > 1;
  j->span = sp;
  run_job(j);
}

/* ---- the map2 term ---- */

typedef struct ScanTerm {
  const Term *scan; /* NULL: a plain array */
  bool right;
  CpuShift shift;
} ScanTerm;

static bool scan_term(const Term *t, ScanTerm *s) {
  s->scan = NULL;
  s->shift = CPU_NO_SHIFT;
  if (t->kind == T_PRIM && (t->prim == PRIM_SHIFT1L || t->prim == PRIM_SHIFT1R)) {
    s->shift = t->prim == PRIM_SHIFT1L ? CPU_SHIFT1L : CPU_SHIFT1R;
    t = t->kids[0];
  }
  if (t->kind != T_PRIM || (t->prim != PRIM_SCANL && t->prim != PRIM_SCANR)) return false;
  if (!t->type || t->type->kind != TY_ARRAY || t->type->elem->kind != TY_REAL) return false;
  const Term *x = t->kids[2];
  if (x->kind == T_PRIM && (x->prim == PRIM_MAP || x->prim == PRIM_MAP2)) return false; /* fused into the scan */
  s->scan = t;
  s->right = t->prim == PRIM_SCANR;
  return true;
}

/* Binds the scan's operator into *a and *op; false when it has neither a
   monoid loop nor a kernel. */
static bool bind_op(const Exec *ex, const ScanTerm *s, Value *frame, CpuScanArg *a, CpuKernelRun *op) {
  memset(a, 0, sizeof *a);
  if (!s->scan) return true;
  const Term *lam = s->scan->kids[0];
  bool sw;
  a->scan = true;
  a->right = s->right;
  a->shift = s->shift;
  a->m = cpu_monoid_loops(ex, lam);
  a->monoid = cpu_monoid_of(lam, &sw) != CPU_M_NONE;
  if (a->m) return true;
  a->op = op;
  return cpu_lam_kernel(ex, lam, frame, op);
}

/* Evaluates the argument (in the ordinary order: v, then the array); its
   length as the map2 reads it. */
static size_t eval_arg(const Exec *ex, const Term *kid, const ScanTerm *s, Value *frame, CpuScanArg *a) {
  if (!s->scan) {
    Array *p = cpu_eval_array(ex, kid, frame);
    ASSERT(!p->boxed);
    a->x = p->r;
    return p->len;
  }
  Value v = ex->eval(ex, s->scan->kids[1], frame);
  Array *x = cpu_eval_array(ex, s->scan->kids[2], frame);
  ASSERT(v.kind == V_REAL && !x->boxed);
  a->v = v.u.r;
  a->x = x->r;
  a->n = x->len;
  return cpu_scan_arg_len(a, 0);
}

bool cpu_scan_map_candidate(const Term *t) {
  if (t->kind != T_PRIM || t->prim != PRIM_MAP2) return false;
  ScanTerm s[2];
  bool any = false;
  for (int i = 0; i < 2; i++) any |= scan_term(t->kids[1 + i], &s[i]);
  if (!any) return false;
  const CpuKernel *gk = cpu_kernel_for(t->kids[0]);
  return gk && !cpu_kernel_returns_bool(gk) && t->type->elem && t->type->elem->kind == TY_REAL;
}

bool cpu_map2_of_scan(const Exec *ex, const Term *t, Value *frame, Value *result) {
  if (!t->note || !t->note->scan_map || ex->meter || !cpu_kernels_enabled(ex)) return false;
  ScanTerm s[2];
  for (int i = 0; i < 2; i++) scan_term(t->kids[1 + i], &s[i]);
  /* the kernels bound first (their hoisted parts cannot raise or act, so
     binding before the arrays are evaluated is not observable); when one
     does not bind, the ordinary evaluation runs instead */
  CpuScanArg a[2];
  CpuKernelRun op[2], g;
  for (int i = 0; i < 2; i++)
    if (!bind_op(ex, &s[i], frame, &a[i], &op[i])) return false;
  if (!cpu_lam_kernel(ex, t->kids[0], frame, &g)) return false;
  /* the arguments in the ordinary order: kids[1] (a scan: v, then X), kids[2] */
  size_t la = eval_arg(ex, t->kids[1], &s[0], frame, &a[0]);
  size_t lb = eval_arg(ex, t->kids[2], &s[1], frame, &a[1]);
  cpu_check_map2_lengths(t, la, lb);
  /* from here on nothing can raise but an interrupt */
  Array *out = val_new_real_array(la, t->span);
  cpu_scan_map2(cpu_exec_threads(ex), &a[0], &a[1], &g, cpu_monoid_loops(ex, t->kids[0]), out->r, la, t->span);
  *result = val_array(out);
  return true;
}
