/* pipeline.c: the optimizer's pass list, run in order, round after round,
   until every pass leaves the program unchanged (or the round bound is
   reached; a pass is not run again on a program it left unchanged), with
   --dump-after=PASS printing the program after a named pass and
   --check-passes (OptOptions.check_passes, on in the tests) re-checking
   its types after every pass. */
#include "opt.h"

#include <string.h>

#include "../frontend/ir/build.h"
#include "../frontend/ir/common.h"
#include "../frontend/ir/retype.h"
#include "../frontend/ir/term_print.h"
#include "passes.h"
#include "pe_util.h"

/* The pipeline, in order: partial evaluation (section 5.1) first, then the
   figure 12 rules. Forward runs twice: its bound on the depth of the
   expressions it builds, measured before the algebra removes `0 + e` and
   `e * 1`, cut a gradient's sums into lets that the next round joined (a
   second round over the whole program); moving the algebra before it
   instead changes which maps of pairs the later passes split. */
const OptPass opt_passes[] = {
    {"beta", opt_beta, 0},       /* continuations used once inlined, β-reduction */
    {"forward", opt_forward, 0}, /* let x = y / let x = c substituted forward */
    {"letnorm", opt_letnorm, 0}, /* nested lets flattened, lets floated out */
    {"tuples", opt_tuples, OPT_HAS_PROJ}, /* π_i ⟨...⟩, let (a, b) = (e1, e2), scalar replacement */
    {"dce", opt_dce, 0},         /* dead lets whose right-hand side cannot raise */
    {"algebra", opt_algebra, 0}, /* figure 12: ring laws, constant folding */
    {"forward", opt_forward, 0}, /* again: what the algebra left (a let chain's sums) */
    {"arrays", opt_arrays, OPT_HAS_ARRAYS}, /* figure 12: OnesLike / ZerosLike array rules */
    {"hoist", opt_hoist, OPT_HAS_ARRAYS},   /* invariant arrays out of the builtins' functions */
    {"fusion", opt_fusion, OPT_HAS_ARRAYS}, /* figure 12: map/map2 fusion */
    {"cse", opt_cse, 0},         /* common subexpressions */
    {"share", opt_share, OPT_HAS_ARRAYS}, /* an expensive elementwise value of two maps over one array */
};
const int opt_npasses = (int)(sizeof opt_passes / sizeof opt_passes[0]);

/* Run after the fixpoint, which then runs again if it changed the program. */
static const OptPass fission = {"fission", opt_fission_pass, OPT_HAS_ARRAYS};

/* Run once after the fixpoint, in order. */
const OptPass opt_final_passes[] = {
    {"states", opt_loop_states, OPT_HAS_ARRAYS}, /* a loop's value read from the scan of its states */
    /* single-use array lets moved to their use, and lets that may raise
       (an index, a call): nothing to do in straight-line scalar code */
    {"sink", opt_sink, OPT_HAS_ARRAYS | OPT_HAS_CALLS},
};
const int opt_nfinal_passes = (int)(sizeof opt_final_passes / sizeof opt_final_passes[0]);

#define DEFAULT_ROUNDS 20
#define FISSION_STAGES 4

const OptPass *opt_find_pass(const char *name) {
  for (int i = 0; i < opt_npasses; i++)
    if (strcmp(opt_passes[i].name, name) == 0) return &opt_passes[i];
  for (int i = 0; i < opt_nfinal_passes; i++)
    if (strcmp(opt_final_passes[i].name, name) == 0) return &opt_final_passes[i];
  if (strcmp(fission.name, name) == 0) return &fission;
  return NULL;
}

/* Prints "-- after PASS" and the program (like with body t). */
static void dump(const OptOptions *o, const char *pass, const Def *like, const Term *t) {
  FILE *out = o->dump ? o->dump : stderr;
  fprintf(out, "-- after %s\n", pass);
  Def tmp = *like;
  tmp.body = (Term *)t;
  tmp.ret = t->type;
  fputs(fe_def_str_opts(&tmp, FE_PRINT_MULTILINE), out);
  fputc('\n', out);
}

static bool dumps(const OptOptions *o, const char *pass) {
  return o->dump_after && (strcmp(o->dump_after, "all") == 0 || strcmp(o->dump_after, pass) == 0);
}

/* One run of the pipeline on the body of like, with parameters params. */
typedef struct {
  const OptOptions *o;
  const Def *like;
  Sym **params;
  bool failed; /* a pass failed its check: the error is the pipeline's */
  const Term *featured; /* the term whose OPT_HAS_* bits are have */
  unsigned have;
} Run;

/* Under check_passes, re-checks like with body t and parameters r->params
   (fe_retype: types, scopes, unique binders, the return type unchanged)
   after the pass named pass (NULL: before the first pass); a failure
   raises "internal: after optimizer pass 'NAME': ..." (or "internal:
   before the optimizer: ...") at the offending node. Assigns the slots of t's
   binders (the Syms are the pipeline's own, reassigned at the end). */
static void check(Run *r, const char *pass, const Term *t) {
  if (!r->o->check_passes) return;
  Def *d = fe_mk_def(r->like->name, r->like->span, r->like->nparams, r->params, (Term *)t);
  d->ret = r->like->ret;
  FeTry tr;
  if (fe_try(&tr)) {
    fe_retype(d);
    fe_untry(&tr);
    return;
  }
  if (una_is_out_of_memory(tr.err)) fe_raise(tr.err); /* not the pass's fault */
  const char *msg = tr.err.msg;
  if (strncmp(msg, "internal: ", 10) == 0) msg += 10;
  r->failed = true;
  if (!pass) fe_error(tr.err.span, "internal: before the optimizer: %s", msg);
  fe_error(tr.err.span, "internal: after optimizer pass '%s': %s", pass, msg);
}

/* Sets in *f the OPT_HAS_* bits that t holds, stopping once it has
   arrays and projections (OPT_HAS_CALLS, which only the sink pass asks
   for, besides arrays, may then be missing); the last kid (a let's body)
   is walked in the loop, not the stack. */
static void features(const Term *t, unsigned *f) {
  while (t && (*f & (OPT_HAS_ARRAYS | OPT_HAS_PROJ)) != (OPT_HAS_ARRAYS | OPT_HAS_PROJ)) {
    fe_stack_check(t->span);
    switch (t->kind) {
    case T_ARRAY: *f |= OPT_HAS_ARRAYS; break;
    case T_PROJ:
    case T_LETTUP: *f |= OPT_HAS_PROJ; break;
    case T_CALL: *f |= OPT_HAS_CALLS; break;
    case T_PRIM:
      if (fe_prims[t->prim].cls == P_ARRAY) *f |= OPT_HAS_ARRAYS;
      for (int i = 0; i < t->nkids; i++)
        if (t->kids[i]->kind == T_LAM) *f |= OPT_HAS_ARRAYS;
      break;
    default: break;
    }
    for (int i = 0; i + 1 < t->nkids; i++) features(t->kids[i], f);
    t = t->nkids > 0 ? t->kids[t->nkids - 1] : NULL;
  }
}

unsigned opt_features(const Term *t) {
  unsigned f = 0;
  features(t, &f);
  return f;
}

/* The OPT_HAS_* bits of t, found once per term. */
static unsigned features_of(Run *r, const Term *t) {
  if (r->featured != t) {
    r->have = opt_features(t);
    r->featured = t;
  }
  return r->have;
}

/* Whether pass p has nothing to do on t: t lacks all it needs (and the
   pass's dump was not asked for). */
static bool idle(Run *r, const OptPass *p, const Term *t) {
  return p->needs && !dumps(r->o, p->name) && !(features_of(r, t) & p->needs);
}

/* Runs pass p on cur (dumping and checking its result). */
static Term *run_pass(Run *r, const OptPass *p, Term *cur, bool dump_unchanged) {
  Term *next = p->run(cur);
  if (dumps(r->o, p->name) && (dump_unchanged || next != cur)) dump(r->o, p->name, r->like, next);
  if (next != cur) check(r, p->name, next);
  return next;
}

/* The pipeline on t, whose binders must be unique (opt_freshen); the
   passes' errors (a tree nested too deeply for the stack) end it early
   with the last complete result, but for a failed check, raised again. */
static Term *run(Run *r, const Term *t, bool *any) {
  const OptOptions *o = r->o;
  const OptPass *passes = o->passes ? o->passes : opt_passes;
  int npasses = o->passes ? o->npasses : opt_npasses;
  int rounds = o->max_rounds > 0 ? o->max_rounds : DEFAULT_ROUNDS;
  Term *volatile cur = (Term *)t;
  FeTry tr;
  if (fe_try(&tr)) {
    check(r, NULL, cur);
    /* done[i]: the term that pass i last ran on and left unchanged (or
       skipped: the term lacks what it needs); a pass is not run again on
       that term, and the fixpoint is reached when every pass has left the
       current term unchanged. */
    const Term **done = NEW_ARRAY(const Term *, npasses);
    /* the fixpoint, then fission and the fixpoint again while it changes
       the program (fission.c: it wants the bodies simplified first; each
       stage takes one more product out of each map) */
    for (int stage = 0; stage <= FISSION_STAGES; stage++) {
      if (stage > 0) {
        if (o->passes) break; /* a test's own pass list */
        if (!(features_of(r, cur) & OPT_HAS_ARRAYS)) break;
        Term *next = run_pass(r, &fission, cur, true);
        if (next == cur) break;
        *any = true;
        cur = next;
      }
      for (int round = 0; round < rounds; round++) {
        bool changed = false;
        for (int i = 0; i < npasses; i++) {
          if (done[i] == cur) continue;
          if (idle(r, &passes[i], cur)) {
            done[i] = cur; /* nothing for it to do */
            continue;
          }
          Term *next = run_pass(r, &passes[i], cur, round == 0);
          if (next != cur) changed = *any = true;
          else
            for (int j = 0; j < npasses; j++) /* forward is in the list twice: both are done */
              if (passes[j].run == passes[i].run) done[j] = cur;
          cur = next;
        }
        if (!changed) break;
      }
    }
    for (int i = 0; i < opt_nfinal_passes; i++) {
      if (idle(r, &opt_final_passes[i], cur)) continue;
      Term *next = run_pass(r, &opt_final_passes[i], cur, true);
      if (next != cur) *any = true;
      cur = next;
    }
    fe_untry(&tr);
  } else if (r->failed) {
    fe_raise(tr.err);
  }
  return cur;
}

Def *opt_optimize_def(const Def *d, const OptOptions *o) {
  if (!o || !o->enabled) return (Def *)d;
  /* fresh Syms throughout (unique binders for the passes; assigning the
     result's slots leaves d's Syms alone) */
  Sym **params = NEW_ARRAY(Sym *, d->nparams + 1);
  for (int i = 0; i < d->nparams; i++) params[i] = fe_sym_new(d->params[i]->name, d->params[i]->type, d->params[i]->span);
  bool any = false;
  Run r = {o, d, params, false, NULL, 0};
  Term *body = run(&r, opt_freshen(d->body, d->nparams, d->params, params), &any);
  if (!any) return (Def *)d;
  Def *res = fe_mk_def(d->name, d->span, d->nparams, params, body);
  res->derived = d->derived;
  res->vjp_of = d->vjp_of;
  res->ret = d->ret;
  return res;
}
