/* forward.c: forward substitution (paper section 5.1 and figure 12), in
   one walk with a map (no quadratic substitution):
   - `let x = y in e` and `let x = c in e` for a variable y or a constant c
     become e with x replaced;
   - `let x = e1 in e2` for a scalar e1 (R or B; or an array, in the sink
     pass run once after the fixpoint, opt_sink) where x occurs exactly
     once in e2, not inside a lambda (so e1 is not recomputed per element
     or per call), x is not a let the user wrote (Sym.user: those stay, as
     in the paper's example 1.1), and e1 cannot raise and has no effect
     (opt_may_raise false: moving it past anything else, or into a branch,
     changes neither the value nor the errors) becomes e2 with e1 at that
     occurrence; in the sink pass also an e1 that may raise, when nothing
     evaluated between the let and the use may raise or has an effect and
     the use is not in a branch (the same error comes first); the nesting depth of an
     expression built this way is bounded (MAX_DEPTH), so a long chain of
     single-use lets does not become a tree too deep for the later passes;
   - `let x = e in x` becomes e (any e: it is evaluated at the same point). */
#include "../frontend/ir/common.h"
#include "passes.h"
#include "pe_util.h"

#include <string.h>

/* The deepest expression that substitution of single-use lets builds. */
#define MAX_DEPTH 32

/* What the pass knows of each variable, in one map: counts */
enum { USES,  /* its occurrences */
       BLVL,  /* let-bound: 1 + the lambda nesting of its let */
       ULVL,  /* 1 + the lambda nesting of (one of) its uses */
       DEPTH, /* substituted: the depth of its term */
       NCOUNTS };
/* and one term: the term that replaces it (SUB) */
enum { SUB };

typedef struct Ctx {
  OptSymMap *facts;
  bool arrays; /* single-use array lets move too */
} Ctx;

/* An explicit stack of (term, level) pairs for the iterative walks. */
typedef struct Item {
  const Term *t;
  long lv;
} Item;
typedef struct Stack {
  Item *v;
  long n, cap;
  Item local[32]; /* the first entries: depth() runs once per let */
} Stack;

#define STACK_INIT(s) ((s).v = (s).local, (s).n = 0, (s).cap = 32)

static void push(Stack *s, const Term *t, long lv) {
  if (s->n == s->cap) {
    long cap = 2 * s->cap;
    Item *v = NEW_ARRAY(Item, cap);
    if (s->n) memcpy(v, s->v, sizeof *v * (size_t)s->n);
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n].t = t;
  s->v[s->n].lv = lv;
  s->n++;
}

/* Counts the uses of every variable and records the lambda nesting of
   each let binding and of the uses (iterative). */
static void scan(Ctx *c, const Term *t) {
  Stack s;
  STACK_INIT(s);
  push(&s, t, 0);
  while (s.n) {
    Item it = s.v[--s.n];
    const Term *u = it.t;
    if (u->kind == T_VAR) {
      opt_map_add_at(c->facts, u->sym, USES, 1);
      long i = opt_map_count_at(c->facts, u->sym, ULVL);
      opt_map_add_at(c->facts, u->sym, ULVL, it.lv + 1 - i);
    } else if (u->kind == T_LET) {
      opt_map_add_at(c->facts, u->sym, BLVL, it.lv + 1);
    }
    long lv = u->kind == T_LAM ? it.lv + 1 : it.lv;
    for (int i = 0; i < u->nkids; i++) push(&s, u->kids[i], lv);
  }
}

/* The depth of t once the substitutions are made, or MAX_DEPTH + 1 when
   larger (iterative, stops early). */
static long depth(Ctx *c, const Term *t) {
  Stack s;
  STACK_INIT(s);
  long best = 0;
  push(&s, t, 1);
  while (s.n) {
    Item it = s.v[--s.n];
    const Term *u = it.t;
    long d = it.lv;
    /* a substituted variable is replaced by its term, whose root is at
       the variable's own level */
    if (u->kind == T_VAR && opt_map_term_at(c->facts, u->sym, SUB)) d += opt_map_count_at(c->facts, u->sym, DEPTH) - 1;
    if (d > best) best = d;
    if (best > MAX_DEPTH) return MAX_DEPTH + 1;
    for (int i = 0; i < u->nkids; i++) push(&s, u->kids[i], d + 1);
  }
  return best;
}

static Term *visit(void *ctx, const Term *t);


/* True when r is a value that a single-use let moves: a scalar (R or B),
   and an array too when c->arrays (the sink pass after the fixpoint: in
   the fixpoint array lets stay variables, which the array rules of
   arrays.c and fusion.c follow). Tuples stay bound, for tuples.c. */
static bool movable(const Ctx *c, const Term *r) {
  if (!r->type) return false;
  if (r->type->kind == TY_REAL || r->type->kind == TY_BOOL) return true;
  return c->arrays && r->type->kind == TY_ARRAY;
}

/* True when the let-bound x is used exactly once, at the lambda nesting of
   its let, and is not a let the user wrote (Sym.user: a gradient keeps
   the primal's named intermediate values, as the paper's example 1.1 and
   a hand-written gradient do). */
static bool single_use(Ctx *c, Sym *x) {
  return !x->user && opt_map_count_at(c->facts, x, USES) == 1 &&
         opt_map_count_at(c->facts, x, ULVL) == opt_map_count_at(c->facts, x, BLVL);
}

/* Whether x occurs in t; *in_branch is set when an occurrence is inside a
   branch of an if (evaluated only on one side). */
static bool occurs(const Term *t, const Sym *x, bool *in_branch, bool branch) {
  bool found = false;
  while (t) {
    fe_stack_check(t->span);
    if (t->kind == T_VAR) {
      if (t->sym == x) {
        *in_branch |= branch;
        return true;
      }
      return found;
    }
    if (t->nkids == 0) return found;
    for (int i = 0; i + 1 < t->nkids; i++)
      found |= occurs(t->kids[i], x, in_branch, branch || (t->kind == T_IF && i > 0));
    branch |= t->kind == T_IF;
    t = t->kids[t->nkids - 1];
  }
  return found;
}

/* How far along a let chain a right-hand side that may raise is looked
   for its use. */
#define SINK_REACH 16

/* Whether the single use of the let-bound x of let, whose right-hand side
   may raise, can take that right-hand side: the use is within SINK_REACH
   lets, not inside an if's branch, and nothing evaluated between the let
   and the use may raise or has an effect (so the same error, if any, is
   raised first). */
static bool sinks_past_nothing(const Term *let) {
  const Sym *x = let->sym;
  const Term *e = let->kids[1];
  bool br = false;
  for (int k = 0; k < SINK_REACH && (e->kind == T_LET || e->kind == T_LETTUP); k++, e = e->kids[1]) {
    if (occurs(e->kids[0], x, &br, false)) return !br && !opt_may_raise(e->kids[0]);
    if (opt_may_raise(e->kids[0])) return false;
  }
  if (e->kind == T_LET || e->kind == T_LETTUP) return false;
  return occurs(e, x, &br, false) && !br && !opt_may_raise(e);
}

/* A let chain, with a loop along it. */
static Term *chain(Ctx *c, const Term *t) {
  OptBinds b = {0};
  bool changed = false;
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    Term *r = visit(c, cur->kids[0]);
    if (cur->kind == T_LET && opt_is_atom(r)) {
      opt_map_set_at(c->facts, cur->sym, SUB, r);
      opt_map_add_at(c->facts, cur->sym, DEPTH, 1 - opt_map_count_at(c->facts, cur->sym, DEPTH)); /* an atom: depth 1 */
      changed = true;
    } else if (cur->kind == T_LET && movable(c, cur->kids[0]) && single_use(c, cur->sym) &&
               (!opt_may_raise(cur->kids[0]) || (c->arrays && sinks_past_nothing(cur)))) {
      long d = depth(c, cur->kids[0]);
      if (d <= MAX_DEPTH) {
        opt_map_set_at(c->facts, cur->sym, SUB, r);
        opt_map_add_at(c->facts, cur->sym, DEPTH, d - opt_map_count_at(c->facts, cur->sym, DEPTH));
        changed = true;
      } else {
        if (r != cur->kids[0]) changed = true;
        opt_binds_node(&b, cur, r);
      }
    } else {
      if (r != cur->kids[0]) changed = true;
      opt_binds_node(&b, cur, r);
    }
    cur = cur->kids[1];
  }
  Term *tail = visit(c, cur);
  if (tail != cur) changed = true;
  /* let x = e in x -> e */
  while (b.n > 0 && !b.v[b.n - 1].tup && tail->kind == T_VAR && tail->sym == b.v[b.n - 1].x) {
    tail = b.v[--b.n].rhs;
    changed = true;
  }
  return changed ? opt_build_chain(&b, 0, tail) : (Term *)t;
}

static Term *visit(void *ctx, const Term *t) {
  Ctx *c = ctx;
  fe_stack_check(t->span);
  switch (t->kind) {
  case T_LET:
  case T_LETTUP: return chain(c, t);
  case T_VAR: {
    Term *r = opt_map_term_at(c->facts, t->sym, SUB);
    return r ? r : (Term *)t;
  }
  default: return opt_map_kids(t, visit, c);
  }
}

static Term *forward(const Term *t, bool arrays) {
  Ctx c = {opt_map_new_fields(NCOUNTS, 1), arrays};
  scan(&c, t);
  return visit(&c, t);
}

/* Forward substitution of variables, constants and single-use scalar lets. */
Term *opt_forward(const Term *t) { return forward(t, false); }

/* The same with single-use array lets moved too (the final sink pass). */
Term *opt_sink(const Term *t) { return forward(t, true); }
