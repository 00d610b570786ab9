/* gen.c: the random program generator for the gradient tests (see gen.h).
   Programs are produced as text, every compound expression in parentheses,
   so that the text is an atom wherever it is pasted. */
#include "gen.h"

#include "../../frontend/ir/common.h"

GenRng gen_rng(uint64_t seed) {
  GenRng r = {seed * 0x2545F4914F6CDD1DULL + 0x632BE59BD9B4E019ULL};
  return r;
}

uint64_t gen_next(GenRng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double gen_unit(GenRng *r) { return (double)(gen_next(r) >> 11) * 0x1p-53; }

int gen_below(GenRng *r, int n) { return (int)(gen_next(r) % (uint64_t)n); }

GenOptions gen_default_options(void) {
  GenOptions o = {.size = 40, .depth = 5, .max_helpers = 2, .max_params = 3,
                  .prelude = true, .nested = true};
  return o;
}

GenOptions gen_v2_options(void) {
  GenOptions o = gen_default_options();
  o.v2 = true;
  return o;
}

/* ---- generator types: R, B, [R] with a length class, tuples ---- */

typedef enum { G_R, G_B, G_ARR, G_TUP } GKind;

/* Length classes: CLS_N is the common length of the def's array
   parameters; k >= 0 is a literal length. Arrays combine (map2, if) only
   within one class. */
#define CLS_N (-1)
#define CLS_ANY 99 /* for ty_has_arr: an array of any class */
/* Classes derived from N (only with GenOptions.v2): n + 1 (scanl, scanr,
   concat [x] a), max(n - 1, 0) (shift1L, shift1R) and 2n (concat a a). */
#define CLS_N1 (-2)
#define CLS_NM1 (-3)
#define CLS_2N (-4)
#define MAX_LIT 4

typedef struct GTy {
  GKind kind;
  int cls;                  /* G_ARR */
  int n;                    /* G_TUP */
  const struct GTy *el[3];  /* G_TUP */
} GTy;

static const GTy ty_r = {G_R, 0, 0, {NULL}};
static const GTy ty_b = {G_B, 0, 0, {NULL}};

static const GTy *ty_arr(int cls) {
  GTy *t = NEW(GTy);
  t->kind = G_ARR;
  t->cls = cls;
  return t;
}

static const GTy *ty_tup(int n, const GTy *a, const GTy *b, const GTy *c) {
  GTy *t = NEW(GTy);
  t->kind = G_TUP;
  t->n = n;
  t->el[0] = a;
  t->el[1] = b;
  t->el[2] = c;
  return t;
}

static bool ty_eq(const GTy *a, const GTy *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == G_ARR) return a->cls == b->cls;
  if (a->kind != G_TUP) return true;
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++)
    if (!ty_eq(a->el[i], b->el[i])) return false;
  return true;
}

/* t with its class-N arrays given class c (a helper's result at a call). */
static const GTy *ty_at(const GTy *t, int c) {
  if (t->kind == G_ARR) return t->cls == CLS_N ? ty_arr(c) : t;
  if (t->kind != G_TUP) return t;
  return ty_tup(t->n, ty_at(t->el[0], c), ty_at(t->el[1], c), t->n > 2 ? ty_at(t->el[2], c) : NULL);
}

static bool ty_has_arr(const GTy *t, int cls) {
  if (t->kind == G_ARR) return cls == CLS_ANY || t->cls == cls;
  if (t->kind != G_TUP) return false;
  for (int i = 0; i < t->n; i++)
    if (ty_has_arr(t->el[i], cls)) return true;
  return false;
}

static char *ty_text(const GTy *t) {
  switch (t->kind) {
  case G_R: return "R";
  case G_B: return "B";
  case G_ARR: return "[R]";
  case G_TUP: {
    char *s = una_sprintf("(%s", ty_text(t->el[0]));
    for (int i = 1; i < t->n; i++) s = una_sprintf("%s, %s", s, ty_text(t->el[i]));
    return una_sprintf("%s)", s);
  }
  }
  return "?";
}

/* ---- generator state ---- */

typedef struct Var {
  const char *name;
  const GTy *ty;
  int icls; /* an index variable (an R): a valid index of every array of
               this class; NO_IDX otherwise */
} Var;
#define NO_IDX 100

typedef struct Helper {
  const char *name;
  int n;
  const GTy *params[4];
  const GTy *ret;
} Helper;

#define MAX_VARS 256
#define MAX_HELPERS 6
#define MAX_ACCESS 64

typedef struct Gen {
  GenRng r;
  const GenOptions *o;
  Var vars[MAX_VARS];
  int nvars;
  Helper helpers[MAX_HELPERS];
  int nhelpers;
  int budget;
  int fresh;
  int lam; /* lambda nesting */
} Gen;

static char *gen(Gen *G, const GTy *t, int d);

static const char *fresh(Gen *G, const char *prefix) {
  return una_sprintf("%s%d", prefix, ++G->fresh);
}

static void push(Gen *G, const char *name, const GTy *t) {
  ASSERT(G->nvars < MAX_VARS);
  G->vars[G->nvars].name = name;
  G->vars[G->nvars].ty = t;
  G->vars[G->nvars].icls = NO_IDX;
  G->nvars++;
}

/* An index variable: an R in [0, length) of the arrays of class cls. */
static void push_idx(Gen *G, const char *name, int cls) {
  push(G, name, &ty_r);
  G->vars[G->nvars - 1].icls = cls;
}

static bool chance(Gen *G, double p) { return gen_unit(&G->r) < p; }

/* Collects into out the texts that access a value of type t: variables of
   type t and projections of tuple variables (v.1, v.2.1). */
static void access_in(const GTy *vt, const char *text, const GTy *t, char **out, int *n) {
  if (*n >= MAX_ACCESS) return;
  if (ty_eq(vt, t)) out[(*n)++] = (char *)text;
  if (vt->kind == G_TUP)
    for (int i = 0; i < vt->n; i++)
      access_in(vt->el[i], una_sprintf("%s.%d", text, i + 1), t, out, n);
}

static char *get_access(Gen *G, const GTy *t) {
  char *out[MAX_ACCESS];
  int n = 0;
  for (int i = 0; i < G->nvars; i++) access_in(G->vars[i].ty, G->vars[i].name, t, out, &n);
  if (n == 0) return NULL;
  /* the later bound (a let's own variable, a lambda's parameters) are
     more likely, so that fewer bindings are dead */
  int k = gen_below(&G->r, n * (n + 1) / 2), i = 0;
  while (k >= i + 1) k -= ++i;
  char *s = out[i];
  /* fst/snd spell the projections of a pair variable now and then */
  size_t len = strlen(s);
  if (len > 2 && s[len - 2] == '.' && strchr(s, '.') == s + len - 2 && chance(G, 0.2)) {
    const char *fn = s[len - 1] == '1' ? "fst" : s[len - 1] == '2' ? "snd" : NULL;
    if (fn) return una_sprintf("(%s %.*s)", fn, (int)(len - 2), s);
  }
  return s;
}

/* True when some variable holds an array of class cls. */
static bool has_cls(Gen *G, int cls) {
  for (int i = 0; i < G->nvars; i++)
    if (ty_has_arr(G->vars[i].ty, cls)) return true;
  return false;
}

/* A class for a new array: mostly N when an N array is in scope. */
static int pick_cls(Gen *G) {
  if (has_cls(G, CLS_N) && chance(G, 0.85)) {
    if (G->o->v2 && chance(G, 0.25)) {
      static const int derived[] = {CLS_N1, CLS_N1, CLS_NM1, CLS_2N};
      return derived[gen_below(&G->r, 4)];
    }
    return CLS_N;
  }
  return 1 + gen_below(&G->r, 3);
}

static char *leaf_derived(Gen *G, int cls);
static char *gather(Gen *G);
static char *gen_deriv(Gen *G, int form, int d);

static char *constant(Gen *G) {
  static const char *const k[] = {"0.5", "1", "2", "0.25", "1.5", "3", "0.1", "0.75",
                                  "(-1)", "(-0.5)", "(-2)", "(-1.25)"};
  if (chance(G, 0.3)) {
    double v = (gen_below(&G->r, 601) - 300) / 100.0;
    char buf[32];
    una_format_real(buf, sizeof buf, v);
    return v < 0 ? una_sprintf("(%s)", buf) : una_strdup(buf);
  }
  return (char *)k[gen_below(&G->r, (int)(sizeof k / sizeof k[0]))];
}

/* A constant added to one side of a comparison, max or min: two sides
   that are equal as functions (x and reduce (x, y. x + y + c) (-c) [x],
   or the same variable twice) then never tie, and a tie is where finite
   differences and the gradient's branch disagree. */
static char *offset(Gen *G) {
  double k = (0.05 + 0.45 * gen_unit(&G->r)) * (chance(G, 0.5) ? 1 : -1);
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f", k);
  return k < 0 ? una_sprintf("(%s)", buf) : una_strdup(buf);
}

static const GTy *random_tuple_type(Gen *G) {
  int c = pick_cls(G);
  switch (gen_below(&G->r, 5)) {
  case 0: return ty_tup(2, &ty_r, ty_arr(c), NULL);
  case 1: return ty_tup(2, ty_arr(c), &ty_r, NULL);
  case 2: return ty_tup(3, &ty_r, &ty_r, &ty_r);
  case 3: return ty_tup(2, ty_tup(2, &ty_r, &ty_r, NULL), &ty_r, NULL);
  default: return ty_tup(2, &ty_r, &ty_r, NULL);
  }
}

/* A type for a let-bound value. */
static const GTy *random_let_type(Gen *G) {
  int k = gen_below(&G->r, 20);
  if (k < 11) return &ty_r;
  if (k < 16) return ty_arr(pick_cls(G));
  if (k < 19) return random_tuple_type(G);
  return &ty_b;
}

static char *leaf(Gen *G, const GTy *t) {
  char *a = NULL;
  switch (t->kind) {
  case G_R:
    if (G->o->v2 && chance(G, 0.3) && (a = gather(G))) return a;
    if (chance(G, 0.85) && (a = get_access(G, t))) return a;
    return constant(G);
  case G_B: {
    if (chance(G, 0.5) && (a = get_access(G, t))) return a;
    if (chance(G, 0.2)) return chance(G, 0.5) ? "true" : "false";
    a = leaf(G, &ty_r);
    const char *op = chance(G, 0.5) ? "<" : ">";
    return una_sprintf("(%s %s %s)", a, op, constant(G));
  }
  case G_ARR:
    if ((t->cls == CLS_N || chance(G, 0.6)) && (a = get_access(G, t))) return a;
    if (t->cls < CLS_N) return leaf_derived(G, t->cls);
    ASSERT(t->cls >= 0);
    switch (gen_below(&G->r, 10)) {
    case 0: return una_sprintf("(iota %d)", t->cls);
    case 1: return una_sprintf("(rand %d %d)", t->cls, gen_below(&G->r, 100));
    case 2:
    case 3:
    case 4: return una_sprintf("(replicate %d %s)", t->cls, leaf(G, &ty_r));
    default: {
      char *s = "[";
      for (int i = 0; i < t->cls; i++) s = una_sprintf("%s%s%s", s, i ? ", " : "", leaf(G, &ty_r));
      return una_sprintf("%s]", s);
    }
    }
  case G_TUP: {
    if (chance(G, 0.5) && (a = get_access(G, t))) return a;
    char *s = una_sprintf("(%s", leaf(G, t->el[0]));
    for (int i = 1; i < t->n; i++) s = una_sprintf("%s, %s", s, leaf(G, t->el[i]));
    return una_sprintf("%s)", s);
  }
  }
  return NULL;
}

/* ---- forms shared by every type ---- */

static char *gen_if(Gen *G, const GTy *t, int d) {
  char *c = gen(G, &ty_b, d - 1);
  char *a = gen(G, t, d - 1);
  return una_sprintf("(if %s then %s else %s)", c, a, gen(G, t, d - 1));
}

static char *gen_let(Gen *G, const GTy *t, int d) {
  const GTy *xt = random_let_type(G);
  char *rhs = gen(G, xt, d - 1);
  const char *x = fresh(G, "v");
  int mark = G->nvars;
  push(G, x, xt);
  char *body = gen(G, t, d - 1);
  G->nvars = mark;
  return una_sprintf("(let %s = %s in %s)", x, rhs, body);
}

static char *gen_lettup(Gen *G, const GTy *t, int d) {
  const GTy *xt = random_tuple_type(G);
  char *rhs = gen(G, xt, d - 1);
  int mark = G->nvars;
  char *pat = "(";
  for (int i = 0; i < xt->n; i++) {
    const char *x = fresh(G, "v");
    push(G, x, xt->el[i]);
    pat = una_sprintf("%s%s%s", pat, i ? ", " : "", x);
  }
  char *body = gen(G, t, d - 1);
  G->nvars = mark;
  return una_sprintf("(let %s) = %s in %s)", pat, rhs, body);
}

/* A call of a helper whose result (or a component of it) has type t, or
   NULL when no helper fits. */
static char *gen_call(Gen *G, const GTy *t, int d) {
  struct {
    int h, cls, proj;
  } cand[64];
  int n = 0;
  for (int h = 0; h < G->nhelpers; h++) {
    const Helper *hp = &G->helpers[h];
    bool arrays = false;
    for (int i = 0; i < hp->n; i++) arrays |= ty_has_arr(hp->params[i], CLS_ANY);
    for (int c = CLS_N; c <= (arrays ? 3 : CLS_N); c++) {
      if (c == CLS_N && arrays && !has_cls(G, CLS_N)) continue;
      const GTy *rt = ty_at(hp->ret, c);
      if (ty_eq(rt, t) && n < 64) cand[n].h = h, cand[n].cls = c, cand[n++].proj = 0;
      if (rt->kind == G_TUP)
        for (int i = 0; i < rt->n; i++)
          if (ty_eq(rt->el[i], t) && n < 64) cand[n].h = h, cand[n].cls = c, cand[n++].proj = i + 1;
    }
  }
  if (n == 0) return NULL;
  int k = gen_below(&G->r, n);
  const Helper *hp = &G->helpers[cand[k].h];
  char *s = una_sprintf("(%s", hp->name);
  for (int i = 0; i < hp->n; i++) s = una_sprintf("%s %s", s, gen(G, ty_at(hp->params[i], cand[k].cls), d - 1));
  s = una_sprintf("%s)", s);
  return cand[k].proj ? una_sprintf("(%s.%d)", s, cand[k].proj) : s;
}

/* ---- lambdas ---- */

/* (x. body) over R, or (x, y. body) when two. */
static char *gen_lam(Gen *G, int nparams, const char *p1, const char *p2, int d) {
  const char *x = fresh(G, p1), *y = nparams == 2 ? fresh(G, p2) : NULL;
  int mark = G->nvars;
  push(G, x, &ty_r);
  if (y) push(G, y, &ty_r);
  G->lam++;
  char *body = gen(G, &ty_r, d - 1);
  G->lam--;
  G->nvars = mark;
  return y ? una_sprintf("(%s, %s. %s)", x, y, body) : una_sprintf("(%s. %s)", x, body);
}

/* An R -> R helper for `map h A`, or NULL. */
static const char *unary_helper(Gen *G) {
  for (int h = 0; h < G->nhelpers; h++)
    if (G->helpers[h].n == 1 && G->helpers[h].params[0]->kind == G_R && G->helpers[h].ret->kind == G_R)
      return G->helpers[h].name;
  return NULL;
}

/* ---- v2: the language-2 constructs (GenOptions.v2) ---- */

/* e kept bounded, so that a loop or a scan cannot overflow; state is the
   loop's or scan's own R, or NULL */
static char *bound(Gen *G, const char *state, char *e) {
  switch (gen_below(&G->r, state ? 4 : 2)) {
  case 0: return una_sprintf("(tanh %s)", e);
  case 1: return una_sprintf("(sin %s)", e);
  case 2: return una_sprintf("(0.5 * %s + 0.5 * tanh %s)", state, e);
  default: return una_sprintf("(%s + 0.25 * sin %s)", state, e);
  }
}

/* The same for an array e of the class of the array state. */
static char *arr_bound(Gen *G, const char *state, char *e) {
  if (chance(G, 0.5)) return una_sprintf("(map tanh %s)", e);
  return una_sprintf("(map2 (u, w. 0.5 * u + 0.5 * sin w) %s %s)", state, e);
}

/* An array of class cls under a name: a variable in scope, or a new one
   bound by *pre ("let aK = E in "), pushed (the caller pops). */
static const char *named_arr(Gen *G, int cls, int d, char **pre) {
  char *a;
  *pre = "";
  if (chance(G, 0.5) && (a = get_access(G, ty_arr(cls)))) return a;
  char *e = gen(G, ty_arr(cls), d - 1);
  const char *x = fresh(G, "a");
  *pre = una_sprintf("let %s = %s in ", x, e);
  push(G, x, ty_arr(cls));
  return x;
}

/* A leaf of a class derived from N (an N array is in scope). */
static char *leaf_derived(Gen *G, int cls) {
  char *a = leaf(G, ty_arr(CLS_N));
  switch (cls) {
  case CLS_N1:
    if (chance(G, 0.5)) return una_sprintf("(concat [%s] %s)", leaf(G, &ty_r), a);
    return una_sprintf("(scanl (+) 0 %s)", a);
  case CLS_NM1: return una_sprintf("(%s %s)", chance(G, 0.5) ? "shift1L" : "shift1R", a);
  default: return una_sprintf("(concat %s %s)", a, leaf(G, ty_arr(CLS_N)));
  }
}

/* An element (or a slice's sum) of an array in scope at an index
   variable in scope that is valid for it, or NULL when there is none. */
static char *gather(Gen *G) {
  int idx[MAX_VARS], n = 0;
  for (int i = 0; i < G->nvars; i++)
    if (G->vars[i].icls != NO_IDX) idx[n++] = i;
  if (n == 0) return NULL;
  const Var *iv = &G->vars[idx[chance(G, 0.5) ? n - 1 : gen_below(&G->r, n)]];
  int c = iv->icls;
  char *out[MAX_ACCESS];
  int na = 0;
  for (int j = 0; j < G->nvars; j++) access_in(G->vars[j].ty, G->vars[j].name, ty_arr(c), out, &na);
  int nsame = na;
  /* an index of an N array is one of an N1 array too, and so is i + 1 */
  if (c == CLS_N)
    for (int j = 0; j < G->nvars; j++) access_in(G->vars[j].ty, G->vars[j].name, ty_arr(CLS_N1), out, &na);
  if (na == 0) return NULL;
  int k = gen_below(&G->r, na);
  const char *a = out[k], *i = iv->name;
  if (k < nsame) {
    switch (gen_below(&G->r, 9)) {
    case 0: return una_sprintf("(%s[length %s - 1 - %s])", a, a, i);
    case 1: return una_sprintf("(%s[floor (%s / 2)])", a, i);
    case 2: return una_sprintf("(reduce (+) 0 %s[:%s])", a, i);
    case 3: return una_sprintf("(reduce (+) 0 %s[%s:])", a, i);
    case 4: return una_sprintf("(reduce (*) 1 %s[floor (%s / 2):%s + 1])", a, i, i);
    default: return una_sprintf("(%s[%s])", a, i);
    }
  }
  switch (gen_below(&G->r, 3)) {
  case 0: return una_sprintf("(%s[%s + 1])", a, i);
  case 1: return una_sprintf("(%s[length %s - 1 - %s])", a, a, i);
  default: return una_sprintf("(%s[%s])", a, i);
  }
}

/* A loop count: the length of an array in scope (*icls its class), or a
   literal 0..4 (*icls that literal class). */
static char *loop_count(Gen *G, int *icls) {
  char *a;
  if (chance(G, 0.7)) {
    int c = pick_cls(G);
    if ((a = get_access(G, ty_arr(c)))) {
      *icls = c;
      return una_sprintf("length %s", a);
    }
  }
  int k = gen_below(&G->r, 5);
  *icls = k;
  return una_sprintf("%d", k);
}

/* (acc, x. body) or (x, acc. body) for scanl/scanr/foldl, body bounded. */
static char *scan_lam(Gen *G, bool right, int d) {
  const char *acc = fresh(G, "acc"), *x = fresh(G, "e");
  if (chance(G, 0.25)) {
    /* Horner's rule in a free variable */
    char *k = leaf(G, &ty_r);
    return right ? una_sprintf("(%s, %s. %s * sin %s + %s)", x, acc, acc, k, x)
                 : una_sprintf("(%s, %s. %s * sin %s + %s)", acc, x, acc, k, x);
  }
  int mark = G->nvars;
  push(G, acc, &ty_r);
  push(G, x, &ty_r);
  G->lam++;
  char *body = bound(G, acc, gen(G, &ty_r, d - 1));
  G->lam--;
  G->nvars = mark;
  return right ? una_sprintf("(%s, %s. %s)", x, acc, body) : una_sprintf("(%s, %s. %s)", acc, x, body);
}

/* A scan whose result has class cls (N1, or a literal >= 1). */
static char *gen_scan(Gen *G, int cls, int d) {
  int src = cls == CLS_N1 ? CLS_N : cls - 1;
  char *a = gen(G, ty_arr(src), d - 1);
  char *init = gen(G, &ty_r, d - 1);
  switch (gen_below(&G->r, 6)) {
  case 0: return una_sprintf("(scanl (+) %s %s)", init, a);
  case 1: return una_sprintf("(%s (*) %s %s)", chance(G, 0.5) ? "scanl" : "scanr", init, a);
  case 2: return una_sprintf("(scanr (+) %s %s)", init, a);
  case 3: return una_sprintf("(scanr %s %s %s)", scan_lam(G, true, d), init, a);
  case 4: {
    /* a tuple accumulator, its elements taken apart by a map */
    const char *s = fresh(G, "s"), *t = fresh(G, "t"), *x = fresh(G, "e");
    const char *qa = fresh(G, "q"), *qb = fresh(G, "q");
    char *e1 = gen(G, &ty_r, d - 1);
    int mark = G->nvars;
    push(G, s, &ty_r);
    push(G, t, &ty_r);
    push(G, x, &ty_r);
    G->lam++;
    char *b0, *b1;
    if (chance(G, 0.3)) {
      b0 = una_sprintf("%s + %s", s, x);
      b1 = una_sprintf("%s * %s", t, x);
    } else {
      b0 = bound(G, s, gen(G, &ty_r, d - 1));
      b1 = bound(G, t, gen(G, &ty_r, d - 1));
    }
    G->nvars = mark;
    push(G, qa, &ty_r);
    push(G, qb, &ty_r);
    char *body = gen(G, &ty_r, d - 1);
    G->lam--;
    G->nvars = mark;
    return una_sprintf("(map ((%s, %s). %s) (scanl ((%s, %s), %s. (%s, %s)) (%s, %s) %s))", qa, qb, body, s, t,
                       x, b0, b1, init, e1, a);
  }
  default: return una_sprintf("(scanl %s %s %s)", scan_lam(G, false, d), init, a);
  }
}

static char *gen_real_v2(Gen *G, int form, int d) {
  bool nb = has_cls(G, CLS_N);
  switch (form) {
  case 0: { /* an index */
    int opt = nb ? gen_below(&G->r, 4) : 3;
    if (opt == 0) {
      char *e = gen(G, ty_arr(CLS_N1), d - 1);
      const char *s = fresh(G, "s");
      switch (gen_below(&G->r, 3)) {
      case 0: return una_sprintf("(let %s = %s in %s[0])", s, e, s);
      case 1: return una_sprintf("(let %s = %s in %s[length %s - 1])", s, e, s, s);
      default: return una_sprintf("(let %s = %s in %s[floor (length %s / 2)])", s, e, s, s);
      }
    }
    if (opt <= 2) {
      /* an N array, guarded by its length */
      char *e = gen(G, ty_arr(CLS_N), d - 1);
      const char *a = fresh(G, "a");
      int mark = G->nvars;
      char *els = gen(G, &ty_r, d - 1);
      push(G, a, ty_arr(CLS_N));
      char *other = gen(G, &ty_r, d - 1);
      G->nvars = mark;
      if (opt == 1)
        return una_sprintf("(let %s = %s in if length %s > 0 then %s[length %s - 1] * %s else %s)", a, e, a, a, a,
                           other, els);
      return una_sprintf("(let %s = %s in if length %s > 1 then %s[1] - %s[0] * %s else %s)", a, e, a, a, a, other,
                         els);
    }
    int k = 1 + gen_below(&G->r, 3);
    return una_sprintf("(%s[%d])", gen(G, ty_arr(k), d - 1), gen_below(&G->r, k));
  }
  case 1: { /* a slice */
    if (nb && chance(G, 0.5)) {
      char *e = gen(G, ty_arr(CLS_N), d - 1);
      const char *a = fresh(G, "a");
      char *els = gen(G, &ty_r, d - 1);
      return una_sprintf("(let %s = %s in if length %s > 2 then reduce (+) 0 %s[1:3] else %s)", a, e, a, a, els);
    }
    if (nb) {
      char *e = gen(G, ty_arr(CLS_N1), d - 1);
      const char *s = fresh(G, "s");
      return chance(G, 0.5) ? una_sprintf("(let %s = %s in reduce (*) 1 %s[1:])", s, e, s)
                            : una_sprintf("(let %s = %s in reduce (+) 0 %s[:length %s - 1])", s, e, s, s);
    }
    int k = 2 + gen_below(&G->r, 2);
    return una_sprintf("(reduce (+) 0 %s[1:%d])", gen(G, ty_arr(k), d - 1), k);
  }
  case 2: { /* a for loop, R state */
    char *e0 = gen(G, &ty_r, d - 1);
    int ic;
    char *cnt = loop_count(G, &ic);
    const char *y = fresh(G, "y"), *i = fresh(G, "i");
    int mark = G->nvars;
    push(G, y, &ty_r);
    push_idx(G, i, ic);
    char *body = bound(G, y, gen(G, &ty_r, d - 1));
    G->nvars = mark;
    return una_sprintf("(loop %s = %s for %s < %s do %s)", y, e0, i, cnt, body);
  }
  case 3: { /* a for loop, tuple state */
    bool arr = chance(G, 0.4);
    const GTy *zt = arr ? ty_arr(pick_cls(G)) : &ty_r;
    char *e0 = gen(G, &ty_r, d - 1), *e1 = gen(G, zt, d - 1);
    int ic;
    char *cnt = loop_count(G, &ic);
    const char *y = fresh(G, "y"), *z = fresh(G, "z"), *i = fresh(G, "i");
    int mark = G->nvars;
    push(G, y, &ty_r);
    push(G, z, zt);
    push_idx(G, i, ic);
    char *b0 = bound(G, y, gen(G, &ty_r, d - 1));
    char *b1 = arr ? arr_bound(G, z, gen(G, zt, d - 1)) : bound(G, z, gen(G, &ty_r, d - 1));
    G->nvars = mark;
    char *lp = una_sprintf("(loop (%s, %s) = (%s, %s) for %s < %s do (%s, %s))", y, z, e0, e1, i, cnt, b0, b1);
    if (chance(G, 0.4)) return una_sprintf("(%s.%d)", lp, arr || chance(G, 0.5) ? 1 : 2);
    const char *u = fresh(G, "v"), *w = fresh(G, "v");
    push(G, u, &ty_r);
    push(G, w, zt);
    char *body = gen(G, &ty_r, d - 1);
    G->nvars = mark;
    return una_sprintf("(let (%s, %s) = %s in %s)", u, w, lp, body);
  }
  case 4: { /* a while loop with a counter */
    char *e0 = gen(G, &ty_r, d - 1);
    const char *y = fresh(G, "y"), *k = fresh(G, "k");
    char *a = NULL, *lim;
    int c = pick_cls(G);
    if (chance(G, 0.6) && (a = get_access(G, ty_arr(c)))) lim = una_sprintf("length %s", a);
    else lim = una_sprintf("%d", gen_below(&G->r, 5));
    char *cond = una_sprintf("%s < %s", k, lim);
    if (chance(G, 0.2)) cond = una_sprintf("%s && %s < 20", cond, y);
    int mark = G->nvars;
    push(G, y, &ty_r);
    if (a) push_idx(G, k, c); /* k < length a in the body */
    else push(G, k, &ty_r);
    char *body = bound(G, y, gen(G, &ty_r, d - 1));
    G->nvars = mark;
    return una_sprintf("((loop (%s, %s) = (%s, 0) while %s do (%s, %s + 1)).1)", y, k, e0, cond, body, k);
  }
  case 5: { /* a scan, summed or indexed */
    int c = nb ? CLS_N1 : 1 + gen_below(&G->r, 3);
    char *s = gen_scan(G, c, d);
    const char *x = fresh(G, "s");
    switch (gen_below(&G->r, 4)) {
    case 0: return una_sprintf("(let %s = %s in %s[length %s - 1] * %s[0])", x, s, x, x, x);
    case 1: return una_sprintf("(let %s = %s in reduce (+) 0 (map2 (*) %s %s))", x, s, x, x);
    default: return una_sprintf("(reduce (+) 0 %s)", s);
    }
  }
  case 6: { /* foldl with a tuple accumulator */
    char *a = gen(G, ty_arr(pick_cls(G)), d - 1);
    if (chance(G, 0.3)) {
      /* an array in the accumulator */
      const GTy *zt = ty_arr(pick_cls(G));
      char *e0 = gen(G, &ty_r, d - 1), *e1 = gen(G, zt, d - 1);
      const char *s0 = fresh(G, "s"), *z = fresh(G, "z"), *x = fresh(G, "e");
      int mark = G->nvars;
      push(G, s0, &ty_r);
      push(G, z, zt);
      push(G, x, &ty_r);
      G->lam++;
      char *b0 = bound(G, s0, gen(G, &ty_r, d - 1));
      char *b1 = chance(G, 0.5) ? una_sprintf("(map (u. u * sin %s + %s) %s)", x, s0, z)
                                : arr_bound(G, z, gen(G, zt, d - 1));
      G->lam--;
      G->nvars = mark;
      return una_sprintf("((foldl ((%s, %s), %s. (%s, %s)) (%s, %s) %s).1)", s0, z, x, b0, b1, e0, e1, a);
    }
    char *e0 = gen(G, &ty_r, d - 1), *e1 = gen(G, &ty_r, d - 1);
    const char *s = fresh(G, "s"), *t = fresh(G, "t"), *x = fresh(G, "e");
    int mark = G->nvars;
    push(G, s, &ty_r);
    push(G, t, &ty_r);
    push(G, x, &ty_r);
    G->lam++;
    char *b0, *b1;
    if (chance(G, 0.3)) {
      b0 = una_sprintf("%s + %s", s, x);
      b1 = una_sprintf("%s * %s", t, x);
    } else {
      b0 = bound(G, s, gen(G, &ty_r, d - 1));
      b1 = bound(G, t, gen(G, &ty_r, d - 1));
    }
    G->lam--;
    G->nvars = mark;
    return una_sprintf("((foldl ((%s, %s), %s. (%s, %s)) (%s, %s) %s).%d)", s, t, x, b0, b1, e0, e1, a,
                       1 + gen_below(&G->r, 2));
  }
  case 7: { /* unzip into a let */
    int c = pick_cls(G);
    char *a = gen(G, ty_arr(c), d - 1), *src;
    if (chance(G, 0.3)) {
      src = una_sprintf("(zip %s %s)", a, gen(G, ty_arr(c), d - 1));
    } else {
      const char *x = fresh(G, "x");
      int mark = G->nvars;
      push(G, x, &ty_r);
      G->lam++;
      char *e1 = gen(G, &ty_r, d - 1), *e2 = gen(G, &ty_r, d - 1);
      G->lam--;
      G->nvars = mark;
      src = una_sprintf("(map (%s. (%s, %s)) %s)", x, e1, e2, a);
    }
    const char *u = fresh(G, "u"), *w = fresh(G, "w");
    int mark = G->nvars;
    push(G, u, ty_arr(c));
    push(G, w, ty_arr(c));
    char *body = gen(G, &ty_r, d - 1);
    G->nvars = mark;
    return una_sprintf("(let (%s, %s) = unzip %s in %s)", u, w, src, body);
  }
  default: { /* the rows of a transposed matrix, or the elements of a matrix */
    int c = pick_cls(G), k = 1 + gen_below(&G->r, 3);
    char *a = gen(G, ty_arr(c), d - 1);
    const char *x = fresh(G, "x"), *r = fresh(G, "r");
    int mark = G->nvars;
    push(G, x, &ty_r);
    G->lam++;
    char *row = "[";
    for (int j = 0; j < k; j++) row = una_sprintf("%s%s%s", row, j ? ", " : "", gen(G, &ty_r, d - 2));
    G->nvars = mark;
    if (chance(G, 0.5)) { /* or its elements m[i][j], at a column in range */
      const char *m = fresh(G, "m"), *i = fresh(G, "i");
      char *col = chance(G, 0.5) ? una_sprintf("%d", gen_below(&G->r, k))
                                 : una_sprintf("(%s - %d * floor (%s / %d))", i, k, i, k);
      push_idx(G, i, c);
      char *body = gen(G, &ty_r, d - 1);
      G->lam--;
      G->nvars = mark;
      return una_sprintf("(let %s = map (%s. %s]) %s in reduce (+) 0 (map (%s. %s[%s][%s] * %s) (iota (length %s))))",
                         m, x, row, a, i, m, i, col, body, m);
    }
    push(G, r, ty_arr(c));
    char *body = gen(G, &ty_r, d - 1);
    G->lam--;
    G->nvars = mark;
    return una_sprintf("(reduce (+) 0 (map (%s. %s) (transpose (map (%s. %s]) %s))))", r, body, x, row, a);
  }
  }
}

static char *gen_arr_v2(Gen *G, int cls, int form, int d) {
  const GTy *t = ty_arr(cls);
  int mark = G->nvars;
  switch (form) {
  case 0: { /* a map over the indices of an array, gathering */
    char *pre;
    const char *a = named_arr(G, cls, d, &pre);
    const char *i = fresh(G, "i");
    char *b = chance(G, 0.3) ? gen(G, t, d - 1) : NULL;
    const char *x = b ? fresh(G, "x") : NULL;
    if (x) push(G, x, &ty_r);
    push_idx(G, i, cls);
    G->lam++;
    char *g = gather(G);
    char *e = gen(G, &ty_r, d - 1);
    G->lam--;
    G->nvars = mark;
    static const char *const ops[] = {"*", "+", "-"};
    char *body = g ? una_sprintf("(%s %s %s)", g, ops[gen_below(&G->r, 3)], e) : e;
    if (x) return una_sprintf("(%smap2 (%s, %s. %s) %s (iota (length %s)))", pre, x, i, body, b, a);
    return una_sprintf("(%smap (%s. %s) (iota (length %s)))", pre, i, body, a);
  }
  case 1: { /* map3 */
    char *a = gen(G, t, d - 1), *b = gen(G, t, d - 1), *c = gen(G, t, d - 1);
    const char *x = fresh(G, "x"), *y = fresh(G, "y"), *z = fresh(G, "z");
    push(G, x, &ty_r);
    push(G, y, &ty_r);
    push(G, z, &ty_r);
    G->lam++;
    char *body = gen(G, &ty_r, d - 1);
    G->lam--;
    G->nvars = mark;
    return una_sprintf("(map3 (%s, %s, %s. %s) %s %s %s)", x, y, z, body, a, b, c);
  }
  case 2: { /* a map over a zip */
    char *a = gen(G, t, d - 1), *b = gen(G, t, d - 1);
    const char *x = fresh(G, "x"), *y = fresh(G, "y");
    push(G, x, &ty_r);
    push(G, y, &ty_r);
    G->lam++;
    char *body = gen(G, &ty_r, d - 1);
    G->lam--;
    G->nvars = mark;
    return una_sprintf("(map ((%s, %s). %s) (zip %s %s))", x, y, body, a, b);
  }
  case 3: { /* a component of an unzip */
    char *a = gen(G, t, d - 1);
    int k = 1 + gen_below(&G->r, 2);
    if (chance(G, 0.3)) return una_sprintf("((unzip (zip %s %s)).%d)", a, gen(G, t, d - 1), k);
    const char *x = fresh(G, "x");
    push(G, x, &ty_r);
    G->lam++;
    char *e1 = gen(G, &ty_r, d - 1), *e2 = gen(G, &ty_r, d - 1);
    G->lam--;
    G->nvars = mark;
    return una_sprintf("((unzip (map (%s. (%s, %s)) %s)).%d)", x, e1, e2, a, k);
  }
  case 4: return gen_scan(G, cls, d);
  case 5: { /* a shift */
    int src = cls == CLS_NM1 ? CLS_N : cls == CLS_N ? CLS_N1 : cls + 1;
    return una_sprintf("(%s %s)", chance(G, 0.5) ? "shift1L" : "shift1R", gen(G, ty_arr(src), d - 1));
  }
  case 6: { /* a slice */
    const char *s = fresh(G, "s");
    if (cls == CLS_N) {
      char *e = gen(G, ty_arr(CLS_N1), d - 1);
      return chance(G, 0.5) ? una_sprintf("(let %s = %s in %s[1:])", s, e, s)
                            : una_sprintf("(let %s = %s in %s[:length %s - 1])", s, e, s, s);
    }
    char *e = gen(G, ty_arr(CLS_N), d - 1);
    return chance(G, 0.5) ? una_sprintf("(let %s = %s in if length %s > 0 then %s[1:] else %s)", s, e, s, s, s)
                          : una_sprintf("(let %s = %s in if length %s > 0 then %s[:length %s - 1] else %s)", s, e,
                                        s, s, s, s);
  }
  case 7: { /* concat */
    if (cls == CLS_2N) return una_sprintf("(concat %s %s)", gen(G, ty_arr(CLS_N), d - 1), gen(G, ty_arr(CLS_N), d - 1));
    if (cls == CLS_N1) {
      char *a = gen(G, ty_arr(CLS_N), d - 1), *x = gen(G, &ty_r, d - 1);
      return chance(G, 0.5) ? una_sprintf("(concat [%s] %s)", x, a) : una_sprintf("(concat %s [%s])", a, x);
    }
    int j = gen_below(&G->r, cls + 1);
    return una_sprintf("(concat %s %s)", gen(G, ty_arr(j), d - 1), gen(G, ty_arr(cls - j), d - 1));
  }
  case 8: { /* reduce_by_index with (+) */
    const char *op = chance(G, 0.5) ? "(+)" : "(x, y. x + y)";
    const char *i = fresh(G, "i");
    char *pre;
    const char *v = named_arr(G, cls == CLS_N ? CLS_N : pick_cls(G), d, &pre);
    char *dst = gen(G, t, d - 1), *ix;
    G->nvars = mark;
    if (cls == CLS_N) {
      switch (gen_below(&G->r, 3)) {
      case 0: ix = una_sprintf("floor (%s / 2)", i); break;
      case 1: ix = una_sprintf("length %s - 1 - %s", v, i); break;
      default: ix = una_sprintf("%s", i); break;
      }
    } else if (chance(G, 0.5)) {
      ix = una_sprintf("%s - %d * floor (%s / %d)", i, cls, i, cls);
    } else {
      ix = una_sprintf("%d - 1 - (%s - %d * floor (%s / %d))", cls, i, cls, i, cls);
    }
    return una_sprintf("(%sreduce_by_index %s %s 0 (map (%s. %s) (iota (length %s))) %s)", pre, dst, op, i, ix, v,
                       v);
  }
  case 9: { /* a for loop, array state */
    char *e0 = gen(G, t, d - 1);
    int ic;
    char *cnt = loop_count(G, &ic);
    const char *y = fresh(G, "y"), *i = fresh(G, "i");
    push(G, y, t);
    push_idx(G, i, ic);
    char *body = arr_bound(G, y, gen(G, t, d - 1));
    G->nvars = mark;
    return una_sprintf("(loop %s = %s for %s < %s do %s)", y, e0, i, cnt, body);
  }
  default: { /* transposed twice: n rows of k again */
    int k = 1 + gen_below(&G->r, 3);
    char *a = gen(G, t, d - 1);
    const char *x = fresh(G, "x"), *r = fresh(G, "r");
    push(G, x, &ty_r);
    G->lam++;
    char *row = "[";
    for (int j = 0; j < k; j++) row = una_sprintf("%s%s%s", row, j ? ", " : "", gen(G, &ty_r, d - 2));
    G->nvars = mark;
    push(G, r, ty_arr(k));
    char *body = gen(G, &ty_r, d - 1);
    G->lam--;
    G->nvars = mark;
    return una_sprintf("(map (%s. %s) (transpose (transpose (map (%s. %s]) %s))))", r, body, x, row, a);
  }
  }
}

/* ---- R ---- */

static char *gen_reduce(Gen *G, int d) {
  char *a = gen(G, ty_arr(pick_cls(G)), d - 1);
  switch (gen_below(&G->r, 12)) {
  case 0: return una_sprintf("(reduce (+) 0 %s)", a);
  case 1: return una_sprintf("(reduce (x, y. x + y) 0 %s)", a);
  case 2: return una_sprintf("(reduce (x, y. y + x) 0 %s)", a);
  case 3: return una_sprintf("(reduce (*) 1 %s)", a);
  case 4: return una_sprintf("(reduce (x, y. x * y) 1 %s)", a);
  case 5: return una_sprintf("(max (reduce (max) (-inf) %s) %s)", a, gen(G, &ty_r, d - 1));
  case 6: return una_sprintf("(min (reduce (min) inf %s) %s)", a, gen(G, &ty_r, d - 1));
  case 7: return una_sprintf("(max (reduce (x, y. max x y) (-inf) %s) %s)", a, gen(G, &ty_r, d - 1));
  case 8:
    /* log (exp x + exp y) over bounded elements: exp never underflows to
       0 or overflows (where the body's derivative would be 0/0) */
    return una_sprintf("(max (reduce (x, y. log (exp x + exp y)) (-inf) (map (t. 3 * tanh t) %s)) %s)", a,
                       gen(G, &ty_r, d - 1));
  case 9: {
    /* a free variable in the body: x + y + c has the unit -c */
    const char *c = fresh(G, "c");
    char *e = gen(G, &ty_r, d - 1);
    return una_sprintf("(let %s = %s in reduce (x, y. x + y + %s) (-%s) %s)", c, e, c, c, a);
  }
  case 10: {
    /* x * y * c has the unit 1 / c (c > 0) */
    const char *c = fresh(G, "c");
    char *e = gen(G, &ty_r, d - 1);
    return una_sprintf("(let %s = exp (tanh %s) in reduce (x, y. x * y * %s) (1 / %s) %s)", c, e, c,
                       c, a);
  }
  default: return una_sprintf("(reduce (x, y. x + y) (0 * %s) %s)", gen(G, &ty_r, d - 1), a);
  }
}

static char *gen_foldl(Gen *G, int d) {
  char *a = gen(G, ty_arr(pick_cls(G)), d - 1);
  char *init = gen(G, &ty_r, d - 1);
  char *lam;
  switch (gen_below(&G->r, 4)) {
  case 0: {
    /* Horner's rule in a free variable (of size below 1: no overflow,
       even when the variable is an outer accumulator) */
    char *x = leaf(G, &ty_r);
    const char *acc = fresh(G, "acc"), *c = fresh(G, "e");
    lam = una_sprintf("(%s, %s. %s * sin %s + %s)", acc, c, acc, x, c);
    break;
  }
  case 1: lam = "(+)"; break;
  default: {
    /* an arbitrary body kept bounded, so that products of accumulators
       cannot grow without bound over the fold (and overflow) */
    char *body = gen_lam(G, 2, "acc", "e", d);
    char *dot = strchr(body, '.');
    lam = una_sprintf("%.*s. tanh %.*s)", (int)(dot - body), body, (int)strlen(dot + 2) - 1, dot + 2);
    break;
  }
  }
  return una_sprintf("(foldl %s %s %s)", lam, init, a);
}

static char *gen_prelude_real(Gen *G, int d) {
  int c = pick_cls(G);
  char *a = gen(G, ty_arr(c), d - 1);
  switch (gen_below(&G->r, 8)) {
  case 0: return una_sprintf("(sum %s)", a);
  case 1: return una_sprintf("(prod %s)", a);
  case 2: return una_sprintf("(dot %s %s)", a, gen(G, ty_arr(c), d - 1));
  case 3: return una_sprintf("(max (maximum %s) %s)", a, gen(G, &ty_r, d - 1));
  case 4: return una_sprintf("(min (minimum %s) %s)", a, gen(G, &ty_r, d - 1));
  case 5: return una_sprintf("(max (logsumexp %s) %s)", a, gen(G, &ty_r, d - 1));
  case 6: return una_sprintf("(sumsq %s)", a);
  default: return una_sprintf("(relu %s)", gen(G, &ty_r, d - 1));
  }
}

static char *gen_real(Gen *G, int d) {
  /* array operations: fewer inside lambda bodies, none two lambdas deep */
  int arrw = G->lam == 0 ? 3 : (G->o->nested && G->lam == 1) ? 1 : 0;
  int v2w = G->o->v2 ? arrw : 0;
  int dw = G->o->deriv && G->lam <= 1 ? 1 : 0;
  int w[] = {6, 18, 4, 10, 4, 6, 4, 2, 1, 5, 8, 3, 3 * arrw, 2 * arrw, arrw / 2 + (arrw > 0),
             G->nhelpers ? 5 : 0, G->o->prelude ? 2 * arrw : 0, 2,
             /* v2: index, slice, for, tuple for, while, scans, tuple
                foldl, unzip, transpose */
             v2w * 4, v2w * 2, v2w * 3, v2w * 3, v2w * 3, v2w * 3, v2w * 2, v2w * 2, v2w,
             /* deriv: grad, jvp, vjp, value_and_grad of an R lambda; grad
                of an [R] lambda (zero weights leave the draws unchanged) */
             dw * 3, dw, dw, dw, arrw ? dw * 2 : 0};
  int total = 0, n = (int)(sizeof w / sizeof w[0]);
  for (int i = 0; i < n; i++) total += w[i];
  int k = gen_below(&G->r, total), form = 0;
  while (k >= w[form]) k -= w[form++];
  char *a, *b;
  const char *op;
  switch (form) {
  case 0: return leaf(G, &ty_r);
  case 1: {
    static const char *const ops[] = {"+", "-", "*"};
    a = gen(G, &ty_r, d - 1);
    b = gen(G, &ty_r, d - 1);
    return una_sprintf("(%s %s %s)", a, ops[gen_below(&G->r, 3)], b);
  }
  case 2:
    a = gen(G, &ty_r, d - 1);
    b = gen(G, &ty_r, d - 1);
    return chance(G, 0.5) ? una_sprintf("(%s / (1 + %s ^ 2))", a, b)
                          : una_sprintf("(%s / (2 + sin %s))", a, b);
  case 3: {
    static const char *const f1[] = {"sin", "cos", "tanh", "sigmoid", "neg", "-"};
    const char *f = f1[gen_below(&G->r, 6)];
    a = gen(G, &ty_r, d - 1);
    return f[0] == '-' ? una_sprintf("(-%s)", a) : una_sprintf("(%s %s)", f, a);
  }
  case 4:
    a = gen(G, &ty_r, d - 1);
    /* bounded arguments: exp cannot overflow, even iterated in a foldl */
    switch (gen_below(&G->r, 4)) {
    case 0: return una_sprintf("(exp (tanh %s))", a);
    case 1: return una_sprintf("(exp (sin %s))", a);
    case 2: return una_sprintf("(exp (%s / (1 + %s ^ 2)))", a, a);
    default: return una_sprintf("(exp (2 * sigmoid %s))", a);
    }
  case 5:
    a = gen(G, &ty_r, d - 1);
    switch (gen_below(&G->r, 8)) {
    case 0: return una_sprintf("(log (1 + %s ^ 2))", a);
    case 1: return una_sprintf("(log (exp (tanh %s) + 1))", a);
    case 2: return una_sprintf("(sqrt (1 + %s ^ 2))", a);
    case 3: return una_sprintf("(sqrt (exp (sin %s)))", a);
    case 4: {
      char *x = leaf(G, &ty_r);
      return una_sprintf("(%s ^ %d)", x, 2 + gen_below(&G->r, 2));
    }
    case 5: return una_sprintf("(pow (1 + %s ^ 2) (sin %s))", a, gen(G, &ty_r, d - 1));
    case 6: return una_sprintf("((1 + %s * %s) ^ 0.5)", a, a);
    default: return una_sprintf("(tan (0.5 * tanh %s))", a);
    }
  case 6:
    a = gen(G, &ty_r, d - 1);
    b = gen(G, &ty_r, d - 1);
    op = chance(G, 0.5) ? "max" : "min";
    return una_sprintf("(%s %s (%s + %s))", op, a, b, offset(G));
  case 7: return una_sprintf("(abs %s)", gen(G, &ty_r, d - 1));
  case 8:
    /* of a bounded value: a few jumps that finite differences see, not a
       fine staircase that they would take for a slope */
    return una_sprintf("(floor (3 * sin %s))", gen(G, &ty_r, d - 1));
  case 9: return gen_if(G, &ty_r, d);
  case 10: return gen_let(G, &ty_r, d);
  case 11: return gen_lettup(G, &ty_r, d);
  case 12: return gen_reduce(G, d);
  case 13: return gen_foldl(G, d);
  case 14:
    a = gen(G, &ty_r, d - 1);
    return una_sprintf("(%s * length %s)", a, gen(G, ty_arr(pick_cls(G)), 0));
  case 15:
    if ((a = gen_call(G, &ty_r, d))) return a;
    return leaf(G, &ty_r);
  case 16: return gen_prelude_real(G, d);
  case 17: {
    const GTy *tt = random_tuple_type(G);
    int i = 0;
    while (tt->el[i]->kind != G_R && i + 1 < tt->n) i++;
    if (tt->el[i]->kind != G_R) return leaf(G, &ty_r);
    return una_sprintf("(%s.%d)", gen(G, tt, d - 1), i + 1);
  }
  case 18 + 9 + 0: case 18 + 9 + 1: case 18 + 9 + 2: case 18 + 9 + 3: case 18 + 9 + 4:
    return gen_deriv(G, form - 27, d);
  default: return gen_real_v2(G, form - 18, d);
  }
}

/* ---- deriv: derivative operators (GenOptions.deriv) ---- */

/* A lambda's body over the fresh variable x of type t (the variables in
   scope stay free in it: the derivative must treat them as constants). */
static char *deriv_lam(Gen *G, const GTy *t, int d) {
  const char *x = fresh(G, "y");
  int mark = G->nvars;
  push(G, x, t);
  char *body = gen(G, &ty_r, d - 1);
  G->nvars = mark;
  return una_sprintf("(%s. %s)", x, body);
}

/* An R built with a derivative operator: form 0 grad, 1 the tangent of
   jvp, 2 vjp, 3 value_and_grad, all of an R -> R lambda; 4 the gradient
   of an [R] -> R lambda, dotted with its point. */
static char *gen_deriv(Gen *G, int form, int d) {
  if (form == 4) {
    int cls = pick_cls(G);
    char *a = gen(G, ty_arr(cls), d - 1);
    return una_sprintf("(dot (grad %s %s) %s)", deriv_lam(G, ty_arr(cls), d), a, gen(G, ty_arr(cls), 0));
  }
  char *lam = deriv_lam(G, &ty_r, d);
  char *x = gen(G, &ty_r, d - 1);
  switch (form) {
  case 0: return una_sprintf("(grad %s %s)", lam, x);
  case 1: return una_sprintf("((jvp %s %s %s).2)", lam, x, constant(G));
  case 2: return una_sprintf("(vjp %s %s %s)", lam, x, constant(G));
  default: return una_sprintf("((value_and_grad %s %s).%d)", lam, x, 1 + gen_below(&G->r, 2));
  }
}

/* ---- [R] of class cls ---- */

static char *gen_arr(Gen *G, int cls, int d) {
  const GTy *t = ty_arr(cls);
  bool v2 = G->o->v2, nb = has_cls(G, CLS_N);
  int w[] = {3, 10, 8, 3, cls >= 0 && cls <= MAX_LIT ? 3 : 0, 3, 4, 1, G->nhelpers ? 3 : 0,
             G->o->prelude ? 1 : 0,
             /* v2: gather map, map3, zip, unzip, scan, shift, slice, concat,
                reduce_by_index, loop, transpose */
             v2 ? 5 : 0, v2 ? 2 : 0, v2 ? 2 : 0, v2 ? 1 : 0,
             v2 && (cls == CLS_N1 || (cls >= 1 && cls <= MAX_LIT)) ? 5 : 0,
             v2 && (cls == CLS_NM1 || (cls == CLS_N && nb) || (cls >= 0 && cls < MAX_LIT)) ? 3 : 0,
             v2 && nb && (cls == CLS_N || cls == CLS_NM1) ? 2 : 0,
             v2 && (cls == CLS_2N || cls == CLS_N1 || (cls >= 1 && cls <= MAX_LIT)) ? 3 : 0,
             v2 && (cls == CLS_N || (cls >= 1 && cls <= MAX_LIT)) ? 2 : 0, v2 ? 1 : 0,
             v2 && cls == CLS_N ? 1 : 0};
  int total = 0, n = (int)(sizeof w / sizeof w[0]);
  for (int i = 0; i < n; i++) total += w[i];
  int k = gen_below(&G->r, total), form = 0;
  while (k >= w[form]) k -= w[form++];
  char *a;
  switch (form) {
  case 0: return leaf(G, t);
  case 1: {
    a = gen(G, t, d - 1);
    const char *h = unary_helper(G);
    int v = gen_below(&G->r, 10);
    if (v == 0) return una_sprintf("(map %s %s)", chance(G, 0.5) ? "sin" : "tanh", a);
    if (v == 1 && h) return una_sprintf("(map %s %s)", h, a);
    return una_sprintf("(map %s %s)", gen_lam(G, 1, "x", NULL, d), a);
  }
  case 2: {
    a = gen(G, t, d - 1);
    char *b = gen(G, t, d - 1);
    static const char *const secs[] = {"(+)", "(*)", "(-)", "(max)", "(min)", "max"};
    if (chance(G, 0.3)) return una_sprintf("(map2 %s %s %s)", secs[gen_below(&G->r, 6)], a, b);
    return una_sprintf("(map2 %s %s %s)", gen_lam(G, 2, "x", "y", d), a, b);
  }
  case 3:
    if (cls < 0) {
      a = leaf(G, t);
      return una_sprintf("(replicate (length %s) %s)", a, gen(G, &ty_r, d - 1));
    }
    return una_sprintf("(replicate %d %s)", cls, gen(G, &ty_r, d - 1));
  case 4: {
    char *s = "[";
    for (int i = 0; i < cls; i++) s = una_sprintf("%s%s%s", s, i ? ", " : "", gen(G, &ty_r, d - 1));
    return una_sprintf("%s]", s);
  }
  case 5: return gen_if(G, t, d);
  case 6: return gen_let(G, t, d);
  case 7: return gen_lettup(G, t, d);
  case 8:
    if ((a = gen_call(G, t, d))) return a;
    return leaf(G, t);
  case 9: return una_sprintf("(softmax %s)", gen(G, t, d - 1));
  default: return gen_arr_v2(G, cls, form - 10, d);
  }
}

/* ---- B ---- */

static char *gen_bool(Gen *G, int d) {
  char *a, *b;
  const char *op;
  switch (gen_below(&G->r, 14)) {
  case 0:
  case 1:
    if ((a = get_access(G, &ty_b))) return a;
    return leaf(G, &ty_b);
  case 2: return una_sprintf("(!%s)", gen(G, &ty_b, d - 1));
  case 3:
    a = gen(G, &ty_b, d - 1);
    op = chance(G, 0.5) ? "&&" : "||";
    return una_sprintf("(%s %s %s)", a, op, gen(G, &ty_b, d - 1));
  case 4:
    a = gen(G, &ty_b, d - 1);
    op = chance(G, 0.5) ? "==" : "!=";
    return una_sprintf("(%s %s %s)", a, op, gen(G, &ty_b, d - 1));
  case 5:
    a = gen(G, &ty_r, d - 1);
    op = chance(G, 0.5) ? "==" : "!=";
    b = gen(G, &ty_r, d - 1);
    return una_sprintf("(%s %s (%s + %s))", a, op, b, offset(G));
  default: {
    static const char *const cmp[] = {"<", "<=", ">", ">="};
    a = gen(G, &ty_r, d - 1);
    op = cmp[gen_below(&G->r, 4)];
    b = gen(G, &ty_r, d - 1);
    return una_sprintf("(%s %s (%s + %s))", a, op, b, offset(G));
  }
  }
}

/* ---- tuples ---- */

static char *gen_tuple(Gen *G, const GTy *t, int d) {
  char *a;
  switch (gen_below(&G->r, 10)) {
  case 0:
  case 1:
    if ((a = get_access(G, t))) return a;
    break;
  case 2: return gen_if(G, t, d);
  case 3: return gen_let(G, t, d);
  case 4:
    if ((a = gen_call(G, t, d))) return a;
    break;
  default: break;
  }
  char *s = una_sprintf("(%s", gen(G, t->el[0], d - 1));
  for (int i = 1; i < t->n; i++) s = una_sprintf("%s, %s", s, gen(G, t->el[i], d - 1));
  return una_sprintf("%s)", s);
}

static char *gen(Gen *G, const GTy *t, int d) {
  G->budget--;
  if (d <= 0 || G->budget <= 0) return leaf(G, t);
  switch (t->kind) {
  case G_R: return gen_real(G, d);
  case G_B: return gen_bool(G, d);
  case G_ARR: return gen_arr(G, t->cls, d);
  case G_TUP: return gen_tuple(G, t, d);
  }
  return NULL;
}

/* ---- defs ---- */

static const GTy *random_param_type(Gen *G, bool allow_bool) {
  int k = gen_below(&G->r, 100);
  if (k < 45) return &ty_r;
  if (k < 75) return ty_arr(CLS_N);
  if (k < 83) return ty_tup(2, &ty_r, ty_arr(CLS_N), NULL);
  if (k < 90) return ty_tup(2, &ty_r, &ty_r, NULL);
  if (k < 93) return ty_tup(2, ty_tup(2, &ty_r, &ty_r, NULL), ty_arr(CLS_N), NULL);
  return allow_bool ? &ty_b : &ty_r;
}

/* Writes "def NAME (p: T) ... : RET =\n  BODY\n" and records the params. */
static char *gen_def(Gen *G, const char *name, int nparams, const GTy **params, const GTy *ret) {
  G->nvars = 0;
  G->budget = G->o->size;
  char *head = una_sprintf("def %s", name);
  for (int i = 0; i < nparams; i++) {
    const char *p = fresh(G, "p");
    push(G, p, params[i]);
    head = una_sprintf("%s (%s: %s)", head, p, ty_text(params[i]));
  }
  char *body = gen(G, ret, G->o->depth);
  return una_sprintf("%s : %s =\n  %s\n", head, ty_text(ret), body);
}

GenProgram gen_program(uint64_t seed, const GenOptions *o) {
  GenOptions def = gen_default_options();
  if (!o) o = &def;
  Gen *G = NEW(Gen);
  G->r = gen_rng(seed);
  G->o = o;
  char *text = "";
  int nh = o->max_helpers > 0 ? gen_below(&G->r, o->max_helpers + 1) : 0;
  if (nh > MAX_HELPERS) nh = MAX_HELPERS;
  for (int h = 0; h < nh; h++) {
    Helper *hp = &G->helpers[h];
    hp->name = una_sprintf("h%d", h + 1);
    hp->n = 1 + gen_below(&G->r, o->max_params < 4 ? o->max_params : 4);
    bool arrays = false;
    for (int i = 0; i < hp->n; i++) {
      hp->params[i] = random_param_type(G, true);
      arrays |= ty_has_arr(hp->params[i], CLS_N);
    }
    int k = gen_below(&G->r, 10);
    hp->ret = k < 6 ? &ty_r
              : k < 8 && arrays ? ty_arr(CLS_N)
              : k < 9 && arrays ? ty_tup(2, &ty_r, ty_arr(CLS_N), NULL)
                                : ty_tup(2, &ty_r, &ty_r, NULL);
    /* the helper is generated before it is visible to itself */
    G->nhelpers = h;
    text = una_sprintf("%s%s", text, gen_def(G, hp->name, hp->n, hp->params, hp->ret));
  }
  G->nhelpers = nh;
  const GTy *params[8];
  int np = 1 + gen_below(&G->r, o->max_params < 8 ? o->max_params : 8);
  bool any = false;
  for (int i = 0; i < np; i++) {
    params[i] = random_param_type(G, true);
    any |= params[i]->kind != G_B;
  }
  if (!any) params[0] = &ty_r;
  text = una_sprintf("%s%s", text, gen_def(G, "f", np, params, &ty_r));
  GenProgram p = {text, "f", seed};
  return p;
}
