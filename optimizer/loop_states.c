/* loop_states.c: a for loop (or a foldl) whose states a scanl computes
   again is read from that scan. The gradient of a loop saves the loop's
   states by replaying it as a scanl over its iteration numbers
   (reverse/jt_loop.c; a foldl's over its array, jt_fold_any.c), while the
   primal part still runs the loop for its value:
     let s = loop x = v for i < n do e in ... scanl (x, i. e) v (iota n) ...
   -> let S = scanl (x, i. e) v (iota n) in
      let s = S[length S - 1] in ... S ...
   (the scan's array followed through lets such as `let I = iota n`; the
   lambda, v and n equal up to bound names; for `foldl f v A`, the scan
   is scanl f v A), so each step's body runs once, not twice. A while
   loop's value is read from the loop that counts its trips (share_while
   below): it runs twice, not three times. The scan raises where the loop does (the body's errors in
   the same order; a count that is negative or not an integer as iota's
   error, at the loop), and S[length S - 1] is the last state. Run once,
   after the fixpoint (optimizer/pipeline.c). */
#include "passes.h"

#include "../frontend/ir/build.h"
#include "../frontend/ir/subst.h"
#include "pe_util.h"

typedef struct States {
  OptSymMap *rhs; /* every single-variable let seen: its right-hand side */
} States;

static bool is_prim(const Term *t, Prim p) { return t->kind == T_PRIM && t->prim == p; }

/* a followed through lets to iota n: n, or NULL. */
static const Term *iota_count(States *st, const Term *a) {
  for (int i = 0; i < 100 && a->kind == T_VAR; i++) {
    const Term *r = opt_map_term(st->rhs, a->sym);
    if (!r) break;
    a = r;
  }
  return is_prim(a, PRIM_IOTA) ? a->kids[0] : NULL;
}

/* Whether t is the scan of the loop's (or the foldl's) states. */
static bool scan_of(States *st, const Term *t, const Term *loop) {
  if (!is_prim(t, PRIM_SCANL) || t->kids[0]->nsyms != 2) return false;
  if (loop->prim == PRIM_FOLDL) {
    if (!opt_alpha_eq(t->kids[2], loop->kids[2])) return false;
  } else {
    const Term *n = iota_count(st, t->kids[2]);
    if (!n || !opt_alpha_eq(n, loop->kids[2])) return false;
  }
  return opt_alpha_eq(t->kids[1], loop->kids[1]) && opt_alpha_eq(t->kids[0], loop->kids[0]);
}

/* t with every scan of loop's states replaced by the variable S (*hit set
   when there is one). Lets met on the way are recorded. */
static Term *replace(States *st, Term *t, const Term *loop, Sym *S, bool *hit) {
  fe_stack_check(t->span);
  if (scan_of(st, t, loop)) {
    *hit = true;
    return fe_mk_var(t->span, S);
  }
  if (t->kind == T_LET) opt_map_set(st->rhs, t->sym, t->kids[0]);
  if (t->nkids == 0) return t;
  OPT_KIDS(k, t->nkids);
  for (int i = 0; i < t->nkids; i++) k[i] = replace(st, t->kids[i], loop, S, hit);
  return opt_with_kids(t, k);
}

/* Whether t holds the builtin p (a cheap test before rebuilding). */
static bool has_prim(const Term *t, Prim p) {
  fe_stack_check(t->span);
  if (is_prim(t, p)) return true;
  for (int i = 0; i < t->nkids; i++)
    if (has_prim(t->kids[i], p)) return true;
  return false;
}

static Term *walk(States *st, const Term *t);

/* The chain at a let of a loop whose states the rest of the chain scans
   again, rewritten as above; NULL when nothing scans them. */
static Term *share(States *st, const Term *let, Term *rhs, Term *rest) {
  if (rhs->kids[0]->nsyms != 2 || !has_prim(rest, PRIM_SCANL)) return NULL;
  Span sp = let->span;
  Term *over = rhs->prim == PRIM_FOLDL ? rhs->kids[2] : fe_mk_array_prim(sp, PRIM_IOTA, 1, &rhs->kids[2]);
  Term *k[3] = {fe_copy(rhs->kids[0]), rhs->kids[1], over};
  Term *scan = fe_mk_array_prim(sp, PRIM_SCANL, 3, k);
  Sym *S = fe_mk_sym("S", scan->type, sp);
  bool hit = false;
  Term *body = replace(st, rest, rhs, S, &hit);
  if (!hit) return NULL;
  Term *last = fe_mk_op2(sp, PRIM_SUB, fe_mk_length(sp, fe_mk_var(sp, S)), fe_mk_num(sp, 1));
  Term *ix[2] = {fe_mk_var(sp, S), last};
  Term *at = fe_mk_array_prim(sp, PRIM_INDEX, 2, ix);
  at->b = true; /* a scan has at least its initial value */
  return fe_mk_let(sp, S, scan, fe_mk_let(sp, let->sym, at, body));
}

/* t with every term alpha-equal to like replaced by the variable C (*hit
   set when there is one). */
static Term *replace_like(Term *t, const Term *like, Sym *C, bool *hit) {
  fe_stack_check(t->span);
  if (t->kind == like->kind && t->kind == T_PRIM && t->prim == like->prim && opt_alpha_eq(t, like)) {
    *hit = true;
    return fe_mk_var(t->span, C);
  }
  if (t->nkids == 0) return t;
  OPT_KIDS(k, t->nkids);
  for (int i = 0; i < t->nkids; i++) k[i] = replace_like(t->kids[i], like, C, hit);
  return opt_with_kids(t, k);
}

/* A while loop whose trips the rest counts by running it again with a
   counter (a gradient's: reverse/jt_loop.c): the primal's value is that
   loop's .0, the loop run once instead of twice:
     let s = loop x = v while c do e in ... (loop (x, k) = (v, 0) while c do (e, k + 1)).1 ...
   -> let C = loop (x, k) = (v, 0) while c do (e, k + 1) in let s = C.0 in ... C.1 ...
   NULL when the rest has no such loop. */
static Term *share_while(const Term *let, Term *rhs, Term *rest) {
  if (!has_prim(rest, PRIM_LOOP_WHILE)) return NULL;
  Span sp = let->span;
  Term *counting = fe_mk_counting_loop(sp, rhs->kids[0], fe_copy(rhs->kids[1]), rhs->kids[2]);
  Sym *C = fe_mk_sym("C", counting->type, sp);
  bool hit = false;
  Term *body = replace_like(rest, counting, C, &hit);
  if (!hit) return NULL;
  return fe_mk_let(sp, C, counting, fe_mk_let(sp, let->sym, fe_mk_proj(sp, fe_mk_var(sp, C), 0), body));
}

/* A let chain, its right-hand sides walked first. */
static Term *walk_chain(States *st, const Term *t) {
  OptBinds b = {0};
  const Term *cur = t;
  while (cur->kind == T_LET || cur->kind == T_LETTUP) {
    Term *rhs = walk(st, cur->kids[0]);
    if (cur->kind == T_LET) opt_map_set(st->rhs, cur->sym, rhs);
    if (cur->kind == T_LET && (is_prim(rhs, PRIM_LOOP_FOR) || is_prim(rhs, PRIM_FOLDL) || is_prim(rhs, PRIM_LOOP_WHILE))) {
      Term *rest = walk_chain(st, cur->kids[1]);
      Term *shared = is_prim(rhs, PRIM_LOOP_WHILE) ? share_while(cur, rhs, rest) : share(st, cur, rhs, rest);
      if (shared) return opt_build_chain(&b, 0, shared);
      opt_binds_node(&b, cur, rhs);
      return opt_build_chain(&b, 0, rest);
    }
    opt_binds_node(&b, cur, rhs);
    cur = cur->kids[1];
  }
  return opt_build_chain(&b, 0, walk(st, cur));
}

static Term *walk(States *st, const Term *t) {
  fe_stack_check(t->span);
  if (t->kind == T_LET || t->kind == T_LETTUP) return walk_chain(st, t);
  if (t->nkids == 0) return (Term *)t;
  OPT_KIDS(k, t->nkids);
  for (int i = 0; i < t->nkids; i++) k[i] = walk(st, t->kids[i]);
  return opt_with_kids(t, k);
}

/* Whether t holds a loop or a foldl, whose states a scan might read again. */
static bool has_loop(const Term *t) {
  while (t) {
    fe_stack_check(t->span);
    if (is_prim(t, PRIM_LOOP_FOR) || is_prim(t, PRIM_FOLDL) || is_prim(t, PRIM_LOOP_WHILE)) return true;
    if (t->nkids == 0) return false;
    for (int i = 0; i + 1 < t->nkids; i++)
      if (has_loop(t->kids[i])) return true;
    t = t->kids[t->nkids - 1]; /* a let chain's body: no recursion */
  }
  return false;
}

Term *opt_loop_states(const Term *t) {
  if (!has_loop(t)) return (Term *)t; /* unchanged: nothing rebuilt */
  States st = {opt_map_new()};
  return walk(&st, t);
}
